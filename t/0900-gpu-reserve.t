#!/bin/sh
# gpu-reserve against a real redis-server of its own: every command, the
# exact records and the exact Redis keys they leave, canhazgpu's
# allocation order, stale and expired holds cleaned with their history,
# the queue, run, mark, k8s-sync and watch; and bad input (Redis
# unreachable, passwords, unreadable keys, no pool, a lock held by
# another, ids out of range, durations), each with its message, its
# status, and the keys left as they were.
. "$(dirname "$0")/lib.sh"
. "$TOP/t/lib-ledger.sh"

command -v redis-server >/dev/null || skip_all 'redis-server is not installed (scripts/deps installs it)'
start_redis || { echo 'Bail out! redis-server did not start'; exit 1; }

# A fixed clock (K8SHAZGPU_NOW) and zone, so times are exact:
# 1795000000 is 2026-11-18T11:06:40Z.
TZ=UTC USER=alice
export TZ USER
unset K8SHAZGPU_REDIS_PASSWORD K8SHAZGPU_REDIS_DB USERNAME
NOW=1795000000
# fresh N: an empty pool of N GPUs.
T0=2026-11-18T11:06:40Z

# ---- the pool ----

rcli flushdb >/dev/null
check_output 'no pool: status says how to make one' 'out gr status' <<'EOF2'
exit 1
gpu-reserve: canhazgpu:gpu_count is not set; initialise the pool with `gpu-reserve init -g N` (or canhazgpu admin --gpus N)
EOF2
check_output 'no pool: reserve says the same, and writes nothing' 'out gr reserve; keys' <<'EOF2'
exit 1
gpu-reserve: canhazgpu:gpu_count is not set; initialise the pool with `gpu-reserve init -g N` (or canhazgpu admin --gpus N)
EOF2
check_output 'init writes gpu_count and provider' 'out gr init -g 4; keys' <<'EOF2'
{"kind":"pool","gpu_count":4,"provider":"nvidia"}
exit 0
canhazgpu:gpu_count 4
canhazgpu:provider nvidia
EOF2
rcli set canhazgpu:gpu:1 '{"user":"bob","actual_user":"bob","start_time":1,"type":"manual"}' >/dev/null
check_output 'init again is refused, and changes nothing' 'out gr init -g 8; keys' <<'EOF2'
exit 1
gpu-reserve: the pool is already initialised (canhazgpu:gpu_count is 4); -f starts it over
canhazgpu:gpu:1 {"user":"bob","actual_user":"bob","start_time":1,"type":"manual"}
canhazgpu:gpu_count 4
canhazgpu:provider nvidia
EOF2
check_output 'init -f deletes the GPU keys first' 'out gr init -f -g 8; keys' <<'EOF2'
{"kind":"pool","gpu_count":8,"provider":"nvidia"}
exit 0
canhazgpu:gpu_count 8
canhazgpu:provider nvidia
EOF2

# ---- reserve ----

fresh 4
# (on a fresh pool every GPU ties; canhazgpu's sort leaves 4 as 0,2,1,3)
check_output 'reserve: two manual GPUs for 30 minutes, as canhazgpu writes them' 'out gr reserve -g 2; keys' <<EOF2
{"kind":"reservation","op":"reserve","gpu":0,"user":"alice","actual_user":"alice","type":"manual","claim_uid":null,"since":"$T0","expires":"2026-11-18T11:36:40Z","note":null}
{"kind":"reservation","op":"reserve","gpu":2,"user":"alice","actual_user":"alice","type":"manual","claim_uid":null,"since":"$T0","expires":"2026-11-18T11:36:40Z","note":null}
exit 0
canhazgpu:gpu:0 {"user":"alice","actual_user":"alice","start_time":1795000000,"type":"manual","expiry_time":1795001800}
canhazgpu:gpu:2 {"user":"alice","actual_user":"alice","start_time":1795000000,"type":"manual","expiry_time":1795001800}
canhazgpu:gpu_count 4
canhazgpu:provider nvidia
EOF2
check_output 'reserve: run type by ids, another user, a note' 'out gr reserve -G 3 -t run -u team -U bob -n "a <b> & c"; rcli get canhazgpu:gpu:3' <<EOF2
{"kind":"reservation","op":"reserve","gpu":3,"user":"team","actual_user":"bob","type":"run","claim_uid":null,"since":"$T0","expires":null,"note":"a <b> & c"}
exit 0
{"user":"team","actual_user":"bob","start_time":1795000000,"type":"run","last_heartbeat":1795000000,"note":"a \u003cb\u003e \u0026 c"}
EOF2
check_output 'reserve -d 1.5h and -d 2d' 'gr reserve -G 1 -d 1.5h -u x | jq -r .expires; rcli get canhazgpu:gpu:1; gr release -u x -G 1 >/dev/null; gr reserve -G 1 -d 2d -u x | jq -r .expires' <<'EOF2'
2026-11-18T12:36:40Z
{"user":"x","actual_user":"alice","start_time":1795000000,"type":"manual","expiry_time":1795005400}
2026-11-20T11:06:40Z
EOF2
keys >before
check_output 'reserve -b with too few free: refused, nothing changed' 'out gr reserve -g 2 -b; keys | cmp - before && echo same' <<'EOF2'
exit 1
gpu-reserve: not enough GPUs available: requested 2, available 0
same
EOF2
check_output 'reserve -G of a held GPU' 'out gr reserve -G 3 -b; keys | cmp - before && echo same' <<'EOF2'
exit 1
gpu-reserve: GPU 3 is already reserved by user 'team'
same
EOF2
check_output 'ids out of range' 'out gr reserve -G 1,9 -b; out gr release -G 9; out gr heartbeat -G 4; keys | cmp - before && echo same' <<'EOF2'
exit 1
gpu-reserve: GPU 9 is out of range (0-3)
exit 1
gpu-reserve: GPU 9 is out of range (0-3)
exit 1
gpu-reserve: GPU 4 is out of range (0-3)
same
EOF2
check_output 'a duration that does not parse' 'out gr reserve -d 2h30m; out gr reserve -d 0m; out gr reserve -t run -d 1h; keys | cmp - before && echo same' <<'EOF2'
exit 2
gpu-reserve: -d: not a duration: 2h30m (use e.g. 90m, 1.5h)
usage: gpu-reserve [-a addr] [-D db] [-P passfile] [-L lockwait] [-T timeout] [-i gpufile] [-M mib] command [options] [args]
exit 2
gpu-reserve: -d: not a duration: 0m (use e.g. 90m, 1.5h)
usage: gpu-reserve [-a addr] [-D db] [-P passfile] [-L lockwait] [-T timeout] [-i gpufile] [-M mib] command [options] [args]
exit 2
gpu-reserve: -d: only manual reservations expire
usage: gpu-reserve [-a addr] [-D db] [-P passfile] [-L lockwait] [-T timeout] [-i gpufile] [-M mib] command [options] [args]
same
EOF2
check_output '-g and -G only as canhazgpu combines them' 'out gr reserve -g 3 -G 0,1; out gr reserve -G 0,0; out gr reserve -t k8s -c u; out gr reserve -c u' <<'EOF2'
exit 2
gpu-reserve: -g 3 and 2 ids: the count must be 1 or the number of ids
usage: gpu-reserve [-a addr] [-D db] [-P passfile] [-L lockwait] [-T timeout] [-i gpufile] [-M mib] command [options] [args]
exit 2
gpu-reserve: -G: a GPU id given twice: 0,0
usage: gpu-reserve [-a addr] [-D db] [-P passfile] [-L lockwait] [-T timeout] [-i gpufile] [-M mib] command [options] [args]
exit 2
gpu-reserve: k8s reservations need -u k8s:<namespace>/<name>
usage: gpu-reserve [-a addr] [-D db] [-P passfile] [-L lockwait] [-T timeout] [-i gpufile] [-M mib] command [options] [args]
exit 2
gpu-reserve: -c is for k8s reservations
usage: gpu-reserve [-a addr] [-D db] [-P passfile] [-L lockwait] [-T timeout] [-i gpufile] [-M mib] command [options] [args]
EOF2

