#!/bin/sh
# sched-queue -A dra on the real control plane: a placed GPUWorkload's Job
# pod claims its devices from a ResourceClaimTemplate the controller wrote,
# and kube-scheduler allocates them. GPUWorkloads pinned to node medium
# (12x 2g.20gb + 4x 1g.10gb) fill the 12 2g.20gb; the next one asks for
# 2g.20gb too, and its claim's firstAvailable falls back to 1g.10gb in
# kube-scheduler itself (no webhook installed). A whole-GPU workload's
# claim gets exactly the device placed, even over a template in the way.
. "$(dirname "$0")/lib.sh"
need_cluster
NS=t9415

cleanup() {
	cl_rc=0
	kill_groups "$SCRATCH/ctl.pids"
	gone 30 "the controller" ctl_running || cl_rc=1
	ns_deleted "$NS" || cl_rc=1
	return $cl_rc
}
cleanup || { echo "Bail out! t9415: what an earlier run left is not gone"; exit 1; }
trap 'cleanup || exit 1' EXIT
trap 'exit 1' INT TERM

check_output 'a mode neither extended nor dra is refused, named where it came from' '
	must_fail 2 sched-queue -A claims 2>err1 && head -1 err1 &&
	(K8SHAZGPU_ALLOCATION=Dra && export K8SHAZGPU_ALLOCATION && must_fail 2 sched-queue -1 2>err2) &&
	head -1 err2' <<'EOF'
sched-queue: -A claims: not extended or dra
sched-queue: K8SHAZGPU_ALLOCATION=Dra: not extended or dra
EOF

crd_apply "$TOP/manifests/crds/gpuworkloads.yaml"
yaml2json "$TOP/manifests/deviceclasses.yaml" | claim-make -a >/dev/null
eventually 30 k get gpuworkloads -A >/dev/null
k create namespace "$NS" >/dev/null

# The sim's node agent publishes medium's devices as a ResourceSlice.
slice_devices() {
	k get resourceslices -o json | jq -r --arg n "$1" '.items[] | select(.spec.nodeName == $n
		and .spec.driver == "gpu.canhazgpu.dev") | .spec.devices[]
		| "\(.name) \(.attributes.profile.string // "-") \(.attributes.uuid.string)"' | sort
}
check_output 'medium publishes 12 2g.20gb and 4 1g.10gb' \
	'eventually 60 slice_devices medium >/dev/null && slice_devices medium >medium.dev &&
	 awk "{print \$2}" medium.dev | sort | uniq -c | awk "{print \$1, \$2}"' <<'EOF'
4 1g.10gb
12 2g.20gb
EOF

# sched-queue itself, in dra mode, in a process group of its own. Its
# checks are timed; under VALGRIND=1 it runs natively, as in t/9400.
ctl_path=$(printf '%s' "$PATH" | sed "s|$BUILD/valgrind:||")
mkdir state
PATH=$ctl_path setsid sched-queue -A dra -n "$NS" -d state -m "$NS/none" \
	>/dev/null 2>>"$SCRATCH/controller.log" 3>&- 4>&- &
echo $! >>"$SCRATCH/ctl.pids"

# NAME NODE [JSON spec]: a GPUWorkload pinned to NODE, tolerating KWOK's
# taint, whose pod stays Running.
workload() {
	jq -n -c --arg name "$1" --arg node "$2" --arg ns "$NS" --argjson spec "${3:-{\}}" '{
		apiVersion: "canhazgpu.dev/v1alpha1", kind: "GPUWorkload",
		metadata: {name: $name, namespace: $ns},
		spec: ({nodeSelector: {"kubernetes.io/hostname": $node},
			podTemplate: {metadata: {annotations: {"pod-complete.stage.kwok.x-k8s.io/delay": "1h",
					"pod-complete.stage.kwok.x-k8s.io/jitter-delay": "1h"}},
				spec: {tolerations: [{key: "kwok.x-k8s.io/node", operator: "Exists", effect: "NoSchedule"}],
					containers: [{name: "main", image: "registry.invalid/none:0"}]}}} + $spec)}'
}
mig='{"gpuRequirements": {"migProfile": "2g.20gb"}}'
running() {
	[ "$(k get gpuworkloads -n "$NS" -o json | jq '[.items[] | select(.status.phase == "Running")] | length')" -ge "$1" ]
}
# claim_of WORKLOAD: the ResourceClaim of its pod, as the pod's status
# names it.
claim_of() {
	k get pods -n "$NS" -l "canhazgpu.dev/workload=$1" -o json |
		jq -r '.items[0].status.resourceClaimStatuses[] | select(.name == "gpus") | .resourceClaimName'
}
# allocation WORKLOAD: "request device" of each result of its claim.
allocation() {
	c=$(claim_of "$1") && [ -n "$c" ] &&
		k get resourceclaim -n "$NS" "$c" -o json |
		jq -r -e '.status.allocation.devices.results | map("\(.request) \(.device)") | join("\n")'
}

i=0
while [ $i -lt 12 ]; do
	workload "m$i" medium "$mig"
	i=$((i + 1))
