#!/bin/sh
# sched-queue whose credentials may not list GPUWorkloads (RBAC answers
# 403 Forbidden): one pass ends at once with 1, the message naming the
# request; without -1 it says so once and keeps trying. A ServiceAccount
# of this test's own gets every right sched-queue lists with but that one.
. "$(dirname "$0")/lib.sh"
need_cluster
NS=t9407
SA="system:serviceaccount:$NS:nobody"

cleanup() {
	[ ! -f "$SCRATCH/sq.pid" ] || kill "$(cat "$SCRATCH/sq.pid")" 2>/dev/null
	k delete clusterrolebinding t9407 --ignore-not-found >/dev/null 2>&1
	k delete clusterrole t9407 --ignore-not-found >/dev/null 2>&1
	ns_deleted "$NS" 120
}
cleanup || { echo "Bail out! t9407: what an earlier run left is not gone"; exit 1; }
trap 'cleanup || exit 1' EXIT
trap 'exit 1' INT TERM
crd_apply "$TOP/manifests/crds/gpuworkloads.yaml"
k create namespace "$NS" >/dev/null &&
	k create serviceaccount nobody -n "$NS" >/dev/null &&
	k create clusterrole t9407 --verb=get,list,watch \
		--resource=nodes,pods,configmaps,jobs.batch >/dev/null &&
	k create clusterrolebinding t9407 --clusterrole=t9407 \
		--serviceaccount="$NS:nobody" >/dev/null &&
	TOKEN=$(k create token nobody -n "$NS") ||
	{ echo "Bail out! t9407: no ServiceAccount"; exit 1; }
k config view --raw --minify -o json |
	jq --arg t "$TOKEN" '.users[0].user = {token: $t}' >nobody.kubeconfig
# the rights granted are in force before sched-queue is run
eventually 30 k auth can-i list jobs.batch -A --as "$SA"

forbidden="GET /apis/canhazgpu.dev/v1alpha1/gpuworkloads: 403 Forbidden: gpuworkloads.canhazgpu.dev is forbidden: User \"$SA\" cannot list resource \"gpuworkloads\" in API group \"canhazgpu.dev\" at the cluster scope"
check_output 'one pass refused a list: status 1 at once, the request named' \
	'must_fail 1 timeout 30 sched-queue -1 --kubeconfig nobody.kubeconfig -d . 2>&1' <<EOF
sched-queue: $forbidden
EOF

# tries after 0, 0.5, 1.5 and 3.5 s at least before it is stopped
sched-queue --kubeconfig nobody.kubeconfig -d . 2>err >/dev/null &
echo $! >sq.pid
sleep 5
kill "$(cat sq.pid)" && wait "$(cat sq.pid)"
echo "status $?" >>err
rm sq.pid
check_output 'without -1 it keeps trying, saying so once; TERM ends it with 0' 'cat err' <<EOF
sched-queue: $forbidden; retrying in 0.5 s
status 0
EOF
done_testing