# canhazgpu's order: the GPUs this user released last, most recent first,
# then the others by last_released, oldest first (its rough reading:
# 365-day years, 30-day months, the offset ignored; a number counts as a
# day ago; none as never). Ties come out as Lua's table.sort (not stable)
# leaves them with canhazgpu's comparator, false on ties.
order_pool() {
	fresh 6
	rcli set canhazgpu:gpu:0 '{"start_time":null,"last_heartbeat":null,"expiry_time":null,"last_released":"2026-11-18T10:00:00Z"}' >/dev/null
	rcli set canhazgpu:gpu:1 '{"start_time":null,"last_heartbeat":null,"expiry_time":null,"last_released":"2026-11-18T09:00:00+05:00"}' >/dev/null
	rcli set canhazgpu:gpu:2 '{"last_released":1794990000}' >/dev/null
	rcli set canhazgpu:gpu:4 '{"start_time":null,"last_heartbeat":null,"expiry_time":null,"last_released":"2026-11-17T23:00:00.5-02:00"}' >/dev/null
	rcli zadd canhazgpu:usage_history_sorted 1794000000 '{"user":"alice","gpu_id":5,"start_time":"2026-11-01T00:00:00Z","end_time":"2026-11-06T20:40:00Z","duration_seconds":60,"reservation_type":"manual"}' >/dev/null
	rcli zadd canhazgpu:usage_history_sorted 1794500000 '{"user":"alice","gpu_id":4,"start_time":"2026-11-01T00:00:00Z","end_time":"2026-11-12T15:33:20Z","duration_seconds":60,"reservation_type":"run"}' >/dev/null
	rcli zadd canhazgpu:usage_history_sorted 1794900000 '{"user":"bob","gpu_id":0,"start_time":"2026-11-01T00:00:00Z","end_time":"2026-11-17T07:20:00Z","duration_seconds":60,"reservation_type":"run"}' >/dev/null
}
check_output 'allocation order: the user'"'"'s most recent first, then least recently released' 'for u in alice bob carol; do order_pool; gr reserve -g 6 -u $u -b | jq -r .gpu | tr "\n" " "; echo; done' <<'EOF2'
4 5 3 1 0 2 
0 3 5 4 1 2 
5 3 4 1 0 2 
EOF2
order_pool
check_output 'a count takes the first in that order' 'gr reserve -g 2 -b | jq -r .gpu | tr "\n" " "; gr reserve -u bob -b | jq -r .gpu' <<'EOF2'
4 5 0
EOF2

# ---- release, heartbeat ----

fresh 4
gr reserve -G 0,1 >/dev/null && gr reserve -G 2 -t run >/dev/null && gr reserve -G 3 -u bob >/dev/null
check_output 'release: the user'"'"'s manual reservations, with their history' 'NOW=$((NOW + 90)) out gr release; keys' <<'EOF2'
{"kind":"reservation","op":"release","gpu":0,"user":"alice","actual_user":"alice","type":"manual","claim_uid":null,"since":"2026-11-18T11:06:40Z","expires":"2026-11-18T11:36:40Z","note":null}
{"kind":"reservation","op":"release","gpu":1,"user":"alice","actual_user":"alice","type":"manual","claim_uid":null,"since":"2026-11-18T11:06:40Z","expires":"2026-11-18T11:36:40Z","note":null}
exit 0
canhazgpu:gpu:0 {"start_time":null,"last_heartbeat":null,"expiry_time":null,"last_released":"2026-11-18T11:08:10Z"}
canhazgpu:gpu:1 {"start_time":null,"last_heartbeat":null,"expiry_time":null,"last_released":"2026-11-18T11:08:10Z"}
canhazgpu:gpu:2 {"user":"alice","actual_user":"alice","start_time":1795000000,"type":"run","last_heartbeat":1795000000}
canhazgpu:gpu:3 {"user":"bob","actual_user":"alice","start_time":1795000000,"type":"manual","expiry_time":1795001800}
canhazgpu:gpu_count 4
canhazgpu:provider nvidia
canhazgpu:usage_history_sorted {"user":"alice","gpu_id":0,"start_time":"2026-11-18T11:06:40Z","end_time":"2026-11-18T11:08:10Z","duration_seconds":90,"reservation_type":"manual"} 1795000090 {"user":"alice","gpu_id":1,"start_time":"2026-11-18T11:06:40Z","end_time":"2026-11-18T11:08:10Z","duration_seconds":90,"reservation_type":"manual"} 1795000090 
EOF2
check_output 'release with nothing to release: a note, status 0' 'out gr release' <<'EOF2'
exit 0
gpu-reserve: no manually reserved GPUs found for alice
EOF2
keys >before
check_output 'release -G of GPUs none of them ours: each named, nothing changed, status 0 as canhazgpu' 'out gr release -G 3,0; keys | cmp - before && echo same' <<'EOF2'
exit 0
gpu-reserve: GPU 3 is not reserved by alice (held by bob)
gpu-reserve: GPU 0 is not reserved by alice (it is free)
gpu-reserve: nothing released
same
EOF2
check_output 'release -G frees run reservations too; the history has the fraction' 'K8SHAZGPU_NOW=1795000100.25 out gpu-reserve release -G 2; rcli zrangebyscore canhazgpu:usage_history_sorted 1795000100 1795000100' <<'EOF2'
{"kind":"reservation","op":"release","gpu":2,"user":"alice","actual_user":"alice","type":"run","claim_uid":null,"since":"2026-11-18T11:06:40Z","expires":null,"note":null}
exit 0
{"user":"alice","gpu_id":2,"start_time":"2026-11-18T11:06:40Z","end_time":"2026-11-18T11:08:20.25Z","duration_seconds":100.25,"reservation_type":"run"}
EOF2
check_output 'release -u and -t' 'out gr release -u bob -t run; out gr release -u bob -t manual' <<'EOF2'
exit 0
gpu-reserve: no run reservations found for bob
{"kind":"reservation","op":"release","gpu":3,"user":"bob","actual_user":"alice","type":"manual","claim_uid":null,"since":"2026-11-18T11:06:40Z","expires":"2026-11-18T11:36:40Z","note":null}
exit 0
EOF2
gr reserve -G 1 >/dev/null && gr reserve -G 2 -u bob >/dev/null
check_output 'release -G of GPUs some ours: those released, the others named and left, status 0' 'out gr release -G 3,1,2; rcli get canhazgpu:gpu:2' <<'EOF2'
{"kind":"reservation","op":"release","gpu":1,"user":"alice","actual_user":"alice","type":"manual","claim_uid":null,"since":"2026-11-18T11:06:40Z","expires":"2026-11-18T11:36:40Z","note":null}
exit 0
gpu-reserve: GPU 3 is not reserved by alice (it is free)
gpu-reserve: GPU 2 is not reserved by alice (held by bob)
{"user":"bob","actual_user":"alice","start_time":1795000000,"type":"manual","expiry_time":1795001800}
EOF2

fresh 4
gr reserve -G 0,1 -t run >/dev/null
check_output 'heartbeat: written as canhazgpu'"'"'s Go heartbeat writes it, local offset' 'TZ=America/New_York K8SHAZGPU_NOW=1795000060.5 out gpu-reserve heartbeat -G 0; rcli get canhazgpu:gpu:0' <<'EOF2'
{"kind":"reservation","op":"heartbeat","gpu":0,"user":"alice","actual_user":"alice","type":"run","claim_uid":null,"since":"2026-11-18T11:06:40Z","expires":null,"note":null}
exit 0
{"user":"alice","actual_user":"alice","start_time":"2026-11-18T06:06:40-05:00","last_heartbeat":"2026-11-18T06:07:40.5-05:00","type":"run","expiry_time":null,"last_released":null}
EOF2
check_output 'a heartbeat of a string-timed state keeps its offsets' 'out gr heartbeat -G 0; rcli get canhazgpu:gpu:0' <<'EOF2'
{"kind":"reservation","op":"heartbeat","gpu":0,"user":"alice","actual_user":"alice","type":"run","claim_uid":null,"since":"2026-11-18T11:06:40Z","expires":null,"note":null}
exit 0
{"user":"alice","actual_user":"alice","start_time":"2026-11-18T06:06:40-05:00","last_heartbeat":"2026-11-18T11:06:40Z","type":"run","expiry_time":null,"last_released":null}
EOF2
gr release -G 1 >/dev/null && gr reserve -G 1 -u bob -t run >/dev/null
check_output 'heartbeat of a GPU no longer ours' 'out gr heartbeat -G 1,2; rcli get canhazgpu:gpu:1' <<'EOF2'
exit 1
gpu-reserve: GPU 1 reservation lost (now held by bob)
gpu-reserve: GPU 2 reservation lost (now free)
{"user":"bob","actual_user":"alice","start_time":1795000000,"type":"run","last_heartbeat":1795000000}
EOF2

# ---- status, cleanup, what cannot be read ----

