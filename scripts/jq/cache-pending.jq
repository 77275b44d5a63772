# cache-pending.jq: k8shazgpu cache wait: given the plan items waited for
# ($items, slurped), the NodeCacheStatus
# objects ($ncs), the Node objects ($nodes) and the nodes asked for
# ($only, empty for all): what is not ready yet, one {node, name, state}
# each, and the items no node is in the scope of. A node counts when its
# Node object still exists (an old NodeCacheStatus of a deleted node
# waits for nobody); an item is ready on a node when the node reports it
# ready for the ref the plan names now.
include "cache";
def inscope($r): .scope != "nodeSelector" or all(.nodeSelector // {} | to_entries[]; $r.labels[.key] == .value);
$items[0] as $items
| ($nodes | map({key: .metadata.name, value: (.metadata.labels // {})}) | from_entries) as $labels
| [$ncs[] | (.status.nodeName // .metadata.name) as $n | select($labels[$n] != null)
	| select(($only | length) == 0 or ($only | index([$n])))
	| {node: $n, labels: $labels[$n], items: (.status.items // [] | map({key: .name, value: .}) | from_entries)}] as $rep
| [$only[] | select(. as $o | $rep | map(.node) | index([$o]) | not) | {node: ., name: "-", state: "no NodeCacheStatus"}] as $silent
| {pending: ($silent
	+ (if ($rep | length) == 0 and ($only | length) == 0
		then [{node: "-", name: "-", state: "no node reports a NodeCacheStatus"}] else [] end)
	+ [$items[] as $it | ($it | want_ref) as $ref | $rep[] as $r | select($it | inscope($r))
		| $r.items[$it.name] as $s
		| if $s == null then {node: $r.node, name: $it.name, state: "not reported"}
		  elif $s.phase != "ready" then {node: $r.node, name: $it.name,
			state: ([$s.phase // "no phase", ($s.reason // "" | select(. != ""))] | join(" "))}
		  elif ($s.ref // "") != "" and $ref != null and $s.ref != $ref
			then {node: $r.node, name: $it.name, state: "ready as \($s.ref)"}
		  else empty end]),
  unscoped: [$items[] as $it | select(($rep | length) > 0 and all($rep[]; . as $r | $it | inscope($r) | not)) | $it.name]}
