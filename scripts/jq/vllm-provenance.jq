# vllm-provenance.jq: the provenance of a vllm run (k8shazgpu-vllm(1),
# PROVENANCE), what --replay needs to run it again: the image by digest
# (null when its digest is not known), the pack by sha256 and the
# ConfigMaps that carry it, the command, the GPU request, the port, the
# preferred node, the tolerations (as --toleration takes them), and the
# base and head that diff-pack packed. Input: diff-pack's output (its
# ConfigMaps, then its checkout record), or vllm-replay.jq's. The
# record's own digest, "sha256", is the caller's to add: the sha256 of
# the record less it, as `jq -S -c` prints it, its newline included.
def by_digest:
	if .image == null then null
	elif (.image | test("@sha256:[0-9a-f]{64}$")) then .image
	elif .image_digest == null then null
	else (.image | sub(":[^:/]*$"; "")) + "@" + .image_digest end;
[inputs] as $in
| $in[-1] as $rec
| {kind: "vllm-run", version: 1, run: $name, namespace: $ns,
   image: ($rec | by_digest), image_tag: ($rec.image_tag // $rec.image),
   base: $rec.base, head: $rec.head, merge_base: $rec.merge_base,
   pack: {sha256: $rec.pack_sha256, size: $rec.pack_size, bytes: $rec.bytes, files: $rec.files,
	configmaps: [$in[:-1][] | .metadata.name]},
   argv: $ARGS.positional, gpus: ($gpus | tonumber), gpu_ids: $ids, port: ($port | tonumber),
   prefer_node: $prefer, tolerations: $tols}
