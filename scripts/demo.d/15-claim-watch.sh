say "claim-watch streams every pod change in namespace '$NS' as one JSON line each"
kc create namespace "$NS" >/dev/null
claim-watch -n "$NS" pods >"$work/events" 2>"$work/watch.err" &
watcher=$!
sleep 1

say "Creating 13 pods that each ask for one 2g.20gb MIG device (the cluster has 12)"
i=1
while [ $i -le 13 ]; do
	cat <<EOF
apiVersion: v1
kind: Pod
metadata: {name: mig-$i, namespace: $NS}
spec:
  tolerations: [{key: kwok.x-k8s.io/node, operator: Exists, effect: NoSchedule}]
  containers:
  - name: work
    image: registry.invalid/cuda-sample
    resources:
      limits: {nvidia.com/mig-2g.20gb: "1"}
---
EOF
	i=$((i + 1))
done | kc apply -f - >/dev/null

# 12 run and the 13th has been judged unschedulable.
twelve_and_one() {
	atleast 12 lines kc get pods -n "$NS" --field-selector=status.phase=Running -o name || return 1
	grep -q '"reason":"Unschedulable"' "$work/events" || { echo "(no pod judged Unschedulable yet)"; return 1; }
}
eventually -i 1 60 "12 pods Running and the 13th judged Unschedulable" twelve_and_one
sleep 1
stop "$watcher"
watcher=

say "What claim-watch saw, in plain words (first lines of $(wc -l <"$work/events") events)"
jq -r '
  .object as $p
  | ($p.status.conditions // [] | map(select(.type=="PodScheduled"))[0]) as $s
  | if .type == "ADDED" then "pod \($p.metadata.name) created, asking for \($p.spec.containers[0].resources.limits | to_entries | map("\(.value) x \(.key)") | join(", "))"
    elif .type == "DELETED" then "pod \($p.metadata.name) deleted"
    elif $p.status.phase == "Running" then "pod \($p.metadata.name) is Running on node \($p.spec.nodeName)"
    elif $p.spec.nodeName then "pod \($p.metadata.name) was placed by kube-scheduler on node \($p.spec.nodeName)"
    elif $s.reason == "Unschedulable" then "pod \($p.metadata.name) cannot be placed: \($s.message)"
    else "pod \($p.metadata.name) changed (\($p.status.phase))" end' "$work/events" |
	awk '!seen[$0]++' | head -n 20
echo "   ..."
jq -r 'select(.object.status.conditions // [] | map(select(.reason=="Unschedulable")) | length > 0)
  | "pod \(.object.metadata.name) cannot be placed: \(.object.status.conditions[] | select(.type=="PodScheduled") | .message)"' \
	"$work/events" | tail -n 1

medium=$(kc get pods -n "$NS" -o jsonpath='{range .items[?(@.spec.nodeName=="medium")]}{.metadata.name}{"\n"}{end}' | wc -l)
pending=$(kc get pods -n "$NS" --field-selector=status.phase=Pending -o name | wc -l)
events=$(wc -l <"$work/events")
distinct=$(jq -r '"\(.object.metadata.uid) \(.object.metadata.resourceVersion)"' "$work/events" | sort -u | wc -l)
echo
echo "   $medium pods run on node 'medium', the only node with 2g.20gb devices; $pending pod waits, because all 12 are taken."
echo "   claim-watch streamed $events pod changes as they happened; $distinct of them distinct (uid, resourceVersion) pairs."
kc delete namespace "$NS" --wait=false >/dev/null
