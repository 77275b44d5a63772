#!/bin/sh
# dra-plugin's prepare after a crash at each point of it (the reasoning
# is in tools/dra-plugin/dra.c, above prepare_one), with claims the real
# scheduler allocated on a KWOK node of this test's own and a real
# redis-server as the ledger: one synced write per prepare and per
# unprepare; the states each crash leaves, made by hand, and what the
# next prepare, unprepare or reconcile makes of them; and, serving, claims
# read from the watch cache, and from the API server once unprepared;
# the time of each phase on stderr (-v) and as metrics (-M).
. "$(dirname "$0")/lib.sh"
need_cluster
NS=t9712
NODE=t9712

cleanup() {
	cl_rc=0
	ns_deleted "$NS" 120 || cl_rc=1
	k delete node "$NODE" --ignore-not-found --wait=false >/dev/null 2>&1
	gone 60 "node $NODE" k get node "$NODE" --ignore-not-found -o name || cl_rc=1
	k delete resourceslices --field-selector "spec.nodeName=$NODE" >/dev/null 2>&1
	return $cl_rc
}
cleanup || { echo "Bail out! t9712: what an earlier run left is not gone"; exit 1; }
start_redis
spid=
trap '[ -z "$spid" ] || kill "$spid" 2>/dev/null; stop_redis; cleanup || exit 1' EXIT
trap 'exit 1' INT TERM
cat >topo.yaml <<'EOF'
defaults: {product: NVIDIA-H100-80GB-HBM3, memoryMiB: 81559, computeCapability: "9.0",
  driverVersion: "550.90.07", cudaVersion: "12.4", cpu: "64", memory: 512Gi, pods: "110",
  labels: {pool: t9712}}
nodes:
- name: t9712
  gpus: 2
EOF
yaml2json "$TOP/manifests/deviceclasses.yaml" | claim-make -a >/dev/null
k create namespace "$NS" >/dev/null
k8shazgpu-sim nodes topo.yaml | claim-make -a >/dev/null
gpu-probe -t topo.yaml -n "$NODE" >gpus.json
claim-make -a -m k8shazgpu-nodeagent -N "$NODE" gpus.json >/dev/null
eventually 60 k get serviceaccount default -n "$NS" >/dev/null
gpu-reserve init -g 2 >/dev/null

# claim NAME INDEX: a ResourceClaim of GPU INDEX and a pod on the node
# using it (the pod makes the claim reserved).
claim() {
	jq -n -c --arg name "$1" --arg cel "device.attributes[\"gpu.canhazgpu.dev\"].index == $2" \
		--arg ns "$NS" --arg node "$NODE" '
	{apiVersion: "resource.k8s.io/v1", kind: "ResourceClaim", metadata: {name: $name, namespace: $ns},
	 spec: {devices: {requests: [{name: "gpus", exactly: {deviceClassName: "gpu.canhazgpu.dev",
		selectors: [{cel: {expression: $cel}}]}}]}}},
	{apiVersion: "v1", kind: "Pod", metadata: {name: $name, namespace: $ns},
	 spec: {nodeSelector: {"kubernetes.io/hostname": $node},
		tolerations: [{key: "kwok.x-k8s.io/node", operator: "Exists", effect: "NoSchedule"}],
		resourceClaims: [{name: "gpus", resourceClaimName: $name}],
		containers: [{name: "main", image: "registry.invalid/none:0", resources: {claims: [{name: "gpus"}]}}]}}' |
		k create -f - >/dev/null
}
reserved() { k get resourceclaim -n "$NS" "$1" -o json | jq -e '.status.allocation != null and (.status.reservedFor | length) > 0' >/dev/null; }
uid() { k get resourceclaim -n "$NS" "$1" -o jsonpath='{.metadata.uid}'; }
req() { printf '{"kind":"%s","claims":[{"namespace":"%s","uid":"%s","name":"%s"}]}\n' "$1" "$NS" "$3" "$2"; }
plugin() { dra-plugin -N "$NODE" -g gpus.json -k kdir -C cdi -r "$REDIS" -L 2 "$@" -; }
# traced: plugin, its fsync and fdatasync calls in the file trace
traced() { strace -f -qq -e trace=fsync,fdatasync -o trace dra-plugin -N "$NODE" -g gpus.json -k kdir -C cdi -r "$REDIS" -L 2 -; }
ledger() { gpu-reserve status | jq -r '[.gpu, .state, .user // "-"] | map(tostring) | join(" ")'; }
CK=kdir/plugins/gpu.canhazgpu.dev/checkpoint.json
# ckpt_edit JQ: the checkpoint's claims changed by JQ (with $u the uid
# of claim a), its checksum made again, as a crash would have left it.
ckpt_edit() {
	ce_c=$(jq -cS --arg u "$A" ".claims | $1" "$CK") &&
		printf '{"checksum":"%s","claims":%s,"version":1}\n' \
			"$(printf '%s' "$ce_c" | sha1sum | cut -d' ' -f1)" "$ce_c" >"$CK.new" &&
		mv "$CK.new" "$CK"
}
state() { jq -r --arg u "$A" '.claims[$u].state // "none"' "$CK"; }
spec=cdi/k8s.canhazgpu.dev-claim_

