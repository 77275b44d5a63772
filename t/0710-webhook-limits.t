#!/bin/sh
# webhook-patch: RuntimeClass limits hold for every quantity Kubernetes
# accepts (issue 10): values at or beyond 2^63 of their unit, in requests
# and limits, in init containers and sidecars, summed past 64 bits, and
# values that are no quantity at all, are refused with the exact reason;
# values right at a limit pass. Then the MIG fallback arithmetic with
# counts and replicas near 2^31 and 2^63: a defined answer, and no report
# when built with SANITIZE=address,undefined.
. "$(dirname "$0")/lib.sh"

# ---- fixtures ---------------------------------------------------------

# One class per limit, so a pod naming only that resource gets nothing
# filled in; "all" has the three; "vast" has limits of 10^30 and 10^40.
cat >inv.ndjson <<'X'
{"kind":"runtimeclass","name":"mem","annotations":{"limits.k8s.gpu/memory":"32Gi"}}
{"kind":"runtimeclass","name":"cpu","annotations":{"limits.k8s.gpu/cpu":"8"}}
{"kind":"runtimeclass","name":"gpu","annotations":{"limits.k8s.gpu/default":"1"}}
{"kind":"runtimeclass","name":"all","annotations":{"limits.k8s.gpu/memory":"32Gi","limits.k8s.gpu/cpu":"8","limits.k8s.gpu/default":"1"}}
{"kind":"runtimeclass","name":"vast","annotations":{"limits.k8s.gpu/memory":"1e40","limits.k8s.gpu/cpu":"1e30"}}
X

# review UID GROUP KIND OPERATION OBJECT: one AdmissionReview line. Made
# by printf, not jq: jq turns integers beyond 2^53 into reals.
review() {
	printf '{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":"%s","kind":{"group":"%s","version":"v1","kind":"%s"},"namespace":"ns","operation":"%s","object":%s}}\n' \
		"$1" "$2" "$3" "$4" "$5"
}

# pod UID SPEC: a Pod CREATE review with the pod spec SPEC (JSON).
pod() {
	review "$1" "" Pod CREATE "{\"metadata\":{\"name\":\"$1\"},\"spec\":$2}"
}

# one UID CLASS RESOURCE VALUE [WHICH]: a pod of CLASS whose container c
# asks VALUE (JSON) of RESOURCE in WHICH (limits, or requests).
one() {
	pod "$1" "{\"runtimeClassName\":\"$2\",\"containers\":[{\"name\":\"c\",\"resources\":{\"${5:-limits}\":{\"$3\":$4}}}]}"
}

# verdicts: each response as [uid, allowed, status message].
verdicts() { jq -c '.response | [.uid, .allowed, .status.message]'; }

# ---- at or beyond 2^63 of a unit ----------------------------------------

check_output 'one value at or beyond 2^63 units, in limits or requests, is refused' '
	{ one mem8ei mem memory "\"8Ei\""
	  one memreq mem memory "\"9223372036854775808\"" requests
	  one mem1e19 mem memory "\"1e19\""
	  one memei mem memory "\"100000000000000Ei\"" requests
	  one memwrap mem memory "\"1e-4294967260\""
	  one memint mem memory 9223372036854775807
	  one memreal mem memory 1e30
	  one cpum cpu cpu "\"10000000000000000000m\"" requests
	  one cpue cpu cpu "\"9.3E\""
	  one gpu gpu nvidia.com/gpu "\"9223372036854775808\""
	  one gpureq gpu nvidia.com/gpu "\"18446744073709551617\"" requests
	} | webhook-patch -i inv.ndjson | verdicts' <<'X'
