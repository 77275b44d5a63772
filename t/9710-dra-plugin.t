#!/bin/sh
# dra-plugin's decisions, in request-record mode (-), on claims the real
# scheduler allocated on a KWOK node of this test's own, with a real
# redis-server as the node's canhazgpu ledger: the answer and the CDI spec
# of a claim for two whole GPUs and of two claims for MIG devices of one
# GPU; holds in Redis all or none; refusals naming the holder; every bad
# input of the issue (no such claim, replaced, not allocated, a device the
# node lacks, a corrupt checkpoint, a spec that cannot be written, Redis
# down); unprepare; and the reconcile after claims went away.
. "$(dirname "$0")/lib.sh"
need_cluster
NS=t9710
NODE=t9710
TOPO=$FIXTURES/dra/t9710.yaml

cleanup() {
	cl_rc=0
	ns_deleted "$NS" 120 || cl_rc=1
	k delete node "$NODE" --ignore-not-found --wait=false >/dev/null 2>&1
	gone 60 "node $NODE" k get node "$NODE" --ignore-not-found -o name || cl_rc=1
	k delete resourceslices --field-selector "spec.nodeName=$NODE" >/dev/null 2>&1
	return $cl_rc
}
cleanup || { echo "Bail out! t9710: what an earlier run left is not gone"; exit 1; }
start_redis
trap 'stop_redis; cleanup || exit 1' EXIT
trap 'exit 1' INT TERM
yaml2json "$TOP/manifests/deviceclasses.yaml" | claim-make -a >/dev/null
k create namespace "$NS" >/dev/null
k8shazgpu-sim nodes "$TOPO" | claim-make -a >/dev/null
gpu-probe -t "$TOPO" -n "$NODE" >gpus.json
claim-make -a -m k8shazgpu-nodeagent -N "$NODE" gpus.json >/dev/null
eventually 60 k get serviceaccount default -n "$NS" >/dev/null
gpu-reserve init -g 4 >/dev/null

# claim NAME CLASS CEL [COUNT]: a ResourceClaim of one request "gpus" and a
# pod on the node using it; the selector makes the allocation known.
claim() {
	jq -n -c --arg name "$1" --arg class "$2" --arg cel "$3" --argjson count "${4:-1}" \
		--arg ns "$NS" --arg node "$NODE" '
	{apiVersion: "resource.k8s.io/v1", kind: "ResourceClaim", metadata: {name: $name, namespace: $ns},
	 spec: {devices: {requests: [{name: "gpus", exactly: {deviceClassName: $class, count: $count,
		selectors: [{cel: {expression: $cel}}]}}]}}},
	{apiVersion: "v1", kind: "Pod", metadata: {name: $name, namespace: $ns},
	 spec: {nodeSelector: {"kubernetes.io/hostname": $node},
		tolerations: [{key: "kwok.x-k8s.io/node", operator: "Exists", effect: "NoSchedule"}],
		resourceClaims: [{name: "gpus", resourceClaimName: $name}],
		containers: [{name: "main", image: "registry.invalid/none:0", resources: {claims: [{name: "gpus"}]}}]}}' |
		k create -f - >/dev/null
}
attr='device.attributes["gpu.canhazgpu.dev"]'
allocated() { k get resourceclaim -n "$NS" "$1" -o json | jq -e '.status.allocation != null' >/dev/null; }
uid() { k get resourceclaim -n "$NS" "$1" -o jsonpath='{.metadata.uid}'; }
devs() { k get resourceclaim -n "$NS" "$1" -o json | jq -r '[.status.allocation.devices.results[].device] | join(" ")'; }
req() { printf '{"kind":"%s","claims":[{"namespace":"%s","uid":"%s","name":"%s"}]}\n' "$1" "$NS" "$3" "$2"; }
# plugin: dra-plugin on this test's directories, request records on stdin.
plugin() { dra-plugin -N "$NODE" -g gpus.json -k kdir -C cdi -r "$REDIS" -L 2 "$@" -; }
# ledger: GPU state user type, one line per GPU.
ledger() { gpu-reserve status | jq -r '[.gpu, .state, .user // "-", .type // "-"] | map(tostring) | join(" ")'; }
# dump: every Redis key with its value, to compare before and after.
dump() { for key in $(rcli --scan | sort); do printf '%s ' "$key"; rcli --raw dump "$key" | od -An -c | tr -d ' \n'; echo; done; }