done | claim-make -a >/dev/null
all_allocated() {
	n=0
	while [ $n -lt 12 ]; do allocation "m$n" >/dev/null 2>&1 || return 1; n=$((n + 1)); done
}
check 'the 12 workloads run, each claim allocated' 'eventually 120 running 12 && eventually 60 all_allocated'

check_output 'kube-scheduler gave them the 12 2g.20gb, one each, by the first subrequest' '
	n=0; while [ $n -lt 12 ]; do allocation m$n; n=$((n + 1)); done >alloc &&
	awk "{print \$1}" alloc | sort | uniq -c | awk "{print \$1, \$2}" &&
	awk "{print \$2}" alloc | sort -u | join - medium.dev | awk "{print \$2}" | sort | uniq -c | awk "{print \$1, \$2}"' <<'EOF'
12 gpus/p0
12 2g.20gb
EOF

check_output 'the pods ask for no nvidia.com/ resources and see no NVIDIA_VISIBLE_DEVICES' '
	k get pods -n "$NS" -o json | jq -c "[.items[].spec.containers[0] | [(.resources.limits // {} | keys[]),
		(.env // [] | .[].name)] | .[] | select(startswith(\"nvidia.com/\") or . == \"NVIDIA_VISIBLE_DEVICES\")],
		([.items[].spec.resourceClaims[0]] | unique_by(.name) | map(.name)), ([.items[].spec.resourceClaims[0].resourceClaimTemplateName] | sort | .[0:2])"' <<'EOF'
[]
["gpus"]
["m0","m1"]
EOF

check_output 'a template per workload, owned by it' "
	k get resourceclaimtemplate -n $NS m0 -o json | jq -c '[.metadata.ownerReferences[0] | .kind, .name, .controller],
		(.spec.spec.devices.requests[0].firstAvailable | map([.name, .deviceClassName, .selectors[0].cel.expression]))'" <<'EOF'
["GPUWorkload","m0",true]
[["p0","mig.canhazgpu.dev","device.attributes[\"gpu.canhazgpu.dev\"].profile == \"2g.20gb\""],["p1","mig.canhazgpu.dev","device.attributes[\"gpu.canhazgpu.dev\"].profile == \"1g.10gb\""]]
EOF

# The thirteenth asks for 2g.20gb as well, naming no fallback: the chain
# is the built-in one, 2g.20gb -> 1g.10gb.
workload m12 medium "$mig" | claim-make -a >/dev/null
check 'the thirteenth runs, its claim allocated' 'eventually 60 running 13 && eventually 60 allocation m12 >/dev/null'
check_output 'its claim got a 1g.10gb from the second subrequest' '
	allocation m12 >a12 && awk "{print \$1}" a12 && awk "{print \$2}" a12 | join - medium.dev | awk "{print \$2}"' <<'EOF'
gpus/p1
1g.10gb
EOF
check_output 'its status says the fallback' "k get gpuworkload -n $NS m12 -o json | jq -r '.status | \"\(.migProfile) \(.fallbackFrom) \(.assignedNode)\"'" <<'EOF'
1g.10gb 2g.20gb medium
EOF

# Whole GPUs: the claim pins the devices placed. A template of the
# workload's name already there, with another spec (immutable), is
# replaced.
jq -n -c --arg ns "$NS" '{apiVersion: "resource.k8s.io/v1", kind: "ResourceClaimTemplate",
	metadata: {name: "g1", namespace: $ns},
	spec: {spec: {devices: {requests: [{name: "old", exactly: {deviceClassName: "gpu.canhazgpu.dev"}}]}}}}' |
	claim-make -a >/dev/null
workload g1 h100 '{"gpuCount": 2}' | claim-make -a >/dev/null
check 'the whole-GPU workload runs, its claim allocated' 'eventually 60 running 14 && eventually 60 allocation g1 >/dev/null'
check_output 'its claim holds exactly the GPUs its status names' '
	k get gpuworkload -n "$NS" g1 -o json | jq -r ".status.devices[]" | sort >placed &&
	slice_devices h100 >h100.dev && allocation g1 >ag &&
	awk "{print \$1}" ag | sort -u && awk "{print \$2}" ag | sort | join - h100.dev | awk "{print \$3}" | sort | cmp - placed && wc -l <placed' <<'EOF'
gpus
2
EOF
check 'the template in the way was replaced, and said so' "
	k get resourceclaimtemplate -n $NS g1 -o json | jq -e '.metadata.ownerReferences[0].name == \"g1\"' >/dev/null &&
	grep -Fqx 'sched-queue: resourceclaimtemplate $NS/g1: its spec cannot change; deleting it to apply it anew' controller.log"

check_output 'the controller said nothing else' "grep -v -e 'deleting it to apply it anew\$' \\
	-e '^sched-queue: strategy least_utilized: [0-9]* placed, 0 waiting for capacity, 0 unschedulable\$' controller.log" <<'EOF'
EOF

k delete gpuworkload -n "$NS" m12 >/dev/null
check 'a workload deleted, its template goes with it' \
	"eventually 60 prints_nothing k get resourceclaimtemplate -n $NS m12 --ignore-not-found -o name"

done_testing
