say "RuntimeClass GPU limits: a class names its offering's cpu, memory and GPUs; the webhook fills pods in, or refuses them"
jq -n '{apiVersion: "node.k8s.io/v1", kind: "RuntimeClass", handler: "nvidia",
	metadata: {name: "seeweb-nvidia-1xa6000", annotations: {"limits.k8s.gpu/cpu": "8000m",
		"limits.k8s.gpu/memory": "32861620Ki", "limits.k8s.gpu/default": "1"}}}' | kc apply -f - >/dev/null
# rcpod NAME LIMITS: a pod of that class, LIMITS a JSON object ({}: none).
rcpod() {
	jq -cn --arg n "$1" --arg ns "$WNS" --argjson l "$2" '{apiVersion: "v1", kind: "Pod",
		metadata: {name: $n, namespace: $ns, labels: {demo: "rc"}},
		spec: {runtimeClassName: "seeweb-nvidia-1xa6000",
			tolerations: [{key: "kwok.x-k8s.io/node", operator: "Exists", effect: "NoSchedule"}],
			containers: [{name: "cuda", image: "nvidia/cuda:12.6.0-base-ubuntu20.04",
				resources: (if $l == {} then {} else {limits: $l} end)}]}}'
}
rc_filled() {
	rcpod probe '{}' | kc create --dry-run=server -o json -f - |
		jq -c -e '.spec.containers[0].resources.limits | (., .cpu == "8")'
}
eventually 30 "the webhook to fill in the class's limits" rc_filled
echo " RuntimeClass seeweb-nvidia-1xa6000: limits.k8s.gpu/cpu 8000m, memory 32861620Ki, default (GPUs) 1."
echo " A pod of that class naming no resources:"
rcpod empty '{}' | kc create -f - 2>&1 | sed 's/^/   /'
kc get pod empty -n "$WNS" -o json | jq -r '"   stored with limits \(.spec.containers[0].resources.limits | to_entries | map("\(.key) \(.value)") | join(", "))"'
echo " A pod of that class asking 2 GPUs and 64Gi:"
rcpod too-big '{"nvidia.com/gpu": 2, "memory": "64Gi", "cpu": 1}' | kc create -f - 2>&1 | sed 's/^/   /' || true
echo " A pod of that class asking 8Ei of memory (the API server takes it; 8Ei is 2^63 bytes, one past what a signed 64-bit count holds):"
rcpod huge '{"memory": "8Ei"}' | kc create -f - 2>&1 | sed 's/^/   /' || true
echo " webhook-patch's metrics (https://127.0.0.1:$wport/metrics):"
curl -fsS --cacert "$work/certs/ca.crt" "https://127.0.0.1:$wport/metrics" |
	grep -E '^k8shazgpu_webhook_(reviews_total|fallbacks_total|denials_total)' | grep -v ' 0$' | sed 's/^/   /'
kc delete mutatingwebhookconfiguration demo-webhook >/dev/null
kc delete namespace "$WNS" --wait=false >/dev/null
stop "$webhook"
webhook=
webhook=
