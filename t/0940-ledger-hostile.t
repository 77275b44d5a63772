#!/bin/sh
# The ledger under hostile input: every field's bound (k8shazgpu(7)),
# applied alike by gpu-reserve's C side and by its Lua scripts inside
# Redis. A pool size or count that would keep Redis busy is refused before
# any loop and before the lock; an explicit empty list of GPUs is refused,
# never read as "all"; values the C reader calls unreadable are unreadable
# to the scripts too (and the two readers, fed a corpus and thousands of
# mutations of it, agree on each); texts are bounded, UTF-8 and free of
# control characters where they enter; a queue entry that cannot be judged
# is dropped and named; a run frees only the reservations it made; a
# usage record out of range is named and left out, and the tables print.
. "$(dirname "$0")/lib.sh"
. "$TOP/t/lib-ledger.sh"

command -v redis-server >/dev/null || skip_all 'redis-server is not installed (scripts/deps installs it)'
start_redis || { echo 'Bail out! redis-server did not start'; exit 1; }

TZ=UTC USER=alice NVIDIA_SMI=$SCRATCH/no-nvidia-smi
export TZ USER NVIDIA_SMI
unset K8SHAZGPU_REDIS_PASSWORD K8SHAZGPU_REDIS_DB USERNAME NO_COLOR
# 1795000000 is 2026-11-18T11:06:40Z.
NOW=1795000000
# lua SCRIPT PARAMS: one of the ledger's scripts run as it is, the C side's
# checks left out, with PARAMS and the fixed clock.
lua() {
	printf '%s' "$2" | jq -c --argjson now $NOW '. + {now: $now, ns: 0, off: 0, token: "t"}' |
		unit ledger-verdict "$REDIS" $NOW -e "$1" -
}

# ---- a pool size out of bounds: refused at once, nothing written ----

for count in 3000000 9223372036854775808 99999999 1025 -1 ' 4' 4x; do
	fresh "$count" ''
	check_output "gpu_count '$count': reserve refused before any loop, nothing written" 'out gr reserve -b; keys' <<EOF2