claim a 0
check 'the scheduler allocates claim a and reserves it' 'eventually 60 reserved a'
A=$(uid a)

# --- one synced write: the checkpoint and its directory
check_output 'prepare a: GPU 0, its spec, two fsyncs (the checkpoint and its directory)' \
	"req prepare a $A | traced | jq -r '.claims[].devices[].deviceName'; grep -c 'sync(' trace; test -s $spec$A.json && echo spec" <<'EOF'
gpu-0
2
spec
EOF
check_output 'the checkpoint says prepared; GPU 0 is held for a' 'state; ledger' <<'EOF'
prepared
0 IN_USE k8s:t9712/a
1 AVAILABLE -
EOF
check 'the checksum made again here is the plugin'"'"'s' \
	"test \"\$(jq -cS .claims $CK | tr -d '\n' | sha1sum | cut -d' ' -f1)\" = \"\$(jq -r .checksum $CK)\""
check_output 'unprepare a: two fsyncs, GPU 0 free' \
	"req unprepare a $A | traced; grep -c 'sync(' trace; ledger | head -n 1" <<EOF
{"claims":{"$A":{}},"kind":"unprepare"}
2
0 AVAILABLE -
EOF

# --- the plugin crashed after the staged "preparing" and the holds
req prepare a "$A" | plugin >/dev/null 2>>plugin.err
cp "$spec$A.json" spec.orig
ckpt_edit '.[$u].state = "preparing"'
check_output 'a crash after the holds, before "prepared": reconcile unprepares the claim' \
	"echo '{\"kind\":\"reconcile\"}' | plugin | jq -c '{kept, unprepared, errors}' | sed 's/$A/UID/'; state; ledger | head -n 1; test -e $spec$A.json || echo no spec" <<'EOF'
{"kept":[],"unprepared":["UID"],"errors":[]}
none
0 AVAILABLE -
no spec
EOF
req prepare a "$A" | plugin >/dev/null 2>>plugin.err
ckpt_edit '.[$u].state = "preparing"'
check_output 'or the kubelet retries the prepare first: prepared again, held once' \
	"req prepare a $A | plugin | jq -r '.claims[].devices[].deviceName'; state; ledger | head -n 1; cmp $spec$A.json spec.orig && echo same spec" <<'EOF'
gpu-0
prepared
0 IN_USE k8s:t9712/a
same spec
EOF

# --- the machine crashed after the holds: the staged entry and the spec
# lost (neither is synced), the holds kept by Redis
ckpt_edit 'del(.[$u])'
rm "$spec$A.json"
check_output 'the machine lost the entry: the retried prepare takes its own holds again' \
	"req prepare a $A | plugin | jq -r '.claims[].devices[].deviceName'; state; ledger | head -n 1; cmp $spec$A.json spec.orig && echo same spec" <<'EOF'
gpu-0
prepared
0 IN_USE k8s:t9712/a
same spec
EOF
ckpt_edit 'del(.[$u])'
rm "$spec$A.json"
check_output 'or the claim went: its unprepare releases holds the checkpoint does not know' \
	"req unprepare a $A | plugin | sed 's/$A/UID/'; ledger | head -n 1" <<'EOF'
{"claims":{"UID":{}},"kind":"unprepare"}
0 AVAILABLE -
EOF

