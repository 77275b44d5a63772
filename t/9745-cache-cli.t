#!/bin/sh
# k8shazgpu cache on the shared cluster's API server: the CRDs and what
# their schema refuses; each add's exact plan item and its defaults; bad
# input refused before anything is written; duplicates; concurrent adds
# that must all land; remove and update (their annotations); plan show,
# list and status tables from NodeCacheStatus objects written here; wait
# succeeding, timing out and seeing a node become ready.
. "$(dirname "$0")/lib.sh"
need_cluster

# The plan and statuses are cluster-wide objects: what a run (this or an
# earlier one) made goes, and is waited for until gone.
cleanup() {
	deleted 60 "the cache plan" cacheplans.canhazgpu.dev default &&
		deleted 60 "the test's statuses" nodecachestatuses.canhazgpu.dev t9745-a t9745-b &&
		deleted 60 "the test's nodes" nodes t9745-a t9745-b
}
spec() { k get cacheplans.canhazgpu.dev default -o json | jq -c .spec; }
annotations() { k get cacheplans.canhazgpu.dev default -o json | jq -c '.metadata.annotations // {}'; }

for f in cacheplans nodecachestatuses; do
	crd_apply "$TOP/manifests/crds/$f.yaml" || { echo "Bail out! t9745: $f.yaml not applied"; exit 1; }
done
eventually 30 k get cacheplans.canhazgpu.dev
eventually 30 k get nodecachestatuses.canhazgpu.dev
cleanup || { echo "Bail out! t9745: what an earlier run left is not gone"; exit 1; }
trap 'cleanup || exit 1' EXIT
trap 'exit 1' INT TERM

# ---------------------------------------------------------------- the CRDs

plan_item() { jq -n -c --argjson i "$1" '{apiVersion: "canhazgpu.dev/v1alpha1", kind: "CachePlan", metadata: {name: "default"}, spec: {items: [$i]}}'; }
check 'the schema refuses an image item with no ref' \
	"plan_item '{\"name\":\"x\",\"type\":\"image\",\"image\":{}}' | must_fail 1 claim-make -a -m t9745 >/dev/null 2>err &&
	 grep -q '422 Unprocessable Entity: .*spec.items\[0\].image.ref: Required value' err"
check 'the schema refuses an image item with no image' \
	"plan_item '{\"name\":\"x\",\"type\":\"image\"}' | must_fail 1 claim-make -a -m t9745 >/dev/null 2>err &&
	 grep -q 'spec.items\[0\]: Invalid value: \"object\": an item of type image needs image.ref' err"
check 'the schema refuses a git item with no pathName' \
	"plan_item '{\"name\":\"x\",\"type\":\"gitRepo\",\"gitRepo\":{\"url\":\"git://h/r\"}}' | must_fail 1 claim-make -a -m t9745 >/dev/null 2>err &&
	 grep -q 'spec.items\[0\].gitRepo.pathName: Required value' err"
check 'the schema refuses a model item with no models' \
	"plan_item '{\"name\":\"x\",\"type\":\"hfModel\"}' | must_fail 1 claim-make -a -m t9745 >/dev/null 2>err &&
	 grep -q 'an item of type models or hfModel needs models.repoId' err"
check 'the schema refuses an unknown type and a bad name' \
	"plan_item '{\"name\":\"-x\",\"type\":\"wheel\"}' | must_fail 1 claim-make -a -m t9745 >/dev/null 2>err &&
	 grep -q 'spec.items\[0\].type: Unsupported value: \"wheel\"' err && grep -q 'spec.items\[0\].name: Invalid value: \"-x\"' err"
check 'the schema refuses nodeSelector scope with no selector, and pathName hub_cache' \
	"plan_item '{\"name\":\"x\",\"type\":\"gitRepo\",\"scope\":\"nodeSelector\",\"gitRepo\":{\"url\":\"u\",\"pathName\":\"hub_cache\"}}' |
	 must_fail 1 claim-make -a -m t9745 >/dev/null 2>err &&
	 grep -q 'scope nodeSelector needs a nodeSelector' err && grep -q 'pathName hub_cache is the model cache' err"
