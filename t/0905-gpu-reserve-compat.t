#!/bin/sh
# gpu-reserve and canhazgpu on one Redis, both ways: a stand-in for
# canhazgpu (t/fixtures/gpu-reserve/canhazgpu.lua: its Lua allocator and
# the writes of its Go heartbeat and release) writes states that
# gpu-reserve reads, releases, cleans and skips; and what gpu-reserve
# writes, canhazgpu sees as taken or free, choosing the same GPUs in the
# same order.
. "$(dirname "$0")/lib.sh"
. "$TOP/t/lib-ledger.sh"

command -v redis-server >/dev/null || skip_all 'redis-server is not installed (scripts/deps installs it)'
start_redis || { echo 'Bail out! redis-server did not start'; exit 1; }

TZ=UTC USER=alice
export TZ USER
unset K8SHAZGPU_REDIS_PASSWORD K8SHAZGPU_REDIS_DB USERNAME
NOW=1795000000 # 2026-11-18T11:06:40Z
T0=2026-11-18T11:06:40Z
# chg MODE ARGS...: what canhazgpu would do.
chg() { rcli --eval "$FIXTURES/gpu-reserve/canhazgpu.lua" , "$@"; }
st() { gr status 2>&1 | jq -c "[.gpu, .state, .user, .type, .since, .heartbeat, .expires]"; }

# ---- canhazgpu writes, gpu-reserve reads ----

fresh 4
check_output 'canhazgpu allocates (cjson-encoded, integer times); gpu-reserve shows them' 'chg allocate 2 bob bob run $NOW nil "[]" "" && chg allocate 1 carol carol manual $NOW $((NOW + 400)) "[]" "a note" && st' <<EOF2
0
2
1
[0,"IN_USE","bob","run","$T0","$T0",null]
[1,"IN_USE","carol","manual","$T0",null,"2026-11-18T11:13:20Z"]
[2,"IN_USE","bob","run","$T0","$T0",null]
[3,"AVAILABLE",null,null,null,null,null]
EOF2
check_output 'gpu-reserve skips them' 'gr reserve -g 2 -b 2>&1; gr reserve -G 0 -b 2>&1' <<'EOF2'
gpu-reserve: not enough GPUs available: requested 2, available 1
gpu-reserve: GPU 0 is already reserved by user 'bob'
EOF2
check_output 'a Go heartbeat (string times) is read, and keeps the run reservation alive' 'chg heartbeat 0 bob 2026-11-18T06:11:00.123456789-05:00 && NOW=$((NOW + 500)) gr cleanup | jq -c "[.op, .gpu, .user]"; rcli get canhazgpu:gpu:0' <<'EOF2'
ok
["cleanup",1,"carol"]
["cleanup",2,"bob"]
{"user":"bob","actual_user":"bob","start_time":"2026-11-18T11:06:40Z","last_heartbeat":"2026-11-18T06:11:00.123456789-05:00","type":"run","expiry_time":null,"last_released":null}
EOF2
check_output 'gpu-reserve releases canhazgpu'"'"'s run reservation by id, with the history canhazgpu writes' 'gr release -u bob -G 0 | jq -c "[.op, .gpu]"; rcli get canhazgpu:gpu:0; rcli zrange canhazgpu:usage_history_sorted 0 -1 withscores' <<EOF2
["release",0]
{"start_time":null,"last_heartbeat":null,"expiry_time":null,"last_released":"$T0"}
{"user":"bob","gpu_id":0,"start_time":"$T0","end_time":"$T0","duration_seconds":0,"reservation_type":"run"}
1795000000
{"user":"bob","gpu_id":2,"start_time":"$T0","end_time":"2026-11-18T11:15:00Z","duration_seconds":500,"reservation_type":"run"}
1795000500
{"user":"carol","gpu_id":1,"start_time":"$T0","end_time":"2026-11-18T11:15:00Z","duration_seconds":500,"reservation_type":"manual"}
1795000500
EOF2
fresh 4
chg allocate 1 dave dave manual $NOW nil '[]' '' >/dev/null
chg release 0 2026-11-18T11:00:00Z 1794999600 >/dev/null
check_output 'a Go release and its history: gpu-reserve sees the GPU free, and dave'"'"'s last one first' 'st | head -1; gr reserve -u dave -g 4 -b | jq -r .gpu | tr "\n" " "; echo' <<'EOF2'
[0,"AVAILABLE",null,null,null,null,null]
0 2 1 3 
EOF2

