#!/bin/sh
# The canhazgpu ledger shared by host users and the cluster, through the
# node agent (k8shazgpu-nodeagent -r) on a node of its own with its own
# real redis-server: a GPU reserved on the host leaves the node's
# ResourceSlice (a MIG GPU with all its devices) within seconds, woken by
# Redis and not by the agent's interval, the node annotation naming the
# holder, and comes back when released; a device the scheduler allocated
# to a pod's ResourceClaim, and one a GPUWorkload was given, is held in
# Redis as a k8s hold that host status shows and host reserve skips, and
# is released when the pod goes; a GPU a host user took between the slice
# and the allocation is reported on the pod as an Event.
. "$(dirname "$0")/lib.sh"
need_cluster
NS=t9600-ledger
NODE=t9600

devices() {
	k get resourceslices -o json | jq -r --arg n "$NODE" '[.items[]
		| select(.spec.nodeName == $n and .spec.driver == "gpu.canhazgpu.dev")
		| .spec.devices[].name] | sort | join(" ")'
}
has_devices() { [ "$(devices)" = "$1" ]; }
holders() {
	k get node "$NODE" -o json | jq -r '.metadata.annotations["canhazgpu.dev/host-holds"] // "[]"
		| fromjson | map("\(.gpu)=\(.user)/\(.type)") | join(" ") | if . == "" then "none" else . end'
}
# ledger: GPU state user type, one line per GPU, from gpu-reserve status.
ledger() { gpu-reserve status | jq -r '[.gpu, .state, .user // "-", .type // "-"] | map(tostring) | join(" ")'; }
agent_pid=
start_agent() {
	k8shazgpu-nodeagent -i 120 -N "$NODE" -t "$FIXTURES/ledger/t9600.yaml" -r "$REDIS" >>agent.log 2>&1 &
	agent_pid=$!
}
stop_agent() {
	[ -z "$agent_pid" ] || { kill "$agent_pid" 2>/dev/null; wait "$agent_pid" 2>/dev/null; }
	agent_pid=
}
cleanup() {
	cl_rc=0
	stop_agent
	stop_redis
	ns_deleted "$NS" 120 || cl_rc=1
	k delete node "$NODE" --ignore-not-found --wait=false >/dev/null 2>&1
	gone 60 "node $NODE" k get node "$NODE" --ignore-not-found -o name || cl_rc=1
	k delete resourceslices --field-selector "spec.nodeName=$NODE" >/dev/null 2>&1
	return $cl_rc
}
cleanup || { echo "Bail out! t9600: what an earlier run left is not gone"; exit 1; }
start_redis
trap 'cleanup || exit 1' EXIT
trap 'exit 1' INT TERM
crd_apply "$TOP/manifests/crds/gpuworkloads.yaml"
yaml2json "$TOP/manifests/deviceclasses.yaml" | claim-make -a >/dev/null
k create namespace "$NS" >/dev/null
k8shazgpu-sim nodes "$FIXTURES/ledger/t9600.yaml" | claim-make -a >/dev/null
node_ready() { k get node "$NODE" -o json | jq -e 'any(.status.conditions[]?; .type == "Ready" and .status == "True")'; }
eventually 60 node_ready
eventually 60 k get serviceaccount default -n "$NS"
gpu-reserve init -g 3 >/dev/null
start_agent
ALL="gpu-0 gpu-1 gpu-2-mig-3g-40gb-0 gpu-2-mig-3g-40gb-1"

check 'the agent publishes every device while nothing is held' "eventually 60 has_devices '$ALL'"
check_output 'no host holds: no annotation' holders <<'EOF'
none
EOF

# The agent's interval is 120 s: what follows within 15 s was woken by Redis.
gpu-reserve reserve -G 0 -u alice -d 1h >/dev/null
check 'alice reserves GPU 0 on the host: gpu-0 leaves the slice within seconds' \
	"eventually 15 has_devices 'gpu-1 gpu-2-mig-3g-40gb-0 gpu-2-mig-3g-40gb-1'"
check_output 'the node annotation names the holder' holders <<'EOF'
0=alice/manual
EOF
gpu-reserve reserve -G 2 -t run -u bob >/dev/null
check 'bob holds GPU 2 (MIG): both its MIG devices leave too' "eventually 15 has_devices 'gpu-1'"
check_output 'both holders named' holders <<'EOF'
0=alice/manual 2=bob/run
EOF
gpu-reserve release -G 2 -u bob >/dev/null
gpu-reserve release -u alice >/dev/null
check 'released: every device comes back' "eventually 15 has_devices '$ALL'"
check_output 'and the annotation goes' holders <<'EOF'
none
EOF

