# web-state.jq: k8shazgpu web: the state status-page(1) renders, from the
# cluster's objects: the GPU nodes ($nodes: Nodes with the node agent's
# agentaflow.gpu/devices), our ResourceSlices ($slices), ResourceClaims
# ($claims), pods ($pods) and GPUWorkloads ($wl). $now: Unix seconds;
# $missing: what could not be read, said; $only: the node names to show
# (none: all); $ns: the namespace of the claims, pods and workloads shown
# ("": all).
# Who holds a device: pods by their claims (since the pod started, else
# since the claim was made), pods bound by the UUIDs their
# canhazgpu.dev/devices annotation names (sched-bind's, the controller's
# Jobs'; a pod once), claims no pod uses yet, GPUWorkloads the
# controller placed (since their last transition), and host users, as
# the node's agent publishes its ledger's holds (canhazgpu.dev/host-holds;
# the ledger's k8s holds are the claims'); a GPU in MIG mode is shown as
# its MIG devices, each held by whoever holds the GPU on the host. A
# node whose agent says its ledger is unreachable
# (canhazgpu.dev/ledger-unreachable) is named in missing. The queue:
# GPUWorkloads not placed, and pods not bound that want GPUs, oldest first.
def secs: if type == "number" then floor
	elif type == "string" then
		(try (capture("^(?<t>[0-9-]{10}T[0-9:]{8})(\\.[0-9]+)?(?<z>Z|[+-][0-9]{2}:[0-9]{2})$")
		| (.t + "Z" | fromdateiso8601)
			- if .z == "Z" then 0
			else (if .z[0:1] == "-" then -1 else 1 end)
				* ((.z[1:3] | tonumber) * 3600 + (.z[4:6] | tonumber) * 60) end)
		catch null)
	else null end;
def mine: $ns == "" or .metadata.namespace == $ns;
def nsname: "\(.metadata.namespace)/\(.metadata.name)";
def gpus_wanted: (.status.requestedGPUs // .spec.gpuCount // .spec.gpuRequirements.gpuCount // 1 | tostring)
	| if . == "1" then "1 GPU" else "\(.) GPUs" end;

# the node and uuid of every device our slices publish, by "node/device"
([$slices[] | select(.spec.driver == "gpu.canhazgpu.dev") | .spec.pool.name as $n
	| .spec.devices[]? | {key: "\($n)/\(.name)", value: (.attributes.uuid.string // null)}]
	| from_entries) as $uuid_of
| [$pods[] | select(mine)] as $pods
# what pods, claims and workloads hold: {node, uuid, gpu (whole GPU by
# index, when no uuid is known), holder}
| ([$claims[] | select(mine) | . as $c
	| ([$c.status.reservedFor[]? | select(.resource == "pods") | .name][0]
	   // ([$pods[] | select(.metadata.namespace == $c.metadata.namespace
		and any(.spec.resourceClaims[]?; .resourceClaimName == $c.metadata.name)) | .metadata.name][0])) as $p
	| ([$pods[] | select(.metadata.namespace == $c.metadata.namespace and .metadata.name == $p)][0]) as $pod
	| .status.allocation.devices.results[]? | select(.driver == "gpu.canhazgpu.dev")
	| {node: .pool, uuid: $uuid_of["\(.pool)/\(.device)"],
	   gpu: ([.device | capture("^gpu-(?<i>[0-9]+)$").i | tonumber] | first // null),
	   holder: (if $p then {kind: "pod", name: "\($c.metadata.namespace)/\($p)", detail: "claim \($c.metadata.name)",
			since: (($pod.status.startTime // $c.metadata.creationTimestamp) | secs)}
		else {kind: "claim", name: ($c | nsname), detail: null, since: ($c.metadata.creationTimestamp | secs)} end)}]
  + [$pods[] | select((.spec.nodeName // "") != "" and ((.status.phase // "Pending") | IN("Succeeded", "Failed") | not))
	| . as $p | .metadata.annotations["canhazgpu.dev/devices"] // "[]" | fromjson? // [] | arrays | .[] | strings
	| {node: $p.spec.nodeName, uuid: ., gpu: null,
	   holder: {kind: "pod", name: ($p | nsname), detail: null,
		since: (($p.status.startTime // $p.metadata.creationTimestamp) | secs)}}]
  + [$wl[] | select(mine) | select((.status.phase // "") | IN("Scheduled", "Running")) | . as $w
	| .status.devices[]? | {node: $w.status.assignedNode, uuid: ., gpu: null,
	   holder: {kind: "workload", name: ($w | nsname), detail: ($w.status.phase | ascii_downcase),
		since: (($w.status.lastTransitionTime // $w.metadata.creationTimestamp) | secs)}}]) as $held
| [$nodes[] | .metadata.name as $n | select(($only | length) == 0 or ($only | index([$n])))
	| (.metadata.annotations["canhazgpu.dev/host-holds"] // "[]" | fromjson? // []) as $holds
	| [$held[] | select(.node == $n)] as $mine
	| {name: $n,
	   ready: ([.status.conditions[]? | select(.type == "Ready") | .status] | first // null),
	   updated: (.metadata.annotations["agentaflow.gpu/last-update"] | secs),
	   ledger: (.metadata.annotations["canhazgpu.dev/ledger-unreachable"] // null),
	   devices: [.metadata.annotations["agentaflow.gpu/devices"] | fromjson? // [] | .[]
		| select(.mig != null or (.mig_enabled | not)) | . as $d
		| {gpu: .index, mig, name: .product, health: (.health // "ok"), reasons: (.reasons // []),
		   holders: (([$mine[] | select((.uuid != null and .uuid == $d.uuid)
				or (.uuid == null and $d.mig == null and .gpu == $d.index)) | .holder]
				| reduce .[] as $h ([]; if any(.[]; .kind == $h.kind and .name == $h.name) then . else . + [$h] end))
			+ ([$holds[] | select(.gpu == $d.index and .type != "k8s")
				| {kind: "host",
				   name: (.user // (if .type == "unreserved" then "in use without a reservation" else "an unreadable ledger entry" end)),
				   detail: ([.type // empty, .note // empty] | join(", ")),
				   since: (.since | secs)}]))}]
		| sort_by([.gpu, .mig != null, .mig])}]
	| sort_by(.name) as $shown
| {title: "k8shazgpu status", now: $now,
   missing: ($missing + [$shown[] | select(.ledger) | "node \(.name): the ledger (Redis) \(.ledger); its host users as last published"]),
   nodes: ($shown | map(del(.ledger)))}
| .queue = ([$wl[] | select(mine) | select((.status.phase // "Pending") == "Pending")
	| {kind: "workload", name: nsname,
	   wants: (gpus_wanted + (if .status.migProfile // .spec.gpuRequirements.migProfile then " (MIG \(.status.migProfile // .spec.gpuRequirements.migProfile))" else "" end)),
	   since: (.metadata.creationTimestamp | secs)}]
  + [$pods[] | select((.status.phase // "Pending") == "Pending" and (.spec.nodeName // "") == "")
	| select(.spec.schedulerName == "k8shazgpu" or (.spec.resourceClaims // [] | length) > 0)
	| {kind: "pod", name: nsname,
	   wants: (if (.spec.resourceClaims // [] | length) > 0
		then "claims " + ([.spec.resourceClaims[] | .resourceClaimName // .resourceClaimTemplateName // .name] | join(", "))
		else "GPUs from scheduler k8shazgpu" end),
	   since: (.metadata.creationTimestamp | secs)}]
  | sort_by([.since // 0, .name]))
