#!/bin/sh
# sched-bind -j: the decisions of one pass over lists read from files, on
# the nodes and ResourceSlices of manifests/sim/test.yaml (small, medium:
# MIG; h100, l4: 2 whole GPUs each): priority order, a pod that does not
# fit not stopping a smaller one, extended resources counted (named and
# unnamed devices), DRA claims (exactly, firstAvailable with MIG
# profiles, allocated by others, shared), several demands on one node,
# the node filter (taints, selector, cpu), bad annotations and
# unsupported claim requests named; bad options and files.
. "$(dirname "$0")/lib.sh"

T=$TOP/manifests/sim/test.yaml
k8shazgpu-sim nodes "$T" | jq -s '[.[] | .status.conditions = [{type: "Ready", status: "True"}]]' >nodes.json &&
	for n in small medium h100 l4; do
		gpu-probe -t "$T" -n "$n" | claim-make -N "$n" | jq -c 'select(.kind == "ResourceSlice")'
	done | jq -s '{kind: "ResourceSliceList", items: .}' >slices.json || exit 1
# uuid NODE DEVICE: the uuid the slice gives a device
uuid() { jq -r --arg n "$1" --arg d "$2" '.items[] | select(.spec.nodeName == $n) | .spec.devices[] | select(.name == $d) | .attributes.uuid.string' slices.json; }
H0=$(uuid h100 gpu-0) H1=$(uuid h100 gpu-1) L0=$(uuid l4 gpu-0) L1=$(uuid l4 gpu-1)

# pod NAME NODE PRIORITY GPUS CLAIM [JQ]: a pending pod of ours pinned to
# NODE, tolerating the KWOK taint, created at second N of the pods so
# far; JQ edits it further. Appended to pods.ndjson.
: >pods.ndjson
: >claims.ndjson
pod() {
	jq -n -c --arg name "$1" --arg node "$2" --arg prio "$3" --arg gpus "$4" --arg claim "$5" \
		--arg t "$(printf '2026-01-01T00:00:%02dZ' "$(wc -l <pods.ndjson)")" '
	{metadata: {namespace: "t", name: $name, uid: ("uid-" + $name), creationTimestamp: $t,
		annotations: (if $prio != "" then {"agentaflow.gpu/priority": $prio} else {} end)},
	 spec: ({schedulerName: "k8shazgpu", nodeSelector: {"kubernetes.io/hostname": $node},
		tolerations: [{key: "kwok.x-k8s.io/node", operator: "Exists", effect: "NoSchedule"}],
		containers: [{name: "c", resources: (if $gpus != "" then {requests: {"nvidia.com/gpu": $gpus}} else {} end)}]} +
		(if $claim != "" then {resourceClaims: [{name: "gpus", resourceClaimName: $claim}]} else {} end)),
	 status: {phase: "Pending"}} | '"${6:-.}" >>pods.ndjson
}
# claim NAME REQUEST-JSON [JQ]
claim() {
	jq -n -c --arg name "$1" --argjson r "$2" '{metadata: {namespace: "t", name: $name, resourceVersion: "1"},
		spec: {devices: {requests: [$r + {name: "gpus"}]}}} | '"${3:-.}" >>claims.ndjson
}
gpu_req() { echo "{\"exactly\": {\"deviceClassName\": \"gpu.canhazgpu.dev\", \"count\": $1}}"; }
mig_sub() { echo "{\"name\": \"$1\", \"deviceClassName\": \"mig.canhazgpu.dev\", \"count\": $2, \"selectors\": [{\"cel\": {\"expression\": \"device.attributes[\\\"gpu.canhazgpu.dev\\\"].profile == \\\"$3\\\"\"}}]}"; }

# pass: the decisions of sched-bind -j over the pods and claims so far,
# then, unless it exited 0 quietly, "exit N" and the messages; then both
# lists start empty again.
pass() {
	jq -s . pods.ndjson >pods.json && jq -s '{kind: "ResourceClaimList", items: .}' claims.ndjson >claims.json &&
		: >pods.ndjson && : >claims.ndjson || return 1
	sched-bind "$@" -j nodes.json pods.json slices.json claims.json >out 2>err
	st=$?
	cat out
	[ $st -eq 0 ] && [ ! -s err ] || { echo "exit $st"; cat err; }
}

