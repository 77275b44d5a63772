#!/bin/sh
# A Kubernetes claim's holds in the ledger, as the kubelet plugin takes
# them (gpu-reserve prepare, lib/ledger_claim.c), against a real
# redis-server of its own: MIG devices of one GPU given to different
# claims share the GPU's k8s:mig hold, released with its last claim;
# prepare is all or nothing (every conflict said, nothing written) and
# idempotent; release by claim; k8s-sync with MIG hold records; the lock
# held by another, Redis down; and the soft connection a server keeps
# across a Redis restart (t/unit/ledger-soft.c).
. "$(dirname "$0")/lib.sh"
. "$TOP/t/lib-ledger.sh"

command -v redis-server >/dev/null || skip_all 'redis-server is not installed (scripts/deps installs it)'
start_redis || { echo 'Bail out! redis-server did not start'; exit 1; }

# A fixed clock and zone: 1795000000 is 2026-11-18T11:06:40Z.
TZ=UTC USER=alice
export TZ USER
unset K8SHAZGPU_REDIS_PASSWORD K8SHAZGPU_REDIS_DB USERNAME
NOW=1795000000
T0=2026-11-18T11:06:40Z
# fresh N: an empty pool of N GPUs.

# ---- MIG devices of one GPU, two claims ----

fresh 4
check_output 'two claims on MIG devices of GPU 3 both hold it, shared' 'out gr prepare -C uid-a -n ns/a -p pa -m 3:MIG-a1,3:MIG-a2; NOW=$((NOW + 10)) out gr prepare -C uid-b -n ns/b -m 3:MIG-b1; keys' <<EOF
{"kind":"reservation","op":"hold","gpu":3,"mig":"MIG-a1","user":"k8s:mig","actual_user":"k8s","type":"k8s","claim_uid":"uid-a","since":"$T0","expires":null,"note":null}
{"kind":"reservation","op":"hold","gpu":3,"mig":"MIG-a2","user":"k8s:mig","actual_user":"k8s","type":"k8s","claim_uid":"uid-a","since":"$T0","expires":null,"note":null}
exit 0
{"kind":"reservation","op":"hold","gpu":3,"mig":"MIG-b1","user":"k8s:mig","actual_user":"k8s","type":"k8s","claim_uid":"uid-b","since":"2026-11-18T11:06:50Z","expires":null,"note":null}
exit 0
canhazgpu:gpu:3 {"user":"k8s:mig","actual_user":"k8s","start_time":1795000000,"type":"k8s"}
canhazgpu:gpu_count 4
canhazgpu:k8s:claim:uid-a:gpu:3 {"claim_uid":"uid-a","namespace":"ns","pod_name":"pa","reserved_at":"$T0"}
canhazgpu:k8s:claim:uid-a:gpus 3 
canhazgpu:k8s:claim:uid-a:mig MIG-a1=3 MIG-a2=3 
canhazgpu:k8s:claim:uid-b:gpu:3 {"claim_uid":"uid-b","namespace":"ns","reserved_at":"2026-11-18T11:06:50Z"}
canhazgpu:k8s:claim:uid-b:gpus 3 
canhazgpu:k8s:claim:uid-b:mig MIG-b1=3 
canhazgpu:k8s:gpu:3:claims uid-a uid-b 
canhazgpu:k8s:mig:MIG-a1 uid-a
canhazgpu:k8s:mig:MIG-a2 uid-a
canhazgpu:k8s:mig:MIG-b1 uid-b
canhazgpu:provider nvidia
EOF
keys >k1
check_output 'prepare again: the same holds, nothing written' 'NOW=$((NOW + 99)) out gr prepare -C uid-a -n ns/a -p pa -m 3:MIG-a1,3:MIG-a2; keys | cmp - k1 && echo same' <<EOF
{"kind":"reservation","op":"hold","gpu":3,"mig":"MIG-a1","user":"k8s:mig","actual_user":"k8s","type":"k8s","claim_uid":"uid-a","since":"$T0","expires":null,"note":null}
{"kind":"reservation","op":"hold","gpu":3,"mig":"MIG-a2","user":"k8s:mig","actual_user":"k8s","type":"k8s","claim_uid":"uid-a","since":"$T0","expires":null,"note":null}
exit 0
same
EOF
check_output 'a host user cannot take the shared GPU' 'out gr reserve -b -G 3; keys | cmp - k1 && echo same' <<'EOF'
exit 1
gpu-reserve: GPU 3 is already reserved by user 'k8s:mig'
same
EOF
check_output 'status shows it held by k8s:mig' 'gr status | jq -c "[.gpu, .state, .user, .type, .claim_uid]"' <<'EOF'
[0,"AVAILABLE",null,null,null]
[1,"AVAILABLE",null,null,null]
[2,"AVAILABLE",null,null,null]
[3,"IN_USE","k8s:mig","k8s",null]
EOF
check_output 'releasing one claim keeps the parent held for the other' 'NOW=$((NOW + 60)) out gr release -C uid-a; keys' <<EOF
{"kind":"reservation","op":"release","gpu":3,"mig":"MIG-a1","user":"k8s:mig","actual_user":"k8s","type":"k8s","claim_uid":"uid-a","since":"$T0","expires":null,"note":null}
{"kind":"reservation","op":"release","gpu":3,"mig":"MIG-a2","user":"k8s:mig","actual_user":"k8s","type":"k8s","claim_uid":"uid-a","since":"$T0","expires":null,"note":null}
exit 0
canhazgpu:gpu:3 {"user":"k8s:mig","actual_user":"k8s","start_time":1795000000,"type":"k8s"}
canhazgpu:gpu_count 4
canhazgpu:k8s:claim:uid-b:gpu:3 {"claim_uid":"uid-b","namespace":"ns","reserved_at":"2026-11-18T11:06:50Z"}
canhazgpu:k8s:claim:uid-b:gpus 3 
canhazgpu:k8s:claim:uid-b:mig MIG-b1=3 
canhazgpu:k8s:gpu:3:claims uid-b 
canhazgpu:k8s:mig:MIG-b1 uid-b
canhazgpu:provider nvidia
EOF
check_output 'releasing the last claim frees the parent, with one usage record' 'NOW=$((NOW + 120)) out gr release -c uid-b; keys' <<'EOF'
{"kind":"reservation","op":"release","gpu":3,"mig":"MIG-b1","user":"k8s:mig","actual_user":"k8s","type":"k8s","claim_uid":"uid-b","since":"2026-11-18T11:06:50Z","expires":null,"note":null}
{"kind":"reservation","op":"release","gpu":3,"user":"k8s:mig","actual_user":"k8s","type":"k8s","claim_uid":null,"since":"2026-11-18T11:06:40Z","expires":null,"note":null}
exit 0
canhazgpu:gpu:3 {"start_time":null,"last_heartbeat":null,"expiry_time":null,"last_released":"2026-11-18T11:08:40Z"}
canhazgpu:gpu_count 4
canhazgpu:provider nvidia
canhazgpu:usage_history_sorted {"user":"k8s:mig","gpu_id":3,"start_time":"2026-11-18T11:06:40Z","end_time":"2026-11-18T11:08:40Z","duration_seconds":120,"reservation_type":"k8s"} 1795000120 
EOF
check_output 'release of a claim that holds nothing succeeds' 'keys >k2; out gr release -C uid-zz; keys | cmp - k2 && echo same' <<'EOF'
exit 0
gpu-reserve: no GPUs held for claim uid-zz
same
EOF