claim two gpu.canhazgpu.dev "$attr.index <= 1" 2
claim miga mig.canhazgpu.dev "$attr.profile == \"2g.20gb\""
claim migb mig.canhazgpu.dev "$attr.profile == \"2g.20gb\""
check 'the scheduler allocates the three claims' 'eventually 60 allocated two && eventually 60 allocated miga && eventually 60 allocated migb'
TWO=$(uid two) MIGA=$(uid miga) MIGB=$(uid migb)
check_output 'two gets gpu-0 and gpu-1' 'devs two' <<'EOF'
gpu-0 gpu-1
EOF

# --- prepare: the answer, the spec, the holds
check_output 'prepare two: one CDI device for the request, on its first device' \
	"req prepare two $TWO | plugin | sed 's/$TWO/UID/g'" <<'EOF'
{"claims":{"UID":{"devices":[{"cdiDeviceIDs":["k8s.canhazgpu.dev/claim=UID-gpus"],"deviceName":"gpu-0","poolName":"t9710","requestNames":["gpus"]},{"cdiDeviceIDs":[],"deviceName":"gpu-1","poolName":"t9710","requestNames":["gpus"]}]}},"kind":"prepare"}
EOF
# Full mode (the default) on a node with neither GPU nodes nor a driver:
# env only, and why. Whether the simulated records carry a minor number
# is gpu-probe -t's business: a minor-numbers annotation is not compared.
check_output 'its CDI spec: the two UUIDs, no device node and no driver file (none here), and why' \
	"jq -S 'del(.annotations[\"canhazgpu.dev/minor-numbers\"])' cdi/k8s.canhazgpu.dev-claim_$TWO.json | sed 's/$TWO/UID/g'" <<'EOF'
{
  "annotations": {
    "canhazgpu.dev/cdi-mode": "full",
    "canhazgpu.dev/claim": "t9710/two",
    "canhazgpu.dev/claim-uid": "UID",
    "canhazgpu.dev/device-nodes": "none: /dev/nvidia0 does not exist on this node, so no device node is passed for any GPU; the devices are named by CUDA_VISIBLE_DEVICES and NVIDIA_VISIBLE_DEVICES only",
    "canhazgpu.dev/driver": "none: no library of driver 550.90.07 under /, so none is mounted: the container has the driver only if the node's runtime adds it"
  },
  "cdiVersion": "0.6.0",
  "devices": [
    {
      "containerEdits": {
        "env": [
          "CUDA_VISIBLE_DEVICES=GPU-72842d3a-957e-b54c-8e1b-badb49457399,GPU-559a4d91-4890-c661-74f7-29a7697133b5",
          "NVIDIA_VISIBLE_DEVICES=GPU-72842d3a-957e-b54c-8e1b-badb49457399,GPU-559a4d91-4890-c661-74f7-29a7697133b5",
          "CANHAZGPU_CLAIM=t9710/two",
          "CANHAZGPU_CLAIM_UID=UID",
          "CANHAZGPU_DEVICES=gpu-0,gpu-1"
        ]
      },
      "name": "UID-gpus"
    }
  ],
  "kind": "k8s.canhazgpu.dev/claim"
}
EOF
check_output 'GPUs 0 and 1 are held for it in the ledger' ledger <<'EOF'
0 IN_USE k8s:t9710/two k8s
1 IN_USE k8s:t9710/two k8s
2 AVAILABLE - -
3 AVAILABLE - -
EOF
dump >before
check_output 'a second prepare (a kubelet restart) answers the same' \
	"req prepare two $TWO | plugin | sed 's/$TWO/UID/g'" <<'EOF'
{"claims":{"UID":{"devices":[{"cdiDeviceIDs":["k8s.canhazgpu.dev/claim=UID-gpus"],"deviceName":"gpu-0","poolName":"t9710","requestNames":["gpus"]},{"cdiDeviceIDs":[],"deviceName":"gpu-1","poolName":"t9710","requestNames":["gpus"]}]}},"kind":"prepare"}
EOF
check 'and writes nothing in Redis' 'dump >after && cmp before after'

