#!/bin/sh
# Pods that really run on the real node of the shared cluster, their GPUs
# prepared by dra-plugin (the kubelet's DRA plugin) with the node's own
# canhazgpu ledger: a pod with a claim for two whole GPUs, one for a
# 2g.20gb MIG device, one sharing a claim between two containers, each
# printing exactly the UUIDs it was given; unprepare removing the CDI spec
# and the holds; the plugin down (the kubelet's "not registered" and no
# container started); a GPU a host user reserved after allocation keeping
# the pod in ContainerCreating with an event naming the holder until it is
# released; the plugin killed and restarted mid-life losing nothing; the
# kubelet restarted, the node's ResourceSlice back within one cycle.
. "$(dirname "$0")/lib.sh"
need_cluster
D=$K8SHAZGPU_SIM_DIR
[ -S "$D/redis/redis.sock" ] && [ -f "$D/kubelet.pid" ] || skip_all 'the shared cluster has no real node (k8shazgpu-sim up --no-node, or not root)'
NS=t9720
HOST=$(hostname)
ledger() { gpu-reserve -a "$D/redis/redis.sock" status | jq -r '[.gpu, .state, .user // "-", .type // "-"] | map(tostring) | join(" ")'; }
not_held() { ! ledger | grep -q " k8s:$NS/$1 "; }
no_k8s_holds() { ! ledger | grep -q ' k8s$'; }
# event_says POD TEXT: the kubelet reported a failed prepare of POD
# whose message holds TEXT.
event_says() {
	k get events -n "$NS" --field-selector "involvedObject.name=$1" -o json |
		jq -e --arg t "$2" 'any(.items[]; .reason == "FailedPrepareDynamicResources" and (.message | contains($t)))' >/dev/null
}
# uuid DEVICE: the UUID of a DRA device of the real node.
gpu-probe -t "$D/realnode.yaml" -n "$HOST" | claim-make -N "$HOST" |
	jq -r 'select(.kind == "ResourceSlice") | .spec.devices[] | "\(.name) \(.attributes.uuid.string)"' >uuids
uuid() { awk -v d="$1" '$1 == d { print $2 }' uuids; }

cleanup() {
	ns_deleted "$NS"
}
cleanup || { echo "Bail out! t9720: what an earlier run left is not gone"; exit 1; }
trap 'k8shazgpu-sim start plugin >/dev/null 2>&1; k8shazgpu-sim start node-agent >/dev/null 2>&1; cleanup' EXIT
trap 'exit 1' INT TERM
yaml2json "$TOP/manifests/deviceclasses.yaml" | claim-make -a >/dev/null
k create namespace "$NS" >/dev/null
eventually 60 k get serviceaccount default -n "$NS" >/dev/null

