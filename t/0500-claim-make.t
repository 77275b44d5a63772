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
	printf "%s\n" "claim-make: bad.in:1: gpu: field \"index\" is missing" \
		"claim-make: bad.in:2: unknown record kind \"bogus\"" \
		"claim-make: bad.in:3: invalid JSON at column 3: invalid token near '\''not'\''" >want &&
	diff -u want err'

check 'a gpu record without a node is refused' '
	echo "{\"kind\":\"gpu\"}" | must_fail 1 claim-make 2>err >/dev/null &&
	test "$(cat err)" = "claim-make: <stdin>:1: gpu: field \"node\" is missing"'

# Wrong types are bad records: every field of a gpu record against its
# documented type and range. Each line below breaks one field of a good
# record; the good record (line 1) alone is published.
good='"kind":"gpu","node":"n1","index":0,"uuid":"GPU-0","name":"NVIDIA A100","product":"NVIDIA-A100","memory_mib":81920,"memory_used_mib":0,"util_pct":10,"temp_c":30,"power_w":50,"power_limit_w":400,"ecc_errors":0,"driver_version":"535.104.05","cuda_version":"12.2","compute_cap":"8.0","pci_bus_id":"0000:01:00.0","mig_enabled":false,"mig":null,"health":"ok","health_reasons":[]'
cat >bad-fields.in <<EOF
{$good}
{$good,"index":"0"}
{$good,"index":-1}
{$good,"index":2147483648}
{$good,"index":1.0}
{$good,"index":null}
{$good,"node":"N1"}
{$good,"node":""}
{$good,"node":7}
{$good,"node":"a/b"}
{$good,"uuid":5}
{$good,"uuid":"GPU-00000000-0000-0000-0000-000000000000-0000000000000000000000000"}
{$good,"name":["x"]}
{$good,"product":{}}
{$good,"memory_mib":"abc"}
{$good,"memory_mib":-1}
{$good,"memory_mib":8796093022208}
{$good,"memory_used_mib":1.5}
{$good,"util_pct":"10"}
{$good,"util_pct":-0.5}
{$good,"util_pct":100.5}
{$good,"temp_c":true}
{$good,"power_w":-3}
{$good,"power_limit_w":"400W"}
{$good,"ecc_errors":-1}
{$good,"driver_version":535}
{$good,"cuda_version":12.5}
{$good,"compute_cap":8}
{$good,"pci_bus_id":1}
{$good,"mig_enabled":"true"}
{$good,"mig_enabled":1}
{$good,"mig":"1g.10gb"}
{$good,"mig":{"device":0}}
{$good,"mig":{"profile":"1g.10GB","device":0}}
{$good,"mig":{"profile":"1g.10gb","device":"0"}}
{$good,"mig":{"profile":"1g.10gb","device":0,"gi":-1}}
{$good,"mig":{"profile":"1g.10gb","device":0,"ci":"x"}}
{$good,"mig":{"profile":"1g.10gb","device":0,"parent_uuid":[]}}
{$good,"health":"healthy"}
{$good,"health":null}
{$good,"health":1}
{$good,"health_reasons":"hot"}
{$good,"health_reasons":[1]}
EOF
check_output 'a gpu record with a field of the wrong type or range is refused, field by field' '
	must_fail 1 claim-make bad-fields.in 2>&1 >out | sed "s/^claim-make: bad-fields.in://" &&
	jq -r "[.kind, .metadata.name, (.spec.devices // [] | length)] | join(\" \")" out' <<'EOF'
2: gpu: field "index" must be an integer from 0 to 2147483647, not "0"
3: gpu: field "index" must be an integer from 0 to 2147483647, not -1
4: gpu: field "index" must be an integer from 0 to 2147483647, not 2147483648
5: gpu: field "index" must be an integer from 0 to 2147483647, not 1.0
6: gpu: field "index" must be an integer from 0 to 2147483647, not null
7: gpu: field "node" must be a node name: a DNS subdomain of at most 224 bytes, not "N1"
8: gpu: field "node" must be a node name: a DNS subdomain of at most 224 bytes, not ""
9: gpu: field "node" must be a node name: a DNS subdomain of at most 224 bytes, not 7
10: gpu: field "node" must be a node name: a DNS subdomain of at most 224 bytes, not "a/b"
11: gpu: field "uuid" must be a string of at most 64 bytes without \u0000, not 5
12: gpu: field "uuid" must be a string of at most 64 bytes without \u0000, not "GPU-00000000-0000-0000-0000-000000000000-000...
13: gpu: field "name" must be a string of at most 64 bytes without \u0000, not ["x"]
14: gpu: field "product" must be a string, not {}
15: gpu: field "memory_mib" must be an integer from 0 to 8796093022207, not "abc"
16: gpu: field "memory_mib" must be an integer from 0 to 8796093022207, not -1
17: gpu: field "memory_mib" must be an integer from 0 to 8796093022207, not 8796093022208
18: gpu: field "memory_used_mib" must be an integer from 0 to 8796093022207, not 1.5
19: gpu: field "util_pct" must be a number from 0 to 100, not "10"
20: gpu: field "util_pct" must be a number from 0 to 100, not -0.5
21: gpu: field "util_pct" must be a number from 0 to 100, not 100.5
22: gpu: field "temp_c" must be an integer from 0 to 2147483647, not true
23: gpu: field "power_w" must be an integer from 0 to 2147483647, not -3
24: gpu: field "power_limit_w" must be an integer from 0 to 2147483647, not "400W"
25: gpu: field "ecc_errors" must be a non-negative integer, not -1
26: gpu: field "driver_version" must be a string, not 535
27: gpu: field "cuda_version" must be a string, not 12.5
28: gpu: field "compute_cap" must be a string, not 8
29: gpu: field "pci_bus_id" must be a string, not 1
30: gpu: field "mig_enabled" must be true or false, not "true"
31: gpu: field "mig_enabled" must be true or false, not 1
32: gpu: field "mig" must be null or an object, not "1g.10gb"
33: gpu: field "mig.profile" is missing
34: gpu: field "mig.profile" must be a MIG profile name such as "1g.10gb", not "1g.10GB"
35: gpu: field "mig.device" must be an integer from 0 to 2147483647, not "0"
36: gpu: field "mig.gi" must be an integer from 0 to 2147483647, not -1
37: gpu: field "mig.ci" must be an integer from 0 to 2147483647, not "x"
38: gpu: field "mig.parent_uuid" must be a string of at most 64 bytes without \u0000, not []
39: gpu: field "health" must be "ok", "warn" or "unhealthy", not "healthy"
40: gpu: field "health" must be "ok", "warn" or "unhealthy", not null
41: gpu: field "health" must be "ok", "warn" or "unhealthy", not 1
42: gpu: field "health_reasons" must be an array of strings without \u0000, not "hot"
43: gpu: field "health_reasons" must be an array of strings without \u0000, not [1]
Node n1 0
GPUNode n1 0
GPUNode n1 0
ResourceSlice n1-0.gpu.canhazgpu.dev 1
EOF

check_output 'a gpu record whose fields all have the wrong type publishes nothing' '
	echo "{\"kind\":\"gpu\",\"node\":\"n1\",\"index\":\"0\",\"uuid\":0,\"memory_mib\":\"80GB\",\"mig_enabled\":\"no\",\"mig\":[],\"health\":\"fine\"}" |
	must_fail 1 claim-make -x 2>err && cat err' <<'EOF'
claim-make: <stdin>:1: gpu: field "index" must be an integer from 0 to 2147483647, not "0"
EOF

check_output 'a string holding \u0000 is refused, never cut: no node "a", no uuid "GPU-0"' '
	printf "%s\n" "{\"kind\":\"gpu\",\"node\":\"a\\u0000b\",\"index\":0,\"health\":\"ok\"}" \
		"{\"kind\":\"gpu\",\"node\":\"a\",\"index\":0,\"uuid\":\"GPU-0\\u0000x\",\"health\":\"ok\"}" \
		"{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"x\\u0000y\"}}" |
	must_fail 1 claim-make 2>err && sed "s/ at column [0-9]*//" err' <<'EOF'