exit 1
gpu-reserve: canhazgpu:gpu_count is not a number from 0 to 1024; nothing done (set it with \`gpu-reserve init -f -g N\`)
canhazgpu:gpu_count $count
EOF2
done
fresh 3000000 ''
for script in reserve k8s-sync k8s-prepare queue-try cleanup; do
	check_output "gpu_count 3000000: the $script script answers before the lock" \
		"lua $script '{\"user\":\"a\",\"type\":\"manual\",\"count\":1,\"holds\":[],\"gpus\":[0],\"mig\":[],\"claim_uid\":\"c\",\"namespace\":\"n\",\"qid\":\"q\"}' | jq -c .error; keys" <<'EOF2'
"badcount"
canhazgpu:gpu_count 3000000
EOF2
done
check_output 'status and report say the same' 'out gr status; out gr report' <<'EOF2'
exit 1
gpu-reserve: canhazgpu:gpu_count is not a number from 0 to 1024; nothing done (set it with `gpu-reserve init -f -g N`)
exit 1
gpu-reserve: canhazgpu:gpu_count is not a number from 0 to 1024: 3000000
EOF2
check_output 'init refuses a pool over 1024 GPUs' 'out gr init -f -g 1025' <<'EOF2'
exit 2
gpu-reserve: -g: not a number from 1 to 1024: 1025
usage: gpu-reserve [-a addr] [-D db] [-P passfile] [-L lockwait] [-T timeout] [-i gpufile] [-M mib] command [options] [args]
EOF2

# ---- the scripts' own bounds, without the C side in front ----

fresh 4 ''
P='"user":"a","type":"manual"'
while IFS='|' read -r script params want; do
	check_output "the $script script refuses $params" "lua $script '{$P,$params}'; keys" <<EOF2
{"error":"param","why":"$want"}
canhazgpu:gpu_count 4
EOF2
done <<'EOF2'
reserve|"count":9223372036854775807|count: not from 1 to 1024
reserve|"count":1.5|count: not from 1 to 1024
reserve|"count":1,"duration":1e300|duration: not from 1 s to 315360000 s
reserve|"ids":[]|ids: an empty list
reserve|"ids":[0,0]|ids: a GPU id given twice
reserve|"ids":[1e300]|ids: not a GPU id
reserve|"count":1,"note":"a\u001b[2Jb"|note: a control character at byte 2
reserve|"count":1,"note":"\u0085"|note: a control character at byte 1
reserve|"count":1,"actual_user":"x\ny"|actual_user: a control character at byte 2
reserve|"count":1,"claim_uid":""|claim_uid: empty
release|"types":["manual"],"ids":[]|ids: an empty list
release|"types":[]|types: not a list
heartbeat|"ids":[0],"since":[-5]|since: not a time of the ledger
heartbeat|"ids":[0,1],"since":[1]|since: not a time per id
k8s-sync|"holds":[{"gpu":0,"claim_uid":"c","user":"k8s:n/p","mig":7}]|holds: mig: not a string
k8s-prepare|"claim_uid":"c","gpus":[],"mig":[{"gpu":0,"uuid":""}]|mig: uuid: empty
queue-add|"entry":{"id":"q","user":"a","requested_count":3000000,"reservation_type":"manual"},"score":"1"|entry: requested_count: not from 1 to 1024
EOF2
long=$(head -c 1025 /dev/zero | tr '\0' n)
check_output 'the reserve script refuses a note of 1025 bytes' "lua reserve '{$P,\"count\":1,\"note\":\"$long\"}'" <<'EOF2'
{"error":"param","why":"note: longer than 1024 bytes"}
EOF2
check_output 'the k8s-sync script refuses 8193 holds in one call' \
	"jq -cn '{holds: [range(8193) | {gpu: 0, claim_uid: \"c\", user: \"k8s:n/p\"}]}' >holds.json && lua k8s-sync \"\$(cat holds.json)\"" <<'EOF2'
{"error":"param","why":"holds: not a list of at most 8192"}
EOF2

# ---- an explicit empty list is never "all" ----

fresh 4 ''
gr reserve -G 0,1 -u alice >/dev/null
held=$(keys)
for op in release reserve heartbeat prepare; do
	check_output "$op with gpu_ids [] is a bad record; nothing changed" \
		"echo '{\"op\":\"$op\",\"gpu_ids\":[],\"user\":\"alice\",\"claim_uid\":\"c\",\"namespace\":\"n\",\"name\":\"p\"}' | out gr -; test \"\$(keys)\" = \"\$held\" && echo unchanged" <<'EOF2'
exit 1
gpu-reserve: <stdin>:1: gpu_ids: an empty list (leave it out, or null, for none)
unchanged
EOF2
done
check_output 'release with gpu_ids null is all of the user'"'"'s manual reservations' \
	"echo '{\"op\":\"release\",\"gpu_ids\":null,\"user\":\"alice\"}' | gr - | jq -c '[.op, .gpu]'" <<'EOF2'
["release",0]
["release",1]
EOF2

# ---- the two readers of a GPU key agree ----

check_output 'C and Lua agree on every value of the corpus' \
	'unit ledger-verdict "$REDIS" $NOW "$FIXTURES"/ledger-keys/*' <<'EOF2'
values 31, differ 0
EOF2
# (a new seed each run; one that finds a difference is named, to rerun
# with LEDGER_FUZZ_SEED)
: "${LEDGER_FUZZ_N:=3000}" "${LEDGER_FUZZ_SEED:=$$}"
check_output "C and Lua agree on $LEDGER_FUZZ_N mutations of it (seed $LEDGER_FUZZ_SEED)" \
	'unit ledger-verdict "$REDIS" $NOW -n $LEDGER_FUZZ_N -s $LEDGER_FUZZ_SEED "$FIXTURES"/ledger-keys/* | tail -n 1' <<EOF2
values $((LEDGER_FUZZ_N + 31)), differ 0
EOF2
fresh 4 ''
rcli set canhazgpu:gpu:1 "$(cat "$FIXTURES"/ledger-keys/k30)" >/dev/null
check_output 'a member given twice counts twice: 257 values as written is unreadable, as the scripts count' \
	'out gr reserve -G 1 -b' <<'EOF2'
exit 1
gpu-reserve: GPU 1: canhazgpu:gpu:1: more than 256 values (treated as held; left as it is)
EOF2
# each with the reason both give, and the holder the table shows
while IFS='|' read -r v why holder; do
	value="{\"user\":\"bob\",\"actual_user\":\"bob\",\"start_time\":1,\"type\":\"manual\",\"expiry_time\":$v}"
	rcli set canhazgpu:gpu:1 "$value" >/dev/null
	check_output "expiry_time $v: unreadable to both; GPU 1 never handed out" \
		"out gr reserve -G 1 -b; out gr reserve -g 4 -b; gr status 2>/dev/null | jq -c 'select(.gpu == 1) | [.state, .user, .expires]'; rcli get canhazgpu:gpu:1" <<EOF2
exit 1
gpu-reserve: GPU 1: canhazgpu:gpu:1: $why (treated as held; left as it is)
exit 1
gpu-reserve: not enough GPUs available: requested 4, available 3
["ERROR",$holder,null]
$value
EOF2
done <<'EOF2'
-1e300|expiry_time is not a time|"bob"
-99999999999999999999|not JSON|null
0x1|not JSON|null
"0-12-31T23:59:59Z"|expiry_time is not a time|"bob"
-9223372036854775808|expiry_time is not a time|"bob"
253402300800|expiry_time is not a time|"bob"
"1969-12-31T23:59:59Z"|expiry_time is not a time|"bob"
1e400|not JSON|null
EOF2
rcli set canhazgpu:gpu:1 '{"user":"bob","actual_user":"bob","start_time":1,"type":"run","last_heartbeat":-9223372036854775808}' >/dev/null
check_output 'a heartbeat of LLONG_MIN is unreadable too' 'out gr reserve -G 1 -b' <<'EOF2'
exit 1
gpu-reserve: GPU 1: canhazgpu:gpu:1: last_heartbeat is not a time (treated as held; left as it is)
EOF2

# ---- texts bounded where they enter ----

fresh 4 ''
n1024=$(head -c 1024 /dev/zero | tr '\0' n)
u513=$(head -c 513 /dev/zero | tr '\0' u)
while IFS='|' read -r args want; do
	check_output "reserve $args: refused, nothing written" 'eval "out gr reserve $args"; keys' <<EOF2
exit 2
gpu-reserve: $want
usage: gpu-reserve [-a addr] [-D db] [-P passfile] [-L lockwait] [-T timeout] [-i gpufile] [-M mib] command [options] [args]
canhazgpu:gpu_count 4
EOF2
done <<'EOF2'
-n "${n1024}n"|-n: longer than 1024 bytes (1025)
-u "$u513"|-u: longer than 512 bytes (513)
-u "$(printf 'a\033[31m')"|-u: a control character at byte 2
-U "$(printf 'x\ny')"|-U: a control character at byte 2
-n "$(printf 'ok\302\233')"|-n: a control character at byte 3
-n "$(printf '\377note')"|-n: not UTF-8 at byte 1
-n "$(printf 'caf\303')"|-n: not UTF-8 at byte 4
-u "$(printf '\355\240\200')"|-u: not UTF-8 at byte 1
-t k8s -u k8s:n/p -c "$(printf 'c\tc')"|-c: a control character at byte 2
EOF2
check_output 'a note of 1024 bytes and a UTF-8 user are taken whole' \
	'gr reserve -n "$n1024" -u "café" | jq -c "[.user, (.note | length)]"' <<'EOF2'
["café",1024]
EOF2
check_output 'a request record with a user of 513 bytes is a bad record' \
	"printf '{\"op\":\"reserve\",\"user\":\"%s\"}\n' \"\$u513\" | out gr -" <<'EOF2'
exit 1
gpu-reserve: <stdin>:1: user: longer than 512 bytes (513)
EOF2
check_output 'prepare refuses a claim uid with an escape' 'out gr prepare -C "$(printf "u\033")" -n ns/p -G 2' <<'EOF2'
exit 1
gpu-reserve: claim: claim_uid: a control character at byte 2
EOF2

# ---- the queue: an entry that cannot be judged never blocks it ----

fresh 4 ''
entry() { # ID HEARTBEAT [COUNT]
	rcli zadd canhazgpu:queue 1 "$1" >/dev/null
	rcli set "canhazgpu:queue:entry:$1" "{\"id\":\"$1\",\"user\":\"zed\",\"actual_user\":\"zed\",\"requested_count\":${3:-1},\"allocated_gpus\":[],\"reservation_type\":\"manual\",\"enqueue_time\":\"2026-11-18T11:00:00Z\",\"last_heartbeat\":$2}" >/dev/null
}
entry ahead '"2027-11-18T11:06:40Z"'
check_output 'an entry whose heartbeat is a year ahead is dropped, named, and the GPU handed out' \
	'gr reserve -b -u alice 2>err | jq -c "[.op, .gpu]"; cat err; keys | grep -c queue' <<'EOF2'
["reserve",0]
gpu-reserve: canhazgpu:queue:entry:ahead: last_heartbeat 31536000 s ahead of the clock; taken out of the queue
0
EOF2
entry huge '"2026-11-18T11:06:40Z"' 3000000
check_output 'an entry asking for 3000000 GPUs is dropped and named' \
	'gr reserve -b -u alice 2>err | jq -c "[.op, .gpu]"; cat err; keys | grep -c queue' <<'EOF2'
["reserve",1]
gpu-reserve: canhazgpu:queue:entry:huge: entry: requested_count: not from 1 to 1024; taken out of the queue
0
EOF2
entry near '"2026-11-18T11:08:00Z"'
check_output 'an entry 80 s ahead (a clock a little fast) stays queued; a new request takes a free GPU all the same' \
	'out gr reserve -b -u alice | jq -c "[.op, .gpu]"; keys | grep -c "queue:entry:near"' <<'EOF2'
["reserve",2]
1
EOF2
rcli del canhazgpu:queue canhazgpu:queue:entry:near >/dev/null
rcli set canhazgpu:gpu:2 "{\"user\":\"bob\",\"actual_user\":\"bob\",\"start_time\":$NOW,\"type\":\"run\",\"last_heartbeat\":$((NOW + 301))}" >/dev/null
check_output 'a run reservation whose heartbeat is 301 s ahead is stale, and freed' \
	'gr cleanup | jq -c "[.op, .gpu, .user]"' <<'EOF2'
["cleanup",2,"bob"]
EOF2

# ---- a run frees only the reservation it made ----

fresh 4 ''
held_run() { rcli get "canhazgpu:gpu:$1" | jq -e '.type == "run"' >/dev/null; }
ran() { [ -s run.rc ]; }
start_run() {
	rm -f go run.rc
	(K8SHAZGPU_NOW=$NOW gpu-reserve run -u alice -G 0 -- sh -c 'while [ ! -e go ]; do sleep 0.1; done' \
		>run.out 2>run.err; echo $? >run.rc) &
	eventually 20 held_run 0
}
start_run
touch go
eventually 20 ran
check_output 'a run that kept its reservation frees it at the end' 'cat run.rc run.err; rcli get canhazgpu:gpu:0 | jq -c "[.user, .last_released]"' <<'EOF2'
0
Reserved 1 GPU(s): [0] for command execution
[null,"2026-11-18T11:06:40Z"]
EOF2
start_run
# its heartbeats lapsed; a newer run of the same user took GPU 0
newer="{\"user\":\"alice\",\"actual_user\":\"alice\",\"start_time\":$((NOW + 100)),\"type\":\"run\",\"last_heartbeat\":$((NOW + 100))}"
rcli set canhazgpu:gpu:0 "$newer" >/dev/null
check_output 'the heartbeat of the first run, given its start, is lost and writes nothing' \
	"lua heartbeat '{\"user\":\"alice\",\"ids\":[0],\"since\":[$NOW]}' | jq -cS '.lost'; rcli get canhazgpu:gpu:0" <<EOF2
[{"bad":null,"gpu":0,"holder":"alice","since":$((NOW + 100))}]
$newer
EOF2
touch go
eventually 20 ran
check_output 'when the first run ends, the newer reservation is left as it is' \
	'cat run.rc run.err; rcli get canhazgpu:gpu:0; gr status | jq -c "select(.gpu == 0) | [.state, .user]"' <<EOF2
0
Reserved 1 GPU(s): [0] for command execution
gpu-reserve: GPU 0 reservation lost (now held by alice since 2026-11-18T11:08:20Z); not released
$newer
["IN_USE","alice"]
EOF2

# ---- numbers and times out of range: named, and the tables print ----

fresh 4 ''
rcli zadd canhazgpu:usage_history_sorted $((NOW - 20)) '{"user":"val","gpu_id":1,"start_time":null,"end_time":null,"duration_seconds":3600,"reservation_type":"manual"}' >/dev/null
rcli zadd canhazgpu:usage_history_sorted $((NOW - 10)) '{"user":"huge","gpu_id":0,"start_time":null,"end_time":null,"duration_seconds":1e308,"reservation_type":"run"}' >/dev/null
check_output 'report: a record of 1e308 seconds is named and left out, the rest counted' \
	'out gr report | jq -c "[.kind, .user, .gpu_hours, .percentage]"' <<'EOF2'
["usage","val",1,100]
["usage-total",null,1,null]
EOF2
check_output 'report: its message and status' 'gr report 2>&1 >/dev/null; echo "exit $?"' <<'EOF2'
gpu-reserve: canhazgpu:usage_history_sorted: record 2 of the window: duration_seconds: not a number of seconds from 0 to 315360000; left out
exit 1
EOF2
check_output 'host report still prints its table, and ends with status 1' \
	'K8SHAZGPU_NOW=$NOW k8shazgpu host report >rep.out 2>&1; echo "exit $?"; grep -v "^Period" rep.out' <<'EOF2'
exit 1
gpu-reserve: canhazgpu:usage_history_sorted: record 2 of the window: duration_seconds: not a number of seconds from 0 to 315360000; left out

=== GPU Reservation Report ===

User                       GPU Hours      Percentage        Run     Manual
---------------------------------------------------------------------------
val                             1.00          100.0%          0          1
---------------------------------------------------------------------------
TOTAL                           1.00         100.0%          0          1

Total reservations: 1
Unique users: 1

EOF2
fresh 4 ''
rcli set canhazgpu:gpu:0 "{\"user\":\"$(printf 'ev\\u001b[2Jil')\",\"actual_user\":\"x\",\"start_time\":$NOW,\"type\":\"manual\",\"note\":\"$(printf 'a\\nb\\u009bc\\u0007')\"}" >/dev/null
rcli set canhazgpu:gpu:1 '{"user":"bob","actual_user":"bob","start_time":1,"type":"manual","expiry_time":"0-12-31T23:59:59Z"}' >/dev/null
check_output 'host status: escapes and newlines in names and notes are shown as ?, a bad time as an error, every row printed' \
	'K8SHAZGPU_NOW=$NOW k8shazgpu host status --no-color 2>&1; echo "exit $?"' <<'EOF2'
k8shazgpu host status: canhazgpu:provider is not set: read as nvidia, as canhazgpu reads it
gpu-reserve: canhazgpu:gpu:1: expiry_time is not a time (treated as held; left as it is)
 GPU │ STATUS      │ USER         │ DURATION │ TYPE   │ DETAILS                                    │ VALIDATION │ NOTE   
─────┼─────────────┼──────────────┼──────────┼────────┼────────────────────────────────────────────┼────────────┼────────
 0   │ ● IN_USE    │ x (ev?[2Jil) │ 0h 0m 0s │ MANUAL │ manual reservation                         │ -          │ a b?c? 
 1   │ ✗ ERROR     │ -            │ -        │ -      │ canhazgpu:gpu:1: expiry_time is not a time │ -          │ -      
 2   │ ● AVAILABLE │ -            │ -        │ -      │ never used                                 │            │ -      
 3   │ ● AVAILABLE │ -            │ -        │ -      │ never used                                 │            │ -      
exit 0
EOF2

done_testing