attr='device.attributes["gpu.canhazgpu.dev"]'
# claim NAME CLASS CEL COUNT: a ResourceClaim with one request "gpus".
claim() {
	jq -n -c --arg name "$1" --arg class "$2" --arg cel "$3" --argjson count "$4" --arg ns "$NS" '
	{apiVersion: "resource.k8s.io/v1", kind: "ResourceClaim", metadata: {name: $name, namespace: $ns},
	 spec: {devices: {requests: [{name: "gpus", exactly: {deviceClassName: $class, count: $count,
		selectors: [{cel: {expression: $cel}}]}}]}}}' | k create -f - >/dev/null
}
# pod NAME CLAIM CMD [CONTAINERS]: a pod on the real node whose containers
# (c0, c1 ...) each use CLAIM and run CMD.
pod() {
	jq -n -c --arg name "$1" --arg claim "$2" --arg cmd "$3" --argjson n "${4:-1}" --arg ns "$NS" --arg node "$HOST" '
	{apiVersion: "v1", kind: "Pod", metadata: {name: $name, namespace: $ns},
	 spec: {nodeSelector: {"kubernetes.io/hostname": $node}, restartPolicy: "Never",
		tolerations: [{key: "k8shazgpu.dev/real-node", operator: "Exists", effect: "NoSchedule"}],
		terminationGracePeriodSeconds: 1,
		resourceClaims: [{name: "gpus", resourceClaimName: $claim}],
		containers: [range($n) | {name: "c\(.)", image: "k8s.io/busybox:local", imagePullPolicy: "Never",
			command: ["sh", "-c", $cmd], resources: {claims: [{name: "gpus"}]}}]}}' | k create -f - >/dev/null
}
phase() { [ "$(k get pod -n "$NS" "$1" -o jsonpath='{.status.phase}')" = "$2" ]; }
devs() { k get resourceclaim -n "$NS" "$1" -o json | jq -r '[.status.allocation.devices.results[].device] | join(" ")'; }
uid() { k get resourceclaim -n "$NS" "$1" -o jsonpath='{.metadata.uid}'; }
# want DEVICES...: the environment a container of those devices must print.
want() {
	u=$(for d in "$@"; do uuid "$d"; done | paste -sd, -)
	printf 'CUDA_VISIBLE_DEVICES=%s\nNVIDIA_VISIBLE_DEVICES=%s\n' "$u" "$u"
}
# Each container prints its GPUs and how many /dev/nvidia* it has, then
# stays: a claim is deallocated once its pod is done.
SHOW='env | grep -E "^(CUDA|NVIDIA)_VISIBLE_DEVICES=" | sort; ls /dev | grep -c nvidia; sleep 3600'
printed() { [ "$(k logs -n "$NS" "$@" 2>/dev/null | wc -l)" -eq 3 ]; }

# --- two whole GPUs
claim two gpu.canhazgpu.dev "$attr.index <= 2" 2
pod two two "$SHOW"
check 'a pod with a claim for two whole GPUs runs' 'eventually 120 phase two Running && eventually 30 printed two'
set -- $(devs two) - -
check_output 'its log shows exactly the two UUIDs allocated, and no /dev/nvidia*' 'k logs -n $NS two' <<EOF
$(want "$@")
0
EOF
TWO=$(uid two)
check_output 'the plugin holds both GPUs for the claim in the node ledger' \
	"ledger | grep 'k8s:$NS/two' | cut -d' ' -f1 | paste -sd' ' -" <<EOF