["mem8ei",false,"pod requests memory 9223372036854775807 > 32Gi allowed by RuntimeClass mem (limits.k8s.gpu/memory)"]
["memreq",false,"pod requests memory 9223372036854775808 > 32Gi allowed by RuntimeClass mem (limits.k8s.gpu/memory)"]
["mem1e19",false,"pod requests memory 10e18 > 32Gi allowed by RuntimeClass mem (limits.k8s.gpu/memory)"]
["memei",false,"pod requests memory 9223372036854775807 > 32Gi allowed by RuntimeClass mem (limits.k8s.gpu/memory)"]
["memwrap",false,"pod requests memory 1e36 > 32Gi allowed by RuntimeClass mem (limits.k8s.gpu/memory)"]
["memint",false,"pod requests memory 9223372036854775807 > 32Gi allowed by RuntimeClass mem (limits.k8s.gpu/memory)"]
["memreal",false,"pod requests memory 1e30 > 32Gi allowed by RuntimeClass mem (limits.k8s.gpu/memory)"]
["cpum",false,"pod requests cpu 10P > 8 allowed by RuntimeClass cpu (limits.k8s.gpu/cpu)"]
["cpue",false,"pod requests cpu 9300P > 8 allowed by RuntimeClass cpu (limits.k8s.gpu/cpu)"]
["gpu",false,"pod requests nvidia.com/gpu 9223372036854775808 > 1 allowed by RuntimeClass gpu (limits.k8s.gpu/default)"]
["gpureq",false,"pod requests nvidia.com/gpu 18446744073709551617 > 1 allowed by RuntimeClass gpu (limits.k8s.gpu/default)"]
X

