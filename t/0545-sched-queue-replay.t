#!/bin/sh
# sched-queue -f: its engine without a cluster, fed watch events, listings,
# the answers to its writes and the clock from t/fixtures/sched-queue/,
# checked by the writes it prints: the backoff of retries and its jitter,
# a Job written again after a temporary failure, devices held by Jobs and
# freed by their pods, holds no Job explains, a restart that learns every
# Job before it places, DRA claim templates written anew for a placement
# elsewhere, and bad records named by their line. The same events on a
# cluster are t/9400, t/9410 and t/9415.
. "$(dirname "$0")/lib.sh"

F=$FIXTURES/sched-queue

# summary: each write as a line: number, verb, workload uid, what it
# applies or deletes, the status phase, retry time and message
cat >summary.jq <<'EOF'
def tmpl: .spec.spec.devices.requests[0]
	| if .exactly then .exactly.selectors[0].cel.expression
	  else [.firstAvailable[] | .name + ":" + (.selectors[0].cel.expression | capture("== \"(?<p>[^\"]+)\"").p)] | join(",") end;
"\(.write) \(.verb) \(.uid)"
+ (if .template then " template " + (.template | tmpl) else "" end)
+ (if .job.spec then " job on " + .job.metadata.annotations["canhazgpu.dev/node"] + " " + .job.metadata.annotations["canhazgpu.dev/devices"]
   elif .job then " job " + .job.metadata.namespace + "/" + .job.metadata.name else "" end)
+ (if .status then " | " + .status.status.phase
	+ (if .status.status.nextRetryTime then " until " + .status.status.nextRetryTime else "" end)
	+ ": " + .status.status.message else "" end)
EOF
# replay ARGS...: sched-queue ARGS's writes summed up, then its messages
replay() {
	sched-queue "$@" >writes 2>msgs
	echo "exit $?"
	jq -r -f summary.jq writes
	cat msgs
}

check_output 'a workload no node can hold: retries after base * 2^(n-1) times its jitter, then Failed' \
	'replay -f "$F/backoff.ndjson"' <<'EOF'
exit 0
1 apply u-big | Pending until 2026-03-01T00:00:09Z: no node has 3 free healthy GPUs; retry 1 of 3 in 9s
2 apply u-big | Pending until 2026-03-01T00:01:23Z: no node has 3 free healthy GPUs; retry 2 of 3 in 18s
3 apply u-big | Pending until 2026-03-01T00:02:42Z: no node has 3 free healthy GPUs; retry 3 of 3 in 37s
4 apply u-big | Failed: unschedulable after 3 retries: no node has 3 free healthy GPUs
sched-queue: strategy least_utilized: 0 placed, 0 waiting for capacity, 1 unschedulable
sched-queue: strategy least_utilized: 0 placed, 0 waiting for capacity, 1 unschedulable
sched-queue: strategy least_utilized: 0 placed, 0 waiting for capacity, 1 unschedulable
sched-queue: strategy least_utilized: 0 placed, 0 waiting for capacity, 1 unschedulable
EOF

check_output 'the longest wait is -B, jittered the same' \
	'replay -B 15 -f "$F/backoff.ndjson" | grep Pending' <<'EOF'
1 apply u-big | Pending until 2026-03-01T00:00:09Z: no node has 3 free healthy GPUs; retry 1 of 3 in 9s
2 apply u-big | Pending until 2026-03-01T00:01:18Z: no node has 3 free healthy GPUs; retry 2 of 3 in 13s
3 apply u-big | Pending until 2026-03-01T00:02:18Z: no node has 3 free healthy GPUs; retry 3 of 3 in 13s
EOF

check_output 'a Job write that met a temporary failure is written again, same Job, no retry spent; a refusal spends one' \
	'replay -f "$F/again.ndjson"' <<'EOF'
