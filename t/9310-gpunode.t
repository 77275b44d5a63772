#!/bin/sh
# GPUNodes on the simulated cluster: the node agents write one per GPU
# node in both groups, which kubectl get gpunodes and k8shazgpu nodes show
# alike; seeds/003's virtual node k8s.gpu (manifests/sim/k8sgpu.yaml)
# shows its capacity and what its pods leave of its allocatable exactly
# as the seed does, pod by pod, millicores included, back again when the
# pods go, while the Node's own allocatable is left alone; a cycle that
# changes nothing writes nothing; the Node's deletion takes its GPUNodes.
. "$(dirname "$0")/lib.sh"

[ -n "${K8SHAZGPU_SIM_DIR:-}" ] && [ -f "$K8SHAZGPU_SIM_DIR/state" ] ||
	skip_all "no k8shazgpu-sim cluster (run under t/run)"
need_cluster
NS=t9310-gpunode
N=k8s.gpu
D=$K8SHAZGPU_SIM_DIR
TOPO=$TOP/manifests/sim/k8sgpu.yaml

# One cycle of node $1's agent (topology $2, default the seed's).
cycle() { k8shazgpu-nodeagent -1 -N "$1" -t "${2:-$TOPO}" 2>>"$SCRATCH/agent.log"; }

cleanup() {
	k delete namespace "$NS" --ignore-not-found --wait=false >/dev/null 2>&1
	k delete node "$N" --ignore-not-found --wait=false >/dev/null 2>&1
	gone 60 "namespace $NS" k get namespace "$NS" --ignore-not-found -o name &&
		gone 60 "node $N and its GPUNodes" k get node/$N gpunodes.canhazgpu.dev/$N \
			gpunodes.agentaflow.io/$N --ignore-not-found -o name
}
cleanup || { echo "Bail out! t9310: what an earlier run left is not gone"; exit 1; }
trap 'cleanup || exit 1' EXIT
trap 'exit 1' INT TERM

crd_apply "$TOP/manifests/crds/gpunodes.yaml"
eventually 30 k get gpunodes.canhazgpu.dev &&
	eventually 30 k get gpunodes.agentaflow.io || { echo "Bail out! the GPUNode CRDs are not served"; exit 1; }

# ---- the sim's own nodes ----

# the nodes of the sim's topology, each published once now
while IFS= read -r node; do
	cycle "$node" "$D/topology.yaml"
done <"$D/nodes"
sim_nodes=$(tr '\n' ' ' <"$D/nodes")
cols=NAME:.metadata.name,GPUS:.status.totalGPUs,DEVICES:.status.devices,FREE:.status.freeDevices,TIER:.status.utilizationTier,HEALTH:.status.health,PRODUCT:.status.product,MIG:.status.migStrategy

check_output 'a GPUNode for every node of the topology, exact' \
	"k get gpunodes --no-headers -o custom-columns=$cols $sim_nodes | awk '{\$1 = \$1; print}' | sort" <<'EOF'
h100 2 2 2 low ok NVIDIA-H100-80GB-HBM3 none
l4 2 2 2 low ok NVIDIA-L4 none
medium 4 16 16 low ok NVIDIA-H200 mixed
small 4 28 28 low ok NVIDIA-H200 mixed
EOF

check_output 'the agentaflow.io/v1 GPUNodes say the same' \
	"k get gpunodes.agentaflow.io --no-headers -o custom-columns=$cols $sim_nodes | awk '{\$1 = \$1; print}' | sort" <<'EOF'
h100 2 2 2 low ok NVIDIA-H100-80GB-HBM3 none
l4 2 2 2 low ok NVIDIA-L4 none
medium 4 16 16 low ok NVIDIA-H200 mixed
small 4 28 28 low ok NVIDIA-H200 mixed
EOF

