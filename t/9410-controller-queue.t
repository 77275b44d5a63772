#!/bin/sh
# The controller's queue on the real control plane: workloads that fit the
# cluster wait for capacity in priority then creation order and spend no
# retry; a contention run ends with every workload Succeeded and no device
# shared; the pod template's tolerations, node selector and affinity decide
# the node and name the cause when none admits it; a workload deleted at
# once, a node removed under a placement and the API server restarted in a
# burst leave nothing held, lost or double-booked; idle, it writes nothing.
. "$(dirname "$0")/lib.sh"
need_cluster
NS=t9410

my_slices() {
	k get resourceslices -o json | jq -r '.items[] | select(.spec.nodeName // "" | startswith("t9410-")) | .metadata.name'
}

# Everything the test makes goes, and is waited for until really gone: the
# pods first (with their namespace), while their nodes still run them, then
# the nodes and, owned by them, their ResourceSlices.
cleanup() {
	cl_rc=0
	kill_groups "$SCRATCH/ctl.pids"
	gone 30 "the controller" ctl_running || cl_rc=1
	ns_deleted "$NS" || cl_rc=1
	k delete nodes -l t9410=yes --wait=false >/dev/null 2>&1
	gone 60 "the t9410=yes nodes" k get nodes -l t9410=yes -o name || cl_rc=1
	gone 60 "the ResourceSlices of the t9410 nodes" my_slices || cl_rc=1
	return $cl_rc
}

# Nodes of our own, each pool its own label value: q (one node of 4 GPUs,
# the queue), t (tainted dedicated=gpu below), a (two zones), r (removed
# and made again), b (30 GPUs for the bursts).
cat >nodes.yaml <<'EOF'
defaults: {product: NVIDIA-A100-SXM4-80GB, memoryMiB: 81920, computeCapability: "8.0",
  driverVersion: "550.90.07", cudaVersion: "12.4", cpu: "64", memory: 512Gi, pods: "110",
  labels: {t9410: "yes"}}
nodes:
- {name: t9410-q, gpus: 4, labels: {pool: q}}
- {name: t9410-t, gpus: 2, labels: {pool: t}}
- {name: t9410-za, gpus: 2, labels: {pool: a, zone: a}}
- {name: t9410-zb, gpus: 2, labels: {pool: a, zone: b}}
- {name: t9410-r, gpus: 2, labels: {pool: r}}
- {name: t9410-b, count: 3, gpus: 10, labels: {pool: b}}
EOF
NODES="t9410-q t9410-t t9410-za t9410-zb t9410-r t9410-b-0 t9410-b-1 t9410-b-2"

cleanup || { echo "Bail out! t9410: what an earlier run left is not gone"; exit 1; }
trap 'cleanup || exit 1' EXIT
trap 'exit 1' INT TERM
crd_apply "$TOP/manifests/crds/gpuworkloads.yaml"
eventually 30 k get gpuworkloads -A
k create namespace "$NS" >/dev/null
k8shazgpu-sim nodes nodes.yaml | claim-make -a >/dev/null
# k8shazgpu-sim's topologies know no taints of their own
k taint node t9410-t dedicated=gpu:NoSchedule >/dev/null
# N: that many of our nodes (or node $2) Ready
ready() {
	[ "$(k get nodes -l "t9410=yes${2:+,kubernetes.io/hostname=$2}" -o json |
		jq '[.items[] | select(any(.status.conditions[]?; .type == "Ready" and .status == "True"))] | length')" = "$1" ]
}
eventually 90 ready 8
for n in $NODES; do
	k8shazgpu-nodeagent -1 -N "$n" -t nodes.yaml 2>/dev/null
done

check_output 'our nodes publish their GPUs' \
	'k8shazgpu nodes | awk "/^t9410-/ {print \$1, \$3, \$4}" | sort' <<'EOF'
t9410-b-0 10 10
t9410-b-1 10 10
t9410-b-2 10 10
t9410-q 4 4
t9410-r 2 2
t9410-t 2 2
t9410-za 2 2
t9410-zb 2 2
EOF

