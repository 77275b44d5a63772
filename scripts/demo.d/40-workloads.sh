say "GPUWorkloads: the controller places them with sched-pick's engine and runs each as a Job pinned to its node"
apply_crd "$TOP/manifests/crds/gpuworkloads.yaml"
kc create namespace agentaflow >/dev/null
kc create namespace ml >/dev/null
# the controller's metrics port: below the range the sim takes its ports
# from, and held by no socket now
port=$(free-port -r 12000-19999)
K8SHAZGPU_JOB_TOLERATIONS='[{"key":"kwok.x-k8s.io/node","operator":"Exists","effect":"NoSchedule"}]' \
	K8SHAZGPU_ALERT_SECRET=alerts/alert-webhook K8SHAZGPU_ALERT_STATE=alerts/gpu-alert-state \
	k8shazgpu-controller -i 1 -d "$work/controller" -l "127.0.0.1:$port" >/dev/null 2>"$work/controller.log" &
controller=$!
echo " The AgentaFlow example (agentaflow.io/v1) and the GPU_Orchestrator one (gpu.warp.dev/v1alpha1), unchanged:"
indent k8shazgpu submit "$TOP/t/fixtures/workloads/agentaflow.yaml"
indent k8shazgpu -n ml submit "$TOP/t/fixtures/workloads/warp.yaml"
echo " ...and one asking for a 2g.20gb MIG device (1g.10gb if none is free), one no node can hold, one asking for 0 GPUs:"
printf '%s\n' '{"apiVersion":"canhazgpu.dev/v1alpha1","kind":"GPUWorkload","metadata":{"name":"mig-job","namespace":"ml"},"spec":{"gpuRequirements":{"migProfile":"2g.20gb","migFallback":["1g.10gb"]}}}' \
	'{"apiVersion":"canhazgpu.dev/v1alpha1","kind":"GPUWorkload","metadata":{"name":"too-big","namespace":"ml"},"spec":{"gpuCount":16,"retryPolicy":{"maxRetries":2,"backoffSeconds":1}}}' \
	'{"apiVersion":"canhazgpu.dev/v1alpha1","kind":"GPUWorkload","metadata":{"name":"zero","namespace":"ml"},"spec":{"gpuCount":0}}' |
	claim-make -a | jq -r '"   applied \(.ref)"'
eventually -i 1 30 "GPUWorkload too-big to fail" is Failed kc get gpuworkload too-big -n ml -o jsonpath='{.status.phase}'
indent k8shazgpu -A -o wide workloads
echo " The Jobs, pinned by node affinity, asking for the devices chosen:"
kc get jobs -A -o json | jq -r '.items[] | "   job \(.metadata.namespace)/\(.metadata.name) on \(.metadata.annotations["canhazgpu.dev/node"]): \(.spec.template.spec.containers[0].resources.limits | to_entries | map("\(.value) x \(.key)") | join(", "))"'

say "Switching the strategy at run time: k8shazgpu strategy best_fit"
indent k8shazgpu strategy best_fit
printf '%s\n' '{"apiVersion":"canhazgpu.dev/v1alpha1","kind":"GPUWorkload","metadata":{"name":"after-switch","namespace":"ml"},"spec":{"gpuCount":1,"gpuMemoryRequired":20000}}' | claim-make -a >/dev/null
eventually -i 1 20 "GPUWorkload after-switch to be placed" prints kc get gpuworkload after-switch -n ml -o jsonpath='{.status.assignedNode}'
kc get gpuworkload after-switch -n ml -o json | jq -r '"   after-switch: \(.status.message) (best_fit: the smallest GPU with 20000 MiB free)"'
echo " Controller metrics (http://127.0.0.1:$port/metrics):"
curl -s "http://127.0.0.1:$port/metrics" | grep -E '^(agentaflow_gpu_total|agentaflow_gpu_available|agentaflow_workloads|warp_gpuworkload_scheduled_total|warp_gpuworkload_failed_total|warp_gpuworkload_retries_total)' | sed 's/^/   /'