fresh 6
gr reserve -G 0 -t run -n nb >/dev/null && gr reserve -G 1 -u bob >/dev/null
rcli set canhazgpu:gpu:2 '{"user":"k8s:ns/c","actual_user":"k8s","start_time":1795000000,"type":"k8s","claim_uid":"u-1"}' >/dev/null
rcli set canhazgpu:gpu:3 '{"start_time":null,"last_heartbeat":null,"expiry_time":null,"last_released":"2026-11-18T12:06:40+01:00"}' >/dev/null
rcli set canhazgpu:gpu:4 'locked by hand' >/dev/null
printf '%s\n' '{"kind":"gpu","index":5,"memory_used_mib":2048,"mig":null}' '{"kind":"gpu","index":4,"memory_used_mib":5000,"mig":null}' '{"kind":"gpu","index":0,"memory_used_mib":9000,"mig":null}' >probe
check_output 'status: one record per GPU, cleanup first; an unreadable key is an error, held' 'out gr -i probe status' <<'EOF2'
{"kind":"gpu-state","gpu":0,"state":"IN_USE","user":"alice","actual_user":"alice","type":"run","claim_uid":null,"since":"2026-11-18T11:06:40Z","heartbeat":"2026-11-18T11:06:40Z","expires":null,"last_released":null,"note":"nb","queue_id":null,"memory_used_mib":9000,"error":null}
{"kind":"gpu-state","gpu":1,"state":"IN_USE","user":"bob","actual_user":"alice","type":"manual","claim_uid":null,"since":"2026-11-18T11:06:40Z","heartbeat":null,"expires":"2026-11-18T11:36:40Z","last_released":null,"note":null,"queue_id":null,"memory_used_mib":null,"error":null}
{"kind":"gpu-state","gpu":2,"state":"IN_USE","user":"k8s:ns/c","actual_user":"k8s","type":"k8s","claim_uid":"u-1","since":"2026-11-18T11:06:40Z","heartbeat":null,"expires":null,"last_released":null,"note":null,"queue_id":null,"memory_used_mib":null,"error":null}
{"kind":"gpu-state","gpu":3,"state":"AVAILABLE","user":null,"actual_user":null,"type":null,"claim_uid":null,"since":null,"heartbeat":null,"expires":null,"last_released":"2026-11-18T11:06:40Z","note":null,"queue_id":null,"memory_used_mib":null,"error":null}
{"kind":"gpu-state","gpu":4,"state":"ERROR","user":null,"actual_user":null,"type":null,"claim_uid":null,"since":null,"heartbeat":null,"expires":null,"last_released":null,"note":null,"queue_id":null,"memory_used_mib":5000,"error":"canhazgpu:gpu:4: not JSON"}
{"kind":"gpu-state","gpu":5,"state":"UNRESERVED","user":null,"actual_user":null,"type":null,"claim_uid":null,"since":null,"heartbeat":null,"expires":null,"last_released":null,"note":null,"queue_id":null,"memory_used_mib":2048,"error":null}
exit 0
gpu-reserve: canhazgpu:gpu:4: not JSON (treated as held; left as it is)
EOF2
check_output 'reserve skips GPUs in use without a reservation; -M moves the line' 'out gr -i probe reserve -g 2 -b; out gr -i probe -M 4096 reserve -g 2 -b | jq -r .gpu?' <<'EOF2'
exit 1
gpu-reserve: not enough GPUs available: requested 2, available 1 (1 in use without reservation)
5
3
EOF2
gr release -G 5 >/dev/null
check_output 'reserve -G of a GPU in use without a reservation; -f takes it' 'out gr -i probe reserve -G 5 -b; gr -i probe reserve -f -G 5 -b | jq -c "[.gpu, .op]"' <<'EOF2'
exit 1
gpu-reserve: GPU 5 is in use without reservation
[5,"reserve"]
EOF2

# Values canhazgpu could never have written: each warned about, held,
# never written over, not even by -f or cleanup.
bad_pool() {
	fresh 5
	rcli set canhazgpu:gpu:0 'not json' >/dev/null
	rcli set canhazgpu:gpu:1 '[1,2]' >/dev/null
	rcli set canhazgpu:gpu:2 '{"user":7,"type":"run"}' >/dev/null
	rcli set canhazgpu:gpu:3 '{"user":"bob","type":"manual","start_time":{"t":1}}' >/dev/null
	rcli set canhazgpu:gpu:4 '{"user":"bob","type":"lent"}' >/dev/null
}
bad_pool
keys >before
check_output 'unreadable keys: status says what is wrong with each' 'gr status 2>err | jq -c "[.gpu, .state, .error]"; cat err' <<'EOF2'
[0,"ERROR","canhazgpu:gpu:0: not JSON"]
[1,"ERROR","canhazgpu:gpu:1: not a JSON object"]
[2,"ERROR","canhazgpu:gpu:2: user is not a string"]
[3,"ERROR","canhazgpu:gpu:3: start_time is not a time"]
[4,"ERROR","canhazgpu:gpu:4: type is not run, manual or k8s"]
gpu-reserve: canhazgpu:gpu:0: not JSON (treated as held; left as it is)
gpu-reserve: canhazgpu:gpu:1: not a JSON object (treated as held; left as it is)
gpu-reserve: canhazgpu:gpu:2: user is not a string (treated as held; left as it is)
gpu-reserve: canhazgpu:gpu:3: start_time is not a time (treated as held; left as it is)
gpu-reserve: canhazgpu:gpu:4: type is not run, manual or k8s (treated as held; left as it is)
EOF2
check_output 'unreadable keys: never taken, released or cleaned' 'out gr reserve -b -f; out gr reserve -G 3 -b -f; out gr release -G 1; out gr cleanup; NOW=$((NOW + 999999)) out gr cleanup; keys | cmp - before && echo same' <<'EOF2'
exit 1
gpu-reserve: not enough GPUs available: requested 1, available 0
exit 1
gpu-reserve: GPU 3: canhazgpu:gpu:3: start_time is not a time (treated as held; left as it is)
exit 1
gpu-reserve: GPU 1 is not reserved by alice (canhazgpu:gpu:1: not a JSON object; left as it is)
gpu-reserve: nothing released
exit 0
exit 0
same
EOF2

# cleanup: run reservations without a heartbeat for more than 300 s and
# manual ones past their expiry, each with its history; k8s holds stay.
fresh 5
gr reserve -G 0 -t run >/dev/null && gr reserve -G 1 -d 10m >/dev/null && gr reserve -G 2 -d 20m >/dev/null
rcli set canhazgpu:gpu:3 '{"user":"carol","actual_user":"carol","start_time":"2026-11-18T06:00:00-05:00","last_heartbeat":"2026-11-18T06:06:40.000000001-05:00","type":"run","expiry_time":null,"last_released":null}' >/dev/null
rcli set canhazgpu:gpu:4 '{"user":"k8s:ns/c","actual_user":"k8s","start_time":1,"type":"k8s","claim_uid":"u"}' >/dev/null
check_output 'cleanup at 300 s: nothing is stale yet' 'NOW=$((NOW + 300)) out gr cleanup' <<'EOF2'
exit 0
EOF2
check_output 'cleanup at 601 s: the run reservations and the 10-minute one' 'NOW=$((NOW + 601)) out gr cleanup; rcli zrange canhazgpu:usage_history_sorted 0 -1; rcli get canhazgpu:gpu:2' <<'EOF2'
{"kind":"reservation","op":"cleanup","gpu":0,"user":"alice","actual_user":"alice","type":"run","claim_uid":null,"since":"2026-11-18T11:06:40Z","expires":null,"note":null}
{"kind":"reservation","op":"cleanup","gpu":1,"user":"alice","actual_user":"alice","type":"manual","claim_uid":null,"since":"2026-11-18T11:06:40Z","expires":"2026-11-18T11:16:40Z","note":null}
{"kind":"reservation","op":"cleanup","gpu":3,"user":"carol","actual_user":"carol","type":"run","claim_uid":null,"since":"2026-11-18T11:00:00Z","expires":null,"note":null}
exit 0
{"user":"alice","gpu_id":0,"start_time":"2026-11-18T11:06:40Z","end_time":"2026-11-18T11:16:41Z","duration_seconds":601,"reservation_type":"run"}
{"user":"alice","gpu_id":1,"start_time":"2026-11-18T11:06:40Z","end_time":"2026-11-18T11:16:41Z","duration_seconds":601,"reservation_type":"manual"}
{"user":"carol","gpu_id":3,"start_time":"2026-11-18T06:00:00-05:00","end_time":"2026-11-18T11:16:41Z","duration_seconds":1001,"reservation_type":"run"}
{"user":"alice","actual_user":"alice","start_time":1795000000,"type":"manual","expiry_time":1795001200}
EOF2
check_output 'status cleans first, then shows the k8s hold kept' 'NOW=$((NOW + 99999)) gr status | jq -c "[.gpu, .state, .last_released]"' <<'EOF2'
[0,"AVAILABLE","2026-11-18T11:16:41Z"]
[1,"AVAILABLE","2026-11-18T11:16:41Z"]
[2,"AVAILABLE","2026-11-19T14:53:19Z"]
[3,"AVAILABLE","2026-11-18T11:16:41Z"]
[4,"IN_USE",null]
EOF2

