# cleanup-pick.jq: k8shazgpu cleanup: per run, the objects to delete ({del: [...]}) and what is left
# alone and why ({warn: "..."}): the pods, the ConfigMaps owned by the
# run's claim, then the claim, if it is ours.
def ours($r): .metadata.labels["canhazgpu.dev/run"] == $r and .metadata.labels["app.kubernetes.io/managed-by"] == "k8shazgpu";
def ref: {apiVersion, kind, metadata: {namespace: .metadata.namespace, name: .metadata.name, uid: .metadata.uid}};
def owned($r; $uid): any(.metadata.ownerReferences[]?; .kind == "ResourceClaim" and .name == $r and ($uid == null or .uid == $uid));
(if $run != "" then [$run] else [$claims[], $pods[], $cms[] | .metadata.labels["canhazgpu.dev/run"]] | unique end)[] as $r
| [$claims[] | select(.metadata.name == $r)][0] as $c
| (if $c != null and ($c | ours($r)) then $c else null end) as $mine
| [$cms[] | select(ours($r))] as $rcms
| (if $mine != null then [$rcms[] | select(owned($r; $mine.metadata.uid))]
   elif $c == null then [$rcms[] | select(owned($r; null))]
   else [] end) as $dcms
| ([$rcms[] | select(. as $x | $dcms | index([$x]) | not)] | map(.metadata.name)) as $skipped
| (if $c != null and $mine == null then
	{warn: "resourceclaim \($r) is not one of ours (it lacks canhazgpu.dev/run=\($r) or app.kubernetes.io/managed-by=k8shazgpu); left alone"}
   else empty end),
  (if ($skipped | length) > 0 then
	{warn: "configmap \($skipped | join(", ")): labelled for run \($r) but not owned by its claim; left alone"}
   else empty end),
  {del: ([$pods[] | select(ours($r)) | ref] + [$dcms[] | ref] + (if $mine != null then [$mine | ref] else [] end)), run: $r}
