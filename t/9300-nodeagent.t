#!/bin/sh
# Node agents publish every simulated node: GPU feature discovery labels,
# DRA ResourceSlices the real kube-scheduler allocates from, and a
# re-partition or removal reflected after one cycle with nothing stale,
# and what other tools set on the node left alone.
. "$(dirname "$0")/lib.sh"
need_cluster
NS=t9300-nodeagent
D=$K8SHAZGPU_SIM_DIR
# the real node (t/9700), if any, has GPUs of its own: left out here
REAL=
[ ! -f "$D/node-state" ] || REAL=$(. "$D/node-state"; echo "$NODE_NAME")

# One cycle of NODE's agent against the topology file FILE.
cycle() { k8shazgpu-nodeagent -1 -N "$1" -t "$2" 2>/dev/null; }

slices() {
	k get resourceslices -o json | jq -r --arg real "$REAL" '.items[] | select(.spec.driver == "gpu.canhazgpu.dev" and .spec.nodeName != $real)
		| [.spec.nodeName, (.spec.devices | length),
		   (.spec.devices | map(.attributes.type.string) | unique | join("+"))] | join(" ")' | sort
}

check_output 'kubectl get nodes -L shows the GPU feature discovery labels' \
	'k get nodes -l type=kwok -L nvidia.com/gpu.product -L nvidia.com/gpu.count -L nvidia.com/mig.strategy |
	 awk "{print \$1, \$2, \$6, \$7, \$8}"' <<'EOF'
NAME STATUS GPU.PRODUCT GPU.COUNT MIG.STRATEGY
h100 Ready NVIDIA-H100-80GB-HBM3 2 none
l4 Ready NVIDIA-L4 2 none
medium Ready NVIDIA-H200 4 mixed
small Ready NVIDIA-H200 4 mixed
EOF

