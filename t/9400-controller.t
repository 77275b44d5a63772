#!/bin/sh
# The controller on the real control plane: 200 GPUWorkloads over 20 KWOK
# nodes all Running with no device double-booked (checked from the API),
# retries on the backoff schedule, refusals naming the field, a strategy
# switched at run time, a controller killed mid-flight, deletion, metrics,
# and the CLI.
. "$(dirname "$0")/lib.sh"
need_cluster
NS=t9400

fleet_slices() {
	k get resourceslices -o json | jq -r '.items[] | select(.spec.nodeName // "" | startswith("fleet-")) | .metadata.name'
}

# Everything the test makes goes, and is waited for until really gone: the
# pods first (with their namespace), while their nodes still run them, then
# the nodes and, owned by them, their ResourceSlices. A run right after
# another on the same cluster so starts from the same state.
cleanup() {
	cl_rc=0
	kill_groups "$SCRATCH/ctl.pids"
	gone 30 "the controller" ctl_running || cl_rc=1
	ns_deleted "$NS" || cl_rc=1
	k delete nodes -l pool=fleet --wait=false >/dev/null 2>&1
	gone 60 "the pool=fleet nodes" k get nodes -l pool=fleet -o name || cl_rc=1
	gone 60 "the ResourceSlices of the fleet nodes" fleet_slices || cl_rc=1
	k delete configmap -n canhazgpu-system k8shazgpu-config --ignore-not-found >/dev/null 2>&1
	return $cl_rc
}

# Twenty nodes of ten whole GPUs each, labelled pool=fleet.
cat >fleet.yaml <<'EOF'
defaults: {product: NVIDIA-A100-SXM4-80GB, memoryMiB: 81920, computeCapability: "8.0",
  driverVersion: "550.90.07", cudaVersion: "12.4", cpu: "128", memory: 1Ti, pods: "110",
  labels: {pool: fleet}}
nodes:
- {name: fleet, count: 20, gpus: 10}
EOF

cleanup || { echo "Bail out! t9400: what an earlier run left is not gone"; exit 1; }
trap 'cleanup || exit 1' EXIT
trap 'exit 1' INT TERM
crd_apply "$TOP/manifests/crds/gpuworkloads.yaml"
eventually 30 k get gpuworkloads -A
k create namespace "$NS" >/dev/null
k8shazgpu-sim nodes fleet.yaml | claim-make -a >/dev/null
fleet_ready() { [ "$(k get nodes -l pool=fleet -o json | jq '[.items[] | select(any(.status.conditions[]?; .type == "Ready" and .status == "True"))] | length')" = 20 ]; }
eventually 60 fleet_ready
i=0
while [ $i -lt 20 ]; do
	k8shazgpu-nodeagent -1 -N fleet-$i -t fleet.yaml 2>/dev/null
	i=$((i + 1))
done

check_output 'the fleet publishes 200 GPUs' \
	'k8shazgpu nodes | awk "/^fleet/ {n++; d += \$3; f += \$4} END {print n, d, f}"' <<'EOF'
20 200 200
EOF

# The controller, every second, tolerating the KWOK taint.
port=$(free_port)
export K8SHAZGPU_JOB_TOLERATIONS='[{"key":"kwok.x-k8s.io/node","operator":"Exists","effect":"NoSchedule"}]'
# In a process group of its own, so a crash can take all of it, as a
# container's would.
# Its checks are timed (backoff sampled every 0.5 s); under VALGRIND=1 its
# tools run natively here, and under valgrind in t/0600 and t/9300.
ctl_path=$(printf '%s' "$PATH" | sed "s|$BUILD/valgrind:||")
start_controller() {
	PATH=$ctl_path setsid k8shazgpu-controller -i 1 -d "$SCRATCH/state" -l 127.0.0.1:$port >/dev/null 2>>"$SCRATCH/controller.log" &
	echo $! >"$SCRATCH/ctl.pid"
	echo $! >>"$SCRATCH/ctl.pids"
}
start_controller

# NAME [JSON spec]: a GPUWorkload whose pods stay Running (KWOK would
# complete a Job's pod after a few seconds otherwise).
workload() {
	jq -n -c --arg name "$1" --arg ns "$NS" --argjson spec "${2:-{\}}" '{apiVersion: "canhazgpu.dev/v1alpha1",
		kind: "GPUWorkload", metadata: {name: $name, namespace: $ns},
		spec: ({gpuCount: 1, nodeSelector: {pool: "fleet"},
			podTemplate: {metadata: {annotations: {"pod-complete.stage.kwok.x-k8s.io/delay": "1h",
					"pod-complete.stage.kwok.x-k8s.io/jitter-delay": "1h"}},
				spec: {containers: [{name: "main", image: "registry.invalid/none:0"}]}}} + $spec)}'
}
phase_count() {
	k get gpuworkloads -n "$NS" -o json | jq --arg p "$1" '[.items[] | select(.status.phase == $p)] | length'
}
all_running() { [ "$(phase_count Running)" -ge "$1" ]; }

