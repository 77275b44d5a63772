#!/bin/sh
# webhook-patch behind the real kube-apiserver, over TLS with a CA made
# here: 14 pods asking 2g.20gb one after another and in a burst (12 keep
# it, 2 fall back to 1g.10gb, all run), a Deployment's template patched,
# the RuntimeClass examples of the seeweb document (filled, refused, or
# held Pending with -P). Everything made is removed at the end, also on
# failure: the cluster is shared.
. "$(dirname "$0")/lib.sh"
need_cluster
NS=t9500-webhook
NSG=t9500-webhook-gate
T=90
[ "${VALGRIND:-}" = 1 ] && T=240

PIDS=""
cleanup() {
	k delete mutatingwebhookconfiguration t9500-webhook t9500-webhook-gate \
		--ignore-not-found >/dev/null 2>&1
	k delete namespace "$NS" "$NSG" --ignore-not-found --timeout=120s >/dev/null 2>&1
	k delete runtimeclass seeweb-nvidia-1xa6000 seeweb-nvidia-2xa6000 \
		--ignore-not-found >/dev/null 2>&1
	for p in $PIDS; do kill "$p" 2>/dev/null; done
}
trap cleanup EXIT
trap 'exit 1' INT TERM

EVENTUALLY_HZ=2

# ---- the webhook, registered by URL with our own CA ----------------------

k8shazgpu-webhook-certs -d certs -H 127.0.0.1 >bundle 2>certs.err ||
	echo "Bail out! cannot make certificates: $(cat certs.err)"

# serve NAME ARGS...: webhook-patch watching the cluster, on a free port;
# sets PORT; the exit status goes to NAME.rc when it ends.
serve() {
	name=$1
	shift
	( webhook-patch "$@" -l 127.0.0.1:0 -c certs/tls.crt -k certs/tls.key 2>"$name.err" &
	  echo $! >"$name.pid"; wait $!; echo $? >"$name.rc" ) &
	eventually "$T" grep -q "(port [0-9]*)" "$name.err" || return 1
	PORT=$(sed -n 's/.*(port \([0-9]*\)).*/\1/p' "$name.err")
	PIDS="$PIDS $(cat "$name.pid")"
	eventually "$T" curl -fsS --cacert certs/ca.crt "https://127.0.0.1:$PORT/readyz"
}

# register NAME NAMESPACE PORT: a MutatingWebhookConfiguration sending that
# namespace's pods and workloads to the webhook on PORT; failurePolicy
# Fail here, so a webhook that is not called shows.
register() {
	k create namespace "$2" >/dev/null 2>&1
	jq -n --arg name "$1" --arg ns "$2" --arg url "https://127.0.0.1:$3/mutate" \
		--arg ca "$(cat bundle)" '{apiVersion: "admissionregistration.k8s.io/v1",
		kind: "MutatingWebhookConfiguration", metadata: {name: $name},
		webhooks: [{name: "gpu.canhazgpu.dev", clientConfig: {url: $url, caBundle: $ca},
			rules: [{apiGroups: [""], apiVersions: ["v1"], operations: ["CREATE"], resources: ["pods"]},
				{apiGroups: ["apps"], apiVersions: ["v1"], operations: ["CREATE", "UPDATE"],
				 resources: ["deployments", "statefulsets", "replicasets", "daemonsets"]},
				{apiGroups: ["batch"], apiVersions: ["v1"], operations: ["CREATE", "UPDATE"],
				 resources: ["jobs", "cronjobs"]}],
			namespaceSelector: {matchLabels: {"kubernetes.io/metadata.name": $ns}},
			failurePolicy: "Fail", sideEffects: "None", admissionReviewVersions: ["v1"],
			timeoutSeconds: 15}]}' | k apply -f - >/dev/null &&
	eventually "$T" k get serviceaccount default -n "$2" &&
	# the API server picks the configuration up within a moment
	eventually "$T" called "$2"
}

