#!/bin/sh
# The node cache end to end on the shared cluster's real node: a CachePlan
# applied with kubectl, the node agent's cache loop (k8shazgpu-nodeagent-
# cache, as sim-node runs it beside the agent) syncing it with cache-sync
# and writing the node's NodeCacheStatus. One item of each kind, from
# servers of this script's own on loopback: an image pushed to the sim's
# registry, a git repository (t/gitserve, smart HTTP), a model (t/hubserve)
# and an image behind a login, pulled with a pull secret of the
# k8shazgpu namespace. Then: all ready with the pushed digest, the
# repository's commit and the model's; items with a node selector held by
# the node its labels select; the files on disk with their hashes; a pod
# running that image with imagePullPolicy Never, reading the checkout and
# the model from the cache; a new commit and the update annotation bring
# the new commit (the annotations reach cache-sync as update and force);
# the refresh period brings the next without one; the status shows a
# transfer while it runs, the pull secrets meanwhile in a 0600 file, gone
# after; plan changes during a sync make one sync after it; failures (a
# missing tag or branch: NotFound; a corrupt model file: ChecksumMismatch;
# a hub that wants a token: Unauthorized until the Secret hf-token holds
# it; a budget too small: DiskBudgetExceeded) keep what was there; items
# taken out of the plan leave the status, the disk and the runtime.
. "$(dirname "$0")/lib.sh"

need_cluster
[ "$(id -u)" = 0 ] || skip_all "the real node needs root"
D=$K8SHAZGPU_SIM_DIR
[ -f "$D/node-state" ] || skip_all "the shared cluster has no real node (up --no-node)"
. "$D/state"
. "$D/node-state"
[ -n "${REGISTRY_PORT:-}" ] || skip_all "the shared cluster has no registry"
[ ! -f "$D/installed" ] || skip_all "k8shazgpu is installed in the shared cluster: its node agent owns the cache"
command -v cache-sync >/dev/null 2>&1 || skip_all "cache-sync is not built"
claim-watch -h | grep -q -- '-g name' || { echo "Bail out! claim-watch cannot get one object (-g): the cache loop needs it"; exit 1; }
HOST=$NODE_NAME
SOCK=$D/containerd/containerd.sock
NS=t9740
SYS=canhazgpu-node-secrets	# the Secrets the agents read
REG=127.0.0.1:$REGISTRY_PORT
CACHE=$SCRATCH/cache
ctr_() { "$nodebin/ctr" --address "$SOCK" --namespace k8s.io "$@" 2>/dev/null; }
git_() { git -c user.name=t9740 -c user.email=t9740@example.invalid -c init.defaultBranch=main "$@"; }

if k get cacheplans.canhazgpu.dev default >/dev/null 2>&1 || k get secret -n "$SYS" hf-token >/dev/null 2>&1; then
	echo "Bail out! the shared cluster has a CachePlan default or a Secret hf-token already: another test's"
	exit 1
fi
# the token comes from the Secret this test makes, not from here
unset HF_TOKEN

# ---- servers, images, repositories of this script's own

# an image of busybox alone, pushed to the sim's registry
mkdir -p bb/bin && cp /bin/busybox bb/bin/busybox
oci-image -o bb.oci -e '["/bin/busybox"]' bb >bb.digest && oci-push -q bb.oci "$REG/t9740/bb:1" >/dev/null ||
	{ echo "Bail out! the image was not pushed"; exit 1; }
DIGEST=$(cat bb.digest)

# a registry with a login (htpasswd, bcrypt), the same image in it
APORT=$(free_port)
AREG=127.0.0.1:$APORT
echo "tester:$(perl -e 'print crypt("s3cr:et", "\$2b\$05\$t9740t9740t9740t9740tu")')" >htpasswd
cat >registry.yml <<EOF
version: 0.1
log: {level: error, accesslog: {disabled: true}}
storage: {filesystem: {rootdirectory: $SCRATCH/registry}}
http: {addr: "$AREG"}
auth:
  htpasswd: {realm: t9740, path: $SCRATCH/htpasswd}