# ---- priority, extended resources
pod ks h100 "" 1 "" '.spec.schedulerName = "default-scheduler" | .spec.nodeName = "h100" | .status.phase = "Running"'
pod low h100 1 1 ""
pod high h100 10 1 ""
check_output 'priority 10 takes the GPU index 0 leaves (ks, unnamed, holds the lowest); 1 waits' pass <<EOF
{"kind":"bind","pod":"t/high","node":"h100","devices":["$H1"],"strategy":"least_utilized","priority":10}
{"kind":"unschedulable","pod":"t/low","reason":"0/4 nodes fit: 3 node selector mismatch, 1 insufficient nvidia.com/gpu"}
{"kind":"event","pod":"t/low","type":"Warning","reason":"FailedScheduling","message":"0/4 nodes fit: 3 node selector mismatch, 1 insufficient nvidia.com/gpu"}
EOF

pod ks h100 "" 1 "" ".spec.nodeName = \"h100\" | .status.phase = \"Running\" | .metadata.annotations[\"canhazgpu.dev/devices\"] = \"[\\\"$H1\\\"]\""
pod done h100 "" 1 "" '.spec.nodeName = "h100" | .status.phase = "Succeeded"'
pod other h100 "" 1 "" '.spec.schedulerName = "other"'
pod one h100 "" 1 ""
check_output 'a named device is held, a Succeeded pod holds none, another scheduler'"'"'s pod is not ours' pass <<EOF
{"kind":"bind","pod":"t/one","node":"h100","devices":["$H0"],"strategy":"least_utilized","priority":0}
EOF

pod mig medium "" "" "" '.spec.containers[0].resources.requests["nvidia.com/mig-2g.20gb"] = "2" | .spec.initContainers = [{name: "i", resources: {requests: {"nvidia.com/mig-1g.10gb": "1"}}}]'
pod mig2 medium "" "" "" '.spec.nodeName = "medium" | .status.phase = "Running" | .spec.containers[0].resources.requests["nvidia.com/mig-2g.20gb"] = "10"'
pod mig3 medium "" "" "" '.spec.containers[0].resources.requests["nvidia.com/mig-2g.20gb"] = "1"'
check_output 'MIG extended resources: devices of the profile, init containers counted; the 12 2g.20gb of medium run out' \
	"pass | jq -r --slurpfile s slices.json '(\$s[0].items | map(.spec.devices[] | {key: .attributes.uuid.string, value: .attributes.profile.string}) | from_entries) as \$p | select(.kind != \"event\") | .pod + \" \" + (.node // .reason) + \" \" + ([.devices[]? | \$p[.]] | join(\",\"))'" <<'EOF'
t/mig medium 2g.20gb,2g.20gb,1g.10gb
t/mig3 0/4 nodes fit: 3 node selector mismatch, 1 insufficient nvidia.com/mig-2g.20gb 
EOF

claim big "$(gpu_req 3)"
pod big l4 9 "" big
pod small l4 1 "" "" '.metadata.annotations["agentaflow.gpu/scheduling-strategy"] = "binpack"'
pod cpu l4 0 "" "" '.spec.containers[0].resources.requests.cpu = "65"'
pod taint l4 0 "" "" 'del(.spec.tolerations)'
check_output 'a pod that does not fit does not stop a smaller one; taints and cpu filter nodes' pass <<EOF
{"kind":"unschedulable","pod":"t/big","reason":"0/4 nodes fit: 3 node selector mismatch, 1 without the devices (no node has 3 free healthy GPUs)"}
{"kind":"event","pod":"t/big","type":"Warning","reason":"FailedScheduling","message":"0/4 nodes fit: 3 node selector mismatch, 1 without the devices (no node has 3 free healthy GPUs)"}
{"kind":"bind","pod":"t/small","node":"l4","devices":[],"strategy":"binpack","priority":1}
{"kind":"unschedulable","pod":"t/cpu","reason":"0/4 nodes fit: 3 node selector mismatch, 1 insufficient cpu"}
{"kind":"event","pod":"t/cpu","type":"Warning","reason":"FailedScheduling","message":"0/4 nodes fit: 3 node selector mismatch, 1 insufficient cpu"}
{"kind":"unschedulable","pod":"t/taint","reason":"0/4 nodes fit: 4 untolerated taint"}
{"kind":"event","pod":"t/taint","type":"Warning","reason":"FailedScheduling","message":"0/4 nodes fit: 4 untolerated taint"}
EOF