claim-make: <stdin>:1: invalid JSON: a string holds \u0000, which no record may carry
claim-make: <stdin>:2: invalid JSON: a string holds \u0000, which no record may carry
claim-make: <stdin>:3: invalid JSON: a string holds \u0000, which no record may carry
EOF

check_output 'the gpu record check itself refuses \u0000 wherever a reader lets it through' '
	unit gpuobj <<-X
	check {"node":"a\\u0000b","index":0,"health":"ok"}
	check {"node":"a","index":0,"health":"ok","uuid":"GPU-0\\u0000x"}
	check {"node":"a","index":0,"health":"ok\\u0000"}
	check {"node":"a","index":0,"health":"ok","mig":{"profile":"1g.10gb\\u0000","device":0}}
	check {"node":"a","index":0,"health":"ok","health_reasons":["x\\u0000"]}
	check {"node":"a","index":3,"health":"ok","mig":{"profile":"1c.2g.20gb+me","device":4}}
	X' <<'EOF'
bad: field "node" must be a node name: a DNS subdomain of at most 224 bytes, not "a\u0000b"
bad: field "uuid" must be a string of at most 64 bytes without \u0000, not "GPU-0\u0000x"
bad: field "health" must be "ok", "warn" or "unhealthy", not "ok\u0000"
bad: field "mig.profile" must be a MIG profile name such as "1g.10gb", not "1g.10gb\u0000"
bad: field "health_reasons" must be an array of strings without \u0000, not ["x\u0000"]
ok gpu-3-mig-1c-2g-20gb-me-4
EOF

# What we publish is valid Kubernetes: label values as GPU feature
# discovery makes them, device names DNS labels and unique.
check_output 'label values are sanitised as GPU feature discovery does' '
	unit gpuobj <<-X
	label NVIDIA A100 (PCIe)
	label NVIDIA TITAN X (Pascal)
	label NVIDIA-H100-80GB-HBM3
	label GeForce RTX™ 4090 / Ti
	label  -.NVIDIA L4._- 
	label (())
	label NVIDIA RTX PRO 6000 Blackwell Max-Q Workstation Edition (MIG) 1g.24gb
	label 535.104.05
	label 1g.10gb+me.all
	X' <<'EOF'
NVIDIA A100 (PCIe) -> NVIDIA-A100-PCIe
NVIDIA TITAN X (Pascal) -> NVIDIA-TITAN-X-Pascal
NVIDIA-H100-80GB-HBM3 -> NVIDIA-H100-80GB-HBM3
GeForce RTX™ 4090 / Ti -> GeForce-RTX-4090--Ti
 -.NVIDIA L4._-  -> NVIDIA-L4
(()) -> 
NVIDIA RTX PRO 6000 Blackwell Max-Q Workstation Edition (MIG) 1g.24gb -> NVIDIA-RTX-PRO-6000-Blackwell-Max-Q-Workstation-Edition-MIG-1g
535.104.05 -> 535.104.05
1g.10gb+me.all -> 1g.10gbme.all
EOF

check_output 'names Kubernetes takes' '
	unit gpuobj <<-X
	name gpu-0-mig-1g-10gb-0
	name node-1.example.com
	name Node1
	name -a
	name a-
	name a..b
	name a_b
	name 
	X' <<'EOF'
gpu-0-mig-1g-10gb-0: label subdomain
node-1.example.com: - subdomain
Node1: - -
-a: - -
a-: - -
a..b: - -
a_b: - -
: - -
EOF

check_output 'a product with parentheses, a +me profile: every label and resource name valid' '
	printf "%s\n" "{\"kind\":\"gpu\",\"node\":\"n1\",\"index\":0,\"product\":\"NVIDIA A100 (PCIe)\",\"driver_version\":\"535.104.05\",\"mig_enabled\":true,\"health\":\"ok\"}" \
		"{\"kind\":\"gpu\",\"node\":\"n1\",\"index\":0,\"mig\":{\"profile\":\"1g.10gb+me\",\"device\":0},\"health\":\"ok\"}" |
	claim-make -x | head -n 1 | jq -r "(.metadata.labels | to_entries[] | select(.key | test(\"product|full|mig-\"))
		| .key + \"=\" + .value), (.status.capacity | keys[])"' <<'EOF'
nvidia.com/gpu.product=NVIDIA-A100-PCIe
nvidia.com/cuda.driver-version.full=535.104.05
nvidia.com/mig-1g.10gbme.count=1
nvidia.com/mig-1g.10gbme.memory=10240
nvidia.com/mig-1g.10gbme.slices.gi=1
nvidia.com/mig-1g.10gbme.slices.ci=1
nvidia.com/mig-1g.10gbme.replicas=1
nvidia.com/mig-1g.10gbme
EOF

# jq programs that count labels, annotation keys and resource names the
# API server would refuse
LABEL_VALUE='^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$'
KEY='^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$'
check_output 'hostile product names and versions never give an invalid label' '
	for p in "NVIDIA A100 (PCIe)" "(x)" "--" "a/b\\c" "é" "$(printf "%070d" 7)" " x " "A.B_C-D" "a
b"; do
		jq -n -c --arg p "$p" "{kind: \"gpu\", node: \"n1\", index: 0, product: \$p, driver_version: (\$p + \"1.2.3\"), health: \"ok\"}"
		echo "{\"kind\":\"flush\"}"
	done | claim-make -x | jq -r --arg v "$LABEL_VALUE" --arg k "$KEY" "select(.kind == \"Node\")
		| [(.metadata.labels | to_entries[] | select((.value | test(\$v) and length <= 63) and (.key | test(\$k)) | not)),
		   (.metadata.annotations | keys[] | select(test(\$k) | not)),
		   (.status.capacity | keys[] | select(test(\$k) | not))] | length" | sort | uniq -c | sed "s/^ *//"' <<'EOF'
9 0
EOF

check 'duplicate MIG device numbers, or two records of one device name, are refused naming both' '
	printf "%s\n" "{\"kind\":\"gpu\",\"node\":\"n1\",\"index\":0,\"mig_enabled\":true,\"health\":\"ok\"}" \
		"{\"kind\":\"gpu\",\"node\":\"n1\",\"index\":0,\"mig\":{\"profile\":\"1g.10gb\",\"device\":0},\"health\":\"ok\"}" \
		"{\"kind\":\"gpu\",\"node\":\"n1\",\"index\":0,\"mig\":{\"profile\":\"1g.10gb\",\"device\":0},\"health\":\"ok\"}" \
		"{\"kind\":\"gpu\",\"node\":\"n1\",\"index\":0,\"mig\":{\"profile\":\"1g.10gb+me\",\"device\":1},\"health\":\"ok\"}" \
		"{\"kind\":\"gpu\",\"node\":\"n1\",\"index\":0,\"mig\":{\"profile\":\"1g.10gb-me\",\"device\":1},\"health\":\"unhealthy\"}" \
		"{\"kind\":\"gpu\",\"node\":\"n1\",\"index\":0,\"health\":\"ok\"}" \
		"{\"kind\":\"gpu\",\"node\":\"n2\",\"index\":0,\"health\":\"ok\"}" >dup.in &&
	must_fail 1 claim-make dup.in 2>err >out &&
	printf "%s\n" "claim-make: dup.in:3: gpu: node \"n1\" already has device \"gpu-0-mig-1g-10gb-0\", from dup.in:2" \
		"claim-make: dup.in:5: gpu: node \"n1\" already has device \"gpu-0-mig-1g-10gb-me-1\", from dup.in:4" \
		"claim-make: dup.in:6: gpu: node \"n1\" already has device \"gpu-0\", from dup.in:1" >want &&
	diff -u want err &&
	test "$(jq -r "select(.kind == \"ResourceSlice\") | [.spec.nodeName, (.spec.devices | map(.name) | join(\",\"))] | join(\" \")" out)" = \
		"$(printf "n1 gpu-0-mig-1g-10gb-0,gpu-0-mig-1g-10gb-me-1\nn2 gpu-0")"'