i=0
while [ $i -lt 200 ]; do
	workload "w$i"
	i=$((i + 1))
done | claim-make -a >/dev/null

check 'all 200 GPUWorkloads reach Running' 'eventually 240 all_running 200'

# From the API: every running pod of a workload, its node and devices.
pods_devices() {
	k get pods -n "$NS" -l canhazgpu.dev/workload -o json | jq -r '.items[] | select(.status.phase == "Running")
		| .spec.nodeName as $n | (.spec.containers[0].env[] | select(.name == "NVIDIA_VISIBLE_DEVICES") | .value
		| split(","))[] | "\($n) \(.)"'
}
check_output 'no device is held by two pods; 10 per node' \
	'pods_devices >pd; echo "$(wc -l <pd) pods, $(sort -u pd | wc -l) distinct devices";
	 awk "{print \$1}" pd | sort | uniq -c | awk "{print \$1}" | sort -u' <<'EOF'
200 pods, 200 distinct devices
10
EOF

check_output 'the devices are those the nodes publish' \
	'k get nodes -l pool=fleet -o json | jq -r ".items[] | .metadata.name as \$n
		| .metadata.annotations[\"agentaflow.gpu/devices\"] | fromjson | .[] | \"\(\$n) \(.uuid)\"" | sort >published &&
	 sort pd | comm -23 - published | wc -l' <<'EOF'
0
EOF

check_output 'status names node, devices, strategy and the Job' \
	'k get gpuworkload w0 -n "$NS" -o json | jq -r ".status | [.phase, (.assignedNode | startswith(\"fleet-\")),
		(.devices | length), .strategy, .jobName, .requestedGPUs] | map(tostring) | join(\" \")"' <<'EOF'
Running true 1 least_utilized w0 1
EOF

check_output 'k8shazgpu workloads lists them' \
	'k8shazgpu -n "$NS" workloads | awk "NR == 1 || \$2 == \"w0\" {print \$1, \$2, \$3, \$4}"' <<'EOF'
NAMESPACE NAME PHASE GPUS
t9400 w0 Running 1
EOF

# A workload no node can hold: retried on the backoff schedule, then Failed.
workload toobig '{"gpuCount": 11, "retryPolicy": {"maxRetries": 2, "backoffSeconds": 2}}' | claim-make -a >/dev/null
# seen prints phase and retries, and keeps the status's retry time and
# message in timed.
seen() {
	k get gpuworkload toobig -n "$NS" -o json | jq '.status' >status.json &&
	jq -r '"\(.phase) \(.retries)"' status.json &&
	jq -c '{retries, nextRetryTime, message}' status.json >>timed
}
check_output 'unschedulable: Pending with retry 1, then 2, then Failed with the reason' '
	: >trail; : >timed; n=0
	while [ $n -lt 60 ]; do seen >>trail; tail -n 1 trail | grep -q ^Failed && break; sleep 0.5; n=$((n + 1)); done
	uniq trail | grep -v "^null" ; k get gpuworkload toobig -n "$NS" -o jsonpath="{.status.message}{\"\\n\"}"' <<'EOF'
Pending 1
Pending 2
Failed 2
unschedulable after 2 retries: no node matching node selector pool=fleet has 11 free healthy GPUs
EOF

# retry N: the delay its message names and the time it was due, both as the
# controller wrote them (whole seconds), so no sampling or load plays a part.
retry() {
	jq -r "select(.retries == $1 and .nextRetryTime != null)
		| [(.nextRetryTime | fromdate), (.message | capture(\"in (?<d>[0-9]+)s\").d)] | @tsv" timed | head -n 1
}
check 'the retry waits follow the backoff: 2 s then 4 s, each times 0.5 to 1.5' '
	set -- $(retry 1) $(retry 2) &&
	# $1 retry 1 due, $2 its delay; $3 retry 2 due, $4 its delay
	test "$2" -ge 1 && test "$2" -le 3 && test "$4" -ge 2 && test "$4" -le 6 &&
	# retry 2 was decided (due time minus its delay) once retry 1 was due
	test $(($3 - $4)) -ge "$1"'

workload zero '{"gpuCount": 0}' | claim-make -a >/dev/null
workload badstrat '{"schedulingStrategy": "fastest"}' | claim-make -a >/dev/null
workload nomig '{"gpuRequirements": {"migProfile": "7g.80gb"}, "retryPolicy": {"maxRetries": 1, "backoffSeconds": 1}}' |
	claim-make -a >/dev/null
failed() { [ "$(k get gpuworkload "$1" -n "$NS" -o jsonpath='{.status.phase}')" = Failed ]; }
check_output 'bad specs are refused with a message naming the field; the controller goes on' '
	eventually 30 failed zero && eventually 30 failed badstrat && eventually 40 failed nomig &&
	for w in zero badstrat nomig; do k get gpuworkload $w -n "$NS" -o jsonpath="{.status.message}{\"\\n\"}"; done' <<'EOF'
spec.gpuCount must be a whole number from 1 to 64, got 0
spec.schedulingStrategy: unknown strategy "fastest"
unschedulable after 1 retry: no node matching node selector pool=fleet has 1 free 7g.80gb device
EOF

k delete gpuworkloads -n "$NS" toobig zero badstrat nomig >/dev/null

# Free ten GPUs: deleting a workload deletes its Job (and pod).
jobs_gone() { ! k get job w1 -n "$NS" >/dev/null 2>&1; }
check 'deleting a workload deletes its Job' \
	'i=0; while [ $i -lt 10 ]; do echo w$i; i=$((i + 1)); done | xargs k8shazgpu-sim kubectl delete gpuworkload -n "$NS" >/dev/null &&
	 eventually 60 jobs_gone'

check_output 'the strategy switched at run time is used from the next cycle' \
	'k8shazgpu strategy best_fit && workload bf | claim-make -a >/dev/null && eventually 30 all_running 191 &&
	 k get gpuworkload bf -n "$NS" -o jsonpath="{.status.strategy}{\"\\n\"}"' <<'EOF'
strategy set to best_fit; the controller uses it from its next cycle
best_fit
EOF

# Kill the controller while it writes nine new workloads, then restart it.
check_output 'killed mid-flight and restarted: no duplicate Job, no workload lost' '
	i=0; while [ $i -lt 9 ]; do workload k$i; i=$((i + 1)); done | claim-make -a >/dev/null
	n=0; until k get jobs -n "$NS" -o name | grep -q "/k"; do n=$((n + 1)); [ $n -lt 200 ] || break; sleep 0.05; done
	kill -s KILL -- "-$(cat "$SCRATCH/ctl.pid")" || exit 1
	sleep 1; start_controller
	eventually 60 all_running 200 &&
	k get jobs -n "$NS" -o json | jq -r "[.items[].metadata.ownerReferences[0].name] | \"\(length) jobs, \(unique | length) workloads\"" &&
	k get gpuworkloads -n "$NS" -o json | jq -r "[.items[] | select(.status.phase != \"Running\")] | length"' <<'EOF'
200 jobs, 200 workloads
0
EOF

check 'no device double-booked after the restart either' \
	'pods_devices >pd2 && test "$(wc -l <pd2)" = 200 && test "$(sort -u pd2 | wc -l)" = 200'

metric() { curl -s "http://127.0.0.1:$port/metrics" | grep "^$1" ; }
running200() { metric agentaflow_workloads_running | grep -q " 200$"; }
# the real node (t/9700), when the cluster has one, publishes 4 GPUs and 4
# MIG devices too
REAL_DEVICES=0
[ ! -f "$K8SHAZGPU_SIM_DIR/node-state" ] || REAL_DEVICES=8
check_output 'metrics in Prometheus text' '
	eventually 20 running200; metric agentaflow_gpu_total; metric agentaflow_workloads_running;
	metric agentaflow_workloads_pending; metric "warp_gpuworkload_failed_total{reason=\"invalid\"}";
	metric "warp_gpuworkload_failed_total{reason=\"unschedulable\"}"' <<EOF
agentaflow_gpu_total $((248 + REAL_DEVICES))
agentaflow_workloads_running 200
agentaflow_workloads_pending 0
warp_gpuworkload_failed_total{reason="invalid"} 2
warp_gpuworkload_failed_total{reason="unschedulable"} 2
EOF

# Placements whose Job the kill cut short are not counted: between the one
# before the kill (bf) and all ten.
check 'scheduled_total counts best_fit placements; the reconcile histogram fills' '
	n=$(metric "warp_gpuworkload_scheduled_total{strategy=\"best_fit\"}" | awk "{print \$2}")
	c=$(metric warp_gpuworkload_reconcile_duration_seconds_count | awk "{print \$2}")
	test "$n" -ge 1 && test "$n" -le 10 && test "$c" -ge 1'

check_output 'healthz and readyz' \
	'curl -s "http://127.0.0.1:$port/healthz"; curl -s "http://127.0.0.1:$port/readyz"' <<'EOF'
ok
ok
EOF

# One of its processes ending ends the controller at once (it sleeps on
# SIGCHLD, polling nothing), and takes every other process of it along.
ctl=$(cat "$SCRATCH/ctl.pid")
live() { ps -o stat=,comm= -s "$1" | awk '$1 !~ /^Z/ { print $2 }' | sort | tr '\n' ' '; }
check_output 'a process that ends takes the controller and all its processes with it' '
	kill -s TERM "$(pgrep -s "$ctl" -x sched-bind)" || exit 1
	eventually 20 test -z "$(live "$ctl")"
	grep "process of the controller ended" "$SCRATCH/controller.log" | tail -n 1
	echo "left: $(live "$ctl")"' <<'EOF'
k8shazgpu-controller: a process of the controller ended (status 143); stopping
left: 
EOF
done_testing