for i in 1 2 3; do pod r$i "" "" 1 "" '.spec.nodeSelector = {} | .metadata.annotations["agentaflow.gpu/scheduling-strategy"] = "RoundRobin"'; done
check_output 'round_robin goes on from the node it chose last, pod after pod' "pass | jq -c '[.pod, .node]'" <<'EOF'
["t/r1","h100"]
["t/r2","l4"]
["t/r3","h100"]
EOF

# ---- what a pass does not read (sched-bind drops it from each listed
# object: managedFields, a Node's images, a Pod's statuses and volumes,
# all of a container but its name, resources and restartPolicy)
FAT='.metadata.managedFields = [{manager: "m", operation: "Apply", fieldsV1: {"f:spec": {}}}]
	| .spec.volumes = [{name: "v", emptyDir: {}}]
	| .spec.containers[0] += {image: "i", command: ["sh"], env: [{name: "A", value: "1"}], ports: [{containerPort: 80}]}
	| .spec.initContainers = [{name: "side", image: "i", restartPolicy: "Always", resources: {requests: {"nvidia.com/gpu": "1"}}}]
	| .status += {conditions: [{type: "PodScheduled", status: "False"}], containerStatuses: [{name: "c", ready: false}]}'
pod fat l4 "" 1 "" "$FAT"
check_output 'a pod with all that: decided as without it; its sidecar (restartPolicy kept) runs beside the container: 2 GPUs' pass <<EOF
{"kind":"bind","pod":"t/fat","node":"l4","devices":["$L0","$L1"],"strategy":"least_utilized","priority":0}
EOF
pod side l4 "" 1 "" '.spec.initContainers = [{name: "side", restartPolicy: "Always", resources: {requests: {"nvidia.com/gpu": "2"}}}]'
pod plain l4 "" 1 "" '.spec.initContainers = [{name: "side", restartPolicy: "Always", resources: {requests: {"nvidia.com/gpu": "1"}}},
	{name: "after", resources: {requests: {"nvidia.com/gpu": "2"}}}]'
check_output 'a sidecar of 2 and a container of 1 need 3 GPUs; a plain init container of 2 beside a sidecar of 1, 3 too' pass <<EOF
{"kind":"unschedulable","pod":"t/side","reason":"0/4 nodes fit: 3 node selector mismatch, 1 insufficient nvidia.com/gpu"}
{"kind":"event","pod":"t/side","type":"Warning","reason":"FailedScheduling","message":"0/4 nodes fit: 3 node selector mismatch, 1 insufficient nvidia.com/gpu"}
{"kind":"unschedulable","pod":"t/plain","reason":"0/4 nodes fit: 3 node selector mismatch, 1 insufficient nvidia.com/gpu"}
{"kind":"event","pod":"t/plain","type":"Warning","reason":"FailedScheduling","message":"0/4 nodes fit: 3 node selector mismatch, 1 insufficient nvidia.com/gpu"}
EOF

# ---- DRA
claim theirs "$(gpu_req 1)" '.status.allocation = {devices: {results: [{request: "gpus", driver: "gpu.canhazgpu.dev", pool: "l4", device: "gpu-0"}]}, nodeSelector: {nodeSelectorTerms: [{matchFields: [{key: "metadata.name", operator: "In", values: ["l4"]}]}]}}'
claim mine "$(gpu_req 1)"
pod d l4 "" "" mine
check_output 'a device allocated by another scheduler is not given; the claim is allocated and reserved' pass <<EOF
{"kind":"bind","pod":"t/d","node":"l4","devices":["$L1"],"strategy":"least_utilized","priority":0}
{"kind":"claim","claim":"t/mine","allocation":{"devices":{"results":[{"request":"gpus","driver":"gpu.canhazgpu.dev","pool":"l4","device":"gpu-1"}]},"nodeSelector":{"nodeSelectorTerms":[{"matchFields":[{"key":"metadata.name","operator":"In","values":["l4"]}]}]}},"reservedFor":[{"resource":"pods","name":"d","uid":"uid-d"}]}
EOF

claim m "{\"firstAvailable\": [$(mig_sub p0 1 3g.40gb), $(mig_sub p1 2 1g.10gb)]}"
pod m medium "" "" "" '.spec.resourceClaims = [{name: "gpus", resourceClaimTemplateName: "tpl"}] | .status.resourceClaimStatuses = [{name: "gpus", resourceClaimName: "m"}] | .metadata.annotations["agentaflow.gpu/scheduling-strategy"] = "spread_gpu"'
check_output 'firstAvailable: no 3g.40gb, two 1g.10gb of a template claim, spread over GPUs' \
	"pass | jq -c 'if .kind == \"claim\" then [.claim, [.allocation.devices.results[] | [.request, .device]]] else [.kind, .pod, (.devices | length), .strategy] end'" <<EOF
