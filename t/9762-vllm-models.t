#!/bin/sh
# `k8shazgpu vllm run` and the models its command names, on the real
# node of the shared cluster, with the stand-in vLLM repository of
# t/vllmrepo. A model of this test's hub (t/hubserve), put in the node's
# cache by cache-sync as the node agent runs it (the same directory,
# socket and items; the agent's own loop knows no such hub) and then in
# the CachePlan, pinned to its commit: `vllm run --follow` with
# `--model ORG/NAME` waits for it, runs on the node that holds it (up to
# 10 minutes for a GPU of the shared node), and the pod, the hub
# stopped, reads the model's config.json from HF_HUB_CACHE (the node's
# hub cache, read-only) with HF_HUB_OFFLINE=1.
# A model id that is none is refused (2) with nothing made; a model the
# node cache cannot fetch (no hub answers for it) fails the run with the
# reason the node reports, before any ResourceClaim exists. The plan
# items the runs added are taken out at the end.
. "$(dirname "$0")/lib.sh"
need_cluster
D=$K8SHAZGPU_SIM_DIR
[ "$(id -u)" = 0 ] || skip_all "the real node needs root"
[ -S "$D/redis/redis.sock" ] && [ -f "$D/kubelet.pid" ] && [ -f "$D/node-state" ] ||
	skip_all 'the shared cluster has no real node (k8shazgpu-sim up --no-node, or not root)'
. "$D/state"
. "$D/node-state"
[ -n "${REGISTRY_PORT:-}" ] || skip_all "the shared cluster has no registry"
[ ! -f "$D/installed" ] || skip_all "k8shazgpu is installed in the shared cluster: its node agent's cache is not $D/cache"
command -v diff-pack >/dev/null 2>&1 && command -v cache-sync >/dev/null 2>&1 || skip_all "diff-pack or cache-sync is not built"
. "$TOP/t/lib-vllm.sh"
static_applier
K8SHAZGPU_APPLIER=$PACKBIN
export K8SHAZGPU_APPLIER
NS=t9762
HOST=$NODE_NAME
HUB=$D/cache/hub_cache
NCS=nodecachestatuses.canhazgpu.dev
plan_remember
cleanup() {
	[ ! -s repo/gitserve.pid ] || kill "$(cat repo/gitserve.pid)" 2>/dev/null
	[ ! -s hub.pid ] || kill "$(cat hub.pid)" 2>/dev/null
	plan_cleanup
	ns_deleted "$NS"
}
cleanup || { echo "Bail out! t9762: what an earlier run left is not gone"; exit 1; }
trap cleanup EXIT
trap 'exit 1' INT TERM

# ---- the repository and its base image; the cluster's side
vllm_repo
yaml2json "$TOP/manifests/deviceclasses.yaml" | claim-make -a >/dev/null
for f in cacheplans nodecachestatuses; do
	crd_apply "$TOP/manifests/crds/$f.yaml" || { echo "Bail out! t9762: $f.yaml not applied"; exit 1; }
done
k create namespace "$NS" >/dev/null
eventually 60 k get serviceaccount default -n "$NS" >/dev/null
eventually 60 k get "$CP" >/dev/null

# ---- a model on this test's hub: its config.json and an LFS weights file
mkdir model
printf '{"model_type": "t9762", "hidden_size": 8}\n' >model/config.json
head -c 65536 /dev/urandom >model/weights.bin
HPORT=$(free_port)
"$TOP/t/hubserve" -p "$HPORT" --lfs-over 1024 t9762/tiny="$SCRATCH/model" >hub.out 2>hub.log 3>&- 4>&- &
echo $! >hub.pid
eventually 20 grep -q '^listening on' hub.out || { echo "Bail out! t/hubserve: $(cat hub.log)"; exit 1; }
COMMIT=$(awk '$1 == "t9762/tiny@main" { print $2 }' hub.out)
ITEM='{"name":"t9762-tiny","type":"models","scope":"allNodes","models":{"repoId":"t9762/tiny","revision":"'$COMMIT'"}}'