# ---- gpu-reserve writes, canhazgpu reads ----

fresh 4
gr reserve -G 1 >/dev/null && gr reserve -G 2 -t run -u team >/dev/null && gr reserve -G 3 -t k8s -c u1 -u k8s:ns/c >/dev/null
check_output 'canhazgpu sees gpu-reserve'"'"'s holds as taken' 'chg view' <<'EOF2'
0 free
1 taken by alice
2 taken by team
3 taken by k8s:ns/c
EOF2
check_output 'and allocates only around them' 'chg allocate 1 bob bob run $NOW nil "[]" ""; chg allocate 1 bob bob run $NOW nil "[]" ""' <<'EOF2'
0
Not enough GPUs available

EOF2
check_output 'gpu-reserve'"'"'s releases are free to canhazgpu' 'gr release -G 1 >/dev/null && gr release -c u1 >/dev/null && gr heartbeat -G 2 -u team >/dev/null && chg view && chg heartbeat 2 team 2026-11-18T11:07:00Z' <<'EOF2'
0 taken by bob
1 free
2 taken by team
3 free
ok
EOF2

# The same pool, the same user: both choose the same GPUs in the same
# order, from gpu-reserve's history and last_released (numbers, strings
# with offsets and fractions, none).
order_pool() {
	fresh 8
	gr reserve -G 6 -u erin -d 1m >/dev/null && NOW=$((NOW - 100)) gr reserve -G 2 -u erin >/dev/null
	gr release -u erin >/dev/null
	NOW=$((NOW + 5)) gr reserve -G 4 -u erin >/dev/null && NOW=$((NOW + 5)) gr release -u erin >/dev/null
	rcli set canhazgpu:gpu:0 '{"last_released":1794990000}' >/dev/null
	rcli set canhazgpu:gpu:1 '{"start_time":null,"last_heartbeat":null,"expiry_time":null,"last_released":"2026-11-18T08:00:00.25+09:00"}' >/dev/null
	rcli set canhazgpu:gpu:7 '{"start_time":null,"last_heartbeat":null,"expiry_time":null,"last_released":"2026-11-17T23:59:59Z"}' >/dev/null
}
for u in erin frank; do
	order_pool
	mine=$(gr reserve -g 8 -u $u -b | jq -r .gpu | tr '\n' ' ')
	order_pool
	theirs=$(chg allocate 8 $u $u manual $NOW nil '[]' '' | tr '\n' ' ')
	check "same order for $u: $mine" "test '$mine' = '$theirs' && test -n '$mine'"
done
order_pool
check_output 'erin'"'"'s order, spelled out' 'chg allocate 8 erin erin manual $NOW nil "[]" "" | tr "\n" " "; echo' <<'EOF2'
4 6 2 5 3 7 1 0 
EOF2
check_output 'canhazgpu skips what is in use without a reservation, as gpu-reserve -i does' 'order_pool; echo "{\"kind\":\"gpu\",\"index\":4,\"memory_used_mib\":2000,\"mig\":null}" >probe; gr -i probe reserve -g 2 -u erin | jq -r .gpu | tr "\n" " "; order_pool; chg allocate 2 erin erin manual $NOW nil "[4]" "" | tr "\n" " "; echo' <<'EOF2'
6 2 6 2 
EOF2

# ---- side by side: the same request on the same ledger, both tools ----