# ---- the connection, the lock ----

fresh 2
keys >before
check_output 'Redis unreachable: 75, naming the address' 'out gr -a 127.0.0.1:1 status; out gr -a 127.0.0.1:1 reserve; K8SHAZGPU_REDIS=127.0.0.1:1 out gr release' <<'EOF2'
exit 75
gpu-reserve: redis 127.0.0.1:1: Connection refused
exit 75
gpu-reserve: redis 127.0.0.1:1: Connection refused
exit 75
gpu-reserve: redis 127.0.0.1:1: Connection refused
EOF2
rcli set canhazgpu:allocation_lock locked ex 10 >/dev/null
check_output 'a lock held by someone else: 75 after -L seconds, the lock left as it is' 'out gr -L 0.3 reserve; rcli get canhazgpu:allocation_lock; rcli del canhazgpu:allocation_lock >/dev/null; keys | cmp - before && echo same' <<'EOF2'
exit 75
gpu-reserve: canhazgpu:allocation_lock is held by someone else (waited 0.3 s); left as it is
locked
same
EOF2
check_output 'our lock is gone after each allocation' 'gr reserve >/dev/null; rcli exists canhazgpu:allocation_lock' <<'EOF2'
0
EOF2
printf 'wr0ng\nsecond line\n' >badpass && printf 's3cret\n' >goodpass
rcli config set requirepass s3cret >/dev/null
check_output 'passwords: none, a wrong one, the right one from a file or the environment; never shown' 'out gr status; out gr -P badpass status; gr -P goodpass status | jq -r .state; K8SHAZGPU_REDIS_PASSWORD=s3cret gr status | jq -r .state' <<EOF2
exit 1
gpu-reserve: redis 127.0.0.1:$REDIS_PORT: authentication failed: NOAUTH Authentication required.
exit 1
gpu-reserve: redis 127.0.0.1:$REDIS_PORT: authentication failed: WRONGPASS invalid username-password pair or user is disabled.
IN_USE
AVAILABLE
IN_USE
AVAILABLE
EOF2
redis-cli -h 127.0.0.1 -p "$REDIS_PORT" -a s3cret --no-auth-warning config set requirepass '' >/dev/null
check_output 'a database other than 0' 'gr -D 3 init -g 1 >/dev/null; K8SHAZGPU_REDIS_DB=3 gr reserve | jq -r .gpu; rcli -n 3 get canhazgpu:gpu:0 | jq -r .user; rcli -n 3 flushdb' <<'EOF2'
0
alice
OK
EOF2
redis-server --port 0 --unixsocket "$SCRATCH/r.sock" --save '' --appendonly no \
	--daemonize yes --pidfile "$SCRATCH/r2.pid" --logfile "$SCRATCH/r2.log" --dir "$SCRATCH" >/dev/null
trap 'stop_redis; [ ! -s "$SCRATCH/r2.pid" ] || kill "$(cat "$SCRATCH/r2.pid")"' EXIT
eventually 10 redis-cli -s "$SCRATCH/r.sock" ping
check_output 'a unix socket, as a path or unix:path' 'gr -a "$SCRATCH/r.sock" init -g 1 && gr -a "unix:$SCRATCH/r.sock" reserve | jq -r .user && redis-cli -s "$SCRATCH/r.sock" dbsize' <<'EOF2'
{"kind":"pool","gpu_count":1,"provider":"nvidia"}
alice
3
EOF2

# ---- Kubernetes: k8s reservations and k8s-sync ----

fresh 4
check_output 'reserve -t k8s: the hold and its claim keys' 'out gr reserve -t k8s -c uid-1 -u k8s:ns/claim -g 2; keys' <<EOF2
{"kind":"reservation","op":"reserve","gpu":0,"user":"k8s:ns/claim","actual_user":"alice","type":"k8s","claim_uid":"uid-1","since":"$T0","expires":null,"note":null}
{"kind":"reservation","op":"reserve","gpu":2,"user":"k8s:ns/claim","actual_user":"alice","type":"k8s","claim_uid":"uid-1","since":"$T0","expires":null,"note":null}
exit 0
canhazgpu:gpu:0 {"user":"k8s:ns/claim","actual_user":"alice","start_time":1795000000,"type":"k8s","claim_uid":"uid-1"}
canhazgpu:gpu:2 {"user":"k8s:ns/claim","actual_user":"alice","start_time":1795000000,"type":"k8s","claim_uid":"uid-1"}
canhazgpu:gpu_count 4
canhazgpu:k8s:claim:uid-1:gpu:0 {"claim_uid":"uid-1","namespace":"ns","reserved_at":"$T0"}
canhazgpu:k8s:claim:uid-1:gpu:2 {"claim_uid":"uid-1","namespace":"ns","reserved_at":"$T0"}
canhazgpu:k8s:claim:uid-1:gpus 0 2 
canhazgpu:provider nvidia
EOF2
check_output 'release -c: every GPU of the claim and its keys, with history' 'NOW=$((NOW + 60)) out gr release -c uid-1; keys' <<'EOF2'
{"kind":"reservation","op":"release","gpu":0,"user":"k8s:ns/claim","actual_user":"alice","type":"k8s","claim_uid":"uid-1","since":"2026-11-18T11:06:40Z","expires":null,"note":null}
{"kind":"reservation","op":"release","gpu":2,"user":"k8s:ns/claim","actual_user":"alice","type":"k8s","claim_uid":"uid-1","since":"2026-11-18T11:06:40Z","expires":null,"note":null}
exit 0
canhazgpu:gpu:0 {"start_time":null,"last_heartbeat":null,"expiry_time":null,"last_released":"2026-11-18T11:07:40Z"}
canhazgpu:gpu:2 {"start_time":null,"last_heartbeat":null,"expiry_time":null,"last_released":"2026-11-18T11:07:40Z"}
canhazgpu:gpu_count 4
canhazgpu:provider nvidia
canhazgpu:usage_history_sorted {"user":"k8s:ns/claim","gpu_id":0,"start_time":"2026-11-18T11:06:40Z","end_time":"2026-11-18T11:07:40Z","duration_seconds":60,"reservation_type":"k8s"} 1795000060 {"user":"k8s:ns/claim","gpu_id":2,"start_time":"2026-11-18T11:06:40Z","end_time":"2026-11-18T11:07:40Z","duration_seconds":60,"reservation_type":"k8s"} 1795000060 
EOF2
check_output 'release -c of a claim with nothing held' 'out gr release -c uid-9' <<'EOF2'
exit 0
gpu-reserve: no GPUs held for claim uid-9
EOF2

