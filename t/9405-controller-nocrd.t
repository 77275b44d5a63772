#!/bin/sh
# The controller on a cluster that does not serve its GPUWorkload
# resource (the CRD not installed): it says so once, naming the CRD,
# stays unready, and comes up by itself once the CRD is applied. The
# shared cluster keeps its real CRD: sched-queue is pointed at a resource
# of this test's own ($K8SHAZGPU_WORKLOAD_RESOURCE), whose CRD, a copy of
# the real one in another group, is applied midway.
. "$(dirname "$0")/lib.sh"
need_cluster
RES=gpuworkloads.t9405.canhazgpu.dev

cleanup() {
	[ ! -f "$SCRATCH/ctl.pid" ] || kill -- "-$(cat "$SCRATCH/ctl.pid")" 2>/dev/null
	k delete crd "$RES" --ignore-not-found >/dev/null 2>&1
	gone 60 "CRD $RES" k get crd "$RES" --ignore-not-found -o name
}
cleanup || { echo "Bail out! t9405: what an earlier run left is not gone"; exit 1; }
trap 'cleanup || exit 1' EXIT
trap 'exit 1' INT TERM
export K8SHAZGPU_WORKLOAD_RESOURCE=$RES
msg="sched-queue: $RES: the resource is not served (is the CRD installed? kubectl apply -k manifests/)"

check_output 'one pass: the resource named, status 1' \
	'must_fail 1 sched-queue -1 -d . 2>&1' <<EOF
$msg
EOF

port=$(free_port)
# sched-queue alone: the pods scheduler and the alerts have tests of their own
K8SHAZGPU_SCHEDULER_NAME=off K8SHAZGPU_ALERT_SECRET=off \
	setsid k8shazgpu-controller -d "$SCRATCH/state" -l "127.0.0.1:$port" >/dev/null 2>ctl.err &
echo $! >ctl.pid
get() { curl -s -o body -w '%{http_code} ' "http://127.0.0.1:$port$1" && cat body; }
answers() { [ "$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$port$1")" = "$2" ]; }
# three lookups at least (after 0, 1 and 2 s) before the check
check_output 'said once while it waits; /healthz 200, /readyz 503, no ready file' \
	'eventually 20 grep -q "not served" ctl.err && sleep 4 && grep -v "^k8shazgpu-controller: " ctl.err
	 get /healthz; get /readyz; ls state' <<EOF
$msg; trying again until it is
200 ok
503 not ready: no cycle finished yet
EOF

sed 's/canhazgpu\.dev/t9405.canhazgpu.dev/g' "$TOP/manifests/crds/gpuworkloads.yaml" | yaml2json | claim-make -a >/dev/null
# (a new resource's storage may answer 429 for a moment: a retry, said
# and not compared)
check_output 'the CRD applied: it comes up by itself, synced, ready' \
	'eventually 60 answers /readyz 200 && get /readyz && grep -v "^k8shazgpu-controller: \|: retrying in [0-9.]* s$" ctl.err && ls state' <<EOF
200 ok
$msg; trying again until it is
sched-queue: $RES: served now
counters.json
metrics
ready
EOF
done_testing