# NAME GPUS FREE TIER HEALTH PRODUCT of both, for the topology's nodes
kubectl_view() {
	k get gpunodes --no-headers $sim_nodes | awk '{print $1, $2, $3, $4, $5, $6}' | sort
}
cli_view() {
	k8shazgpu nodes | awk -v want=" $sim_nodes" 'NR > 1 && index(want, " " $1 " ") {print $1, $5, $4, $8, $9, $6}' | sort
}
check 'k8shazgpu nodes shows what kubectl get gpunodes shows' \
	'kubectl_view >kv && cli_view >cv && test -s kv && diff -u kv cv'

check_output 'medium: one entry per record, MIG devices with profile, device and parent' \
	"k get gpunode medium -o json | jq -c '.status.gpus | length, (map(select(.mig == null)) | length),
		(map(select(.mig != null)) | .[0] | [.index, .mig.profile, .mig.device, (.mig.parentUUID | type), .inUse, .held, .healthReasons])'" <<'EOF'
20
4
[0,"2g.20gb",0,"string",false,false,[]]
EOF

# ---- seeds/003: the virtual node k8s.gpu ----

k8shazgpu-sim nodes "$TOPO" | k create -f - >/dev/null
eventually 60 sh -c "k8shazgpu-sim kubectl get node $N -o jsonpath='{.status.conditions[?(@.type==\"Ready\")].status}' | grep -qx True"
cycle "$N"
k create namespace "$NS" >/dev/null

# capacity and allocatable as the seed prints them, with jq
seen() { k get gpunode "$N" -o jsonpath='{.status.capacity}{.status.allocatable}' | jq .; }

check_output 'k8s.gpu: capacity and allocatable, no pod yet' 'seen' <<'EOF'
{
  "cpu": "63",
  "memory": "263567056Ki",
  "nvidia.com/gpu": "8",
  "pods": "8"
}
{
  "cpu": "63",
  "memory": "263567056Ki",
  "nvidia.com/gpu": "8",
  "pods": "8"
}
EOF

check_output 'k8s.gpu: owned by its Node, not as controller; spec names it' \
	"k get gpunode $N -o json | jq -r --arg uid \"\$(k get node $N -o jsonpath='{.metadata.uid}')\" \
		'.metadata.ownerReferences | length, (.[0] | [.apiVersion, .kind, .name, (.uid == \$uid), (.controller // false)] | join(\" \"))'
	 k get gpunode $N -o jsonpath='{.spec.nodeName}{\"\\n\"}'" <<'EOF'
1
v1 Node k8s.gpu true false
k8s.gpu
EOF

check_output 'a cycle that changes nothing writes nothing' \
	'cycle "$N" && tail -n 1 "$SCRATCH/agent.log" | sed "s/.*probed; //"' <<'EOF'
0 writes, 4 unchanged (status 0)
EOF

# pod NAME GPUS CPU MEMORY: a pod on k8s.gpu with these limits (the API
# server makes them its requests), as the seed's pods ask
pod() {
	cat <<EOF | k create -n "$NS" -f - >/dev/null
{"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "$1"},
 "spec": {"restartPolicy": "OnFailure",
  "nodeSelector": {"kubernetes.io/hostname": "$N"},
  "tolerations": [{"key": "kwok.x-k8s.io/node", "operator": "Exists", "effect": "NoSchedule"}],
  "containers": [{"name": "nvidia", "image": "nvidia/cuda:12.6.0-base-ubuntu20.04",
   "resources": {"limits": {"nvidia.com/gpu": $2, "cpu": "$3", "memory": "$4"}}}]}}
EOF
}
running() { [ "$(k get pods -n "$NS" -o json | jq '[.items[] | select(.spec.nodeName == "k8s.gpu" and .status.phase == "Running")] | length')" = "$1" ]; }

pod nvidia-smi 1 2 16Gi
eventually 60 running 1
cycle "$N"
check_output 'k8s.gpu: one pod (1 GPU, 2 cpu, 16Gi): allocatable less its requests' 'seen' <<'EOF'
{
  "cpu": "63",
  "memory": "263567056Ki",
  "nvidia.com/gpu": "8",
  "pods": "8"
}
{
  "cpu": "61",
  "memory": "246789840Ki",
  "nvidia.com/gpu": "7",
  "pods": "7"
}
EOF