# ---- conflicts: all or nothing ----

fresh 4
gr reserve -G 1 -n 'big run' >/dev/null
gr prepare -C uid-c -n ns/c -G 2 >/dev/null
gr prepare -C uid-m -n ns/m -m 3:MIG-m1 >/dev/null
keys >before
check_output 'a GPU a host user holds: the conflict, its sentence, nothing written' 'out gr prepare -C uid-d -n ns/d -p pd -G 0,1; keys | cmp - before && echo same' <<EOF
{"kind":"conflict","gpu":1,"claim_uid":"uid-d","namespace":"ns","name":"d","pods":["pd"],"holder":"alice","holder_type":"manual","since":"$T0"}
exit 1
gpu-reserve: GPU 1 is held by alice (manual reservation since $T0)
same
EOF
check_output 'a GPU or MIG device another claim holds; every conflict said at once' 'out gr prepare -C uid-d -n ns/d -G 0,1,2,3 -m 3:MIG-m1; out gr prepare -C uid-d -n ns/d -G 0 -m 2:MIG-x,3:MIG-m1; keys | cmp - before && echo same' <<EOF
exit 1
gpu-reserve: GPU 3 is asked for whole and for its MIG devices at once
{"kind":"conflict","gpu":2,"mig":"MIG-x","claim_uid":"uid-d","namespace":"ns","name":"d","pods":[],"holder":"k8s:ns/c","holder_type":"k8s","since":"$T0"}
{"kind":"conflict","gpu":3,"mig":"MIG-m1","claim_uid":"uid-d","namespace":"ns","name":"d","pods":[],"holder":"uid-m","holder_type":"k8s","since":"$T0"}
exit 1
gpu-reserve: MIG device MIG-x on GPU 2 is held by claim ns/c (uid uid-c, since $T0)
gpu-reserve: MIG device MIG-m1 on GPU 3 is held by claim uid-m since $T0
same
EOF
check_output 'whole GPUs held by another claim, by k8s:mig, by a host run' 'out gr prepare -C uid-d -n ns/d -G 1,2,3; keys | cmp - before && echo same' <<EOF
{"kind":"conflict","gpu":1,"claim_uid":"uid-d","namespace":"ns","name":"d","pods":[],"holder":"alice","holder_type":"manual","since":"$T0"}
{"kind":"conflict","gpu":2,"claim_uid":"uid-d","namespace":"ns","name":"d","pods":[],"holder":"k8s:ns/c","holder_type":"k8s","since":"$T0"}
{"kind":"conflict","gpu":3,"claim_uid":"uid-d","namespace":"ns","name":"d","pods":[],"holder":"k8s:mig","holder_type":"k8s","since":"$T0"}
exit 1
gpu-reserve: GPU 1 is held by alice (manual reservation since $T0)
gpu-reserve: GPU 2 is held by claim ns/c (uid uid-c, since $T0)
gpu-reserve: GPU 3 is held for the MIG devices of other claims (k8s:mig since $T0)
same
EOF
rcli set canhazgpu:gpu:0 '{broken' >/dev/null
keys >before
check_output 'a GPU key that cannot be read is held' 'out gr prepare -C uid-d -n ns/d -G 0; keys | cmp - before && echo same' <<'EOF'
{"kind":"conflict","gpu":0,"claim_uid":"uid-d","namespace":"ns","name":"d","pods":[],"holder":null,"holder_type":"error","since":null}
exit 1
gpu-reserve: GPU 0 is held: canhazgpu:gpu:0 cannot be read (not JSON; left as it is)
same
EOF
rcli set canhazgpu:gpu:0 '{"user":"bob","actual_user":"bob","start_time":1,"type":"run","last_heartbeat":1}' >/dev/null
rcli zadd canhazgpu:queue 1 q1 >/dev/null
rcli set canhazgpu:queue:entry:q1 "{\"id\":\"q1\",\"user\":\"carol\",\"actual_user\":\"carol\",\"requested_count\":4,\"allocated_gpus\":[],\"reservation_type\":\"run\",\"enqueue_time\":\"$T0\",\"last_heartbeat\":\"$T0\"}" >/dev/null
check_output 'a stale run reservation is cleaned first; the host queue is not waited on' 'out gr prepare -C uid-d -n ns/d -G 0; rcli get canhazgpu:gpu:0; rcli zcard canhazgpu:queue' <<EOF
{"kind":"reservation","op":"hold","gpu":0,"user":"k8s:ns/d","actual_user":"k8s","type":"k8s","claim_uid":"uid-d","since":"$T0","expires":null,"note":null}
exit 0
{"user":"k8s:ns/d","actual_user":"k8s","start_time":1795000000,"type":"k8s","claim_uid":"uid-d"}
1
EOF
check_output 'whole GPUs: prepared twice, held once; released with their keys' 'out gr prepare -C uid-d -n ns/d -G 0; NOW=$((NOW + 5)) out gr release -C uid-d; rcli --scan --pattern "canhazgpu:k8s:claim:uid-d*"' <<EOF
{"kind":"reservation","op":"hold","gpu":0,"user":"k8s:ns/d","actual_user":"k8s","type":"k8s","claim_uid":"uid-d","since":"$T0","expires":null,"note":null}
exit 0
{"kind":"reservation","op":"release","gpu":0,"user":"k8s:ns/d","actual_user":"k8s","type":"k8s","claim_uid":"uid-d","since":"$T0","expires":null,"note":null}
exit 0
EOF