# --- MIG: two claims on MIG devices of GPU 3
check_output 'prepare miga and migb in one call: both get their MIG device' \
	"{ req prepare miga $MIGA; req prepare migb $MIGB; } | plugin | jq -r '.claims[].devices[] | \"\\(.deviceName) \\(.cdiDeviceIDs | length)\"' | sort" <<EOF
$(devs miga) 1
$(devs migb) 1
EOF
mig_uuid() { gpu-probe -t "$TOPO" -n "$NODE" | claim-make -N "$NODE" | jq -r --arg d "$1" 'select(.kind == "ResourceSlice") | .spec.devices[] | select(.name == $d) | .attributes.uuid.string'; }
check_output "miga's container sees its own MIG device only" \
	"jq -r '.devices[0].containerEdits.env[0,1]' cdi/k8s.canhazgpu.dev-claim_$MIGA.json" <<EOF
CUDA_VISIBLE_DEVICES=$(mig_uuid "$(devs miga)")
NVIDIA_VISIBLE_DEVICES=$(mig_uuid "$(devs miga)")
EOF
check_output 'GPU 3 is held for MIG devices, shared by both claims' ledger <<'EOF'
0 IN_USE k8s:t9710/two k8s
1 IN_USE k8s:t9710/two k8s
2 AVAILABLE - -
3 IN_USE k8s:mig k8s
EOF
check_output 'the host cannot take GPU 3' 'gpu-reserve reserve -G 3 -u carol -b 2>&1; echo "status $?"' <<'EOF'
gpu-reserve: GPU 3 is already reserved by user 'k8s:mig'
status 1
EOF

# --- a host user holds the GPU the scheduler gave
gpu-reserve reserve -G 2 -u alice -d 1h >/dev/null
claim held gpu.canhazgpu.dev "$attr.index == 2"
check 'the scheduler gives claim held GPU 2 (the slice still offers it)' 'eventually 60 allocated held'
HELD=$(uid held)
dump >before
check_output 'prepare held: refused, naming the holder' \
	"req prepare held $HELD | plugin 2>err | sed 's/$HELD/UID/g' | jq -c '.claims.UID.error |= sub(\"since [^)]*\"; \"since T\")'" <<'EOF'
{"claims":{"UID":{"error":"GPU 2 is held by alice (manual reservation since T)"}},"kind":"prepare"}
EOF
check 'nothing is written in Redis' 'dump >after && cmp before after'
check 'no CDI spec for it' "! test -e cdi/k8s.canhazgpu.dev-claim_$HELD.json"
check_output 'the refusal is logged too' "sed 's/$HELD/UID/; s/since [^)]*/since T/' err" <<'EOF'
dra-plugin: prepare t9710/held (UID): GPU 2 is held by alice (manual reservation since T)
EOF
gpu-reserve release -u alice >/dev/null
check_output 'alice released it: the next prepare succeeds' \
	"req prepare held $HELD | plugin | jq -r '.claims[].devices[].deviceName'" <<'EOF'
gpu-2
EOF