# side SETUP THEIRS OURS: SETUP, then canhazgpu's THEIRS; SETUP again,
# then our OURS; both answers (each on one line) printed one above the
# other, and kept in side.txt for the table at the end.
side() {
	eval "$1"
	a=$(eval "$2" 2>&1 | paste -s -d ' ' -)
	eval "$1"
	b=$(eval "$3" 2>&1 | paste -s -d ' ' -)
	printf '%-52s %-22s %s\n' "$T_CASE" "$a" "$b" >>"$SCRATCH/side.txt"
	printf 'canhazgpu  %s\nours       %s\n' "$a" "$b"
}
case_() { T_CASE=$1; }
all8() { fresh 8 && gr reserve -G 0,1,2,3,4,5,6,7 -u alice >/dev/null; }
drop8() { all8 && NOW=$((NOW + 60)) gr release -u alice >/dev/null; }
ids() { jq -r .gpu; }

case_ 'a fresh pool of 8, -g 3'
check_output "$T_CASE: canhazgpu's unstable sort, the same ids" \
	'side "fresh 8" "chg allocate 3 frank frank manual \$NOW nil \"[]\" \"\"" "gr reserve -g 3 -u frank -b | ids"' <<'EOF2'
canhazgpu  0 4 5
ours       0 4 5
EOF2
case_ 'a fresh pool of 8, -g 8'
check_output "$T_CASE: the whole order" \
	'side "fresh 8" "chg allocate 8 frank frank manual \$NOW nil \"[]\" \"\"" "gr reserve -g 8 -u frank -b | ids"' <<'EOF2'
canhazgpu  0 4 5 6 3 1 2 7
ours       0 4 5 6 3 1 2 7
EOF2
case_ 'eight released in one call, another user, -g 3'
check_output "$T_CASE: ties on last_released" \
	'side drop8 "chg allocate 3 frank frank manual \$NOW nil \"[]\" \"\"" "gr reserve -g 3 -u frank -b | ids"' <<'EOF2'
canhazgpu  0 4 5
ours       0 4 5
EOF2
case_ 'eight released in one call, their user, -g 3'
check_output "$T_CASE: ties on the user's history" \
	'side drop8 "chg allocate 3 alice alice manual \$NOW nil \"[]\" \"\"" "gr reserve -g 3 -u alice -b | ids"' <<'EOF2'
canhazgpu  0 4 5
ours       0 4 5
EOF2

# A queued request: canhazgpu's waiter takes the lowest free ids, where
# the allocation order on these five would give 1 and 6.
our_waiter() {
	K8SHAZGPU_NOW=$NOW gpu-reserve reserve -u bob -g 2 -w 30s >w.out 2>w.err &
	w=$!
	eventually 10 queued 1
	gr release -u alice -G 1,3,4,6,7 >/dev/null
	wait $w
	ids <w.out
}
case_ 'bob queued for 2; alice frees 1,3,4,6,7 at once'
check_output "$T_CASE: the waiter takes the lowest" \
	'side all8 "gr release -u alice -G 1,3,4,6,7 >/dev/null; chg waiter 2" our_waiter' <<'EOF2'
canhazgpu  1 3
ours       1 3
EOF2

# A new request does not look at the queue: when it fits, it is served.
waiting4() {
	fresh 4 && gr reserve -G 0,1,2 -u alice >/dev/null
	rcli zadd canhazgpu:queue 1795000000000000000 q1 >/dev/null
	rcli set canhazgpu:queue:entry:q1 '{"id":"q1","user":"bob","actual_user":"bob","requested_count":2,"allocated_gpus":[],"reservation_type":"manual","enqueue_time":"2026-11-18T11:06:40Z","last_heartbeat":"2026-11-18T11:06:40Z"}' >/dev/null
}
case_ 'bob waits for 2; carol asks for the 1 free'
check_output "$T_CASE: served, the queue or not" \
	'side waiting4 "chg allocate 1 carol carol manual \$NOW nil \"[]\" \"\"" "gr reserve -g 1 -u carol -b | ids"; rcli zcard canhazgpu:queue' <<'EOF2'
canhazgpu  3
ours       3
1
EOF2