# --- the machine crashed after the synced "prepared": the spec cut short
req prepare a "$A" | plugin >/dev/null 2>>plugin.err
head -c 40 spec.orig >"$spec$A.json"
check_output 'a spec cut short is named, removed and written again from the checkpoint' \
	"echo '{\"kind\":\"reconcile\"}' | plugin 2>rec.err | jq -c '{kept, unprepared, errors}' | sed 's/$A/UID/'; grep -c 'written again from the checkpoint' rec.err; cmp $spec$A.json spec.orig && echo same spec; ledger | head -n 1" <<'EOF'
{"kept":["UID"],"unprepared":[],"errors":[]}
1
same spec
0 IN_USE k8s:t9712/a
EOF
req unprepare a "$A" | plugin >/dev/null 2>>plugin.err

# --- serving: claim b from the watch cache; once unprepared, from the API
claim b 1
check 'the scheduler allocates claim b and reserves it' 'eventually 60 reserved b'
B=$(uid b)
mkdir kserve
dra-plugin -v -M metrics -N "$NODE" -g gpus.json -k kserve -C cdis -r "$REDIS" -L 3 serve >serve.out 2>serve.err &
spid=$!
DS=kserve/plugins/gpu.canhazgpu.dev/dra.sock
DRA=/k8s.io.kubelet.pkg.apis.dra.v1.DRAPlugin
check 'the watch cache has listed the claims' "eventually 30 grep -q 'resourceclaims: watched' serve.err"
greq() { printf '{"claims":[{"namespace":"%s","uid":"%s","name":"%s"}]}\n' "$NS" "$2" "$1"; }
# last KIND: where the last call of KIND read its claims, and its phases named
last() { grep "\"kind\":\"$1\"" serve.out | tail -n 1 | jq -c '{cached: .phases.cached, fetched: .phases.fetched, phases: (.phases | keys)}'; }
check_output 'prepare b: from the cache, no GET' \
	"greq b $B | unit grpc-call -j $DS $DRA/NodePrepareResources | tail -n 1 | jq -r '.claims[].devices[].deviceName'; eventually 10 grep -q '\"kind\":\"prepare\"' serve.out; last prepare" <<'EOF'
gpu-1
{"cached":1,"fetched":0,"phases":["cached","cdi","checkpoint","claim","fetched","ledger"]}
EOF
check 'and -v said the time of each phase' "grep -q '^dra-plugin: prepare: [0-9.]* ms: claim [0-9.]* (1 cached, 0 read), ledger [0-9.]*, cdi [0-9.]*, checkpoint [0-9.]*\$' serve.err"
greq b "$B" | unit grpc-call -j $DS $DRA/NodeUnprepareResources >/dev/null
check_output 'prepared again after its unprepare: read from the API server' \
	"greq b $B | unit grpc-call -j $DS $DRA/NodePrepareResources | tail -n 1 | jq -r '.claims[].devices[].deviceName'; eventually 10 test \$(grep -c '\"kind\":\"prepare\"' serve.out) -eq 2; last prepare" <<'EOF'
gpu-1
{"cached":0,"fetched":1,"phases":["cached","cdi","checkpoint","claim","fetched","ledger"]}
EOF
# counts: the metrics of the calls and claim reads, once written after both prepares
counts() { grep -E '^k8shazgpu_dra_(call_seconds_count|claim_reads_total)' metrics; }
check_output '-M: metrics stat-serve serves, counting the calls and where claims came from' \
	"eventually 30 grep -qs 'call_seconds_count{call=\"prepare\"} 2' metrics && stat-serve -c metrics && counts" <<'EOF'
k8shazgpu_dra_call_seconds_count{call="prepare"} 2
k8shazgpu_dra_call_seconds_count{call="unprepare"} 1
k8shazgpu_dra_claim_reads_total{source="cache"} 1
k8shazgpu_dra_claim_reads_total{source="api"} 1
EOF
# a uid the API server's cache does not hold as claim b: read again by a
# quorum GET before the claim is refused (two reads, one answer)
check_output 'a claim that does not fit the cached answer is read again, then refused' \
	"greq b 00000000-0000-0000-0000-000000000000 | unit grpc-call -j $DS $DRA/NodePrepareResources | tail -n 1 | jq -c '.claims[] | {error}' | sed \"s/\$B/UID/\"; eventually 10 test \$(grep -c '\"kind\":\"prepare\"' serve.out) -eq 3; last prepare" <<'EOF'
{"error":"resourceclaim t9712/b was replaced: its uid is UID, not 00000000-0000-0000-0000-000000000000"}
{"cached":0,"fetched":2,"phases":["cached","cdi","checkpoint","claim","fetched","ledger"]}
EOF
kill "$spid"
wait "$spid"
check "serve ends with status 0 on TERM" "test $? -eq 0"
spid=
done_testing
