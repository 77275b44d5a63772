say "Seed 003's virtual node: node k8s.gpu proxies 8 RTX A6000; its GPUNode shows capacity and what is still allocatable as pods come and go"
k8shazgpu-sim nodes "$TOP/manifests/sim/k8sgpu.yaml" | kc create -f - >/dev/null
eventually 30 "node k8s.gpu to be Ready" \
	is True kc get node k8s.gpu -o jsonpath='{.status.conditions[?(@.type=="Ready")].status}'
vagent() { k8shazgpu-nodeagent -1 -N k8s.gpu -t "$TOP/manifests/sim/k8sgpu.yaml" 2>/dev/null; }
vshow() {
	kc get gpunode.canhazgpu.dev k8s.gpu -o json | jq -r --arg w "$1" '.status |
		"   \($w):\n     capacity    \(.capacity | tojson)\n     allocatable \(.allocatable | tojson)"'
}
vagent
vshow "empty"
vpod() {
	jq -n -c --arg n "$1" --arg cpu "$2" --arg mem "$3" '{apiVersion: "v1", kind: "Pod", metadata: {name: $n, namespace: "default"},
		spec: {nodeSelector: {"kubernetes.io/hostname": "k8s.gpu"}, restartPolicy: "OnFailure",
			tolerations: [{key: "kwok.x-k8s.io/node", operator: "Exists", effect: "NoSchedule"}],
			containers: [{name: "nvidia", image: "nvidia/cuda:12.6.0-base-ubuntu20.04",
				resources: {limits: {"nvidia.com/gpu": "1", memory: $mem, cpu: $cpu}}}]}}'
}
# vbound N: N pods bound to k8s.gpu.
vbound() {
	eventually 30 "$1 pods bound to node k8s.gpu" is "$1" vbound_count
}
vbound_count() {
	kc get pods -n default -o json | jq '[.items[] | select(.metadata.name | startswith("nvidia-smi")) | select(.spec.nodeName == "k8s.gpu")] | length'
}
vpod nvidia-smi 2 16Gi | kc create -f - >/dev/null
vbound 1
vagent
vshow "one pod (1 GPU, 16Gi, 2 cpu)"
i=2
while [ $i -le 7 ]; do vpod "nvidia-smi-$i" 2 16Gi; i=$((i + 1)); done | kc create -f - >/dev/null
vpod nvidia-smi-8 47 145766088Ki | kc create -f - >/dev/null
vbound 8
vagent
vshow "eight pods"
echo "   the Node's own allocatable stays as it was: kube-scheduler subtracts pod requests itself"
echo "   ($(kc get node k8s.gpu -o jsonpath='{.status.allocatable}'))"
kc delete pods -n default --field-selector spec.nodeName=k8s.gpu --wait=true >/dev/null
kc delete node k8s.gpu >/dev/null
eventually 30 "the GPUNode of k8s.gpu to go" is '' kc get gpunodes.canhazgpu.dev k8s.gpu -o name --ignore-not-found
echo "   node k8s.gpu deleted: its GPUNodes went with it ($(kc get gpunodes.canhazgpu.dev -o name | wc -l) GPUNodes left)"
