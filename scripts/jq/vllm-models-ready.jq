# vllm-models-ready.jq: k8shazgpu vllm run: where the models of the run
# ($ids) are ready, from the CachePlan ($plan), the NodeCacheStatus
# objects ($ncs) and the Node objects ($nodes), all slurped; $only: the
# one node in scope (--prefer-node), or "" for every node. A model is
# ready on a node when the node reports one of the plan's model items of
# that repo id ready, failed there when every such item it reports
# failed. One line:
#   ready NODE...          the nodes where every model is ready, sorted
#   failed MESSAGE         on every node in scope some model failed: the
#                          cache's reasons, one per node
#   pending STATE          neither yet: what each node in scope says
($nodes | map(.metadata.name)) as $live
| [$plan[] | .spec.items[]? | select(.models.repoId != null)] as $items
| [$ncs[] | {node: (.status.nodeName // .metadata.name), items: (.status.items // [] | map({key: .name, value: .}) | from_entries)}
	| select(.node as $n | $live | index([$n])) | select($only == "" or .node == $only)] as $rep
| [$rep[] as $r | {node: $r.node, models: [$ids[] as $id
	| [$items[] | select(.models.repoId == $id) | $r.items[.name] | select(. != null)] as $s
	| {id: $id, state: (if any($s[]; .phase == "ready") then "ready"
		elif $s != [] and all($s[]; .phase == "failed") then "failed"
		elif $s == [] then "not reported" else $s[0].phase // "no phase" end),
	   why: ([$s[] | select(.phase == "failed") | [.reason, .message] | map(select(. != null and . != "")) | join(": ")][0] // "")}]}
	] as $by
| [$by[] | select(all(.models[]; .state == "ready")) | .node] as $ready
| if $ready != [] then "ready \($ready | sort | join(" "))"
  elif $by != [] and all($by[]; any(.models[]; .state == "failed")) then
	"failed \([$by[] | .node as $n | .models | map(select(.state == "failed"))[0]
		| "model \(.id) on node \($n): \(if .why == "" then "failed" else .why end)"] | join("; "))"
  elif $by == [] then "pending \(if $only == "" then "no node reports its cache" else "node \($only) reports no cache status" end)"
  else "pending \([$by[] | .node as $n | .models[] | select(.state != "ready") | "\(.id) on \($n): \(.state)"] | join(", "))" end
