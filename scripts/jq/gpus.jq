# gpus.jq: k8shazgpu status: the seed's status view, from the GPU nodes ($nodes), our
# ResourceSlices ($slices), every ResourceClaim ($claims) and the pods
# of the namespace ($pods): per node its whole GPUs, those offered and
# not allocated, those held on the host (canhazgpu.dev/host-holds), and
# the devices claims hold (pool = node; gpu-N, or a MIG device by name);
# per claim of the namespace (of all with -A) its state, node, devices
# and pod. $only_node, $only_claim: one node, one claim.
def idx: capture("^gpu-(?<i>[0-9]+)$").i | tonumber;
def whole: test("^gpu-[0-9]+$");
def id: if whole then idx else . end;
def byid: sort_by(if type == "number" then [0, .] else [1, .] end);
def podof($c): ([$c.status.reservedFor[]? | select(.resource == "pods") | .name][0]
	// ([$pods[] | select(.metadata.namespace == $c.metadata.namespace
		and any(.spec.resourceClaims[]?; .resourceClaimName == $c.metadata.name)) | .metadata.name][0]));
[$claims[] | . as $c | .status.allocation.devices.results[]? | select(.driver == "gpu.canhazgpu.dev")
	| {node: .pool, device, namespace: $c.metadata.namespace, claim: $c.metadata.name, pod: podof($c)}] as $alloc
| [$nodes[] | .metadata.name as $n | select($only_node == "" or $n == $only_node)
	| (.metadata.annotations["agentaflow.gpu/devices"] | fromjson? // []) as $d
	| (.metadata.annotations["canhazgpu.dev/host-holds"] // "[]" | fromjson? // []) as $holds
	| [$alloc[] | select(.node == $n)] as $a
	| ($a | map(.device)) as $used
	| [$slices[] | select(.spec.driver == "gpu.canhazgpu.dev" and .spec.pool.name == $n) | .spec.devices[]?.name
		| select(. as $x | $used | index([$x]) | not)] as $free
	| {name: $n, total: ([$d[] | select(.mig == null) | .index] | unique | length),
	   mig: any($d[]; .mig != null),
	   available: [$free[] | select(whole) | idx] | sort,
	   available_mig: [$free[] | select(whole | not)] | sort,
	   held: [$holds[] | {gpu, user, type}] | sort_by(.gpu),
	   allocated: [$a[] | {gpu: (.device | if whole then idx else null end)} + .] | sort_by([.gpu == null, .gpu, .device])}] as $gn
| {summary: {total: ([$gn[].total] | add // 0), available: ([$gn[].available[]] | length),
	allocated: ([$gn[].allocated[] | select(.gpu != null)] | length), held: ([$gn[].held[]] | length),
	mig_available: ([$gn[].available_mig[]] | length), mig_allocated: ([$gn[].allocated[] | select(.gpu == null)] | length)},
   gpu_nodes: $gn,
   claims: [$claims[] | select($all or .metadata.namespace == $ns) | select($only_claim == "" or .metadata.name == $only_claim)
	| . as $c | [.status.allocation.devices.results[]? | select(.driver == "gpu.canhazgpu.dev")] as $r | podof($c) as $p
	| {name: .metadata.name, namespace: .metadata.namespace, status: (if .status.allocation then "Allocated" else "Pending" end),
	   node: ($r[0].pool // null), gpus: ([$r[].device | id] | byid), pod: $p,
	   phase: (if $p == null then null else [$pods[] | select(.metadata.namespace == $c.metadata.namespace and .metadata.name == $p)
		| .status.phase // "Pending"][0] end)}]
	| sort_by(.namespace, .name)}
