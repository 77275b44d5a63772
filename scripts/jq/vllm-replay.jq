# vllm-replay.jq: what `vllm run --replay` hands to vllm-build.jq in
# place of diff-pack's output: the pack's ConfigMaps of the first run
# (input, any order, the ones its provenance names), copied under the
# new run's names RUN-pack-i and labels, in the provenance's order; then
# a checkout record made of the provenance ($prov, checked) alone. A
# ConfigMap the provenance names and the input lacks: {missing: NAME}
# alone.
[inputs] as $cms
| [$prov.pack.configmaps[] as $n | select([$cms[] | .metadata.name] | index($n) | not) | $n] as $gone
| if $gone != [] then {missing: $gone[0]}
  else
	($prov.pack.configmaps | to_entries[] | .key as $i | .value as $n
		| [$cms[] | select(.metadata.name == $n)][0]
		| {apiVersion: "v1", kind: "ConfigMap",
		   metadata: {name: "\($name)-pack-\($i)", namespace: $ns,
			labels: {"app.kubernetes.io/managed-by": "k8shazgpu", "canhazgpu.dev/run": $name,
				"canhazgpu.dev/workload": "vllm"},
			annotations: {"canhazgpu.dev/pack-sha256": $prov.pack.sha256}},
		   immutable: true}
		  + ({data, binaryData} | with_entries(select(.value != null)))),
	{kind: "checkout", remote_url: null, branch: null, base_ref: "run \($prov.run)",
	 image: $prov.image, image_tag: $prov.image_tag, image_digest: null,
	 base: $prov.base, head: $prov.head, merge_base: $prov.merge_base,
	 pack_sha256: $prov.pack.sha256, pack_size: $prov.pack.size, bytes: $prov.pack.bytes, files: $prov.pack.files}
  end
