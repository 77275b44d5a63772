#!/bin/sh
# k8shazgpu host: canhazgpu's verbs on a real redis-server, through the
# k8shazgpu dispatcher. Exact outputs of admin (the provider found or
# named), reserve (--short too, durations as canhazgpu reads them, the
# user recorded without USER), release, run (CUDA_VISIBLE_DEVICES, its
# exit status, SIGHUP to the supervisor, --timeout with SIGINT then
# SIGKILL, a command not found, a GPU taken meanwhile, the release in
# Redis), status (table, JSON and its times as stored, summary, colours
# on a terminal, readings from a fake nvidia-smi, which reserve skips and
# run's command is not handed, the owners of compute processes, each
# provider), queue (Go's JSON, entries cut short, a waiting reserve
# stopped), report (the window, duration_seconds, reservations in
# progress, Go's JSON); the Redis options (port, db, socket, password);
# option forms, usage errors, and gpu-reserve's failures passed through.
# Durations are shown from K8SHAZGPU_NOW, states are written at times
# relative to it, so every output is exact.
. "$(dirname "$0")/lib.sh"
. "$TOP/t/lib-ledger.sh"

start_redis || { echo 'Bail out! redis-server did not start'; exit 1; }
USER=alice
TZ=UTC
NVIDIA_SMI=$SCRATCH/no-nvidia-smi
AMD_SMI=$SCRATCH/no-amd-smi
export USER TZ NVIDIA_SMI AMD_SMI
unset USERNAME K8SHAZGPU_REDIS_DB K8SHAZGPU_REDIS_PASSWORD NO_COLOR K8SHAZGPU_NOW FAKE_APPS

# A fake nvidia-smi, logging its arguments into smi.log: it answers
# --help, gives 8 H100s (GPUs 1 and 3 in use) for --query-gpu, the
# processes of $FAKE_APPS (none when unset) for --query-compute-apps. A
# fake amd-smi that answers --help.
cat >fake-smi <<EOF
#!/bin/sh
echo "\$*" >>'$SCRATCH/smi.log'
case \$1 in
--query-gpu=*) cat '$FIXTURES/gpu-probe/h100x8.csv' ;;
--query-compute-apps=*) [ -z "\${FAKE_APPS:-}" ] || cat "\$FAKE_APPS" ;;
esac
EOF
printf '#!/bin/sh\nexit 0\n' >fake-amd-smi
chmod +x fake-smi fake-amd-smi
SMI=$SCRATCH/fake-smi

# hr ARGS: k8shazgpu host ARGS; its output, "exit N", then its messages.
hr() {
	k8shazgpu host "$@" >hr.out 2>hr.err
	hr_st=$?
	cat hr.out
	echo "exit $hr_st"
	cat hr.err
}
# gpu N [DB]: the state of GPU N as JSON, times left out.
gpu() {
	rcli -n "${2:-0}" get "canhazgpu:gpu:$1" | jq -c 'del(.start_time, .expiry_time, .last_heartbeat, .last_released)'
}
# utc T, at T OFFSET-SECONDS SUFFIX: RFC3339 times of Unix time T, in UTC
# or at an offset from it.
utc() { date -u -d "@$1" +%Y-%m-%dT%H:%M:%SZ; }
at() { date -u -d "@$(($1 + $2))" "+%Y-%m-%dT%H:%M:%S$3"; }
# held_run N: GPU N is held by a run reservation.
# (jq -e is true on no input at all: a key that is not there)
held_run() { [ "$(rcli get "canhazgpu:gpu:$1" | jq -r .type)" = run ]; }

# ---- admin, reserve, release ----

check_output 'admin: the provider whose tool answers --help; a pool of 4 GPUs' \
	'NVIDIA_SMI=$SMI hr admin --gpus 4; rcli get canhazgpu:gpu_count; rcli get canhazgpu:provider' <<'EOF'
Detecting available GPU provider... found nvidia
Initialized 4 GPUs (IDs 0 to 3)
exit 0
4
nvidia
EOF

check_output 'admin: once only, without --force; nothing changed' 'NVIDIA_SMI=$SMI hr admin --gpus 8; rcli get canhazgpu:gpu_count' <<'EOF'
Detecting available GPU provider... found nvidia
exit 1
k8shazgpu host admin: GPU pool already initialized with 4 GPUs. Use --force to reinitialize
4
EOF

check_output 'admin: no provider'"'"'s tool, or both: refused, nothing changed' \
	'hr admin --gpus 8; NVIDIA_SMI=$SMI AMD_SMI=$SCRATCH/fake-amd-smi hr admin -g 8 --force; rcli get canhazgpu:gpu_count' <<'EOF'
Detecting available GPU provider... exit 1
k8shazgpu host admin: no GPU providers available (nvidia-smi, amd-smi not found)
Detecting available GPU provider... exit 1
k8shazgpu host admin: multiple GPU providers detected: [nvidia amd]. Please specify one with --provider
4
EOF

check_output 'admin -p: the provider named must be one, its tool there' \
	'hr admin -g 8 -p nvidia --force; hr admin -g 8 --provider=intel; rcli get canhazgpu:gpu_count' <<'EOF'
Using explicitly specified GPU provider: nvidia
exit 1
k8shazgpu host admin: provider 'nvidia' is not available on this system
exit 2
k8shazgpu host admin: -p: not nvidia, amd or fake: intel
4
EOF

# (four never used tie: canhazgpu's sort leaves them as 0, 2, 1, 3)
check_output 'reserve -g 2: the two never used, for 30 minutes, manual' \
	'hr reserve -g 2; for g in 0 2; do gpu $g; rcli get canhazgpu:gpu:$g | jq ".expiry_time - .start_time"; done' <<'EOF'
Reserved 2 GPU(s): [0 2] for 0h 30m 0s

Run the following command to run only on these GPUs:
export CUDA_VISIBLE_DEVICES=0,2
exit 0
{"user":"alice","actual_user":"alice","type":"manual"}
1800
{"user":"alice","actual_user":"alice","type":"manual"}
1800
EOF

check_output 'reserve --short: the id alone, no newline; --gpus=, -d, -n, -u' \
	'hr reserve --gpus=1 -d1.5h -n "eval run" --user bob --short; gpu 1; rcli get canhazgpu:gpu:1 | jq ".expiry_time - .start_time"' <<'EOF'
1exit 0
{"user":"bob","actual_user":"alice","type":"manual","note":"eval run"}
5400
EOF

check_output 'reserve --nonblock: not enough GPUs; nothing taken' 'hr reserve -g=2 --nonblock; rcli exists canhazgpu:gpu:3' <<'EOF'
exit 1
gpu-reserve: not enough GPUs available: requested 2, available 1
0
EOF

check_output 'reserve -G by id, --gpu-ids form, -d in days, -g 0 for the default' 'hr reserve -g 0 --gpu-ids 3 --duration 1d' <<'EOF'
Reserved 1 GPU(s): [3] for 24h 0m 0s

Run the following command to run only on these GPUs:
export CUDA_VISIBLE_DEVICES=3
exit 0
EOF

check_output 'reserve: values checked as canhazgpu checks them' \
	'hr reserve -d 2h30m; hr reserve -g x; hr reserve -G 1,x; hr reserve -G 1,3,1; hr reserve -g 2 -G 0,1,3; hr --redis-db x status' <<'EOF'
exit 2
k8shazgpu host reserve: -d: not a duration: 2h30m (use e.g. 90m, 1.5h)
exit 2
k8shazgpu host reserve: -g: not a whole number: x
exit 2
k8shazgpu host reserve: -G: not a list of GPU ids: 1,x
exit 2
k8shazgpu host reserve: -G: GPU 1 given twice: 1,3,1
exit 2
k8shazgpu host reserve: -g 2 and 3 ids: the count must be 1 or the number of ids
exit 2
k8shazgpu host: --redis-db: not a whole number: x
EOF

check_output 'release -G of a GPU reserved under another name: none, status 0; gpu-reserve says why' 'hr release -G 1; gpu 1' <<'EOF'
No reservations found for current user on GPU(s): [1]
exit 0
gpu-reserve: GPU 1 is not reserved by alice (held by bob)
{"user":"bob","actual_user":"alice","type":"manual","note":"eval run"}
EOF