# The controller, tolerating the KWOK taint, only in our namespace; a short
# longest backoff so that a workload retrying for a node that comes back
# is tried again soon.
port=$(free_port)
export K8SHAZGPU_JOB_TOLERATIONS='[{"key":"kwok.x-k8s.io/node","operator":"Exists","effect":"NoSchedule"}]'
export SCHEDULING_MAX_BACKOFF=4
# Under VALGRIND=1 its tools run natively here (t/0600 and t/9300 run them
# under valgrind): its waits are sized for a machine that is busy, not slowed.
ctl_path=$(printf '%s' "$PATH" | sed "s|$BUILD/valgrind:||")
# In a process group of its own, so that all of it is killed at the end.
PATH=$ctl_path setsid k8shazgpu-controller -n "$NS" -r 600 -d "$SCRATCH/state" -l 127.0.0.1:$port \
	>/dev/null 2>>"$SCRATCH/controller.log" &
echo $! >>"$SCRATCH/ctl.pids"

# NAME [JSON]: a GPUWorkload of one GPU whose pods stay Running (KWOK
# completes a Job's pod after a few seconds otherwise); JSON is merged
# into its spec (objects merged, arrays replaced).
workload() {
	jq -n -c --arg name "$1" --arg ns "$NS" --argjson spec "${2:-{\}}" '{apiVersion: "canhazgpu.dev/v1alpha1",
		kind: "GPUWorkload", metadata: {name: $name, namespace: $ns},
		spec: ({gpuCount: 1,
			podTemplate: {metadata: {annotations: {"pod-complete.stage.kwok.x-k8s.io/delay": "1h",
					"pod-complete.stage.kwok.x-k8s.io/jitter-delay": "1h"}},
				spec: {containers: [{name: "main", image: "registry.invalid/none:0"}]}}} * $spec)}'
}
# NAME: its phase; phase_is NAME PHASE
phase() { k get gpuworkload "$1" -n "$NS" -o jsonpath='{.status.phase}'; }
phase_is() { [ "$(phase "$1")" = "$2" ]; }
# NAME...: name phase retries message of each, in order
states() {
	for s; do
		k get gpuworkload "$s" -n "$NS" -o json | jq -r '"\(.metadata.name) \(.status.phase) \(.status.retries) \(.status.message)"'
	done
}
# NAME: the status has a message (the controller has looked at it)
seen() { [ -n "$(k get gpuworkload "$1" -n "$NS" -o jsonpath='{.status.message}')" ]; }
metric() { curl -s "http://127.0.0.1:$port/metrics" | awk -v m="$1" '$1 == m {print $2}'; }

# ---- 1. a queue, not a give-up

Q='{"nodeSelector": {"pool": "q"}}'
for i in 0 1 2 3; do workload fill$i "$Q"; done | claim-make -a >/dev/null
check_output 'four long workloads fill the four GPUs of pool=q' '
	for i in 0 1 2 3; do eventually 120 phase_is fill$i Running || exit 1; done
	for i in 0 1 2 3; do k get gpuworkload fill$i -n "$NS" -o jsonpath="{.status.assignedNode}{\"\\n\"}"; done' <<'EOF'
t9410-q
t9410-q
t9410-q
t9410-q
EOF

# Three low ones, each created a second after the other, whatever their
# retryPolicy; then a high one.
workload low1 '{"nodeSelector": {"pool": "q"}, "priority": 1, "retryPolicy": {"maxRetries": 0}}' | claim-make -a >/dev/null
sleep 1
workload low2 '{"nodeSelector": {"pool": "q"}, "priority": 1, "retryPolicy": {"maxRetries": 1, "backoffSeconds": 1}}' |
	claim-make -a >/dev/null
sleep 1
workload low3 '{"nodeSelector": {"pool": "q"}, "priority": 1}' | claim-make -a >/dev/null
sleep 1
workload high '{"nodeSelector": {"pool": "q"}, "priority": "high"}' | claim-make -a >/dev/null
# A few seconds after: a controller that gave up would have spent low2's
# retry (1 s) and failed low1 (none allowed) by then.
check_output 'a full pool: all four wait for capacity, Pending, and spend no retry' '
	for w in low1 low2 low3 high; do eventually 120 seen $w || exit 1; done
	sleep 3; states low1 low2 low3 high' <<'EOF'
low1 Pending 0 waiting for capacity: no node matching node selector pool=q has 1 free healthy GPU
low2 Pending 0 waiting for capacity: no node matching node selector pool=q has 1 free healthy GPU
low3 Pending 0 waiting for capacity: no node matching node selector pool=q has 1 free healthy GPU
high Pending 0 waiting for capacity: no node matching node selector pool=q has 1 free healthy GPU
EOF

k delete gpuworkload fill0 -n "$NS" >/dev/null
check_output 'a GPU frees: the high-priority one runs, the low ones wait' '
	eventually 120 phase_is high Running; sleep 2
	states high low1 low2 low3 | cut -d" " -f1-3' <<'EOF'