fresh 5
gr reserve -G 1 -u bob >/dev/null
rcli set canhazgpu:gpu:3 '{"user":"carol","actual_user":"carol","start_time":1,"type":"run","last_heartbeat":1}' >/dev/null
rcli set canhazgpu:gpu:4 '{broken' >/dev/null
cat >holds <<'EOF2'
{"kind":"hold","gpu":0,"claim_uid":"u-a","user":"k8s:ns/a","namespace":"ns","name":"a","pods":["pa"]}
{"kind":"hold","gpu":1,"claim_uid":"u-b","user":"k8s:ns/b","namespace":"ns","name":"b","pods":["pb","pc"]}
{"kind":"hold","gpu":2,"claim_uid":"u-a","namespace":"ns","name":"a","pods":[]}
{"kind":"hold","gpu":3,"claim_uid":"u-c","namespace":"ns","name":"c"}
{"kind":"hold","gpu":4,"claim_uid":"u-d","namespace":"ns","name":"d"}
{"kind":"hold","gpu":7,"claim_uid":"u-e","namespace":"ns","name":"e"}
{"kind":"flush"}
EOF2
check_output 'k8s-sync: takes what is free (a stale run hold cleaned), reports the rest as conflicts' 'out gr k8s-sync <holds; keys | grep -v usage_history' <<EOF2
{"kind":"reservation","op":"hold","gpu":0,"user":"k8s:ns/a","actual_user":"k8s","type":"k8s","claim_uid":"u-a","since":"$T0","expires":null,"note":null}
{"kind":"conflict","gpu":1,"claim_uid":"u-b","namespace":"ns","name":"b","pods":["pb","pc"],"holder":"bob","holder_type":"manual","since":"$T0"}
{"kind":"reservation","op":"hold","gpu":2,"user":"k8s:ns/a","actual_user":"k8s","type":"k8s","claim_uid":"u-a","since":"$T0","expires":null,"note":null}
{"kind":"reservation","op":"hold","gpu":3,"user":"k8s:ns/c","actual_user":"k8s","type":"k8s","claim_uid":"u-c","since":"$T0","expires":null,"note":null}
{"kind":"conflict","gpu":4,"claim_uid":"u-d","namespace":"ns","name":"d","pods":[],"holder":null,"holder_type":"error","since":null}
{"kind":"flush"}
exit 1
gpu-reserve: <stdin>:6: GPU 7 is out of range (0-4)
canhazgpu:gpu:0 {"user":"k8s:ns/a","actual_user":"k8s","start_time":1795000000,"type":"k8s","claim_uid":"u-a"}
canhazgpu:gpu:1 {"user":"bob","actual_user":"alice","start_time":1795000000,"type":"manual","expiry_time":1795001800}
canhazgpu:gpu:2 {"user":"k8s:ns/a","actual_user":"k8s","start_time":1795000000,"type":"k8s","claim_uid":"u-a"}
canhazgpu:gpu:3 {"user":"k8s:ns/c","actual_user":"k8s","start_time":1795000000,"type":"k8s","claim_uid":"u-c"}
canhazgpu:gpu:4 {broken
canhazgpu:gpu_count 5
canhazgpu:k8s:claim:u-a:gpu:0 {"claim_uid":"u-a","namespace":"ns","pod_name":"pa","reserved_at":"$T0"}
canhazgpu:k8s:claim:u-a:gpu:2 {"claim_uid":"u-a","namespace":"ns","reserved_at":"$T0"}
canhazgpu:k8s:claim:u-a:gpus 0 2 
canhazgpu:k8s:claim:u-c:gpu:3 {"claim_uid":"u-c","namespace":"ns","reserved_at":"$T0"}
canhazgpu:k8s:claim:u-c:gpus 3 
canhazgpu:provider nvidia
EOF2
check_output 'k8s-sync again: nothing changes; the conflicts are said again' 'keys >k1; out gr k8s-sync <holds; keys | cmp - k1 && echo same' <<'EOF2'
{"kind":"conflict","gpu":1,"claim_uid":"u-b","namespace":"ns","name":"b","pods":["pb","pc"],"holder":"bob","holder_type":"manual","since":"2026-11-18T11:06:40Z"}
{"kind":"conflict","gpu":4,"claim_uid":"u-d","namespace":"ns","name":"d","pods":[],"holder":null,"holder_type":"error","since":null}
{"kind":"flush"}
exit 1
gpu-reserve: <stdin>:6: GPU 7 is out of range (0-4)
same
EOF2
check_output 'k8s-sync: claims gone are released, batch by batch; EOF ends a batch' 'printf "%s\n" "{\"kind\":\"hold\",\"gpu\":2,\"claim_uid\":\"u-a\",\"namespace\":\"ns\",\"name\":\"a\"}" "{\"kind\":\"flush\"}" "{\"kind\":\"flush\"}" "{\"kind\":\"hold\",\"gpu\":1,\"claim_uid\":\"u-b\",\"namespace\":\"ns\",\"name\":\"b\"}" | NOW=$((NOW + 30)) out gr k8s-sync; rcli --scan --pattern "canhazgpu:k8s:*"' <<'EOF2'
{"kind":"reservation","op":"release","gpu":0,"user":"k8s:ns/a","actual_user":"k8s","type":"k8s","claim_uid":"u-a","since":"2026-11-18T11:06:40Z","expires":null,"note":null}
{"kind":"reservation","op":"release","gpu":3,"user":"k8s:ns/c","actual_user":"k8s","type":"k8s","claim_uid":"u-c","since":"2026-11-18T11:06:40Z","expires":null,"note":null}
{"kind":"flush"}
{"kind":"reservation","op":"release","gpu":2,"user":"k8s:ns/a","actual_user":"k8s","type":"k8s","claim_uid":"u-a","since":"2026-11-18T11:06:40Z","expires":null,"note":null}
{"kind":"flush"}
{"kind":"conflict","gpu":1,"claim_uid":"u-b","namespace":"ns","name":"b","pods":[],"holder":"bob","holder_type":"manual","since":"2026-11-18T11:06:40Z"}
{"kind":"flush"}
exit 0
EOF2
check_output 'k8s-sync: a bad record is skipped, and its claim kept' 'gr k8s-sync <holds >/dev/null 2>&1; printf "%s\n" "{\"kind\":\"hold\",\"gpu\":\"x\",\"claim_uid\":\"u-a\"}" "{\"kind\":\"hold\",\"gpu\":3,\"namespace\":\"ns\",\"name\":\"c\"}" "{\"kind\":\"hold\",\"gpu\":3,\"claim_uid\":\"u-c\",\"namespace\":\"ns\",\"name\":\"c\"}" "{\"kind\":\"flush\"}" | out gr k8s-sync; rcli --scan --pattern "canhazgpu:k8s:*gpus" | sort' <<'EOF2'
{"kind":"flush"}
exit 1
gpu-reserve: <stdin>:1: gpu: not a GPU index
gpu-reserve: <stdin>:2: claim_uid: not a string
canhazgpu:k8s:claim:u-a:gpus
canhazgpu:k8s:claim:u-c:gpus
EOF2
check_output 'k8s-sync: a line that is not JSON keeps every claim' 'printf "%s\n" "{nope" "{\"kind\":\"flush\"}" | out gr k8s-sync; rcli --scan --pattern "canhazgpu:k8s:*gpus" | sort' <<'EOF2'
{"kind":"flush"}
exit 1
gpu-reserve: <stdin>:1: invalid JSON at column 5: string or '}' expected near 'nope'
canhazgpu:k8s:claim:u-a:gpus
canhazgpu:k8s:claim:u-c:gpus
EOF2
check_output 'reserve skips k8s holds' 'gr status | jq -c "[.gpu, .state, .type]"' <<'EOF2'
[0,"IN_USE","k8s"]
[1,"IN_USE","manual"]
[2,"IN_USE","k8s"]
[3,"IN_USE","k8s"]
[4,"ERROR",null]
EOF2

# ---- mark ----

fresh 6
gr reserve -G 0 -n "for the demo" >/dev/null
gr reserve -G 1 -t k8s -c u-1 -u k8s:ns/c >/dev/null
rcli set canhazgpu:gpu:2 '{"user":"bob","actual_user":"bob","start_time":1,"type":"run","last_heartbeat":1}' >/dev/null
rcli set canhazgpu:gpu:3 '[]' >/dev/null
gr reserve -G 4 -t run -u carol >/dev/null
cat >batch <<'EOF2'
{"kind":"gpu","index":0,"uuid":"GPU-0","memory_used_mib":0,"mig":null}
{"kind":"gpu","index":0,"uuid":"MIG-0a","memory_used_mib":null,"mig":{"profile":"1g.10gb"}}
{"kind":"gpu","index":1,"uuid":"GPU-1","memory_used_mib":30000,"mig":null}
{"kind":"gpu","index":2,"uuid":"GPU-2","memory_used_mib":5000,"mig":null}
{"kind":"gpu","index":2,"uuid":"MIG-2a","memory_used_mib":null,"mig":{"profile":"1g.10gb"}}
{"kind":"node","name":"n1","held":"left alone"}
{"kind":"gpu","index":3,"uuid":"GPU-3","memory_used_mib":0,"mig":null,"held":{"stale":true}}
{"kind":"gpu","index":4,"uuid":"GPU-4","memory_used_mib":0,"mig":null}
{"kind":"gpu","index":5,"uuid":"GPU-5","memory_used_mib":0,"mig":null}
{"kind":"flush"}
EOF2
cat >marked <<EOF2
{"kind":"gpu","index":0,"uuid":"GPU-0","memory_used_mib":0,"mig":null,"held":{"user":"alice","actual_user":"alice","type":"manual","since":"$T0","expires":"2026-11-18T11:36:40Z","note":"for the demo"}}
{"kind":"gpu","index":0,"uuid":"MIG-0a","memory_used_mib":null,"mig":{"profile":"1g.10gb"},"held":{"user":"alice","actual_user":"alice","type":"manual","since":"$T0","expires":"2026-11-18T11:36:40Z","note":"for the demo"}}
{"kind":"gpu","index":1,"uuid":"GPU-1","memory_used_mib":30000,"mig":null}
{"kind":"gpu","index":2,"uuid":"GPU-2","memory_used_mib":5000,"mig":null,"held":{"user":null,"actual_user":null,"type":"unreserved","since":null,"expires":null,"note":null}}
{"kind":"gpu","index":2,"uuid":"MIG-2a","memory_used_mib":null,"mig":{"profile":"1g.10gb"},"held":{"user":null,"actual_user":null,"type":"unreserved","since":null,"expires":null,"note":null}}
{"kind":"node","name":"n1","held":"left alone"}
{"kind":"gpu","index":3,"uuid":"GPU-3","memory_used_mib":0,"mig":null,"held":{"user":null,"actual_user":null,"type":"error","since":null,"expires":null,"note":null}}
{"kind":"gpu","index":4,"uuid":"GPU-4","memory_used_mib":0,"mig":null,"held":{"user":"carol","actual_user":"alice","type":"run","since":"$T0","expires":null,"note":null}}
{"kind":"gpu","index":5,"uuid":"GPU-5","memory_used_mib":0,"mig":null}
{"kind":"flush"}
EOF2
check_output 'mark: host holds, MIG devices by their parent, use without a reservation, unreadable keys; k8s holds and stale ones are free' 'out gr mark <batch' <<EOF2
$(cat marked)
exit 0
gpu-reserve: canhazgpu:gpu:3: not a JSON object (treated as held; left as it is)
EOF2
check_output 'mark: batch by batch; the input'"'"'s end ends the last; a bad line is skipped' '{ cat batch; echo "{bad"; head -1 batch; } | NOW=$((NOW + 1801)) out gr -M 100000 mark | grep -c held' <<'EOF2'
3
EOF2
check_output 'mark: Redis unreachable is 75, never unmarked records' 'out gr -a 127.0.0.1:1 mark <batch' <<'EOF2'
exit 75
gpu-reserve: redis 127.0.0.1:1: Connection refused
EOF2

# mark -w: the last batch again whenever its marks change; keyspace
# events wake it (start_redis turns them on), else it polls.
lines() { test "$(wc -l <"$1")" -eq "$2"; }
mark_watch() {
	rm -f in && mkfifo in || return 1
	K8SHAZGPU_NOW=$NOW gpu-reserve mark -w <in >mw.out 2>mw.err &
	mw=$!
	exec 3>in
	cat batch >&3
	eventually 10 lines mw.out 10 || return 1
	gr reserve -G 5 -u dave >/dev/null
	eventually 10 lines mw.out 20 || return 1
	gr heartbeat -G 4 -u carol >/dev/null && gr release -G 0 >/dev/null
	eventually 10 lines mw.out 30 || return 1
	exec 3>&-
	wait $mw
	echo "exit $?"
	sed -n '11,20p' mw.out | cmp - marked2 && sed -n '21,30p' mw.out | cmp - marked3 && echo as-expected
	cat mw.err
}
sed 's/"uuid":"GPU-5","memory_used_mib":0,"mig":null}/&/' marked |
	sed '/"GPU-5"/s/}$/,"held":{"user":"dave","actual_user":"alice","type":"manual","since":"'$T0'","expires":"2026-11-18T11:36:40Z","note":null}}/' >marked2
sed '/"GPU-0"\|"MIG-0a"/s/,"held":.*}}$/}/' marked2 >marked3
check_output 'mark -w on keyspace events' 'mark_watch' <<'EOF2'
exit 0
as-expected
gpu-reserve: canhazgpu:gpu:3: not a JSON object (treated as held; left as it is)
EOF2
rcli config set notify-keyspace-events '' >/dev/null
gr release -G 5 -u dave >/dev/null && gr reserve -G 0 -n "for the demo" >/dev/null
check_output 'mark -w polls when keyspace events are off' 'mark_watch' <<EOF2
exit 0
as-expected
gpu-reserve: redis $REDIS: keyspace events are off; polling every 2 s (keyspace events wake us at once: CONFIG SET notify-keyspace-events K\$g)
gpu-reserve: canhazgpu:gpu:3: not a JSON object (treated as held; left as it is)
EOF2
rcli config set notify-keyspace-events 'K$g' >/dev/null

# ---- watch ----

subscribed() { test "$(rcli pubsub numpat)" -ge 1; }
lines() { test "$(wc -l <"$1")" -ge "$2"; }
# The watch lives until the test has seen what it waits for (no window of
# its own shorter than the waits around it), then is stopped; -t alone is
# checked apart.
watch_test() {
	K8SHAZGPU_NOW=$NOW gpu-reserve watch -t 600 >w.out 2>w.err &
	w=$!
	eventually 30 subscribed || { kill $w; return 1; }
	rcli set canhazgpu:gpu:0 x >/dev/null && rcli del canhazgpu:gpu:1 >/dev/null &&
		rcli set canhazgpu:other y >/dev/null && rcli set canhazgpu:gpu:2 z >/dev/null
	eventually 30 lines w.out 3
	kill $w
	wait $w
	cat w.out w.err
}
check_output 'watch: a line per change of a GPU key, none for other keys' 'watch_test' <<'EOF2'
{"kind":"changed","key":"canhazgpu:gpu:0"}
{"kind":"changed","key":"canhazgpu:gpu:1"}
{"kind":"changed","key":"canhazgpu:gpu:2"}
EOF2
check_output 'watch -t: exit 0 after that many seconds' 'K8SHAZGPU_NOW=$NOW gpu-reserve watch -t 1; echo "exit $?"' <<'EOF2'
exit 0
EOF2

# ---- the queue ----

held_by() { test "$(rcli get canhazgpu:gpu:"$1" | jq -r .user)" = "$2"; }
fresh 3
gr reserve -g 3 >/dev/null
# (gpu-reserve itself in the background, not the gr function: $! must be
# its process)
K8SHAZGPU_NOW=$NOW gpu-reserve reserve -u bob -g 2 -w 60s >q1.out 2>q1.err &
q1=$!
eventually 10 queued 1
id1=$(rcli zrange canhazgpu:queue 0 0)
check_output 'a blocked request waits in canhazgpu'"'"'s queue' 'gr queue | sed "s/$id1/ID/"; rcli get "canhazgpu:queue:entry:$id1" | sed "s/$id1/ID/"; rcli zscore canhazgpu:queue "$id1"' <<'EOF2'
{"kind":"queue-entry","position":1,"id":"ID","user":"bob","actual_user":"alice","requested":2,"requested_ids":null,"allocated":[],"type":"manual","enqueued":"2026-11-18T11:06:40Z","heartbeat":"2026-11-18T11:06:40Z","waiting_s":0,"wait_timeout":"2026-11-18T11:07:40Z"}
{"id":"ID","user":"bob","actual_user":"alice","requested_count":2,"allocated_gpus":[],"reservation_type":"manual","expiry_duration":1800000000000,"enqueue_time":"2026-11-18T11:06:40Z","last_heartbeat":"2026-11-18T11:06:40Z","wait_timeout":"2026-11-18T11:07:40Z"}
1.795e+18
EOF2
gr release -G 2 >/dev/null
eventually 10 held_by 2 bob
check_output 'the head of the queue takes GPUs as they come, marked with its id' 'gr status | jq -c "[.gpu, .user, .queue_id]" | sed "s/$id1/ID/"; rcli get canhazgpu:gpu:2 | sed "s/$id1/ID/"; rcli get "canhazgpu:queue:entry:$id1" | jq -c .allocated_gpus; out gr reserve -u carol -b' <<EOF2
[0,"alice",null]
[1,"alice",null]
[2,"bob","ID"]
{"user":"bob","actual_user":"alice","start_time":"$T0","last_heartbeat":"$T0","type":"manual","expiry_time":"2026-11-18T11:36:40Z","last_released":null,"partial_queue_id":"ID"}
[2]
exit 1
gpu-reserve: not enough GPUs available: requested 1, available 0
EOF2
gr release -G 0 >/dev/null
wait $q1
echo "exit $?" >q1.st
check_output 'once it has all, the reservation is final and the entry gone' 'cat q1.st q1.out q1.err; rcli get canhazgpu:gpu:2; rcli exists canhazgpu:queue "canhazgpu:queue:entry:$id1"' <<EOF2
exit 0
{"kind":"reservation","op":"reserve","gpu":0,"user":"bob","actual_user":"alice","type":"manual","claim_uid":null,"since":"$T0","expires":"2026-11-18T11:36:40Z","note":null}
{"kind":"reservation","op":"reserve","gpu":2,"user":"bob","actual_user":"alice","type":"manual","claim_uid":null,"since":"$T0","expires":"2026-11-18T11:36:40Z","note":null}
gpu-reserve: queued at position 1, waiting for 2 GPUs
{"user":"bob","actual_user":"alice","start_time":"$T0","last_heartbeat":"$T0","type":"manual","expiry_time":"2026-11-18T11:36:40Z","last_released":null}
0
EOF2
gr release -u bob >/dev/null
K8SHAZGPU_NOW=$NOW gpu-reserve reserve -u carol -G 1,2 -t run >q2.out 2>q2.err &
q2=$!
eventually 10 held_by 2 carol
check_output 'as canhazgpu'"'"'s, a new request that fits takes a free GPU, queue or not' 'out gr reserve -u dave -b' <<EOF2
{"kind":"reservation","op":"reserve","gpu":0,"user":"dave","actual_user":"alice","type":"manual","claim_uid":null,"since":"$T0","expires":"2026-11-18T11:36:40Z","note":null}
exit 0
EOF2
K8SHAZGPU_NOW=$NOW gpu-reserve reserve -u dave -w 1s >q3.out 2>q3.err
echo "exit $?" >q3.st
check_output 'a wait that runs out leaves the queue' 'cat q3.st q3.out q3.err; queued 1 && echo one-left' <<'EOF2'
exit 1
gpu-reserve: queued at position 2, waiting for 1 GPU
gpu-reserve: gave up waiting for 1 GPU after 1 s; left the queue
one-left
EOF2
id2=$(rcli zrange canhazgpu:queue 0 0)
kill -TERM $q2
# (the shell's "Terminated" notice kept out of the TAP stream)
{ wait $q2; echo "exit $?" >q2.st; } 2>/dev/null
check_output 'SIGTERM while queued: its GPUs freed with history, the entry gone' 'cat q2.st q2.out q2.err; rcli get canhazgpu:gpu:2; rcli exists canhazgpu:queue "canhazgpu:queue:entry:$id2"; rcli zrangebyscore canhazgpu:usage_history_sorted -inf +inf | grep carol' <<EOF2
exit 143
gpu-reserve: queued at position 1, waiting for 2 GPUs
{"start_time":null,"last_heartbeat":null,"expiry_time":null,"last_released":"$T0"}
0
{"user":"carol","gpu_id":2,"start_time":"$T0","end_time":"$T0","duration_seconds":0,"reservation_type":"run"}
EOF2
rcli set canhazgpu:queue:entry:old '{"id":"old","user":"x","actual_user":"x","requested_count":1,"allocated_gpus":[0],"reservation_type":"run","enqueue_time":"2026-11-18T11:00:00Z","last_heartbeat":"2026-11-18T11:04:40Z"}' >/dev/null
rcli zadd canhazgpu:queue 1 old >/dev/null
rcli set canhazgpu:gpu:0 '{"user":"x","actual_user":"x","start_time":"2026-11-18T11:00:00Z","last_heartbeat":"2026-11-18T11:06:00Z","type":"run","expiry_time":null,"last_released":null,"partial_queue_id":"old"}' >/dev/null
check_output 'a queue entry without a heartbeat for 120 s is dropped, its GPUs freed' 'gr queue | jq -c "[.id, .allocated, .waiting_s]"; NOW=$((NOW + 1)) out gr cleanup; rcli exists canhazgpu:queue canhazgpu:queue:entry:old' <<'EOF2'
["old",[0],400]
{"kind":"reservation","op":"cleanup","gpu":0,"user":"x","actual_user":"x","type":"run","claim_uid":null,"since":"2026-11-18T11:00:00Z","expires":null,"note":null}
exit 0
0
EOF2

# ---- run ----

fresh 2
check_output 'run: CUDA_VISIBLE_DEVICES replaced, the reservation held while it runs, the exit status passed on, then released' 'CUDA_VISIBLE_DEVICES=7 out gr run -g 2 -- sh -c "echo \$CUDA_VISIBLE_DEVICES; gpu-reserve status | jq -c \"[.gpu, .state, .type]\"; exit 3"; keys | grep "^canhazgpu:gpu:"' <<EOF2
0,1
[0,"IN_USE","run"]
[1,"IN_USE","run"]
exit 3
Reserved 2 GPU(s): [0 1] for command execution
canhazgpu:gpu:0 {"start_time":null,"last_heartbeat":null,"expiry_time":null,"last_released":"$T0"}
canhazgpu:gpu:1 {"start_time":null,"last_heartbeat":null,"expiry_time":null,"last_released":"$T0"}
EOF2
check_output 'run: a command killed by a signal is 128 + the signal; one not found 127' 'out gr run -G 1 -- sh -c "kill -TERM \$\$"; out gr run -- no-such-command-here' <<'EOF2'
exit 143
Reserved 1 GPU(s): [1] for command execution
exit 127
Reserved 1 GPU(s): [0] for command execution
gpu-reserve: no-such-command-here: No such file or directory
EOF2
run_signals() {
	K8SHAZGPU_NOW=$NOW gpu-reserve run -G 0 -- sh -c 'trap "echo got INT; exit 5" INT; echo started; while :; do sleep 0.1; done' >r.out 2>r.err &
	r=$!
	eventually 10 grep -q started r.out || return 1
	kill -HUP $r && sleep 0.5 && kill -0 $r && echo survived-hup
	kill -INT $r
	wait $r
	echo "exit $?"
	cat r.out r.err
	rcli get canhazgpu:gpu:0 | jq -r .last_released
}
check_output 'run: SIGHUP ignored, SIGINT passed on to the command' 'run_signals' <<EOF2
survived-hup
exit 5
started
got INT
Reserved 1 GPU(s): [0] for command execution
$T0
EOF2
gr reserve -g 2 -u bob -b >/dev/null
check_output 'run -b with nothing free; run without --' 'out gr run -b -- true; out gr run true' <<'EOF2'
exit 1
gpu-reserve: not enough GPUs available: requested 1, available 0
exit 2
gpu-reserve: run: -- and a command needed
usage: gpu-reserve [-a addr] [-D db] [-P passfile] [-L lockwait] [-T timeout] [-i gpufile] [-M mib] command [options] [args]
EOF2

# ---- report ----

fresh 3
rcli zadd canhazgpu:usage_history_sorted 1794990000 '{"user":"alice","gpu_id":0,"start_time":"2026-11-18T04:20:00-03:00","end_time":"2026-11-18T08:20:00Z","duration_seconds":3600,"reservation_type":"run"}' >/dev/null
rcli zadd canhazgpu:usage_history_sorted 1794994200 '{"user":"bob","gpu_id":1,"start_time":"2026-11-18T09:00:00Z","end_time":"2026-11-18T09:30:00Z","duration_seconds":1800,"reservation_type":"manual"}' >/dev/null
rcli zadd canhazgpu:usage_history_sorted 1790000000 '{"user":"carol","gpu_id":1,"start_time":"2026-09-21T00:00:00Z","end_time":"2026-09-21T15:33:20Z","duration_seconds":9000,"reservation_type":"manual"}' >/dev/null
rcli zadd canhazgpu:usage_history_sorted 1794999000 'not a record' >/dev/null
rcli set canhazgpu:gpu:2 '{"user":"bob","actual_user":"bob","start_time":1794998200,"type":"k8s","claim_uid":"u"}' >/dev/null
check_output 'report: GPU-hours per user from the history and what is held now; a member that is no record named' 'out gr report; out gr report -d 0.05' <<'EOF2'
{"kind":"usage","user":"alice","gpu_hours":1.0,"percentage":50.0,"run_count":1,"manual_count":0,"k8s_count":0}
{"kind":"usage","user":"bob","gpu_hours":1.0,"percentage":50.0,"run_count":0,"manual_count":1,"k8s_count":1}
{"kind":"usage-total","gpu_hours":2.0,"reservations":3,"users":2,"start":"2026-10-19T11:06:40Z","end":"2026-11-18T11:06:40Z","days":30.0}
exit 1
gpu-reserve: canhazgpu:usage_history_sorted: record 3 of the window: not a JSON object; left out
{"kind":"usage","user":"bob","gpu_hours":0.5,"percentage":100.0,"run_count":0,"manual_count":0,"k8s_count":1}
{"kind":"usage-total","gpu_hours":0.5,"reservations":1,"users":1,"start":"2026-11-18T09:54:40Z","end":"2026-11-18T11:06:40Z","days":0.05}
exit 1
gpu-reserve: canhazgpu:usage_history_sorted: record 1 of the window: not a JSON object; left out
EOF2

# ---- request records ----

fresh 3
cat >requests <<'EOF2'
{"op":"reserve","gpus":2,"type":"run","user":"svc","actual_user":"ops","note":"batch"}
{"op":"reserve","gpu_ids":[2],"duration":"2h30m"}
{"op":"reserve","gpu_ids":[2],"duration":"90m"}
{"op":"reserve","gpus":1}
{"op":"heartbeat","gpu_ids":[0,2],"user":"svc"}
{"op":"release","gpu_ids":[1],"user":"svc"}
{"op":"release","claim_uid":7}
{"op":"status"}
{"op":"launch"}
[1]
{"op":"cleanup"}
EOF2
check_output 'request records: each run as its command; bad ones named by line, skipped, status 1' 'gr <requests >o.out 2>o.err; echo "exit $?"; jq -c "[.kind, .op // .state, .gpu, .user]" o.out; cat o.err' <<'EOF2'
exit 1
["reservation","reserve",0,"svc"]
["reservation","reserve",1,"svc"]
["reservation","reserve",2,"alice"]
["reservation","heartbeat",0,"svc"]
["reservation","release",1,"svc"]
["gpu-state","IN_USE",0,"svc"]
["gpu-state","AVAILABLE",1,null]
["gpu-state","IN_USE",2,"alice"]
gpu-reserve: <stdin>:2: duration: not a duration: 2h30m (use e.g. 90m, 1.5h)
gpu-reserve: <stdin>:4: not enough GPUs available: requested 1, available 0
gpu-reserve: GPU 2 reservation lost (now held by alice)
gpu-reserve: <stdin>:7: claim_uid: not a string
gpu-reserve: <stdin>:9: op: unknown: launch
gpu-reserve: <stdin>:10: op: missing (reserve, release, heartbeat, prepare, status or cleanup)
EOF2
check_output 'request records: "-" reads them too' 'echo "{\"op\":\"release\",\"gpu_ids\":[2]}" | gr - | jq -c "[.op, .gpu]"' <<'EOF2'
["release",2]
EOF2

# ---- usage ----

check_output 'usage: unknown command, option, missing argument; -h' 'out gr frob; out gr -Z status; out gr reserve -g; out gr status extra; gr -h | head -1' <<'EOF2'
exit 2
gpu-reserve: unknown command frob
usage: gpu-reserve [-a addr] [-D db] [-P passfile] [-L lockwait] [-T timeout] [-i gpufile] [-M mib] command [options] [args]
exit 2
gpu-reserve: unknown option -Z
usage: gpu-reserve [-a addr] [-D db] [-P passfile] [-L lockwait] [-T timeout] [-i gpufile] [-M mib] command [options] [args]
exit 2
gpu-reserve: -g needs an argument
usage: gpu-reserve [-a addr] [-D db] [-P passfile] [-L lockwait] [-T timeout] [-i gpufile] [-M mib] command [options] [args]
exit 2
gpu-reserve: status: unexpected argument extra
usage: gpu-reserve [-a addr] [-D db] [-P passfile] [-L lockwait] [-T timeout] [-i gpufile] [-M mib] command [options] [args]
usage: gpu-reserve [-a addr] [-D db] [-P passfile] [-L lockwait] [-T timeout] [-i gpufile] [-M mib] command [options] [args]
EOF2

# ---- run -l and -o, queue -e, report whole records, -w 0 ----

fresh 2
check_output 'run -l 0: SIGINT at once, the command'"'"'s status; -o: canhazgpu'"'"'s line on stdout, 1 for a command not found' \
	'out gr run -G 0 -l 0 -- sleep 5; out gr run -o -G 0 -- no-such-command-here; keys | grep "^canhazgpu:gpu:"' <<EOF2
exit 130
Reserved 1 GPU(s): [0] for command execution (timeout: 0h 0m 0s)
gpu-reserve: timeout of 0h 0m 0s reached; SIGINT sent to the command (SIGKILL in 30 s if it is still there)
Reserved 1 GPU(s): [0] for command execution
exit 1
gpu-reserve: no-such-command-here: command not found
canhazgpu:gpu:0 {"start_time":null,"last_heartbeat":null,"expiry_time":null,"last_released":"$T0"}
EOF2
check_output 'run -l: seconds from 0 to 315360000' 'out gr run -l -1 -- true' <<'EOF2'
exit 2
gpu-reserve: -l: not a number from 0 to 3.1536e+08: -1
usage: gpu-reserve [-a addr] [-D db] [-P passfile] [-L lockwait] [-T timeout] [-i gpufile] [-M mib] command [options] [args]
EOF2
gr reserve -G 0,1 -u bob >/dev/null
check_output 'reserve -w 0: one try in the queue, then given up' 'out gr reserve -w 0; rcli exists canhazgpu:queue' <<'EOF2'
exit 1
gpu-reserve: queued at position 1, waiting for 1 GPU
gpu-reserve: gave up waiting for 1 GPU after 0 s; left the queue
0
EOF2

fresh 2
rcli zadd canhazgpu:queue 1 q1 2 q2 >/dev/null
rcli set canhazgpu:queue:entry:q1 '{"id":"q1","user":"bob","actual_user":"bob","requested_count":1,"allocated_gpus":[],"reservation_type":"run","note":"n","enqueue_time":"2026-11-18T13:06:30.500+02:00","last_heartbeat":"2026-11-18T11:06:40Z","wait_timeout":"2026-11-18T11:16:40Z"}' >/dev/null
rcli set canhazgpu:queue:entry:q2 '{"id":"q2","user":"carol","enqueue_time":"tomorrow","wait_timeout":60000000000}' >/dev/null
check_output 'queue -e: each record with its entry as stored; a member missing or not a time named, status 1' 'out gr queue -e' <<'EOF2'
{"kind":"queue-entry","position":1,"id":"q1","user":"bob","actual_user":"bob","requested":1,"requested_ids":null,"allocated":[],"type":"run","enqueued":"2026-11-18T11:06:30Z","heartbeat":"2026-11-18T11:06:40Z","waiting_s":10,"wait_timeout":"2026-11-18T11:16:40Z","entry":{"id":"q1","user":"bob","actual_user":"bob","requested_count":1,"allocated_gpus":[],"reservation_type":"run","note":"n","enqueue_time":"2026-11-18T13:06:30.500+02:00","last_heartbeat":"2026-11-18T11:06:40Z","wait_timeout":"2026-11-18T11:16:40Z"}}
{"kind":"queue-entry","position":2,"id":"q2","user":"carol","actual_user":null,"requested":null,"requested_ids":null,"allocated":[],"type":null,"enqueued":null,"heartbeat":null,"waiting_s":null,"wait_timeout":null,"entry":{"id":"q2","user":"carol","enqueue_time":"tomorrow","wait_timeout":60000000000}}
exit 1
gpu-reserve: canhazgpu:queue:entry:q2: actual_user, requested_count, allocated_gpus, reservation_type, last_heartbeat: missing (left as it is)
gpu-reserve: canhazgpu:queue:entry:q2: enqueue_time: not a time (left as it is)
gpu-reserve: canhazgpu:queue:entry:q2: wait_timeout: a number (a wait in nanoseconds, as written before), not a time (left as it is)
EOF2

fresh 3
rcli zadd canhazgpu:usage_history_sorted 1794999000 '{"user":"alice","gpu_id":0,"start_time":"2026-11-18T08:00:00Z","end_time":"2026-11-18T10:50:00Z","duration_seconds":1200,"reservation_type":"run"}' >/dev/null
rcli zadd canhazgpu:usage_history_sorted 1794990000 '{"user":"carol","gpu_id":1,"start_time":"2026-11-08T08:20:00Z","end_time":"2026-11-18T08:20:00Z","duration_seconds":864000,"reservation_type":"manual"}' >/dev/null
rcli zadd canhazgpu:usage_history_sorted 1794999500 '{"user":"dan","gpu_id":"1","start_time":null,"end_time":null,"duration_seconds":60,"reservation_type":"run"}' >/dev/null
rcli set canhazgpu:gpu:0 '{"user":"alice","actual_user":"bob","start_time":1794992800,"type":"manual","expiry_time":1795003600}' >/dev/null
rcli set canhazgpu:gpu:1 '{"user":"erin","actual_user":"erin","start_time":"2026-11-18T08:06:40Z","last_heartbeat":"2026-11-18T11:06:10Z","type":"run","expiry_time":null,"last_released":null}' >/dev/null
rcli set canhazgpu:gpu:2 '{"user":"k8s:ns/c","actual_user":"k8s","start_time":1794996400,"type":"k8s","claim_uid":"u"}' >/dev/null
check_output 'report -d 1: records counted whole from duration_seconds, held ones from their start, hours unrounded, "account (user)"' 'out gr report -d 1' <<'EOF2'
{"kind":"usage","user":"carol","gpu_hours":240.0,"percentage":97.42895805142085,"run_count":0,"manual_count":1,"k8s_count":0}
{"kind":"usage","user":"erin","gpu_hours":3.0,"percentage":1.2178619756427604,"run_count":1,"manual_count":0,"k8s_count":0}
{"kind":"usage","user":"bob (alice)","gpu_hours":2.0,"percentage":0.8119079837618403,"run_count":0,"manual_count":1,"k8s_count":0}
{"kind":"usage","user":"k8s:ns/c","gpu_hours":1.0,"percentage":0.40595399188092013,"run_count":0,"manual_count":0,"k8s_count":1}
{"kind":"usage","user":"alice","gpu_hours":0.3333333333333333,"percentage":0.13531799729364005,"run_count":1,"manual_count":0,"k8s_count":0}
{"kind":"usage-total","gpu_hours":246.33333333333334,"reservations":5,"users":5,"start":"2026-11-17T11:06:40Z","end":"2026-11-18T11:06:40Z","days":1.0}
exit 1
gpu-reserve: canhazgpu:usage_history_sorted: record 3 of the window: gpu_id: not a whole number; left out
EOF2

done_testing