check_output 'release -G 1 -u bob' 'hr release -G 1 -u bob; rcli get canhazgpu:gpu:1 | jq -c "[.start_time, .last_heartbeat, .expiry_time, (.last_released | type), has(\"user\")]"' <<'EOF'
Released 1 GPU(s): [1]
exit 0
[null,null,null,"string",false]
EOF

check_output 'release: every manual reservation of the user, history written' \
	'hr release; rcli zrange canhazgpu:usage_history_sorted 0 -1 | jq -c "[.user, .gpu_id, .reservation_type]" | sort' <<'EOF'
Released 3 GPU(s): [0 2 3]
exit 0
["alice",0,"manual"]
["alice",2,"manual"]
["alice",3,"manual"]
["bob",1,"manual"]
EOF

check_output 'release: nothing left, said as canhazgpu says it' 'hr release' <<'EOF'
No manually reserved GPUs found for current user
exit 0
EOF

# ---- durations, the user recorded ----

T=$(date +%s)
check_output 'reserve -d .5h, 5.h, 0m (expired at once), empty (8 hours): as canhazgpu reads them' \
	'g=0; for d in .5h 5.h 0m ""; do K8SHAZGPU_NOW=$T k8shazgpu host reserve -G $g -d "$d" | head -n 1
		rcli get canhazgpu:gpu:$g | jq ".expiry_time - .start_time"; g=$((g + 1)); done
	K8SHAZGPU_NOW=$T hr release' <<'EOF'
Reserved 1 GPU(s): [0] for 0h 30m 0s
1800
Reserved 1 GPU(s): [1] for 5h 0m 0s
18000
Reserved 1 GPU(s): [2] for 0h 0m 0s
0
Reserved 1 GPU(s): [3] for 8h 0m 0s
28800
Released 4 GPU(s): [0 1 2 3]
exit 0
EOF

check_output 'durations refused, as canhazgpu refuses them: compound, no unit, a fraction of minutes; and a sign, past 3650 days, hexadecimal' \
	'hr reserve -d 1h30m; hr run -t 5 -- true; hr reserve -w 1.5m; hr reserve -d -1h; hr run -t 3651d -- true; hr reserve -d 0x1p1h' <<'EOF'
exit 2
k8shazgpu host reserve: -d: not a duration: 1h30m (use e.g. 90m, 1.5h)
exit 2
k8shazgpu host run: -t: not a duration: 5 (use e.g. 90m, 1.5h)
exit 2
k8shazgpu host reserve: -w: not a duration: 1.5m (use e.g. 90m, 1.5h)
exit 2
k8shazgpu host reserve: -d: not a duration: -1h (use e.g. 90m, 1.5h)
exit 2
k8shazgpu host run: -t: longer than 3650 days: 3651d
exit 2
k8shazgpu host reserve: -d: not a duration: 0x1p1h (use e.g. 90m, 1.5h)
EOF

check_output 'reserve -w 0m with nothing free: one try in the queue, then given up; -w empty waits' \
	'gpu-reserve reserve -g 4 -u dave >/dev/null; hr reserve -w 0m; rcli exists canhazgpu:queue; gpu-reserve release -u dave >/dev/null' <<'EOF'
exit 1
gpu-reserve: queued at position 1, waiting for 1 GPU
gpu-reserve: gave up waiting for 1 GPU after 0 s; left the queue
0
EOF

check_output 'USER unset: the user recorded is $USERNAME, else unknown, as canhazgpu names it' \
	'env -u USER USERNAME=carol k8shazgpu host reserve -G 0 -s; echo; gpu 0
	env -u USER -u USERNAME k8shazgpu host run -G 1 -- sh -c "gpu-reserve status | jq -c \"select(.gpu == 1) | [.user, .actual_user]\""
	USER= USERNAME=carol k8shazgpu host release' <<'EOF'
0
{"user":"carol","actual_user":"carol","type":"manual"}
Reserved 1 GPU(s): [1] for command execution
["unknown","unknown"]
Released 1 GPU(s): [0]
EOF

# ---- run ----

# A command that ignores SIGINT, given 1 s (on database 3, apart): killed
# 30 s after the SIGINT; checked at the end.
gpu-reserve -D 3 init -g 1 >/dev/null
(k8shazgpu host --redis-db 3 run -t 1s -- sh -c 'trap "" INT; echo started; exec sleep 100' >kill.out 2>kill.err
	echo "exit $?" >>kill.out) &
kill_pid=$!

check_output 'run: the command on the GPU, CUDA_VISIBLE_DEVICES replaced, its status passed' \
	'CUDA_VISIBLE_DEVICES=7 hr run -G 1 -- sh -c "echo \$CUDA_VISIBLE_DEVICES; exit 3"' <<'EOF'
Reserved 1 GPU(s): [1] for command execution
1
exit 3
EOF

check_output 'run: released when the command ends, with its history' \
	'rcli get canhazgpu:gpu:1 | jq -c "[.start_time, (.last_released | type), has(\"user\")]";
	rcli zrangebyscore canhazgpu:usage_history_sorted -inf +inf | jq -c "select(.reservation_type == \"run\") | [.user, .gpu_id]" | sort' <<'EOF'
[null,"string",false]
["alice",1]
["unknown",1]
EOF

check_output 'run: a command ended by a signal: 128 + its number' 'hr run --gpu-ids=0 -- sh -c "kill -TERM \$\$"' <<'EOF'
Reserved 1 GPU(s): [0] for command execution
exit 143
EOF

check_output 'run: the -- is required' 'hr run -g 1 sh -c true; hr run -g 1; hr run --' <<'EOF'
exit 2
k8shazgpu host run: missing -- before the command
exit 2
k8shazgpu host run: missing -- before the command
exit 2
k8shazgpu host run: no command after --
EOF

check_output 'run --timeout: SIGINT at the end of it; the command'"'"'s own status; the GPU released at once' \
	'hr run -G2 --timeout 1s -- sh -c "trap \"kill \\\$!; echo interrupted; exit 5\" INT; sleep 30 & wait"
	rcli get canhazgpu:gpu:2 | jq -c "[(.last_released | type), has(\"user\")]"' <<'EOF'
Reserved 1 GPU(s): [2] for command execution (timeout: 0h 0m 1s)
interrupted
exit 5
gpu-reserve: timeout of 0h 0m 1s reached; SIGINT sent to the command (SIGKILL in 30 s if it is still there)
["string",false]
EOF

check_output 'run -t: a command that SIGINT ends: 130' \
	'hr run -G 2 -t 1s -- sh -c "echo started; exec sleep 30"' <<'EOF'
Reserved 1 GPU(s): [2] for command execution (timeout: 0h 0m 1s)
started
exit 130
gpu-reserve: timeout of 0h 0m 1s reached; SIGINT sent to the command (SIGKILL in 30 s if it is still there)
EOF

check_output 'run -t 0s: SIGINT at once, as canhazgpu'"'"'s; -t and -w empty: no limit, no end to the wait' \
	'hr run -G 2 -t 0s -- sleep 5; hr run -G 2 -t "" -w "" -- true' <<'EOF'
Reserved 1 GPU(s): [2] for command execution (timeout: 0h 0m 0s)
exit 130
gpu-reserve: timeout of 0h 0m 0s reached; SIGINT sent to the command (SIGKILL in 30 s if it is still there)
Reserved 1 GPU(s): [2] for command execution
exit 0
EOF

check_output 'run --timeout: canhazgpu durations only' 'hr run --timeout 1h30m -- true' <<'EOF'
exit 2
k8shazgpu host run: -t: not a duration: 1h30m (use e.g. 90m, 1.5h)
EOF

check_output 'run: a command not found: status 1, as canhazgpu'"'"'s; the GPU released' \
	'hr run -G 0 -- no-such-command-here; rcli get canhazgpu:gpu:0 | jq -c "[(.last_released | type), has(\"user\")]"' <<'EOF'
