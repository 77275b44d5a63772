# vllm-report.jq: k8shazgpu vllm run and run, once the command runs:
# where it runs and on which GPUs (the claim's allocation, its first
# input), and how to reach it; with $output "json" one JSON object.
# $name, $ns, $node, $port, $uid: the run's.
[(first(inputs) | .object) // {} | .status.allocation.devices.results[]?
	| {device, pool, index: (.device | capture("^gpu-(?<i>[0-9]+)") | .i | tonumber)}] as $devs
| if $output == "json" then
	{kind: "run", name: $name, namespace: $ns, claim_uid: $uid, node: $node, devices: [$devs[].device],
	 gpus: [$devs[].index], port: ($port | tonumber | if . > 0 then . else null end)} | tojson
  else
	"pod:   \($name) (namespace \($ns))",
	"node:  \($node)",
	"GPUs:  \($devs | map("\(.device) (index \(.index))") | join(", ") | if . == "" then "-" else . end)",
	(if $port == "0" then empty else "reach: kubectl port-forward -n \($ns) pod/\($name) \($port):\($port)" end),
	"logs:  kubectl logs -n \($ns) -f \($name)"
  end