# --- bad input
claim_err() { plugin 2>/dev/null | jq -r '.claims[].error'; }
check_output 'a claim that does not exist' "req prepare nope 0000-1111 | claim_err" <<'EOF'
resourceclaim t9710/nope not found
EOF
check_output 'a claim that was replaced (other uid)' "req prepare two 0000-1111 | claim_err | sed 's/$TWO/UID/'" <<'EOF'
resourceclaim t9710/two was replaced: its uid is UID, not 0000-1111
EOF
jq -n -c --arg ns "$NS" '{apiVersion: "resource.k8s.io/v1", kind: "ResourceClaim", metadata: {name: "idle", namespace: $ns},
	spec: {devices: {requests: [{name: "gpus", exactly: {deviceClassName: "gpu.canhazgpu.dev"}}]}}}' | k create -f - >/dev/null
check_output 'a claim that is not allocated' "req prepare idle \$(uid idle) | claim_err" <<'EOF'
resourceclaim t9710/idle is not allocated
EOF
gpu-probe -t "$FIXTURES/dra/t9710-small.yaml" -n "$NODE" >small.json
jq -c '.node = "other"' gpus.json >other.json
check_output 'a device the node does not have' \
	"req prepare two $TWO | dra-plugin -N $NODE -g small.json -k kdir2 -C cdi2 - 2>/dev/null | jq -r '.claims[].error'" <<'EOF'
resourceclaim t9710/two: node t9710 has no device gpu-1
EOF
check_output "a device of another node's pool" \
	"req prepare two $TWO | dra-plugin -N other -g other.json -k kdir2 -C cdi2 - 2>/dev/null | jq -r '.claims[].error'" <<'EOF'
resourceclaim t9710/two: device gpu-0 is of pool t9710, not of this node other
EOF
check_output 'a request record that is not one: exit 1, named by position' \
	"printf '%s\n' '{\"kind\":\"prepare\"}' | plugin; echo \"status \$?\"" <<'EOF'
status 1
EOF
check_output '... with the message' "printf '%s\n' '{\"kind\":\"prepare\"}' | plugin 2>&1 >/dev/null" <<'EOF'
dra-plugin: <stdin>:1: not a request: want kind prepare or unprepare with claims, or reconcile
EOF
check 'the checkpoint names every claim prepared' \
	"jq -r '.claims | to_entries | map(\"\\(.value.name) \\(.value.state)\") | sort | join(\",\")' kdir/plugins/gpu.canhazgpu.dev/checkpoint.json | grep -x 'held prepared,miga prepared,migb prepared,two prepared'"

# A spec that cannot be written: its path is taken by a directory.
claim nospec mig.canhazgpu.dev "$attr.profile == \"1g.10gb\""
eventually 60 allocated nospec
NOSPEC=$(uid nospec)
mkdir "cdi/k8s.canhazgpu.dev-claim_$NOSPEC.json"
check_output 'a CDI spec that cannot be written fails the claim' \
	"req prepare nospec $NOSPEC | plugin 2>/dev/null | jq -r '.claims[].error' | sed 's/$NOSPEC/UID/'" <<'EOF'
cdi/k8s.canhazgpu.dev-claim_UID.json: Is a directory
EOF
check_output '... and its hold is undone: GPU 3 still serves miga and migb only' \
	'rcli smembers canhazgpu:k8s:gpu:3:claims | sort' <<EOF
$(printf '%s\n' "$MIGA" "$MIGB" | sort)
EOF
check 'nor is it checkpointed' "! jq -e --arg u '$NOSPEC' '.claims[\$u]' kdir/plugins/gpu.canhazgpu.dev/checkpoint.json >/dev/null"
rmdir "cdi/k8s.canhazgpu.dev-claim_$NOSPEC.json"

# Redis down during a prepare, then back, with one plugin process.
rcli save >/dev/null
mkfifo to from
plugin <to >from 2>coproc.err &
ppid=$!
exec 3>to 4<from
stop_redis
eventually 10 sh -c '! redis-cli -p $REDIS_PORT ping >/dev/null 2>&1'
req prepare nospec "$NOSPEC" >&3
read -r line <&4
check_output 'Redis down: the claim fails, saying so, nothing held' \
	"echo '$line' | jq -r '.claims[].error'" <<EOF