Reserved 1 GPU(s): [0] for command execution
exit 1
gpu-reserve: no-such-command-here: command not found
["string",false]
EOF

# A run on GPUs 0 and 1; GPU 1 is taken by another user while it runs.
k8shazgpu host run -G 0,1 -- sh -c 'i=0; while [ ! -e took.go ] && [ $i -lt 300 ]; do sleep 0.1; i=$((i + 1)); done' \
	>took.out 2>took.err &
took_pid=$!
check 'run: GPUs 0 and 1 held while the command runs' 'EVENTUALLY_HZ=10 eventually 30 held_run 1'
bob1="{\"user\":\"bob\",\"actual_user\":\"bob\",\"start_time\":$(date +%s),\"type\":\"manual\",\"expiry_time\":$(($(date +%s) + 3600))}"
rcli set canhazgpu:gpu:1 "$bob1" >/dev/null
: >took.go
wait "$took_pid"
took_st=$?
check_output 'run: a GPU taken by another during the run is left to it, named; the other released' \
	'echo "exit $took_st"; cat took.out; sed "s/since [^)]*/since T/" took.err
	rcli get canhazgpu:gpu:0 | jq -c "[(.last_released | type), has(\"user\")]"; rcli get canhazgpu:gpu:1' <<EOF
exit 0
Reserved 2 GPU(s): [0 1] for command execution
gpu-reserve: GPU 1 reservation lost (now held by bob since T); not released
["string",false]
$bob1
EOF
gpu-reserve release -G 1 -u bob >/dev/null

# A run on GPUs 0 and 3 of a pool made 2 GPUs while it runs: GPU 0 is
# released all the same.
k8shazgpu host run -G 0,3 -- sh -c 'i=0; while [ ! -e shrunk.go ] && [ $i -lt 300 ]; do sleep 0.1; i=$((i + 1)); done' \
	>shrunk.out 2>shrunk.err &
shrunk_pid=$!
check 'run: GPUs 0 and 3 held while the command runs' 'EVENTUALLY_HZ=10 eventually 30 held_run 3'
rcli set canhazgpu:gpu_count 2 >/dev/null
: >shrunk.go
wait "$shrunk_pid"
shrunk_st=$?
check_output 'run: a GPU the pool no longer has is named; the others released all the same' \
	'echo "exit $shrunk_st"; cat shrunk.out shrunk.err; rcli get canhazgpu:gpu:0 | jq -c "[(.last_released | type), has(\"user\")]"' <<'EOF'
exit 0
Reserved 2 GPU(s): [0 3] for command execution
gpu-reserve: GPU 3 not released: GPU 3 is out of range (0-1); it is free once 5 minutes pass without a heartbeat
["string",false]
EOF
rcli set canhazgpu:gpu_count 4 >/dev/null
gpu-reserve release -G 3 >/dev/null

# SIGHUP to the process that waits for the command (the one started: the
# wrappers exec it) does not end it: the command, which waits for hup.go,
# made once the signal is sent, goes on, is waited for, and the GPU is
# released after.
k8shazgpu host run -G 3 -- sh -c 'i=0; while [ ! -e hup.go ] && [ $i -lt 300 ]; do sleep 0.1; i=$((i + 1)); done
	echo done >hup.done' >hup.out 2>hup.err &
hup_pid=$!
check 'run: the GPU is held while the command runs' 'EVENTUALLY_HZ=10 eventually 30 held_run 3'
kill -HUP "$hup_pid"
sleep 0.5
: >hup.go
wait "$hup_pid"
hup_st=$?
check_output 'run: SIGHUP to the supervisor does not end it; released after the command' \
	'echo "exit $hup_st"; cat hup.done; rcli get canhazgpu:gpu:3 | jq -c "[.start_time, (.last_released | type), has(\"user\")]"' <<'EOF'
exit 0
done
[null,"string",false]
EOF

# ---- status ----

# Six GPUs written as canhazgpu's writers write them, at times relative to
# T0: a Lua reservation (integers) under a display name; a Go heartbeat
# (RFC3339 at offsets, a fraction); a release (RFC3339Nano); a GPU never
# used; a key that is not JSON; a Kubernetes hold.
T0=$(date +%s)
K8SHAZGPU_NOW=$T0
export K8SHAZGPU_NOW
rcli flushdb >/dev/null
rcli set canhazgpu:gpu_count 6 >/dev/null
rcli set canhazgpu:provider nvidia >/dev/null
rcli set canhazgpu:gpu:0 "{\"user\":\"alice\",\"actual_user\":\"bob\",\"start_time\":$((T0 - 3723)),\"type\":\"manual\",\"expiry_time\":$((T0 + 11745)),\"note\":\"eval run\"}" >/dev/null
rcli set canhazgpu:gpu:1 "{\"user\":\"carol\",\"actual_user\":\"carol\",\"start_time\":\"$(at $((T0 - 125)) 7200 +02:00)\",\"last_heartbeat\":\"$(at $((T0 - 41)) -14400 .5-04:00)\",\"type\":\"run\",\"expiry_time\":null,\"last_released\":null}" >/dev/null
rcli set canhazgpu:gpu:2 "{\"start_time\":null,\"last_heartbeat\":null,\"expiry_time\":null,\"last_released\":\"$(at $((T0 - 3723)) 19800 .123456789+05:30)\"}" >/dev/null
rcli set canhazgpu:gpu:4 'not json' >/dev/null
rcli set canhazgpu:gpu:5 "{\"user\":\"k8s:team/train\",\"actual_user\":\"k8s\",\"start_time\":$((T0 - 60)),\"type\":\"k8s\",\"claim_uid\":\"5f1c2d3e-9a8b-4c7d-8e6f-0a1b2c3d4e5f\"}" >/dev/null

check_output 'status: every GPU as canhazgpu shows it' 'hr status' <<'EOF'
 GPU │ STATUS      │ USER           │ DURATION │ TYPE   │ DETAILS                   │ VALIDATION │ NOTE     
─────┼─────────────┼────────────────┼──────────┼────────┼───────────────────────────┼────────────┼──────────
 0   │ ● IN_USE    │ bob (alice)    │ 1h 2m 3s │ MANUAL │ expires in 3h 15m 45s     │ -          │ eval run 
 1   │ ● IN_USE    │ carol          │ 0h 2m 5s │ RUN    │ heartbeat 0h 0m 41s ago   │ -          │ -        
 2   │ ● AVAILABLE │ -              │ -        │ -      │ free for 1h 2m 3s         │            │ -        
 3   │ ● AVAILABLE │ -              │ -        │ -      │ never used                │            │ -        
 4   │ ✗ ERROR     │ -              │ -        │ -      │ canhazgpu:gpu:4: not JSON │ -          │ -        
 5   │ ● IN_USE    │ k8s:team/train │ 0h 1m 0s │ K8S    │ claim 5f1c2d3e            │ -          │ -        
exit 0
gpu-reserve: canhazgpu:gpu:4: not JSON (treated as held; left as it is)
EOF

check_output 'status --json: canhazgpu'"'"'s array' 'hr status --json' <<EOF
[
  {
    "gpu_id": 0,
    "status": "IN_USE",
    "user": "bob (alice)",
    "duration": "1h 2m 3s",
    "type": "MANUAL",
    "note": "eval run",
    "details": "expires in 3h 15m 45s",
    "expiry_time": "$(utc $((T0 + 11745)))"
  },
  {
    "gpu_id": 1,
    "status": "IN_USE",
    "user": "carol",
    "duration": "0h 2m 5s",
    "type": "RUN",
    "details": "heartbeat 0h 0m 41s ago",
    "last_heartbeat": "$(at $((T0 - 41)) -14400 .5-04:00)"
  },
  {
    "gpu_id": 2,
    "status": "AVAILABLE",
    "details": "free for 1h 2m 3s",
    "last_released": "$(at $((T0 - 3723)) 19800 .123456789+05:30)"
  },
  {
    "gpu_id": 3,
    "status": "AVAILABLE",
    "details": "never used"
  },
  {
    "gpu_id": 4,
    "status": "ERROR",
    "details": "canhazgpu:gpu:4: not JSON",
    "error": "canhazgpu:gpu:4: not JSON"
  },
  {
    "gpu_id": 5,
    "status": "IN_USE",
    "user": "k8s:team/train",
    "duration": "0h 1m 0s",
    "type": "K8S",
    "details": "claim 5f1c2d3e"
  }
]
exit 0
gpu-reserve: canhazgpu:gpu:4: not JSON (treated as held; left as it is)
EOF