check_output 'per-profile MIG labels and AgentaFlow labels' \
	'k get nodes -l type=kwok -o json | jq -r ".items[] | .metadata.labels | [.[\"kubernetes.io/hostname\"],
		.[\"nvidia.com/mig-1g.10gb.count\"] // \"-\", .[\"nvidia.com/mig-2g.20gb.count\"] // \"-\",
		.[\"agentaflow.gpu/enabled\"], .[\"agentaflow.gpu/count\"], .[\"agentaflow.gpu/utilization-tier\"]]
		| join(\" \")" | sort' <<'EOF'
h100 - - true 2 low
l4 - - true 2 low
medium 4 12 true 4 low
small 28 - true 4 low
EOF

check_output 'the AgentaFlow annotations: devices, status, last-update' \
	'k get node medium -o json | jq -r ".metadata.annotations | (.[\"agentaflow.gpu/devices\"] | fromjson | length),
		(.[\"agentaflow.gpu/status\"] | fromjson | .health),
		(.[\"agentaflow.gpu/last-update\"] | test(\"^[0-9-]+T[0-9:]+Z$\"))"' <<'EOF'
20
ok
true
EOF

check_output 'one ResourceSlice per node: MIG devices, or whole GPUs' 'slices' <<'EOF'
h100 2 gpu
l4 2 gpu
medium 16 mig
small 28 mig
EOF

check_output 'the DeviceClasses apply through yaml2json | claim-make -a' \
	'yaml2json "$TOP/manifests/deviceclasses.yaml" | claim-make -a | jq -r "[.op, .ref] | join(\" \")"' <<'EOF'
apply resource.k8s.io/v1/DeviceClass/gpu.canhazgpu.dev
apply resource.k8s.io/v1/DeviceClass/mig.canhazgpu.dev
EOF

k create namespace "$NS" >/dev/null 2>&1
eventually 60 k get serviceaccount default -n "$NS"

# NAME CLASS CEL: a claim template for one device, and a pod using it.
claim_pod() {
	jq -n -c --arg name "$1" --arg class "$2" --arg cel "$3" --arg ns "$NS" '
	{apiVersion: "resource.k8s.io/v1", kind: "ResourceClaimTemplate",
	 metadata: {name: $name, namespace: $ns},
	 spec: {spec: {devices: {requests: [{name: "dev", exactly: {
		deviceClassName: $class, selectors: [{cel: {expression: $cel}}]}}]}}}},
	{apiVersion: "v1", kind: "Pod", metadata: {name: $name, namespace: $ns},
	 spec: {tolerations: [{key: "kwok.x-k8s.io/node", operator: "Exists", effect: "NoSchedule"}],
		resourceClaims: [{name: "dev", resourceClaimTemplateName: $name}],
		containers: [{name: "main", image: "registry.invalid/none:0",
			resources: {claims: [{name: "dev"}]}}]}}'
}
running() { [ "$(k get pod "$1" -n "$NS" -o jsonpath='{.status.phase}')" = Running ]; }
allocation() {
	k get pod "$1" -n "$NS" -o jsonpath='{.spec.nodeName}{"\n"}' &&
	k get resourceclaims -n "$NS" -o json | jq -r --arg p "$1" '.items[]
		| select(.metadata.annotations["resource.kubernetes.io/pod-claim-name"] == "dev"
			and .metadata.ownerReferences[0].name == $p)
		| .status.allocation.devices.results[] | "\(.pool) \(.device | sub("-[0-9]+-mig-"; "-N-mig-") | sub("-[0-9]+$"; "-M"))"'
}

check_output 'a claim for a 2g.20gb MIG device is allocated on medium and its pod runs' \
	'claim_pod mig2g mig.canhazgpu.dev "device.attributes[\"gpu.canhazgpu.dev\"].profile == \"2g.20gb\"" |
	 k create -f - >/dev/null && eventually 90 running mig2g && allocation mig2g' <<'EOF'
medium
medium gpu-N-mig-2g-20gb-M
EOF

check_output 'a claim for a whole GPU with at least 40Gi goes to h100, not l4' \
	'claim_pod big gpu.canhazgpu.dev "device.capacity[\"gpu.canhazgpu.dev\"].memory.compareTo(quantity(\"40Gi\")) >= 0" |
	 k create -f - >/dev/null && eventually 90 running big && allocation big' <<'EOF'
h100
h100 gpu-M
EOF

k delete namespace "$NS" --wait=true >/dev/null 2>&1

# Re-partition GPU 0 of medium into seven 1g.10gb, then remove its GPUs.
cp "$D/topology.yaml" orig.yaml
sed '/^- name: medium/a\  migByGPU: {"0": [1g.10gb, 1g.10gb, 1g.10gb, 1g.10gb, 1g.10gb, 1g.10gb, 1g.10gb]}' \
	orig.yaml >repart.yaml
sed '/^- name: medium/,/^- name/ s/^  gpus: 4/  gpus: 0/' orig.yaml >gone.yaml
medium_state() {
	k get node medium -o json | jq -r '([.metadata.labels | to_entries[] | select(.key | startswith("nvidia.com/mig-"))
		| select(.key | endswith(".count")) | "\(.key)=\(.value)"] | sort | join(" ")),
		([.status.allocatable | to_entries[] | select(.key | startswith("nvidia.com/")) | "\(.key)=\(.value)"] | sort | join(" ")),
		(.metadata.labels["nvidia.com/gpu.present"] // "no gpu.present label")'
	slices | grep '^medium' || echo "no medium slice"
}

check_output 're-partitioned: labels, resources and devices follow after one cycle' \
	'cp repart.yaml "$D/topology.yaml" && cycle medium "$D/topology.yaml" && medium_state' <<'EOF'
nvidia.com/mig-1g.10gb.count=10 nvidia.com/mig-2g.20gb.count=9
nvidia.com/mig-1g.10gb=10 nvidia.com/mig-2g.20gb=9
true
medium 19 mig
EOF

check 'no device of the old layout of GPU 0 is left' \
	'test "$(k get resourceslice medium-0.gpu.canhazgpu.dev -o json | jq "[.spec.devices[].name | select(startswith(\"gpu-0-mig-2g\"))] | length")" = 0'

check_output 'GPUs removed: every GPU label, resource and slice goes' \
	'cp gone.yaml "$D/topology.yaml" && cycle medium "$D/topology.yaml" && medium_state' <<'EOF'


no gpu.present label
no medium slice
EOF

cat >impossible.yaml <<'EOF'
nodes:
- name: medium
  gpus: 1
  mig: [4g.40gb, 4g.40gb]
EOF
check_output 'restored; then an impossible layout publishes nothing and the last state stays' \
	'cp orig.yaml "$D/topology.yaml" && cycle medium "$D/topology.yaml" &&
	 { k8shazgpu-nodeagent -1 -N medium -t impossible.yaml 2>err; echo "exit $?"; } &&
	 grep -c "probe failed" err && medium_state' <<'EOF'
exit 1
1
nvidia.com/mig-1g.10gb.count=4 nvidia.com/mig-2g.20gb.count=12
nvidia.com/mig-1g.10gb=4 nvidia.com/mig-2g.20gb=12
true
medium 16 mig
EOF

# A live probe whose nvidia-smi prints garbage publishes nothing either.
cat >nvidia-smi <<'EOF'
#!/bin/sh
echo "this is not a csv line"
EOF
chmod +x nvidia-smi
check_output 'garbage from nvidia-smi leaves the published state in place' \
	'{ k8shazgpu-nodeagent -1 -N l4 -- -s ./nvidia-smi 2>err; echo "exit $?"; } &&
	 k get node l4 -o jsonpath="{.metadata.labels.nvidia\.com/gpu\.product} {.status.allocatable.nvidia\.com/gpu}{\"\\n\"}"' <<'EOF'
exit 1
NVIDIA-L4 2
EOF

# the sim serves GPUNodes (k8shazgpu-sim up applies their CRDs): the
# node, its slice's write skipped, and its two GPUNodes are unchanged
check_output 'a second cycle with nothing changed rewrites no slice' \
	'cycle small "$D/topology.yaml" && k8shazgpu-nodeagent -1 -N small -t "$D/topology.yaml" 2>&1 | sed "s/.*;//"' <<'EOF'
 0 writes, 4 unchanged (status 0)
EOF
check_output 'the node-exporter textfile of a cycle' \
	'mkdir -p tf && k8shazgpu-nodeagent -1 -N l4 -t "$D/topology.yaml" -T tf 2>/dev/null &&
	 grep -v "^#" tf/k8shazgpu.prom | sed "s/uuid=\"[^\"]*\"/uuid=U/" | sort -u' <<'EOF'
k8shazgpu_gpu_ecc_errors{node="l4",uuid=U,index="0",mig=""} 0
k8shazgpu_gpu_ecc_errors{node="l4",uuid=U,index="1",mig=""} 0
k8shazgpu_gpu_health{node="l4",uuid=U,index="0",mig=""} 0
k8shazgpu_gpu_health{node="l4",uuid=U,index="1",mig=""} 0
k8shazgpu_gpu_memory_total_mib{node="l4",uuid=U,index="0",mig=""} 23034
k8shazgpu_gpu_memory_total_mib{node="l4",uuid=U,index="1",mig=""} 23034
k8shazgpu_gpu_memory_used_mib{node="l4",uuid=U,index="0",mig=""} 0
k8shazgpu_gpu_memory_used_mib{node="l4",uuid=U,index="1",mig=""} 0
k8shazgpu_gpu_temperature_celsius{node="l4",uuid=U,index="0",mig=""} 30
k8shazgpu_gpu_temperature_celsius{node="l4",uuid=U,index="1",mig=""} 30
k8shazgpu_gpu_utilization_percent{node="l4",uuid=U,index="0",mig=""} 0
k8shazgpu_gpu_utilization_percent{node="l4",uuid=U,index="1",mig=""} 0
EOF

# The agent owns only what it applied. Keys under both of its prefixes
# that other tools set (the GPU Operator, the MIG manager, another tool's
# annotation, each its own field manager) stay, exactly, across cycles,
# while a profile removed from the topology takes its labels and resource
# with it: ownership comes from managedFields, never from a prefix.
k label node medium --field-manager=gpu-operator nvidia.com/gpu.deploy.driver=true >/dev/null
k label node medium --field-manager=mig-manager nvidia.com/mig.config=all-1g.10gb >/dev/null
k annotate node medium --field-manager=other-tool agentaflow.gpu/foreign=x >/dev/null
k patch node medium --subresource=status --type=merge --field-manager=device-plugin \
	-p '{"status":{"capacity":{"nvidia.com/gpu.shared":"2"},"allocatable":{"nvidia.com/gpu.shared":"2"}}}' >/dev/null
sed '/^- name: medium/,/^- name/ s/^  mig: .*/  mig: [1g.10gb, 1g.10gb, 1g.10gb, 1g.10gb, 1g.10gb, 1g.10gb, 1g.10gb]/' \
	orig.yaml >all-1g.yaml
# foreign: the four keys, their values and the field managers owning them
foreign() {
	k get node medium -o json --show-managed-fields | jq -r '
	def owners($top; $part; $key): [.metadata.managedFields[]
		| select(.fieldsV1["f:" + $top]["f:" + $part]["f:" + $key] != null) | .manager] | sort | join(",");
	(["nvidia.com/gpu.deploy.driver", "nvidia.com/mig.config"][] as $key
		| "\($key)=\(.metadata.labels[$key]) (\(owners("metadata"; "labels"; $key)))"),
	("agentaflow.gpu/foreign" as $key
		| "\($key)=\(.metadata.annotations[$key]) (\(owners("metadata"; "annotations"; $key)))"),
	("nvidia.com/gpu.shared" as $key
		| "\($key)=\(.status.allocatable[$key]) (\(owners("status"; "allocatable"; $key)))")'
}
cycles() { cycle medium "$1" && cycle medium "$1" && cycle medium "$1"; }

check_output 'foreign keys and resources under nvidia.com/ and agentaflow.gpu/ are kept across cycles' \
	'cycles "$D/topology.yaml" && foreign && medium_state' <<'EOF'
nvidia.com/gpu.deploy.driver=true (gpu-operator)
nvidia.com/mig.config=all-1g.10gb (mig-manager)
agentaflow.gpu/foreign=x (other-tool)
nvidia.com/gpu.shared=2 (device-plugin)
nvidia.com/mig-1g.10gb.count=4 nvidia.com/mig-2g.20gb.count=12
nvidia.com/gpu.shared=2 nvidia.com/mig-1g.10gb=4 nvidia.com/mig-2g.20gb=12
true
medium 16 mig
EOF

check_output 'a profile removed: our 2g.20gb labels and resource go, the foreign keys stay' \
	'cp all-1g.yaml "$D/topology.yaml" && cycles "$D/topology.yaml" && foreign && medium_state &&
	 k get node medium -o json | jq -r "[.metadata.labels | keys[] | select(startswith(\"nvidia.com/mig-2g\"))] | length"' <<'EOF'
nvidia.com/gpu.deploy.driver=true (gpu-operator)
nvidia.com/mig.config=all-1g.10gb (mig-manager)
agentaflow.gpu/foreign=x (other-tool)
nvidia.com/gpu.shared=2 (device-plugin)
nvidia.com/mig-1g.10gb.count=28
nvidia.com/gpu.shared=2 nvidia.com/mig-1g.10gb=28
true
medium 28 mig
0
EOF

# someone else applies gpu.present too: a key we applied stays ours, and
# goes with the GPUs, though another field manager shares it
check_output 'a key we applied goes when stale, though another writer applied it too' \
	'echo "{\"apiVersion\":\"v1\",\"kind\":\"Node\",\"metadata\":{\"name\":\"medium\",\"labels\":{\"nvidia.com/gpu.present\":\"true\"}}}" |
	 k apply --server-side --field-manager=someone -f - >/dev/null &&
	 k get node medium -o json --show-managed-fields | jq -r "[.metadata.managedFields[]
		| select(.fieldsV1[\"f:metadata\"][\"f:labels\"][\"f:nvidia.com/gpu.present\"] != null) | .manager]
		| map(select(. == \"someone\" or . == \"k8shazgpu-nodeagent\")) | sort | join(\",\")" &&
	 cp gone.yaml "$D/topology.yaml" && cycles "$D/topology.yaml" && foreign && medium_state' <<'EOF'
k8shazgpu-nodeagent,someone
nvidia.com/gpu.deploy.driver=true (gpu-operator)
nvidia.com/mig.config=all-1g.10gb (mig-manager)
agentaflow.gpu/foreign=x (other-tool)
nvidia.com/gpu.shared=2 (device-plugin)

nvidia.com/gpu.shared=2
no gpu.present label
no medium slice
EOF

cp orig.yaml "$D/topology.yaml"
check_output 'restored: our labels back, the foreign ones never touched' \
	'cycle medium "$D/topology.yaml" && foreign && medium_state' <<'EOF'
nvidia.com/gpu.deploy.driver=true (gpu-operator)
nvidia.com/mig.config=all-1g.10gb (mig-manager)
agentaflow.gpu/foreign=x (other-tool)
nvidia.com/gpu.shared=2 (device-plugin)
nvidia.com/mig-1g.10gb.count=4 nvidia.com/mig-2g.20gb.count=12
nvidia.com/gpu.shared=2 nvidia.com/mig-1g.10gb=4 nvidia.com/mig-2g.20gb=12
true
medium 16 mig
EOF
k label node medium nvidia.com/gpu.deploy.driver- nvidia.com/mig.config- >/dev/null
k annotate node medium agentaflow.gpu/foreign- >/dev/null
k patch node medium --subresource=status --type=json -p '[{"op": "remove", "path": "/status/capacity/nvidia.com~1gpu.shared"},
	{"op": "remove", "path": "/status/allocatable/nvidia.com~1gpu.shared"}]' >/dev/null
# --- health: -H serves /healthz at once and /readyz once a cycle was
# published, within three intervals; a node that cannot be written (it
# does not exist) is never ready. Stopped, nothing of it is left.
HN=t9300-health
cat >health.yaml <<EOF
nodes:
- {name: $HN, gpus: 1, product: NVIDIA-L4, memoryMiB: 23034}
EOF
k delete node "$HN" --ignore-not-found >/dev/null 2>&1
hport=$(free_port)
prog=k8shazgpu-nodeagent
mkdir hstate htmp
health_stop() {
	[ ! -f "$SCRATCH/agent.pid" ] || kill -TERM "$(cat "$SCRATCH/agent.pid")" 2>/dev/null
	k delete node "$HN" --ignore-not-found >/dev/null 2>&1
}
trap health_stop EXIT
TMPDIR=$SCRATCH/htmp setsid k8shazgpu-nodeagent -i 1 -N "$HN" -t health.yaml -H "127.0.0.1:$hport" \
	>/dev/null 2>agent.err &
echo $! >agent.pid
get() { curl -s -o body -w '%{http_code} ' "http://127.0.0.1:$hport$1" && cat body; }
answers() { [ "$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$hport$1")" = "$2" ]; }
check_output '/healthz answers 200 while it runs' 'eventually 20 answers /healthz 200 && get /healthz' <<'EOF'
200 ok
EOF
check_output 'no cycle published (the node does not exist): /readyz 503; the readings are written all the same' \
	'eventually 20 grep -q "nodes \"$HN\" not found" agent.err && sleep 1 && get /readyz; ls htmp/$prog.*/' <<'EOF'
503 not ready: no cycle finished yet
metrics
EOF
check_output 'a cycle published: /readyz 200, the ready file in the state directory it made' \
	'k8shazgpu-sim nodes health.yaml | claim-make -a >/dev/null && eventually 20 answers /readyz 200 && get /readyz && ls htmp/$prog.*/' <<'EOF'
200 ok
metrics
ready
EOF
check_output '/metrics: the device readings gpu-probe -P wrote, as the PrometheusRule reads them' \
	'get /metrics | sed "s/uuid=\"GPU-[0-9a-f-]*\"/uuid=U/" | grep "^200\|^k8shazgpu_gpu_\(health\|temperature_celsius\){"' <<'EOF'
200 # HELP k8shazgpu_gpu_memory_total_mib Device memory, MiB.
k8shazgpu_gpu_temperature_celsius{node="t9300-health",uuid=U,index="0",mig=""} 30
k8shazgpu_gpu_health{node="t9300-health",uuid=U,index="0",mig=""} 0
EOF
check_output 'TERM: the agent, its server and the directory it made are gone' \
	'pgid=$(cat agent.pid); kill -TERM "$pgid"; rm agent.pid
	 eventually 20 sh -c "! ps -o pid= -g $pgid >/dev/null" && echo gone; ls -d htmp/$prog.* 2>/dev/null; curl -s "http://127.0.0.1:$hport/healthz" || echo refused' <<'EOF'
gone
refused
EOF
check_output '$K8SHAZGPU_STATE_DIR keeps the ready file; a stale one is no cycle of this run; with -T, metrics links to its file (none: the probe of an unknown node fails)' \
	'touch hstate/ready; mkdir tdir
	 K8SHAZGPU_STATE_DIR=$SCRATCH/hstate K8SHAZGPU_HEALTH_ADDR=127.0.0.1:$hport setsid k8shazgpu-nodeagent -i 1 -N nowhere -t health.yaml -T "$SCRATCH/tdir" >/dev/null 2>&1 &
	 echo $! >agent.pid; eventually 20 answers /healthz 200 && sleep 1 && get /readyz; ls hstate tdir
	 [ "$(readlink hstate/metrics)" = "$SCRATCH/tdir/k8shazgpu.prom" ] && echo linked; get /metrics' <<'EOF'
503 not ready: no cycle finished yet
hstate:
metrics

tdir:
linked
503 no metrics yet
EOF
check_output 'a bad -H is refused with 2, naming it' \
	'for a in localhost:80 1.2.3.4 1.2.3.4:x 1.2.3.4:80:1; do must_fail 2 k8shazgpu-nodeagent -H $a 2>&1; done' <<'EOF'
k8shazgpu-nodeagent: -H: not an IPv4 address and port: localhost:80
k8shazgpu-nodeagent: -H: not an IPv4 address and port: 1.2.3.4
k8shazgpu-nodeagent: -H: not an IPv4 address and port: 1.2.3.4:x
k8shazgpu-nodeagent: -H: not an IPv4 address and port: 1.2.3.4:80:1
EOF
check_output '-1 with $K8SHAZGPU_STATE_DIR touches the ready file, no server' \
	'pgid=$(cat agent.pid); kill -TERM "$pgid"; rm agent.pid; eventually 20 sh -c "! ps -o pid= -g $pgid >/dev/null"
	 rm -rf hstate/*; K8SHAZGPU_STATE_DIR=$SCRATCH/hstate K8SHAZGPU_HEALTH_ADDR=127.0.0.1:$hport k8shazgpu-nodeagent -1 -N "$HN" -t health.yaml 2>/dev/null
	 echo "status $?"; ls hstate; curl -s "http://127.0.0.1:$hport/healthz" || echo refused' <<'EOF'
status 0
metrics
ready
refused
EOF
done_testing
