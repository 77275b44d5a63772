#!/bin/sh
# sched-bind on the simulated cluster, beside kube-scheduler: pods with DRA
# claims placed by kube-scheduler and pods of ours (schedulerName
# k8shazgpu, strategy annotations) share nodes h100 and l4 and never a
# device; priority orders the queue, and a pod deleted frees its GPU for
# the one waiting; extended resources are counted with kube-scheduler's
# and never overbooked; a MIG claim falls back along firstAvailable; a bad
# priority annotation is named in an Event; a pod is ours by its spec, not
# by an annotation named schedulerName. Devices are read from the API.
. "$(dirname "$0")/lib.sh"
need_cluster
NS=t9420

stop_bind() {
	kill_groups "$SCRATCH/ctl.pids"
	gone 30 "sched-bind" ctl_running
	rm -f "$SCRATCH/ctl.pids"
}

cleanup() {
	cl_rc=0
	stop_bind || cl_rc=1
	ns_deleted "$NS" || cl_rc=1
	return $cl_rc
}

start_bind() {
	setsid sched-bind -v -i 2 >>"$SCRATCH/bind.out" 2>>"$SCRATCH/bind.err" 3>&- 4>&- </dev/null &
	echo $! >>"$SCRATCH/ctl.pids"
}

cleanup || { echo "Bail out! t9420: what an earlier run left is not gone"; exit 1; }
trap 'cleanup || exit 1' EXIT
trap 'exit 1' INT TERM
yaml2json "$TOP/manifests/deviceclasses.yaml" | claim-make -a >/dev/null
k create namespace "$NS" >/dev/null

# pod NAME NODE SCHEDULER PRIORITY STRATEGY GPUS CLAIM [ANNOTATION]: a pod
# pinned to NODE, tolerating the KWOK taint; empty fields are left out;
# ANNOTATION is the value of an annotation named schedulerName.
pod() {
	jq -n -c --arg ns "$NS" --arg name "$1" --arg node "$2" --arg sched "$3" \
		--arg prio "$4" --arg strat "$5" --arg gpus "$6" --arg claim "$7" --arg ann "${8:-}" '
	{apiVersion: "v1", kind: "Pod",
	 metadata: {name: $name, namespace: $ns, annotations:
		((if $ann != "" then {schedulerName: $ann} else {} end) +
		 (if $prio != "" then {"agentaflow.gpu/priority": $prio} else {} end) +
		 (if $strat != "" then {"agentaflow.gpu/scheduling-strategy": $strat} else {} end))},
	 spec: ({schedulerName: $sched, nodeSelector: {"kubernetes.io/hostname": $node},
		tolerations: [{key: "kwok.x-k8s.io/node", operator: "Exists", effect: "NoSchedule"}],
		containers: [{name: "c", image: "busybox", resources:
			((if $gpus != "" then {limits: {"nvidia.com/gpu": $gpus}} else {} end) +
			 (if $claim != "" then {claims: [{name: "gpus"}]} else {} end))}]} +
		(if $claim != "" then {resourceClaims: [{name: "gpus", resourceClaimName: $claim}]} else {} end))}' |
		k create -f - >/dev/null
}

# claim NAME: one whole GPU of class gpu.canhazgpu.dev
claim() {
	jq -n -c --arg ns "$NS" --arg name "$1" '{apiVersion: "resource.k8s.io/v1", kind: "ResourceClaim",
		metadata: {name: $name, namespace: $ns},
		spec: {devices: {requests: [{name: "gpus", exactly: {deviceClassName: "gpu.canhazgpu.dev"}}]}}}' |
		k create -f - >/dev/null
}

node_of() { k get pod -n "$NS" "$1" -o jsonpath='{.spec.nodeName}'; }
bound() { [ -n "$(node_of "$1")" ]; }
pending() { [ -z "$(node_of "$1")" ]; }
devices_of() { k get pod -n "$NS" "$1" -o jsonpath='{.metadata.annotations.canhazgpu\.dev/devices}'; }
# event_of POD REASON: the messages of the pod's events of that reason
event_of() {
	k get events -n "$NS" -o json | jq -r --arg p "$1" --arg r "$2" \
		'.items[] | select(.involvedObject.name == $p and .reason == $r) | .message'
}
has_event() { [ -n "$(event_of "$1" "$2")" ]; }
nnodes() { k get nodes -o name | wc -l | tr -d ' '; }
# others: why the nodes but the one a test pod names are passed over:
# those with a taint the test pods do not tolerate (the real node's, when
# the cluster has one), then the rest by their node selector
others() {
	k get nodes -o json | jq -r '(.items | length) as $n
		| [.items[] | select(any(.spec.taints[]?; .key != "kwok.x-k8s.io/node"
			and (.effect == "NoSchedule" or .effect == "NoExecute")))] | length
		| (if . > 0 then "\(.) untolerated taint, " else "" end) + "\($n - 1 - .) node selector mismatch"'
}
# uuid NODE DEVICE: the uuid the node's ResourceSlice gives a device
uuid() {
	k get resourceslices -o json | jq -r --arg n "$1" --arg d "$2" \
		'.items[] | select(.spec.nodeName == $n) | .spec.devices[] | select(.name == $d) | .attributes.uuid.string'
}
# slice_uuid NODE INDEX: the uuid of whole GPU INDEX of the node
gpu_uuid() { uuid "$1" "gpu-$2"; }
clear_ns() {
	k delete pods -n "$NS" --all --wait=false >/dev/null 2>&1
	k delete resourceclaims -n "$NS" --all --wait=false >/dev/null 2>&1
	gone 90 "the pods of $NS" k get pods -n "$NS" -o name &&
		gone 90 "the claims of $NS" k get resourceclaims -n "$NS" -o name
}