check 'device names stay DNS labels for the largest index, device number and profile' '
	echo "{\"kind\":\"gpu\",\"node\":\"n1\",\"index\":2147483647,\"mig\":{\"profile\":\"7c.7g.4096gb+me.all\",\"device\":2147483647},\"health\":\"ok\"}" |
	claim-make | jq -r ".spec.devices[]?.name" >names &&
	test "$(cat names)" = gpu-2147483647-mig-7c-7g-4096gb-me-all-2147483647 &&
	test "$(wc -c <names)" -le 64'

check_output 'Kubernetes objects: names that cannot name an object, and kinds that are not strings, are refused' '
	printf "%s\n" "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"..\"}}" \
		"{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"a/b\"}}" \
		"{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"x\",\"namespace\":5}}" \
		"{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":[]}" \
		"{\"apiVersion\":7,\"kind\":\"ConfigMap\"}" \
		"{\"kind\":[\"gpu\"]}" \
		"{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"ok\"}}" |
	must_fail 1 claim-make 2>&1 >out && cat out' <<'EOF'
claim-make: <stdin>:1: object: field "metadata.name" must be a non-empty string without \u0000, "/" or "%", other than "." and "..", not ".."
claim-make: <stdin>:2: object: field "metadata.name" must be a non-empty string without \u0000, "/" or "%", other than "." and "..", not "a/b"
claim-make: <stdin>:3: object: field "metadata.namespace" must be a non-empty string without \u0000, "/" or "%", other than "." and "..", not 5
claim-make: <stdin>:4: object: field "metadata" must be an object, not []
claim-make: <stdin>:5: object: field "apiVersion" must be a non-empty string without \u0000, not 7
claim-make: <stdin>:6: field "kind" must be a non-empty string without \u0000, not ["gpu"]
{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"ok"}}
EOF

# Numbers from the environment and names from options that do not parse
# are refused (status 2), never taken as 0.
check_output 'a clock or heartbeat that is not a whole number of seconds is refused' '
	for v in abc "" " 5" 5s -5 +5 1e3 0x10 253402300800 99999999999999999999; do
		K8SHAZGPU_NOW=$v claim-make -N n1 </dev/null >/dev/null 2>err; echo "$? $(cat err)"
	done
	K8SHAZGPU_HEARTBEAT=soon claim-make -N n1 </dev/null >/dev/null 2>err; echo "$? $(cat err)"
	K8SHAZGPU_NOW=253402300799 claim-make -N n1 </dev/null | jq -r ".metadata.annotations[\"agentaflow.gpu/last-update\"]"
	K8SHAZGPU_NOW=0 claim-make -N n1 </dev/null | jq -r ".metadata.annotations[\"agentaflow.gpu/last-update\"]"' <<'EOF'
2 claim-make: $K8SHAZGPU_NOW: not a whole number of seconds from 0 to 253402300799: "abc"
2 claim-make: $K8SHAZGPU_NOW: not a whole number of seconds from 0 to 253402300799: ""
2 claim-make: $K8SHAZGPU_NOW: not a whole number of seconds from 0 to 253402300799: " 5"
2 claim-make: $K8SHAZGPU_NOW: not a whole number of seconds from 0 to 253402300799: "5s"
2 claim-make: $K8SHAZGPU_NOW: not a whole number of seconds from 0 to 253402300799: "-5"
2 claim-make: $K8SHAZGPU_NOW: not a whole number of seconds from 0 to 253402300799: "+5"
2 claim-make: $K8SHAZGPU_NOW: not a whole number of seconds from 0 to 253402300799: "1e3"
2 claim-make: $K8SHAZGPU_NOW: not a whole number of seconds from 0 to 253402300799: "0x10"
2 claim-make: $K8SHAZGPU_NOW: not a whole number of seconds from 0 to 253402300799: "253402300800"
2 claim-make: $K8SHAZGPU_NOW: not a whole number of seconds from 0 to 253402300799: "99999999999999999999"
2 claim-make: $K8SHAZGPU_HEARTBEAT: not a whole number of seconds from 0 to 253402300799: "soon"
9999-12-31T23:59:59Z
1970-01-01T00:00:00Z
EOF

check_output 'names in options the API server would refuse are refused' '
	claim-make -N Node1 </dev/null 2>&1; echo $?
	claim-make -N "$(printf "%0225d" 0)" </dev/null 2>err; echo $?; cut -c1-80 err
	claim-make -d "Bad_Driver" </dev/null 2>&1; echo $?
	claim-make -n "a.b" </dev/null 2>&1; echo $?
	claim-make -m "" </dev/null 2>&1; echo $?
	claim-make -m "$(printf "a\tb")" </dev/null 2>&1; echo $?' <<'EOF'
claim-make: -N: not a node name (a DNS subdomain of at most 224 bytes): "Node1"
2
2
claim-make: -N: not a node name (a DNS subdomain of at most 224 bytes): "0000000
claim-make: -d: not a DRA driver name (a DNS subdomain of at most 63 bytes): "Bad_Driver"
2
claim-make: -n: not a namespace name (a DNS label): "a.b"
2
claim-make: -m: not a field manager (1 to 128 bytes, no control characters): ""
2
claim-make: -m: not a field manager (1 to 128 bytes, no control characters): "a?b"
2
EOF

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
# ---- -c (create) and -D (delete) without a cluster ----

check_output '-a, -c and -D exclude each other; -N and -x do not go with -c, -D' '
	must_fail 2 claim-make -a -c </dev/null 2>&1 | head -n 1
	must_fail 2 claim-make -c -D </dev/null 2>&1 | head -n 1
	must_fail 2 claim-make -D -N n1 </dev/null 2>&1 | head -n 1
	must_fail 2 claim-make -c -x </dev/null 2>&1 | head -n 1' <<'EOF'
claim-make: -a, -c and -D exclude each other
claim-make: -a, -c and -D exclude each other
claim-make: -c and -D take objects: -N and -x do not go with them
claim-make: -c and -D take objects: -N and -x do not go with them
EOF

check_output '-c and -D refuse gpu records; an unreachable server exits 75, naming the object' '
	echo "{\"kind\":\"gpu\",\"node\":\"n1\",\"index\":0}" >gpu.in
	echo "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"x\",\"namespace\":\"ns\"}}" >cm.in
	for m in -c -D; do
		must_fail 1 claim-make $m --kubeconfig kc gpu.in 2>&1
		must_fail 75 claim-make $m --kubeconfig kc cm.in 2>&1 | sed "s/after [0-9]* ms/after N ms/"
	done' <<'EOF'
claim-make: gpu.in:1: gpu: -c and -D take Kubernetes objects only
claim-make: v1/ConfigMap/ns/x: GET https://127.0.0.1:1/api/v1: Failed to connect to 127.0.0.1 port 1 after N ms: Couldn't connect to server
claim-make: gpu.in:1: gpu: -c and -D take Kubernetes objects only
claim-make: v1/ConfigMap/ns/x: GET https://127.0.0.1:1/api/v1: Failed to connect to 127.0.0.1 port 1 after N ms: Couldn't connect to server
EOF

# ---- GPUs held on the host (gpu-reserve mark) ----