EOF
docker-registry serve registry.yml >registry.log 2>&1 3>&- 4>&- &
echo $! >>pids

# a git repository over smart HTTP, one commit on main
mkdir srv && git_ init -q --bare srv/repo.git && git_ clone -q srv/repo.git work 2>/dev/null &&
	echo "first version" >work/README && git_ -C work add README && git_ -C work commit -q -m one &&
	git_ -C work push -q origin main || { echo "Bail out! no git repository"; exit 1; }
C1=$(git -C work rev-parse HEAD)
GPORT=$(free_port)
"$TOP/t/gitserve" http "$GPORT" "$SCRATCH/srv" >git.out 2>git.err 3>&- 4>&- &
echo $! >>pids

# a model: a small git file and an LFS one (over 1 KiB), from the hub
mkdir model model2 big
printf '{"model_type": "t9740"}\n' >model/config.json
head -c 65536 /dev/urandom >model/weights.bin
cp model/config.json model2/config.json
head -c 65536 /dev/urandom >model2/weights.bin
head -c 4194304 /dev/urandom >big/weights.bin
HPORT=$(free_port)
"$TOP/t/hubserve" -p "$HPORT" -l hub.log --lfs-over 1024 t9740/model="$SCRATCH/model" t9740/big="$SCRATCH/big" t9740/big2="$SCRATCH/big" \
	>hub.out 2>hub.err 3>&- 4>&- &
echo $! >>pids
trap 'kill $(cat "$SCRATCH/pids") 2>/dev/null' EXIT

eventually 20 curl -s -o /dev/null "http://$AREG/v2/" &&
	eventually 20 grep -qx ready git.out && eventually 20 grep -q '^listening on' hub.out ||
	{ echo "Bail out! a server did not start: $(cat registry.log git.err hub.err)"; exit 1; }
M1=$(awk '$1 == "t9740/model@main" { print $2 }' hub.out)
mkdir home && printf 'machine 127.0.0.1 login tester password s3cr:et\n' >home/.netrc && chmod 600 home/.netrc
HOME=$SCRATCH/home oci-push -q bb.oci "$AREG/t9740/bb:1" >/dev/null || { echo "Bail out! no push with a login"; exit 1; }

# ---- the cluster's side: CRDs, namespaces, the pull secret