# into the node's cache by cache-sync, as the agent's loop runs it: the
# plan's items (with the loop's update and force marks) and this one;
# tried again while the loop's own sync holds the directory (75)
seed() {
	{ k get "$CP" default -o json 2>/dev/null | jq -c '(.metadata.annotations // {}) as $a | .spec.items[]?
		| ({image: "image", gitRepo: "repo", models: "model", hfModel: "model"}[.type] // "") as $w
		| . + (if $a["canhazgpu.dev/update-\($w)-\(.name)"] then {update: $a["canhazgpu.dev/update-\($w)-\(.name)"]} else {} end)
		    + (if $a["canhazgpu.dev/force-update-\(.name)"] == "true" then {force: true} else {} end)
		| select(.name != "t9762-tiny")'
	  printf '%s\n' "$ITEM"; } >seed.items
	HF_ENDPOINT=http://127.0.0.1:$HPORT cache-sync -d "$D/cache" -s "$D/containerd/containerd.sock" -f 256Mi seed.items >seed.out 2>seed.err
	[ $? != 75 ]
}
eventually 120 seed
check_output 'cache-sync put the model in the node cache, at the hub'"'"'s commit' \
	'jq -r "select(.name == \"t9762-tiny\" and .phase != \"pulling\") | [.phase, .resolved] | join(\" \")" seed.out | tail -n 1' <<EOF
ready $COMMIT
EOF
# the hub goes: from here on no model can be fetched from it
kill "$(cat hub.pid)" && rm hub.pid
# the plan holds it, as `cache add model` puts it
k8shazgpu cache add model t9762/tiny --revision "$COMMIT" >add.err 2>&1
ready_on_node() {
	[ "$(k get "$NCS" "$HOST" -o json | jq -r '.status.items[]? | select(.name == "t9762-tiny") | .phase')" = ready ]
}
check 'the node agent reports it ready (its own sync, no hub)' 'eventually 180 ready_on_node'

vllm_run() { k8shazgpu -n "$NS" vllm run --prefer-node "$HOST" --toleration k8shazgpu.dev/real-node \
	--image-repo "$VR_REPO" --check --hub-cache "$HUB" --timeout 240 "$@"; }
# st CMD...: its stdout, "exit N", its stderr less diff-pack's summary
st() {
	"$@" >"$SCRATCH/st.out" 2>"$SCRATCH/st.err"
	st_rc=$?
	cat "$SCRATCH/st.out"
	echo "exit $st_rc"
	grep -v '^pack: ' "$SCRATCH/st.err"
}
objects() { k get resourceclaims,pods -n "$NS" -o name; }

# ---- the cached model, read offline in the pod
READ='d=$HF_HUB_CACHE/models--t9762--tiny/snapshots/$4
sha256sum <"$d/config.json" | cut -d" " -f1
echo "HF_HUB_OFFLINE=$HF_HUB_OFFLINE"
touch "$HF_HUB_CACHE/x" 2>/dev/null && echo writable || echo read-only'
(cd "$VR_DEV" && vllm_run --name cached --timeout 600 --follow -- sh -c "$READ" sh --model t9762/tiny --revision "$COMMIT") \
	>cached.out 2>cached.err
echo $? >cached.rc
check_output 'vllm run --follow -- ... --model t9762/tiny: exit 0; the pod read config.json offline, from the read-only hub cache' \
	'cat cached.rc; sed 1d cached.out' <<EOF
0
$(sha256sum <model/config.json | cut -d' ' -f1)
HF_HUB_OFFLINE=1
read-only
EOF
check_output 'it waited for the model (in the plan already: not added again), then for the image' \
	'grep -e "^k8shazgpu vllm run: waiting" -e "t9762-tiny" cached.err' <<EOF
k8shazgpu vllm run: waiting for a node's cache to hold t9762/tiny
k8shazgpu vllm run: waiting for the nodes' cache to hold vllm-checkout-$(printf '%.8s' "$VR_BASE")
EOF
check_output 'the pod: on the node, the hub cache mounted read-only, HF_HUB_CACHE and HF_HUB_OFFLINE; the claim names the model' \
	"k get pod -n $NS cached -o json | jq -c '.spec.nodeName, [.spec.volumes[] | select(.name == \"hub\")], .spec.containers[0].env'
	 k get resourceclaim -n $NS cached -o jsonpath='{.metadata.annotations.canhazgpu\\.dev/models}'; echo" <<EOF
"$HOST"
[{"hostPath":{"path":"$HUB","type":"Directory"},"name":"hub"}]
[{"name":"HF_HUB_CACHE","value":"/k8shazgpu/hub"},{"name":"HF_HUB_OFFLINE","value":"1"}]
t9762/tiny
EOF
k8shazgpu -n "$NS" cleanup --name cached >/dev/null 2>&1

# ---- a word that is no model id: refused, nothing made nor added
(cd "$VR_DEV" && st vllm_run --name bad -- vllm serve ../t9762) >bad.out
check_output 'vllm serve ../t9762: exit 2, the argument named; no claim, no pod' 'cat bad.out; objects | grep bad' <<'EOF'
exit 2
k8shazgpu vllm run: vllm serve "../t9762": not a Hugging Face model id (NAME or ORG/NAME) nor a local path (/... or ./...)
EOF

# ---- a model no hub serves (its id too long for an item name as it
# is): the node cache fails it; so does the run, before any claim
gone 120 "run cached" objects
NOWHERE=t9762/nowhere-$(printf 'xxxxxxxxxx%.0s' 1 2 3 4 5)
NOWHERE_ITEM=t9762-nowhere-xxxxxxxxxxxxxxxxxxxxxxxxxxx-$(printf '%s' "$NOWHERE" | sha256sum | cut -c1-8)
(cd "$VR_DEV" && st vllm_run --name nowhere -- vllm serve "$NOWHERE") >nowhere.out
cp "$SCRATCH/st.err" nowhere.err
WHY=$(k get "$NCS" "$HOST" -o json | jq -r --arg n "$NOWHERE_ITEM" '.status.items[] | select(.name == $n) | "\(.reason): \(.message)"')
check_output 'vllm serve ORG/NAME of no hub: the model added to the plan (its name cut, with a hash), the node'"'"'s reason, exit 1; no claim, no pod' \
	'grep -v "vllm-checkout\|-vllm" nowhere.out; objects' <<EOF
exit 1
cache item $NOWHERE_ITEM added (model $NOWHERE)
k8shazgpu vllm run: waiting for a node's cache to hold $NOWHERE
k8shazgpu vllm run: model $NOWHERE on node $HOST: $WHY
k8shazgpu vllm run: the model is not cached and cannot be: no GPU was claimed
EOF
check 'the reason is the node cache'"'"'s, not empty' '[ -n "$(printf "%s" "$WHY" | sed "s/^: //")" ]'
done_testing