exit 0
1 apply u-w job on n1 ["GPU-a0"] | Scheduled: placed on node n1 by least_utilized
2 apply u-w job on n1 ["GPU-a0"] | Scheduled: placed on node n1 by least_utilized
3 apply u-w job on n1 ["GPU-a0"] | Scheduled: placed on node n1 by least_utilized
4 apply u-w | Pending until 2026-03-01T00:00:14Z: Job.batch "w" is invalid; retry 1 of 3 in 10s
sched-queue: strategy least_utilized: 1 placed, 0 waiting for capacity, 0 unschedulable
sched-queue: PATCH jobs/w: 503 Service Unavailable
sched-queue: workload t/w: its Job will be written again
sched-queue: PATCH jobs/w: 503 Service Unavailable
sched-queue: workload t/w: its Job will be written again
sched-queue: Job.batch "w" is invalid
EOF

# The records of again.ndjson up to line N: which writes were made by then.
# The first rewrite falls due 0.75 to 1.25 s after the failure (record 7),
# the second 1.5 to 2.5 s after the second (record 12).
check_output 'the rewrites fall due after 1 s then 2 s, times a jitter: not at 0.5 s, by 1.5 s; not 1 s later, by 3 s' '
	for n in 9 11 14 16; do
		printf "%s:" $n
		head -n $n "$F/again.ndjson" | sched-queue -f - 2>/dev/null | jq -r .write | sed "s/^/ /" | tr -d "\n"
		echo
	done' <<'EOF'
9: 1
11: 1 2
14: 1 2
16: 1 2 3
EOF

# rewrite_after SEED: how many 0.05 s steps after 0.7 s the first rewrite
# waits for with jitter seed SEED
rewrite_after() {
	i=0
	while [ $i -le 12 ]; do
		{
			head -n 1 "$F/again.ndjson"
			echo "{\"seed\":$1}"
			sed -n '3,7p' "$F/again.ndjson"
			echo '{"advance":0.7}'
			j=0
			while [ $j -lt $i ]; do echo '{"advance":0.05}'; j=$((j + 1)); done
			echo '{"pass":true}'
		} >seeded
		[ "$(sched-queue -f seeded 2>/dev/null | wc -l)" = 2 ] && { echo "seed $1: $i steps"; return; }
		i=$((i + 1))
	done
	echo "seed $1: not written again"
}
check_output 'the jitter of a rewrite comes from the seed: the same seed, the same wait' \
	'rewrite_after 1; rewrite_after 42; rewrite_after 42' <<'EOF'
seed 1: 7 steps
seed 42: 8 steps
seed 42: 8 steps
EOF

check_output 'a Job holds its devices: the next workload waits, no retry spent, until the pod ends' \
	'replay -f "$F/holds.ndjson"' <<'EOF'
exit 0
1 apply u-1 job on n1 ["GPU-a0"] | Scheduled: placed on node n1 by least_utilized
2 apply u-2 | Pending: waiting for capacity: no node has 1 free healthy GPU
3 apply u-1 | Running: running on node n1
4 apply u-2 job on n1 ["GPU-a0"] | Scheduled: placed on node n1 by least_utilized
sched-queue: strategy least_utilized: 1 placed, 1 waiting for capacity, 0 unschedulable
sched-queue: strategy least_utilized: 1 placed, 0 waiting for capacity, 0 unschedulable
EOF

check_output 'a Job written and never seen holds its devices 120 s, then its workload is placed again' \
	'replay -f "$F/orphans.ndjson"' <<'EOF'
exit 0
1 apply u-lost job on n1 ["GPU-a0"] | Scheduled: placed on node n1 by least_utilized
2 apply u-lost job on n1 ["GPU-a0"] | Scheduled: placed on node n1 by least_utilized
sched-queue: strategy least_utilized: 1 placed, 0 waiting for capacity, 0 unschedulable
sched-queue: u-lost: no Job holds its devices any more; freeing them
sched-queue: strategy least_utilized: 1 placed, 0 waiting for capacity, 0 unschedulable
EOF

# old runs (its Job is listed last); late waits for the retry its status
# names; new needs both GPUs of n2.
check_output 'restarted: nothing placed before every list; a Job listed holds its GPU; a retry resumes when due' \
	'replay -f "$F/restart.ndjson"' <<'EOF'