# ---- bad input, the lock, Redis down ----

check_output 'usage: what prepare needs' 'out gr prepare -G 1; out gr prepare -C u -n ns -G 1; out gr prepare -C u -n ns/x; out gr prepare -C u -n ns/x -m 3; out gr prepare -C u -n ns/x -m 3:; out gr prepare -C u -n ns/x -G 9' <<'EOF'
exit 2
gpu-reserve: prepare: -C claim_uid and -n namespace/name needed
usage: gpu-reserve [-a addr] [-D db] [-P passfile] [-L lockwait] [-T timeout] [-i gpufile] [-M mib] command [options] [args]
exit 2
gpu-reserve: prepare: -C claim_uid and -n namespace/name needed
usage: gpu-reserve [-a addr] [-D db] [-P passfile] [-L lockwait] [-T timeout] [-i gpufile] [-M mib] command [options] [args]
exit 2
gpu-reserve: prepare: -G or -m needed
usage: gpu-reserve [-a addr] [-D db] [-P passfile] [-L lockwait] [-T timeout] [-i gpufile] [-M mib] command [options] [args]
exit 2
gpu-reserve: -m: not gpu:MIG-uuid: 3
usage: gpu-reserve [-a addr] [-D db] [-P passfile] [-L lockwait] [-T timeout] [-i gpufile] [-M mib] command [options] [args]
exit 2
gpu-reserve: -m: not gpu:MIG-uuid: 3:
usage: gpu-reserve [-a addr] [-D db] [-P passfile] [-L lockwait] [-T timeout] [-i gpufile] [-M mib] command [options] [args]
exit 1
gpu-reserve: GPU 9 is out of range (0-3)
EOF
keys >before
rcli set canhazgpu:allocation_lock someone-else ex 10 >/dev/null
check_output 'the lock held by another: 75 after -L, nothing written' 'out gr -L 0.3 prepare -C uid-e -n ns/e -G 1; rcli get canhazgpu:allocation_lock; rcli del canhazgpu:allocation_lock >/dev/null; keys | cmp - before && echo same' <<'EOF'
exit 75
gpu-reserve: canhazgpu:allocation_lock is held by someone else (waited 0.3 s); left as it is
someone-else
same
EOF
check_output 'Redis unreachable: 75, naming the address' 'out gr -a 127.0.0.1:1 prepare -C uid-e -n ns/e -G 1; out gr -a 127.0.0.1:1 release -C uid-e' <<'EOF'
exit 75
gpu-reserve: redis 127.0.0.1:1: Connection refused
exit 75
gpu-reserve: redis 127.0.0.1:1: Connection refused
EOF
check_output 'request records: op prepare, then release' 'printf "%s\n" "{\"op\":\"prepare\",\"claim_uid\":\"uid-r\",\"namespace\":\"ns\",\"name\":\"r\",\"mig\":[{\"gpu\":3,\"uuid\":\"MIG-r1\"}]}" "{\"op\":\"prepare\",\"claim_uid\":\"uid-s\",\"namespace\":\"ns\",\"name\":\"s\",\"gpu_ids\":[2]}" "{\"op\":\"prepare\",\"namespace\":\"ns\",\"name\":\"s\",\"gpu_ids\":[1]}" "{\"op\":\"release\",\"claim_uid\":\"uid-r\"}" | out gr' <<EOF
{"kind":"reservation","op":"hold","gpu":3,"mig":"MIG-r1","user":"k8s:mig","actual_user":"k8s","type":"k8s","claim_uid":"uid-r","since":"$T0","expires":null,"note":null}
{"kind":"conflict","gpu":2,"claim_uid":"uid-s","namespace":"ns","name":"s","pods":[],"holder":"k8s:ns/c","holder_type":"k8s","since":"$T0"}
{"kind":"reservation","op":"release","gpu":3,"mig":"MIG-r1","user":"k8s:mig","actual_user":"k8s","type":"k8s","claim_uid":"uid-r","since":"$T0","expires":null,"note":null}
exit 1
gpu-reserve: <stdin>:2: GPU 2 is held by claim ns/c (uid uid-c, since $T0)
gpu-reserve: <stdin>:3: claim: claim_uid: not a string
EOF