start_bind

# ---- (a) DRA claims of both schedulers on the same nodes
claim ks1 && pod ks1 h100 default-scheduler "" "" "" ks1
claim ks2 && pod ks2 l4 default-scheduler "" "" "" ks2
check 'kube-scheduler binds its DRA pods' 'eventually 60 bound ks1 && eventually 60 bound ks2'
claim b1 && pod b1 h100 k8shazgpu 3 binpack "" b1
claim b2 && pod b2 l4 k8shazgpu "" spread "" b2
check 'sched-bind binds its DRA pods' 'eventually 60 bound b1 && eventually 60 bound b2'
claim ks3 && pod ks3 h100 default-scheduler "" "" "" ks3
check 'kube-scheduler finds no device left on h100 (ours counted)' \
	'eventually 60 has_event ks3 FailedScheduling && pending ks3'
check_output 'each pod on its node, by its scheduler' \
	"k get pods -n $NS -o json | jq -r '.items[] | [.metadata.name, .spec.nodeName // \"-\", .spec.schedulerName] | @tsv' | sort" <<EOF
b1	h100	k8shazgpu
b2	l4	k8shazgpu
ks1	h100	default-scheduler
ks2	l4	default-scheduler
ks3	-	default-scheduler
EOF
check_output 'every allocated device is distinct and every node GPU is taken' \
	"k get resourceclaims -n $NS -o json | jq -r '[.items[].status.allocation.devices.results[]? | .pool + \"/\" + .device] | sort | .[]'" <<EOF
h100/gpu-0
h100/gpu-1
l4/gpu-0
l4/gpu-1
EOF
check_output 'claims of ours: allocated on the node, reserved for the pod, by request gpus' \
	"k get resourceclaims -n $NS b1 b2 -o json | jq -c '.items[] | [.metadata.name, .status.allocation.nodeSelector.nodeSelectorTerms[0].matchFields[0].values, .status.allocation.devices.results[0].request, .status.allocation.devices.results[0].driver, [.status.reservedFor[].name]]'" <<EOF
["b1",["h100"],"gpus","gpu.canhazgpu.dev",["b1"]]
["b2",["l4"],"gpus","gpu.canhazgpu.dev",["b2"]]
EOF
b1dev=$(k get resourceclaim -n "$NS" b1 -o jsonpath='{.status.allocation.devices.results[0].device}')
check 'b1 is annotated with the uuid of its claimed device' \
	'[ "$(devices_of b1)" = "[\"$(uuid h100 "$b1dev")\"]" ]'
check_output 'the decisions name the strategies and priorities' \
	"jq -c 'select(.kind == \"bind\") | [.pod, .node, .strategy, .priority]' \"$SCRATCH/bind.out\"" <<EOF
["$NS/b1","h100","binpack",3]
["$NS/b2","l4","spread",0]
EOF
check 'a Scheduled event for each pod of ours' \
	'[ "$(event_of b1 Scheduled)" = "Successfully assigned $NS/b1 to h100" ] && [ "$(event_of b2 Scheduled)" = "Successfully assigned $NS/b2 to l4" ]'
check 'cleared' clear_ns

# ---- (b) priority orders the queue; deleting a pod frees its GPU
pod f0 h100 k8shazgpu "" "" 1 ""
check 'f0 takes one GPU of h100' 'eventually 60 bound f0'
# both wait before sched-bind looks: the pass sees them together
stop_bind
pod p1 h100 k8shazgpu 1 "" 1 ""
pod p10 h100 k8shazgpu 10 "" 1 ""
: >"$SCRATCH/bind.out"
start_bind
check 'with one GPU left, priority 10 is bound' 'eventually 60 bound p10'
check 'priority 1 stays Pending' 'eventually 30 has_event p1 FailedScheduling && pending p1'
n=$(nnodes)
check_output 'its FailedScheduling event says why' "event_of p1 FailedScheduling" <<EOF
0/$n nodes fit: $(others), 1 insufficient nvidia.com/gpu
EOF
check 'f0 and p10 hold distinct GPUs of h100' \
	'[ "$(printf "%s\n%s\n" "$(devices_of f0)" "$(devices_of p10)" | sort)" = "$(printf "[\"%s\"]\n[\"%s\"]\n" "$(gpu_uuid h100 0)" "$(gpu_uuid h100 1)" | sort)" ]'