check_output 'the Node itself is not rewritten: kube-scheduler subtracts requests itself' \
	"k get node $N -o jsonpath='{.status.allocatable}'; echo" <<'EOF'
{"cpu":"63","memory":"263567056Ki","nvidia.com/gpu":"8","pods":"8"}
EOF

check_output 'one device in use, 7 free; k8shazgpu nodes -o capacity says the same' \
	"k get gpunode $N -o json | jq -c '[.status.freeDevices, .status.offeredDevices, [.status.gpus[] | select(.inUse) | .index]]'
	 k8shazgpu -o capacity nodes | awk 'NR == 1 || \$1 == \"$N\"'" <<'EOF'
[7,8,[0]]
NODE      CPU   CPU-ALLOC   MEMORY        MEMORY-ALLOC   GPU   GPU-ALLOC   PODS   PODS-ALLOC
k8s.gpu   63    61          263567056Ki   246789840Ki    8     7           8      7
EOF

pod fill-1 1 8500m 32Gi
eventually 60 running 2
cycle "$N"
check_output 'a pod asking 8500m cpu: allocatable in millicores' \
	"k get gpunode $N -o jsonpath='{.status.allocatable}'; echo" <<'EOF'
{"cpu":"52500m","memory":"213235408Ki","nvidia.com/gpu":"6","pods":"6"}
EOF

# 7 pods after the first: requests totalling cpu 59 and 246429384Ki
for i in 2 3 4 5 6; do pod fill-$i 1 8500m 32Gi; done
pod fill-7 1 8 45102792Ki
eventually 60 running 8
cycle "$N"
check_output 'k8s.gpu full: 8 pods' 'seen' <<'EOF'
{
  "cpu": "63",
  "memory": "263567056Ki",
  "nvidia.com/gpu": "8",
  "pods": "8"
}
{
  "cpu": "2",
  "memory": "360456Ki",
  "nvidia.com/gpu": "0",
  "pods": "0"
}
EOF

check_output 'every device in use, none free' \
	"k get gpunode $N -o json | jq -c '[.status.freeDevices, ([.status.gpus[] | select(.inUse)] | length)]'
	 k8shazgpu nodes | awk '\$1 == \"$N\" {print \$3, \$4, \$5}'" <<'EOF'
[0,8]
8 0 8
EOF

k delete pods -n "$NS" --all --wait=false >/dev/null
gone 60 "the pods" k get pods -n "$NS" -o name
cycle "$N"
check_output 'the pods gone: allocatable back' 'seen' <<'EOF'
{
  "cpu": "63",
  "memory": "263567056Ki",
  "nvidia.com/gpu": "8",
  "pods": "8"
}
{
  "cpu": "63",
  "memory": "263567056Ki",
  "nvidia.com/gpu": "8",
  "pods": "8"
}
EOF