: >created
for f in crds/cacheplans.yaml crds/nodecachestatuses.yaml namespace.yaml; do
	case $f in crds/*)
		# a CRD an earlier test deleted: gone first, or it vanishes under us
		crd=$(yaml2json "$TOP/manifests/$f" | jq -r .metadata.name)
		gone 120 "CRD $crd, being deleted," crd_deleting "$crd" || { echo "Bail out! CRD $crd still being deleted"; exit 1; }
	esac
	k get -f "$TOP/manifests/$f" -o name --ignore-not-found 2>/dev/null | sort >before
	k apply -f "$TOP/manifests/$f" >/dev/null || { echo "Bail out! kubectl apply -f manifests/$f failed"; exit 1; }
	case $f in crds/*) eventually 60 crd_established "$crd" || { echo "Bail out! CRD $crd not established"; exit 1; } ;; esac
	k get -f "$TOP/manifests/$f" -o name | sort | comm -23 - before >>created
done
k create namespace "$NS" >/dev/null
k create secret docker-registry t9740-regcred -n "$SYS" --docker-server="$AREG" \
	--docker-username=tester --docker-password='s3cr:et' >/dev/null
eventually 60 k get serviceaccount default -n "$NS"

# the images this test pulled, removed at the end
rmi() {
	for r in "$REG/t9740/bb:1" "$AREG/t9740/bb:1" "$REG/t9740/bb:nope"; do
		ctr_ images rm "$r" >/dev/null 2>&1 || :
	done
}
cleanup() {
	stop_loop
	deleted 60 "the cache plan" cacheplans.canhazgpu.dev default
	deleted 60 "the node's cache status" nodecachestatuses.canhazgpu.dev "$HOST"
	k delete secret -n "$SYS" t9740-regcred hf-token --ignore-not-found >/dev/null 2>&1
	k delete namespace "$NS" --ignore-not-found --wait=false >/dev/null 2>&1
	rmi
	rm -rf "$CACHE"
	k8shazgpu-sim start node-agent >/dev/null 2>&1
	tac created | while read -r obj; do k delete "$obj" --ignore-not-found --wait=false >/dev/null 2>&1; done
	# gone before the next test: a CRD still terminating would vanish under
	# a test that applies it again
	[ ! -s created ] || gone 120 "what t9740 created" k get $(cat created) --ignore-not-found -o name
	kill $(cat "$SCRATCH/pids") 2>/dev/null
}
trap cleanup EXIT
trap 'exit 1' INT TERM
rmi

# ---- the sim's own node agent keeps its cache beside it

ncs() { k get nodecachestatuses.canhazgpu.dev "$HOST" -o json 2>/dev/null; }
# ncs_is JQ: the NodeCacheStatus exists and JQ is true of it (jq 1.6 -e
# takes no input for true)
ncs_is() { ncs_got=$(ncs) && printf '%s\n' "$ncs_got" | jq -e "$1" >/dev/null; }
# the agent's loop: a cache loop process of the agent's, on $D/cache
sim_loop() { pgrep -f "k8shazgpu-nodeagent-cache -L -C $D/cache " >/dev/null; }
has_status() { ncs_is ".status.nodeName == \"$HOST\" and .status.firstSync != null"; }
check_output "the sim's node agent runs the cache loop on $D/cache; it writes the node's NodeCacheStatus" \
	'eventually 60 sim_loop && eventually 60 has_status && echo yes &&
	 ncs | jq -r "[.metadata.labels[\"kubernetes.io/hostname\"], .status.nodeName, (.status.items | length)] | join(\" \")"' <<EOF
yes
$HOST $HOST 0
EOF
check "stopped with the agent: no cache loop of it left" \
	'k8shazgpu-sim stop node-agent >/dev/null 2>&1 && ! sim_loop'
k delete nodecachestatuses.canhazgpu.dev "$HOST" >/dev/null

# ---- a loop of this script's own, on a cache of its own, our hub

# start_loop [ARGS]: the cache loop, progress every second, retries
# every 2, its temporary files in tmp/; stop_loop ends it (and its
# session). Its cache-sync is a shim that notes each run's options in
# syncs, one line a sync, the items it was given in items.last, and its
# end in ends; idle: the loop has synced and no sync runs.
mkdir shim tmp
cat >shim/cache-sync <<EOF
#!/bin/sh
echo "\$*" >>"$SCRATCH/syncs"
cat >"$SCRATCH/items.last"
"$(command -v cache-sync)" "\$@" <"$SCRATCH/items.last"
rc=\$?
echo \$rc >>"$SCRATCH/ends"
exit \$rc
EOF
chmod +x shim/cache-sync
: >syncs
: >ends
idle() { [ -s syncs ] && [ "$(wc -l <syncs)" = "$(wc -l <ends)" ]; }
# restart_loop [ARGS]: a new loop, once its first sync is over
restart_loop() {
	stop_loop
	: >syncs
	: >ends
	start_loop "$@"
	eventually 60 idle
}
start_loop() {
	mkdir -p "$CACHE"
	TMPDIR=$SCRATCH/tmp PATH=$SCRATCH/shim:$PATH HF_ENDPOINT=http://127.0.0.1:$HPORT setsid k8shazgpu-nodeagent-cache -C "$CACHE" -N "$HOST" -s "$SOCK" \
		-f 64Mi -i 2 -p 1 -R 3600 "$@" >>loop.log 2>&1 </dev/null 3>&- 4>&- &
	echo $! >loop.pid
}
stop_loop() {
	[ -s "$SCRATCH/loop.pid" ] || return 0
	kill "$(cat "$SCRATCH/loop.pid")" 2>/dev/null
	eventually 30 sh -c "! kill -0 $(cat "$SCRATCH/loop.pid") 2>/dev/null"
	rm -f "$SCRATCH/loop.pid"
}

# plan ITEM-JSON...: the CachePlan default holds these items
plan() {
	printf '%s\n' "$@" | jq -s -c '{apiVersion: "canhazgpu.dev/v1alpha1", kind: "CachePlan",
		metadata: {name: "default"}, spec: {items: .}}' | k apply -f - >/dev/null
}
IMG='{"name":"bb","type":"image","image":{"ref":"'$REG'/t9740/bb:1"}}'
AUTHIMG='{"name":"bb-login","type":"image","image":{"ref":"'$AREG'/t9740/bb:1","pullSecret":"t9740-regcred"}}'
REPO='{"name":"repo","type":"gitRepo","gitRepo":{"url":"http://127.0.0.1:'$GPORT'/repo.git","branch":"main","pathName":"repo"}}'
MODEL='{"name":"model","type":"models","models":{"repoId":"t9740/model","revision":"main"}}'

# items: the status's items, one line each: name type phase resolved
# present reason
items() {
	ncs | jq -r '.status.items[]? | [.name, .type, .phase, .resolved, (.present | tostring), (.reason | if . == "" then "-" else . end)] | join(" ")'
}
# settled: no item pending or pulling
settled() { ncs_is '(.status.items | length) > 0 and all(.status.items[]; .phase == "ready" or .phase == "failed")'; }
# n_items N: the status has N items
n_items() { [ "$(items | wc -l)" = "$1" ]; }
# item NAME FIELD == VALUE
item_is() { [ "$(ncs | jq -r --arg n "$1" ".status.items[] | select(.name == \$n) | .$2")" = "$3" ]; }

start_loop
plan "$IMG" "$AUTHIMG" "$REPO" "$MODEL"
check_output 'a plan of an image, an image with a pull secret, a repository and a model: all ready, each at what its source holds' \
	'eventually 180 settled && items' <<EOF
bb image ready $DIGEST true -
bb-login image ready $DIGEST true -
model models ready $M1 true -
repo gitRepo ready $C1 true -
EOF
check_output 'the status: the node, the cache figures, firstSync set, the labels' '
	ncs | jq -r "[.metadata.labels[\"kubernetes.io/hostname\"], .status.nodeName, (.status.usedBytes > 0), (.status.freeBytes > 0),
		.status.minFreeBytes, (.status.firstSync | test(\"^20[0-9-]+T[0-9:]+Z$\")), (.status.lastUpdate >= .status.firstSync)] | map(tostring) | join(\" \")"' <<EOF
$HOST $HOST true true 67108864 true true
EOF
check_output 'the images are in the runtime by the pushed digest' \
	'for r in "$REG/t9740/bb:1" "$AREG/t9740/bb:1"; do ctr_ images ls | awk -v r="$r" "\$1 == r { print \$1, \$3 }"; done' <<EOF
$REG/t9740/bb:1 $DIGEST
$AREG/t9740/bb:1 $DIGEST
EOF
MD=$CACHE/hub_cache/models--t9740--model
check_output 'on disk: the checkout at the commit; the model snapshot, each file with its hash, refs/main the commit' '
	cat "$CACHE/repo/README"
	cd "$MD/snapshots/$M1" && sha256sum config.json weights.bin && cat "$MD/refs/main" && echo' <<EOF
first version
$(cd model && sha256sum config.json weights.bin)
$M1
EOF

IMGHERE='{"name":"bb-here","type":"image","scope":"nodeSelector","nodeSelector":{"kubernetes.io/hostname":"'$HOST'"},"image":{"ref":"'$REG'/t9740/bb:1"}}'
IMGELSE='{"name":"bb-elsewhere","type":"image","scope":"nodeSelector","nodeSelector":{"kubernetes.io/hostname":"t9740-elsewhere"},"image":{"ref":"'$REG'/t9740/bb:1"}}'
check_output 'items with a node selector: the node'\''s labels say which are for it' \
	'plan "$IMG" "$AUTHIMG" "$REPO" "$MODEL" "$IMGHERE" "$IMGELSE" && eventually 60 item_is bb-here phase ready && eventually 10 idle && items' <<EOF
bb image ready $DIGEST true -
bb-here image ready $DIGEST true -
bb-login image ready $DIGEST true -
model models ready $M1 true -
repo gitRepo ready $C1 true -
EOF
plan "$IMG" "$AUTHIMG" "$REPO" "$MODEL"

pod() {
	cat <<EOF
{"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "$1", "namespace": "$NS"},
 "spec": {"restartPolicy": "Never", "nodeSelector": {"kubernetes.io/hostname": "$HOST"},
  "tolerations": [{"key": "k8shazgpu.dev/real-node", "operator": "Exists", "effect": "NoSchedule"}],
  "terminationGracePeriodSeconds": 1,
  "volumes": [{"name": "cache", "hostPath": {"path": "$CACHE", "type": "Directory"}}],
  "containers": [{"name": "main", "image": "$2", "imagePullPolicy": "Never",
   "env": [{"name": "HF_HUB_CACHE", "value": "$CACHE/hub_cache"}, {"name": "HF_HUB_OFFLINE", "value": "1"}],
   "volumeMounts": [{"name": "cache", "mountPath": "$CACHE", "readOnly": true}],
   "command": ["/bin/busybox", "sh", "-c",
    "cat $CACHE/repo/README && cd \$HF_HUB_CACHE/models--t9740--model && /bin/busybox sha256sum snapshots/\$(cat refs/main)/weights.bin"]}]}}
EOF
}
phase_is() { [ "$(k get pod "$1" -n "$NS" -o jsonpath='{.status.phase}')" = "$2" ]; }
check_output 'a pod of the cached image (imagePullPolicy Never) runs to Succeeded, reading the checkout and the model' \
	'pod reader "$REG/t9740/bb:1" | k create -f - >/dev/null && eventually 60 phase_is reader Succeeded && k logs reader -n "$NS"' <<EOF
first version
$(cd model && sha256sum weights.bin | sed "s|  |  snapshots/$M1/|")
EOF

# ---- an update: a new commit on the branch, the CLI's annotation
echo "second version" >work/README && git_ -C work commit -q -a -m two && git_ -C work push -q origin main
C2=$(git -C work rev-parse HEAD)
annotate() { k annotate --overwrite cacheplans.canhazgpu.dev default "$@" >/dev/null; }
check_output 'a new commit and the update annotation: the repository at the new commit, on disk too' \
	'annotate canhazgpu.dev/update-repo-repo=1001 && eventually 60 item_is repo resolved "$C2" && eventually 10 settled &&
	 items | grep "^repo " && cat "$CACHE/repo/README"' <<EOF
repo gitRepo ready $C2 true -
second version
EOF
check_output 'the annotations reach cache-sync: update on the repository; update and force on the image' '
	jq -c "select(.update or .force) | {name, update, force}" items.last &&
	annotate canhazgpu.dev/update-image-bb=1005 canhazgpu.dev/force-update-bb=true &&
	eventually 30 grep -q "\"1005\"" items.last && eventually 30 idle &&
	jq -c "select(.update or .force) | {name, update, force}" items.last && items | grep "^bb "' <<EOF
{"name":"repo","update":"1001","force":null}
{"name":"bb","update":"1005","force":true}
{"name":"repo","update":"1001","force":null}
bb image ready $DIGEST true -
EOF

# ---- refreshed every -R seconds: a new commit, no annotation
echo "third version" >work/README && git_ -C work commit -q -a -m three && git_ -C work push -q origin main
C3=$(git -C work rev-parse HEAD)
restart_loop -R 3
check_output 'every refresh period a sync with -u: the branch'\''s new commit without any annotation' \
	'eventually 60 item_is repo resolved "$C3" && grep -q -- " -u" syncs && echo refreshed && cat "$CACHE/repo/README"' <<'EOF'
refreshed
third version
EOF
restart_loop

# ---- a transfer as it runs: the hub holds the big file back; changes
# to the plan meanwhile make one sync after it, not one each
BIG='{"name":"big","type":"models","models":{"repoId":"t9740/big","revision":"main"}}'
"$TOP/t/hubserve" --ctl "$HPORT" '{"stall": true, "match": "/cdn/"}' >/dev/null
pulling() { item_is big phase pulling; }
: >syncs
: >ends
check_output 'while the big file is held back, the status shows the model pulling, the size to fetch known' \
	'plan "$IMG" "$AUTHIMG" "$REPO" "$MODEL" "$BIG" && eventually 60 pulling && sleep 2 &&
	 ncs | jq -c ".status.items[] | select(.name == \"big\") | {phase, bytesDone, bytesTotal}"' <<'EOF'
{"phase":"pulling","bytesDone":0,"bytesTotal":4194304}
EOF
check_output 'meanwhile the pull secrets are in a file of mode 0600, by name' \
	'for f in tmp/*/auth.json; do stat -c %a "$f" && jq -c "keys" "$f"; done' <<'EOF'