# A pod with a ResourceClaim for a whole GPU on this node.
claim_pod() {
	jq -n -c --arg name "$1" --arg ns "$NS" --arg node "$NODE" '
	{apiVersion: "resource.k8s.io/v1", kind: "ResourceClaimTemplate",
	 metadata: {name: $name, namespace: $ns},
	 spec: {spec: {devices: {requests: [{name: "gpu", exactly: {deviceClassName: "gpu.canhazgpu.dev"}}]}}}},
	{apiVersion: "v1", kind: "Pod", metadata: {name: $name, namespace: $ns},
	 spec: {nodeSelector: {"kubernetes.io/hostname": $node},
		tolerations: [{key: "kwok.x-k8s.io/node", operator: "Exists", effect: "NoSchedule"}],
		resourceClaims: [{name: "gpu", resourceClaimTemplateName: $name}],
		containers: [{name: "main", image: "registry.invalid/none:0", resources: {claims: [{name: "gpu"}]}}]}}'
}
# allocated POD: the GPU index and claim name the scheduler gave POD.
allocated() {
	k get resourceclaims -n "$NS" -o json | jq -r --arg p "$1" '.items[]
		| select(.metadata.ownerReferences[0].name == $p and .status.allocation != null)
		| "\(.status.allocation.devices.results[0].device | ltrimstr("gpu-")) \(.metadata.name)"' | grep .
}
claim_pod p1 | k create -f - >/dev/null
check 'the scheduler allocates a GPU of the node to pod p1' 'eventually 60 allocated p1'
set -- $(allocated p1)
G1=$1 C1=$2
# released N: GPU N is free again, and was released (not never used).
released() {
	gpu-reserve status | jq -s -e --argjson g "$1" '.[] | select(.gpu == $g) | .state == "AVAILABLE" and .last_released != null'
}
k8s_held() { ledger | grep -qx "$1 IN_USE k8s:$NS/$2 k8s"; }
check "GPU $G1, the claim's device, becomes a k8s hold in Redis" "eventually 15 k8s_held $G1 $C1"
check_output 'the claim set names it' "rcli smembers canhazgpu:k8s:claim:\$(k get resourceclaim -n $NS $C1 -o jsonpath='{.metadata.uid}'):gpus" <<EOF
$G1
EOF
check_output 'host status shows it in use by the claim' \
	"k8shazgpu host status --json | jq -r '.[] | select(.gpu_id == $G1) | [.status, .user, .type] | join(\" \")'" <<EOF
IN_USE k8s:$NS/$C1 K8S
EOF
check_output 'a host reserve of two GPUs gets the other two, never the held one' \
	"echo \$(gpu-reserve reserve -g 2 -u carol -b | jq -r .gpu | sort)" <<EOF
$(echo $(echo 0 1 2 | tr ' ' '\n' | grep -vx "$G1"))
EOF
check_output 'and a third host reserve finds nothing free' \
	'gpu-reserve reserve -g 1 -u dave -b 2>&1; echo "status $?"' <<'EOF'
gpu-reserve: not enough GPUs available: requested 1, available 0
status 1
EOF
gpu-reserve release -u carol >/dev/null
k delete pod p1 -n "$NS" --wait=false >/dev/null
check "pod p1 gone: GPU $G1 released in Redis" "eventually 60 released $G1"

# A GPUWorkload the controller placed on this node (its status written here).
UUID1=$(gpu-probe -t "$FIXTURES/ledger/t9600.yaml" | jq -r 'select(.index == 1 and .mig == null) | .uuid')
jq -n -c --arg ns "$NS" '{apiVersion: "canhazgpu.dev/v1alpha1", kind: "GPUWorkload",
	metadata: {name: "w1", namespace: $ns}, spec: {gpuCount: 1, podTemplate: {spec: {containers: [{name: "m", image: "x"}]}}}}' |
	k create -f - >/dev/null
k patch gpuworkload w1 -n "$NS" --subresource status --type merge \
	-p "{\"status\":{\"phase\":\"Running\",\"assignedNode\":\"$NODE\",\"devices\":[\"$UUID1\"]}}" >/dev/null
check 'a GPUWorkload running on the node: its GPU 1 held for it' "eventually 15 k8s_held 1 w1"
k patch gpuworkload w1 -n "$NS" --subresource status --type merge -p '{"status":{"phase":"Succeeded"}}' >/dev/null
check 'it succeeded: GPU 1 released' 'eventually 15 released 1'

# The race: the agent is away while a host user takes both whole GPUs,
# so the slice still offers them when pod p2 is scheduled.
stop_agent
gpu-reserve reserve -G 0,1 -u erin -d 2h >/dev/null
claim_pod p2 | k create -f - >/dev/null
check 'the scheduler allocates p2 from the stale slice' 'eventually 60 allocated p2'
set -- $(allocated p2)
G2=$1 C2=$2
k8shazgpu-nodeagent -1 -N "$NODE" -t "$FIXTURES/ledger/t9600.yaml" -r "$REDIS" 2>>agent.log
check_output 'the next agent cycle reports it on the pod as a Warning Event naming the GPU and the holder' \
	"k get events -n $NS --field-selector involvedObject.name=p2,reason=GPUHeldOnHost -o json |
	 jq -r '.items[] | [.type, .reason, (.message | sub(\" since .*\"; \"\"))] | join(\" \")'" <<EOF
Warning GPUHeldOnHost GPU $G2 on node $NODE, given to $NS/$C2, is held on the host by erin (manual
EOF
check_output 'the host hold is left as it was' "ledger | grep -x '$G2 .*'" <<EOF
$G2 IN_USE erin manual
EOF
check 'the slice no longer offers either whole GPU' "has_devices 'gpu-2-mig-3g-40gb-0 gpu-2-mig-3g-40gb-1'"
done_testing
