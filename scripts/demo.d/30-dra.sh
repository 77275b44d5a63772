say "A pod asks for one 1g.10gb MIG device through DRA: a ResourceClaimTemplate with a CEL selector on the profile"
yaml2json "$TOP/manifests/deviceclasses.yaml" | claim-make -a >/dev/null
kc create namespace dra-demo >/dev/null
jq -n -c '{apiVersion: "resource.k8s.io/v1", kind: "ResourceClaimTemplate", metadata: {name: "one-mig", namespace: "dra-demo"},
	spec: {spec: {devices: {requests: [{name: "mig", exactly: {deviceClassName: "mig.canhazgpu.dev",
		selectors: [{cel: {expression: "device.attributes[\"gpu.canhazgpu.dev\"].profile == \"1g.10gb\""}}]}}]}}}},
	{apiVersion: "v1", kind: "Pod", metadata: {name: "dra-pod", namespace: "dra-demo"},
	 spec: {tolerations: [{key: "kwok.x-k8s.io/node", operator: "Exists"}],
		resourceClaims: [{name: "mig", resourceClaimTemplateName: "one-mig"}],
		containers: [{name: "work", image: "registry.invalid/cuda-sample", resources: {claims: [{name: "mig"}]}}]}}' |
	claim-make -a -n dra-demo | jq -r '"   applied \(.ref)"'
eventually -i 1 60 "pod dra-pod to run" is Running phase_of dra-demo dra-pod
kc get resourceclaims -n dra-demo -o json | jq -r '.items[0] | "   kube-scheduler allocated device \(.status.allocation.devices.results[0].device) of pool \(.status.allocation.devices.results[0].pool) to claim \(.metadata.name)"'
echo "   pod dra-pod is $(kc get pod dra-pod -n dra-demo -o jsonpath='{.status.phase} on node {.spec.nodeName}')"

kc delete namespace dra-demo --wait=true >/dev/null