["bind","t/m",2,"spread_gpu"]
["t/m",[["gpus/p1","gpu-0-mig-1g-10gb-3"],["gpus/p1","gpu-1-mig-1g-10gb-3"]]]
EOF

alloc_h100='{devices: {results: [{request: "gpus", driver: "gpu.canhazgpu.dev", pool: "h100", device: "gpu-1"}]}, nodeSelector: {nodeSelectorTerms: [{matchFields: [{key: "metadata.name", operator: "In", values: ["h100"]}]}]}}'
claim shared "$(gpu_req 1)" ".status = {allocation: $alloc_h100, reservedFor: [{resource: \"pods\", name: \"first\", uid: \"uid-first\"}]}"
pod s2 h100 "" 1 shared
pod s3 h100 "" "" shared
claim other "$(gpu_req 1)" ".status = {allocation: $alloc_h100}"
pod s4 l4 "" "" other
check_output 'a pod of an allocated claim goes to its node, is reserved, and may add extended GPUs there' \
	"pass | jq -c 'if .kind == \"claim\" then [.claim, .allocation.devices.results[0].device, [.reservedFor[].name]] else [.kind, .pod, .node // .message // .reason, .devices] end'" <<EOF
["bind","t/s2","h100",["$H0"]]
["t/shared","gpu-1",["first","s2"]]
["unschedulable","t/s3","ResourceClaim t/shared was written in this pass",null]
["event","t/s3","ResourceClaim t/shared was written in this pass",null]
["unschedulable","t/s4","0/4 nodes fit: 3 node selector mismatch, 1 not the node of an allocated claim",null]
["event","t/s4","0/4 nodes fit: 3 node selector mismatch, 1 not the node of an allocated claim",null]
EOF

claim both "$(gpu_req 1)"
pod both h100 "" 1 both
pod ks h100 "" 1 "" '.spec.nodeName = "h100" | .status.phase = "Running" | .spec.schedulerName = "default-scheduler"'
claim both2 "$(gpu_req 1)"
pod both2 l4 "" 1 both2
check_output 'an extended GPU and a claimed one land on one node, distinct, or not at all' \
	"pass | jq -c '[.kind, .pod, .node // .message // .reason, .devices]'" <<EOF
["unschedulable","t/both","0/4 nodes fit: 3 node selector mismatch, 1 without the devices (no node holds all the devices together)",null]
["event","t/both","0/4 nodes fit: 3 node selector mismatch, 1 without the devices (no node holds all the devices together)",null]
["bind","t/both2","l4",["$L0","$L1"]]
["claim",null,null,null]
EOF

# ---- what is named
pod p1 l4 high "" "" '.metadata.annotations["agentaflow.gpu/scheduling-strategy"] = "fastest"'
pod p2 l4 99999999999 "" ""
pod p3 l4 " 5" "" ""
check_output 'bad annotations are named in events; the pods placed with the defaults' \
	"pass | jq -c '[.kind, .pod, .priority // .message]'" <<'EOF'
["bind","t/p1",0]
["event","t/p1","annotation agentaflow.gpu/priority: \"high\" is not an integer"]
["event","t/p1","annotation agentaflow.gpu/scheduling-strategy: \"fastest\" is not a known strategy"]
["bind","t/p2",0]
["event","t/p2","annotation agentaflow.gpu/priority: \"99999999999\" is not an integer in -2147483648..2147483647"]
["bind","t/p3",0]
["event","t/p3","annotation agentaflow.gpu/priority: \" 5\" is not an integer"]
EOF