redis $REDIS: Connection refused; nothing was held (will be retried)
EOF
redis-server --bind 127.0.0.1 --port "$REDIS_PORT" --save '' --appendonly no --daemonize yes \
	--pidfile "$SCRATCH/redis.pid" --logfile "$SCRATCH/redis.log" --dir "$SCRATCH" >/dev/null 3>&- 4<&-
eventually 10 redis_is_ours
req prepare nospec "$NOSPEC" >&3
read -r line <&4
check_output 'Redis back: the same process prepares it' \
	"echo '$line' | jq -r '.claims[].devices[].deviceName'" <<EOF
$(devs nospec)
EOF
exec 3>&- 4<&-
wait $ppid
check "the plugin ended with status 0 at the end of its input" "test $? -eq 0"
check_output 'GPU 3 now serves three claims' 'rcli scard canhazgpu:k8s:gpu:3:claims' <<'EOF'
3
EOF

# --- a corrupt checkpoint: set aside, the claims found from the specs
CK=kdir/plugins/gpu.canhazgpu.dev/checkpoint.json
printf '{"version":1,"claims":{' >"$CK"
echo '{"kind":"reconcile"}' | plugin >rec.out 2>rec.err
check_output 'a corrupt checkpoint is named, with the position, and set aside' \
	"sed 's/corrupt-[0-9]*/corrupt-T/' rec.err" <<EOF
dra-plugin: checkpoint $CK: line 1 column 23: string or '}' expected near end of file; set aside as $CK.corrupt-T, the claims prepared are found again from the CDI specs in cdi
dra-plugin: none: no library of driver 550.90.07 under /, so none is mounted: the container has the driver only if the node's runtime adds it
EOF
check 'the damaged file is kept' "test \"\$(cat $CK.corrupt-*)\" = '{\"version\":1,\"claims\":{'"
check_output 'every prepared claim is adopted again from its spec' \
	"jq -r '(.adopted | length), (.errors | length)' rec.out" <<'EOF'
5
0
EOF
check_output 'and checkpointed as prepared' \
	"jq -r '.claims | map(.name + \" \" + .state) | sort | join(\",\")' $CK" <<'EOF'
held prepared,miga prepared,migb prepared,nospec prepared,two prepared
EOF

# --- unprepare
check_output 'unprepare two: answered with no error' \
	"req unprepare two $TWO | plugin | sed 's/$TWO/UID/g'" <<'EOF'
{"claims":{"UID":{}},"kind":"unprepare"}
EOF
check 'its spec is gone' "! test -e cdi/k8s.canhazgpu.dev-claim_$TWO.json"
check_output 'GPUs 0 and 1 are free again' 'ledger | head -n 2' <<'EOF'
0 AVAILABLE - -
1 AVAILABLE - -
EOF
check_output 'unprepare of a claim never prepared here succeeds' \
	"req unprepare x 0000-2222 | plugin" <<'EOF'
{"claims":{"0000-2222":{}},"kind":"unprepare"}
EOF
req unprepare miga "$MIGA" | plugin >/dev/null
check_output 'miga gone: GPU 3 still held for migb and nospec' 'ledger | tail -n 1' <<'EOF'
3 IN_USE k8s:mig k8s
EOF
{ req unprepare migb "$MIGB"; req unprepare nospec "$NOSPEC"; } | plugin >/dev/null
check_output 'the last MIG claim gone: GPU 3 is free' 'ledger | tail -n 1' <<'EOF'
3 AVAILABLE - -
EOF