# canhazgpu prints a time as Go does (RFC 3339 with nanoseconds): a
# Lua-written integer at the local offset; a string with its own offset
# and fraction, the fraction's trailing zeros cut, +00:00 as Z.
check_output 'status --json: times as canhazgpu prints them, in another TZ' \
	'rcli set canhazgpu:gpu:3 "{\"last_released\":\"$(at $((T0 - 60)) 0 .250000+00:00)\"}" >/dev/null;
	TZ=Asia/Kolkata k8shazgpu host status -j 2>/dev/null | jq -c ".[] | [.gpu_id, .details, .last_released, .last_heartbeat, .expiry_time]";
	rcli del canhazgpu:gpu:3 >/dev/null' <<EOF
[0,"expires in 3h 15m 45s",null,null,"$(at $((T0 + 11745)) 19800 +05:30)"]
[1,"heartbeat 0h 0m 41s ago",null,"$(at $((T0 - 41)) -14400 .5-04:00)",null]
[2,"free for 1h 2m 3s","$(at $((T0 - 3723)) 19800 .123456789+05:30)",null,null]
[3,"free for 0h 1m 0s","$(at $((T0 - 60)) 0 .25Z)",null,null]
[4,"canhazgpu:gpu:4: not JSON",null,null,null]
[5,"claim 5f1c2d3e",null,null,null]
EOF

check_output 'status -s: one row' 'hr status -s' <<'EOF'

 HOST      │ TOTAL │ GPU MODELS │ AVAILABLE │ IN USE 
───────────┼───────┼────────────┼───────────┼────────
 localhost │ 6     │ -          │ ✓ 2       │ 3      

exit 0
gpu-reserve: canhazgpu:gpu:4: not JSON (treated as held; left as it is)
EOF

check_output 'status: the key that is not JSON is left as it is' 'rcli get canhazgpu:gpu:4' <<'EOF'
not json
EOF

