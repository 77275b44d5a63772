#!/bin/sh
# webhook-patch without a cluster: exact AdmissionReview responses on
# stdin for MIG fallback, RuntimeClass limits and every malformed review;
# then HTTPS on a loopback port: reviews, /healthz, /readyz, /metrics,
# certificate reload, concurrency, graceful shutdown; the certificate
# script.
. "$(dirname "$0")/lib.sh"

# ---- fixtures ---------------------------------------------------------

# The seed's two MIG nodes (12 2g.20gb on medium, 28+4 1g.10gb), the
# RuntimeClasses of the seeweb document, and one class with a bad limit.
cat >inv.ndjson <<'X'
{"kind":"node","name":"small","ready":true,"allocatable":{"nvidia.com/mig-1g.10gb":"28"},"allocated":{}}
{"kind":"node","name":"medium","ready":true,"allocatable":{"nvidia.com/mig-2g.20gb":"12","nvidia.com/mig-1g.10gb":"4"},"allocated":{}}
{"kind":"runtimeclass","name":"seeweb-nvidia-1xa6000","annotations":{"limits.k8s.gpu/cpu":"8000m","limits.k8s.gpu/default":"1","limits.k8s.gpu/memory":"32861620Ki"}}
{"kind":"runtimeclass","name":"seeweb-nvidia-2xa6000","annotations":{"limits.k8s.gpu/cpu":"16000m","limits.k8s.gpu/default":"2","limits.k8s.gpu/memory":"65723240Ki"}}
{"kind":"runtimeclass","name":"odd","annotations":{"limits.k8s.gpu/cpu":"lots"}}
X

# review UID GROUP KIND OPERATION OBJECT [EXTRA]: one AdmissionReview line;
# EXTRA is a jq object merged into request (e.g. {"dryRun":true}).
review() {
	jq -cn --arg uid "$1" --arg g "$2" --arg k "$3" --arg op "$4" --argjson obj "$5" \
		--argjson extra "${6:-{\}}" '{apiVersion: "admission.k8s.io/v1", kind: "AdmissionReview",
		request: ({uid: $uid, kind: {group: $g, version: "v1", kind: $k},
			namespace: "ns", operation: $op, object: $obj} + $extra)}'
}

# migpod UID RESOURCE COUNT [ANNOTATIONS]: a Pod asking COUNT of RESOURCE.
migpod() {
	review "$1" "" Pod CREATE "$(jq -cn --arg r "$2" --arg n "$3" --argjson a "${4:-{\}}" '
		{apiVersion: "v1", kind: "Pod", metadata: ({name: "p"} + (if $a == {} then {} else {annotations: $a} end)),
		 spec: {containers: [{name: "c", image: "x", resources: {limits: {($r): $n}}}]}}')"
}

# show: each response as uid, allowed, decoded patch, warnings, status.
show() {
	jq -c '.response | if .patch then .patch |= (@base64d | fromjson) else . end'
}