${1#gpu-} ${2#gpu-}
EOF
check 'its CDI spec is in the sim CDI directory' "test -f $D/cdi/k8s.canhazgpu.dev-claim_$TWO.json"
k delete pod -n "$NS" two --wait=false >/dev/null
check 'the pod gone: unprepare removes the CDI spec' "eventually 120 sh -c '! test -e $D/cdi/k8s.canhazgpu.dev-claim_$TWO.json'"
check 'and the holds' 'eventually 60 not_held two'

# --- one 2g.20gb MIG device
claim mig mig.canhazgpu.dev "$attr.profile == \"2g.20gb\"" 1
pod mig mig "$SHOW"
check 'a pod with a claim for a 2g.20gb MIG device runs' 'eventually 120 phase mig Running && eventually 30 printed mig'
check_output 'its log shows exactly the MIG UUID' 'k logs -n $NS mig' <<EOF
$(want "$(devs mig)")
0
EOF

# --- one claim shared by two containers
claim shared gpu.canhazgpu.dev "true" 1
pod shared shared "$SHOW" 2
check 'a pod whose two containers share one claim runs' \
	'eventually 120 phase shared Running && eventually 30 printed shared -c c0 && eventually 30 printed shared -c c1'
check_output 'both containers print the same single UUID' 'k logs -n $NS shared -c c0; k logs -n $NS shared -c c1' <<EOF
$(want "$(devs shared)")
0
$(want "$(devs shared)")
0
EOF
k delete pod -n "$NS" mig shared --wait=false >/dev/null
check 'both pods gone: no k8s hold is left in the ledger' 'eventually 120 no_k8s_holds'

# --- the plugin down: not registered, nothing started
k8shazgpu-sim stop node-agent >/dev/null
k8shazgpu-sim stop plugin >/dev/null
claim late gpu.canhazgpu.dev "true" 1
pod late late "$SHOW"
check 'the plugin down: the kubelet says the driver is not registered' \
	'eventually 120 event_says late "DRA driver gpu.canhazgpu.dev is not registered"'
LATE=$(devs late)
# (the kubelet may post the event before the pod's container statuses)
has_cstate() { k get pod -n "$NS" "$1" -o json | jq -e '.status.containerStatuses[0].state' >/dev/null; }
check_output 'and no container of the pod was started' \
	"eventually 30 has_cstate late; k get pod -n $NS late -o json | jq -r '.status.containerStatuses[0].state | keys[0], .waiting.reason'" <<'EOF'
waiting
ContainerCreating
EOF
# A host user takes the GPU the scheduler gave (the agent, stopped, has
# not held it yet), then the plugin comes back.
gpu-reserve -a "$D/redis/redis.sock" reserve -b -G "${LATE#gpu-}" -u alice -d 1h >/dev/null
k8shazgpu-sim start plugin >/dev/null
check "the kubelet's next prepare is refused: an event names the holder" \
	'eventually 150 event_says late "GPU ${LATE#gpu-} is held by alice (manual reservation since"'
check 'the pod stays in ContainerCreating' "k get pod -n $NS late -o jsonpath='{.status.containerStatuses[0].state.waiting.reason}' | grep -x ContainerCreating"
gpu-reserve -a "$D/redis/redis.sock" release -u alice >/dev/null
check 'alice releases it: the pod starts' 'eventually 150 phase late Running'
check_output 'with its one GPU' "eventually 30 printed late; k logs -n $NS late" <<EOF
$(want "$LATE")
0
EOF
k8shazgpu-sim start node-agent >/dev/null

# --- the plugin killed mid-life and started again: nothing lost
LUID=$(uid late)
# reconcile records of the plugin as started again: those after the
# ones of its earlier runs
RECS=$(grep -c '"kind":"reconcile"' "$D/plugin.log")
new_reconcile() { [ "$(grep -c '"kind":"reconcile"' "$D/plugin.log")" -gt "$RECS" ]; }
kill -KILL "$(cat "$D/plugin.pid")"
k8shazgpu-sim stop plugin >/dev/null
k8shazgpu-sim start plugin >/dev/null
check_output 'after a kill -9 and a start, the reconcile keeps the claim' \
	"eventually 30 new_reconcile && grep '\"kind\":\"reconcile\"' $D/plugin.log | tail -n 1 | jq -c '{kept, unprepared, errors}' | sed 's/$LUID/UID/'" <<'EOF'
{"kept":["UID"],"unprepared":[],"errors":[]}
EOF
check 'its spec and hold are still there' \
	"test -f $D/cdi/k8s.canhazgpu.dev-claim_$LUID.json && ledger | grep -q 'k8s:$NS/late'"
k delete pod -n "$NS" late --wait=false >/dev/null
check 'the pod deleted: the restarted plugin unprepares it' \
	"eventually 120 sh -c '! test -e $D/cdi/k8s.canhazgpu.dev-claim_$LUID.json'"

# --- the kubelet restarted: it deletes the node's slices; the agent
# publishes them again within one cycle (K8SHAZGPU_SIM_AGENT_INTERVAL)
slice_uid() { k get resourceslices --field-selector "spec.nodeName=$HOST" -o jsonpath='{.items[*].metadata.uid}'; }
registered() { grep -c '"kind":"registration","registered":true' "$D/plugin.log"; }
n0=$(registered) s0=$(slice_uid)
k8shazgpu-sim stop kubelet >/dev/null
k8shazgpu-sim start kubelet >/dev/null
# a new uid: deleted by the kubelet, published again by the agent
new_slice() { s1=$(slice_uid); [ -n "$s1" ] && [ "$s1" != "$s0" ] && [ "$s1" = "${s1%% *}" ]; }
check 'the kubelet restarted: a new node ResourceSlice within a cycle' 'eventually 30 new_slice'
check 'and the plugin registered with it again' 'eventually 60 test "$(registered)" -gt $n0'
done_testing