high Running 0
low1 Pending 0
low2 Pending 0
low3 Pending 0
EOF

k delete gpuworkload fill1 -n "$NS" >/dev/null
check_output 'another frees: the earliest-created low one runs next' '
	eventually 120 phase_is low1 Running; sleep 2
	states low1 low2 low3 | cut -d" " -f1-3' <<'EOF'
low1 Running 0
low2 Pending 0
low3 Pending 0
EOF

# Free pool=q: the Jobs of deleted workloads go with them.
k delete gpuworkloads -n "$NS" fill2 fill3 low1 low2 low3 high >/dev/null
q_jobs() { k get jobs -n "$NS" -o json | jq -r '.items[] | select(.metadata.annotations["canhazgpu.dev/node"] == "t9410-q") | .metadata.name'; }
gone 120 "the Jobs on t9410-q" q_jobs

# Twelve workloads whose pods complete after exactly 2 s on the 4 GPUs.
SHORT='{"nodeSelector": {"pool": "q"}, "podTemplate": {"metadata": {"annotations":
	{"pod-complete.stage.kwok.x-k8s.io/delay": "2s", "pod-complete.stage.kwok.x-k8s.io/jitter-delay": "2s"}}}}'
i=0
while [ $i -lt 12 ]; do
	workload c$i "$SHORT"
	i=$((i + 1))
done | claim-make -a >/dev/null
short_done() {
	[ "$(k get gpuworkloads -n "$NS" -o json | jq '[.items[] | select(.metadata.name | test("^c[0-9]+$"))
		| select(.status.phase == "Succeeded" or .status.phase == "Failed")] | length')" = 12 ]
}
check_output 'contention: all twelve Succeeded, none Failed, none retried' '
	eventually 240 short_done
	k get gpuworkloads -n "$NS" -o json | jq -r "[.items[] | select(.metadata.name | test(\"^c[0-9]+$\"))]
		| group_by(.status.phase)[] | \"\(length) \(.[0].status.phase), retries \([.[].status.retries] | unique | map(tostring) | join(\",\"))\""' <<'EOF'
12 Succeeded, retries 0
EOF