exit 0
1 apply u-new | Pending: waiting for capacity: no node has 2 free healthy GPUs
2 apply u-late job on n2 ["GPU-b1"] | Scheduled: placed on node n2 by least_utilized
sched-queue: strategy least_utilized: 1 placed, 1 waiting for capacity, 0 unschedulable
EOF

check_output 'DRA: a MIG chain as firstAvailable, a whole GPU pinned; placed again elsewhere, a template naming the new GPU' \
	'replay -A dra -f "$F/dra.ndjson"' <<'EOF'
exit 0
1 apply u-hog template p0:2g.20gb,p1:1g.10gb job on m1 ["MIG-m2"] | Scheduled: placed on node m1 by least_utilized
2 apply u-mig template p0:2g.20gb,p1:1g.10gb job on m1 ["MIG-m1"] | Scheduled: placed on node m1 by least_utilized, MIG 2g.20gb fell back to 1g.10gb
3 apply u-whole template device.attributes["gpu.canhazgpu.dev"].uuid in ["GPU-a0"] job on n1 ["GPU-a0"] | Scheduled: placed on node n1 by least_utilized
4 apply u-whole | Running: running on node n1
5 delete u-whole job t/whole
6 apply u-whole template device.attributes["gpu.canhazgpu.dev"].uuid in ["GPU-b0"] job on n2 ["GPU-b0"] | Scheduled: placed on node n2 by least_utilized
sched-queue: strategy least_utilized: 3 placed, 0 waiting for capacity, 0 unschedulable
sched-queue: Job t/whole: its node is gone; deleting it so that its workload is placed again
sched-queue: workload t/whole: its Job went before it finished; placing it again
sched-queue: strategy least_utilized: 1 placed, 0 waiting for capacity, 0 unschedulable
EOF

check 'every write whole, byte for byte, as t/fixtures/sched-queue/*.out holds them' '
	for s in backoff again holds orphans restart; do
		sched-queue -f "$F/$s.ndjson" 2>/dev/null | cmp - "$F/$s.out" || exit 1
	done
	sched-queue -A dra -f "$F/dra.ndjson" 2>/dev/null | cmp - "$F/dra.out"'

check_output 'bad records are named by their line and skipped; the status is 1' '
	cp "$F/bad.ndjson" events; replay -f events' <<'EOF'
exit 1
sched-queue: events:2: synced: not gpuworkloads, nodes, jobs, configmaps, pods or all
sched-queue: events:3: advance: not a number of seconds >= 0
sched-queue: events:4: object.kind: not GPUWorkload, Node, Job, ConfigMap or Pod
sched-queue: events:5: result: not a write's number
sched-queue: events:6: message: a failed write says what failed
sched-queue: events:7: a ConfigMap that -m does not name
sched-queue: events:8: not a replay record: no type, synced, result, time, advance, seed, pass or orphans
sched-queue: events:9: seed: not a whole number >= 0
sched-queue: events:10: time: not YYYY-MM-DDTHH:MM:SSZ after 1970
EOF

check_output 'a line that is no JSON, and a file that is not there' '
	printf "{\"pass\":true}\n{\"pass\":\n" >broken; replay -f broken; replay -f missing' <<'EOF'
exit 1
sched-queue: broken:2: invalid JSON at column 8: unexpected token near end of file
exit 1
sched-queue: missing: No such file or directory
EOF

# sched-queue(1)'s example: its input and what it prints, from the page
awk '/^sched-queue -f - <</ {on = 1; next} on && /^IN$/ {exit} on' "$TOP/man/sched-queue.1" >example.in
awk '/^prints$/ {p = 1} p && /^\.Bd/ {on = 1; next} on && /^\.Ed/ {exit} on' "$TOP/man/sched-queue.1" >example.out
check 'the example of sched-queue(1) prints what the page says' '
	test -s example.in && sched-queue -f - <example.in 2>/dev/null | jq -r .status.status.message | cmp - example.out'
done_testing