check_output 'the schema takes a pythonWheels item and fills in the defaults' \
	"plan_item '{\"name\":\"w\",\"type\":\"pythonWheels\"}' | claim-make -a -m t9745 >/dev/null && spec" <<'EOF'
{"items":[{"name":"w","scope":"allNodes","type":"pythonWheels"}]}
EOF
k delete cacheplans.canhazgpu.dev default >/dev/null

# ---------------------------------------------------------------- add

check_output 'add image: the name made from the ref' \
	'k8shazgpu cache add image 127.0.0.1:5000/vllm:1 && spec' <<'EOF'
cache item 127-0-0-1-5000-vllm-1 added (image 127.0.0.1:5000/vllm:1)
{"items":[{"image":{"ref":"127.0.0.1:5000/vllm:1"},"name":"127-0-0-1-5000-vllm-1","scope":"allNodes","type":"image"}]}
EOF
check_output 'add gitrepo: the name from the URL, branch main, pathName the name' \
	'k8shazgpu cache add gitrepo git@github.com:dougbtv/vllm.git && spec | jq -c ".items[1]"' <<'EOF'
cache item dougbtv-vllm added (gitrepo git@github.com:dougbtv/vllm.git)
{"gitRepo":{"branch":"main","pathName":"dougbtv-vllm","syncStrategy":"hardReset","url":"git@github.com:dougbtv/vllm.git"},"name":"dougbtv-vllm","scope":"allNodes","type":"gitRepo"}
EOF
check_output 'add gitrepo: every option, the commit lowercased; names from one-part URLs' \
	'k8shazgpu cache add gitrepo https://example.com/vllm-project/vllm.git/ --name up --branch dev --commit ABCDEF1 --path-name src &&
	 k8shazgpu cache add gitrepo git://127.0.0.1:9418/solo.git && spec | jq -c ".items[2:][]"' <<'EOF'