# A Job holds its devices from its creation until its pod has ended (the
# controller frees them then, before the Job is marked Complete): on each
# device, a Job is created no earlier than the pod of the one before ended.
check_output 'contention: no two Jobs whose pods had not ended ever shared a device' '
	k get pods -n "$NS" -o json >cpods.json && k get jobs -n "$NS" -o json >cjobs.json &&
	jq -r --slurpfile p cpods.json "([\$p[0].items[] | {key: .metadata.labels[\"canhazgpu.dev/workload\"],
			value: [.status.containerStatuses[]?.state.terminated.finishedAt // empty][0]}] | from_entries) as \$ended
		| [.items[] | select(.metadata.name | test(\"^c[0-9]+$\"))
		| {name: .metadata.name, node: .metadata.annotations[\"canhazgpu.dev/node\"],
		   devs: (.metadata.annotations[\"canhazgpu.dev/devices\"] | fromjson), from: .metadata.creationTimestamp,
		   to: \$ended[.metadata.name]}]
		| \"\(length) Jobs on \([.[].node] | unique | join(\",\")), \([.[].devs | length] | unique | map(tostring) | join(\",\")) device each, \([.[] | select(.to == null)] | length) pods not ended\",
		  ([.[] | .devs[] as \$d | {d: \$d, from, to, name}] | group_by(.d) | \"\(length) devices used\",
		   ([.[] | sort_by(.from) | . as \$s | range(1; length) | select(\$s[.].from < \$s[. - 1].to)
			| \"\(\$s[. - 1].name) and \(\$s[.].name) overlap on \(\$s[.].d)\"] | if length == 0 then \"no overlap\" else .[] end))" cjobs.json' <<'EOF'
12 Jobs on t9410-q, 1 device each, 0 pods not ended
4 devices used
no overlap
EOF

# Each pod carries its Job's devices as sched-bind writes them, a JSON
# array, so that what reads pods counts them (k8shazgpu, claim-make).
check_output 'contention: each pod names the devices of its Job, a JSON array' '
	jq -r --slurpfile j cjobs.json "([\$j[0].items[] | {key: .metadata.name,
			value: .metadata.annotations[\"canhazgpu.dev/devices\"]}] | from_entries) as \$job
		| [.items[] | (.metadata.labels[\"canhazgpu.dev/workload\"] // \"\") as \$w | select(\$w | test(\"^c[0-9]+$\"))
		| .metadata.annotations[\"canhazgpu.dev/devices\"] as \$a
		| if \$a == \$job[\$w] and (\$a | fromjson? // null | type) == \"array\" then \"as their Job\"
		  else \"\(.metadata.name): \(\$a)\" end]
		| group_by(.)[] | \"\(length) pods: \(.[0])\"" cpods.json' <<'EOF'
12 pods: as their Job
EOF

# ---- 2. the pod template counts

DEDICATED='{"key": "dedicated", "operator": "Equal", "value": "gpu", "effect": "NoSchedule"}'
KWOK='{"effect": "NoSchedule", "operator": "Exists", "key": "kwok.x-k8s.io/node"}'
RETRY1='"retryPolicy": {"maxRetries": 1, "backoffSeconds": 1}'
{
	workload tol1 "{\"nodeSelector\": {\"pool\": \"t\"}, \"podTemplate\": {\"spec\": {\"tolerations\": [$DEDICATED]}}}"
	# its node selector in its pod template, and the KWOK toleration too
	workload tol2 "{\"podTemplate\": {\"spec\": {\"nodeSelector\": {\"pool\": \"t\"}, \"tolerations\": [$KWOK, $DEDICATED]}}}"
	workload notol "{\"nodeSelector\": {\"pool\": \"t\"}, $RETRY1}"
	workload zoneb '{"nodeSelector": {"pool": "a"}, "podTemplate": {"spec": {"affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution":
		{"nodeSelectorTerms": [{"matchExpressions": [{"key": "zone", "operator": "In", "values": ["b"]}]}]}}}}}}'
	workload zonec "{\"podTemplate\": {\"spec\": {\"nodeSelector\": {\"pool\": \"a\"}, \"affinity\": {\"nodeAffinity\": {\"requiredDuringSchedulingIgnoredDuringExecution\":
		{\"nodeSelectorTerms\": [{\"matchExpressions\": [{\"key\": \"zone\", \"operator\": \"In\", \"values\": [\"c\"]}]}]}}}}}, $RETRY1}"
} | claim-make -a >/dev/null

check_output 'a template that tolerates the taint runs on the tainted node' '
	eventually 120 phase_is tol1 Running && eventually 120 phase_is tol2 Running
	for w in tol1 tol2; do k get gpuworkload $w -n "$NS" -o jsonpath="{.metadata.name} {.status.phase} {.status.assignedNode}{\"\\n\"}"; done' <<'EOF'
tol1 Running t9410-t
tol2 Running t9410-t
EOF

check_output 'its Job lists each toleration once, the controller-wide one included' '
	for w in tol1 tol2; do echo "$w:"; k get job $w -n "$NS" -o json | jq -c -S ".spec.template.spec.tolerations[]"; done' <<'EOF'
tol1:
{"effect":"NoSchedule","key":"dedicated","operator":"Equal","value":"gpu"}
{"effect":"NoSchedule","key":"kwok.x-k8s.io/node","operator":"Exists"}
tol2:
{"effect":"NoSchedule","key":"kwok.x-k8s.io/node","operator":"Exists"}
{"effect":"NoSchedule","key":"dedicated","operator":"Equal","value":"gpu"}
EOF

check_output 'a template that does not tolerate it: Failed, naming the taint' '
	eventually 120 phase_is notol Failed; states notol' <<'EOF'
notol Failed 1 unschedulable after 1 retry: no node matching node selector pool=t admits its pods: 1 has a taint it does not tolerate (1 dedicated=gpu:NoSchedule)
EOF

check_output 'required node affinity picks the zone=b node; the Job pins it in the same term' '
	eventually 120 phase_is zoneb Running
	k get gpuworkload zoneb -n "$NS" -o jsonpath="{.status.assignedNode}{\"\\n\"}"
	k get job zoneb -n "$NS" -o json | jq -c -S ".spec.template.spec.affinity"' <<'EOF'
t9410-zb
{"nodeAffinity":{"requiredDuringSchedulingIgnoredDuringExecution":{"nodeSelectorTerms":[{"matchExpressions":[{"key":"zone","operator":"In","values":["b"]}],"matchFields":[{"key":"metadata.name","operator":"In","values":["t9410-zb"]}]}]}}}
EOF

check_output 'an affinity that no node matches: Failed, naming the affinity' '
	eventually 120 phase_is zonec Failed; states zonec' <<'EOF'
zonec Failed 1 unschedulable after 1 retry: no node matching node selector pool=a admits its pods: 2 do not match its required node affinity
EOF

# ---- 3. bad input

# (a) Workloads deleted right after they were made: before their Job is
# written, while it is, or just after.
avail_is() { [ "$(metric agentaflow_gpu_available)" = "$1" ]; }
stable_avail() {
	a1=$(metric agentaflow_gpu_available) && sleep 2 && [ -n "$a1" ] && avail_is "$a1" && echo "$a1"
}
before=
for n in 1 2 3 4 5 6 7 8 9 10; do before=$(stable_avail) && break; done
i=0
while [ $i -lt 10 ]; do
	workload ghost$i '{"nodeSelector": {"pool": "b"}}'
	i=$((i + 1))
done | claim-make -a >/dev/null
k delete gpuworkloads -n "$NS" ghost0 ghost1 ghost2 ghost3 ghost4 ghost5 ghost6 ghost7 ghost8 ghost9 --wait=false >/dev/null
ghosts() { gh=$(k get jobs,pods -n "$NS" -o name) && printf '%s\n' "$gh" | awk '/\/ghost/'; }
check_output 'a workload deleted at once leaves no Job and no GPU held' '
	gone 120 "the ghosts Jobs and pods" ghosts && eventually 180 avail_is "$before"
	echo "$(ghosts | wc -l) Jobs or pods; available $(metric agentaflow_gpu_available), before $before"' <<EOF
0 Jobs or pods; available $before, before $before
EOF

# (b) A node removed under a placement.
workload rw '{"nodeSelector": {"pool": "r"}, "retryPolicy": {"maxRetries": 50, "backoffSeconds": 1}}' | claim-make -a >/dev/null
check_output 'placed on the only pool=r node' '
	eventually 120 phase_is rw Running
	k get gpuworkload rw -n "$NS" -o jsonpath="{.status.phase} {.status.assignedNode}{\"\\n\"}"' <<'EOF'
Running t9410-r
EOF
rw_uid=$(k get job rw -n "$NS" -o jsonpath='{.metadata.uid}')
k delete node t9410-r >/dev/null
rw_job_gone() { [ "$(k get job rw -n "$NS" -o jsonpath='{.metadata.uid}' 2>/dev/null)" != "$rw_uid" ]; }
logged() { grep -Fqx "$1" "$SCRATCH/controller.log"; }
check_output 'its node gone: the Job is deleted, saying so, and the workload waits' '
	eventually 120 logged "sched-queue: Job $NS/rw: its node is gone; deleting it so that its workload is placed again" &&
	eventually 120 rw_job_gone && eventually 60 phase_is rw Pending
	grep -Fx "sched-queue: Job $NS/rw: its node is gone; deleting it so that its workload is placed again" "$SCRATCH/controller.log"
	phase rw; echo' <<EOF
sched-queue: Job $NS/rw: its node is gone; deleting it so that its workload is placed again
Pending
EOF

k8shazgpu-sim nodes nodes.yaml | jq -c 'select(.metadata.name == "t9410-r")' | claim-make -a >/dev/null
eventually 90 ready 1 t9410-r
k8shazgpu-nodeagent -1 -N t9410-r -t nodes.yaml 2>/dev/null
# r_pods: each running pod on t9410-r (a terminating one still holds its
# device): its workload, what owns it, its devices
r_pods() {
	k get pods -n "$NS" -o json | jq -r '.items[] | select(.status.phase == "Running" and .spec.nodeName == "t9410-r")
		| "\(.metadata.labels["canhazgpu.dev/workload"]) owned by \(.metadata.ownerReferences[0] // null | if . then "\(.kind) \(.name)" else "nothing" end)\(if .metadata.deletionTimestamp then ", terminating" else "" end) \(.spec.containers[0].env[] | select(.name == "NVIDIA_VISIBLE_DEVICES") | .value)"'
}
one_r_pod() { [ "$(r_pods | wc -l)" = 1 ]; }
check_output 'the node back: placed on it again, the only pod there' '
	eventually 120 phase_is rw Running && eventually 30 one_r_pod
	k get gpuworkload rw -n "$NS" -o json | jq -r "\"\(.status.phase) \(.status.assignedNode) \(.status.devices | length) device\""
	r_pods >rp; sed "s/ [^ ]*\$//" rp
	echo "$(awk "{print \$NF}" rp | tr , "\n" | sort | uniq -d | wc -l) devices held twice"' <<'EOF'
Running t9410-r 1 device
rw owned by Job rw
0 devices held twice
EOF

# ---- 4. idle writes nothing (before the API server restart below, whose
# aftermath on the simulated nodes may go on changing pods for a while)

# writes (both results) and lists (every watch), as its metrics say
quiet_counts() {
	curl -s "http://127.0.0.1:$port/metrics" | awk '
		/^k8shazgpu_controller_writes_total\{/ {w += $2; nw++}
		/^k8shazgpu_controller_watch_lists_total\{/ {l += $2; nl++}
		END {if (nw == 2 && nl >= 4) print "writes " w ", lists " l; else print "no such metrics"}'
}
check_output 'settled, the controller writes and lists nothing in 20 quiet seconds' '
	sleep 5; a=$(quiet_counts); sleep 20; b=$(quiet_counts)
	case $a in writes*) [ "$a" = "$b" ] && echo unchanged || echo "$a, then $b" ;; *) echo "$a" ;; esac' <<'EOF'
unchanged
EOF

# ---- 3. bad input, (c): the API server restarted in the middle of a burst
# of 30.
i=0
while [ $i -lt 30 ]; do
	workload b$i '{"nodeSelector": {"pool": "b"}}'
	i=$((i + 1))
done >burst.json
# stopped once the first of their Jobs is written; what the stopped server
# refused is submitted again once it is back
claim-make -a <burst.json >/dev/null 2>&1 &
burst=$!
b_job() { k get jobs -n "$NS" -o name | grep -q "/b[0-9]"; }
n=0
until b_job; do
	n=$((n + 1))
	[ $n -lt 200 ] || break
	sleep 0.05
done
k8shazgpu-sim stop apiserver >/dev/null 2>&1
k8shazgpu-sim start apiserver >/dev/null 2>&1
wait $burst
claim-make -a <burst.json >/dev/null
# All 30 placed (Scheduled or Running: after the restart the simulated
# nodes' pods may be marked not ready, and their Jobs count them so) and
# 30 pods Running.
b_placed() {
	[ "$(k get gpuworkloads -n "$NS" -o json | jq '[.items[] | select(.metadata.name | test("^b[0-9]+$"))
		| select(.status.phase == "Running" or .status.phase == "Scheduled")] | length')" = 30 ] &&
	[ "$(b_pods | wc -l)" = 30 ]
}
# From the API: every running pod on a pool=b node, its workload and devices.
b_pods() {
	k get pods -n "$NS" -o json | jq -r '.items[] | select(.status.phase == "Running" and (.spec.nodeName | startswith("t9410-b-")))
		| .spec.nodeName as $n | .metadata.labels["canhazgpu.dev/workload"] as $w
		| (.spec.containers[0].env[] | select(.name == "NVIDIA_VISIBLE_DEVICES") | .value | split(","))[] | "\($w) \($n) \(.)"'
}
check_output 'the API server restarted mid-burst: all 30 placed, one Job each, nothing double-booked' '
	eventually 120 b_placed
	k get gpuworkloads -n "$NS" -o json >wls.json; k get jobs -n "$NS" -o json >jobs.json
	jq -r --slurpfile j jobs.json "[.items[] | select(.metadata.name | test(\"^b[0-9]+$\"))] as \$w
		| [\$j[0].items[] | .metadata.ownerReferences[0].uid] as \$owners
		| \"\(\$w | length) workloads, \([\$w[] | .metadata.uid as \$u | [\$owners[] | select(. == \$u)] | length]
			| group_by(.) | map(\"\(length) with \(.[0]) Job\") | join(\", \"))\",
		  \"\([\$w[] | select(.status.phase == \"Scheduled\" or .status.phase == \"Running\")] | length) placed\"" wls.json
	k get pods -n "$NS" -o json | jq -r "[.items[] | select(.metadata.name | test(\"^b[0-9]+-\")) | select(.status.phase != \"Running\")]
		| \"\(length) of their pods not running\""
	b_pods >bp; echo "$(wc -l <bp) pods, $(cut -d" " -f1 bp | sort -u | wc -l) workloads, $(cut -d" " -f2- bp | sort -u | wc -l) distinct devices"' <<'EOF'
30 workloads, 30 with 1 Job
30 placed
0 of their pods not running
30 pods, 30 workloads, 30 distinct devices
EOF

check_output 'the controller said nothing it should not' \
	'grep -E "internal error|AddressSanitizer|runtime error" "$SCRATCH/controller.log" | wc -l' <<'EOF'
0
EOF
done_testing
