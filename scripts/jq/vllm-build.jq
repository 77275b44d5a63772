# vllm-build.jq: k8shazgpu vllm run and run: every object of the run, from the options (the tolerations and
# the command: $ARGS.positional) and, for vllm run, diff-pack's output
# (its ConfigMaps, then its checkout record), as NDJSON. First the run's
# values ({ok: false} alone: no checkout record), then ResourceClaim
# RUN (one request "gpus" of G whole GPUs, the indexes of --gpu-ids as a
# CEL selector), the ConfigMaps owned by it, and Pod RUN, owned by it,
# for vllm run with the pack and its applier (diff-pack, from the shared
# ConfigMap $applier, mounted executable; no init container). The
# owner's uid is DRY-RUN until the claim exists.
# Optional, for vllm run: $models (a JSON array of model ids) and $hub
# (the node's hub cache, a host path): when both are given, the pod
# mounts $hub read-only at /k8shazgpu/hub, HF_HUB_CACHE names it, and the
# claim's annotation canhazgpu.dev/models lists the models.
def labels: {($m): "k8shazgpu", "canhazgpu.dev/run": $name, "canhazgpu.dev/workload": $w};
def owner: [{apiVersion: "resource.k8s.io/v1", kind: "ResourceClaim", name: $name, uid: "DRY-RUN"}];
def bin: {name: "k8shazgpu-bin", mountPath: "/k8shazgpu/bin"};
($ARGS.named.models // []) as $models
| ($ARGS.named.hub // "") as $hub
| ($models != [] and $hub != "") as $use_hub
|$ARGS.positional as $pos
| [range(0; $nt) as $i | $pos[$i * 4 : $i * 4 + 4] | {key: .[0], operator: (if .[1] == "" then "Exists" else "Equal" end)}
	+ (if .[1] == "" then {} else {value: .[2]} end) + (if .[3] == "" then {} else {effect: .[3]} end)] as $tol
| (if $has_argv == 1 then $pos[$nt * 4 :] else null end) as $argv
| (if $w == "vllm" then [inputs] else [{}] end) as $in
| $in[-1] as $rec
| if $w == "vllm" and (($rec | type) != "object" or $rec.kind != "checkout") then {ok: false}
  else
	(if $w == "vllm" then $rec.image else $image end) as $img
	| (if $w == "vllm" and $iname == "" then "vllm-checkout-\($rec.base[:8])" else $iname end) as $iname
	# owner/repo of a remote on a host (scheme://host/... or host:...),
	# not of a local path or file:// URL
	| (if $w == "vllm" and $rname == "" then
		$rec.remote_url // "" | sub("/+$"; "") | sub("\\.git$"; "")
		| if test("^file:") or (test("://") | not) and (test("^[^/:]+:") | not) then ""
		  elif test("://") then sub("^[^:]+://[^/]*"; "") else sub("^[^:/]*:"; "") end
		| split("/") | map(select(. != "")) | if length >= 2 then "\(.[-2])-vllm" else "local-vllm" end
		| gsub("[^A-Za-z0-9._-]"; "-")
		| if test("^[A-Za-z0-9]([A-Za-z0-9._-]{0,48}[A-Za-z0-9])?$") then . else "local-vllm" end
	   else $rname end) as $rname
	| $in[:-1] as $cms
	| ($port | tonumber) as $portn
	| ({"canhazgpu.dev/workload": $w, "canhazgpu.dev/image": $img,
	    "canhazgpu.dev/cmd": (if $argv == null then "" else $argv | tojson end),
	    "canhazgpu.dev/port": (if $port == "0" then "" else $port end),
	    "canhazgpu.dev/prefer-node": $prefer, "canhazgpu.dev/gpu-ids": $ids}
	   + (if $w == "vllm" then {"canhazgpu.dev/base": $rec.base, "canhazgpu.dev/head": $rec.head,
		"canhazgpu.dev/pack-sha256": $rec.pack_sha256, "canhazgpu.dev/image-name": $iname, "canhazgpu.dev/repo-name": $rname,
		"canhazgpu.dev/models": ($models | join(" "))}
	      else {} end)
	   | with_entries(select(.value != ""))) as $ann
	| (if $w == "vllm" then
		{name: "vllm", image: $img, command: ["/bin/sh", "-c", $wrapper, "k8shazgpu-vllm"], args: $argv,
		 ports: (if $portn > 0 then [{name: "vllm-api", containerPort: $portn}] else null end),
		 startupProbe: {exec: {command: ["/bin/sh", "-c", "test -e /k8shazgpu/bin/.applied"]},
			periodSeconds: 1, failureThreshold: 600},
		 volumeMounts: ([bin, {name: "applier", mountPath: "/k8shazgpu/tool", readOnly: true},
			{name: "pack", mountPath: "/k8shazgpu/pack", readOnly: true}]
			+ (if $use_hub then [{name: "hub", mountPath: "/k8shazgpu/hub", readOnly: true}] else [] end)),
		 env: (if $use_hub then [{name: "HF_HUB_CACHE", value: "/k8shazgpu/hub"}] else null end)}
	   else
		{name: "main", image: $img, command: $argv,
		 ports: (if $portn > 0 then [{name: "main", containerPort: $portn}] else null end)}
	   end | . + {resources: {claims: [{name: "gpus"}]}} | with_entries(select(.value != null))) as $main
	| {ok: true, image: $img, image_name: $iname, repo_name: $rname, url: ($rec.remote_url // ""), branch: ($rec.branch // "main"),
	   packline: (if $w == "vllm" then "pack: \($rec.files.put) put, \($rec.files.link) links, \($rec.files.del) deleted, \($rec.bytes) bytes over \($rec.base[:12]) (\($rec.base_ref // "-")); image \($rec.image)"
		else "" end)},
	{apiVersion: "resource.k8s.io/v1", kind: "ResourceClaim",
	 metadata: {name: $name, namespace: $ns, labels: labels, annotations: $ann},
	 spec: {devices: {requests: [{name: "gpus", exactly: ({deviceClassName: $class, allocationMode: "ExactCount", count: ($gpus | tonumber)}
		+ if $ids == "" then {} else {selectors: [{cel: {expression:
			"\($attr).index in [\($ids | split(",") | map(tonumber) | sort | map(tostring) | join(", "))]"}}]} end)}]}}},
	($cms[] | .metadata.ownerReferences = owner),
	{apiVersion: "v1", kind: "Pod",
	 metadata: {name: $name, namespace: $ns, labels: labels, ownerReferences: owner},
	 spec: ({restartPolicy: "Never", resourceClaims: [{name: "gpus", resourceClaimName: $name}]}
		+ (if $prefer == "" then {} else {affinity: {nodeAffinity: {preferredDuringSchedulingIgnoredDuringExecution:
			[{weight: 100, preference: {matchExpressions: [{key: "kubernetes.io/hostname", operator: "In", values: [$prefer]}]}}]}}} end)
		+ (if $tol == [] then {} else {tolerations: $tol} end)
		+ (if $w == "vllm" then
			{containers: [$main],
			 volumes: ([{name: "k8shazgpu-bin", emptyDir: {}},
				{name: "applier", configMap: {name: $applier, defaultMode: 365}},
				{name: "pack", projected: {sources: [$cms[] | {configMap: {name: .metadata.name}}]}}]
				+ (if $use_hub then [{name: "hub", hostPath: {path: $hub, type: "Directory"}}] else [] end))}
		   else {containers: [$main]} end))}
  end