600
["t9740-regcred"]
EOF
check_output 'three changes while it runs: one sync after it; then the model ready, the secrets file gone' \
	'for i in 1 2 3; do annotate canhazgpu.dev/update-image-bb=$i; sleep 1; done &&
	 "$TOP/t/hubserve" --ctl "$HPORT" "{\"stall\": false}" >/dev/null && eventually 120 item_is big phase ready &&
	 eventually 30 sh -c "test \$(wc -l <syncs) -ge 2" && eventually 30 idle && sleep 3 && wc -l <syncs && items | grep "^big " &&
	 ls tmp/*/auth.json 2>/dev/null || :' <<EOF
2
big models ready $(awk '$1 == "t9740/big@main" { print $2 }' hub.out) true -
EOF

# ---- failures keep what was there
check_output 'a missing tag: NotFound, the image of the old tag still there' '
	plan "$(printf "%s" "$IMG" | sed "s|bb:1|bb:nope|")" "$AUTHIMG" "$REPO" "$MODEL" "$BIG" &&
	eventually 60 item_is bb reason NotFound && items | grep "^bb " &&
	ctr_ images ls -q | grep -x "$REG/t9740/bb:1"' <<EOF
bb image failed $DIGEST true NotFound
$REG/t9740/bb:1
EOF
NOBRANCH=$(printf '%s' "$REPO" | sed 's/"branch":"main"/"branch":"nope"/')
check_output 'a missing branch: NotFound, the checkout as it was' '
	plan "$IMG" "$AUTHIMG" "$NOBRANCH" "$MODEL" "$BIG" && eventually 60 item_is repo reason NotFound &&
	items | grep "^repo " && cat "$CACHE/repo/README"' <<EOF
repo gitRepo failed $C3 true NotFound
third version
EOF
"$TOP/t/hubserve" --ctl "$HPORT" '{"move": "t9740/model", "dir": "'"$SCRATCH/model2"'"}' >move.out
M2=$(jq -r .commit move.out)
"$TOP/t/hubserve" --ctl "$HPORT" '{"corrupt": "weights.bin"}' >/dev/null
check_output 'a corrupt model file: ChecksumMismatch, the snapshot as it was' '
	plan "$IMG" "$AUTHIMG" "$REPO" "$MODEL" "$BIG" && annotate canhazgpu.dev/update-model-model=1002 &&
	eventually 60 item_is model reason ChecksumMismatch && items | grep "^model " &&
	cat "$MD/refs/main" && echo && cd "$MD/snapshots/$M1" && sha256sum weights.bin && test ! -e "$MD/snapshots/$M2"' <<EOF
model models failed $M1 true ChecksumMismatch
$M1
$(cd model && sha256sum weights.bin)
EOF
"$TOP/t/hubserve" --ctl "$HPORT" '{"reset": true}' >/dev/null
check_output 'the hub fixed: the update goes through' \
	'annotate canhazgpu.dev/update-model-model=1003 && eventually 60 item_is model resolved "$M2" && eventually 10 settled && items | grep "^model "' <<EOF
model models ready $M2 true -
EOF
"$TOP/t/hubserve" --ctl "$HPORT" '{"token": "t9740-token"}' >/dev/null
check_output 'a hub that wants a token: Unauthorized without one; with the Secret hf-token, ready' '
	annotate canhazgpu.dev/update-model-model=1010 && eventually 60 item_is model reason Unauthorized && items | grep "^model " &&
	k create secret generic hf-token -n "$SYS" --from-literal=token=t9740-token >/dev/null &&
	annotate canhazgpu.dev/update-model-model=1011 && eventually 60 item_is model reason "" && items | grep "^model " &&
	grep -c "^GET 127.0.0.1 /api/models/t9740/model/revision/main .* auth=yes" hub.log' <<EOF
model models failed $M2 true Unauthorized
model models ready $M2 true -
1
EOF
"$TOP/t/hubserve" --ctl "$HPORT" '{"token": null}' >/dev/null
k delete secret hf-token -n "$SYS" >/dev/null

# a budget of what the cache holds now, plus less than the big model
used=$(ncs | jq .status.usedBytes)
restart_loop -b $((used + 65536))
BIG2='{"name":"big2","type":"models","models":{"repoId":"t9740/big2","revision":"main"}}'
check_output 'a budget too small for one more model: DiskBudgetExceeded, nothing of it on disk, the others as they were' '
	plan "$IMG" "$AUTHIMG" "$REPO" "$MODEL" "$BIG" "$BIG2" && eventually 60 item_is big2 reason DiskBudgetExceeded && items &&
	test ! -e "$CACHE/hub_cache/models--t9740--big2/snapshots"' <<EOF
bb image ready $DIGEST true -
bb-login image ready $DIGEST true -
big models ready $(awk '$1 == "t9740/big@main" { print $2 }' hub.out) true -
big2 models failed  false DiskBudgetExceeded
model models ready $M2 true -
repo gitRepo ready $C3 true -
EOF
restart_loop

# ---- items out of the plan: out of the status, off the disk
du_cache() { du -s -B1 "$CACHE" | cut -f1; }
before=$(du_cache)
check_output 'the models and the repository taken out: gone from the status and the disk, the space freed' '
	plan "$IMG" "$AUTHIMG" && eventually 60 n_items 2 && eventually 10 settled && items &&
	test ! -e "$CACHE/repo" && test ! -e "$MD" && test ! -e "$CACHE/hub_cache/models--t9740--big" &&
	after=$(du_cache) && test "$after" -lt $((before - 4194304)) && echo freed' <<EOF
bb image ready $DIGEST true -
bb-login image ready $DIGEST true -
freed
EOF
k delete pod reader -n "$NS" --wait >/dev/null
check_output 'the images taken out: gone from the status and the runtime' '
	plan && eventually 60 n_items 0 && ncs | jq -c ".status.items // []" &&
	ctr_ images ls -q | grep "/t9740/bb:" || :' <<'EOF'
[]
EOF

check 'stopped: no process of the loop left' 'stop_loop && ! pgrep -f "k8shazgpu-nodeagent-cache -L -C $CACHE " >/dev/null'
done_testing