check_output 'the whole response of a refusal: 8Ei against 32Gi, nothing else said' '
	one u mem memory "\"8Ei\"" | webhook-patch -i inv.ndjson' <<'X'
{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","response":{"uid":"u","allowed":false,"status":{"code":403,"reason":"Forbidden","message":"pod requests memory 9223372036854775807 > 32Gi allowed by RuntimeClass mem (limits.k8s.gpu/memory)"}}}
X

check_output '10^38 and beyond: the container is named, whatever the limit' '
	{ one huge mem memory "\"1e40\""
	  one hugewrap mem memory "\"1.5e-2147483647\"" requests
	  one hugecpu cpu cpu "\"100000000000000000000000000000000000000\""
	  one hugegpu gpu nvidia.com/gpu "\"1e2147483647\""
	  one vastmem vast memory "\"1e39\""
	} | webhook-patch -i inv.ndjson | verdicts' <<'X'
["huge",false,"container c: limits.memory \"1e40\" > 32Gi allowed by RuntimeClass mem (limits.k8s.gpu/memory)"]
["hugewrap",false,"container c: requests.memory \"1.5e-2147483647\" > 32Gi allowed by RuntimeClass mem (limits.k8s.gpu/memory)"]
["hugecpu",false,"container c: limits.cpu \"10000000000000000000000000000000...\" > 8 allowed by RuntimeClass cpu (limits.k8s.gpu/cpu)"]
["hugegpu",false,"container c: limits.nvidia.com/gpu \"1e2147483647\" > 1 allowed by RuntimeClass gpu (limits.k8s.gpu/default)"]
["vastmem",false,"container c: limits.memory \"1e39\" is 1e38 or more, so RuntimeClass vast (limits.k8s.gpu/memory) cannot be checked"]
X

# ---- init containers, sidecars, sums -------------------------------------

check_output 'init containers and sidecars: the largest init container, sidecars summed' '
	{ pod init "{\"runtimeClassName\":\"mem\",\"containers\":[{\"name\":\"c\",\"resources\":{\"limits\":{\"memory\":\"1Gi\"}}}],\"initContainers\":[{\"name\":\"setup\",\"resources\":{\"limits\":{\"memory\":\"8Ei\"}}}]}"
	  pod initreq "{\"runtimeClassName\":\"cpu\",\"containers\":[{\"name\":\"c\"}],\"initContainers\":[{\"name\":\"a\",\"resources\":{\"requests\":{\"cpu\":\"1\"}}},{\"name\":\"b\",\"resources\":{\"requests\":{\"cpu\":\"1e19\"}}}]}"
	  pod sidecar "{\"runtimeClassName\":\"mem\",\"containers\":[{\"name\":\"c\",\"resources\":{\"limits\":{\"memory\":\"16Gi\"}}}],\"initContainers\":[{\"name\":\"log\",\"restartPolicy\":\"Always\",\"resources\":{\"limits\":{\"memory\":\"16Gi\"}}}]}"
	  pod sidecarbig "{\"runtimeClassName\":\"mem\",\"containers\":[{\"name\":\"c\",\"resources\":{\"limits\":{\"memory\":\"16Gi\"}}}],\"initContainers\":[{\"name\":\"log\",\"restartPolicy\":\"Always\",\"resources\":{\"limits\":{\"memory\":\"9223372036854775807\"}}}]}"
	  pod initbad "{\"runtimeClassName\":\"mem\",\"containers\":[{\"name\":\"c\",\"resources\":{\"limits\":{\"memory\":\"1Gi\"}}}],\"initContainers\":[{\"name\":\"setup\",\"resources\":{\"requests\":{\"memory\":\"8Ex\"}}}]}"
	} | webhook-patch -i inv.ndjson | verdicts' <<'X'
["init",false,"pod requests memory 9223372036854775807 > 32Gi allowed by RuntimeClass mem (limits.k8s.gpu/memory)"]
["initreq",false,"pod requests cpu 10e18 > 8 allowed by RuntimeClass cpu (limits.k8s.gpu/cpu)"]
["sidecar",true,null]
["sidecarbig",false,"pod requests memory 9223372054034644991 > 32Gi allowed by RuntimeClass mem (limits.k8s.gpu/memory)"]
["initbad",false,"init container setup: requests.memory \"8Ex\" is not a quantity, so RuntimeClass mem (limits.k8s.gpu/memory) cannot be checked"]
X

check_output 'sums over containers that do not fit in 64 bits are exact' '
	{ pod two8ei "{\"runtimeClassName\":\"mem\",\"containers\":[{\"name\":\"a\",\"resources\":{\"limits\":{\"memory\":\"8Ei\"}}},{\"name\":\"b\",\"resources\":{\"limits\":{\"memory\":\"8Ei\"}}}]}"
	  pod twogpu "{\"runtimeClassName\":\"gpu\",\"containers\":[{\"name\":\"a\",\"resources\":{\"limits\":{\"nvidia.com/gpu\":9223372036854775807}}},{\"name\":\"b\",\"resources\":{\"limits\":{\"nvidia.com/gpu\":9223372036854775807}}},{\"name\":\"c\",\"resources\":{\"limits\":{\"nvidia.com/gpu\":2}}}]}"
	  pod wrapzero "{\"runtimeClassName\":\"gpu\",\"containers\":[{\"name\":\"a\",\"resources\":{\"limits\":{\"nvidia.com/gpu\":\"18446744073709551615\"}}},{\"name\":\"b\",\"resources\":{\"limits\":{\"nvidia.com/gpu\":\"1\"}}}]}"
	  pod cpusum "{\"runtimeClassName\":\"cpu\",\"containers\":[{\"name\":\"a\",\"resources\":{\"requests\":{\"cpu\":\"9223372036854775807m\"}}},{\"name\":\"b\",\"resources\":{\"requests\":{\"cpu\":\"1m\"}}}]}"
	  pod to1e38 "{\"runtimeClassName\":\"mem\",\"containers\":[{\"name\":\"a\",\"resources\":{\"limits\":{\"memory\":\"6e37\"}}},{\"name\":\"b\",\"resources\":{\"limits\":{\"memory\":\"4e37\"}}}]}"
	  pod vastsum "{\"runtimeClassName\":\"vast\",\"containers\":[{\"name\":\"a\",\"resources\":{\"limits\":{\"memory\":\"6e37\"}}},{\"name\":\"b\",\"resources\":{\"limits\":{\"memory\":\"4e37\"}}}]}"
	} | webhook-patch -i inv.ndjson | verdicts' <<'X'
["two8ei",false,"pod requests memory 18446744073709551614 > 32Gi allowed by RuntimeClass mem (limits.k8s.gpu/memory)"]
["twogpu",false,"pod requests nvidia.com/gpu 18446744073709551616 > 1 allowed by RuntimeClass gpu (limits.k8s.gpu/default)"]
["wrapzero",false,"pod requests nvidia.com/gpu 18446744073709551616 > 1 allowed by RuntimeClass gpu (limits.k8s.gpu/default)"]
["cpusum",false,"pod requests cpu 9223372036854775808m > 8 allowed by RuntimeClass cpu (limits.k8s.gpu/cpu)"]
["to1e38",false,"pod requests memory 1e38 or more > 32Gi allowed by RuntimeClass mem (limits.k8s.gpu/memory)"]
["vastsum",false,"pod requests memory 1e38 or more, so RuntimeClass vast (limits.k8s.gpu/memory) cannot be checked"]
X

check_output 'a plain init container runs beside the sidecars started before it' '
	{ pod sideinit "{\"runtimeClassName\":\"mem\",\"containers\":[{\"name\":\"c\",\"resources\":{\"limits\":{\"memory\":\"16Gi\"}}}],\"initContainers\":[{\"name\":\"log\",\"restartPolicy\":\"Always\",\"resources\":{\"limits\":{\"memory\":\"16Gi\"}}},{\"name\":\"setup\",\"resources\":{\"limits\":{\"memory\":\"32Gi\"}}}]}"
	  pod initside "{\"runtimeClassName\":\"mem\",\"containers\":[{\"name\":\"c\",\"resources\":{\"limits\":{\"memory\":\"16Gi\"}}}],\"initContainers\":[{\"name\":\"setup\",\"resources\":{\"limits\":{\"memory\":\"32Gi\"}}},{\"name\":\"log\",\"restartPolicy\":\"Always\",\"resources\":{\"limits\":{\"memory\":\"16Gi\"}}}]}"
	} | webhook-patch -i inv.ndjson | verdicts' <<'X'
["sideinit",false,"pod requests memory 48Gi > 32Gi allowed by RuntimeClass mem (limits.k8s.gpu/memory)"]
["initside",true,null]
X

# ---- values that are no quantity never count as zero ---------------------

check_output 'a value that is no quantity, or negative, refuses the pod and names it' '
	{ one word mem memory "\"lots\""
	  one space mem memory "\" 64Gi\""
	  one null mem memory null
	  one bool mem memory true
	  one obj mem memory "{\"value\":\"64Gi\"}"
	  one empty cpu cpu "\"\"" requests
	  one badexp gpu nvidia.com/gpu "\"1e9223372036854775808\""
	  one neg mem memory "\"-1Gi\""
	  one negint gpu nvidia.com/gpu -1
	  pod offset "{\"runtimeClassName\":\"mem\",\"containers\":[{\"name\":\"a\",\"resources\":{\"limits\":{\"memory\":\"64Gi\"}}},{\"name\":\"b\",\"resources\":{\"limits\":{\"memory\":\"-40Gi\"}}}]}"
	  pod noname "{\"runtimeClassName\":\"mem\",\"containers\":[{\"name\":\"a\"},{\"resources\":{\"limits\":{\"memory\":\"64Gi!\"}}}]}"
	  pod first "{\"runtimeClassName\":\"all\",\"containers\":[{\"name\":\"a\",\"resources\":{\"requests\":{\"memory\":\"x\",\"cpu\":\"9\"},\"limits\":{\"memory\":\"y\",\"nvidia.com/gpu\":\"-0.5\"}}}]}"
	} | webhook-patch -i inv.ndjson | verdicts' <<'X'
["word",false,"container c: limits.memory \"lots\" is not a quantity, so RuntimeClass mem (limits.k8s.gpu/memory) cannot be checked"]
["space",false,"container c: limits.memory \" 64Gi\" is not a quantity, so RuntimeClass mem (limits.k8s.gpu/memory) cannot be checked"]
["null",false,"container c: limits.memory null is not a quantity, so RuntimeClass mem (limits.k8s.gpu/memory) cannot be checked"]
["bool",false,"container c: limits.memory true is not a quantity, so RuntimeClass mem (limits.k8s.gpu/memory) cannot be checked"]
["obj",false,"container c: limits.memory {\"value\":\"64Gi\"} is not a quantity, so RuntimeClass mem (limits.k8s.gpu/memory) cannot be checked"]
["empty",false,"container c: requests.cpu \"\" is not a quantity, so RuntimeClass cpu (limits.k8s.gpu/cpu) cannot be checked"]
["badexp",false,"container c: limits.nvidia.com/gpu \"1e9223372036854775808\" is not a quantity, so RuntimeClass gpu (limits.k8s.gpu/default) cannot be checked"]
["neg",false,"container c: limits.memory \"-1Gi\" is negative, so RuntimeClass mem (limits.k8s.gpu/memory) cannot be checked"]
["negint",false,"container c: limits.nvidia.com/gpu -1 is negative, so RuntimeClass gpu (limits.k8s.gpu/default) cannot be checked"]
["offset",false,"container b: limits.memory \"-40Gi\" is negative, so RuntimeClass mem (limits.k8s.gpu/memory) cannot be checked"]
["noname",false,"containers[1]: limits.memory \"64Gi!\" is not a quantity, so RuntimeClass mem (limits.k8s.gpu/memory) cannot be checked"]
["first",false,"container a: limits.nvidia.com/gpu \"-0.5\" is negative, so RuntimeClass all (limits.k8s.gpu/default) cannot be checked; pod requests cpu 9 > 8 allowed by RuntimeClass all (limits.k8s.gpu/cpu); container a: requests.memory \"x\" is not a quantity, so RuntimeClass all (limits.k8s.gpu/memory) cannot be checked"]
X

# ---- right at the limit ---------------------------------------------------

check_output 'values right at a limit, in any spelling, are admitted; one nano-unit more is not' '
	{ i=0; for m in "\"32Gi\"" "\"34359738368\"" "\"32768Mi\"" "\"0.03125Ti\"" "\"34359738368000000000n\"" 34359738368 "\"34.359738368e9\""; do
		i=$((i + 1)); one "m$i" mem memory "$m"; done
	  i=0; for c in "\"8\"" "\"8000m\"" "\"8e0\"" "\"0.008k\"" 8 8.0 "\"8.000000000\""; do
		i=$((i + 1)); one "c$i" cpu cpu "$c" requests; done
	  one g1 gpu nvidia.com/gpu "\"1\""
	  pod halves "{\"runtimeClassName\":\"mem\",\"containers\":[{\"name\":\"a\",\"resources\":{\"limits\":{\"memory\":\"16Gi\"}}},{\"name\":\"b\",\"resources\":{\"requests\":{\"memory\":\"16384Mi\"}}}]}"
	  one nano mem memory "\"34359738368000000001n\""
	  one milli cpu cpu "\"8001m\""
	  one vastcpu vast cpu "\"1e30\""
	  one vastover vast cpu "\"1000000000000000000000000000000.000000001\""
	} | webhook-patch -i inv.ndjson | verdicts' <<'X'
["m1",true,null]
["m2",true,null]
["m3",true,null]
["m4",true,null]
["m5",true,null]
["m6",true,null]
["m7",true,null]
["c1",true,null]
["c2",true,null]
["c3",true,null]
["c4",true,null]
["c5",true,null]
["c6",true,null]
["c7",true,null]
["g1",true,null]
["halves",true,null]
["nano",false,"pod requests memory 34359738368000000001n > 32Gi allowed by RuntimeClass mem (limits.k8s.gpu/memory)"]
["milli",false,"pod requests cpu 8001m > 8 allowed by RuntimeClass cpu (limits.k8s.gpu/cpu)"]
["vastcpu",true,null]
["vastover",false,"pod requests cpu 1000000000000000000000000000000000000001n > 1e30 allowed by RuntimeClass vast (limits.k8s.gpu/cpu)"]
X

# 32Gi written in 272 characters: read whole, not cut to 255 (which was
# 3.4e259 bytes).
long=34359738368$(printf "%0250d" 0)e-250
printf '{"kind":"runtimeclass","name":"long","annotations":{"limits.k8s.gpu/memory":"%s"}}\n' "$long" >long.ndjson
check_output 'a limit written at length is read whole' '
	{ one l1 long memory "\"32Gi\""; one l2 long memory "\"64Gi\""; } |
	webhook-patch -i long.ndjson | verdicts | sed "s/$long/LONG/"' <<'X'
["l1",true,null]
["l2",false,"pod requests memory 64Gi > LONG allowed by RuntimeClass long (limits.k8s.gpu/memory)"]
X

check_output 'a limit beyond 64 bits is enforced but not divided among containers' '
	pod vastfill "{\"runtimeClassName\":\"vast\",\"containers\":[{\"name\":\"a\"}]}" |
	webhook-patch -i inv.ndjson' <<'X'
{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","response":{"uid":"vastfill","allowed":true}}
X

# The message goes into an annotation with -P: a value cut inside a
# character, and control characters, come out as "?".
check_output '-P holds such a pod; the annotation is valid UTF-8' '
	one held mem memory "\"xéééééééééééééééééééé\"" |
	webhook-patch -P -i inv.ndjson |
	jq -c ".response | [.allowed, (.patch | @base64d | fromjson | .[0].value)]"' <<'X'
[true,{"gpu-webhook.k8s.io/refused":"container c: limits.memory \"xééééééééééééééé?...\" is not a quantity, so RuntimeClass mem (limits.k8s.gpu/memory) cannot be checked"}]
X

# ---- MIG fallback with counts and replicas near 2^31 and 2^63 ------------

# Two nodes claiming 2^63-1 1g.10gb devices (counted as 2^31-1 each),
# one with 12 2g.20gb; one node whose allocated count is beyond its own.
cat >big.ndjson <<'X'
{"kind":"node","name":"a","allocatable":{"nvidia.com/mig-1g.10gb":"9223372036854775807"}}
{"kind":"node","name":"b","allocatable":{"nvidia.com/mig-1g.10gb":"8Ei","nvidia.com/mig-2g.20gb":"12"}}
{"kind":"node","name":"c","allocatable":{"nvidia.com/mig-2g.20gb":"5"},"allocated":{"nvidia.com/mig-2g.20gb":"9223372036854775807"}}
X
tpl() { printf '{"spec":{"containers":[{"name":"c","resources":{"limits":{"nvidia.com/mig-2g.20gb":%s}}}]}}' "$1"; }
migpod() {
	pod "$1" "{\"containers\":[{\"name\":\"c\",\"resources\":{\"limits\":{\"$2\":$3}}}]}"
}
check_output 'replicas near INT_MAX and LONG_MAX, counts near 2^63: defined answers' '
	{ review d1 apps Deployment CREATE "{\"spec\":{\"replicas\":2147483647,\"template\":$(tpl 1)}}"
	  review d2 apps Deployment CREATE "{\"spec\":{\"replicas\":2147483648,\"template\":$(tpl 1)}}"
	  review d3 apps Deployment CREATE "{\"spec\":{\"replicas\":9223372036854775807,\"template\":$(tpl 1)}}"
	  review j1 batch Job CREATE "{\"spec\":{\"parallelism\":9223372036854775807,\"template\":$(tpl 2)}}"
	  review j2 batch Job CREATE "{\"spec\":{\"parallelism\":9223372036854775807,\"template\":$(tpl 3)}}"
	  review d4 apps Deployment CREATE "{\"spec\":{\"replicas\":2147483647,\"template\":$(tpl 9223372036854775807)}}"
	  review d5 apps StatefulSet CREATE "{\"spec\":{\"replicas\":2,\"template\":$(tpl "\"8Ei\"")}}"
	  migpod p1 nvidia.com/mig-2g.20gb "\"9223372036854775807\""
	  migpod p2 nvidia.com/mig-2g.20gb 1
	  migpod p3 nvidia.com/mig-1g.10gb "\"9223372036854775807\""
	  migpod p4 nvidia.com/mig-1g.10gb "\"9223372036854775807\""
	  migpod p5 nvidia.com/mig-1g.10gb 1
	} | webhook-patch -i big.ndjson | jq -c ".response | [.uid, .warnings]"' <<'X'
