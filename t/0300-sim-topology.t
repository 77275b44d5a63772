#!/bin/sh
# k8shazgpu-sim reads topology files without a cluster: the Node objects
# they make, and the exact refusal of layouts no GPU can hold.
. "$(dirname "$0")/lib.sh"

command -v yaml2json >/dev/null 2>&1 || skip_all "yaml2json not built"

# the keys the simulator sets itself, not those the GPUs add
own='def own: with_entries(select(.key | test("^(nvidia.com|agentaflow.gpu)/") | not));'
caps='jq -r "[.metadata.name, (.status.capacity | to_entries | map(\"\(.key)=\(.value)\") | join(\" \"))] | join(\": \")"'

check_output 'seed-mig: small has 28 x 1g.10gb, medium 12 x 2g.20gb and 4 x 1g.10gb' \
	"k8shazgpu-sim nodes '$TOP/manifests/sim/seed-mig.yaml' | $caps" <<'EOF'
small: cpu=64 memory=512Gi pods=110 nvidia.com/mig-1g.10gb=28
medium: cpu=64 memory=512Gi pods=110 nvidia.com/mig-2g.20gb=12 nvidia.com/mig-1g.10gb=4
EOF

check_output 'capacity equals allocatable' \
	"k8shazgpu-sim nodes '$TOP/manifests/sim/seed-mig.yaml' | jq '.status.capacity == .status.allocatable'" <<'EOF'
true
true
EOF

check_output 'a KWOK node: annotation, labels, taint' \
	"k8shazgpu-sim nodes '$TOP/manifests/sim/seed-mig.yaml' | head -n 1 | jq -c '$own (.metadata.annotations | own), (.metadata.labels | own), .spec.taints'" <<'EOF'
{"kwok.x-k8s.io/node":"fake"}
{"type":"kwok","kubernetes.io/hostname":"small","kubernetes.io/os":"linux","kubernetes.io/arch":"amd64"}
[{"key":"kwok.x-k8s.io/node","value":"fake","effect":"NoSchedule"}]
EOF

check_output 'count: 4 makes h100-0..3 with 8 whole GPUs each' \
	"k8shazgpu-sim nodes '$TOP/manifests/sim/h100x8.yaml' | $caps" <<'EOF'
h100-0: cpu=96 memory=1Ti pods=110 nvidia.com/gpu=8
h100-1: cpu=96 memory=1Ti pods=110 nvidia.com/gpu=8
h100-2: cpu=96 memory=1Ti pods=110 nvidia.com/gpu=8
h100-3: cpu=96 memory=1Ti pods=110 nvidia.com/gpu=8
EOF

cat >mixed.yaml <<'EOF'
defaults:
  memoryMiB: 81559
  cpu: 8
  labels: {zone: a}
nodes:
- name: mixed
  gpus: 4
  instanceType: p5.48xlarge
  mig: [7g.80gb]
  migByGPU: {"0": [3g.40gb, 3g.40gb], "3": []}
  labels: {rack: "7"}
  annotations: {note: hi}
EOF
check_output 'migByGPU overrides mig per GPU; labels merge with defaults' \
	"k8shazgpu-sim nodes mixed.yaml | $caps && k8shazgpu-sim nodes mixed.yaml | jq -c '$own (.metadata.labels | own), (.metadata.annotations | own)'" <<'EOF'
mixed: cpu=8 memory=256Gi pods=110 nvidia.com/mig-3g.40gb=2 nvidia.com/mig-7g.80gb=2 nvidia.com/gpu=1
{"zone":"a","rack":"7","type":"kwok","kubernetes.io/hostname":"mixed","kubernetes.io/os":"linux","kubernetes.io/arch":"amd64","node.kubernetes.io/instance-type":"p5.48xlarge"}
{"note":"hi","kwok.x-k8s.io/node":"fake"}
EOF

check_output 'the GPUs add GPU feature discovery and AgentaFlow labels' \
	"k8shazgpu-sim nodes '$TOP/manifests/sim/seed-mig.yaml' | jq -r '[.metadata.name, .metadata.labels[\"nvidia.com/mig.strategy\"], .metadata.labels[\"nvidia.com/gpu.product\"], .metadata.labels[\"agentaflow.gpu/count\"]] | join(\" \")'" <<'EOF'
small mixed NVIDIA-H200 4
medium mixed NVIDIA-H200 4
EOF

check 'the shipped topologies validate' \
	"k8shazgpu-sim validate '$TOP/manifests/sim/seed-mig.yaml' && k8shazgpu-sim validate '$TOP/manifests/sim/h100x8.yaml'"

cat >bad.yaml <<'EOF'
defaults: {memoryMiB: 71680}
nodes:
- name: ok
  gpus: 1
  mig: [1g.10gb]
- name: x
  gpus: 2
  mig: [3g.40gb, 3g.40gb, 3g.40gb]
  migByGPU: {"1": [4g.40gb, 3g.20gb], "2": []}
- name: y
  gpus: 1
  mig: [2g.20gb, huge]
- name: Bad_Name
EOF
check_output 'an impossible layout is refused, every problem named' \
	'k8shazgpu-sim validate bad.yaml 2>&1; echo "exit $?"' <<'EOF'
k8shazgpu-sim: bad.yaml: node "x": migByGPU "2": no such GPU (the node has 2)
k8shazgpu-sim: bad.yaml: node "x" gpu 0: MIG slices 9 > 7
k8shazgpu-sim: bad.yaml: node "x" gpu 0: MIG memory 120gb > 70gb
k8shazgpu-sim: bad.yaml: node "y" gpu 0: unknown MIG profile "huge"
k8shazgpu-sim: bad.yaml: node 3: name must be a lowercase DNS label
exit 1
EOF

cat >memory.yaml <<'EOF'
nodes:
- name: z
  gpus: 2
  memoryMiB: 40960
  migByGPU: {"1": [4g.40gb, 3g.20gb]}
EOF
check_output 'MIG memory above the GPU memory is refused' \
	'k8shazgpu-sim validate memory.yaml 2>&1; echo "exit $?"' <<'EOF'
k8shazgpu-sim: memory.yaml: node "z" gpu 1: MIG memory 60gb > 40gb
exit 1
EOF

check_output 'nodes prints nothing for a refused file' \
	'k8shazgpu-sim nodes memory.yaml 2>/dev/null; echo "exit $?"' <<'EOF'
exit 1
EOF

check 'a missing file is refused with 1' \
	'must_fail 1 k8shazgpu-sim validate nosuch.yaml 2>err && grep -qx "k8shazgpu-sim: nosuch.yaml: cannot read topology file" err'

check 'no arguments is a usage error' 'must_fail 2 k8shazgpu-sim 2>/dev/null'

check 'env without a cluster fails and says so' \
	'export K8SHAZGPU_SIM_DIR=$SCRATCH/none; must_fail 1 k8shazgpu-sim env 2>err && grep -q "not up" err'

check 'down without a cluster does nothing' \
	'K8SHAZGPU_SIM_DIR=$SCRATCH/none k8shazgpu-sim down && ! test -e $SCRATCH/none'

done_testing
