say "Pods of any workload, placed by our strategies: the webhook gives pods carrying agentaflow.gpu/ annotations to scheduler k8shazgpu, which the controller runs (sched-bind)"
PNS=any-workload
kc create namespace "$PNS" >/dev/null
k8shazgpu-webhook -d "$work/certs" -l 127.0.0.1:0 -t 2 2>"$work/webhook2.err" &
webhook=$!
eventually -i 0.1 30 "webhook-patch to serve" webhook_up "$work/webhook2.err"
jq -n --arg url "https://127.0.0.1:$wport/mutate" --arg ca "$(cat "$work/bundle")" --arg ns "$PNS" '
	{apiVersion: "admissionregistration.k8s.io/v1", kind: "MutatingWebhookConfiguration",
	 metadata: {name: "demo-webhook-pods"},
	 webhooks: [{name: "gpu.canhazgpu.dev", clientConfig: {url: $url, caBundle: $ca},
		rules: [{apiGroups: [""], apiVersions: ["v1"], operations: ["CREATE"], resources: ["pods"]}],
		namespaceSelector: {matchLabels: {"kubernetes.io/metadata.name": $ns}},
		failurePolicy: "Fail", sideEffects: "None", admissionReviewVersions: ["v1"], timeoutSeconds: 10}]}' |
	kc apply -f - >/dev/null
# gpod NAME STRATEGY PRIORITY: the pod template of a workload asking one GPU of node h100
gpod() {
	jq -n -c --arg s "$1" --arg p "$2" '{metadata: {labels: {app: "gpu"}, annotations:
		({"agentaflow.gpu/scheduling-strategy": $s} + (if $p == "" then {} else {"agentaflow.gpu/priority": $p} end))},
		spec: {nodeSelector: {"kubernetes.io/hostname": "h100"},
			tolerations: [{key: "kwok.x-k8s.io/node", operator: "Exists", effect: "NoSchedule"}],
			containers: [{name: "train", image: "registry.invalid/pytorch:2", resources: {limits: {"nvidia.com/gpu": "1"}}}]}}'
}
# the scheduler a dry run of such a pod is given
probe_scheduler() {
	jq -n -c --argjson t "$(gpod best_fit 1)" '{apiVersion: "v1", kind: "Pod", metadata: ($t.metadata + {name: "probe", namespace: "any-workload"}), spec: $t.spec}' |
		kc create --dry-run=server -o jsonpath='{.spec.schedulerName}' -f -
}
eventually 30 "the API server to call the webhook" is k8shazgpu probe_scheduler
echo " A Deployment of 2 replicas (strategy best_fit, priority 10) and a Job (priority 1), each pod asking one GPU of node h100 (it has 2):"
jq -n -c --argjson t "$(gpod best_fit 10)" '{apiVersion: "apps/v1", kind: "Deployment", metadata: {name: "trainer", namespace: "any-workload"},
	spec: {replicas: 2, selector: {matchLabels: {app: "gpu"}}, template: $t}}' | kc create -f - | sed 's/^/   /'
bound_pods() { kc get pods -n "$PNS" -o json | jq '[.items[] | select(.spec.nodeName)] | length'; }
eventually 30 "both replicas to be bound" is 2 bound_pods
jq -n -c --argjson t "$(gpod least_utilized 1)" '{apiVersion: "batch/v1", kind: "Job", metadata: {name: "batch", namespace: "any-workload"},
	spec: {template: ($t | .metadata.labels = {app: "batch"} | .spec.restartPolicy = "Never")}}' | kc create -f - | sed 's/^/   /'
echo " A pod whose priority annotation is no number is refused nothing, but left to kube-scheduler; kubectl shows the webhook's warning:"
jq -n -c --argjson t "$(gpod best_fit high)" '{apiVersion: "v1", kind: "Pod", metadata: ($t.metadata + {name: "odd", namespace: "any-workload"}), spec: ($t.spec | .nodeSelector = {"kubernetes.io/hostname": "l4"})}' |
	kc create -f - 2>&1 | sed 's/^/   /'
sleep 3
pods_line() {
	kc get pods -n "$PNS" -o json | jq -r '.items | sort_by(.metadata.name)[] |
		"   \(.metadata.name): scheduler \(.spec.schedulerName), \(.status.phase) on \(.spec.nodeName // "-")\(.metadata.annotations["canhazgpu.dev/devices"] // "" | if . == "" then "" else ", devices \(.)" end)"'
}
pods_line
echo " Why the Job's pod waits, and who bound the others (events):"
kc get events -n "$PNS" -o json | jq -r '.items | sort_by(.lastTimestamp // .eventTime)[] | select(.reason == "Scheduled" or .reason == "FailedScheduling")
	| "   \(.involvedObject.name): \(.reason) by \(.source.component // .reportingComponent): \(.message)"' | sort -u
echo " Scaling the Deployment to 1 frees a GPU; the waiting pod is bound to it:"
kc scale deployment trainer -n "$PNS" --replicas=1 >/dev/null
eventually 30 "the Job's pod to be bound to h100" is h100 kc get pods -n "$PNS" -l app=batch -o jsonpath='{.items[0].spec.nodeName}'
sleep 1
pods_line
kc delete namespace "$PNS" --wait=false >/dev/null
kc delete mutatingwebhookconfiguration demo-webhook-pods >/dev/null
stop "$webhook"
webhook=
webhook=