# Devices in use three ways: a pod naming its GPU's UUID in
# canhazgpu.dev/devices, a pod asking nvidia.com/gpu alone (the first free
# one counts), a DRA claim made from a template, pinned to GPU 7.
yaml2json "$TOP/manifests/deviceclasses.yaml" | claim-make -a >/dev/null
uuid5=$(k get gpunode "$N" -o jsonpath='{.status.gpus[5].uuid}')
jq -n -c --arg ns "$NS" --arg n "$N" --arg uuid "$uuid5" '
	{tolerations: [{key: "kwok.x-k8s.io/node", operator: "Exists", effect: "NoSchedule"}],
	 nodeSelector: {"kubernetes.io/hostname": $n}} as $on
	| {name: "main", image: "registry.invalid/none:0"} as $c
	| {apiVersion: "v1", kind: "Pod", metadata: {name: "named", namespace: $ns,
		annotations: {"canhazgpu.dev/devices": ([$uuid] | tojson)}},
	   spec: ($on + {containers: [$c + {resources: {limits: {"nvidia.com/gpu": 1}}}]})},
	{apiVersion: "v1", kind: "Pod", metadata: {name: "plain", namespace: $ns},
	   spec: ($on + {containers: [$c + {resources: {limits: {"nvidia.com/gpu": 1}}}]})},
	{apiVersion: "resource.k8s.io/v1", kind: "ResourceClaimTemplate", metadata: {name: "seven", namespace: $ns},
	 spec: {spec: {devices: {requests: [{name: "dev", exactly: {deviceClassName: "gpu.canhazgpu.dev",
		selectors: [{cel: {expression: "device.attributes[\"gpu.canhazgpu.dev\"].index == 7"}}]}}]}}}},
	{apiVersion: "v1", kind: "Pod", metadata: {name: "claimed", namespace: $ns},
	   spec: ($on + {resourceClaims: [{name: "dev", resourceClaimTemplateName: "seven"}],
		containers: [$c + {resources: {claims: [{name: "dev"}]}}]})}' |
	claim-make -a >/dev/null
eventually 60 running 3
cycle "$N"
check_output 'in use: the UUID named, the first free for a plain request, the claimed device' \
	"k get gpunode $N -o json | jq -c '[.status.freeDevices, [.status.gpus[] | select(.inUse) | .index], .status.allocatable[\"nvidia.com/gpu\"]]'" <<'EOF'
[5,[0,5,7],"6"]
EOF
k delete pods -n "$NS" --all --wait=false >/dev/null
gone 60 "the pods" k get pods -n "$NS" -o name

# MONITOR_INTERVAL: -i wins, then MONITOR_INTERVAL, then
# K8SHAZGPU_INTERVAL; a bad one is named (the one cycle runs after the check)
check_output 'the agent interval: -i, else MONITOR_INTERVAL, else K8SHAZGPU_INTERVAL; durations' '
	MONITOR_INTERVAL=soon K8SHAZGPU_INTERVAL=5 k8shazgpu-nodeagent -1 -N "$N" -t "$TOPO" 2>&1; echo "exit $?"
	MONITOR_INTERVAL=2m K8SHAZGPU_INTERVAL=x k8shazgpu-nodeagent -i 0s -1 -N "$N" -t "$TOPO" 2>&1; echo "exit $?"
	K8SHAZGPU_INTERVAL=1m30 k8shazgpu-nodeagent -1 -N "$N" -t "$TOPO" 2>&1; echo "exit $?"
	for v in 15s 2m 1m30s 1h 010; do
		MONITOR_INTERVAL=$v K8SHAZGPU_INTERVAL=x k8shazgpu-nodeagent -1 -N "$N" -t "$TOPO" 2>&1 | sed "s/.*probed; .*/ok/"
	done
	MONITOR_INTERVAL=abc k8shazgpu-nodeagent -i 1m30s -1 -N "$N" -t "$TOPO" 2>&1 | sed "s/.*probed; .*/ok/"' <<'EOF'
k8shazgpu-nodeagent: MONITOR_INTERVAL: not a number of seconds or a duration (15s, 2m, 1m30s): soon
exit 2
k8shazgpu-nodeagent: -i: not a number of seconds or a duration (15s, 2m, 1m30s): 0s
exit 2
k8shazgpu-nodeagent: K8SHAZGPU_INTERVAL: not a number of seconds or a duration (15s, 2m, 1m30s): 1m30
exit 2
ok
ok
ok
ok
ok
ok
EOF

k delete node "$N" --wait=false >/dev/null
check 'the Node deleted: its GPUNodes go with it (garbage collector)' \
	'gone 60 "GPUNodes of $N" k get gpunodes.canhazgpu.dev/$N gpunodes.agentaflow.io/$N --ignore-not-found -o name'

done_testing