# summary: each response as "uid resource annotation" after the patch.
summary() {
	jq -r '.response | [.uid, ((.patch // "W10=") | @base64d | fromjson
		| map(select(.op == "add" and (.path | test("resources/limits/"))) | .path
			| sub(".*/nvidia.com~1"; "")) | join(",")),
		((.patch // "W10=") | @base64d | fromjson
		| map(.value | objects | .["gpu-webhook.k8s.io/fallback"] // empty) | join(","))]
		| join(" ") | sub(" +$"; "")'
}

# ---- MIG fallback on stdin ---------------------------------------------

check_output '14 pods asking 2g.20gb: 12 keep it, 2 fall back to 1g.10gb' '
	i=1; while [ $i -le 14 ]; do migpod u$i nvidia.com/mig-2g.20gb 1; i=$((i + 1)); done |
	webhook-patch -i inv.ndjson | summary' <<'X'
u1
u2
u3
u4
u5
u6
u7
u8
u9
u10
u11
u12
u13 mig-1g.10gb 2g.20gb->1g.10gb
u14 mig-1g.10gb 2g.20gb->1g.10gb
X

check_output 'the exact response of a fallback: requests and limits, annotations, warning' '
	{ i=1; while [ $i -le 12 ]; do migpod f$i nvidia.com/mig-2g.20gb 1; i=$((i + 1)); done
	  review last "" Pod CREATE "{\"metadata\":{\"name\":\"p\",\"annotations\":{\"team\":\"a\"}},\"spec\":{\"containers\":[{\"name\":\"c\",\"resources\":{\"requests\":{\"nvidia.com/mig-2g.20gb\":\"1\",\"cpu\":\"1\"},\"limits\":{\"nvidia.com/mig-2g.20gb\":\"1\"}}}],\"initContainers\":[{\"name\":\"i\",\"resources\":{\"limits\":{\"nvidia.com/mig-2g.20gb\":\"1\"}}}]}}"
	} | webhook-patch -i inv.ndjson | tail -n 1 | show' <<'X'
{"uid":"last","allowed":true,"patchType":"JSONPatch","patch":[{"op":"add","path":"/metadata/annotations/gpu-webhook.k8s.io~1fallback","value":"2g.20gb->1g.10gb"},{"op":"remove","path":"/spec/containers/0/resources/requests/nvidia.com~1mig-2g.20gb"},{"op":"add","path":"/spec/containers/0/resources/requests/nvidia.com~1mig-1g.10gb","value":"1"},{"op":"remove","path":"/spec/containers/0/resources/limits/nvidia.com~1mig-2g.20gb"},{"op":"add","path":"/spec/containers/0/resources/limits/nvidia.com~1mig-1g.10gb","value":"1"},{"op":"remove","path":"/spec/initContainers/0/resources/limits/nvidia.com~1mig-2g.20gb"},{"op":"add","path":"/spec/initContainers/0/resources/limits/nvidia.com~1mig-1g.10gb","value":"1"}],"warnings":["nvidia.com/mig-2g.20gb: 1 asked, 0 free; falling back to nvidia.com/mig-1g.10gb"]}
X

check_output 'a pod that fits is allowed without a patch; the raw response line' '
	migpod one nvidia.com/mig-2g.20gb 1 | webhook-patch -i inv.ndjson' <<'X'
{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","response":{"uid":"one","allowed":true}}
X

# medium has 1 of 2g.20gb free and small 1 of 1g.10gb (medium's four
# 1g.10gb are taken): 2 of either do not fit on one node.
cat >tight.ndjson <<'X'
{"kind":"node","name":"small","allocatable":{"nvidia.com/mig-1g.10gb":"28"},"allocated":{"nvidia.com/mig-1g.10gb":"27"}}
{"kind":"node","name":"medium","allocatable":{"nvidia.com/mig-2g.20gb":"12","nvidia.com/mig-1g.10gb":"4"},"allocated":{"nvidia.com/mig-2g.20gb":"11","nvidia.com/mig-1g.10gb":"4"}}
{"kind":"node","name":"h100","allocatable":{"nvidia.com/mig-3g.40gb":"2"},"allocated":{"nvidia.com/mig-3g.40gb":"2"}}
{"kind":"node","name":"down","ready":false,"allocatable":{"nvidia.com/mig-2g.20gb":"7"}}
X
check_output 'the count asked is kept: 2 fall back only where 2 fit, else a warning' '
	{ migpod two nvidia.com/mig-2g.20gb 2; migpod one nvidia.com/mig-2g.20gb 1; migpod next nvidia.com/mig-2g.20gb 1; } |
	webhook-patch -i tight.ndjson | show' <<'X'
{"uid":"two","allowed":true,"warnings":["nvidia.com/mig-2g.20gb: 2 asked, 1 free, no fallback fits (1g.10gb: 1 free); left as asked"]}
{"uid":"one","allowed":true,"patchType":"JSONPatch","patch":[{"op":"add","path":"/metadata/annotations","value":{"gpu-webhook.k8s.io/fallback":"2g.20gb->1g.10gb"}},{"op":"remove","path":"/spec/containers/0/resources/limits/nvidia.com~1mig-2g.20gb"},{"op":"add","path":"/spec/containers/0/resources/limits/nvidia.com~1mig-1g.10gb","value":"1"}],"warnings":["nvidia.com/mig-2g.20gb: 1 asked, 0 free; falling back to nvidia.com/mig-1g.10gb"]}
{"uid":"next","allowed":true,"warnings":["nvidia.com/mig-2g.20gb: 1 asked, 0 free, no fallback fits (1g.10gb: 0 free); left as asked"]}
X

check_output 'multi-tier: 3g.40gb skips a full 2g.20gb for 1g.10gb; a dry run counts nothing' '
	{ migpod d nvidia.com/mig-2g.20gb 1 "" | jq -c ".request.dryRun = true"
	  migpod a nvidia.com/mig-2g.20gb 1
	  migpod b nvidia.com/mig-3g.40gb 1; } | webhook-patch -i tight.ndjson | summary' <<'X'
d
a
b mig-1g.10gb 3g.40gb->1g.10gb
X

check_output 'opt-out, min-profile floor, a bad floor, a profile no chain names' '
	{ migpod off nvidia.com/mig-3g.40gb 1 "{\"gpu-webhook.k8s.io/fallback\":\"disabled\"}"
	  migpod floor nvidia.com/mig-3g.40gb 1 "{\"gpu-webhook.k8s.io/min-profile\":\"2g.20gb\"}"
	  migpod badfloor nvidia.com/mig-3g.40gb 1 "{\"gpu-webhook.k8s.io/min-profile\":\"big\"}"
	  migpod nochain nvidia.com/mig-7g.80gb 1; } |
	webhook-patch -i tight.ndjson | jq -r ".response.warnings[]"' <<'X'
nvidia.com/mig-3g.40gb: 1 asked, 0 free; fallback disabled by annotation
nvidia.com/mig-3g.40gb: 1 asked, 0 free; falling back to nvidia.com/mig-2g.20gb
nvidia.com/mig-3g.40gb: 1 asked, 0 free; gpu-webhook.k8s.io/min-profile "big" is not a MIG profile: no fallback
nvidia.com/mig-7g.80gb: 1 asked, 0 free, no fallback chain names 7g.80gb; left as asked
X

check_output 'a floor above every fallback says so' '
	migpod f nvidia.com/mig-2g.20gb 2 "{\"gpu-webhook.k8s.io/min-profile\":\"2g.20gb\"}" |
	webhook-patch -i tight.ndjson | jq -r ".response.warnings[]"' <<'X'
nvidia.com/mig-2g.20gb: 2 asked, 1 free, no fallback at or above min-profile 2g.20gb; left as asked
X

# A pod template per workload kind, asking 2g.20gb; with 1 free, every
# template of 2 or more pods falls back while 1g.10gb has room for all;
# an owned ReplicaSet is left alone; UPDATE never falls back.
cat >tpl.ndjson <<'X'
{"kind":"node","name":"small","allocatable":{"nvidia.com/mig-1g.10gb":"28"}}
{"kind":"node","name":"medium","allocatable":{"nvidia.com/mig-2g.20gb":"12","nvidia.com/mig-1g.10gb":"4"},"allocated":{"nvidia.com/mig-2g.20gb":"11"}}
X
tpl='{"metadata":{"labels":{"app":"x"}},"spec":{"containers":[{"name":"c","resources":{"limits":{"nvidia.com/mig-2g.20gb":"1"}}}]}}'
check_output 'pod templates of every workload kind; replicas count; owned objects skipped' '
	{ review dep apps Deployment CREATE "{\"spec\":{\"replicas\":2,\"template\":$tpl}}"
	  review dep1 apps Deployment CREATE "{\"spec\":{\"replicas\":1,\"template\":$tpl}}"
	  review sts apps StatefulSet CREATE "{\"spec\":{\"replicas\":3,\"template\":$tpl}}"
	  review rs apps ReplicaSet CREATE "{\"spec\":{\"replicas\":2,\"template\":$tpl}}"
	  review owned apps ReplicaSet CREATE "{\"metadata\":{\"ownerReferences\":[{\"kind\":\"Deployment\",\"name\":\"d\",\"controller\":true}]},\"spec\":{\"replicas\":2,\"template\":$tpl}}"
	  review ds apps DaemonSet CREATE "{\"spec\":{\"template\":$tpl}}"
	  review job batch Job CREATE "{\"spec\":{\"parallelism\":40,\"template\":$tpl}}"
	  review cj batch CronJob CREATE "{\"spec\":{\"jobTemplate\":{\"spec\":{\"parallelism\":2,\"template\":$tpl}}}}"
	  review rc "" ReplicationController CREATE "{\"spec\":{\"replicas\":0,\"template\":$tpl}}"
	  review upd apps Deployment UPDATE "{\"spec\":{\"replicas\":2,\"template\":$tpl}}"
	} | webhook-patch -i tpl.ndjson | jq -c ".response | [.uid, (.patch // \"W10=\" | @base64d | fromjson | map(.path)), .warnings]"' <<'X'
["dep",["/spec/template/metadata/annotations","/spec/template/spec/containers/0/resources/limits/nvidia.com~1mig-2g.20gb","/spec/template/spec/containers/0/resources/limits/nvidia.com~1mig-1g.10gb"],["nvidia.com/mig-2g.20gb: 2 asked for 2 pods, 1 free; falling back to nvidia.com/mig-1g.10gb"]]
["dep1",[],null]
["sts",["/spec/template/metadata/annotations","/spec/template/spec/containers/0/resources/limits/nvidia.com~1mig-2g.20gb","/spec/template/spec/containers/0/resources/limits/nvidia.com~1mig-1g.10gb"],["nvidia.com/mig-2g.20gb: 3 asked for 3 pods, 1 free; falling back to nvidia.com/mig-1g.10gb"]]
["rs",["/spec/template/metadata/annotations","/spec/template/spec/containers/0/resources/limits/nvidia.com~1mig-2g.20gb","/spec/template/spec/containers/0/resources/limits/nvidia.com~1mig-1g.10gb"],["nvidia.com/mig-2g.20gb: 2 asked for 2 pods, 1 free; falling back to nvidia.com/mig-1g.10gb"]]
["owned",[],null]
["ds",[],null]
["job",[],["nvidia.com/mig-2g.20gb: 40 asked for 40 pods, 1 free, no fallback fits (1g.10gb: 32 free); left as asked"]]
["cj",["/spec/jobTemplate/spec/template/metadata/annotations","/spec/jobTemplate/spec/template/spec/containers/0/resources/limits/nvidia.com~1mig-2g.20gb","/spec/jobTemplate/spec/template/spec/containers/0/resources/limits/nvidia.com~1mig-1g.10gb"],["nvidia.com/mig-2g.20gb: 2 asked for 2 pods, 1 free; falling back to nvidia.com/mig-1g.10gb"]]
["rc",[],null]
["upd",[],null]
X

check_output 'a template without metadata gets it whole' '
	review d apps Deployment CREATE "{\"spec\":{\"replicas\":13,\"template\":{\"spec\":{\"containers\":[{\"name\":\"c\",\"resources\":{\"limits\":{\"nvidia.com/mig-2g.20gb\":1}}}]}}}}" |
	webhook-patch -i inv.ndjson | show | jq -c ".patch"' <<'X'
[{"op":"remove","path":"/spec/template/spec/containers/0/resources/limits/nvidia.com~1mig-2g.20gb"},{"op":"add","path":"/spec/template/spec/containers/0/resources/limits/nvidia.com~1mig-1g.10gb","value":1},{"op":"add","path":"/spec/template/metadata","value":{"annotations":{"gpu-webhook.k8s.io/fallback":"2g.20gb->1g.10gb"}}}]
X

check_output 'pod UPDATE, DELETE, CONNECT, subresources and other kinds pass untouched' '
	{ migpod x nvidia.com/mig-2g.20gb 9 | jq -c ".request.operation = \"UPDATE\""
	  review del "" Pod DELETE null
	  review con "" Pod CONNECT "{}"
	  migpod sub nvidia.com/mig-2g.20gb 9 "" | jq -c ".request.subResource = \"status\""
	  review cm "" ConfigMap CREATE "{\"data\":{}}"; } |
	webhook-patch -i inv.ndjson' <<'X'
{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","response":{"uid":"x","allowed":true}}
{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","response":{"uid":"del","allowed":true}}
{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","response":{"uid":"con","allowed":true}}
{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","response":{"uid":"sub","allowed":true}}
{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","response":{"uid":"cm","allowed":true}}
X

# ---- RuntimeClass limits (the seeweb document's pods) -------------------

# rcpod UID CLASS CONTAINER...: a pod of that class; each CONTAINER is a
# jq object of limits, or {} for none.
rcpod() {
	uid=$1 class=$2
	shift 2
	cs=$(for l; do printf '%s\n' "$l"; done | jq -cs 'to_entries | map({name: "c\(.key)", image: "cuda",
		resources: (if .value == {} then {} else {limits: .value} end)})')
	review "$uid" "" Pod CREATE "{\"metadata\":{\"name\":\"$uid\"},\"spec\":{\"runtimeClassName\":\"$class\",\"containers\":$cs}}"
}

check_output 'the seeweb pods: 1 GPU/16Gi/2 cpu runs, 2 GPU/64Gi is refused, two containers fit 2xa6000' '
	{ rcpod nvidia-smi seeweb-nvidia-1xa6000 "{\"nvidia.com/gpu\":1,\"memory\":\"16Gi\",\"cpu\":2}"
	  rcpod unschedulable seeweb-nvidia-1xa6000 "{\"nvidia.com/gpu\":2,\"memory\":\"64Gi\",\"cpu\":1}"
	  rcpod double seeweb-nvidia-2xa6000 "{\"nvidia.com/gpu\":1,\"memory\":\"16Gi\",\"cpu\":1}" "{\"nvidia.com/gpu\":1,\"memory\":\"16Gi\",\"cpu\":1}"
	} | webhook-patch -i inv.ndjson' <<'X'
{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","response":{"uid":"nvidia-smi","allowed":true}}
{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","response":{"uid":"unschedulable","allowed":false,"status":{"code":403,"reason":"Forbidden","message":"pod requests nvidia.com/gpu 2 > 1 allowed by RuntimeClass seeweb-nvidia-1xa6000 (limits.k8s.gpu/default); pod requests memory 64Gi > 32861620Ki allowed by RuntimeClass seeweb-nvidia-1xa6000 (limits.k8s.gpu/memory)"}}}
{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","response":{"uid":"double","allowed":true}}
X

check_output 'a pod with no resources gets the class limits, split evenly over containers' '
	{ rcpod one seeweb-nvidia-1xa6000 "{}"; rcpod two seeweb-nvidia-2xa6000 "{}" "{}"
	  rcpod three seeweb-nvidia-1xa6000 "{}" "{}" "{}"; } | webhook-patch -i inv.ndjson | show' <<'X'
{"uid":"one","allowed":true,"patchType":"JSONPatch","patch":[{"op":"add","path":"/spec/containers/0/resources/requests","value":{"nvidia.com/gpu":"1","cpu":"8","memory":"32861620Ki"}},{"op":"add","path":"/spec/containers/0/resources/limits","value":{"nvidia.com/gpu":"1","cpu":"8","memory":"32861620Ki"}}],"warnings":["resources set from RuntimeClass seeweb-nvidia-1xa6000: nvidia.com/gpu 1, cpu 8, memory 32861620Ki"]}
{"uid":"two","allowed":true,"patchType":"JSONPatch","patch":[{"op":"add","path":"/spec/containers/0/resources/requests","value":{"nvidia.com/gpu":"1","cpu":"8","memory":"32861620Ki"}},{"op":"add","path":"/spec/containers/0/resources/limits","value":{"nvidia.com/gpu":"1","cpu":"8","memory":"32861620Ki"}},{"op":"add","path":"/spec/containers/1/resources/requests","value":{"nvidia.com/gpu":"1","cpu":"8","memory":"32861620Ki"}},{"op":"add","path":"/spec/containers/1/resources/limits","value":{"nvidia.com/gpu":"1","cpu":"8","memory":"32861620Ki"}}],"warnings":["resources set from RuntimeClass seeweb-nvidia-2xa6000: nvidia.com/gpu 2, cpu 16, memory 65723240Ki"]}
{"uid":"three","allowed":true,"patchType":"JSONPatch","patch":[{"op":"add","path":"/spec/containers/0/resources/requests","value":{"nvidia.com/gpu":"1","cpu":"2667m","memory":"10953874Ki"}},{"op":"add","path":"/spec/containers/0/resources/limits","value":{"nvidia.com/gpu":"1","cpu":"2667m","memory":"10953874Ki"}},{"op":"add","path":"/spec/containers/1/resources/requests","value":{"cpu":"2667m","memory":"10953873Ki"}},{"op":"add","path":"/spec/containers/1/resources/limits","value":{"cpu":"2667m","memory":"10953873Ki"}},{"op":"add","path":"/spec/containers/2/resources/requests","value":{"cpu":"2666m","memory":"10953873Ki"}},{"op":"add","path":"/spec/containers/2/resources/limits","value":{"cpu":"2666m","memory":"10953873Ki"}}],"warnings":["resources set from RuntimeClass seeweb-nvidia-1xa6000: nvidia.com/gpu 1, cpu 8, memory 32861620Ki"]}
X

check_output 'only missing resources are filled; the sum over containers is what is checked' '
	{ rcpod gpuonly seeweb-nvidia-2xa6000 "{\"nvidia.com/gpu\":1}" "{\"nvidia.com/gpu\":1}"
	  rcpod over seeweb-nvidia-2xa6000 "{\"nvidia.com/gpu\":2}" "{\"cpu\":\"8\"}" "{\"cpu\":\"8500m\"}"; } |
	webhook-patch -i inv.ndjson | show' <<'X'
{"uid":"gpuonly","allowed":true,"patchType":"JSONPatch","patch":[{"op":"add","path":"/spec/containers/0/resources/limits/cpu","value":"8"},{"op":"add","path":"/spec/containers/0/resources/limits/memory","value":"32861620Ki"},{"op":"add","path":"/spec/containers/0/resources/requests","value":{"cpu":"8","memory":"32861620Ki"}},{"op":"add","path":"/spec/containers/1/resources/limits/cpu","value":"8"},{"op":"add","path":"/spec/containers/1/resources/limits/memory","value":"32861620Ki"},{"op":"add","path":"/spec/containers/1/resources/requests","value":{"cpu":"8","memory":"32861620Ki"}}],"warnings":["resources set from RuntimeClass seeweb-nvidia-2xa6000: cpu 16, memory 65723240Ki"]}
{"uid":"over","allowed":false,"warnings":["resources set from RuntimeClass seeweb-nvidia-2xa6000: memory 65723240Ki"],"status":{"code":403,"reason":"Forbidden","message":"pod requests cpu 16500m > 16000m allowed by RuntimeClass seeweb-nvidia-2xa6000 (limits.k8s.gpu/cpu)"}}
X

check_output '-P holds the refused pod with a scheduling gate instead' '
	rcpod unschedulable seeweb-nvidia-1xa6000 "{\"nvidia.com/gpu\":2,\"memory\":\"64Gi\",\"cpu\":1}" |
	webhook-patch -P -i inv.ndjson | show' <<'X'
{"uid":"unschedulable","allowed":true,"patchType":"JSONPatch","patch":[{"op":"add","path":"/metadata/annotations","value":{"gpu-webhook.k8s.io/refused":"pod requests nvidia.com/gpu 2 > 1 allowed by RuntimeClass seeweb-nvidia-1xa6000 (limits.k8s.gpu/default); pod requests memory 64Gi > 32861620Ki allowed by RuntimeClass seeweb-nvidia-1xa6000 (limits.k8s.gpu/memory)"}},{"op":"add","path":"/spec/schedulingGates","value":[{"name":"gpu-webhook.k8s.io/runtimeclass-limits"}]}],"warnings":["pod requests nvidia.com/gpu 2 > 1 allowed by RuntimeClass seeweb-nvidia-1xa6000 (limits.k8s.gpu/default); pod requests memory 64Gi > 32861620Ki allowed by RuntimeClass seeweb-nvidia-1xa6000 (limits.k8s.gpu/memory); held by scheduling gate gpu-webhook.k8s.io/runtimeclass-limits"]}
X

check_output '-R names a class for GPU pods only; bad limits warn; unknown classes pass' '
	{ review gpu "" Pod CREATE "{\"spec\":{\"containers\":[{\"name\":\"c\",\"resources\":{\"limits\":{\"nvidia.com/gpu\":1}}}]}}"
	  review plain "" Pod CREATE "{\"spec\":{\"containers\":[{\"name\":\"c\"}]}}"
	  rcpod odd odd "{\"cpu\":\"1\"}"
	  rcpod unknown nosuchclass "{}"; } |
	webhook-patch -R seeweb-nvidia-1xa6000 -i inv.ndjson | show' <<'X'
{"uid":"gpu","allowed":true,"patchType":"JSONPatch","patch":[{"op":"add","path":"/spec/containers/0/resources/limits/cpu","value":"8"},{"op":"add","path":"/spec/containers/0/resources/limits/memory","value":"32861620Ki"},{"op":"add","path":"/spec/containers/0/resources/requests","value":{"cpu":"8","memory":"32861620Ki"}},{"op":"add","path":"/spec/runtimeClassName","value":"seeweb-nvidia-1xa6000"}],"warnings":["resources set from RuntimeClass seeweb-nvidia-1xa6000: cpu 8, memory 32861620Ki"]}
{"uid":"plain","allowed":true}
{"uid":"odd","allowed":true,"warnings":["RuntimeClass odd: limits.k8s.gpu/cpu \"lots\" is not a quantity; not enforced"]}
{"uid":"unknown","allowed":true}
X

check_output 'a Deployment over its class is refused as a pod would be' '
	review d apps Deployment CREATE "{\"spec\":{\"template\":{\"spec\":{\"runtimeClassName\":\"seeweb-nvidia-1xa6000\",\"containers\":[{\"name\":\"c\",\"resources\":{\"limits\":{\"nvidia.com/gpu\":3}}}]}}}}" |
	webhook-patch -i inv.ndjson | jq -c ".response | [.allowed, .status.message]"' <<'X'
[false,"pod requests nvidia.com/gpu 3 > 1 allowed by RuntimeClass seeweb-nvidia-1xa6000 (limits.k8s.gpu/default)"]
X

# ---- our scheduler for annotated pods ------------------------------------

# spod UID ANNOTATIONS [SCHEDULER]: a Pod named UID (unnamed, with
# generateName train-, for a UID starting "gen") with these annotations
# (a jq object), naming SCHEDULER unless it is "".
spod() {
	review "$1" "" Pod CREATE "$(jq -cn --arg n "$1" --argjson a "$2" --arg s "${3:-}" '
		{apiVersion: "v1", kind: "Pod",
		 metadata: ((if $n | startswith("gen") then {generateName: "train-"} else {name: $n} end) + {annotations: $a}),
		 spec: ((if $s == "" then {} else {schedulerName: $s} end) + {containers: [{name: "c", image: "x"}]})}')"
}
S=agentaflow.gpu/scheduling-strategy P=agentaflow.gpu/priority
check_output 'annotated pods go to k8shazgpu; malformed ones stay, with a warning naming pod and annotation' '
	{ spod both "{\"$S\":\"binPack\",\"$P\":\"10\"}" default-scheduler
	  spod prio "{\"$P\":\"-5\"}"
	  spod strat "{\"$S\":\"LeastUtilized\",\"team\":\"a\"}"
	  spod edges "{\"$P\":\"-2147483648\"}"
	  spod plain "{\"team\":\"a\"}"
	  spod ours "{\"$S\":\"spread\",\"$P\":\"3\"}" k8shazgpu
	  spod other "{\"$S\":\"spread\"}" volcano
	  spod otherbad "{\"$P\":\"high\"}" volcano
	  spod unknown "{\"$S\":\"fastest\",\"$P\":\"1\"}"
	  spod high "{\"$S\":\"spread\",\"$P\":\"high\"}"
	  spod big "{\"$P\":\"2147483648\"}" default-scheduler
	  spod frac "{\"$P\":\"1.5\"}"
	  spod gen "{\"$S\":\"\",\"$P\":\" 1\"}"
	  spod oursbad "{\"$P\":\"urgent\"}" k8shazgpu
	} | webhook-patch -i inv.ndjson | show' <<'X'
{"uid":"both","allowed":true,"patchType":"JSONPatch","patch":[{"op":"replace","path":"/spec/schedulerName","value":"k8shazgpu"}],"warnings":["pod scheduled by k8shazgpu (strategy binpack, priority 10)"]}
{"uid":"prio","allowed":true,"patchType":"JSONPatch","patch":[{"op":"add","path":"/spec/schedulerName","value":"k8shazgpu"}],"warnings":["pod scheduled by k8shazgpu (strategy default, priority -5)"]}
{"uid":"strat","allowed":true,"patchType":"JSONPatch","patch":[{"op":"add","path":"/spec/schedulerName","value":"k8shazgpu"}],"warnings":["pod scheduled by k8shazgpu (strategy least_utilized, priority 0)"]}
{"uid":"edges","allowed":true,"patchType":"JSONPatch","patch":[{"op":"add","path":"/spec/schedulerName","value":"k8shazgpu"}],"warnings":["pod scheduled by k8shazgpu (strategy default, priority -2147483648)"]}
{"uid":"plain","allowed":true}
{"uid":"ours","allowed":true}
{"uid":"other","allowed":true}
{"uid":"otherbad","allowed":true}
{"uid":"unknown","allowed":true,"warnings":["pod ns/unknown: annotation agentaflow.gpu/scheduling-strategy: \"fastest\" is not a known strategy; left to the default scheduler"]}
{"uid":"high","allowed":true,"warnings":["pod ns/high: annotation agentaflow.gpu/priority: \"high\" is not an integer; left to the default scheduler"]}
{"uid":"big","allowed":true,"warnings":["pod ns/big: annotation agentaflow.gpu/priority: \"2147483648\" is not an integer in -2147483648..2147483647; left to the default scheduler"]}
{"uid":"frac","allowed":true,"warnings":["pod ns/frac: annotation agentaflow.gpu/priority: \"1.5\" is not an integer; left to the default scheduler"]}
{"uid":"gen","allowed":true,"warnings":["pod ns/train-*: annotation agentaflow.gpu/priority: \" 1\" is not an integer; left to the default scheduler","pod ns/train-*: annotation agentaflow.gpu/scheduling-strategy: \"\" is not a known strategy; left to the default scheduler"]}
{"uid":"oursbad","allowed":true,"warnings":["pod ns/oursbad: annotation agentaflow.gpu/priority: \"urgent\" is not an integer; k8shazgpu uses its default"]}
X

check_output 'the strategies taken are exactly those sched-pick takes, spelled as it spells them' '
	for s in least_utilized leastUtilized LEAST_LOADED bestFit binpack spread binpack_gpu SpreadGpu priority round_robin random costOptimized least-utilized most_free leastutilized __random_ ""; do
		sched-pick -S "$s" </dev/null 2>/dev/null; pick=$?
		spod "x" "{\"$S\":\"$s\"}" | webhook-patch -i inv.ndjson |
			jq -r --arg s "$s" --arg pick "$pick" ".response | [\$s, \$pick, (.warnings[0] | sub(\"^pod ns/x: \"; \"\"))] | join(\" | \")"
	done' <<'X'
least_utilized | 0 | pod scheduled by k8shazgpu (strategy least_utilized, priority 0)
leastUtilized | 0 | pod scheduled by k8shazgpu (strategy least_utilized, priority 0)
LEAST_LOADED | 0 | pod scheduled by k8shazgpu (strategy least_loaded, priority 0)
bestFit | 0 | pod scheduled by k8shazgpu (strategy best_fit, priority 0)
binpack | 0 | pod scheduled by k8shazgpu (strategy binpack, priority 0)
spread | 0 | pod scheduled by k8shazgpu (strategy spread, priority 0)
binpack_gpu | 0 | pod scheduled by k8shazgpu (strategy binpack_gpu, priority 0)
SpreadGpu | 0 | pod scheduled by k8shazgpu (strategy spread_gpu, priority 0)
priority | 0 | pod scheduled by k8shazgpu (strategy priority, priority 0)
round_robin | 0 | pod scheduled by k8shazgpu (strategy round_robin, priority 0)
random | 0 | pod scheduled by k8shazgpu (strategy random, priority 0)
costOptimized | 0 | pod scheduled by k8shazgpu (strategy cost_optimized, priority 0)
least-utilized | 2 | annotation agentaflow.gpu/scheduling-strategy: "least-utilized" is not a known strategy; left to the default scheduler
most_free | 2 | annotation agentaflow.gpu/scheduling-strategy: "most_free" is not a known strategy; left to the default scheduler
leastutilized | 0 | pod scheduled by k8shazgpu (strategy least_utilized, priority 0)
__random_ | 0 | pod scheduled by k8shazgpu (strategy random, priority 0)
 | 2 | annotation agentaflow.gpu/scheduling-strategy: "" is not a known strategy; left to the default scheduler
X

check_output 'UPDATE, templates of workloads and other kinds are not redirected' '
	atpl="{\"metadata\":{\"annotations\":{\"$S\":\"spread\",\"$P\":\"5\"}},\"spec\":{\"containers\":[{\"name\":\"c\"}]}}"
	{ spod upd "{\"$S\":\"spread\"}" | jq -c ".request.operation = \"UPDATE\" | .request.oldObject = .request.object"
	  review dep apps Deployment CREATE "{\"spec\":{\"replicas\":2,\"template\":$atpl}}"
	  review job batch Job CREATE "{\"spec\":{\"template\":$atpl}}"
	  review cj batch CronJob CREATE "{\"spec\":{\"jobTemplate\":{\"spec\":{\"template\":$atpl}}}}"
	  review rs apps ReplicaSet UPDATE "{\"spec\":{\"template\":$atpl}}"
	} | webhook-patch -i inv.ndjson | show' <<'X'
{"uid":"upd","allowed":true}
{"uid":"dep","allowed":true}
{"uid":"job","allowed":true}
{"uid":"cj","allowed":true}
{"uid":"rs","allowed":true}
X

check_output 'the name: -S, else $K8SHAZGPU_SCHEDULER_NAME (empty: unset), else k8shazgpu; a bad one exits 2' '
	spod n "{\"$P\":\"1\"}" >n.review
	for args in "" "-S gpu-sched" "-S mine.example.com"; do
		K8SHAZGPU_SCHEDULER_NAME=from-env webhook-patch $args -i inv.ndjson <n.review | show
	done
	K8SHAZGPU_SCHEDULER_NAME= webhook-patch -i inv.ndjson <n.review | show
	spod n "{\"$P\":\"1\"}" from-env | K8SHAZGPU_SCHEDULER_NAME=from-env webhook-patch -i inv.ndjson | show
	webhook-patch -S Bad_Name -i inv.ndjson <n.review; echo "exit $?"
	K8SHAZGPU_SCHEDULER_NAME=-x webhook-patch -i inv.ndjson <n.review; echo "exit $?"' <<'X'
{"uid":"n","allowed":true,"patchType":"JSONPatch","patch":[{"op":"add","path":"/spec/schedulerName","value":"from-env"}],"warnings":["pod scheduled by from-env (strategy default, priority 1)"]}
{"uid":"n","allowed":true,"patchType":"JSONPatch","patch":[{"op":"add","path":"/spec/schedulerName","value":"gpu-sched"}],"warnings":["pod scheduled by gpu-sched (strategy default, priority 1)"]}
{"uid":"n","allowed":true,"patchType":"JSONPatch","patch":[{"op":"add","path":"/spec/schedulerName","value":"mine.example.com"}],"warnings":["pod scheduled by mine.example.com (strategy default, priority 1)"]}
{"uid":"n","allowed":true,"patchType":"JSONPatch","patch":[{"op":"add","path":"/spec/schedulerName","value":"k8shazgpu"}],"warnings":["pod scheduled by k8shazgpu (strategy default, priority 1)"]}
{"uid":"n","allowed":true}
exit 2
exit 2
X
check_output 'a bad name is said once, with the usage' '
	webhook-patch -S Bad_Name -i inv.ndjson </dev/null 2>&1 | sed "s|^/.*/webhook-patch:|webhook-patch:|"
	K8SHAZGPU_SCHEDULER_NAME=-x webhook-patch -i inv.ndjson </dev/null 2>&1 | sed "s|^/.*/webhook-patch:|webhook-patch:|" | head -n 1' <<'X'
webhook-patch: -S Bad_Name: not a scheduler name (a DNS subdomain)
usage: webhook-patch [-Pv] [-f chains] [-i inventory] [-R class] [-S name]
                     [-l addr:port -c cert -k key [-N name]... [-t threads]]
                     [--context name] [--kubeconfig file] [file...]
       webhook-patch -D [-f chains]
webhook-patch: $K8SHAZGPU_SCHEDULER_NAME -x: not a scheduler name (a DNS subdomain)
X

check_output '-v logs each pod handed over' '
	{ spod n "{\"$P\":\"1\"}"; spod gen1 "{\"$S\":\"spread\"}"; spod bad "{\"$P\":\"x\"}"; } |
	webhook-patch -v -i inv.ndjson 2>&1 >/dev/null | sed "s|^/.*/webhook-patch:|webhook-patch:|"' <<'X'
webhook-patch: Pod ns/n: scheduler k8shazgpu
webhook-patch: Pod ns/train-*: scheduler k8shazgpu
X

# One 2g.20gb left, taken; a class of cpu and memory only.
cat >sched-inv.ndjson <<'X'
{"kind":"node","name":"m","ready":true,"allocatable":{"nvidia.com/mig-2g.20gb":"1","nvidia.com/mig-1g.10gb":"4"},"allocated":{"nvidia.com/mig-2g.20gb":"1"}}
{"kind":"runtimeclass","name":"mig-small","annotations":{"limits.k8s.gpu/cpu":"4","limits.k8s.gpu/memory":"16Gi"}}
X
check_output 'with the class (-R) and MIG fallback in the same pod: one patch, every warning; refused: none; -P holds and redirects' '
	mig="{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"m\",\"annotations\":{\"$S\":\"best_fit\",\"$P\":\"100\"}},\"spec\":{\"containers\":[{\"name\":\"c\",\"resources\":{\"limits\":{\"nvidia.com/mig-2g.20gb\":\"1\"}}}]}}"
	big="{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"b\",\"annotations\":{\"$P\":\"1\"}},\"spec\":{\"containers\":[{\"name\":\"c\",\"resources\":{\"limits\":{\"nvidia.com/mig-1g.10gb\":\"1\",\"cpu\":\"6\"}}}]}}"
	{ review mig "" Pod CREATE "$mig"; review big "" Pod CREATE "$big"; } |
		webhook-patch -R mig-small -i sched-inv.ndjson | show
	review big "" Pod CREATE "$big" | webhook-patch -P -R mig-small -i sched-inv.ndjson | show' <<'X'
{"uid":"mig","allowed":true,"patchType":"JSONPatch","patch":[{"op":"add","path":"/metadata/annotations/gpu-webhook.k8s.io~1fallback","value":"2g.20gb->1g.10gb"},{"op":"remove","path":"/spec/containers/0/resources/limits/nvidia.com~1mig-2g.20gb"},{"op":"add","path":"/spec/containers/0/resources/limits/cpu","value":"4"},{"op":"add","path":"/spec/containers/0/resources/limits/memory","value":"16Gi"},{"op":"add","path":"/spec/containers/0/resources/limits/nvidia.com~1mig-1g.10gb","value":"1"},{"op":"add","path":"/spec/containers/0/resources/requests","value":{"cpu":"4","memory":"16Gi"}},{"op":"add","path":"/spec/runtimeClassName","value":"mig-small"},{"op":"add","path":"/spec/schedulerName","value":"k8shazgpu"}],"warnings":["resources set from RuntimeClass mig-small: cpu 4, memory 16Gi","nvidia.com/mig-2g.20gb: 1 asked, 0 free; falling back to nvidia.com/mig-1g.10gb","pod scheduled by k8shazgpu (strategy best_fit, priority 100)"]}
{"uid":"big","allowed":false,"warnings":["resources set from RuntimeClass mig-small: memory 16Gi"],"status":{"code":403,"reason":"Forbidden","message":"pod requests cpu 6 > 4 allowed by RuntimeClass mig-small (limits.k8s.gpu/cpu)"}}
{"uid":"big","allowed":true,"patchType":"JSONPatch","patch":[{"op":"add","path":"/metadata/annotations/gpu-webhook.k8s.io~1refused","value":"pod requests cpu 6 > 4 allowed by RuntimeClass mig-small (limits.k8s.gpu/cpu)"},{"op":"add","path":"/spec/containers/0/resources/limits/memory","value":"16Gi"},{"op":"add","path":"/spec/containers/0/resources/requests","value":{"memory":"16Gi"}},{"op":"add","path":"/spec/runtimeClassName","value":"mig-small"},{"op":"add","path":"/spec/schedulingGates","value":[{"name":"gpu-webhook.k8s.io/runtimeclass-limits"}]},{"op":"add","path":"/spec/schedulerName","value":"k8shazgpu"}],"warnings":["resources set from RuntimeClass mig-small: memory 16Gi","pod requests cpu 6 > 4 allowed by RuntimeClass mig-small (limits.k8s.gpu/cpu); held by scheduling gate gpu-webhook.k8s.io/runtimeclass-limits","pod scheduled by k8shazgpu (strategy default, priority 1)"]}
X

# ---- malformed reviews ---------------------------------------------------

head -c 3145728 /dev/zero | tr '\0' x >big.txt
jq -cn --rawfile b big.txt '{apiVersion: "admission.k8s.io/v1", kind: "AdmissionReview", request: {uid: "big",
	kind: {group: "", version: "v1", kind: "Pod"}, operation: "CREATE",
	object: {metadata: {annotations: {big: $b}}, spec: {containers: [{name: "c"}]}}}}' >big.json
{
	printf '%s\n' '{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":"t1","kind":{"kind":"Pod"'
	printf '\n'
	printf '%s\n' '[1,2]'
	printf '%s\n' '{"apiVersion":"admission.k8s.io/v1","kind":"Pod","request":{"uid":"k1"}}'
	printf '%s\n' '{"apiVersion":"admission.k8s.io/v1","request":{"uid":"k2"}}'
	printf '%s\n' '{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"kind":{"kind":"Pod"},"operation":"CREATE","object":{}}}'
	printf '%s\n' '{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":"","operation":"CREATE"}}'
	printf '%s\n' '{"apiVersion":"admission.k8s.io/v1beta1","kind":"AdmissionReview","request":{"uid":"v1b"}}'
	printf '%s\n' '{"kind":"AdmissionReview","request":{"uid":"nov"}}'
	printf '%s\n' '{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview"}'
	printf '%s\n' '{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":"op","operation":"PATCH"}}'
	printf '%s\n' '{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":"nok","operation":"CREATE"}}'
	printf '%s\n' '{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":"noobj","operation":"CREATE","kind":{"kind":"Pod"}}}'
	cat big.json
	printf '%s\n' 'null'
	printf '%s\n' '{"D?P\uD¶D}'
	printf '%s\n' '{"apiVersion":"admission.k8s.io/v1ééééééééééééééééééééééééé","kind":"AdmissionReview","request":{"uid":"cut"}}'
} >malformed.in
check_output 'every malformed review gets a valid response, in order, and exit 1' '
	webhook-patch -i inv.ndjson malformed.in 2>malformed.err; echo "exit $?"' <<'X'
{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","response":{"uid":"","allowed":false,"status":{"code":400,"reason":"BadRequest","message":"invalid AdmissionReview: invalid JSON at line 1 column 103: '}' expected near end of file"}}}
{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","response":{"uid":"","allowed":false,"status":{"code":400,"reason":"BadRequest","message":"invalid AdmissionReview: empty request"}}}
{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","response":{"uid":"","allowed":false,"status":{"code":400,"reason":"BadRequest","message":"invalid AdmissionReview: not a JSON object"}}}
{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","response":{"uid":"k1","allowed":false,"status":{"code":400,"reason":"BadRequest","message":"invalid AdmissionReview: kind \"Pod\" is not AdmissionReview"}}}
{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","response":{"uid":"k2","allowed":false,"status":{"code":400,"reason":"BadRequest","message":"invalid AdmissionReview: kind is missing"}}}
{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","response":{"uid":"","allowed":false,"status":{"code":400,"reason":"BadRequest","message":"invalid AdmissionReview: request.uid is missing"}}}
{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","response":{"uid":"","allowed":false,"status":{"code":400,"reason":"BadRequest","message":"invalid AdmissionReview: request.uid is missing"}}}
{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","response":{"uid":"v1b","allowed":false,"status":{"code":400,"reason":"BadRequest","message":"invalid AdmissionReview: unsupported apiVersion \"admission.k8s.io/v1beta1\" (want admission.k8s.io/v1)"}}}
{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","response":{"uid":"nov","allowed":false,"status":{"code":400,"reason":"BadRequest","message":"invalid AdmissionReview: apiVersion is missing"}}}
{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","response":{"uid":"","allowed":false,"status":{"code":400,"reason":"BadRequest","message":"invalid AdmissionReview: request is missing"}}}
{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","response":{"uid":"op","allowed":false,"status":{"code":400,"reason":"BadRequest","message":"invalid AdmissionReview: request.operation \"PATCH\" is not CREATE, UPDATE, DELETE or CONNECT"}}}
{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","response":{"uid":"nok","allowed":false,"status":{"code":400,"reason":"BadRequest","message":"invalid AdmissionReview: request.kind is missing"}}}
{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","response":{"uid":"noobj","allowed":false,"status":{"code":400,"reason":"BadRequest","message":"invalid AdmissionReview: request.object is missing"}}}
{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","response":{"uid":"big","allowed":true}}
{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","response":{"uid":"","allowed":false,"status":{"code":400,"reason":"BadRequest","message":"invalid AdmissionReview: not a JSON object"}}}
{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","response":{"uid":"","allowed":false,"status":{"code":400,"reason":"BadRequest","message":"invalid AdmissionReview: invalid JSON at line 1 column 9: invalid escape near '\"D?P\\uD?'"}}}
{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","response":{"uid":"cut","allowed":false,"status":{"code":400,"reason":"BadRequest","message":"invalid AdmissionReview: unsupported apiVersion \"admission.k8s.io/v1éééééééééééééééééééééé?\" (want admission.k8s.io/v1)"}}}
exit 1
X

check_output 'each bad line is named on stderr with its line number' 'cat malformed.err' <<'X'
webhook-patch: malformed.in:1: invalid AdmissionReview: invalid JSON at line 1 column 103: '}' expected near end of file
webhook-patch: malformed.in:2: blank line
webhook-patch: malformed.in:3: invalid AdmissionReview: not a JSON object
webhook-patch: malformed.in:4: invalid AdmissionReview: kind "Pod" is not AdmissionReview
webhook-patch: malformed.in:5: invalid AdmissionReview: kind is missing
webhook-patch: malformed.in:6: invalid AdmissionReview: request.uid is missing
webhook-patch: malformed.in:7: invalid AdmissionReview: request.uid is missing
webhook-patch: malformed.in:8: invalid AdmissionReview: unsupported apiVersion "admission.k8s.io/v1beta1" (want admission.k8s.io/v1)
webhook-patch: malformed.in:9: invalid AdmissionReview: apiVersion is missing
webhook-patch: malformed.in:10: invalid AdmissionReview: request is missing
webhook-patch: malformed.in:11: invalid AdmissionReview: request.operation "PATCH" is not CREATE, UPDATE, DELETE or CONNECT
webhook-patch: malformed.in:12: invalid AdmissionReview: request.kind is missing
webhook-patch: malformed.in:13: invalid AdmissionReview: request.object is missing
webhook-patch: malformed.in:15: invalid AdmissionReview: not a JSON object
webhook-patch: malformed.in:16: invalid AdmissionReview: invalid JSON at line 1 column 9: invalid escape near '"D?P\uD?'
webhook-patch: malformed.in:17: invalid AdmissionReview: unsupported apiVersion "admission.k8s.io/v1éééééééééééééééééééééé?" (want admission.k8s.io/v1)
X

# What the policy never reads (oldObject, status, managedFields, volumes,
# tolerations, env, probes, ...) is left out as a review is read; the
# patch still applies to the whole object, and the text is checked whole.
check_output 'a full Deployment review: the patch of the parts read, for the whole object' '
	webhook-patch -i inv.ndjson "$TOP/t/fuzz/corpus-webhook-review/apiserver-deployment.json" | show' <<'X'
{"uid":"dep-1","allowed":true,"patchType":"JSONPatch","patch":[{"op":"add","path":"/spec/template/metadata/annotations","value":{"gpu-webhook.k8s.io/fallback":"2g.20gb->1g.10gb"}},{"op":"remove","path":"/spec/template/spec/containers/0/resources/limits/nvidia.com~1mig-2g.20gb"},{"op":"add","path":"/spec/template/spec/containers/0/resources/limits/nvidia.com~1mig-1g.10gb","value":"1"}],"warnings":["nvidia.com/mig-2g.20gb: 13 asked for 13 pods, 12 free; falling back to nvidia.com/mig-1g.10gb"]}
X
check_output 'a NUL or a number out of range in a part left out still makes the review invalid' '
	d="$TOP/t/fuzz/corpus-webhook-review/apiserver-deployment.json"
	{ jq -c ".request.object.spec.template.spec.containers[0].env[0].value = \"a\u0000b\"" "$d"
	  sed "s/\"emptyDir\":{}/\"emptyDir\":{\"sizeLimit\":99999999999999999999}/" "$d"
	} | webhook-patch -i inv.ndjson 2>&1 | jq -R -c "fromjson? // . | if type == \"object\" then .response.status.message else . end"' <<'X'
"webhook-patch: <stdin>:1: invalid AdmissionReview: invalid JSON at line 1 column 1024: \\u0000 is not allowed without JSON_ALLOW_NUL near '\"a\\u0000b\"'"
"invalid AdmissionReview: invalid JSON at line 1 column 1024: \\u0000 is not allowed without JSON_ALLOW_NUL near '\"a\\u0000b\"'"
"webhook-patch: <stdin>:2: invalid AdmissionReview: invalid JSON at line 1 column 841: too big integer near '99999999999999999999'"
"invalid AdmissionReview: invalid JSON at line 1 column 841: too big integer near '99999999999999999999'"
X

check 'a line over 8 MiB is answered, not parsed' '
	head -c 9000000 /dev/zero | tr "\0" " " >huge.in && echo "{}" >>huge.in &&
	must_fail 1 webhook-patch -i inv.ndjson huge.in >huge.out 2>huge.err &&
	test "$(jq -r .response.status.message huge.out)" = "invalid AdmissionReview: request body larger than 8388608 bytes"'

# ---- configuration -------------------------------------------------------

check_output '-D prints the built-in chains' 'webhook-patch -D' <<'X'
{"chains":{"A100-40GB":[["3g.20gb","2g.10gb","1g.5gb"]],"A100-80GB":[["3g.40gb","2g.20gb","1g.10gb"]],"H100-80GB":[["3g.40gb","2g.20gb","1g.10gb"]],"H200":[["3g.71gb","2g.35gb","1g.18gb"],["2g.20gb","1g.10gb"]]},"pendingSeconds":60.0}
X

cat >chains.yaml <<'X'
# only 2g.20gb may fall back, and straight to 1g.10gb
chains:
  lab: [2g.20gb, 1g.10gb]
pendingSeconds: 5
X
check_output '-f replaces the chains: 3g.40gb no longer falls back' '
	webhook-patch -D -f chains.yaml &&
	migpod b nvidia.com/mig-3g.40gb 1 | webhook-patch -f chains.yaml -i tight.ndjson | jq -r ".response.warnings[]"' <<'X'
{"chains":{"lab":[["2g.20gb","1g.10gb"]]},"pendingSeconds":5.0}
nvidia.com/mig-3g.40gb: 1 asked, 0 free, no fallback chain names 3g.40gb; left as asked
X

check_output 'bad chain files are refused with the reason' '
	printf "chains: {x: [1g.10gb, 2g.20gb]}\n" >up.yaml
	printf "chains: {x: [2g.20gb, huge]}\n" >name.yaml
	printf "chains: {x: [2g.20gb]}\n" >short.yaml
	printf "chains: {}\ncolour: red\n" >key.yaml
	printf "pendingSeconds: 0\nchains: {}\n" >pend.yaml
	for f in up name short key pend; do webhook-patch -D -f $f.yaml; echo "exit $?"; done 2>&1' <<'X'
webhook-patch: up.yaml: x: 2g.20gb does not come after 1g.10gb: a chain goes from larger to smaller
exit 1
webhook-patch: name.yaml: x: "huge" is not a MIG profile
exit 1
webhook-patch: short.yaml: x: a chain needs at least two profiles
exit 1
webhook-patch: key.yaml: colour: unknown setting
exit 1
webhook-patch: pend.yaml: pendingSeconds: expected a number of seconds from 1 to 3600
exit 1
X

check_output 'a bad inventory record stops it, named by line' 'exec 2>&1
	printf "%s\n" "{\"kind\":\"node\",\"name\":\"a\"}" "{\"kind\":\"gpu\"}" >badinv.ndjson
	printf "%s\n" "{\"kind\":\"node\",\"name\":\"a\",\"ready\":\"yes\"}" >badready.ndjson
	webhook-patch -i badinv.ndjson </dev/null; echo "exit $?"
	webhook-patch -i badready.ndjson </dev/null; echo "exit $?"
	webhook-patch -i nosuch.ndjson </dev/null; echo "exit $?"' <<'X'
webhook-patch: badinv.ndjson:2: unknown record kind "gpu"
exit 1
webhook-patch: badready.ndjson:1: node a: ready is not a boolean
exit 1
webhook-patch: nosuch.ndjson: No such file or directory
exit 1
X

check_output 'Kubernetes objects as inventory: bound pods take devices, unbound ones wait' '
	{ printf "%s\n" "{\"apiVersion\":\"v1\",\"kind\":\"List\",\"items\":[{\"apiVersion\":\"v1\",\"kind\":\"Node\",\"metadata\":{\"name\":\"medium\"},\"status\":{\"allocatable\":{\"nvidia.com/mig-2g.20gb\":\"3\"},\"conditions\":[{\"type\":\"Ready\",\"status\":\"True\"}]}}]}"
	  for p in a:medium:Running b::Pending c:medium:Succeeded d::Gated; do
		IFS=: read -r n node phase <<P
$p
P
		jq -cn --arg n "$n" --arg node "$node" --arg phase "$phase" "{apiVersion: \"v1\", kind: \"Pod\",
			metadata: {name: \$n, namespace: \"x\", uid: \$n},
			spec: ({containers: [{name: \"c\", resources: {limits: {\"nvidia.com/mig-2g.20gb\": \"1\"}}}]}
				+ (if \$node != \"\" then {nodeName: \$node} else {} end)
				+ (if \$phase == \"Gated\" then {schedulingGates: [{name: \"g\"}]} else {} end)),
			status: {phase: \$phase}}"
	  done; } >objs.ndjson
	{ migpod p1 nvidia.com/mig-2g.20gb 1; migpod p2 nvidia.com/mig-2g.20gb 1; } |
	webhook-patch -i objs.ndjson | jq -c ".response.warnings"' <<'X'
null
["nvidia.com/mig-2g.20gb: 1 asked, 0 free, no fallback fits (1g.10gb: 0 free); left as asked"]
X

# ---- HTTPS ---------------------------------------------------------------

T=30
[ "${VALGRIND:-}" = 1 ] && T=120
k8shazgpu-webhook-certs -d c1 -H 127.0.0.1 >c1.bundle 2>certs.err || echo "# certificates failed: $(cat certs.err)"

# start_server ARGS...: webhook-patch serving on a free loopback port,
# certificate in cert/ (a copy of $CERTS, c1 unless set); sets PID and
# PORT; its exit status goes to server.rc when it ends.
start_server() {
	mkdir -p cert && cp "${CERTS:-c1}/tls.crt" "${CERTS:-c1}/tls.key" cert/ && rm -f server.pid server.rc
	( webhook-patch "$@" -l 127.0.0.1:0 -c cert/tls.crt -k cert/tls.key 2>server.err &
	  echo $! >server.pid; wait $!; echo $? >server.rc ) &
	n=0
	until [ -s server.pid ] && PID=$(cat server.pid) &&
		PORT=$(sed -n 's/.*(port \([0-9]*\)).*/\1/p' server.err) && [ -n "$PORT" ]; do
		n=$((n + 1))
		[ $n -lt $((T * 10)) ] && ! [ -e server.rc ] || return 1
		sleep 0.1
	done
}
EVENTUALLY_HZ=10
https() { curl -sS --max-time "$T" --cacert "${CA:-c1/ca.crt}" "$@"; }
# post FILE: POST it to /mutate; prints the body, then the HTTP status.
post() { https --data-binary "@$1" -H 'Content-Type: application/json' -w '\n%{http_code}\n' "https://127.0.0.1:$PORT/mutate"; }
# post_jq FILE FILTER: post FILE; print the body through jq FILTER, then the status.
post_jq() { post "$1" >post.out && head -n 1 post.out | jq -c "$2" && tail -n 1 post.out; }

start_server -i inv.ndjson || echo "# server did not start: $(cat server.err)"

check_output 'HTTPS: /healthz, /readyz, 404, 405' '
	https https://127.0.0.1:$PORT/healthz && https https://127.0.0.1:$PORT/readyz &&
	https -w "%{http_code}\n" https://127.0.0.1:$PORT/nothing &&
	https -w "%{http_code}\n" https://127.0.0.1:$PORT/mutate' <<'X'
ok
ok
not found
404
use POST
405
X

check_output 'HTTPS: a fallback, exactly as on stdin, after 12 that fit' '
	i=1; while [ $i -le 12 ]; do migpod h$i nvidia.com/mig-2g.20gb 1 >r.json; post r.json >/dev/null; i=$((i + 1)); done
	migpod h13 nvidia.com/mig-2g.20gb 1 >r.json && post r.json' <<'X'
{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","response":{"uid":"h13","allowed":true,"patchType":"JSONPatch","patch":"W3sib3AiOiJhZGQiLCJwYXRoIjoiL21ldGFkYXRhL2Fubm90YXRpb25zIiwidmFsdWUiOnsiZ3B1LXdlYmhvb2suazhzLmlvL2ZhbGxiYWNrIjoiMmcuMjBnYi0+MWcuMTBnYiJ9fSx7Im9wIjoicmVtb3ZlIiwicGF0aCI6Ii9zcGVjL2NvbnRhaW5lcnMvMC9yZXNvdXJjZXMvbGltaXRzL252aWRpYS5jb21+MW1pZy0yZy4yMGdiIn0seyJvcCI6ImFkZCIsInBhdGgiOiIvc3BlYy9jb250YWluZXJzLzAvcmVzb3VyY2VzL2xpbWl0cy9udmlkaWEuY29tfjFtaWctMWcuMTBnYiIsInZhbHVlIjoiMSJ9XQ==","warnings":["nvidia.com/mig-2g.20gb: 1 asked, 0 free; falling back to nvidia.com/mig-1g.10gb"]}}
200
X

check_output 'HTTPS: a refusal, truncated JSON, a wrong kind, a 3 MiB object, 9 MiB' '
	rcpod u seeweb-nvidia-1xa6000 "{\"nvidia.com/gpu\":2}" >r.json && post_jq r.json .response.status
	printf "{\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":\"AdmissionReview\",\"request\":{" >t.json && post_jq t.json .response.status
	printf "{\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":\"Pod\",\"request\":{\"uid\":\"w\"}}" >w.json && post_jq w.json ".response | [.uid, .status.message]"
	post_jq big.json .response
	cat big.json big.json big.json >huge.json && post_jq huge.json .response.status' <<'X'
{"code":403,"reason":"Forbidden","message":"pod requests nvidia.com/gpu 2 > 1 allowed by RuntimeClass seeweb-nvidia-1xa6000 (limits.k8s.gpu/default)"}
200
{"code":400,"reason":"BadRequest","message":"invalid AdmissionReview: invalid JSON at line 1 column 72: string or '}' expected near end of file"}
400
["w","invalid AdmissionReview: kind \"Pod\" is not AdmissionReview"]
400
{"uid":"big","allowed":true}
200
{"code":400,"reason":"BadRequest","message":"invalid AdmissionReview: request body larger than 8388608 bytes"}
413
X

# A client that stops in the middle of its TLS handshake (three bytes of
# a record) must cost nothing while it waits: the server's CPU time over
# two seconds stays under a tenth of a second (spinning, it took two).
cpu_ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }
check 'HTTPS: a client stalled mid-handshake costs no CPU' '
	bash -c "exec 3<>/dev/tcp/127.0.0.1/$PORT && printf \"\\026\\003\\001\" >&3 && sleep 3" &
	STALL=$!
	sleep 0.5 && t0=$(cpu_ticks $PID) && sleep 2 && t1=$(cpu_ticks $PID)
	kill $STALL 2>/dev/null; wait $STALL 2>/dev/null
	echo "# server CPU ticks over 2 s with a stalled handshake: $((t1 - t0))"
	[ $((t1 - t0)) -lt 10 ]'

# A handshake a byte a second never ends by an idle timeout; the server
# closes it 10 s after its start (lib/gate.h), and healthz answers.
check_output 'HTTPS: handshakes trickled a byte a second are closed 10 s after their start' '
	"$TOP/t/trickle" --tls -n 4 -d 10 -w 20 127.0.0.1 $PORT && https https://127.0.0.1:$PORT/healthz' <<'X'
opened 4 connections from 1 addresses
closed by the server: 4 of 4, 0 answered
closed before their deadline (their place taken): 0
closed at their deadline (10 to 13 s after their start): 4
ok
X

check 'HTTPS: 16 reviews at once each get their own answer' '
	i=1; while [ $i -le 16 ]; do
		migpod c$i nvidia.com/mig-1g.10gb 1 >c$i.json
		post c$i.json >c$i.out &
		i=$((i + 1))
	done; wait
	i=1; while [ $i -le 16 ]; do
		test "$(head -n 1 c$i.out | jq -r .response.uid)" = c$i && test "$(tail -n 1 c$i.out)" = 200 || exit 1
		i=$((i + 1))
	done'

check_output 'HTTPS: /metrics counts reviews by outcome, fallbacks, denials, latency' '
	https https://127.0.0.1:$PORT/metrics >metrics.txt &&
	grep -E "^k8shazgpu_webhook_(reviews_total|fallbacks_total|denials_total|review_seconds_count|inventory_synced|pending)" metrics.txt' <<'X'
k8shazgpu_webhook_reviews_total{outcome="allowed"} 29
k8shazgpu_webhook_reviews_total{outcome="patched"} 1
k8shazgpu_webhook_reviews_total{outcome="denied"} 1
k8shazgpu_webhook_reviews_total{outcome="invalid"} 3
k8shazgpu_webhook_fallbacks_total{from="2g.20gb",to="1g.10gb"} 1
k8shazgpu_webhook_denials_total{limit="limits.k8s.gpu/default",action="deny"} 1
k8shazgpu_webhook_review_seconds_count 34
k8shazgpu_webhook_inventory_synced 1
k8shazgpu_webhook_pending{resource="nvidia.com/mig-1g.10gb"} 17
k8shazgpu_webhook_pending{resource="nvidia.com/mig-2g.20gb"} 12
X

check 'HTTPS: a new certificate and CA are served after the files change' '
	k8shazgpu-webhook-certs -d c2 -H 127.0.0.1 >/dev/null &&
	cp c2/tls.crt cert/tls.crt.new && cp c2/tls.key cert/tls.key.new &&
	mv cert/tls.key.new cert/tls.key && mv cert/tls.crt.new cert/tls.crt &&
	CA=c2/ca.crt && eventually "$T" https -o /dev/null https://127.0.0.1:$PORT/healthz &&
	! curl -sS --max-time "$T" --cacert c1/ca.crt -o /dev/null https://127.0.0.1:$PORT/healthz 2>/dev/null &&
	grep -q "certificate reloaded from cert/tls.crt" server.err'

check 'HTTPS: a key that does not match is refused and the old pair kept' '
	cp c1/tls.key cert/tls.key &&
	eventually "$T" grep -q "keeping the certificate in use" server.err &&
	CA=c2/ca.crt https https://127.0.0.1:$PORT/healthz >/dev/null'

check 'HTTPS: TERM lets a slow request in flight finish, then exits 0' '
	CA=c2/ca.crt https --limit-rate 600k --data-binary @big.json -w "\n%{http_code}\n" \
		https://127.0.0.1:$PORT/mutate >slow.out 2>slow.err &
	CURL=$!
	sleep 1.5 && kill -TERM $PID && wait $CURL &&
	test "$(head -n 1 slow.out | jq -r .response.uid)" = big && test "$(tail -n 1 slow.out)" = 200 &&
	eventually "$T" test -s server.rc && test "$(cat server.rc)" = 0 &&
	! CA=c2/ca.crt https https://127.0.0.1:$PORT/healthz 2>/dev/null'
kill $PID 2>/dev/null

check 'HTTPS: usage errors and an unusable certificate' '
	must_fail 2 webhook-patch -l 127.0.0.1:0 2>/dev/null &&
	must_fail 2 webhook-patch -c x -k y 2>/dev/null &&
	must_fail 1 webhook-patch -i inv.ndjson -l 127.0.0.1:0 -c c1/ca.key -k c1/tls.key 2>err &&
	grep -q "cannot serve with this certificate and key" err &&
	must_fail 1 webhook-patch -i inv.ndjson -l nonsense -c c1/tls.crt -k c1/tls.key 2>err &&
	grep -q "nonsense: expected HOST:PORT" err'

# ---- its own checks of the certificate ------------------------------------

# A certificate that expired and a good one (and below, one that expires
# while it is served); curl -k: the server, not the client, is what is
# checked here.
cert-make -o expired -H 127.0.0.1 -V 2020-01-01T00:00:00Z,2021-01-01T00:00:00Z >/dev/null
cert-make -o good -H 127.0.0.1 >/dev/null
# stop_server: TERM the server and wait for its end, so that the next
# one's files are its own; its exit status is added to servers.rc.
stop_server() { kill "$PID" 2>/dev/null; eventually "$T" test -s server.rc && cat server.rc >>servers.rc; }
# get PATH: the body, then the HTTP status.
get() { curl -sS -k --max-time "$T" -w '%{http_code}\n' "https://127.0.0.1:$PORT$1"; }
# cert_log: the lines of server.err about the certificate.
cert_log() { grep -v "serving on\|certificate reloaded" server.err; }

CERTS=expired start_server -i inv.ndjson || echo "# server did not start: $(cat server.err)"
check_output 'an expired certificate: logged once, /readyz 503 with why, /healthz 200, reviews answered' '
	get /readyz && get /healthz && migpod x nvidia.com/mig-1g.10gb 1 >r.json &&
	curl -sS -k --max-time "$T" --data-binary @r.json -w "\n%{http_code}\n" https://127.0.0.1:$PORT/mutate &&
	cert_log' <<'X'
cert/tls.crt: certificate expired at 2021-01-01T00:00:00Z
503
ok
200
{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","response":{"uid":"x","allowed":true}}
200
webhook-patch: cert/tls.crt: certificate expired at 2021-01-01T00:00:00Z
X

check_output 'a good certificate renewed into place: /readyz 200 again' '
	cp good/tls.key cert/tls.key.new && cp good/tls.crt cert/tls.crt.new &&
	mv cert/tls.key.new cert/tls.key && mv cert/tls.crt.new cert/tls.crt &&
	CA=good/ca.crt eventually "$T" https -o /dev/null https://127.0.0.1:$PORT/healthz &&
	eventually "$T" grep -q "certificate reloaded" server.err && get /readyz && cert_log' <<'X'
ok
200
webhook-patch: cert/tls.crt: certificate expired at 2021-01-01T00:00:00Z
X
stop_server

CERTS=good start_server -i inv.ndjson -N k8shazgpu-webhook.canhazgpu-system.svc -N k8shazgpu-webhook.other.svc -N 127.0.0.1 ||
	echo "# server did not start: $(cat server.err)"
check_output '-N: a name the certificate does not hold makes /readyz 503, logged once' '
	get /readyz && get /readyz && get /healthz && cert_log' <<'X'
cert/tls.crt: does not name k8shazgpu-webhook.other.svc
503
cert/tls.crt: does not name k8shazgpu-webhook.other.svc
503
ok
200
webhook-patch: cert/tls.crt: does not name k8shazgpu-webhook.other.svc
X
stop_server

# made now: it expires SOON seconds after
SOON=4
[ "${VALGRIND:-}" = 1 ] && SOON=30
cert-make -o soon -H 127.0.0.1 -V "$(date -u -d '-1 hour' +%Y-%m-%dT%H:%M:%SZ),$(date -u -d "+$SOON seconds" +%Y-%m-%dT%H:%M:%SZ)" >soon.json
NOTAFTER=$(jq -r .notAfter soon.json)
CERTS=soon start_server -i inv.ndjson -N k8shazgpu-webhook.canhazgpu-system.svc -N 127.0.0.1 ||
	echo "# server did not start: $(cat server.err)"
check_output '-N: every name held: ready; it expires while served: /readyz 503 at once, logged once' '
	get /readyz && ! cert_log &&
	eventually $((SOON + 5)) cert_log && sleep 1.5 && cert_log && get /readyz' <<X
ok
200
webhook-patch: cert/tls.crt: certificate expired at $NOTAFTER
cert/tls.crt: certificate expired at $NOTAFTER
503
X
stop_server

check_output 'each of these servers exited 0 on TERM (under valgrind: nothing reported)' 'cat servers.rc' <<'X'
0
0
0
X

check '-N needs -l' 'must_fail 2 webhook-patch -N x -i inv.ndjson </dev/null 2>/dev/null'

# ---- the certificate script and the wrapper ------------------------------

check_output 'k8shazgpu-webhook-certs: SANs, a kept CA, and -m fills the caBundle' '
	openssl x509 -in c1/tls.crt -noout -ext subjectAltName | tail -n 1 | tr -d " " &&
	openssl verify -CAfile c1/ca.crt c1/tls.crt &&
	k8shazgpu-webhook-certs -d c1 >again.bundle && cmp c1.bundle again.bundle &&
	k8shazgpu-webhook-certs -d c1 -f >new.bundle && ! cmp -s c1.bundle new.bundle &&
	printf "webhooks:\n- name: a\n  clientConfig:\n    caBundle: Cg==\n" >hook.yaml &&
	k8shazgpu-webhook-certs -d c1 -m hook.yaml | grep -c "caBundle: $(cat new.bundle)\$"' <<'X'
DNS:k8shazgpu-webhook,DNS:k8shazgpu-webhook.canhazgpu-system,DNS:k8shazgpu-webhook.canhazgpu-system.svc,DNS:k8shazgpu-webhook.canhazgpu-system.svc.cluster.local,IPAddress:127.0.0.1
c1/tls.crt: OK
1
X

check 'k8shazgpu-webhook runs webhook-patch with its defaults' '
	k8shazgpu-webhook -h | grep -q "^usage: k8shazgpu-webhook" &&
	k8shazgpu-webhook -n -d c1 -i inv.ndjson >cmd.out &&
	grep -q "^webhook-patch -l :8443 -c c1/tls.crt -k c1/tls.key -i inv.ndjson$" cmd.out'

# The review parser is fuzzed by t/0890-fuzz.t (t/fuzz/webhook-review.c).

done_testing