# ---- k8s-sync: MIG hold records ----

fresh 4
cat >holds <<'EOF'
{"kind":"hold","gpu":3,"mig":"MIG-x","claim_uid":"u-x","namespace":"ns","name":"x","pods":["px"]}
{"kind":"hold","gpu":3,"mig":"MIG-y","claim_uid":"u-y","namespace":"ns","name":"y"}
{"kind":"hold","gpu":1,"claim_uid":"u-y","namespace":"ns","name":"y"}
{"kind":"hold","gpu":1,"mig":"MIG-z","claim_uid":"u-z","namespace":"ns","name":"z"}
{"kind":"flush"}
EOF
check_output 'k8s-sync: MIG devices of one GPU share it; a MIG device of a GPU held whole is a conflict' 'out gr k8s-sync <holds; keys' <<EOF
{"kind":"reservation","op":"hold","gpu":3,"mig":"MIG-x","user":"k8s:mig","actual_user":"k8s","type":"k8s","claim_uid":"u-x","since":"$T0","expires":null,"note":null}
{"kind":"reservation","op":"hold","gpu":3,"mig":"MIG-y","user":"k8s:mig","actual_user":"k8s","type":"k8s","claim_uid":"u-y","since":"$T0","expires":null,"note":null}
{"kind":"reservation","op":"hold","gpu":1,"user":"k8s:ns/y","actual_user":"k8s","type":"k8s","claim_uid":"u-y","since":"$T0","expires":null,"note":null}
{"kind":"conflict","gpu":1,"mig":"MIG-z","claim_uid":"u-z","namespace":"ns","name":"z","pods":[],"holder":"k8s:ns/y","holder_type":"k8s","since":"$T0"}
{"kind":"flush"}
exit 0
canhazgpu:gpu:1 {"user":"k8s:ns/y","actual_user":"k8s","start_time":1795000000,"type":"k8s","claim_uid":"u-y"}
canhazgpu:gpu:3 {"user":"k8s:mig","actual_user":"k8s","start_time":1795000000,"type":"k8s"}
canhazgpu:gpu_count 4
canhazgpu:k8s:claim:u-x:gpu:3 {"claim_uid":"u-x","namespace":"ns","pod_name":"px","reserved_at":"$T0"}
canhazgpu:k8s:claim:u-x:gpus 3 
canhazgpu:k8s:claim:u-x:mig MIG-x=3 
canhazgpu:k8s:claim:u-y:gpu:1 {"claim_uid":"u-y","namespace":"ns","reserved_at":"$T0"}
canhazgpu:k8s:claim:u-y:gpu:3 {"claim_uid":"u-y","namespace":"ns","reserved_at":"$T0"}
canhazgpu:k8s:claim:u-y:gpus 1 3 
canhazgpu:k8s:claim:u-y:mig MIG-y=3 
canhazgpu:k8s:gpu:3:claims u-x u-y 
canhazgpu:k8s:mig:MIG-x u-x
canhazgpu:k8s:mig:MIG-y u-y
canhazgpu:provider nvidia
EOF
check_output 'k8s-sync again: nothing changes' 'keys >k1; out gr k8s-sync <holds; keys | cmp - k1 && echo same' <<EOF
{"kind":"conflict","gpu":1,"mig":"MIG-z","claim_uid":"u-z","namespace":"ns","name":"z","pods":[],"holder":"k8s:ns/y","holder_type":"k8s","since":"$T0"}
{"kind":"flush"}
exit 0
same
EOF
check_output 'k8s-sync: a MIG device another claim has is a conflict' 'printf "%s\n" "{\"kind\":\"hold\",\"gpu\":3,\"mig\":\"MIG-x\",\"claim_uid\":\"u-w\",\"namespace\":\"ns\",\"name\":\"w\"}" "{\"kind\":\"hold\",\"gpu\":3,\"mig\":\"MIG-x\",\"claim_uid\":\"u-x\",\"namespace\":\"ns\",\"name\":\"x\"}" "{\"kind\":\"hold\",\"gpu\":3,\"mig\":\"MIG-y\",\"claim_uid\":\"u-y\",\"namespace\":\"ns\",\"name\":\"y\"}" "{\"kind\":\"hold\",\"gpu\":1,\"claim_uid\":\"u-y\",\"namespace\":\"ns\",\"name\":\"y\"}" | out gr k8s-sync; keys | cmp - k1 && echo same' <<EOF
{"kind":"conflict","gpu":3,"mig":"MIG-x","claim_uid":"u-w","namespace":"ns","name":"w","pods":[],"holder":"u-x","holder_type":"k8s","since":"$T0"}
{"kind":"flush"}
exit 0
same
EOF
check_output 'k8s-sync: a claim gone leaves the shared GPU to the other; the last gone frees it' 'printf "%s\n" "{\"kind\":\"hold\",\"gpu\":3,\"mig\":\"MIG-y\",\"claim_uid\":\"u-y\",\"namespace\":\"ns\",\"name\":\"y\"}" "{\"kind\":\"flush\"}" "{\"kind\":\"flush\"}" | NOW=$((NOW + 30)) out gr k8s-sync; keys' <<EOF
{"kind":"reservation","op":"release","gpu":1,"user":"k8s:ns/y","actual_user":"k8s","type":"k8s","claim_uid":"u-y","since":"$T0","expires":null,"note":null}
{"kind":"reservation","op":"release","gpu":3,"mig":"MIG-x","user":"k8s:mig","actual_user":"k8s","type":"k8s","claim_uid":"u-x","since":"$T0","expires":null,"note":null}
{"kind":"flush"}
{"kind":"reservation","op":"release","gpu":3,"mig":"MIG-y","user":"k8s:mig","actual_user":"k8s","type":"k8s","claim_uid":"u-y","since":"$T0","expires":null,"note":null}
{"kind":"reservation","op":"release","gpu":3,"user":"k8s:mig","actual_user":"k8s","type":"k8s","claim_uid":null,"since":"$T0","expires":null,"note":null}
{"kind":"flush"}
exit 0
canhazgpu:gpu:1 {"start_time":null,"last_heartbeat":null,"expiry_time":null,"last_released":"2026-11-18T11:07:10Z"}
canhazgpu:gpu:3 {"start_time":null,"last_heartbeat":null,"expiry_time":null,"last_released":"2026-11-18T11:07:10Z"}
canhazgpu:gpu_count 4
canhazgpu:provider nvidia
canhazgpu:usage_history_sorted {"user":"k8s:mig","gpu_id":3,"start_time":"$T0","end_time":"2026-11-18T11:07:10Z","duration_seconds":30,"reservation_type":"k8s"} 1795000030 {"user":"k8s:ns/y","gpu_id":1,"start_time":"$T0","end_time":"2026-11-18T11:07:10Z","duration_seconds":30,"reservation_type":"k8s"} 1795000030 
EOF
check_output 'k8s-sync: a mig member that is not a string' 'printf "%s\n" "{\"kind\":\"hold\",\"gpu\":3,\"mig\":7,\"claim_uid\":\"u-x\",\"namespace\":\"ns\",\"name\":\"x\"}" | out gr k8s-sync' <<'EOF'
{"kind":"flush"}
exit 1
gpu-reserve: <stdin>:1: mig: not a string
EOF

