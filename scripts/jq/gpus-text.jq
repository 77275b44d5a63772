# gpus-text.jq: k8shazgpu status as text, from the record of gpus.jq;
# $ns the namespace, $all true for every namespace (-A).
def list: if length == 0 then "none" else map(tostring) | join(", ") end;
"", "GPU Summary:", "  Total GPUs: \(.summary.total)", "  Available: \(.summary.available)",
"  Allocated: \(.summary.allocated)", "  Held on hosts: \(.summary.held)",
(if .summary.mig_available + .summary.mig_allocated > 0 then
	"  MIG devices: \(.summary.mig_available) available, \(.summary.mig_allocated) allocated" else empty end),
(.gpu_nodes[] | "", "Node \(.name):", "  Total GPUs: \(.total)", "  Available GPUs: \(.available | list)",
	(if .mig then "  Available MIG devices: \(.available_mig | list)" else empty end),
	"  Held on the host: \(.held | map("\(.gpu) (\(.user // "-"), \(.type // "-"))") | list)",
	(if (.allocated | length) == 0 then "  Allocated GPUs: none" else "  Allocated GPUs:",
		(.allocated[] | "    \(if .gpu != null then "GPU \(.gpu)" else .device end): \(.namespace)/\(.claim) (Pod: \(.pod // "none"))") end)),
"", (if $all then "ResourceClaims in all namespaces:" else "ResourceClaims in namespace \($ns):" end),
(if (.claims | length) == 0 then "  none" else empty end),
(.claims[] | "  \(if $all then "\(.namespace)/" else "" end)\(.name):", "    Status: \(.status)", "    Node: \(.node // "-")",
	"    GPU IDs: \(.gpus | list)", "    Pod: \(if .pod == null then "none" else "\(.pod) (\(.phase // "gone"))" end)")