# pod NAME NAMESPACE RESOURCE COUNT: a pod asking COUNT of RESOURCE,
# tolerating the KWOK nodes' taint (a script, for sh -c too).
mkdir -p bin
cat >bin/pod <<'X'
#!/bin/sh
jq -cn --arg n "$1" --arg ns "$2" --arg r "$3" --arg c "$4" '{apiVersion: "v1", kind: "Pod",
	metadata: {name: $n, namespace: $ns, labels: {t9500: "mig"}},
	spec: {tolerations: [{key: "kwok.x-k8s.io/node", operator: "Exists", effect: "NoSchedule"}],
		containers: [{name: "c", image: "registry.invalid/none:0",
			resources: {limits: {($r): $c}}}]}}'
X
chmod +x bin/pod
PATH=$SCRATCH/bin:$PATH

# called NAMESPACE: a server dry run there of a pod asking more MIG
# devices than exist comes back with the webhook's warning.
called() {
	pod probe "$1" nvidia.com/mig-2g.20gb 1000 | k create --dry-run=server -o name -f - 2>&1 >/dev/null |
		grep -q "^Warning: nvidia.com/mig-2g.20gb: 1000 asked"
}

# free2g: 2g.20gb devices free by the cluster's own account: allocatable of
# ready nodes less what live pods bound to them ask.
free2g() {
	{ k get nodes -o json; k get pods -A -o json; } | jq -s '
		(.[0].items | map(.status.allocatable["nvidia.com/mig-2g.20gb"] // "0" | tonumber) | add)
		- (.[1].items | map(select(.spec.nodeName and (.status.phase | IN("Succeeded", "Failed") | not))
			| .spec.containers[].resources.limits["nvidia.com/mig-2g.20gb"] // "0" | tonumber) | add // 0)'
}

# metric PORT NAME: the value of that sample of the webhook on PORT.
metric() {
	curl -fsS --cacert certs/ca.crt "https://127.0.0.1:$1/metrics" | awk -v m="$2" '$1 == m {print $2}'
}
FREE2G='k8shazgpu_webhook_free{resource="nvidia.com/mig-2g.20gb"}'
free_is() { test "$(metric "$MAIN" "$FREE2G")" = "$1"; }

# placed: each test pod as "name resource node annotation", by creation.
placed() {
	k get pods -n "$NS" -l t9500=mig -o json | jq -r '.items | sort_by(.metadata.creationTimestamp, .metadata.name)[]
		| [.metadata.name, (.spec.containers[0].resources.limits | keys[0]),
		   (.metadata.annotations["gpu-webhook.k8s.io/fallback"] // "-")] | join(" ")'
}
all_running() {
	test "$(k get pods -n "$1" -l "$2" -o json | jq '[.items[] | select(.status.phase != "Running")] | length')" = 0 &&
	test "$(k get pods -n "$1" -l "$2" -o json | jq '.items | length')" = "$3"
}

serve main || echo "# webhook did not start: $(cat main.err)"
MAIN=$PORT
register t9500-webhook "$NS" "$MAIN" || echo "# registration did not take: $(cat main.err)"

F=$(free2g)
check 'the shared cluster has 12 free 2g.20gb, and the webhook agrees' \
	'test "$F" = 12 && free_is 12'

# ---- 14 pods one after another -------------------------------------------

check_output '14 pods asking 2g.20gb one after another: 12 keep it, 2 fall back' '
	i=1; while [ $i -le 14 ]; do
		pod seq-$(printf %02d $i) "$NS" nvidia.com/mig-2g.20gb 1 | k create -f - >/dev/null 2>>create.err || exit 1
		i=$((i + 1))
	done; placed' <<'X'
seq-01 nvidia.com/mig-2g.20gb -
seq-02 nvidia.com/mig-2g.20gb -
seq-03 nvidia.com/mig-2g.20gb -
seq-04 nvidia.com/mig-2g.20gb -
seq-05 nvidia.com/mig-2g.20gb -
seq-06 nvidia.com/mig-2g.20gb -
seq-07 nvidia.com/mig-2g.20gb -
seq-08 nvidia.com/mig-2g.20gb -
seq-09 nvidia.com/mig-2g.20gb -
seq-10 nvidia.com/mig-2g.20gb -
seq-11 nvidia.com/mig-2g.20gb -
seq-12 nvidia.com/mig-2g.20gb -
seq-13 nvidia.com/mig-1g.10gb 2g.20gb->1g.10gb
seq-14 nvidia.com/mig-1g.10gb 2g.20gb->1g.10gb
X

check_output 'kubectl shows the fallback warning for the last two' 'cat create.err' <<'X'
Warning: nvidia.com/mig-2g.20gb: 1 asked, 0 free; falling back to nvidia.com/mig-1g.10gb
Warning: nvidia.com/mig-2g.20gb: 1 asked, 0 free; falling back to nvidia.com/mig-1g.10gb
X

check 'all 14 run: 12 on medium, the 2 fallbacks where 1g.10gb is' '
	eventually "$T" all_running "$NS" t9500=mig 14 &&
	test "$(k get pods -n "$NS" -l t9500=mig -o json | jq -r "[.items[] | select(.spec.containers[0].resources.limits[\"nvidia.com/mig-2g.20gb\"]) | .spec.nodeName] | unique | join(\",\")")" = medium'

check 'once they are gone, the webhook counts 12 free again' '
	k delete pods -n "$NS" -l t9500=mig --wait=true --timeout=120s >/dev/null &&
	eventually "$T" free_is 12'

# ---- the same as a burst ---------------------------------------------------

check_output '14 pods created at once: exactly 12 keep 2g.20gb, 2 fall back, all run' '
	i=1; while [ $i -le 14 ]; do
		pod burst-$(printf %02d $i) "$NS" nvidia.com/mig-2g.20gb 1 >burst-$i.json
		k create -f burst-$i.json >/dev/null 2>burst-$i.err &
		i=$((i + 1))
	done; wait
	cat burst-*.err | grep -v "^Warning: nvidia.com/mig-2g.20gb: 1 asked, 0 free; falling back" >&2
	eventually "$T" all_running "$NS" t9500=mig 14
	placed | cut -d" " -f2,3 | sort | uniq -c | sed "s/^ *//"' <<'X'
2 nvidia.com/mig-1g.10gb 2g.20gb->1g.10gb
12 nvidia.com/mig-2g.20gb -
X

# ---- a Deployment ----------------------------------------------------------

check_output 'a Deployment asking 2g.20gb while none is free: its template falls back' '
	jq -n --arg ns "$NS" "{apiVersion: \"apps/v1\", kind: \"Deployment\",
		metadata: {name: \"mig-dep\", namespace: \$ns},
		spec: {replicas: 2, selector: {matchLabels: {app: \"mig-dep\"}},
			template: {metadata: {labels: {app: \"mig-dep\"}},
				spec: {tolerations: [{key: \"kwok.x-k8s.io/node\", operator: \"Exists\", effect: \"NoSchedule\"}],
					containers: [{name: \"c\", image: \"registry.invalid/none:0\",
						resources: {limits: {\"nvidia.com/mig-2g.20gb\": \"1\"}}}]}}}}" |
	k create -f - 2>&1 >/dev/null &&
	k get deployment mig-dep -n "$NS" -o json | jq -c ".spec.template | [.metadata.annotations, .spec.containers[0].resources]" &&
	eventually "$T" all_running "$NS" app=mig-dep 2 &&
	k get pods -n "$NS" -l app=mig-dep -o json | jq -r ".items[] | [.status.phase,
		(.spec.containers[0].resources.limits | keys[0]), .metadata.annotations[\"gpu-webhook.k8s.io/fallback\"]] | join(\" \")"' <<'X'
Warning: nvidia.com/mig-2g.20gb: 2 asked for 2 pods, 0 free; falling back to nvidia.com/mig-1g.10gb
[{"gpu-webhook.k8s.io/fallback":"2g.20gb->1g.10gb"},{"limits":{"nvidia.com/mig-1g.10gb":"1"}}]
Running nvidia.com/mig-1g.10gb 2g.20gb->1g.10gb
Running nvidia.com/mig-1g.10gb 2g.20gb->1g.10gb
X

# ---- RuntimeClass limits ---------------------------------------------------

# class NAME CPU MEMORY GPUS: a RuntimeClass with the seeweb annotations.
class() {
	jq -n --arg n "$1" --arg cpu "$2" --arg mem "$3" --arg gpu "$4" '{apiVersion: "node.k8s.io/v1",
		kind: "RuntimeClass", metadata: {name: $n, annotations: {"limits.k8s.gpu/cpu": $cpu,
		"limits.k8s.gpu/memory": $mem, "limits.k8s.gpu/default": $gpu}}, handler: "nvidia"}' | k apply -f - >/dev/null
}
# rcpod NAME NAMESPACE CLASS LIMITS...: the seeweb pod shape, one container
# per LIMITS (a jq object, {} for no resources).
rcpod() {
	name=$1 ns=$2 cls=$3
	shift 3
	for l; do printf '%s\n' "$l"; done | jq -cs --arg n "$name" --arg ns "$ns" --arg cls "$cls" '
		{apiVersion: "v1", kind: "Pod", metadata: {name: $n, namespace: $ns, labels: {t9500: "rc"}},
		 spec: {restartPolicy: "OnFailure", runtimeClassName: $cls,
			tolerations: [{key: "kwok.x-k8s.io/node", operator: "Exists", effect: "NoSchedule"}],
			containers: (to_entries | map({name: "nvidia-\(.key)", image: "nvidia/cuda:12.6.0-base-ubuntu20.04",
				command: ["/bin/bash", "-c", "--"], args: ["sleep 3600"],
				resources: (if .value == {} then {} else {limits: .value} end)}))}}'
}

class seeweb-nvidia-1xa6000 8000m 32861620Ki 1
class seeweb-nvidia-2xa6000 16000m 65723240Ki 2
# filled: a server dry run of a pod of 2xa6000 with no resources comes
# back with the class's cpu filled in.
filled() {
	rcpod probe "$NS" seeweb-nvidia-2xa6000 "{}" | k create --dry-run=server -o json -f - 2>/dev/null |
		jq -e '.spec.containers[0].resources.limits.cpu == "16"' >/dev/null
}
check 'the webhook sees the RuntimeClasses' 'eventually "$T" filled'

check_output 'seeweb: the 1 GPU, 16Gi, 2 cpu pod runs as it is' '
	rcpod nvidia-smi "$NS" seeweb-nvidia-1xa6000 "{\"nvidia.com/gpu\":1,\"memory\":\"16Gi\",\"cpu\":2}" |
	k create -f - && eventually "$T" all_running "$NS" t9500=rc 1 &&
	k get pod nvidia-smi -n "$NS" -o json | jq -c ".spec.containers[0].resources"' <<'X'
pod/nvidia-smi created
{"limits":{"cpu":"2","memory":"16Gi","nvidia.com/gpu":"1"},"requests":{"cpu":"2","memory":"16Gi","nvidia.com/gpu":"1"}}
X

check_output 'seeweb: the 2 GPU, 64Gi pod is refused, naming the limits' '
	rcpod nvidia-smi-unschedulable "$NS" seeweb-nvidia-1xa6000 "{\"nvidia.com/gpu\":2,\"memory\":\"64Gi\",\"cpu\":1}" |
	k create -f - 2>&1; echo "exit $?"; k get pod nvidia-smi-unschedulable -n "$NS" 2>&1' <<'X'
Error from server (Forbidden): error when creating "STDIN": admission webhook "gpu.canhazgpu.dev" denied the request: pod requests nvidia.com/gpu 2 > 1 allowed by RuntimeClass seeweb-nvidia-1xa6000 (limits.k8s.gpu/default); pod requests memory 64Gi > 32861620Ki allowed by RuntimeClass seeweb-nvidia-1xa6000 (limits.k8s.gpu/memory)
exit 1
Error from server (NotFound): pods "nvidia-smi-unschedulable" not found
X

check_output 'seeweb: the two-container pod fits 2xa6000 and runs' '
	rcpod nvidia-smi-double "$NS" seeweb-nvidia-2xa6000 "{\"nvidia.com/gpu\":1,\"memory\":\"16Gi\",\"cpu\":1}" \
		"{\"nvidia.com/gpu\":1,\"memory\":\"16Gi\",\"cpu\":1}" | k create -f - &&
	eventually "$T" all_running "$NS" t9500=rc 2 && echo running' <<'X'
pod/nvidia-smi-double created
running
X

check_output 'seeweb: a pod with no resources gets the class limits and runs' '
	rcpod nvidia-smi-empty "$NS" seeweb-nvidia-1xa6000 "{}" | k create -f - 2>&1 &&
	eventually "$T" all_running "$NS" t9500=rc 3 &&
	k get pod nvidia-smi-empty -n "$NS" -o json | jq -c "[.status.phase, .spec.containers[0].resources]"' <<'X'
Warning: resources set from RuntimeClass seeweb-nvidia-1xa6000: nvidia.com/gpu 1, cpu 8, memory 32861620Ki
pod/nvidia-smi-empty created
["Running",{"limits":{"cpu":"8","memory":"32861620Ki","nvidia.com/gpu":"1"},"requests":{"cpu":"8","memory":"32861620Ki","nvidia.com/gpu":"1"}}]
X

# ---- -P: refused pods stay Pending instead -----------------------------------

serve gate -P || echo "# second webhook did not start: $(cat gate.err)"
GATE=$PORT
register t9500-webhook-gate "$NSG" "$GATE" || echo "# gate registration did not take"

check_output 'with -P the 2 GPU, 64Gi pod is admitted but held Pending by a scheduling gate' '
	rcpod nvidia-smi-unschedulable "$NSG" seeweb-nvidia-1xa6000 "{\"nvidia.com/gpu\":2,\"memory\":\"64Gi\",\"cpu\":1}" |
	k create -f - 2>&1 | sed "s/;.*//" && sleep 2 &&
	k get pod nvidia-smi-unschedulable -n "$NSG" --no-headers -o custom-columns=STATUS:.status.phase,NODE:.spec.nodeName &&
	k get pod nvidia-smi-unschedulable -n "$NSG" -o json | jq -r ".spec.schedulingGates[].name,
		(.status.conditions[] | select(.type == \"PodScheduled\") | .reason),
		.metadata.annotations[\"gpu-webhook.k8s.io/refused\"]"' <<'X'
Warning: pod requests nvidia.com/gpu 2 > 1 allowed by RuntimeClass seeweb-nvidia-1xa6000 (limits.k8s.gpu/default)
pod/nvidia-smi-unschedulable created
Pending   <none>
gpu-webhook.k8s.io/runtimeclass-limits
SchedulingGated
pod requests nvidia.com/gpu 2 > 1 allowed by RuntimeClass seeweb-nvidia-1xa6000 (limits.k8s.gpu/default); pod requests memory 64Gi > 32861620Ki allowed by RuntimeClass seeweb-nvidia-1xa6000 (limits.k8s.gpu/memory)
X

check_output 'the webhook counted what it did' '
	for m in "k8shazgpu_webhook_fallbacks_total{from=\"2g.20gb\",to=\"1g.10gb\"}" \
		"k8shazgpu_webhook_denials_total{limit=\"limits.k8s.gpu/default\",action=\"deny\"}"; do
		echo "$m $(metric "$MAIN" "$m")"; done' <<'X'
k8shazgpu_webhook_fallbacks_total{from="2g.20gb",to="1g.10gb"} 5
k8shazgpu_webhook_denials_total{limit="limits.k8s.gpu/default",action="deny"} 1
X

check 'both webhooks stop on TERM and exit 0' '
	kill -TERM $(cat main.pid) $(cat gate.pid) &&
	eventually "$T" test -s main.rc && eventually "$T" test -s gate.rc &&
	test "$(cat main.rc) $(cat gate.rc)" = "0 0"'

done_testing