claim u1 '{"exactly": {"deviceClassName": "gpu.nvidia.com"}}'
claim u2 '{"exactly": {"deviceClassName": "gpu.canhazgpu.dev", "selectors": [{"cel": {"expression": "true"}}]}}'
claim u3 '{"exactly": {"deviceClassName": "gpu.canhazgpu.dev", "allocationMode": "All"}}'
claim u4 "{\"exactly\": $(mig_sub x 1 '2g.20gb\" || true || \"')}"
claim u5 '{"exactly": {"deviceClassName": "gpu.canhazgpu.dev", "count": 65}}'
claim u6 '{}'
for i in 1 2 3 4 5 6; do pod u$i l4 "" "" u$i; done
pod u7 l4 "" "" nothere
pod u8 l4 "" "" "" '.spec.resourceClaims = [{name: "g", resourceClaimTemplateName: "tpl"}]'
pod u9 l4 "" "" "" '.spec.resourceClaims = [{name: "g", resourceClaimTemplateName: "tpl"}] | .status.resourceClaimStatuses = [{name: "g"}]'
check_output 'unsupported claim requests and missing claims are named' \
	"pass | jq -r 'select(.kind == \"unschedulable\" or .kind == \"bind\") | .pod + \": \" + (.reason // .node)'" <<'EOF'
t/u1: ResourceClaim t/u1: request "gpus": device class "gpu.nvidia.com" is not supported (only gpu.canhazgpu.dev and mig.canhazgpu.dev)
t/u2: ResourceClaim t/u2: request "gpus": selectors are not supported for device class gpu.canhazgpu.dev
t/u3: ResourceClaim t/u3: request "gpus": allocationMode All is not supported
t/u4: ResourceClaim t/u4: request "gpus": device class mig.canhazgpu.dev needs the one selector device.attributes["gpu.canhazgpu.dev"].profile == "PROFILE"
t/u5: ResourceClaim t/u5: request "gpus": count must be from 1 to 64
t/u6: ResourceClaim t/u6: request "gpus": neither exactly nor firstAvailable
t/u7: ResourceClaim t/nothere not found
t/u8: waiting for the ResourceClaim of pod.spec.resourceClaims "g"
t/u9: l4
EOF

# ---- options and files
check_output 'K8SHAZGPU_SCHEDULER_NAME and -N name our pods; -S the default strategy' \
	"pod a l4 '' '' '' '.spec.schedulerName = \"mine\"'; cp pods.ndjson keep; K8SHAZGPU_SCHEDULER_NAME=mine pass -S spread | jq -c '[.pod, .strategy]'; cp keep pods.ndjson; pass -N mine -S binpack | jq -c '[.pod, .strategy]'" <<'EOF'
["t/a","spread"]
["t/a","binpack"]
EOF
check_output 'usage errors' '
	for a in "-1 x" "-j a b c" "-S fastest" "-i 0" "-i x" "-N \"\"" "-q" "--quick" "-S" "extra"; do
		eval "set -- $a"; sched-bind "$@" >out 2>err; echo "$a: $? $(wc -l <out) $(head -n 1 err)"
	done' <<'EOF'
-1 x: 2 0 usage: sched-bind [-1v] [-S strategy] [-N scheduler-name] [-i seconds]
-j a b c: 2 0 usage: sched-bind [-1v] [-S strategy] [-N scheduler-name] [-i seconds]
-S fastest: 2 0 sched-bind: -S fastest: unknown strategy
-i 0: 2 0 sched-bind: -i 0: not a number of seconds from 0.1 to 86400
-i x: 2 0 sched-bind: -i x: not a number of seconds from 0.1 to 86400
-N "": 2 0 usage: sched-bind [-1v] [-S strategy] [-N scheduler-name] [-i seconds]
-q: 2 0 sched-bind: unknown option -q
--quick: 2 0 sched-bind: unknown option --quick
-S: 2 0 sched-bind: -S needs an argument
extra: 2 0 usage: sched-bind [-1v] [-S strategy] [-N scheduler-name] [-i seconds]
EOF
check '-h prints the usage on stdout' 'sched-bind -h >out && head -n 1 out | grep -qx "usage: sched-bind \[-1v\] \[-S strategy\] \[-N scheduler-name\] \[-i seconds\]"'
echo '{"items": 5}' >bad.json
echo '[' >broken.json
check_output 'unreadable lists are named; the rest is still decided' \
	'sched-bind -j nodes.json nothere.json bad.json broken.json 2>&1; echo "exit $?"' <<'EOF'
sched-bind: nothere.json: unable to open nothere.json: No such file or directory
sched-bind: bad.json: neither a List nor an array
sched-bind: broken.json: ']' expected near end of file
exit 1
EOF
check 'an unreachable API server: exit 75' \
	'must_fail 75 sched-bind -1 --kubeconfig "$FIXTURES/unreachable.kubeconfig" 2>err && grep -q "^sched-bind: GET " err'

done_testing
