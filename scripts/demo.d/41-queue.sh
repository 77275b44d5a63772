say "A queue, not a give-up: 8 one-GPU workloads of 3 s each for the 2 GPUs of node h100"
i=1
while [ $i -le 8 ]; do
	jq -n -c --arg n "q$i" '{apiVersion: "canhazgpu.dev/v1alpha1", kind: "GPUWorkload",
		metadata: {name: $n, namespace: "ml"},
		spec: {gpuCount: 1, nodeSelector: {"kubernetes.io/hostname": "h100"},
			podTemplate: {metadata: {annotations: {"pod-complete.stage.kwok.x-k8s.io/delay": "3s",
				"pod-complete.stage.kwok.x-k8s.io/jitter-delay": "3s"}},
				spec: {containers: [{name: "main", image: "registry.invalid/train:1"}]}}}}'
	i=$((i + 1))
done | claim-make -a >/dev/null
queue_line() {
	kc get gpuworkloads -n ml -o json | jq -r '[.items[] | select(.metadata.name | test("^q[0-9]$")) | .status.phase // "new"]
		| group_by(.) | map("\(length) \(.[0])") | join(", ")'
}
t0=$(date +%s)
n=0 waitmsg=
while [ $n -lt 60 ]; do
	line=$(queue_line)
	[ -n "$waitmsg" ] || waitmsg=$(kc get gpuworkloads -n ml -o json | jq -r '[.items[] | select(.metadata.name | test("^q[0-9]$"))
		| select(.status.phase == "Pending") | .status.message][0] // empty')
	echo "   after $(($(date +%s) - t0)) s: $line"
	case $line in "8 Succeeded") break ;; esac
	sleep 3
	n=$((n + 1))
done
[ -z "$waitmsg" ] || echo "   those waiting said: $waitmsg"
kc get gpuworkloads -n ml -o json | jq -r '[.items[] | select(.metadata.name | test("^q[0-9]$"))]
	| "   \([.[] | select(.status.phase == "Failed")] | length) Failed, \([.[] | .status.retries // 0] | add) retries spent: each started as soon as a Job before it finished"'