f0dev=$(devices_of f0)
k delete pod -n "$NS" f0 --wait=false >/dev/null
check 'deleting f0 frees its GPU: p1 is bound to it' \
	'eventually 60 bound p1 && [ "$(node_of p1)" = h100 ] && [ "$(devices_of p1)" = "$f0dev" ]'
check_output 'decisions: p10 first, p1 after f0 went' \
	"jq -c 'select(.kind == \"bind\") | [.pod, .priority]' \"$SCRATCH/bind.out\"" <<EOF
["$NS/p10",10]
["$NS/p1",1]
EOF
check 'cleared' clear_ns

# ---- (c) extended resources, counted with kube-scheduler's
pod x1 l4 default-scheduler "" "" 1 ""
check 'kube-scheduler binds x1 (nvidia.com/gpu: 1)' 'eventually 60 bound x1'
pod y1 l4 k8shazgpu "" "" 1 ""
check 'sched-bind binds y1 to the other GPU' \
	'eventually 60 bound y1 && [ "$(devices_of y1)" = "[\"$(gpu_uuid l4 1)\"]" ]'
pod y2 l4 k8shazgpu "" "" 1 ""
check_output 'a third GPU pod of ours does not fit' \
	"eventually 30 has_event y2 FailedScheduling; pending y2 && event_of y2 FailedScheduling" <<EOF
0/$n nodes fit: $(others), 1 insufficient nvidia.com/gpu
EOF
pod x2 l4 default-scheduler "" "" 1 ""
check 'nor does a third of kube-scheduler (ours counted)' \
	'eventually 60 has_event x2 FailedScheduling && pending x2'
check_output 'l4 holds exactly its 2 nvidia.com/gpu' \
	"k get pods -n $NS -o json | jq '[.items[] | select(.spec.nodeName == \"l4\") | .spec.containers[].resources.requests[\"nvidia.com/gpu\"] // \"0\" | tonumber] | add'" <<EOF
2
EOF
check 'cleared' clear_ns

# ---- (e) firstAvailable: no 3g.40gb anywhere, a 2g.20gb on medium
jq -n -c --arg ns "$NS" '{apiVersion: "resource.k8s.io/v1", kind: "ResourceClaim",
	metadata: {name: "m1", namespace: $ns},
	spec: {devices: {requests: [{name: "gpus", firstAvailable: [
		{name: "p0", deviceClassName: "mig.canhazgpu.dev", count: 1, selectors: [{cel: {expression: "device.attributes[\"gpu.canhazgpu.dev\"].profile == \"3g.40gb\""}}]},
		{name: "p1", deviceClassName: "mig.canhazgpu.dev", count: 1, selectors: [{cel: {expression: "device.attributes[\"gpu.canhazgpu.dev\"].profile == \"2g.20gb\""}}]}]}]}}}' |
	k create -f - >/dev/null
pod m1 medium k8shazgpu "" best_fit "" m1
check 'the MIG pod is bound to medium' 'eventually 60 bound m1 && [ "$(node_of m1)" = medium ]'
m1dev=$(k get resourceclaim -n "$NS" m1 -o jsonpath='{.status.allocation.devices.results[0].device}')
check_output 'its claim got a 2g.20gb device through subrequest p1' \
	"k get resourceclaim -n $NS m1 -o jsonpath='{.status.allocation.devices.results[0].request}'; echo; k get resourceslices -o json | jq -r --arg d \"$m1dev\" '.items[] | select(.spec.nodeName == \"medium\") | .spec.devices[] | select(.name == \$d) | .attributes.profile.string'" <<EOF
gpus/p1
2g.20gb
EOF

# ---- (d) a bad priority annotation is named, the pod still placed
pod z1 h100 k8shazgpu high "" "" ""
check 'the pod with a bad priority is bound with the default' \
	'eventually 60 bound z1 && [ "$(jq -c "select(.pod == \"$NS/z1\") | .priority" "$SCRATCH/bind.out")" = 0 ]'
check_output 'an Event names the annotation' "event_of z1 FailedScheduling" <<'EOF'
annotation agentaflow.gpu/priority: "high" is not an integer
EOF
# ---- (e) a pod is ours by its spec's schedulerName alone: an annotation of
# that name, before the spec in the pod's JSON, neither hides a pod of ours
# nor makes one of kube-scheduler's ours. The namespace is cleared first: with
# no pod of ours waiting, only the pod watch can start the pass that binds.
check 'the namespace is cleared' clear_ns
pod an1 h100 k8shazgpu "" "" "" "" default-scheduler
pod an2 l4 default-scheduler "" "" "" "" k8shazgpu
check 'a pod of ours with an annotation schedulerName=default-scheduler is bound by us' \
	'eventually 60 bound an1 && [ "$(jq -r "select(.pod == \"$NS/an1\") | .kind" "$SCRATCH/bind.out")" = bind ]'
check 'a pod of kube-scheduler with an annotation schedulerName=k8shazgpu is its own' \
	'eventually 60 bound an2 && [ -z "$(jq -r "select(.pod == \"$NS/an2\") | .kind" "$SCRATCH/bind.out")" ]'
check 'sched-bind said no error' '! grep -v "pass: " "$SCRATCH/bind.err"'

done_testing