["d1",["nvidia.com/mig-2g.20gb: 2147483647 asked for 2147483647 pods, 12 free; falling back to nvidia.com/mig-1g.10gb"]]
["d2",["nvidia.com/mig-2g.20gb: 2147483647 asked for 2147483647 pods, 12 free; falling back to nvidia.com/mig-1g.10gb"]]
["d3",["nvidia.com/mig-2g.20gb: 2147483647 asked for 2147483647 pods, 12 free; falling back to nvidia.com/mig-1g.10gb"]]
["j1",["nvidia.com/mig-2g.20gb: 4294967294 asked for 2147483647 pods, 12 free; falling back to nvidia.com/mig-1g.10gb"]]
["j2",["nvidia.com/mig-2g.20gb: 6442450941 asked for 2147483647 pods, 12 free, no fallback fits (1g.10gb: 4294967294 free); left as asked"]]
["d4",["nvidia.com/mig-2g.20gb: 19807040619342712359383728129 asked for 2147483647 pods, 12 free, no fallback fits (1g.10gb: 4294967294 free); left as asked"]]
["d5",["nvidia.com/mig-2g.20gb: 18446744073709551614 asked for 2 pods, 12 free, no fallback fits (1g.10gb: 4294967294 free); left as asked"]]
["p1",["nvidia.com/mig-2g.20gb: 9223372036854775807 asked, 12 free, no fallback fits (1g.10gb: 2147483647 free); left as asked"]]
["p2",["nvidia.com/mig-2g.20gb: 1 asked, 0 free; falling back to nvidia.com/mig-1g.10gb"]]
["p3",["nvidia.com/mig-1g.10gb: 9223372036854775807 asked, 2147483647 free, no fallback chain names 1g.10gb; left as asked"]]
["p4",["nvidia.com/mig-1g.10gb: 9223372036854775807 asked, 1073741823 free, no fallback chain names 1g.10gb; left as asked"]]
["p5",["nvidia.com/mig-1g.10gb: 1 asked, 0 free, no fallback chain names 1g.10gb; left as asked"]]
X

# Pods in the inventory asking 2^63-1 devices, bound and waiting: their
# sums count, and nothing overflows.
check_output 'bound and waiting pods asking 2^63-1 devices each' '
	{ cat big.ndjson
	  for p in x:a y:b z: w:; do
		jq -cn --arg n "${p%%:*}" --arg node "${p#*:}" "{apiVersion: \"v1\", kind: \"Pod\",
			metadata: {name: \$n, namespace: \"x\", uid: \$n},
			spec: ({containers: [{name: \"c\", resources: {limits: {\"nvidia.com/mig-1g.10gb\": \"9223372036854775807\"}}}]}
				+ (if \$node != \"\" then {nodeName: \$node} else {} end)),
			status: {phase: \"Pending\"}}"
	  done; } >bound.ndjson
	{ migpod q1 nvidia.com/mig-1g.10gb 1; migpod q2 nvidia.com/mig-2g.20gb 1; } |
	webhook-patch -i bound.ndjson | jq -c ".response | [.uid, .warnings]"' <<'X'
["q1",["nvidia.com/mig-1g.10gb: 1 asked, 0 free, no fallback chain names 1g.10gb; left as asked"]]
["q2",null]
X

done_testing
