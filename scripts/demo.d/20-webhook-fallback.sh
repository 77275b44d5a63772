say "The admission webhook (webhook-patch over TLS, called by the API server): when 2g.20gb runs out, a pod falls back to 1g.10gb instead of waiting"
WNS=demo-webhook
k8shazgpu-webhook-certs -d "$work/certs" -H 127.0.0.1 >"$work/bundle"
k8shazgpu-webhook -d "$work/certs" -l 127.0.0.1:0 -t 2 2>"$work/webhook.err" &
webhook=$!
eventually -i 0.1 30 "webhook-patch to serve" webhook_up "$work/webhook.err"
# wfree RESOURCE: what the webhook counts free of it, from its watch.
wfree() {
	curl -fsS --cacert "$work/certs/ca.crt" "https://127.0.0.1:$wport/metrics" |
		awk -v m="k8shazgpu_webhook_free{resource=\"nvidia.com/mig-$1\"}" '$1 == m {print $2}'
}
# the first pods going
eventually -i 1 120 "webhook-patch to count 12 2g.20gb devices free" is 12 wfree 2g.20gb
kc create namespace "$WNS" >/dev/null
jq -n --arg url "https://127.0.0.1:$wport/mutate" --arg ca "$(cat "$work/bundle")" --arg ns "$WNS" '
	{apiVersion: "admissionregistration.k8s.io/v1", kind: "MutatingWebhookConfiguration",
	 metadata: {name: "demo-webhook"},
	 webhooks: [{name: "gpu.canhazgpu.dev", clientConfig: {url: $url, caBundle: $ca},
		rules: [{apiGroups: [""], apiVersions: ["v1"], operations: ["CREATE"], resources: ["pods"]}],
		namespaceSelector: {matchLabels: {"kubernetes.io/metadata.name": $ns}},
		failurePolicy: "Fail", sideEffects: "None", admissionReviewVersions: ["v1"], timeoutSeconds: 10}]}' |
	kc apply -f - >/dev/null
# wpod NAME RESOURCE COUNT: a pod asking COUNT of RESOURCE.
wpod() {
	jq -cn --arg n "$1" --arg ns "$WNS" --arg r "$2" --arg c "$3" '{apiVersion: "v1", kind: "Pod",
		metadata: {name: $n, namespace: $ns, labels: {demo: "webhook"}},
		spec: {tolerations: [{key: "kwok.x-k8s.io/node", operator: "Exists", effect: "NoSchedule"}],
			containers: [{name: "work", image: "registry.invalid/cuda-sample", resources: {limits: {($r): $c}}}]}}'
}
# the API server calls it: a dry run asking 1000 devices gets its warning
webhook_called() {
	wc_said=$(wpod probe nvidia.com/mig-2g.20gb 1000 | kc create --dry-run=server -o name -f - 2>&1 >/dev/null)
	printf '%s\n' "$wc_said"
	case $wc_said in *"1000 asked"*) ;; *) return 1 ;; esac
}
eventually 30 "the API server to call the webhook" webhook_called
echo " webhook-patch serves on https://127.0.0.1:$wport (certificates by k8shazgpu-webhook-certs), registered for namespace '$WNS'."
echo " Creating 14 pods that each ask for one 2g.20gb device, one after another (12 are free); what kubectl printed:"
i=1
while [ $i -le 14 ]; do
	wpod "mig-$(printf %02d $i)" nvidia.com/mig-2g.20gb 1 | kc create -f - 2>&1 | sed 's/^/   /'
	i=$((i + 1))
done
eventually -i 1 60 "14 pods Running" \
	atleast 14 lines kc get pods -n "$WNS" -l demo=webhook --field-selector=status.phase=Running -o name
echo " The pods as the API server stored them:"
kc get pods -n "$WNS" -l demo=webhook -o json | jq -r '.items | sort_by(.metadata.name)[] |
	"   \(.metadata.name): \(.status.phase) on \(.spec.nodeName // "-"), asking \(.spec.containers[0].resources.limits | to_entries | map("\(.value) x \(.key)") | join(", "))\(.metadata.annotations["gpu-webhook.k8s.io/fallback"] // "" | if . == "" then "" else " (fallback: \(.))" end)"'