# hold USER TYPE: the held member gpu-reserve mark adds, for jq --argjson
hold() {
	jq -n -c --arg u "$1" --arg t "$2" '{user: (if $u == "" then null else $u end),
		actual_user: (if $u == "" then null else $u end), type: $t,
		since: "2026-11-24T01:02:03Z", expires: (if $t == "manual" then "2026-11-24T01:32:03Z" else null end),
		note: null}'
}
alice=$(hold alice manual)
# small: 4 H200 cut into 28 1g.10gb. Batch 1 as mark writes it with GPU 0
# held by alice (its record and its seven MIG devices marked), batch 2
# after she released it (no held member at all).
{
	jq -c --argjson h "$alice" 'if .index == 0 then . + {held: $h} else . end' "$F/small.ndjson"
	echo '{"kind":"flush"}'
	cat "$F/small.ndjson"
} >small-held.in

check_output 'a held MIG GPU withholds its seven devices, then gives them back: every object, exactly' \
	'claim-make -x small-held.in' <"$F/small-held.expect"

check_output 'held: labels counting what is usable follow the slice, physical ones stay; capacity counts all' '
	claim-make -x small-held.in | jq -r "select(.kind == \"Node\") | [
		(.metadata.labels | \"gpu.count=\(.[\"nvidia.com/gpu.count\"]) mig-1g.10gb.count=\(.[\"nvidia.com/mig-1g.10gb.count\"]) agentaflow.gpu/count=\(.[\"agentaflow.gpu/count\"]) schedulable=\(.[\"agentaflow.gpu/schedulable\"])\"),
		(.status | \"capacity=\(.capacity[\"nvidia.com/mig-1g.10gb\"]) allocatable=\(.allocatable[\"nvidia.com/mig-1g.10gb\"])\")] | join(\" \")"' <<'EOF'
gpu.count=4 mig-1g.10gb.count=21 agentaflow.gpu/count=3 schedulable=true capacity=28 allocatable=21
gpu.count=4 mig-1g.10gb.count=28 agentaflow.gpu/count=4 schedulable=true capacity=28 allocatable=28
EOF

check_output 'held: no device of GPU 0 in the slice; all 28 back after the release' '
	claim-make small-held.in | jq -r "select(.kind == \"ResourceSlice\") | .spec.devices | map(.name | sub(\"-mig-1g-10gb-[0-9]\$\"; \"\")) | group_by(.) | map(\"\(.[0])x\(length)\") | join(\" \")"' <<'EOF'
gpu-1x7 gpu-2x7 gpu-3x7
gpu-0x7 gpu-1x7 gpu-2x7 gpu-3x7
EOF

check_output 'held: canhazgpu.dev/host-holds names the holder, then is gone; devices say held' '
	claim-make small-held.in | jq -r "select(.kind == \"Node\") | .metadata.annotations
		| (.[\"canhazgpu.dev/host-holds\"] // \"absent\"),
		  (.[\"agentaflow.gpu/devices\"] | fromjson | group_by(.index) | map(\"\(.[0].index):\(map(.held) | unique | map(tostring) | join(\",\"))x\(length)\") | join(\" \"))"' <<'EOF'
[{"gpu":0,"user":"alice","type":"manual","since":"2026-11-24T01:02:03Z","expires":"2026-11-24T01:32:03Z","note":null}]
0:truex8 1:falsex8 2:falsex8 3:falsex8
absent
0:falsex8 1:falsex8 2:falsex8 3:falsex8
EOF

# A whole GPU with MIG off (GPU 1 of the A100 node) used without a
# reservation: nvidia.com/gpu goes from allocatable, not from capacity.
check_output 'a held whole GPU: not allocatable, not in the slice, not counted; unhealthy MIG device beside it' '
	jq -c --argjson h "$(hold "" unreserved)" "if .index == 1 then . + {held: \$h} else . end" "$F/a100-mixed.ndjson" |
	claim-make -x | jq -c "if .kind == \"Node\" then [.status, (.metadata.labels | with_entries(select(.key | test(\"count|schedulable\")))),
		.metadata.annotations[\"canhazgpu.dev/host-holds\"]] else [.spec.devices[].name] end"' <<'EOF'
[{"capacity":{"nvidia.com/mig-3g.40gb":"1","nvidia.com/mig-1c.3g.40gb":"1","nvidia.com/gpu":"1"},"allocatable":{"nvidia.com/mig-3g.40gb":"1","nvidia.com/mig-1c.3g.40gb":"0","nvidia.com/gpu":"0"}},{"nvidia.com/gpu.count":"2","nvidia.com/mig-3g.40gb.count":"1","nvidia.com/mig-1c.3g.40gb.count":"0","agentaflow.gpu/schedulable":"true","agentaflow.gpu/count":"1"},"[{\"gpu\":1,\"user\":null,\"type\":\"unreserved\",\"since\":\"2026-11-24T01:02:03Z\",\"expires\":null,\"note\":null}]"]
["gpu-0-mig-3g-40gb-0"]
EOF

check_output 'every GPU held: nothing offered, counts 0, the slice gone, host-holds by index' '
	jq -c --argjson a "$alice" --argjson b "$(hold bob run)" "if .index == 1 then . + {held: \$b} else . + {held: \$a} end" "$F/a100-mixed.ndjson" |
	claim-make -x | jq -c "[.status, (.metadata.labels | with_entries(select(.key | test(\"count|schedulable|enabled\")))),
		(.metadata.annotations[\"canhazgpu.dev/host-holds\"] | fromjson | map([.gpu, .user, .type]))]"' <<'EOF'
[{"capacity":{"nvidia.com/mig-3g.40gb":"1","nvidia.com/mig-1c.3g.40gb":"1","nvidia.com/gpu":"1"},"allocatable":{"nvidia.com/mig-3g.40gb":"0","nvidia.com/mig-1c.3g.40gb":"0","nvidia.com/gpu":"0"}},{"nvidia.com/gpu.count":"2","nvidia.com/mig-3g.40gb.count":"0","nvidia.com/mig-1c.3g.40gb.count":"0","agentaflow.gpu/enabled":"true","agentaflow.gpu/schedulable":"false","agentaflow.gpu/count":"0"},[[0,"alice","manual"],[1,"bob","run"]]]
EOF

# mark marks every record of a held GPU; should one record alone carry
# the mark (the parent, or one MIG device), the whole GPU is still
# withheld, and the first hold given for an index is the one named.
check_output 'one marked record withholds its whole GPU; host-holds sorted by index, first hold named' '
	jq -c --argjson a "$alice" --argjson b "$(hold bob run)" --argjson e "$(hold "" error)" "
		if .index == 3 and .mig == null then . + {held: \$b}
		elif .index == 1 and .mig.device == 4 then . + {held: \$e}
		elif .index == 1 and .mig.device == 5 then . + {held: \$a}
		else . end" "$F/small.ndjson" |
	claim-make | jq -r "if .kind == \"Node\" then .metadata.annotations[\"canhazgpu.dev/host-holds\"] | fromjson | map(\"\(.gpu) \(.user) \(.type)\")[]
		else .spec.devices | map(.name | sub(\"-mig-1g-10gb-[0-9]\$\"; \"\")) | unique | join(\" \") end"' <<'EOF'
1 null error
3 bob run
gpu-0 gpu-2
EOF

check_output 'held null, or absent, holds nothing; members mark does not write are left alone' '
	jq -c "if .index == 0 then . + {held: null} elif .index == 1 then . + {held: {type: \"run\", user: \"u\", claim_uid: 5, extra: [1]}} else . end" "$F/small.ndjson" |
	claim-make | jq -r "if .kind == \"Node\" then .metadata.annotations[\"canhazgpu.dev/host-holds\"]
		else .spec.devices | map(.name | sub(\"-mig-1g-10gb-[0-9]\$\"; \"\")) | unique | join(\" \") end"' <<'EOF'
[{"gpu":1,"user":"u","type":"run","since":null,"expires":null,"note":null}]
gpu-0 gpu-2 gpu-3
EOF

cat >bad-held.in <<EOF
{$good}
{$good,"index":1,"held":"alice"}
{$good,"index":2,"held":false}
{$good,"index":3,"held":[]}
{$good,"index":4,"held":{}}
{$good,"index":5,"held":{"user":"alice"}}
{$good,"index":6,"held":{"type":null}}
{$good,"index":7,"held":{"type":"k8s"}}
{$good,"index":8,"held":{"type":"Manual"}}
{$good,"index":9,"held":{"type":1}}
{$good,"index":10,"held":{"type":"run","user":5}}
{$good,"index":11,"held":{"type":"run","actual_user":["a"]}}
{$good,"index":12,"held":{"type":"run","since":1764000000}}
{$good,"index":13,"held":{"type":"run","expires":{}}}
{$good,"index":14,"held":{"type":"run","note":true}}
EOF
check_output 'a held member of the wrong shape is refused, member by member; its GPU is not published' '
	must_fail 1 claim-make bad-held.in 2>&1 >out | sed "s/^claim-make: bad-held.in://" &&
	jq -r "select(.kind == \"ResourceSlice\") | .spec.devices[].name" out' <<'EOF'
2: gpu: field "held" must be null or an object, not "alice"
3: gpu: field "held" must be null or an object, not false
4: gpu: field "held" must be null or an object, not []
5: gpu: field "held.type" is missing
6: gpu: field "held.type" is missing
7: gpu: field "held.type" must be "run", "manual", "unreserved" or "error", not null
8: gpu: field "held.type" must be "run", "manual", "unreserved" or "error", not "k8s"
9: gpu: field "held.type" must be "run", "manual", "unreserved" or "error", not "Manual"
10: gpu: field "held.type" must be "run", "manual", "unreserved" or "error", not 1
11: gpu: field "held.user" must be a string of at most 1024 bytes without \u0000, not 5
12: gpu: field "held.actual_user" must be a string of at most 1024 bytes without \u0000, not ["a"]
13: gpu: field "held.since" must be a string of at most 1024 bytes without \u0000, not 1764000000
14: gpu: field "held.expires" must be a string of at most 1024 bytes without \u0000, not {}
15: gpu: field "held.note" must be a string of at most 1024 bytes without \u0000, not true
gpu-0
EOF

# A note gpu-reserve took (1,500 bytes) must not cost the node that GPU
# every cycle: it is cut to 1,024 bytes at a character boundary, and
# said once a run, not once a batch.
note=$(printf "%01500d" 0)
held="{\"type\":\"manual\",\"user\":\"alice\",\"note\":\"$note\"}"
printf '%s\n' "{$good,\"held\":$held}" "{$good,\"index\":1}" '{"kind":"flush"}' \
	"{$good,\"held\":$held}" "{$good,\"index\":1}" >long-note.in
check_output 'a held note of 1,500 bytes: the GPU kept, the note cut to 1,024 bytes, said once; exit 0' '
	claim-make long-note.in >out 2>err; echo "exit $?"; cat err
	jq -c "select(.kind == \"Node\") | [.metadata.labels[\"nvidia.com/gpu.count\"],
		(.metadata.annotations[\"canhazgpu.dev/host-holds\"] | fromjson | .[]
		 | [.gpu, .user, (.note | utf8bytelength), .note == (\"0\" * 1024)])]" out' <<'EOF'
exit 0
claim-make: long-note.in:1: gpu: node "n1" device "gpu-0": held.note of 1500 bytes cut to 1024
["2",[0,"alice",1024,true]]
["2",[0,"alice",1024,true]]
EOF
# 1,023 bytes, then ten two-byte characters: the cut falls inside one
user="$(printf "%01023d" 0)éééééééééé"
check_output 'a held user cut inside a character ends before it; a note of 1,024 bytes is kept whole' '
	printf "%s\n" "{$good,\"held\":{\"type\":\"run\",\"user\":\"$user\",\"note\":\"$(printf "%01024d" 0)\"}}" |
		claim-make 2>err | jq -c "select(.kind == \"Node\") | .metadata.annotations[\"canhazgpu.dev/host-holds\"] | fromjson | .[]
		| [(.user | utf8bytelength), .user == (\"0\" * 1023), (.note | utf8bytelength)]" && cat err' <<'EOF'
[1023,true,1024]
claim-make: <stdin>:1: gpu: node "n1" device "gpu-0": held.user of 1043 bytes cut to 1023
EOF

check_output 'the check refuses \u0000 in a held member; 1024 bytes pass' "
	unit gpuobj <<-X
	check {\"node\":\"a\",\"index\":0,\"health\":\"ok\",\"held\":{\"type\":\"run\",\"user\":\"al\\\\u0000ice\"}}
	check {\"node\":\"a\",\"index\":0,\"health\":\"ok\",\"held\":{\"type\":\"run\\\\u0000\"}}
	check {\"node\":\"a\",\"index\":0,\"health\":\"ok\",\"held\":{\"type\":\"manual\",\"note\":\"\$(printf "%01024d" 0)\"}}
	X" <<'EOF'
bad: field "held.user" must be a string of at most 1024 bytes without \u0000, not "al\u0000ice"
bad: field "held.type" must be "run", "manual", "unreserved" or "error", not "run\u0000"
ok gpu-0
EOF

# ---- GPU_UTILIZATION_GOAL: the utilization tiers ----

# one node per utilization, named after it
for u in 14.9 15 29.9 30 34.9 35 69.9 70; do
	echo "{\"kind\":\"gpu\",\"node\":\"u$(echo $u | tr . -)\",\"index\":0,\"util_pct\":$u,\"health\":\"ok\"}"
done >util.in
tiers() { claim-make util.in | jq -r 'select(.kind == "Node") | .metadata.labels["agentaflow.gpu/utilization-tier"]' | tr '\n' ' '; echo; }
check_output 'tiers: low below 3/8 of the goal, medium below 7/8, high from 7/8 (default 80: 30 and 70)' '
	tiers
	GPU_UTILIZATION_GOAL=80 tiers
	GPU_UTILIZATION_GOAL=40 tiers
	GPU_UTILIZATION_GOAL=100 tiers
	GPU_UTILIZATION_GOAL=1 tiers' <<'EOF'
low low low medium medium medium medium high 
low low low medium medium medium medium high 
low medium medium medium medium high high high 
low low low low low low medium medium 
high high high high high high high high 
EOF

check_output 'GPU_UTILIZATION_GOAL out of 1..100 or no number: status 2, named' '
	for g in 0 101 "" abc 8O " 80" -5 1e2; do
		GPU_UTILIZATION_GOAL=$g claim-make </dev/null 2>&1; echo "exit $?"
	done' <<'EOF'
claim-make: $GPU_UTILIZATION_GOAL: not a whole percentage from 1 to 100: "0"
exit 2
claim-make: $GPU_UTILIZATION_GOAL: not a whole percentage from 1 to 100: "101"
exit 2
claim-make: $GPU_UTILIZATION_GOAL: not a whole percentage from 1 to 100: ""
exit 2
claim-make: $GPU_UTILIZATION_GOAL: not a whole percentage from 1 to 100: "abc"
exit 2
claim-make: $GPU_UTILIZATION_GOAL: not a whole percentage from 1 to 100: "8O"
exit 2
claim-make: $GPU_UTILIZATION_GOAL: not a whole percentage from 1 to 100: " 80"
exit 2
claim-make: $GPU_UTILIZATION_GOAL: not a whole percentage from 1 to 100: "-5"
exit 2
claim-make: $GPU_UTILIZATION_GOAL: not a whole percentage from 1 to 100: "1e2"
exit 2
EOF

check_output 'agentaflow.gpu/devices entries carry temp_c, ecc_errors, health_reasons (null, [] when absent)' \
	'claim-make "$F/a100-mixed.ndjson" | jq -c "select(.kind == \"Node\") | .metadata.annotations[\"agentaflow.gpu/devices\"]
		| fromjson[] | [.uuid, .temp_c, .ecc_errors, .health_reasons]"' <<'EOF'
["GPU-0",60,0,[]]
["MIG-a",null,null,[]]
["MIG-b",null,null,["x"]]
["GPU-1",40,0,["y"]]
EOF

# ---- GPUNode objects (print mode: no pod known) ----

check_output 'print mode: both GPUNodes after the Node, unowned; nothing in use; allocatable the Node'"'"'s' \
	'claim-make -x "$F/a100-mixed.ndjson" | jq -c "[.kind, .apiVersion, .metadata.ownerReferences, .status.totalGPUs, .status.devices,
		.status.offeredDevices, .status.freeDevices, .status.utilizationTier, .status.utilizationPct, .status.health, .status.migStrategy]"
	 claim-make "$F/a100-mixed.ndjson" | jq -c "select(.kind == \"GPUNode\") | [.status.capacity, .status.allocatable, .status.lastUpdate]"' <<'EOF'
["Node","v1",null,null,null,null,null,null,null,null,null]
["GPUNode","canhazgpu.dev/v1alpha1",null,2,3,2,2,"medium",50,"unhealthy","mixed"]
["GPUNode","agentaflow.io/v1",null,2,3,2,2,"medium",50,"unhealthy","mixed"]
["ResourceSlice","resource.k8s.io/v1",null,null,null,null,null,null,null,null,null]
[{},{},"1970-01-02T00:00:00Z"]
[{},{},"1970-01-02T00:00:00Z"]
EOF

check_output 'print mode: a node without GPUs has no GPUNode' \
	'claim-make -N empty </dev/null | jq -r .kind' <<'EOF'
Node
EOF

check_output 'claim-make(1) EXAMPLES: a GPUNode'"'"'s counts, nothing in use' \
	'gpu-probe -t "$TOP/manifests/sim/seed-mig.yaml" -n medium | claim-make -x |
	    jq -c '"'"'select(.kind == "GPUNode") | .status |
	        [.totalGPUs, .devices, .freeDevices, .allocatable]'"'"'' <<'EOF'
[4,16,16,{"nvidia.com/mig-2g.20gb":"12","nvidia.com/mig-1g.10gb":"4"}]
[4,16,16,{"nvidia.com/mig-2g.20gb":"12","nvidia.com/mig-1g.10gb":"4"}]
EOF

# ---- tools/claim-make/podreq and tools/claim-make/gpunode, driven by unit/gpunode ----

# requests: a limit alone counts; sidecars beside what starts after them;
# pod-level cpu over the containers' (not for extended resources); overhead
cat >req.in <<'X'
{"op":"request","res":"cpu","pod":{"spec":{"containers":[{"resources":{"requests":{"cpu":"500m"},"limits":{"cpu":"2"}}},{"resources":{"limits":{"cpu":"1"}}}]}}}
{"op":"request","res":"memory","pod":{"spec":{"containers":[{"resources":{"requests":{"memory":"1Gi"}}}],"initContainers":[{"restartPolicy":"Always","resources":{"requests":{"memory":"512Mi"}}},{"resources":{"requests":{"memory":"2Gi"}}}],"overhead":{"memory":"64Mi"}}}}
{"op":"request","res":"memory","pod":{"spec":{"containers":[{"resources":{"requests":{"memory":"1Gi"}}}],"initContainers":[{"resources":{"requests":{"memory":"2Gi"}}},{"restartPolicy":"Always","resources":{"requests":{"memory":"512Mi"}}}]}}}
{"op":"request","res":"cpu","pod":{"spec":{"resources":{"limits":{"cpu":"3"}},"containers":[{"resources":{"requests":{"cpu":"1"}}}]}}}
{"op":"request","res":"nvidia.com/gpu","pod":{"spec":{"resources":{"limits":{"nvidia.com/gpu":"3"}},"containers":[{"resources":{"limits":{"nvidia.com/gpu":2}}}]}}}
{"op":"request","res":"pods","pod":{}}
{"op":"request","res":"cpu","pod":{"spec":{"containers":[{"resources":{"limits":{"memory":"1Gi"}}}]}}}
{"op":"request","res":"nvidia.com/gpu","pod":{"spec":{"containers":[{"resources":{"limits":{"nvidia.com/gpu":"x"}}}]}}}
{"op":"left","allocatable":{"cpu":"63","memory":"263567056Ki","nvidia.com/gpu":"8","pods":"8","ephemeral-storage":"lots"},"pods":[{"spec":{"containers":[{"resources":{"limits":{"nvidia.com/gpu":1,"memory":"16Gi","cpu":2}}}]}},{"status":{"phase":"Succeeded"},"spec":{"containers":[{"resources":{"limits":{"nvidia.com/gpu":1,"memory":"16Gi","cpu":2}}}]}},{"status":{"phase":"Failed"},"spec":{"containers":[{"resources":{"limits":{"cpu":5}}}]}}]}
{"op":"left","allocatable":{"cpu":"1","memory":"2Gi","pods":"1"},"pods":[{"spec":{"containers":[{"resources":{"requests":{"cpu":"1500m","memory":"512Mi"}}}]}},{"spec":{"containers":[{"resources":{"requests":{"memory":"0.5Gi"}}}]}}]}
X
check_output 'pod requests as kube-scheduler counts them; what they leave, canonical, floored at 0' 'unit gpunode <req.in' <<'EOF'
{"q":"1500m","named":1,"bad":0}
{"q":"2624Mi","named":1,"bad":0}
{"q":"2Gi","named":1,"bad":0}
{"q":"3","named":1,"bad":0}
{"q":"2","named":1,"bad":0}
{"q":"1","named":1,"bad":0}
{"q":"0","named":0,"bad":0}
{"q":"0","named":1,"bad":1}
{"left":{"cpu":"61","memory":"246789840Ki","nvidia.com/gpu":"7","pods":"7","ephemeral-storage":"lots"},"bad":1}
{"left":{"cpu":"0","memory":"1Gi","pods":"0"},"bad":0}
EOF

# lib/podres reads a container as the larger of request and limit, over
# the walk podreq uses (sidecars beside what starts after them); no
# overhead; a value that is no quantity makes the total -1 (counted zero)
cat >total.in <<'X'
{"op":"total","res":"cpu","spec":{"containers":[{"resources":{"requests":{"cpu":"500m"},"limits":{"cpu":"2"}}},{"resources":{"requests":{"cpu":"1"}}}]}}
{"op":"total","res":"memory","spec":{"containers":[{"resources":{"limits":{"memory":"1Gi"}}}],"initContainers":[{"restartPolicy":"Always","resources":{"requests":{"memory":"512Mi"}}},{"resources":{"requests":{"memory":"2Gi"}}}],"overhead":{"memory":"64Mi"}}}
{"op":"total","res":"memory","spec":{"containers":[{"resources":{"requests":{"memory":"1Gi"}}}],"initContainers":[{"resources":{"requests":{"memory":"2Gi"}}},{"restartPolicy":"Always","resources":{"requests":{"memory":"512Mi"}}}]}}
{"op":"total","res":"nvidia.com/gpu","spec":{"containers":[{"resources":{"limits":{"nvidia.com/gpu":"x"}}},{"resources":{"limits":{"nvidia.com/gpu":2}}}]}}
{"op":"request","res":"nvidia.com/gpu","pod":{"spec":{"containers":[{"resources":{"limits":{"nvidia.com/gpu":"x"}}},{"resources":{"limits":{"nvidia.com/gpu":2}}}]}}}
{"op":"total","res":"cpu","spec":{"containers":[{"resources":{"limits":{"memory":"1Gi"}}}]}}
X
check_output 'webhook totals (podres) and scheduler requests (podreq) share the container walk' 'unit gpunode <total.in' <<'EOF'
{"q":"3","named":1}
{"q":"2560Mi","named":1}
{"q":"2Gi","named":1}
{"q":"2","named":-1}
{"q":"2","named":1,"bad":1}
{"q":"0","named":0}
EOF

# n1: GPU 0 whole; GPU 1 cut into two 1g.10gb; GPU 2 held on the host;
# GPU 3 unhealthy; GPUs 4 and 5 whole. A claim has gpu-0 (and devices of
# another driver and another node, which are not ours); pod a asks one
# GPU (the first free once the named ones are counted: 5, not 4), pod b
# names GPU 4, pod c a 1g.10gb (the first: MIG-1a, so GPU 1 is in use),
# pod d ended (nothing).
g='"kind":"gpu","node":"n1","health":"ok"'
cat >status.in <<X
{"op":"status","node_status":{"capacity":{"nvidia.com/gpu":"5"},"allocatable":{"nvidia.com/gpu":"3"}},"gpus":[
 {$g,"index":0,"uuid":"GPU-0","mig_enabled":false,"util_pct":10},
 {$g,"index":1,"uuid":"GPU-1","mig_enabled":true,"util_pct":50.5},
 {$g,"index":1,"uuid":"MIG-1a","mig_enabled":true,"mig":{"profile":"1g.10gb","device":0,"parent_uuid":"GPU-1"}},
 {$g,"index":1,"uuid":"MIG-1b","mig_enabled":true,"mig":{"profile":"1g.10gb","device":1,"parent_uuid":"GPU-1"}},
 {$g,"index":2,"uuid":"GPU-2","held":{"type":"manual","user":"alice"}},
 {"kind":"gpu","node":"n1","health":"unhealthy","index":3,"uuid":"GPU-3"},
 {$g,"index":4,"uuid":"GPU-4"},
 {$g,"index":5,"uuid":"GPU-5","util_pct":3}],
 "claims":[{"status":{"allocation":{"devices":{"results":[{"driver":"gpu.canhazgpu.dev","pool":"n1","device":"gpu-0"},
   {"driver":"other.example.com","pool":"n1","device":"gpu-4"},{"driver":"gpu.canhazgpu.dev","pool":"n2","device":"gpu-4"}]}}}}],
 "pods":[{"metadata":{"name":"a"},"spec":{"containers":[{"resources":{"limits":{"nvidia.com/gpu":1}}}]}},
  {"metadata":{"name":"b","annotations":{"canhazgpu.dev/devices":"[\"GPU-4\"]"}},"spec":{"containers":[{"resources":{"limits":{"nvidia.com/gpu":1}}}]}},
  {"metadata":{"name":"c"},"spec":{"containers":[{"resources":{"limits":{"nvidia.com/mig-1g.10gb":1}}}]}},
  {"metadata":{"name":"d"},"status":{"phase":"Succeeded"},"spec":{"containers":[{"resources":{"limits":{"nvidia.com/gpu":1}}}]}}]}
X
tr -d '\n' <status.in >status.line && echo >>status.line
check_output 'in use: claimed, named, first free of the resource; held and unhealthy never taken' \
	'unit gpunode <status.line | jq -c "[.totalGPUs, .devices, .offeredDevices, .freeDevices, .utilizationPct, .utilizationTier, .health, .allocatable],
		(.gpus[] | [.uuid, .inUse, .held, .mig.device])"' <<'EOF'
[6,7,5,1,21,"low","unhealthy",{"nvidia.com/gpu":"1"}]
["GPU-0",true,false,null]
["GPU-1",true,false,null]
["MIG-1a",true,false,0]
["MIG-1b",false,false,1]
["GPU-2",false,true,null]
["GPU-3",false,false,null]
["GPU-4",true,false,null]
["GPU-5",true,false,null]
EOF

# the stored object (have) against what would be written (want)
want='{"spec":{"nodeName":"n1"},"metadata":{"ownerReferences":[{"uid":"u1"}]},"status":{"freeDevices":1,"lastUpdate":"1970-01-01T00:10:00Z"}}'
have='{"spec":{"nodeName":"n1"},"metadata":{"ownerReferences":[{"uid":"u1"}]},"status":{"freeDevices":1,"lastUpdate":"1970-01-01T00:00:00Z"}}'
other=$(echo "$have" | jq -c '.status.freeDevices = 2')
owner=$(echo "$have" | jq -c '.metadata.ownerReferences[0].uid = "u0"')
check_output 'a GPUNode is current while it says the same and its stamp is younger than the heartbeat' "
	printf '%s\n' '{\"op\":\"current\",\"have\":$have,\"want\":$want,\"now\":299,\"heartbeat\":300}' \
		'{\"op\":\"current\",\"have\":$have,\"want\":$want,\"now\":300,\"heartbeat\":300}' \
		'{\"op\":\"current\",\"have\":$other,\"want\":$want,\"now\":1,\"heartbeat\":300}' \
		'{\"op\":\"current\",\"have\":$owner,\"want\":$want,\"now\":1,\"heartbeat\":300}' | unit gpunode" <<'EOF'
{"current":1}
{"current":0}
{"current":0}
{"current":0}
EOF


# ---- a node of thousands of records ----

# 5,000 records of node big: 1,000 MIG-enabled A100s (index 0 to 999),
# four 1g.10gb devices each; GPU 7 held on the host, device 0 of every
# hundredth GPU unhealthy. Offered: 4,000 - 4 - 10 = 3,986 devices, in
# 32 slices. The work is linear in the records (bench/claim-make shows
# it); what is checked here is the exact answer.
awk 'BEGIN {
	for (g = 0; g < 1000; g++) {
		printf "{\"kind\":\"gpu\",\"node\":\"big\",\"index\":%d,\"uuid\":\"GPU-%d\",\"product\":\"NVIDIA A100-SXM4-80GB\",\"mig_enabled\":true,\"health\":\"ok\"%s}\n",
			g, g, g == 7 ? ",\"held\":{\"type\":\"manual\",\"user\":\"alice\"}" : ""
		for (d = 0; d < 4; d++)
			printf "{\"kind\":\"gpu\",\"node\":\"big\",\"index\":%d,\"uuid\":\"MIG-%d-%d\",\"mig_enabled\":true,\"mig\":{\"profile\":\"1g.10gb\",\"device\":%d,\"parent_uuid\":\"GPU-%d\"},\"health\":\"%s\"}\n",
				g, g, d, d, g, g % 100 == 0 && d == 0 ? "unhealthy" : "ok"
	}
}' >big.ndjson
check_output '5,000 records of one node: every object, counted' '
	wc -l <big.ndjson && claim-make -x big.ndjson >big.out && jq -r .kind big.out | sort | uniq -c | sed "s/^ *//" &&
	jq -c "select(.kind == \"Node\") | [.metadata.labels[\"nvidia.com/gpu.count\"], .metadata.labels[\"nvidia.com/mig-1g.10gb.count\"], .status]" big.out &&
	jq -c "select(.kind == \"GPUNode\") | .status | [.totalGPUs, .devices, .offeredDevices, .freeDevices, (.gpus | length), (.gpus | map(select(.held)) | length)]" big.out &&
	jq -s -c "map(select(.kind == \"ResourceSlice\")) | [length, (map(.spec.devices | length) | add), .[-1].spec.pool.resourceSliceCount, (map(.spec.devices[].name) | unique | length)]" big.out' <<'EOF'
5000
2 GPUNode
1 Node
32 ResourceSlice
["1000","3986",{"capacity":{"nvidia.com/mig-1g.10gb":"4000"},"allocatable":{"nvidia.com/mig-1g.10gb":"3986"}}]
[1000,4000,3986,3986,5000,5]
[1000,4000,3986,3986,5000,5]
[32,3986,32,3986]
EOF
# In use among them: 100 pods each name two devices (of GPUs 200 to 299)
# and ask one more, the first free in record order (of GPUs 0 to 26: GPU
# 0's device 0 is unhealthy, GPU 7 held); a claim has five (GPUs 500 to
# 504). 305 devices, and the 131 GPUs they are on.
jq -s -c '{op: "status", node_status: {}, gpus: .,
	pods: [range(100) as $p | {metadata: {name: "p\($p)", annotations: {"canhazgpu.dev/devices":
		(["MIG-\(200 + $p)-1", "MIG-\(200 + $p)-2"] | tojson)}},
		spec: {containers: [{resources: {limits: {"nvidia.com/mig-1g.10gb": 3}}}]}}],
	claims: [{status: {allocation: {devices: {results: [range(500; 505) as $g
		| {driver: "gpu.canhazgpu.dev", pool: "n1", device: "gpu-\($g)-mig-1g-10gb-3"}]}}}}]}' big.ndjson >big-status.line
check_output '5,000 records, 100 pods and a claim: the devices in use, exactly' '
	unit gpunode <big-status.line | jq -c "[.totalGPUs, .devices, .offeredDevices, .freeDevices],
		([.gpus[] | select(.inUse) | .mig != null] | group_by(.) | map(length))" &&
	unit gpunode <big-status.line | jq -c "[.gpus[] | select(.inUse and .mig == null and .index < 100) | .index]"' <<'EOF'
[1000,4000,3986,3681]
[131,305]
[0,1,2,3,4,5,6,8,9,10,11,12,13,14,15,16,17,18,19,20,21,22,23,24,25,26]
EOF
# ---- a real node's facts: GPU feature discovery's labels, NVIDIA's device names ----

# h200 MINOR INDEX BUS: the H200's record as gpu-probe reads it with its
# stable facts, on another minor, index and bus when asked
h200() {
	printf '{"kind":"gpu","node":"n1","index":%s,"minor":%s,"uuid":"GPU-ef3dd380-5942-addc-6b66-8cd55589cd49","name":"NVIDIA H200","product":"NVIDIA-H200","brand":"NVIDIA","memory_mib":143771,"driver_version":"580.159.04","cuda_version":"13.0","compute_cap":"9.0","pci_bus_id":"%s","pcie_root":"pci0000:00","numa_node":0,"addressing_mode":"None","machine":"Standard PC (Q35 + ICH9, 2009)","pci_class":"0x030200","mig_enabled":false,"mig":null,"health":"ok","health_reasons":[]}\n' \
		"${2:-0}" "${1:-0}" "${3:-00000000:00:06.0}"
}
check_output 'the H200: every GPU feature discovery label, the revision as printed (04)' '
	h200 | claim-make -x | head -n 1 | jq -r ".metadata.labels | to_entries[] | select(.key | startswith(\"nvidia.com/\")) | .key + \"=\" + .value"' <<'EOF'
nvidia.com/gpu.present=true
nvidia.com/gpu.count=1
nvidia.com/gpu.product=NVIDIA-H200
nvidia.com/gpu.memory=143771
nvidia.com/gpu.family=hopper
nvidia.com/gpu.compute.major=9
nvidia.com/gpu.compute.minor=0
nvidia.com/gpu.replicas=1
nvidia.com/gpu.sharing-strategy=none
nvidia.com/gpu.mode=compute
nvidia.com/gpu.machine=Standard-PC-Q35--ICH9-2009
nvidia.com/mps.capable=false
nvidia.com/cuda.driver-version.major=580
nvidia.com/cuda.driver-version.minor=159
nvidia.com/cuda.driver-version.revision=04
nvidia.com/cuda.driver-version.full=580.159.04
nvidia.com/cuda.driver.major=580
nvidia.com/cuda.driver.minor=159
nvidia.com/cuda.driver.rev=04
nvidia.com/cuda.runtime-version.major=13
nvidia.com/cuda.runtime-version.minor=0
nvidia.com/cuda.runtime-version.full=13.0
nvidia.com/cuda.runtime.major=13
nvidia.com/cuda.runtime.minor=0
nvidia.com/mig.capable=true
nvidia.com/mig.strategy=none
EOF

check_output 'the H200 as a DRA device: named by its minor, with brand, CUDA version, addressing mode, PCI bus id, PCIe root and NUMA node' '
	h200 3 5 | claim-make | tail -n 1 | jq -c ".spec.devices[]"' <<'EOF'
{"name":"gpu-3","attributes":{"type":{"string":"gpu"},"uuid":{"string":"GPU-ef3dd380-5942-addc-6b66-8cd55589cd49"},"productName":{"string":"NVIDIA H200"},"brand":{"string":"NVIDIA"},"architecture":{"string":"Hopper"},"cudaComputeCapability":{"version":"9.0.0"},"driverVersion":{"version":"580.159.4"},"cudaDriverVersion":{"version":"13.0.0"},"addressingMode":{"string":"None"},"index":{"int":5},"minor":{"int":3},"numaNode":{"int":0},"resource.kubernetes.io/pcieRoot":{"string":"pci0000:00"},"resource.kubernetes.io/pciBusID":{"string":"0000:00:06.0"}},"capacity":{"memory":{"value":"143771Mi"}}}
EOF

check_output 'PCI bus ids: the 8-digit domain nvidia-smi prints cut to 4 and lowered; one that is not a bus id gives no attribute' '
	for b in 00000000:00:06.0 00000001:AB:1F.7 0000:3b:00.0 81:00.0 junk 00000000:100:00.0 00000000:00:20.0 10000:00:00.0; do
		h200 0 0 "$b" | claim-make | tail -n 1 | jq -c ".spec.devices[0].attributes[\"resource.kubernetes.io/pciBusID\"].string"
	done' <<'EOF'
"0000:00:06.0"
"0001:ab:1f.7"
"0000:3b:00.0"
"0000:81:00.0"
null
null
null
null
EOF

check_output 'the GPU mode from the PCI class; the machine unknown when the record has none; a driver version of two parts' '
	for c in 0x030000 0x030200 0x038000; do
		h200 | jq -c --arg c "$c" ".pci_class = \$c" | claim-make | head -n 1 | jq -r ".metadata.labels[\"nvidia.com/gpu.mode\"]"
	done
	h200 | jq -c "del(.pci_class, .machine) | .driver_version = \"390.12\"" | claim-make | head -n 1 |
		jq -r ".metadata.labels | to_entries[] | select(.key | test(\"mode|machine|driver\")) | .key + \"=\" + .value"' <<'EOF'
graphics
compute
unknown
nvidia.com/gpu.mode=unknown
nvidia.com/gpu.machine=unknown
nvidia.com/cuda.driver-version.major=390
nvidia.com/cuda.driver-version.minor=12
nvidia.com/cuda.driver-version.revision=
nvidia.com/cuda.driver-version.full=390.12
nvidia.com/cuda.driver.major=390
nvidia.com/cuda.driver.minor=12
nvidia.com/cuda.driver.rev=
EOF

check_output 'GPUs whose minors are not their indexes: devices named by minor, a MIG device by its parent'"'"'s' '
	for i in 0 1 2 3; do h200 $(( (i + 2) % 4 )) $i "00000000:0$i:00.0" | jq -c --arg u "GPU-$i" ".uuid = \$u"; done |
		claim-make | tail -n 1 | jq -r ".spec.devices[] | .name + \" index \" + (.attributes.index.int|tostring) + \" minor \" + (.attributes.minor.int|tostring)"
	h200 6 1 | jq -c ".uuid = \"MIG-x\" | .mig = {profile: \"1g.18gb\", parent_uuid: \"GPU-1\", device: 0, gi: 9, ci: 0} | .mig_enabled = true" |
		claim-make | tail -n 1 | jq -c ".spec.devices[] | [.name, .attributes.parentMinor, .attributes.minor, .attributes[\"resource.kubernetes.io/pciBusID\"]]"' <<'EOF'
gpu-2 index 0 minor 2
gpu-3 index 1 minor 3
gpu-0 index 2 minor 0
gpu-1 index 3 minor 1
["gpu-6-mig-1g-18gb-0",{"int":6},null,null]
EOF

done_testing