cache item up added (gitrepo https://example.com/vllm-project/vllm.git/)
cache item solo added (gitrepo git://127.0.0.1:9418/solo.git)
{"gitRepo":{"branch":"dev","commit":"abcdef1","pathName":"src","syncStrategy":"hardReset","url":"https://example.com/vllm-project/vllm.git/"},"name":"up","scope":"allNodes","type":"gitRepo"}
{"gitRepo":{"branch":"main","pathName":"solo","syncStrategy":"hardReset","url":"git://127.0.0.1:9418/solo.git"},"name":"solo","scope":"allNodes","type":"gitRepo"}
EOF
check_output 'add model: the name from the id, revision main; -l scopes it' \
	'k8shazgpu cache add model facebook/opt-125m -l t9745=yes -l pool=a && spec | jq -c ".items[4]"' <<'EOF'
cache item facebook-opt-125m added (model facebook/opt-125m)
{"models":{"cache":"blobs","repoId":"facebook/opt-125m","revision":"main"},"name":"facebook-opt-125m","nodeSelector":{"pool":"a","t9745":"yes"},"scope":"nodeSelector","type":"models"}
EOF
check_output 'add image: a pull secret' \
	'k8shazgpu cache add image 127.0.0.1:5000/private:2 --name private --pull-secret regcred -l t9745=yes && spec | jq -c ".items[5]"' <<'EOF'
cache item private added (image 127.0.0.1:5000/private:2)
{"image":{"pullSecret":"regcred","ref":"127.0.0.1:5000/private:2"},"name":"private","nodeSelector":{"t9745":"yes"},"scope":"nodeSelector","type":"image"}
EOF
check_output 'adding the same item again is no error and writes nothing' \
	'rv=$(k get cp default -o jsonpath={.metadata.resourceVersion}) &&
	 k8shazgpu cache add gitrepo git@github.com:dougbtv/vllm.git --branch main &&
	 [ "$(k get cp default -o jsonpath={.metadata.resourceVersion})" = "$rv" ]' <<'EOF'
cache item dougbtv-vllm is already in the plan
EOF
check_output 'adding another item under a taken name is refused' \
	'must_fail 1 k8shazgpu cache add gitrepo git@github.com:dougbtv/vllm.git --branch dev 2>&1' <<'EOF'
k8shazgpu cache add gitrepo: cache item dougbtv-vllm exists; remove it first
EOF

# ---------------------------------------------------------------- bad input

before=$(spec)
bad() { must_fail 2 k8shazgpu cache "$@" 2>&1; }
check_output 'an unknown type' 'bad add wheel x' <<'EOF'
k8shazgpu cache add: unknown type "wheel": one of image, gitrepo, model
EOF
check_output 'a missing ref' 'bad add image' <<'EOF'
k8shazgpu cache add image: missing REF
usage: k8shazgpu cache add image REF [--name N] [--pull-secret SECRET] [-l KEY=VALUE,...]
EOF
check_output 'a missing repo id, and two' 'bad add model; bad add model a b' <<'EOF'
k8shazgpu cache add model: missing REPO_ID
usage: k8shazgpu cache add model REPO_ID [--name N] [--revision main] [-l KEY=VALUE,...]
k8shazgpu cache add model: one REPO_ID only
usage: k8shazgpu cache add model REPO_ID [--name N] [--revision main] [-l KEY=VALUE,...]
EOF
check_output 'a bad name, given or made' \
	'bad add image x --name Bad/Name; bad add image x@sha256:0123456789012345678901234567890123456789012345678901234567890123' <<'EOF'
k8shazgpu cache add image: --name "Bad/Name": 1 to 50 letters, digits, ".", "_" or "-", starting and ending with a letter or digit
k8shazgpu cache add image: the name made from REF, "x-sha256-0123456789012345678901234567890123456789012345678901234567890123": 1 to 50 letters, digits, ".", "_" or "-", starting and ending with a letter or digit; give --name
EOF
check_output 'bad refs, commit, path, selector and options' \
	"bad add image 'a b'; bad add gitrepo u --commit xyz; bad add gitrepo u --name hub_cache; bad add model a/b/c
	 bad add model m -l foo; bad add image x --revision 1; bad add image x --pull-secret A_B" <<'EOF'
k8shazgpu cache add image: REF "a b": 1 to 1024 bytes, no spaces
k8shazgpu cache add gitrepo: --commit "xyz": 7 to 40 hex digits
k8shazgpu cache add gitrepo: the path name, by default the name, "hub_cache": hub_cache is the model cache's
k8shazgpu cache add model: REPO_ID "a/b/c": a Hugging Face model id, ORG/NAME or NAME
k8shazgpu cache add model: -l "foo": KEY=VALUE pairs, comma-separated
k8shazgpu cache add image: --revision is not an option of add image
usage: k8shazgpu cache add image REF [--name N] [--pull-secret SECRET] [-l KEY=VALUE,...]
k8shazgpu cache add image: --pull-secret "A_B": a Secret name: 1 to 253 of a-z, 0-9, "." or "-"
EOF
check 'bad input wrote nothing' '[ "$(spec)" = "$before" ]'

# ---------------------------------------------------------------- concurrent writers

check_output 'eight adds at once: every item lands' \
	'for i in 1 2 3 4 5 6 7 8; do k8shazgpu cache add image "127.0.0.1:5000/many:$i" -l t9745=yes >/dev/null & done; wait
	 spec | jq -r "[.items[].name | select(startswith(\"127-0-0-1-5000-many\"))] | sort | join(\" \")"' <<'EOF'
127-0-0-1-5000-many-1 127-0-0-1-5000-many-2 127-0-0-1-5000-many-3 127-0-0-1-5000-many-4 127-0-0-1-5000-many-5 127-0-0-1-5000-many-6 127-0-0-1-5000-many-7 127-0-0-1-5000-many-8
EOF
check_output 'two adds of one name at once: one wins, the other is told' \
	'k8shazgpu cache add image r:1 --name race >out1 2>&1 & k8shazgpu cache add image r:2 --name race >out2 2>&1 & wait
	 ref=$(spec | jq -r ".items[] | select(.name == \"race\") | .image.ref")
	 if [ "$ref" = r:1 ]; then cat out1 out2; else cat out2 out1; fi | sed "s/r:[12]/r:N/"' <<'EOF'
cache item race added (image r:N)
k8shazgpu cache add image: cache item race exists; remove it first
EOF

# ---------------------------------------------------------------- remove, update

check_output 'remove: by type and by name alone; the others stay' \
	'k8shazgpu cache remove image race && k8shazgpu cache remove 127-0-0-1-5000-many-1 127-0-0-1-5000-many-2 127-0-0-1-5000-many-3 \
		127-0-0-1-5000-many-4 127-0-0-1-5000-many-5 127-0-0-1-5000-many-6 127-0-0-1-5000-many-7 127-0-0-1-5000-many-8 &&
	 spec | jq -r "[.items[].name] | join(\" \")"' <<'EOF'
cache item race removed
cache item 127-0-0-1-5000-many-1 removed
cache item 127-0-0-1-5000-many-2 removed
cache item 127-0-0-1-5000-many-3 removed
cache item 127-0-0-1-5000-many-4 removed
cache item 127-0-0-1-5000-many-5 removed
cache item 127-0-0-1-5000-many-6 removed
cache item 127-0-0-1-5000-many-7 removed
cache item 127-0-0-1-5000-many-8 removed
127-0-0-1-5000-vllm-1 dougbtv-vllm up solo facebook-opt-125m private
EOF
check_output 'remove: a missing item and one of another type fail, the rest go on' \
	'must_fail 1 k8shazgpu cache remove gitrepo nope 127-0-0-1-5000-vllm-1 solo 2>&1; spec | jq -r "[.items[].name] | join(\" \")"' <<'EOF'
k8shazgpu cache remove: no cache item nope in the plan
k8shazgpu cache remove: cache item 127-0-0-1-5000-vllm-1 is of type image, not gitrepo
cache item solo removed
127-0-0-1-5000-vllm-1 dougbtv-vllm up facebook-opt-125m private
EOF
check_output 'remove: an item another writer also wrote stays, and that writer is named' \
	'k patch cp default --type=json -p "[{\"op\":\"add\",\"path\":\"/spec/items/-\",\"value\":{\"name\":\"byhand\",\"type\":\"image\",\"image\":{\"ref\":\"h:1\"}}}]" >/dev/null &&
	 must_fail 1 k8shazgpu cache remove byhand 2>&1' <<'EOF'
k8shazgpu cache remove: cache item byhand stays: kubectl-patch wrote it too; remove it there, or with kubectl edit cacheplan default
EOF
k patch cp default --type=json -p '[{"op":"remove","path":"/spec/items/5"}]' >/dev/null
check_output 'update: the seed'"'"'s annotations, forced' \
	'K8SHAZGPU_NOW=1790000000 k8shazgpu cache update gitrepo up dougbtv-vllm --force && annotations' <<'EOF'
cache item up: sync from scratch requested
cache item dougbtv-vllm: sync from scratch requested
{"canhazgpu.dev/force-update-dougbtv-vllm":"true","canhazgpu.dev/force-update-up":"true","canhazgpu.dev/update-repo-dougbtv-vllm":"1790000000","canhazgpu.dev/update-repo-up":"1790000000"}
EOF
check_output 'update all: every item, an earlier force taken back' \
	'K8SHAZGPU_NOW=1790000060 k8shazgpu cache update all && annotations | jq -S .' <<'EOF'
cache item 127-0-0-1-5000-vllm-1: sync requested
cache item dougbtv-vllm: sync requested
cache item up: sync requested
cache item facebook-opt-125m: sync requested
cache item private: sync requested
{
  "canhazgpu.dev/update-image-127-0-0-1-5000-vllm-1": "1790000060",
  "canhazgpu.dev/update-image-private": "1790000060",
  "canhazgpu.dev/update-model-facebook-opt-125m": "1790000060",
  "canhazgpu.dev/update-repo-dougbtv-vllm": "1790000060",
  "canhazgpu.dev/update-repo-up": "1790000060"
}
EOF
check_output 'update: a missing item, a type mismatch, bad usage' \
	'must_fail 1 k8shazgpu cache update image nope up 2>&1; must_fail 2 k8shazgpu cache update wheel x 2>&1; must_fail 2 k8shazgpu cache update model 2>&1' <<'EOF'
k8shazgpu cache update: no cache item nope in the plan
k8shazgpu cache update: cache item up is of type gitrepo, not image
k8shazgpu cache update: unknown type "wheel": one of image, gitrepo, model, or all
k8shazgpu cache update: name the model items to update
EOF
check_output 'remove takes the item'"'"'s update annotations with it' \
	'k8shazgpu cache remove up >/dev/null && annotations | jq -r "keys[]"' <<'EOF'
canhazgpu.dev/update-image-127-0-0-1-5000-vllm-1
canhazgpu.dev/update-image-private
canhazgpu.dev/update-model-facebook-opt-125m
canhazgpu.dev/update-repo-dougbtv-vllm
EOF

# ---------------------------------------------------------------- plan show

check_output 'plan show' 'k8shazgpu cache plan show' <<'EOF'
TYPE      NAME                    REF/URL
image     127-0-0-1-5000-vllm-1   127.0.0.1:5000/vllm:1
gitRepo   dougbtv-vllm            git@github.com:dougbtv/vllm.git
models    facebook-opt-125m       facebook/opt-125m
image     private                 127.0.0.1:5000/private:2
EOF
check_output 'plan show -o wide, the flag before cache' 'k8shazgpu -o wide cache plan show' <<'EOF'
TYPE      NAME                    REF/URL                           BRANCH/REVISION   COMMIT   PATH           SECRET    SCOPE
image     127-0-0-1-5000-vllm-1   127.0.0.1:5000/vllm:1             -                 -        -              -         allNodes
gitRepo   dougbtv-vllm            git@github.com:dougbtv/vllm.git   main              -        dougbtv-vllm   -         allNodes
models    facebook-opt-125m       facebook/opt-125m                 main              -        -              -         pool=a,t9745=yes
image     private                 127.0.0.1:5000/private:2          -                 -        -              regcred   t9745=yes
EOF
check_output 'plan show -o json, the flag after it: the items' 'k8shazgpu cache plan show -o json | jq -r .name' <<'EOF'
127-0-0-1-5000-vllm-1
dougbtv-vllm
facebook-opt-125m
private
EOF

# ---------------------------------------------------------------- list, status

# Two nodes of the test's own, which no agent reports for: their
# statuses are the ones written here.
cat >nodes.yaml <<'EOF'
apiVersion: v1
kind: Node
metadata: {name: t9745-a, labels: {t9745: "yes", pool: a}}
---
apiVersion: v1
kind: Node
metadata: {name: t9745-b, labels: {t9745: "yes", pool: b}}
EOF
yaml2json -s nodes.yaml | claim-make -a >/dev/null
# ncs NODE ITEMS: NODE's NodeCacheStatus, ITEMS a JSON array.
ncs() {
	jq -n -c --arg n "$1" --argjson items "$2" '{apiVersion: "canhazgpu.dev/v1alpha1", kind: "NodeCacheStatus",
		metadata: {name: $n, labels: {"kubernetes.io/hostname": $n}},
		status: {nodeName: $n, items: $items, usedBytes: ([$items[] | select(.phase == "ready") | .bytesTotal] | add // 0),
			budgetBytes: 107374182400, freeBytes: 53687091200, minFreeBytes: 10737418240,
			lastUpdate: "2026-11-24T12:00:05Z", firstSync: ""}}' | claim-make -a -m t9745 >/dev/null
}
VLLM_READY='{"name":"dougbtv-vllm","type":"gitRepo","phase":"ready","ref":"git@github.com:dougbtv/vllm.git@main","resolved":"0123456789abcdef0123456789abcdef01234567","present":true,"bytesDone":123456789,"bytesTotal":123456789,"attempts":1,"lastSync":"2026-11-24T12:00:00Z","reason":"","message":""}'
IMG_READY='{"name":"127-0-0-1-5000-vllm-1","type":"image","phase":"ready","ref":"127.0.0.1:5000/vllm:1","resolved":"sha256:fedcba9876543210fedcba9876543210fedcba9876543210fedcba9876543210","present":true,"bytesDone":2791728742,"bytesTotal":2791728742,"attempts":1,"reason":"","message":"","pinned":true}'
PRIV_READY='{"name":"private","type":"image","phase":"ready","ref":"127.0.0.1:5000/private:2","resolved":"sha256:00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff","present":true,"bytesDone":1000,"bytesTotal":1000,"attempts":1,"reason":"","message":""}'
OPT_PULLING='{"name":"facebook-opt-125m","type":"models","phase":"pulling","ref":"facebook/opt-125m@main","resolved":"","present":false,"bytesDone":1288490188,"bytesTotal":2791728742,"attempts":1,"reason":"","message":""}'
OPT_READY='{"name":"facebook-opt-125m","type":"models","phase":"ready","ref":"facebook/opt-125m@main","resolved":"7d3c5e0f1e2d3c4b5a69788796a5b4c3d2e1f001","present":true,"bytesDone":250,"bytesTotal":250,"attempts":1,"reason":"","message":"","files":5}'
VLLM_FAILED='{"name":"dougbtv-vllm","type":"gitRepo","phase":"failed","ref":"git@github.com:dougbtv/vllm.git@main","resolved":"","present":false,"bytesDone":0,"bytesTotal":0,"attempts":3,"reason":"Unreachable","message":"connect to github.com:22: connection refused"}'
ncs t9745-a "[$VLLM_READY, $IMG_READY, $PRIV_READY, $OPT_PULLING]"
ncs t9745-b "[$VLLM_FAILED, $IMG_READY]"

check_output 'list' 'k8shazgpu cache list t9745-a t9745-b' <<'EOF'
NODE      ITEMS   READY   FAILED   USED      LAST_UPDATE
t9745-a   4       3       0        2.7 GiB   2026-11-24T12:00:05Z
t9745-b   2       1       1        2.6 GiB   2026-11-24T12:00:05Z
EOF
check_output 'list -o wide' 'k8shazgpu cache -o wide list t9745-a t9745-b' <<'EOF'
NODE      ITEMS   READY   FAILED   PULLING   USED      BUDGET      FREE       MIN_FREE   LAST_UPDATE            FIRST_SYNC
t9745-a   4       3       0        1         2.7 GiB   100.0 GiB   50.0 GiB   10.0 GiB   2026-11-24T12:00:05Z   -
t9745-b   2       1       1        0         2.6 GiB   100.0 GiB   50.0 GiB   10.0 GiB   2026-11-24T12:00:05Z   -
EOF
check_output 'list -o json' 'k8shazgpu cache list -o json t9745-b' <<'EOF'
{"node":"t9745-b","items":2,"ready":1,"failed":1,"pulling":0,"usedBytes":2791728742,"budgetBytes":107374182400,"freeBytes":53687091200,"minFreeBytes":10737418240,"lastUpdate":"2026-11-24T12:00:05Z","firstSync":""}
EOF
check_output 'status: phase, short resolved ref, progress or size, reason' 'k8shazgpu cache status t9745-b t9745-a' <<'EOF'
NODE      NAME                    TYPE      PHASE     REF                                    RESOLVED       PROGRESS          REASON
t9745-a   dougbtv-vllm            gitRepo   ready     git@github.com:dougbtv/vllm.git@main   0123456789ab   117.7 MiB         -
t9745-a   127-0-0-1-5000-vllm-1   image     ready     127.0.0.1:5000/vllm:1                  fedcba987654   2.6 GiB           -
t9745-a   private                 image     ready     127.0.0.1:5000/private:2               001122334455   1000 B            -
t9745-a   facebook-opt-125m       models    pulling   facebook/opt-125m@main                 -              46% 1.2/2.6 GiB   -
t9745-b   dougbtv-vllm            gitRepo   failed    git@github.com:dougbtv/vllm.git@main   -              -                 Unreachable
t9745-b   127-0-0-1-5000-vllm-1   image     ready     127.0.0.1:5000/vllm:1                  fedcba987654   2.6 GiB           -
EOF
check_output 'status -o wide: attempts and message' 'k8shazgpu cache status -o wide t9745-b' <<'EOF'
NODE      NAME                    TYPE      PHASE    REF                                    RESOLVED       PROGRESS   REASON        ATTEMPTS   MESSAGE
t9745-b   dougbtv-vllm            gitRepo   failed   git@github.com:dougbtv/vllm.git@main   -              -          Unreachable   3          connect to github.com:22: connection refused
t9745-b   127-0-0-1-5000-vllm-1   image     ready    127.0.0.1:5000/vllm:1                  fedcba987654   2.6 GiB    -             1          -
EOF
check_output 'status -o json: the items as reported, with their node' 'k8shazgpu -o json cache status t9745-b | jq -c "{node, name, phase, reason}"' <<'EOF'
{"node":"t9745-b","name":"dougbtv-vllm","phase":"failed","reason":"Unreachable"}
{"node":"t9745-b","name":"127-0-0-1-5000-vllm-1","phase":"ready","reason":""}
EOF
check_output 'status of a node with no status' 'must_fail 1 k8shazgpu cache status t9745-a nowhere 2>&1' <<'EOF'
k8shazgpu cache status: no NodeCacheStatus for node nowhere
EOF

# ---------------------------------------------------------------- wait

check_output 'wait: with no --node, on every node reporting that the item'"'"'s labels select' \
	'must_fail 1 k8shazgpu cache wait --timeout 0 private 2>&1' <<'EOF'
k8shazgpu cache wait: not ready after 0s:
NODE      NAME      STATE
t9745-b   private   not reported
EOF
check_output 'wait: --node narrows the nodes' \
	'k8shazgpu cache wait --timeout 0 --node t9745-a dougbtv-vllm 127-0-0-1-5000-vllm-1' <<'EOF'
ready: 127-0-0-1-5000-vllm-1, dougbtv-vllm
EOF
check_output 'wait: out of time, who is not ready and why' \
	'must_fail 1 k8shazgpu cache wait --timeout 2 --node t9745-a --node t9745-b --node t9745-c 2>&1 >/dev/null' <<'EOF'
k8shazgpu cache wait: not ready after 2s:
NODE      NAME                STATE
t9745-c   -                   no NodeCacheStatus
t9745-b   dougbtv-vllm        failed Unreachable
t9745-a   facebook-opt-125m   pulling
t9745-b   private             not reported
EOF
check_output 'wait: an item the plan lacks, bad usage' \
	'must_fail 1 k8shazgpu cache wait ghost 2>&1; must_fail 2 k8shazgpu cache wait --timeout soon 2>&1' <<'EOF'
k8shazgpu cache wait: not in the plan: ghost
k8shazgpu cache wait: --timeout: whole seconds, not "soon"
EOF
check_output 'wait: an item reported ready for another ref is not ready' \
	'k8shazgpu cache remove private >/dev/null && k8shazgpu cache add image 127.0.0.1:5000/private:3 --name private -l t9745=yes >/dev/null &&
	 must_fail 1 k8shazgpu cache wait --timeout 0 --node t9745-a private 2>&1' <<'EOF'
k8shazgpu cache wait: not ready after 0s:
NODE      NAME      STATE
t9745-a   private   ready as 127.0.0.1:5000/private:2
EOF
check_output 'wait: an item scoped to no node is said so, and waits for nobody' \
	'k8shazgpu cache add image far:1 -l pool=nowhere >/dev/null && k8shazgpu cache wait --timeout 0 far-1 2>&1' <<'EOF'
cache item far-1: no node is in its scope
ready: far-1
EOF
k8shazgpu cache remove private far-1 >/dev/null
check_output 'wait: returns once a node reports the last item ready' \
	'K8SHAZGPU_CACHE_POLL=1 k8shazgpu cache wait --timeout 60 facebook-opt-125m >wait.out 2>&1 & pid=$!
	 sleep 2; ncs t9745-a "[$VLLM_READY, $IMG_READY, $OPT_READY]"
	 wait $pid && cat wait.out' <<'EOF'
ready: facebook-opt-125m
EOF
check_output 'wait: every item, on both nodes' \
	'ncs t9745-b "[$VLLM_READY, $IMG_READY]" && k8shazgpu cache wait --timeout 0 --node t9745-a --node t9745-b 2>&1' <<'EOF'
ready: 127-0-0-1-5000-vllm-1, dougbtv-vllm, facebook-opt-125m
EOF

# ---------------------------------------------------------------- the dispatcher

check_output 'an unknown command' 'must_fail 2 k8shazgpu nosuch 2>&1 | head -n 2' <<'EOF'
k8shazgpu: unknown command "nosuch"
usage: k8shazgpu [-n namespace | -A] [--context name] [-o json|wide|capacity] command [args]
EOF
check_output 'cache with no command, an unknown one' \
	'must_fail 2 k8shazgpu cache 2>&1 | head -n 1; must_fail 2 k8shazgpu cache frob 2>&1 | head -n 1' <<'EOF'
usage: k8shazgpu-cache [-o json|wide] [--context name] command [args]
k8shazgpu cache: unknown command "frob"
EOF

check_output 'an API server away: 75; wait asks again until its time is up' \
	'export KUBECONFIG="$FIXTURES/unreachable.kubeconfig"; must_fail 75 k8shazgpu cache plan show 2>/dev/null && echo show 75
	 t0=$(date +%s); must_fail 75 k8shazgpu cache wait --timeout 2 2>/dev/null && [ $(($(date +%s) - t0)) -ge 2 ] && echo wait 75' <<'EOF'
show 75
wait 75
EOF

done_testing