# On a terminal, canhazgpu's colours, unless --no-color or NO_COLOR.
if command -v script >/dev/null 2>&1; then
	esc=$(printf '\033')
	check_output 'status -s on a terminal: coloured' \
		'TERM=xterm script -qec "k8shazgpu host status --summary 2>/dev/null" /dev/null | tr -d "\r" | sed "s/$esc/<E>/g"' <<'EOF'

 <E>[36;1mHOST<E>[0m      │ <E>[36;1mTOTAL<E>[0m │ <E>[36;1mGPU MODELS<E>[0m │ <E>[36;1mAVAILABLE<E>[0m │ <E>[36;1mIN USE<E>[0m 
───────────┼───────┼────────────┼───────────┼────────
 <E>[35;1mlocalhost<E>[0m │ <E>[37;1m6<E>[0m     │ <E>[2m-<E>[0m          │ <E>[32m✓<E>[0m 2       │ 3      

EOF
	check_output 'status on a terminal: --no-color, NO_COLOR' \
		'TERM=xterm script -qec "k8shazgpu host status -s --no-color 2>/dev/null; NO_COLOR=1 k8shazgpu host status -s 2>/dev/null" /dev/null | tr -d "\r" | grep -c "$esc"' <<'EOF'
0
EOF
else
	echo "ok $((t_n + 1)) # SKIP script(1) is not installed"
	echo "ok $((t_n + 2)) # SKIP script(1) is not installed"
	t_n=$((t_n + 2))
fi

# ---- readings: the fake nvidia-smi's 8 H100s, GPUs 1 and 3 in use ----

check_output 'readings, database 1: reserve skips the GPUs in use without a reservation; no process query' \
	': >smi.log; NVIDIA_SMI=$SMI hr --redis-db 1 admin --gpus 8; NVIDIA_SMI=$SMI hr --redis-db=1 reserve -g 2; sed "s/=.*//" smi.log' <<'EOF'
Detecting available GPU provider... found nvidia
Initialized 8 GPUs (IDs 0 to 7)
exit 0
Reserved 2 GPU(s): [0 5] for 0h 30m 0s

Run the following command to run only on these GPUs:
export CUDA_VISIBLE_DEVICES=0,5
exit 0
--help
--query-gpu
EOF

since=$(rcli -n 1 get canhazgpu:gpu:0 | jq .start_time)
check_output 'readings: status shows UNRESERVED, memory in VALIDATION; no compute process, no owner' \
	'NVIDIA_SMI=$SMI K8SHAZGPU_NOW=$((since + 5)) hr status --redis-db 1' <<'EOF'
 GPU │ STATUS       │ USER    │ DURATION │ TYPE   │ DETAILS                     │ VALIDATION        │ NOTE 
─────┼──────────────┼─────────┼──────────┼────────┼─────────────────────────────┼───────────────────┼──────
 0   │ ● IN_USE     │ alice   │ 0h 0m 5s │ MANUAL │ expires in 0h 29m 55s       │ no usage detected │ -    
 1   │ ⚠ UNRESERVED │ unknown │ -        │ -      │ 78112MB used by 0 processes │ -                 │ -    
 2   │ ● AVAILABLE  │ -       │ -        │ -      │ never used                  │ 1MB used          │ -    
 3   │ ⚠ UNRESERVED │ unknown │ -        │ -      │ 40211MB used by 0 processes │ -                 │ -    
 4   │ ● AVAILABLE  │ -       │ -        │ -      │ never used                  │ 1MB used          │ -    
 5   │ ● IN_USE     │ alice   │ 0h 0m 5s │ MANUAL │ expires in 0h 29m 55s       │ no usage detected │ -    
 6   │ ● AVAILABLE  │ -       │ -        │ -      │ never used                  │ 1MB used          │ -    
 7   │ ● AVAILABLE  │ -       │ -        │ -      │ never used                  │ 1MB used          │ -    
exit 0
EOF

# Compute processes: two of this script's shell on GPUs 1 and 3, one of a
# pid no process has (its owner unknown) on GPU 1. The owners are those of
# /proc: this user, and "unknown", sorted.
me=$(id -un)
cat >apps.csv <<EOF
$$, python3, GPU-8a3c5e71-24b9-4f06-9d1e-6c7b2a0f1101, 70144 MiB
99999999, python3, GPU-8a3c5e71-24b9-4f06-9d1e-6c7b2a0f1101, 7808 MiB
$$, /usr/bin/python3 -m vllm.entrypoints.openai.api_server, GPU-8a3c5e71-24b9-4f06-9d1e-6c7b2a0f1103, [N/A]
EOF
if [ "$(printf '%s\n' "$me" unknown | LC_ALL=C sort | head -n 1)" = "$me" ]; then
	u1="$me and unknown" j1="\"$me\",\"unknown\""
else
	u1="unknown and $me" j1="\"unknown\",\"$me\""
fi
gone='gpu-probe: nvidia-smi --query-compute-apps:2: pid 99999999: /proc/99999999/status: No such file or directory: user unknown'

check_output 'processes: the owners in USER, how many in DETAILS, "process" for one (widths squeezed)' \
	': >smi.log; NVIDIA_SMI=$SMI FAKE_APPS=apps.csv K8SHAZGPU_NOW=$((since + 5)) hr status --redis-db 1 | sed -n "2d;1,6p;\$p" | tr -s " "; sed "s/=.*//" smi.log' <<EOF
 GPU │ STATUS │ USER │ DURATION │ TYPE │ DETAILS │ VALIDATION │ NOTE 
 0 │ ● IN_USE │ alice │ 0h 0m 5s │ MANUAL │ expires in 0h 29m 55s │ no usage detected │ - 
 1 │ ⚠ UNRESERVED │ $u1 │ - │ - │ 78112MB used by 2 processes │ - │ - 
 2 │ ● AVAILABLE │ - │ - │ - │ never used │ 1MB used │ - 
 3 │ ⚠ UNRESERVED │ $me │ - │ - │ 40211MB used by 1 process │ - │ - 
$gone
--query-gpu
--query-compute-apps
EOF

check_output 'processes: --json unreserved_users and process_info, as canhazgpu' \
	'NVIDIA_SMI=$SMI FAKE_APPS=apps.csv k8shazgpu host --redis-db 1 status -j 2>err | jq -c ".[1,3]"; cat err' <<EOF
{"gpu_id":1,"status":"UNRESERVED","details":"WITHOUT RESERVATION","gpu_model":"H100 80GB HBM3","unreserved_users":[$j1],"process_info":"78112MB used by 2 processes"}
{"gpu_id":3,"status":"UNRESERVED","details":"WITHOUT RESERVATION","gpu_model":"H100 80GB HBM3","unreserved_users":["$me"],"process_info":"40211MB used by 1 process"}
$gone
EOF

printf 'garbage\n%s\n' "$$, python3, GPU-8a3c5e71-24b9-4f06-9d1e-6c7b2a0f1103, 40000 MiB" >bad-apps.csv
check_output 'processes: a line that is not one is named and skipped, the rest shown, status 1' \
	'NVIDIA_SMI=$SMI FAKE_APPS=bad-apps.csv k8shazgpu host --redis-db 1 status -j >j.out 2>err; echo "exit $?"; jq -c ".[1,3] | [.status, .unreserved_users, .process_info]" j.out; cat err' <<EOF
exit 1
["UNRESERVED",null,"78112MB used by 0 processes"]
["UNRESERVED",["$me"],"40211MB used by 1 process"]
gpu-probe: nvidia-smi --query-compute-apps:1: 1 field, expected 4 (pid, process_name, gpu_uuid, used_memory): "garbage"
EOF

# Owners canhazgpu shows as "a, b and N more", from a gpu-probe of this
# test's: four processes of three users on GPU 1, two users on GPU 3.
mkdir -p stub
cat >stub/gpu-probe <<EOF
#!/bin/sh
'$BUILD/gpu-probe' -N n -r '$FIXTURES/gpu-probe/h100x8.csv'
for u in carol alice bob alice; do echo "{\"kind\":\"process\",\"index\":1,\"user\":\"\$u\"}"; done
for u in erin dave; do echo "{\"kind\":\"process\",\"index\":3,\"user\":\"\$u\"}"; done
EOF
chmod +x stub/gpu-probe
check_output 'processes: two owners, and more than two, as canhazgpu lists them' \
	'PATH=$SCRATCH/stub:$PATH NVIDIA_SMI=$SMI K8SHAZGPU_NOW=$((since + 5)) hr status --redis-db 1 | sed -n "1,2p;4p;6p"' <<'EOF'
 GPU │ STATUS       │ USER                  │ DURATION │ TYPE   │ DETAILS                     │ VALIDATION        │ NOTE 
─────┼──────────────┼───────────────────────┼──────────┼────────┼─────────────────────────────┼───────────────────┼──────
 1   │ ⚠ UNRESERVED │ alice, bob and 1 more │ -        │ -      │ 78112MB used by 4 processes │ -                 │ -    
 3   │ ⚠ UNRESERVED │ dave and erin         │ -        │ -      │ 40211MB used by 2 processes │ -                 │ -    
EOF

check_output 'readings: --memory-threshold; the models in the summary' \
	'NVIDIA_SMI=$SMI hr --redis-db 1 --memory-threshold 50000 status -s; NVIDIA_SMI=$SMI k8shazgpu host --redis-db 1 status -j --memory-threshold=50000 | jq -c ".[3]"' <<'EOF'

 HOST      │ TOTAL │ GPU MODELS     │ AVAILABLE │ IN USE 
───────────┼───────┼────────────────┼───────────┼────────
 localhost │ 8     │ H100 80GB HBM3 │ ✓ 5       │ 3      

exit 0
{"gpu_id":3,"status":"AVAILABLE","details":"never used","validation":"40211MB used","gpu_model":"H100 80GB HBM3"}
EOF

check_output 'readings: -G of a GPU in use without a reservation: refused, then taken with -f' \
	'NVIDIA_SMI=$SMI hr --redis-db 1 reserve -G 1 --nonblock; NVIDIA_SMI=$SMI hr --redis-db 1 reserve -G 1 -f -s' <<'EOF'
exit 1
gpu-reserve: GPU 1 is in use without reservation
1exit 0
EOF

check_output 'processes: a reservation'"'"'s VALIDATION, as canhazgpu words it ("1 processes" too)' \
	'NVIDIA_SMI=$SMI hr --redis-db 1 reserve -G 3 -f -s; echo; NVIDIA_SMI=$SMI FAKE_APPS=apps.csv k8shazgpu host --redis-db 1 status -j 2>/dev/null | jq -c ".[1,3] | [.status, .validation, .process_info]"' <<'EOF'
3exit 0

["IN_USE","78112MB, 2 processes",null]
["IN_USE","40211MB, 1 processes",null]
EOF

check_output 'readings: run does not hand the command the descriptor they came on' \
	'NVIDIA_SMI=$SMI hr --redis-db 1 run -G 4 -- sh -c "test -e /proc/\$\$/fd/3 && echo fd 3 open || echo fd 3 closed"' <<'EOF'
Reserved 1 GPU(s): [4] for command execution
fd 3 closed
exit 0
EOF

# ---- providers, database 2: fake (no tool run), amd (none read), one
# canhazgpu does not know, none set ----

check_output 'admin -p fake: no tool needed; --force starts over, said as canhazgpu says it' \
	'hr --redis-db 2 admin -g 2 -p fake; rcli -n 2 set canhazgpu:gpu:1 "{\"user\":\"zed\",\"type\":\"manual\"}" >/dev/null;
	hr --redis-db 2 admin -g 3 --provider fake --force; rcli -n 2 get canhazgpu:provider; rcli -n 2 exists canhazgpu:gpu:1' <<'EOF'
Using explicitly specified GPU provider: fake
Using fake GPU provider for development/testing
Initialized 2 GPUs (IDs 0 to 1)
exit 0
Using explicitly specified GPU provider: fake
Using fake GPU provider for development/testing
Releasing all GPUs: admin force reset (clearing 2 existing GPUs)
Reinitialized 3 GPUs (IDs 0 to 2)
exit 0
fake
0
EOF

hr --redis-db 2 reserve -G 0 >/dev/null
since=$(rcli -n 2 get canhazgpu:gpu:0 | jq .start_time)
check_output 'fake: every GPU idle, a "Fake GPU", no tool run' \
	': >smi.log; NVIDIA_SMI=$SMI K8SHAZGPU_NOW=$((since + 5)) hr --redis-db 2 status; NVIDIA_SMI=$SMI hr --redis-db 2 status -s;
	NVIDIA_SMI=$SMI k8shazgpu host --redis-db 2 status -j | jq -c ".[0,1] | [.validation, .gpu_model]"; cat smi.log' <<'EOF'
 GPU │ STATUS      │ USER  │ DURATION │ TYPE   │ DETAILS               │ VALIDATION        │ NOTE 
─────┼─────────────┼───────┼──────────┼────────┼───────────────────────┼───────────────────┼──────
 0   │ ● IN_USE    │ alice │ 0h 0m 5s │ MANUAL │ expires in 0h 29m 55s │ no usage detected │ -    
 1   │ ● AVAILABLE │ -     │ -        │ -      │ never used            │ 0MB used          │ -    
 2   │ ● AVAILABLE │ -     │ -        │ -      │ never used            │ 0MB used          │ -    
exit 0

 HOST      │ TOTAL │ GPU MODELS │ AVAILABLE │ IN USE 
───────────┼───────┼────────────┼───────────┼────────
 localhost │ 3     │ Fake GPU   │ ✓ 2       │ 1      

exit 0
["no usage detected","Fake GPU"]
["0MB used","Fake GPU"]
EOF

check_output 'amd: no readings (amd-smi is not read), nothing said' \
	'rcli -n 2 set canhazgpu:provider amd >/dev/null; : >smi.log; NVIDIA_SMI=$SMI AMD_SMI=$SCRATCH/fake-amd-smi k8shazgpu host --redis-db 2 status -j 2>err | jq -c ".[0,1] | [.status, .validation, .gpu_model]"; cat err smi.log' <<'EOF'
["IN_USE",null,null]
["AVAILABLE",null,null]
EOF

check_output 'a provider canhazgpu does not know: named, no readings, left as it is; status 1, reserve goes on' \
	'rcli -n 2 set canhazgpu:provider intel >/dev/null; NVIDIA_SMI=$SMI hr --redis-db 2 status -s; NVIDIA_SMI=$SMI hr --redis-db 2 reserve -G 1 -s; rcli -n 2 get canhazgpu:provider' <<'EOF'

 HOST      │ TOTAL │ GPU MODELS │ AVAILABLE │ IN USE 
───────────┼───────┼────────────┼───────────┼────────
 localhost │ 3     │ -          │ ✓ 2       │ 1      

exit 1
gpu-reserve: canhazgpu:provider is not nvidia, amd or fake: "intel" (left as it is)
1exit 0
gpu-reserve: canhazgpu:provider is not nvidia, amd or fake: "intel" (left as it is)
intel
EOF

check_output 'no provider set: read as nvidia, as canhazgpu reads it, and said; never written' \
	'rcli -n 2 del canhazgpu:provider >/dev/null; NVIDIA_SMI=$SMI k8shazgpu host --redis-db 2 status -j 2>err | jq -c ".[] | [.gpu_id, .status, .validation]"; cat err; rcli -n 2 exists canhazgpu:provider' <<'EOF'
[0,"IN_USE","no usage detected"]
[1,"IN_USE","78112MB used"]
[2,"AVAILABLE","1MB used"]
k8shazgpu host status: canhazgpu:provider is not set: read as nvidia, as canhazgpu reads it
0
EOF

check_output 'gpu-reserve pool: the record as stored; init -p checks its value' \
	'rcli -n 2 set canhazgpu:provider intel >/dev/null; out gpu-reserve -D 2 pool; rcli -n 2 set canhazgpu:gpu_count 2x >/dev/null; out gpu-reserve -D 2 pool;
	out gpu-reserve -D 2 init -f -g 2 -p nvidia; out gpu-reserve -D 2 init -f -g 2 -p ati; rcli -n 2 del canhazgpu:provider >/dev/null' <<'EOF'
{"kind":"pool","gpu_count":3,"provider":null}
exit 1
gpu-reserve: canhazgpu:provider is not nvidia, amd or fake: "intel" (left as it is)
{"kind":"pool","gpu_count":null,"provider":null}
exit 1
gpu-reserve: canhazgpu:gpu_count is not a number from 0 to 1024: 2x
gpu-reserve: canhazgpu:provider is not nvidia, amd or fake: "intel" (left as it is)
{"kind":"pool","gpu_count":2,"provider":"nvidia"}
exit 0
exit 2
gpu-reserve: -p: not nvidia, amd or fake: ati
usage: gpu-reserve [-a addr] [-D db] [-P passfile] [-L lockwait] [-T timeout] [-i gpufile] [-M mib] command [options] [args]
EOF

rcli -n 2 set canhazgpu:gpu:0 '{"user":"bob","actual_user":"bob","start_time":1795000000,"type":"run","last_heartbeat":"2026-11-18T06:07:40.120-05:00"}' >/dev/null
check_output 'gpu-reserve status -l: times as canhazgpu shows them (TZ for numbers)' \
	'TZ=America/New_York K8SHAZGPU_NOW=1795000010 gpu-reserve -D 2 status -l | jq -c "select(.gpu == 0) | [.since, .heartbeat]"; K8SHAZGPU_NOW=1795000010 gpu-reserve -D 2 status | jq -c "select(.gpu == 0) | [.since, .heartbeat]"' <<'EOF'
["2026-11-18T06:06:40-05:00","2026-11-18T06:07:40.12-05:00"]
["2026-11-18T11:06:40Z","2026-11-18T11:07:40Z"]
EOF

# ---- queue ----

check_output 'queue: empty; its JSON has null for no entries, as canhazgpu'"'"'s' 'hr queue; hr queue --json' <<'EOF'
GPU Reservation Queue
=====================
No entries waiting in queue.
exit 0
{
  "entries": null,
  "total_waiting": 0,
  "total_gpus_requested": 0,
  "total_gpus_allocated": 0
}
exit 0
EOF

T0=$(date +%s)
K8SHAZGPU_NOW=$T0
q1=1b4e28ba-2fa1-41d2-883f-0016d3cca427
q2=6fa459ea-ee8a-4ca4-894e-db77e160355e
rcli zadd canhazgpu:queue "$((T0 - 65))000000000" $q1 "$((T0 - 30))000000000" $q2 >/dev/null
rcli set canhazgpu:queue:entry:$q1 "{\"id\":\"$q1\",\"user\":\"alice\",\"actual_user\":\"alice\",\"requested_count\":2,\"allocated_gpus\":[0],\"reservation_type\":\"run\",\"enqueue_time\":\"$(at $((T0 - 65)) 0 .250Z)\",\"last_heartbeat\":\"$(at $((T0 - 5)) 0 +00:00)\"}" >/dev/null
rcli set canhazgpu:queue:entry:$q2 "{\"id\":\"$q2\",\"user\":\"a-very-long-user-name\",\"actual_user\":\"bob\",\"requested_count\":2,\"requested_ids\":[1,3],\"allocated_gpus\":[],\"reservation_type\":\"manual\",\"expiry_duration\":1800000000000,\"note\":\"a <b> & c\",\"enqueue_time\":\"$(at $((T0 - 30)) 7200 +02:00)\",\"last_heartbeat\":\"$(at $((T0 - 5)) 0 Z)\",\"wait_timeout\":\"$(at $((T0 + 570)) 19800 .123456789012+05:30)\"}" >/dev/null

check_output 'queue: the waiting requests in order' 'hr queue' <<'EOF'
GPU Reservation Queue
=====================

Position   User            Requested       Allocated    Waiting
--------   ----            ---------       ---------    -------
1          alice           2 GPUs          1/2          0h 1m 5s
2          a-very-long-... IDs: [1 3]      0/2          0h 0m 30s

Total: 2 entries waiting for 3 GPUs (1 partially allocated)
exit 0
EOF

check_output 'queue --json: canhazgpu'"'"'s QueueStatus, as Go writes it: members as they are kept, times with their offsets, HTML escaped' 'hr queue --json' <<EOF
{
  "entries": [
    {
      "id": "$q1",
      "user": "alice",
      "actual_user": "alice",
      "requested_count": 2,
      "allocated_gpus": [
        0
      ],
      "reservation_type": "run",
      "enqueue_time": "$(at $((T0 - 65)) 0 .25Z)",
      "last_heartbeat": "$(utc $((T0 - 5)))"
    },
    {
      "id": "$q2",
      "user": "a-very-long-user-name",
      "actual_user": "bob",
      "requested_count": 2,
      "requested_ids": [
        1,
        3
      ],
      "allocated_gpus": [],
      "reservation_type": "manual",
      "expiry_duration": 1800000000000,
      "note": "a \\u003cb\\u003e \\u0026 c",
      "enqueue_time": "$(at $((T0 - 30)) 7200 +02:00)",
      "last_heartbeat": "$(utc $((T0 - 5)))",
      "wait_timeout": "$(at $((T0 + 570)) 19800 .123456789+05:30)"
    }
  ],
  "total_waiting": 2,
  "total_gpus_requested": 4,
  "total_gpus_allocated": 1
}
exit 0
EOF

# Entries cut short or written by hand: a queued id without its entry, one
# not JSON, one with a user alone, one whose wait_timeout is a number (the
# wait in nanoseconds earlier versions wrote). Each is named; what can be
# read is shown; nothing is written.
rcli zadd canhazgpu:queue "$((T0 - 20))000000000" q3 "$((T0 - 10))000000000" q4 \
	"$((T0 - 5))000000000" q5 "$((T0 - 1))000000000" q6 >/dev/null
rcli set canhazgpu:queue:entry:q4 '{"id":"q4","user":' >/dev/null
rcli set canhazgpu:queue:entry:q5 '{"id":"q5","user":"erin"}' >/dev/null
rcli set canhazgpu:queue:entry:q6 "{\"id\":\"q6\",\"user\":\"fay\",\"actual_user\":\"fay\",\"requested_count\":1,\"allocated_gpus\":[],\"reservation_type\":\"run\",\"enqueue_time\":$((T0 - 1)),\"last_heartbeat\":\"$(utc $((T0 - 1)))\",\"wait_timeout\":60000000000}" >/dev/null
ledger_keys >queue.before
check_output 'queue: entries half-written named, the rest shown, status 1' 'hr queue' <<'EOF'
GPU Reservation Queue
=====================

Position   User            Requested       Allocated    Waiting
--------   ----            ---------       ---------    -------
1          alice           2 GPUs          1/2          0h 1m 5s
2          a-very-long-... IDs: [1 3]      0/2          0h 0m 30s
3          erin            0 GPUs          0/0          -
4          fay             1 GPUs          0/1          0h 0m 1s

Total: 4 entries waiting for 4 GPUs (1 partially allocated)
exit 1
gpu-reserve: canhazgpu:queue:entry:q3: missing (left as it is)
gpu-reserve: canhazgpu:queue:entry:q4: not JSON (left as it is)
gpu-reserve: canhazgpu:queue:entry:q5: actual_user, requested_count, allocated_gpus, reservation_type, enqueue_time, last_heartbeat: missing (left as it is)
gpu-reserve: canhazgpu:queue:entry:q6: wait_timeout: a number (a wait in nanoseconds, as written before), not a time (left as it is)
EOF
check_output 'queue --json: those read as Go reads them (zero values, null), the number kept; nothing rewritten' \
	'k8shazgpu host queue --json 2>/dev/null | jq -c ".entries[2:][]"; ledger_keys | cmp - queue.before && echo unchanged' <<EOF
{"id":"q5","user":"erin","actual_user":"","requested_count":0,"allocated_gpus":null,"reservation_type":"","enqueue_time":null,"last_heartbeat":null}
{"id":"q6","user":"fay","actual_user":"fay","requested_count":1,"allocated_gpus":[],"reservation_type":"run","enqueue_time":"$(utc $((T0 - 1)))","last_heartbeat":"$(utc $((T0 - 1)))","wait_timeout":60000000000}
unchanged
EOF

# A request that waits: its wrapper stopped by SIGTERM takes it out of
# the queue.
rcli flushdb >/dev/null
gpu-reserve init -g 2 >/dev/null
gpu-reserve reserve -g 1 -u dave >/dev/null
k8shazgpu host reserve -g 2 >wait.out 2>wait.err &
wait_pid=$!
check 'reserve waits in the queue' 'eventually 20 queued 1'
kill -TERM "$wait_pid"
wait "$wait_pid"
wait_st=$?
check_output 'reserve: SIGTERM while waiting leaves the queue, nothing held' \
	'echo "exit $wait_st"; cat wait.out; rcli zcard canhazgpu:queue; rcli keys "canhazgpu:queue:entry:*"; k8shazgpu host status -j | jq -r ".[1].status"' <<'EOF'
exit 143
0

AVAILABLE
EOF

# The same SIGTERM, sent 0 to 90 ms after the wrapper starts (before it
# waits, while it starts the request, while the request queues): each
# time the wrapper ends and leaves nothing queued or held, and no request
# of its own goes on waiting.
early_term() {
	for d in 0 0.01 0.02 0.03 0.04 0.05 0.06 0.07 0.08 0.09; do
		k8shazgpu host reserve -g 2 >/dev/null 2>&1 &
		p=$!
		sleep $d
		kill -TERM $p
		wait $p || :
	done
	sleep 1
	echo "queued $(rcli zcard canhazgpu:queue), entries $(rcli keys 'canhazgpu:queue:entry:*' | grep -c .)"
	pgrep -f 'gpu-reserve.* reserve -t manual' || echo "no request left"
	k8shazgpu host status -j | jq -r '.[] | "\(.gpu_id) \(.status) \(.user // "")"' | sed 's/ *$//'
}
check_output 'reserve: SIGTERM early in its start, ten times: nothing left queued or held' early_term <<'EOF'
queued 0, entries 0
no request left
0 IN_USE alice (dave)
1 AVAILABLE
EOF

# ---- report ----

T0=$(date +%s)
K8SHAZGPU_NOW=$T0
rcli flushdb >/dev/null
rcli set canhazgpu:gpu_count 2 >/dev/null
# history members: USER GPU TYPE SECONDS, ended an hour before T0.
history() {
	e=$((T0 - 3600))
	rcli zadd canhazgpu:usage_history_sorted $e "{\"user\":\"$1\",\"gpu_id\":$2,\"start_time\":\"$(utc $((e - $4)))\",\"end_time\":\"$(utc $e)\",\"duration_seconds\":$4,\"reservation_type\":\"$3\"}" >/dev/null
}
history alice 0 run 3600
history alice 1 manual 1800
history bob 0 manual 1800
d0=$(date -u -d "@$((T0 - 30 * 86400))" +%F) d1=$(date -u -d "@$T0" +%F)

check_output 'report: GPU hours per user' 'hr report' <<EOF

=== GPU Reservation Report ===
Period: $d0 to $d1 (30 days)

User                       GPU Hours      Percentage        Run     Manual
---------------------------------------------------------------------------
alice                           1.50           75.0%          1          1
bob                             0.50           25.0%          0          1
---------------------------------------------------------------------------
TOTAL                           2.00         100.0%          1          2

Total reservations: 3
Unique users: 2

exit 0
EOF

check_output 'report -j -d 7: canhazgpu'"'"'s JSON' 'k8shazgpu host report -j -d 7 | jq -c .' <<EOF
{"users":[{"name":"alice","gpu_hours":1.5,"percentage":75,"run_count":1,"manual_count":1},{"name":"bob","gpu_hours":0.5,"percentage":25,"run_count":0,"manual_count":1}],"total_gpu_hours":2,"total_reservations":3,"unique_users":2,"start_date":"$(date -u -d "@$((T0 - 7 * 86400))" +%F)","end_date":"$d1","days":7}
EOF

# The window of canhazgpu's report: records counted whole, from their
# duration_seconds, when they ended inside it; the reservations held now
# from their start, a shared account's as "account (user)".
rcli flushdb >/dev/null
rcli set canhazgpu:gpu_count 3 >/dev/null
# record END USER SECONDS TIMES-APART TYPE
record() {
	rcli zadd canhazgpu:usage_history_sorted "$1" "{\"user\":\"$2\",\"gpu_id\":0,\"start_time\":\"$(utc $(($1 - $4)))\",\"end_time\":\"$(utc "$1")\",\"duration_seconds\":$3,\"reservation_type\":\"$5\"}" >/dev/null
}
record $((T0 - 3600)) alice 1200 7200 run
record $((T0 - 2 * 86400)) carol 864000 864000 manual
record $((T0 - 8 * 86400)) dave 3600 3600 manual
rcli set canhazgpu:gpu:0 "{\"user\":\"alice\",\"actual_user\":\"bob\",\"start_time\":$((T0 - 7200)),\"type\":\"manual\",\"expiry_time\":$((T0 + 3600))}" >/dev/null
rcli set canhazgpu:gpu:1 "{\"user\":\"erin\",\"actual_user\":\"erin\",\"start_time\":\"$(utc $((T0 - 10800)))\",\"last_heartbeat\":\"$(utc $((T0 - 30)))\",\"type\":\"run\",\"expiry_time\":null,\"last_released\":null}" >/dev/null
d7=$(date -u -d "@$((T0 - 7 * 86400))" +%F)

check_output 'report -d 7: duration_seconds, records ended in the window whole, held ones from their start, "account (user)"' 'hr report -d 7' <<EOF

=== GPU Reservation Report ===
Period: $d7 to $d1 (7 days)

User                       GPU Hours      Percentage        Run     Manual
---------------------------------------------------------------------------
carol                         240.00           97.8%          0          1
erin                            3.00            1.2%          1          0
bob (alice)                     2.00            0.8%          0          1
alice                           0.33            0.1%          1          0
---------------------------------------------------------------------------
TOTAL                         245.33         100.0%          2          2

Total reservations: 4
Unique users: 4

exit 0
EOF

check_output 'report -j: the same, numbers unrounded, as Go'"'"'s json.MarshalIndent writes them' 'hr report -j -d 7' <<EOF
{
  "users": [
    {
      "name": "carol",
      "gpu_hours": 240,
      "percentage": 97.82608695652173,
      "run_count": 0,
      "manual_count": 1
    },
    {
      "name": "erin",
      "gpu_hours": 3,
      "percentage": 1.2228260869565217,
      "run_count": 1,
      "manual_count": 0
    },
    {
      "name": "bob (alice)",
      "gpu_hours": 2,
      "percentage": 0.8152173913043478,
      "run_count": 0,
      "manual_count": 1
    },
    {
      "name": "alice",
      "gpu_hours": 0.3333333333333333,
      "percentage": 0.1358695652173913,
      "run_count": 1,
      "manual_count": 0
    }
  ],
  "total_gpu_hours": 245.33333333333334,
  "total_reservations": 4,
  "unique_users": 4,
  "start_date": "$d7",
  "end_date": "$d1",
  "days": 7
}
exit 0
EOF

rcli flushdb >/dev/null
rcli set canhazgpu:gpu_count 3 >/dev/null
check_output 'report -j with no users: null, as canhazgpu'"'"'s' 'hr report -j -d 1' <<EOF
{
  "users": null,
  "total_gpu_hours": 0,
  "total_reservations": 0,
  "unique_users": 0,
  "start_date": "$(date -u -d "@$((T0 - 86400))" +%F)",
  "end_date": "$d1",
  "days": 1
}
exit 0
EOF

record $((T0 - 60)) zed 0 0 manual
check_output 'report: nothing but 0 s: the percentage NaN, as canhazgpu'"'"'s 0 / 0' 'hr report | sed -n "/^zed/p"' <<'EOF'
zed                             0.00            NaN%          0          1
EOF

# ---- Redis options and failures ----

dead=$(free_port)
check_output 'Redis unreachable: 75, the address named' 'hr --redis-host 127.0.0.1 --redis-port '"$dead"' status' <<EOF
exit 75
gpu-reserve: redis 127.0.0.1:$dead: Connection refused
EOF

check_output 'no pool: how to make one' 'rcli flushdb >/dev/null; hr status' <<'EOF'
exit 1
gpu-reserve: canhazgpu:gpu_count is not set; initialise the pool with `gpu-reserve init -g N` (or canhazgpu admin --gpus N)
EOF

# A second server on a unix socket, with a password.
redis-server --port 0 --unixsocket "$SCRATCH/r.sock" --requirepass s3cret --save '' \
	--appendonly no --daemonize yes --pidfile "$SCRATCH/sock.pid" --logfile "$SCRATCH/sock.log" \
	--dir "$SCRATCH" >/dev/null
trap 'stop_redis; [ ! -s "$SCRATCH/sock.pid" ] || kill "$(cat "$SCRATCH/sock.pid")" 2>/dev/null' EXIT
eventually 10 test -S r.sock
printf 's3cret\n' >pw

check_output '--redis-socket (relative), --redis-password-file' \
	'hr --redis-socket r.sock --redis-password-file pw admin --gpus 2 -p fake; hr --redis-password-file=pw status --redis-socket='"$SCRATCH"'/r.sock | tail -n 2' <<'EOF'
Using explicitly specified GPU provider: fake
Using fake GPU provider for development/testing
Initialized 2 GPUs (IDs 0 to 1)
exit 0
 1   │ ● AVAILABLE │ -    │ -        │ -    │ never used │ 0MB used   │ -    
exit 0
EOF

check_output '--redis-socket without the password: refused, the password never shown' \
	'hr --redis-socket r.sock status; grep -c s3cret hr.err' <<EOF
exit 1
gpu-reserve: redis $SCRATCH/r.sock: authentication failed: NOAUTH Authentication required.
0
EOF

check_output '--redis-socket with --redis-host: one or the other' 'hr --redis-socket r.sock --redis-host 127.0.0.1 status' <<'EOF'
exit 2
k8shazgpu host status: --redis-socket and --redis-host/--redis-port: give one
EOF

# ---- usage ----

check_output 'an unknown option: the verb'"'"'s usage, 2' 'hr reserve --bogus; hr reserve -g' <<'EOF'
exit 2
k8shazgpu host reserve: --bogus: unknown option
usage: k8shazgpu host reserve [-g N] [-G ids] [-d duration] [-n note] [-u user] [-f] [--nonblock] [-w duration] [-s]
exit 2
k8shazgpu host reserve: -g needs a value
EOF

check_output 'an unknown verb, an unknown group option, no verb' 'hr frob; hr --frob status; hr' <<'EOF'
exit 2
k8shazgpu host: frob: unknown verb
usage: k8shazgpu-host [--redis-host H] [--redis-port P] [--redis-socket PATH]
                      [--redis-db N] [--redis-password-file F]
                      [--memory-threshold MIB] verb [options]
       k8shazgpu host ..., the same
exit 2
k8shazgpu host: --frob: unknown option
usage: k8shazgpu-host [--redis-host H] [--redis-port P] [--redis-socket PATH]
                      [--redis-db N] [--redis-password-file F]
                      [--memory-threshold MIB] verb [options]
       k8shazgpu host ..., the same
exit 2
usage: k8shazgpu-host [--redis-host H] [--redis-port P] [--redis-socket PATH]
                      [--redis-db N] [--redis-password-file F]
                      [--memory-threshold MIB] verb [options]
       k8shazgpu host ..., the same
EOF

check_output '-h: the group, a verb, on stdout' 'hr -h | sed -n "5p;\$p"; hr queue -h; hr admin --help | head -1' <<'EOF'
verbs, as canhazgpu's, on the Redis GPU ledger shared with Kubernetes:
exit 0
usage: k8shazgpu host queue [--json]
The requests waiting for GPUs, first come first served.
      --json            canhazgpu's JSON
exit 0
usage: k8shazgpu host admin --gpus N [--force] [-p nvidia|amd|fake]
EOF

check_output 'k8shazgpu lists host; k8shazgpu-host runs on its own too' \
	'k8shazgpu -h | grep -A1 "^  host"; k8shazgpu-host admin 2>&1; echo "exit $?"' <<'EOF'
  host VERB ...           the host's GPUs as canhazgpu: reserve, release, run,
                          status, queue, report, admin (k8shazgpu-host(1))
k8shazgpu host admin: --gpus is required
exit 2
EOF

wait "$kill_pid"
check_output 'run -t: a command that ignores SIGINT is killed 30 s later: 137; the GPU released' \
	'cat kill.out kill.err; rcli -n 3 get canhazgpu:gpu:0 | jq -c "[(.last_released | type), has(\"user\")]"' <<'EOF'
Reserved 1 GPU(s): [0] for command execution (timeout: 0h 0m 1s)
started
exit 137
gpu-reserve: timeout of 0h 0m 1s reached; SIGINT sent to the command (SIGKILL in 30 s if it is still there)
gpu-reserve: the command is still there 30 s after SIGINT; SIGKILL sent
["string",false]
EOF

rcli -n 4 flushdb >/dev/null
gpu-reserve -D 4 init -g 1 >/dev/null
gpu-reserve -D 4 reserve -G 0 -n 'a <b> & "c"' >/dev/null
check_output 'status --json: <, > and & escaped as Go'"'"'s encoder escapes them' \
	'hr --redis-db 4 status --json | grep note' <<'EOF'
    "note": "a \u003cb\u003e \u0026 \"c\"",
EOF

done_testing