# release -G: what the user holds, whatever else is named.
held03() { fresh 8 && gr reserve -G 0 -u alice >/dev/null && gr reserve -G 3 -u bob >/dev/null; }
our_release() { gr release -u alice -G 0,7,3 2>/dev/null >rel.out; st=$?; ids <rel.out; echo "status $st"; }
case_ 'alice holds 0, bob 3, 7 free: release -G 0,7,3'
check_output "$T_CASE: 0 released, status 0" \
	'side held03 "chg release_ids alice 0,7,3 $T0 \$NOW; echo status 0" our_release; rcli get canhazgpu:gpu:3 | jq -r .user' <<'EOF2'
canhazgpu  0 status 0
ours       0 status 0
bob
EOF2

# Expiry and heartbeat boundaries, to the second: at the limit a
# reservation is kept, one second past it released, with its record.
bounds() {
	fresh 6
	rcli set canhazgpu:gpu:0 "{\"user\":\"a\",\"start_time\":1,\"type\":\"manual\",\"expiry_time\":$NOW}" >/dev/null
	rcli set canhazgpu:gpu:1 "{\"user\":\"a\",\"start_time\":1,\"type\":\"manual\",\"expiry_time\":$((NOW - 1))}" >/dev/null
	rcli set canhazgpu:gpu:2 "{\"user\":\"a\",\"start_time\":1,\"type\":\"run\",\"last_heartbeat\":$((NOW - 300))}" >/dev/null
	rcli set canhazgpu:gpu:3 '{"user":"a","start_time":"2026-11-18T11:00:00Z","last_heartbeat":"2026-11-18T06:01:39-05:00","type":"run","expiry_time":null,"last_released":null}' >/dev/null
	rcli set canhazgpu:gpu:4 '{"user":"a","start_time":1,"type":"manual"}' >/dev/null
	rcli set canhazgpu:gpu:5 '{"user":"a","start_time":"2026-11-18T11:00:00Z","last_heartbeat":"2026-11-18T11:06:40.5Z","type":"run","expiry_time":null,"last_released":null}' >/dev/null
}
records() { rcli zcard canhazgpu:usage_history_sorted; }
case_ 'expiry now, now-1 s; heartbeat 300, 301 s old'
check_output "$T_CASE: the same released, each with a record" \
	'side bounds "chg cleanup \$NOW $T0; records" "gr cleanup | ids; records"' <<'EOF2'
canhazgpu  1 3 2
ours       1 3 2
EOF2

# What we write into the queue, canhazgpu reads: a wait is a time.
fresh 1
gr reserve -G 0 >/dev/null
K8SHAZGPU_NOW=$NOW gpu-reserve reserve -u bob -w 10m >q.out 2>q.err &
q=$!
eventually 10 queued 1
check_output 'a queue entry of reserve -w 10m: canhazgpu'"'"'s queue --json can print it' \
	'chg queue_json; rcli get "canhazgpu:queue:entry:$(rcli zrange canhazgpu:queue 0 0)" | jq -r .wait_timeout' <<'EOF2'
ok
2026-11-18T11:16:40Z
EOF2
kill -TERM $q
{ wait $q; } 2>/dev/null
rcli zadd canhazgpu:queue 1 old >/dev/null
rcli set canhazgpu:queue:entry:old '{"id":"old","user":"x","actual_user":"x","requested_count":1,"allocated_gpus":[],"reservation_type":"manual","enqueue_time":"2026-11-18T11:06:40Z","last_heartbeat":"2026-11-18T11:06:40Z","wait_timeout":600000000000}' >/dev/null
check_output 'and the old form, a duration in nanoseconds, is what it cannot' 'chg queue_json' <<'EOF2'
Time.MarshalJSON: year outside of range [0,9999]
EOF2

# The provider admin writes is one canhazgpu uses.
check_output 'admin -p fake: canhazgpu reads the provider it names' \
	'k8shazgpu host admin -g 4 -p fake --force >/dev/null; chg provider; rcli del canhazgpu:provider >/dev/null; chg provider' <<'EOF2'
fake
nvidia (written by its migration)
EOF2

echo "# side by side: the case, canhazgpu's answer, ours"
sed 's/^/#   /' "$SCRATCH/side.txt"

done_testing
