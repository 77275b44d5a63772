#!/bin/sh
# claim-make without a cluster: the objects gpu records become, exactly.
. "$(dirname "$0")/lib.sh"
F=$FIXTURES/claim-make
export K8SHAZGPU_NOW=86400

check_output 'A100 with mixed MIG: labels, annotations, resources, slice' \
	'claim-make -x "$F/a100-mixed.ndjson"' <"$F/a100-mixed.expect"

check_output 'a node whose GPUs are gone is published empty with -N' \
	'claim-make -x -N gone </dev/null' <"$F/gone.expect"

check_output 'unhealthy devices are counted in capacity, not allocatable' \
	'claim-make -x "$F/a100-mixed.ndjson" | head -n 1 | jq -c .status' <<'X'
{"capacity":{"nvidia.com/mig-3g.40gb":"1","nvidia.com/mig-1c.3g.40gb":"1","nvidia.com/gpu":"1"},"allocatable":{"nvidia.com/mig-3g.40gb":"1","nvidia.com/mig-1c.3g.40gb":"0","nvidia.com/gpu":"1"}}
X

check_output 'DRA devices: MIG devices and MIG-off GPUs, never unhealthy ones' \
	'claim-make "$F/a100-mixed.ndjson" | tail -n 1 | jq -r ".spec.devices[].name"' <<'X'
gpu-0-mig-3g-40gb-0
gpu-1
X

# 300 MIG devices: slices of at most 128, the count on every slice.
check_output 'more than 128 devices are cut into slices' '
	i=0; while [ $i -lt 300 ]; do
		printf "{\"kind\":\"gpu\",\"node\":\"big\",\"index\":%d,\"uuid\":\"MIG-%d\",\"mig\":{\"profile\":\"1g.10gb\",\"device\":0},\"memory_mib\":10240,\"health\":\"ok\"}\n" $i $i
		i=$((i + 1))
	done | claim-make | jq -c "select(.kind==\"ResourceSlice\") | [.metadata.name, (.spec.devices|length), .spec.pool.resourceSliceCount]"' <<'X'
["big-0.gpu.canhazgpu.dev",128,3]
["big-1.gpu.canhazgpu.dev",128,3]
["big-2.gpu.canhazgpu.dev",44,3]
X

check_output 'objects pass through unchanged' \
	'printf "%s\n" "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"x\"}}" | claim-make' <<'X'
{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"x"}}
X

check 'an unknown record kind is named with its record number, exit 1' '
	printf "%s\n" "{\"kind\":\"gpu\",\"node\":\"a\"}" "{\"kind\":\"bogus\"}" "not json" >bad.in
	must_fail 1 claim-make bad.in >/dev/null 2>err &&
	printf "%s\n" "claim-make: bad.in:2: unknown record kind \"bogus\"" \
		"claim-make: bad.in:3: invalid JSON at column 3: invalid token near '\''not'\''" >want &&
	diff -u want err'

check 'a gpu record without a node is refused' '
	echo "{\"kind\":\"gpu\"}" | must_fail 1 claim-make 2>err >/dev/null &&
	test "$(cat err)" = "claim-make: <stdin>:1: gpu record has no node"'

check 'an unreachable API server exits 75 naming the URL' '
	cat >kc <<K
apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "https://127.0.0.1:1"}}]
users: [{name: u, user: {token: t}}]
contexts: [{name: x, context: {cluster: c, user: u}}]
current-context: x
K
	claim-make -a --kubeconfig kc -N n1 </dev/null >/dev/null 2>err; test $? -eq 75 &&
	grep -q "https://127.0.0.1:1" err'
done_testing