# ---- a soft connection: the server goes away and comes back ----

fresh 4
mkfifo soft.in
unit ledger-soft "$REDIS" <soft.in >soft.out 2>soft.err &
soft_pid=$!
exec 3>soft.in
# say LINE: send the driver LINE and wait for its answer (line N).
n=1
say() {
	echo "$1" >&3
	EVENTUALLY_HZ=10 eventually 20 sh -c "test \$(wc -l <soft.out) -gt $n"
	n=$((n + 1))
}
claim='{"claim_uid":"uid-s","namespace":"ns","name":"s","pod":null,"gpus":[0],"mig":[{"gpu":3,"uuid":"MIG-s"}]}'
say "prepare $claim"
say 'text {"gpu":1,"mig":null,"holder":"alice","holder_type":"run","claim_uid":null,"since":null,"bad":null}'
stop_redis
eventually 10 sh -c '! redis-cli -p "$REDIS_PORT" ping'
say "prepare $claim"
say "release uid-s"
# (without the pipe's end: the driver's input must end with ours)
redis-server --bind 127.0.0.1 --port "$REDIS_PORT" --save '' --appendonly no --daemonize yes \
	--pidfile "$SCRATCH/redis.pid" --logfile "$SCRATCH/redis.log" --dir "$SCRATCH" >/dev/null 3>&-