# --- reconcile: a prepared claim deleted while the plugin was away
k delete pod -n "$NS" held --wait=false >/dev/null
k delete resourceclaim -n "$NS" held --wait=false >/dev/null
gone 60 'claim held' k get resourceclaim -n "$NS" held --ignore-not-found -o name
check_output 'reconcile unprepares the claim that went away' \
	"echo '{\"kind\":\"reconcile\"}' | plugin | sed 's/$HELD/UID/g'" <<'EOF'
{"kind":"reconcile","kept":[],"unprepared":["UID"],"adopted":[],"errors":[]}
EOF
check_output 'its GPU is free and its spec gone' "ledger | sed -n 3p; ls cdi" <<'EOF'
2 AVAILABLE - -
EOF
# --- serving: the same decisions over gRPC on the kubelet's sockets
REG=/pluginregistration.Registration
DRA=/k8s.io.kubelet.pkg.apis.dra.v1.DRAPlugin
DRAB=/k8s.io.kubelet.pkg.apis.dra.v1beta1.DRAPlugin
for c in two miga migb nospec; do k delete pod -n "$NS" $c --wait=false >/dev/null; done
for c in two miga migb nospec; do gone 60 "pod $c" k get pod -n "$NS" $c --ignore-not-found -o name; done
mkdir kserve
dra-plugin -N "$NODE" -g gpus.json -k kserve -C cdis -r "$REDIS" -L 3 serve >serve.out 2>serve.err &
spid=$!
RS=kserve/plugins_registry/gpu.canhazgpu.dev-reg.sock
DS=kserve/plugins/gpu.canhazgpu.dev/dra.sock
check 'serve makes both sockets' "eventually 10 test -S $DS -a -S $RS"
check_output 'GetInfo: DRAPlugin, the driver, the absolute endpoint, v1 first' "unit grpc-call -j $RS $REG/GetInfo </dev/null" <<EOF
status 0
{"type":"DRAPlugin","name":"gpu.canhazgpu.dev","endpoint":"$SCRATCH/$DS","supportedVersions":["v1.DRAPlugin","v1beta1.DRAPlugin"]}
EOF
claim two2 gpu.canhazgpu.dev "$attr.index <= 1" 2
eventually 60 allocated two2
TWO=$(uid two2)
greq() { printf '{"claims":[{"namespace":"%s","uid":"%s","name":"%s"}]}\n' "$NS" "$2" "$1"; }
check_output 'v1 NodePrepareResources over gRPC' \
	"greq two2 $TWO | unit grpc-call -j $DS $DRA/NodePrepareResources | sed 's/$TWO/UID/g'" <<'EOF'
status 0
{"claims":{"UID":{"devices":[{"requestNames":["gpus"],"poolName":"t9710","deviceName":"gpu-0","cdiDeviceIDs":["k8s.canhazgpu.dev/claim=UID-gpus"]},{"requestNames":["gpus"],"poolName":"t9710","deviceName":"gpu-1","cdiDeviceIDs":[]}]}}}
EOF
check_output 'v1beta1 answers the same' \
	"greq two2 $TWO | unit grpc-call -j $DS $DRAB/NodePrepareResources | sed 's/$TWO/UID/g'" <<'EOF'
status 0
{"claims":{"UID":{"devices":[{"requestNames":["gpus"],"poolName":"t9710","deviceName":"gpu-0","cdiDeviceIDs":["k8s.canhazgpu.dev/claim=UID-gpus"]},{"requestNames":["gpus"],"poolName":"t9710","deviceName":"gpu-1","cdiDeviceIDs":[]}]}}}
EOF
printf '\n\377\377\377' >bad.pb
check_output 'a request that does not decode: INVALID_ARGUMENT, the plugin serving on' \
	"unit grpc-call $DS $DRA/NodePrepareResources bad.pb | sed 's/: .*/: .../'" <<'EOF'
status 3
message NodePrepareResourcesRequest: ...
EOF
check_output 'an unknown method: UNIMPLEMENTED' "unit grpc-call $DS $DRA/NodeWatchResources </dev/null" <<EOF
status 12
message unknown method $DRA/NodeWatchResources
EOF
check_output 'a registration the kubelet refused is answered with an error (it tries again)' \
	"echo '{\"registered\":false,\"error\":\"no such version\"}' | unit grpc-call -j $RS $REG/NotifyRegistrationStatus" <<'EOF'
