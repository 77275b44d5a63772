D=$K8SHAZGPU_SIM_DIR
HOST=$(hostname)
if [ -S "$D/redis/redis.sock" ] && [ -f "$D/plugin.pid" ]; then
	say "Pods that really run: the real node '$HOST' (kubelet, containerd, runc) and our DRA kubelet plugin"
	kc get node "$HOST" -o custom-columns='NODE:.metadata.name,KUBELET:.status.nodeInfo.kubeletVersion,RUNTIME:.status.nodeInfo.containerRuntimeVersion,READY:.status.conditions[?(@.type=="Ready")].status'
	echo " Its simulated GPUs, published by the same node agent, with its own canhazgpu ledger on $D/redis/redis.sock:"
	kc get resourceslices --field-selector "spec.nodeName=$HOST" -o json |
		jq -r '.items[].spec.devices[] | "   \(.name)  \(.attributes.uuid.string)"'
	kc create namespace gpus >/dev/null
	eventually -i 0.2 10 "the default ServiceAccount of namespace gpus" has_sa gpus
	echo " A pod asks for two whole GPUs and one for a 2g.20gb MIG device; each prints what it was given:"
	for spec in "two gpu.canhazgpu.dev 2 true" "mig mig.canhazgpu.dev 1 device.attributes[\"gpu.canhazgpu.dev\"].profile==\"2g.20gb\""; do
		set -- $spec
		jq -n -c --arg name "$1" --arg class "$2" --argjson count "$3" --arg cel "$4" --arg node "$HOST" '
		{apiVersion: "resource.k8s.io/v1", kind: "ResourceClaimTemplate", metadata: {name: $name, namespace: "gpus"},
		 spec: {spec: {devices: {requests: [{name: "gpus", exactly: {deviceClassName: $class, count: $count,
			selectors: [{cel: {expression: $cel}}]}}]}}}},
		{apiVersion: "v1", kind: "Pod", metadata: {name: $name, namespace: "gpus"},
		 spec: {nodeSelector: {"kubernetes.io/hostname": $node}, restartPolicy: "Never",
			tolerations: [{key: "k8shazgpu.dev/real-node", operator: "Exists", effect: "NoSchedule"}],
			resourceClaims: [{name: "gpus", resourceClaimTemplateName: $name}],
			containers: [{name: "main", image: "k8s.io/busybox:local", imagePullPolicy: "Never",
				command: ["sh", "-c", "echo CUDA_VISIBLE_DEVICES=$CUDA_VISIBLE_DEVICES; echo claim $CANHAZGPU_CLAIM, devices $CANHAZGPU_DEVICES; sleep 30"],
				resources: {claims: [{name: "gpus"}]}}]}}' | kc apply -f - >/dev/null
	done
	for p in two mig; do
		eventually -i 0.2 60 "pod $p to run" is Running phase_of gpus "$p"
		sleep 1
		echo "   pod $p ($(kc get pod -n gpus $p -o jsonpath='{.status.phase}')), kubectl logs:"
		kc logs -n gpus "$p" | sed 's/^/     /'
	done
	echo " The plugin wrote one CDI spec per claim (the runtime injected only these) and held the GPUs in the ledger:"
	ls "$D/cdi" | sed 's/^/   /'
	gpu-reserve -a "$D/redis/redis.sock" status | jq -r '"   GPU \(.gpu): \(.state)\(if .user then " by \(.user) (\(.type))" else "" end)"'
	echo " kubectl exec into pod two, through the API server and the kubelet:"
	kc exec -n gpus two -- sh -c 'echo "   $(hostname): NVIDIA_VISIBLE_DEVICES=$NVIDIA_VISIBLE_DEVICES"'
	echo " The pods deleted: the kubelet asks the plugin to unprepare, the specs and holds go"
	kc delete namespace gpus --wait=false >/dev/null
	eventually -i 0.2 60 "the CDI specs to go" is '' ls "$D/cdi"
	echo "   CDI specs left: $(ls "$D/cdi" | wc -l) (after $((polls / 5)) s)"
	gpu-reserve -a "$D/redis/redis.sock" status | jq -r '"   GPU \(.gpu): \(.state)"'
else
	say "The real node is not part of this cluster (k8shazgpu-sim runs it as root only): its pods are not shown"
fi