eventually 10 redis_is_ours
say "prepare $claim"
fresh 4
say "prepare $claim"
say "prepare $claim"
say "release uid-s"
exec 3>&-
wait $soft_pid
soft_rc=$?
check_output 'soft: NULL and 75 while Redis is down, the same struct lg answers after its restart, never an exit' "echo exit $soft_rc; sed 's/\"since\":[0-9]*/\"since\":S/g' soft.out; cat soft.err" <<EOF
exit 0
connect 0
ok {"ok":[{"actual_user":"k8s","claim_uid":"uid-s","expires":null,"gpu":0,"heartbeat":null,"note":null,"queue_id":null,"since":S,"type":"k8s","user":"k8s:ns/s"},{"actual_user":"k8s","claim_uid":"uid-s","expires":null,"gpu":3,"heartbeat":null,"mig":"MIG-s","note":null,"queue_id":null,"since":S,"type":"k8s","user":"k8s:mig"}]}
GPU 1 is held by alice (run reservation)
fail 75: redis $REDIS: Connection refused
fail 75: redis $REDIS: Connection refused
fail 1: canhazgpu:gpu_count is not set; initialise the pool with \`gpu-reserve init -g N\` (or canhazgpu admin --gpus N)
ok {"ok":[{"actual_user":"k8s","claim_uid":"uid-s","expires":null,"gpu":0,"heartbeat":null,"note":null,"queue_id":null,"since":S,"type":"k8s","user":"k8s:ns/s"},{"actual_user":"k8s","claim_uid":"uid-s","expires":null,"gpu":3,"heartbeat":null,"mig":"MIG-s","note":null,"queue_id":null,"since":S,"type":"k8s","user":"k8s:mig"}]}
ok {"ok":[{"actual_user":"k8s","claim_uid":"uid-s","expires":null,"gpu":0,"heartbeat":null,"note":null,"queue_id":null,"since":S,"type":"k8s","user":"k8s:ns/s"},{"actual_user":"k8s","claim_uid":"uid-s","expires":null,"gpu":3,"heartbeat":null,"mig":"MIG-s","note":null,"queue_id":null,"since":S,"type":"k8s","user":"k8s:mig"}]}
ok {"released":[{"actual_user":"k8s","claim_uid":"uid-s","expires":null,"gpu":0,"heartbeat":null,"note":null,"queue_id":null,"since":S,"type":"k8s","user":"k8s:ns/s"},{"actual_user":"k8s","claim_uid":"uid-s","expires":null,"gpu":3,"heartbeat":null,"mig":"MIG-s","note":null,"queue_id":null,"since":S,"type":"k8s","user":"k8s:mig"},{"actual_user":"k8s","claim_uid":null,"expires":null,"gpu":3,"heartbeat":null,"note":null,"queue_id":null,"since":S,"type":"k8s","user":"k8s:mig"}]}
EOF

done_testing