status 9
message registration refused
EOF
# GetInfo while a prepare waits for a lock held by someone else: the
# order of completion, not a time.
claim three gpu.canhazgpu.dev "$attr.index == 2"
eventually 60 allocated three
THREE=$(uid three)
rcli set canhazgpu:allocation_lock someone-else EX 30 >/dev/null
rm -f order
{ greq three "$THREE" | unit grpc-call -j $DS $DRA/NodePrepareResources >slow.out && echo prepare >>order; } &
slow=$!
sleep 1
unit grpc-call -j $RS $REG/GetInfo </dev/null >info.out && echo getinfo >>order
wait $slow
check_output 'GetInfo is answered while a prepare waits for the ledger lock' 'cat order' <<'EOF'
getinfo
prepare
EOF
check_output 'the prepare gives up after -L 3 s, nothing held, the lock left as it is' \
	"sed 1d slow.out | jq -r '.claims[].error'; rcli get canhazgpu:allocation_lock" <<'EOF'
canhazgpu:allocation_lock is held by someone else (waited 3 s); left as it is; nothing was held (will be retried)
someone-else
EOF
rcli del canhazgpu:allocation_lock >/dev/null
kill -TERM $spid
wait $spid
check "SIGTERM: exit 0" "test $? -eq 0"
check 'both sockets removed' "! test -e $DS && ! test -e $RS"
check_output 'each answer was written as a record' "jq -r '.kind' serve.out | sort | uniq -c | sed 's/^ *//'" <<'EOF'
3 prepare
1 reconcile
1 registration
EOF
# --- the wrapper, k8shazgpu-draplugin: the probe of a topology feeding
# the plugin, /healthz and /readyz on a port of its own; ready once the
# kubelet (here: this test) reported it registered, never while it
# reported a failure.
hport=$(free_port)
mkdir kwrap wstate wtmp
WRS=kwrap/plugins_registry/gpu.canhazgpu.dev-reg.sock
WDS=kwrap/plugins/gpu.canhazgpu.dev/dra.sock
# wrapper: the wrapper in a session of its own (wrap.pid: its process
# group), its exit status in wrap.rc once it ended.
wrapper() {
	rm -f wrap.pid wrap.rc
	{
		TMPDIR=$SCRATCH/wtmp setsid sh -c 'echo $$ >wrap.pid; exec "$@"' sh \
			k8shazgpu-draplugin -i 1 -N "$NODE" -t "$TOPO" -H "127.0.0.1:$hport" -- -k kwrap -C cdiw \
			>wrap.out 2>wrap.err
		echo "exit $?" >wrap.rc
	} &
	eventually 10 test -s wrap.pid
}
# wrap_stop: what a failed check left of the wrapper's session goes.
wrap_stop() { [ ! -s wrap.pid ] || kill -TERM -- "-$(cat wrap.pid)" 2>/dev/null; }
trap 'wrap_stop; stop_redis; cleanup || exit 1' EXIT
ended() { eventually 20 test -s wrap.rc && cat wrap.rc && rm -f wrap.pid; }
get() { curl -s -o body -w '%{http_code} ' "http://127.0.0.1:$hport$1" && cat body; }
answers() { [ "$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$hport$1")" = "$2" ]; }
notify() { printf '{"registered":%s,"error":"%s"}\n' "$1" "${2:-}" | unit grpc-call -j $WRS $REG/NotifyRegistrationStatus | head -n 1; }
wrap_gone() { ! ps -o stat= -g "$1" | grep -qv '^Z'; }
age() { touch -d '2000-01-01 00:00:00 UTC' "$1"; }
touched() { if [ "$(stat -c %Y "$1")" -gt 946684800 ]; then echo touched; else echo untouched; fi; }
wrapper
check_output 'the wrapper serves both sockets; /healthz 200' \
	"eventually 20 test -S $WDS -a -S $WRS && eventually 10 answers /healthz 200 && get /healthz" <<'EOF'
200 ok
EOF
check_output 'devices known, the kubelet not heard from: /readyz 503' 'get /readyz; ls wtmp/k8shazgpu-draplugin.*/' <<'EOF'
503 not ready: no cycle finished yet
gpus
EOF
check_output 'NotifyRegistrationStatus registered: /readyz 200 at once' 'notify true; get /readyz; ls wtmp/k8shazgpu-draplugin.*/' <<'EOF'
status 0
200 ok
gpus
ready
EOF
check_output 'a failed registration stops the touches; a good one touches again' \
	'notify false "no such version"; f=$(ls -d wtmp/k8shazgpu-draplugin.*)/ready; age "$f"; sleep 11; touched "$f"
	 notify true; touched "$f"' <<'EOF'
status 9
untouched
status 0
touched
EOF
check_output 'the GetInfo of the wrapped plugin names its endpoint' \
	"unit grpc-call -j $WRS $REG/GetInfo </dev/null | sed 1d | jq -r .endpoint" <<EOF
$SCRATCH/$WDS
EOF
check_output 'TERM: exit 0, sockets removed, nothing of it left' \
	'pg=$(cat wrap.pid); kill -TERM "$pg"; ended
	 eventually 20 wrap_gone "$pg" && echo gone; ls -d wtmp/k8shazgpu-draplugin.* 2>/dev/null; test -e $WDS || test -e $WRS || echo "no sockets"
	 curl -s "http://127.0.0.1:$hport/healthz" || echo refused' <<'EOF'
exit 0
gone
no sockets
refused
EOF
K8SHAZGPU_STATE_DIR=$SCRATCH/wstate wrapper
check_output 'its probe ending stops the plugin: exit 1, sockets removed' \
	'eventually 20 test -S $WRS && notify true >/dev/null && ls wstate
	 pg=$(cat wrap.pid); kill "$(pgrep -s "$pg" -f "gpu-probe -i")"
	 ended; eventually 20 wrap_gone "$pg" && echo gone
	 test -e $WDS || test -e $WRS || echo "no sockets"
	 # the plugin may see its records end before the stop, or not
	 grep -v "^dra-plugin: serving\|^Terminated\|: the gpu records ended;" wrap.err | sort' <<EOF
ready
exit 1
gone
no sockets
dra-plugin: stopped by signal 15; sockets removed
k8shazgpu-draplugin: $NODE: gpu-probe ended (status 143); stopping the plugin
EOF
check_output 'bad options are refused with 2' \
	'must_fail 2 k8shazgpu-draplugin -i 0 2>&1; must_fail 2 k8shazgpu-draplugin -H localhost:1 2>&1
	 must_fail 2 k8shazgpu-draplugin -Z 2>err && tail -n 1 err' <<'EOF'
k8shazgpu-draplugin: -i: not a number of seconds: 0
k8shazgpu-draplugin: -H: not an IPv4 address and port: localhost:1
usage: k8shazgpu-draplugin [-i seconds] [-N node] [-t topology] [-H addr:port] [-- dra-plugin-args...]
EOF
# dra-plugin -R itself: gpu records from a stream that ended are no
# current inventory: registered, it is not ready.
mkdir kend
{ cat gpus.json; echo '{"kind":"flush"}'; } | dra-plugin -N "$NODE" -k kend -C cdie -R kend/ready serve >/dev/null 2>end.err &
epid=$!
ERS=kend/plugins_registry/gpu.canhazgpu.dev-reg.sock
eventually 20 test -S $ERS && echo '{"registered":true}' | unit grpc-call -j $ERS $REG/NotifyRegistrationStatus | head -n 1 >end.out
kill -TERM $epid
wait $epid
echo "exit $?" >>end.out
check_output 'a stream of gpu records that ended: registered, never ready' \
	"cat end.out; test -e kend/ready || echo 'no ready file'; grep 'gpu records ended' end.err" <<'EOF'
status 0
exit 0
no ready file
dra-plugin: <stdin>: the gpu records ended; the device inventory is no longer current
EOF
done_testing
