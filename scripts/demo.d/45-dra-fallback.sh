say "DRA fallback in kube-scheduler itself: with -A dra the controller gives each Job a ResourceClaimTemplate whose MIG chain is a firstAvailable list"
yaml2json "$TOP/manifests/deviceclasses.yaml" | claim-make -a >/dev/null
K8SHAZGPU_SCHEDULER_NAME=off K8SHAZGPU_ALERT_SECRET=off \
	K8SHAZGPU_JOB_TOLERATIONS='[{"key":"kwok.x-k8s.io/node","operator":"Exists","effect":"NoSchedule"}]' \
	k8shazgpu-controller -A dra -d "$work/controller-dra" -l off >/dev/null 2>"$work/controller-dra.log" &
controller=$!
kc create namespace dra-fallback >/dev/null
printf '%s\n' '{"apiVersion":"canhazgpu.dev/v1alpha1","kind":"GPUWorkload","metadata":{"name":"wants-2g","namespace":"dra-fallback"},"spec":{"nodeSelector":{"kubernetes.io/hostname":"small"},"gpuRequirements":{"migProfile":"2g.20gb","migFallback":["1g.10gb"]},"podTemplate":{"metadata":{"annotations":{"pod-complete.stage.kwok.x-k8s.io/delay":"300s"}},"spec":{"containers":[{"name":"main","image":"registry.invalid/train:1"}]}}}}' |
	claim-make -a | jq -r '"   applied \(.ref): 2g.20gb, else 1g.10gb, on node small (which has only 1g.10gb)"'
claim_allocated() {
	claim=$(kc get pods -n dra-fallback -o jsonpath='{.items[0].status.resourceClaimStatuses[0].resourceClaimName}') && [ -n "$claim" ] &&
		prints kc get resourceclaim -n dra-fallback "$claim" -o jsonpath='{.status.allocation}'
}
eventually 30 "the Job pod's claim to be allocated" claim_allocated
kc get resourceclaimtemplate wants-2g -n dra-fallback -o json | jq -r '"   the template asks: " + ([.spec.spec.devices.requests[0].firstAvailable[] | "\(.name): \(.selectors[0].cel.expression | capture("== \"(?<p>[^\"]+)\"").p)"] | join(", then "))'
kc get resourceclaim -n dra-fallback "$claim" -o json | jq -r '.status.allocation.devices.results[0] | "   kube-scheduler allocated \(.device) of pool \(.pool) for request \(.request)"'
stop "$controller"
controller=
kc delete namespace dra-fallback --wait=false >/dev/null
