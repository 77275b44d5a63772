#!/bin/sh
# Least privilege, checked against the shared cluster's API server.
#
# Every ServiceAccount of manifests/ (node agent, DRA plugin, controller,
# webhook, and the webhook's certificate Job) is asked, by one
# SubjectAccessReview each, what it must be able to do (exactly what its
# tools call) and a list of what it must not: Secrets (but the node agent's
# get by name in its namespace), `*`, pods, (cluster)rolebindings,
# escalate/bind/impersonate, tokens, webhook configurations but its own.
# Then manifests/nodeagent/policy.yaml, with real tokens of the node agent
# bound to pods on two KWOK nodes, written with curl as the agent writes:
# its own node, slices and NodeCacheStatus yes, another node's (or a token
# bound to no node) 403 with the policy's message; the
# tools (claim-watch, sched-queue -1) reading what they read with tokens of
# their ServiceAccounts; and the certificate Job's Secret policy of
# certs-rbac.yaml with a token of its own.
# What the test applied is deleted at the end, what was there before stays.
. "$(dirname "$0")/lib.sh"
need_cluster
SYS=canhazgpu-system
FILES="namespace.yaml crds/gpuworkloads.yaml crds/cacheplans.yaml crds/nodecachestatuses.yaml crds/gpunodes.yaml nodeagent/rbac.yaml draplugin/rbac.yaml controller/rbac.yaml
webhook/rbac.yaml webhook/certs-rbac.yaml nodeagent/policy.yaml"

# --- apply, remembering what was there already
: >created
for f in $FILES; do
	k get -f "$TOP/manifests/$f" -o name --ignore-not-found 2>/dev/null | sort >before
	k apply -f "$TOP/manifests/$f" >/dev/null || { echo "Bail out! kubectl apply -f manifests/$f failed"; exit 1; }
	k get -f "$TOP/manifests/$f" -o name | sort | comm -23 - before | sed "s|^|$f |" >>created
done
# created: "FILE KIND/NAME" of each object this test made, in apply order
cleanup() {
	k delete resourceslice -l t9800.canhazgpu.dev/test --ignore-not-found >/dev/null 2>&1
	k delete nodecachestatuses.canhazgpu.dev -l t9800.canhazgpu.dev/test --ignore-not-found >/dev/null 2>&1
	for n in $NODES; do
		k label node "$n" t9800.canhazgpu.dev/agent- >/dev/null 2>&1
		k patch node "$n" --subresource=status --type=merge \
			-p '{"status":{"capacity":{"t9800.canhazgpu.dev/probe":null}}}' >/dev/null 2>&1
	done
	k delete pod -n "$SYS" -l t9800.canhazgpu.dev/test --ignore-not-found --wait=false >/dev/null 2>&1
	gone 60 "the t9800 pods" k get pod -n "$SYS" -l t9800.canhazgpu.dev/test -o name
	# what this test made, the last applied first; the namespace waited for
	tac created | while read -r f obj; do
		k delete -n "$SYS" "$obj" --ignore-not-found --wait=false >/dev/null 2>&1
	done
	# all of it gone before the next test: a CRD still terminating would
	# vanish under one that applies it again
	[ ! -s created ] || gone 180 "what t9800 created" k get -n "$SYS" $(cut -d' ' -f2 created) --ignore-not-found -o name
	# (each namespace it made: canhazgpu-system may have been there before)
	grep ' namespace/' created | while read -r f obj; do
		gone 180 "$obj" k get "$obj" --ignore-not-found -o name ||
			k get "$obj" -o json | jq -r '.status.conditions[]? | select(.status == "True") | "9800-rbac: \(.type): \(.message)"' >&2
	done
}
NODES=
trap 'cleanup' EXIT
trap 'exit 1' INT TERM

# --- what each ServiceAccount may and may not do
#
# Lines: SERVICEACCOUNT VERB RESOURCE NAMESPACE NAME ANSWER, "-" for none.
# RESOURCE is resource[.group][/subresource]; "*.*" is every resource of
# every group. A namespace of "-" asks across all namespaces (or for a
# cluster-scoped resource).
cat >checks <<'X'
canhazgpu-nodeagent get nodes - small yes
canhazgpu-nodeagent patch nodes - small yes
canhazgpu-nodeagent patch nodes/status - small yes
canhazgpu-nodeagent list resourceslices.resource.k8s.io - - yes
canhazgpu-nodeagent create resourceslices.resource.k8s.io - - yes
canhazgpu-nodeagent patch resourceslices.resource.k8s.io - small-gpu.canhazgpu.dev yes
canhazgpu-nodeagent delete resourceslices.resource.k8s.io - small-gpu.canhazgpu.dev yes
canhazgpu-nodeagent list resourceclaims.resource.k8s.io - - yes
canhazgpu-nodeagent watch resourceclaims.resource.k8s.io - - yes
canhazgpu-nodeagent list gpuworkloads.canhazgpu.dev - - yes
canhazgpu-nodeagent watch gpuworkloads.canhazgpu.dev - - yes
canhazgpu-nodeagent create events default - yes
canhazgpu-nodeagent patch events default small.gpu-0-held-0123abcd yes
canhazgpu-nodeagent update nodes - small no
canhazgpu-nodeagent create nodes - - no
canhazgpu-nodeagent list nodes - - no
canhazgpu-nodeagent get resourceclaims.resource.k8s.io default c yes
canhazgpu-nodeagent list pods - - yes
canhazgpu-nodeagent get gpunodes.canhazgpu.dev - small yes
canhazgpu-nodeagent patch gpunodes.canhazgpu.dev - small yes
canhazgpu-nodeagent create gpunodes.canhazgpu.dev - - yes
canhazgpu-nodeagent create gpunodes.agentaflow.io - - yes
canhazgpu-nodeagent patch gpunodes.canhazgpu.dev/status - small yes
canhazgpu-nodeagent delete gpunodes.canhazgpu.dev - small yes
canhazgpu-nodeagent patch gpunodes.agentaflow.io - small yes
canhazgpu-nodeagent patch gpunodes.agentaflow.io/status - small yes
canhazgpu-nodeagent update gpunodes.canhazgpu.dev - small no
canhazgpu-nodeagent list gpunodes.canhazgpu.dev - - no
canhazgpu-nodeagent patch pods default p no
canhazgpu-nodeagent update resourceclaims.resource.k8s.io/status default c no
canhazgpu-nodeagent patch gpuworkloads.canhazgpu.dev/status default w no
canhazgpu-nodeagent delete events default e no
canhazgpu-nodeagent get cacheplans.canhazgpu.dev - default yes
canhazgpu-nodeagent list cacheplans.canhazgpu.dev - - yes
canhazgpu-nodeagent watch cacheplans.canhazgpu.dev - - yes
canhazgpu-nodeagent patch cacheplans.canhazgpu.dev - default no
canhazgpu-nodeagent update cacheplans.canhazgpu.dev/status - default no
canhazgpu-nodeagent get nodecachestatuses.canhazgpu.dev - small yes
canhazgpu-nodeagent create nodecachestatuses.canhazgpu.dev - - yes
canhazgpu-nodeagent update nodecachestatuses.canhazgpu.dev - small yes
canhazgpu-nodeagent patch nodecachestatuses.canhazgpu.dev - small yes
canhazgpu-nodeagent get nodecachestatuses.canhazgpu.dev/status - small yes
canhazgpu-nodeagent update nodecachestatuses.canhazgpu.dev/status - small yes
canhazgpu-nodeagent patch nodecachestatuses.canhazgpu.dev/status - small yes
canhazgpu-nodeagent list nodecachestatuses.canhazgpu.dev - - no
canhazgpu-nodeagent delete nodecachestatuses.canhazgpu.dev - small no
canhazgpu-nodeagent get secrets canhazgpu-node-secrets regcred yes
canhazgpu-nodeagent get secrets canhazgpu-node-secrets hf-token yes
canhazgpu-nodeagent get secrets canhazgpu-system regcred no
canhazgpu-nodeagent get secrets canhazgpu-system alert-webhook no
canhazgpu-nodeagent get secrets canhazgpu-system k8shazgpu-webhook-certs no
canhazgpu-nodeagent get secrets default regcred no
canhazgpu-nodeagent list secrets canhazgpu-node-secrets - no
canhazgpu-nodeagent create secrets canhazgpu-node-secrets - no
canhazgpu-nodeagent update secrets canhazgpu-node-secrets regcred no
canhazgpu-draplugin get resourceclaims.resource.k8s.io default c yes
canhazgpu-draplugin list resourceclaims.resource.k8s.io - - no
canhazgpu-draplugin watch resourceclaims.resource.k8s.io - - no
canhazgpu-draplugin update resourceclaims.resource.k8s.io/status default c no
canhazgpu-draplugin patch resourceslices.resource.k8s.io - small-gpu.canhazgpu.dev no
canhazgpu-draplugin patch nodes - small no
canhazgpu-draplugin create events default - no
canhazgpu-controller list nodes - - yes
canhazgpu-controller watch nodes - - yes
canhazgpu-controller list gpuworkloads.canhazgpu.dev - - yes
canhazgpu-controller watch gpuworkloads.canhazgpu.dev - - yes
canhazgpu-controller patch gpuworkloads.canhazgpu.dev/status default w yes
canhazgpu-controller list jobs.batch - - yes
canhazgpu-controller watch jobs.batch - - yes
canhazgpu-controller create jobs.batch default - yes
canhazgpu-controller patch jobs.batch default j yes
canhazgpu-controller delete jobs.batch default j yes
canhazgpu-controller list pods - - yes
canhazgpu-controller watch pods - - yes
canhazgpu-controller patch pods default p yes
canhazgpu-controller create pods/binding default p yes
canhazgpu-controller create events default - yes
canhazgpu-controller list resourceslices.resource.k8s.io - - yes
canhazgpu-controller watch resourceslices.resource.k8s.io - - yes
canhazgpu-controller list resourceclaims.resource.k8s.io - - yes
canhazgpu-controller watch resourceclaims.resource.k8s.io - - yes
canhazgpu-controller update resourceclaims.resource.k8s.io/status default c yes
canhazgpu-controller update resourceclaims.resource.k8s.io default c no
canhazgpu-controller create resourceclaimtemplates.resource.k8s.io default - yes
canhazgpu-controller patch resourceclaimtemplates.resource.k8s.io default w yes
canhazgpu-controller delete resourceclaimtemplates.resource.k8s.io default w yes
canhazgpu-controller get secrets canhazgpu-system alert-webhook yes
canhazgpu-controller get secrets canhazgpu-system hf-token no
canhazgpu-controller get configmaps canhazgpu-system gpu-alert-state yes
canhazgpu-controller patch configmaps canhazgpu-system gpu-alert-state yes
canhazgpu-controller update configmaps canhazgpu-system gpu-alert-state no
canhazgpu-controller create configmaps canhazgpu-system - no
canhazgpu-controller patch configmaps canhazgpu-system k8shazgpu-config no
canhazgpu-controller get configmaps default gpu-alert-state no
canhazgpu-controller get secrets default alert-webhook no
canhazgpu-controller list configmaps canhazgpu-system k8shazgpu-config yes
canhazgpu-controller watch configmaps canhazgpu-system k8shazgpu-config yes
canhazgpu-controller list configmaps canhazgpu-system - no
canhazgpu-controller get configmaps canhazgpu-system k8shazgpu-webhook no
canhazgpu-controller update gpuworkloads.canhazgpu.dev default w no
canhazgpu-controller delete gpuworkloads.canhazgpu.dev default w no
canhazgpu-controller patch nodes - small no
canhazgpu-controller delete pods default p no
canhazgpu-controller patch jobs.batch/status default j no
k8shazgpu-webhook list nodes - - yes
k8shazgpu-webhook watch nodes - - yes
k8shazgpu-webhook list pods - - yes
k8shazgpu-webhook watch pods - - yes
k8shazgpu-webhook list runtimeclasses.node.k8s.io - - yes
k8shazgpu-webhook watch runtimeclasses.node.k8s.io - - yes
k8shazgpu-webhook get secrets canhazgpu-system k8shazgpu-webhook-certs no
k8shazgpu-webhook patch pods default p no
k8shazgpu-webhook patch nodes - small no
k8shazgpu-webhook patch mutatingwebhookconfigurations.admissionregistration.k8s.io - k8shazgpu-webhook no
k8shazgpu-webhook-certs create secrets canhazgpu-system - yes
k8shazgpu-webhook-certs get secrets canhazgpu-system k8shazgpu-webhook-certs yes
k8shazgpu-webhook-certs update secrets canhazgpu-system k8shazgpu-webhook-certs yes
k8shazgpu-webhook-certs get mutatingwebhookconfigurations.admissionregistration.k8s.io - k8shazgpu-webhook yes
k8shazgpu-webhook-certs patch mutatingwebhookconfigurations.admissionregistration.k8s.io - k8shazgpu-webhook yes
k8shazgpu-webhook-certs get secrets canhazgpu-system other no
k8shazgpu-webhook-certs update secrets canhazgpu-system other no
k8shazgpu-webhook-certs delete secrets canhazgpu-system k8shazgpu-webhook-certs no
k8shazgpu-webhook-certs get secrets default k8shazgpu-webhook-certs no
k8shazgpu-webhook-certs create secrets default - no
k8shazgpu-webhook-certs list mutatingwebhookconfigurations.admissionregistration.k8s.io - - no
k8shazgpu-webhook-certs delete mutatingwebhookconfigurations.admissionregistration.k8s.io - k8shazgpu-webhook no
k8shazgpu-webhook-certs patch validatingwebhookconfigurations.admissionregistration.k8s.io - k8shazgpu-webhook no
X
# What none of them may do; NODEAGENT: but the node agent may, getting
# Secrets of canhazgpu-node-secrets by name (the pull secrets the
# CachePlan names, hf-token).
for sa in canhazgpu-nodeagent canhazgpu-draplugin canhazgpu-controller k8shazgpu-webhook k8shazgpu-webhook-certs; do
	sed "s/^/$sa /" <<'X'
get secrets - - no
list secrets - - no
watch secrets - - no
get secrets canhazgpu-system - no
get secrets canhazgpu-node-secrets - NODEAGENT
list secrets canhazgpu-node-secrets - no
list secrets canhazgpu-system - no
watch secrets canhazgpu-system - no
get secrets kube-system - no
list secrets default - no
* *.* - - no
* *.* canhazgpu-system - no
create pods default - no
create pods canhazgpu-system - no
create clusterrolebindings.rbac.authorization.k8s.io - - no
patch clusterrolebindings.rbac.authorization.k8s.io - canhazgpu-nodeagent no
create rolebindings.rbac.authorization.k8s.io canhazgpu-system - no
escalate clusterroles.rbac.authorization.k8s.io - - no
bind clusterroles.rbac.authorization.k8s.io - cluster-admin no
impersonate users - - no
impersonate serviceaccounts canhazgpu-system canhazgpu-controller no
impersonate groups - system:masters no
delete nodes - small no
create serviceaccounts/token canhazgpu-system canhazgpu-controller no
create serviceaccounts/token canhazgpu-system - no
patch mutatingwebhookconfigurations.admissionregistration.k8s.io - other no
create mutatingwebhookconfigurations.admissionregistration.k8s.io - - no
patch validatingadmissionpolicies.admissionregistration.k8s.io - canhazgpu-nodeagent-own-node no
delete validatingadmissionpolicybindings.admissionregistration.k8s.io - canhazgpu-nodeagent-own-node no
X
done | awk '$1 == "canhazgpu-nodeagent" { sub(/NODEAGENT$/, "yes") } { sub(/NODEAGENT$/, "no") } 1' >>checks

# One SubjectAccessReview per line, all in one List, for the groups a
# token of the ServiceAccount authenticates with.
jq -R -s -c --arg sys "$SYS" '
	[split("\n")[] | select(length > 0) | split(" ") as [$sa, $verb, $res, $ns, $name]
	| ($res | split("/")) as [$rg, $sub] | ($rg | index(".")) as $dot
	| {apiVersion: "authorization.k8s.io/v1", kind: "SubjectAccessReview",
	   spec: {user: "system:serviceaccount:\($sys):\($sa)",
		groups: ["system:serviceaccounts", "system:serviceaccounts:\($sys)", "system:authenticated"],
		resourceAttributes: ({verb: $verb,
			resource: (if $dot then $rg[:$dot] else $rg end),
			group: (if $dot then $rg[$dot + 1:] else "" end)}
		  + (if $sub then {subresource: $sub} else {} end)
		  + (if $ns != "-" then {namespace: $ns} else {} end)
		  + (if $name != "-" then {name: $name} else {} end))}}]
	| {apiVersion: "v1", kind: "List", items: .}' checks >sars.json
k create -f sars.json -o json | jq -r '(.items // [.])[] | if .status.allowed then "yes" else "no" end' >answers
if [ "$(wc -l <answers)" -ne "$(wc -l <checks)" ]; then
	echo "Bail out! $(wc -l <answers) answers to $(wc -l <checks) SubjectAccessReviews"
	exit 1
fi
paste -d ' ' checks answers | while read -r sa verb res ns name want got; do
	what="$verb $res"
	[ "$ns" = - ] || what="$what in $ns"
	[ "$name" = - ] || what="$what named $name"
	if [ "$want" = yes ]; then say="may"; else say="may not"; fi
	[ "$want" = "$got" ]
	t_result $? "$sa $say $what (SubjectAccessReview: $got)"
done >tap
cat tap
t_n=$(wc -l <tap)
t_failed=$(grep -c '^not ok' tap)

# --- the node agent's policy, with real tokens
SERVER=$(k config view --minify -o jsonpath='{.clusters[0].cluster.server}')
k config view --raw --minify -o jsonpath='{.clusters[0].cluster.certificate-authority-data}' | base64 -d >ca.crt
# two KWOK nodes of the shared cluster: A the agent's, B another
NODES=$(k get nodes -o json | jq -r '.items[] | select(.metadata.annotations["kwok.x-k8s.io/node"] == "fake") | .metadata.name' | sort | head -n 2)
set -- $NODES
[ $# = 2 ] || { echo "Bail out! the shared cluster has no two KWOK nodes"; exit 1; }
A=$1 B=$2
# agent NODE: a pod of the node agent's ServiceAccount on NODE (KWOK never runs it)
agent() {
	jq -n -c --arg node "$1" --arg ns "$SYS" '
	{apiVersion: "v1", kind: "Pod",
	 metadata: {name: "t9800-agent-\($node)", namespace: $ns, labels: {"t9800.canhazgpu.dev/test": "1"}},
	 spec: {nodeName: $node, serviceAccountName: "canhazgpu-nodeagent", terminationGracePeriodSeconds: 0,
		tolerations: [{key: "kwok.x-k8s.io/node", operator: "Exists", effect: "NoSchedule"}],
		containers: [{name: "agent", image: "k8s.io/busybox:local", imagePullPolicy: "Never"}]}}' | k create -f - >/dev/null
}
agent "$A" && agent "$B" || { echo "Bail out! the agent pods were not created"; exit 1; }
token() { k create token canhazgpu-nodeagent -n "$SYS" --bound-object-kind Pod --bound-object-name "t9800-agent-$1"; }
TA=$(token "$A") && TB=$(token "$B") && TU=$(k create token canhazgpu-nodeagent -n "$SYS") &&
	TC=$(k create token k8shazgpu-webhook-certs -n "$SYS") || { echo "Bail out! no token"; exit 1; }

# call TOKEN METHOD PATH CONTENT-TYPE [BODY]: the status code, then the
# answer's message when it is not a success.
call() {
	curl -sS --noproxy '*' --cacert ca.crt -o answer -w '%{http_code}\n' \
		-H "Authorization: Bearer $1" -H "Content-Type: $4" -X "$2" \
		${5:+--data "$5"} "$SERVER$3" || return
	jq -r 'select(.kind == "Status" and .status != "Success") | .message' answer
}
label='{"metadata":{"labels":{"t9800.canhazgpu.dev/agent":"yes"}}}'
status='{"status":{"capacity":{"t9800.canhazgpu.dev/probe":"1"}}}'
# slice NAME NODE: a ResourceSlice of NODE
slice() {
	jq -n -c --arg name "$1" --arg node "$2" '
	{apiVersion: "resource.k8s.io/v1", kind: "ResourceSlice",
	 metadata: {name: $name, labels: {"t9800.canhazgpu.dev/test": "1"}},
	 spec: {driver: "t9800.canhazgpu.dev", nodeName: $node,
		pool: {name: $node, generation: 1, resourceSliceCount: 1}, devices: [{name: "gpu-0"}]}}'
}
slices=/apis/resource.k8s.io/v1/resourceslices
deny="ValidatingAdmissionPolicy 'canhazgpu-nodeagent-own-node' with binding 'canhazgpu-nodeagent-own-node' denied request"

# The API server takes a moment to load a new policy: wait for it to
# refuse a dry run.
refused() { [ "$(call "$TU" PATCH "/api/v1/nodes/$A?dryRun=All" application/merge-patch+json "$label" | head -n 1)" = 403 ]; }
check 'the node agent policy is in force' 'eventually 30 refused'

check_output "the agent of $A labels node $A" "call '$TA' PATCH /api/v1/nodes/$A application/merge-patch+json '$label' && k get node $A -o jsonpath='{.metadata.labels.t9800\.canhazgpu\.dev/agent}{\"\n\"}'" <<X
200
yes
X
check_output "the agent of $A may not label node $B" "call '$TA' PATCH /api/v1/nodes/$B application/merge-patch+json '$label'" <<X
403
nodes "$B" is forbidden: $deny: canhazgpu-nodeagent of node $A may not write node $B: only its own node
X
check_output "the agent of $A patches the status of node $A" "call '$TA' PATCH /api/v1/nodes/$A/status application/merge-patch+json '$status'" <<X
200
X
check_output "the agent of $A may not patch the status of node $B" "call '$TA' PATCH /api/v1/nodes/$B/status application/merge-patch+json '$status'" <<X
403
nodes "$B" is forbidden: $deny: canhazgpu-nodeagent of node $A may not write node $B (status): only its own node
X
check_output "the agent of $B labels node $B, not node $A" "call '$TB' PATCH /api/v1/nodes/$B application/merge-patch+json '$label' && call '$TB' PATCH /api/v1/nodes/$A application/merge-patch+json '$label'" <<X
200
403
nodes "$A" is forbidden: $deny: canhazgpu-nodeagent of node $B may not write node $A: only its own node
X
check_output "the agent of $A creates a ResourceSlice of node $A" "call '$TA' POST $slices application/json '$(slice "t9800-$A-own" "$A")'" <<X
201
X
check_output "the agent of $A applies a ResourceSlice of node $A (server-side apply, as claim-make)" \
	"call '$TA' PATCH '$slices/t9800-$A-applied?fieldManager=t9800&force=true' application/apply-patch+yaml '$(slice "t9800-$A-applied" "$A")'" <<X
201
X
check_output "the agent of $A may not create a ResourceSlice of node $B" "call '$TA' POST $slices application/json '$(slice "t9800-$B-agent" "$B")'" <<X
403
resourceslices.resource.k8s.io "t9800-$B-agent" is forbidden: $deny: canhazgpu-nodeagent of node $A may not write ResourceSlice t9800-$B-agent of node $B: only its own node
X
check_output "the agent of $A may not apply a ResourceSlice of node $B" \
	"call '$TA' PATCH '$slices/t9800-$B-agent?fieldManager=t9800&force=true' application/apply-patch+yaml '$(slice "t9800-$B-agent" "$B")'" <<X
403
resourceslices.resource.k8s.io "t9800-$B-agent" is forbidden: $deny: canhazgpu-nodeagent of node $A may not write ResourceSlice t9800-$B-agent of node $B: only its own node
X
slice "t9800-$B" "$B" | k create -f - >/dev/null
check_output "the agent of $A may not update or delete the ResourceSlice of node $B" \
	"call '$TA' PATCH $slices/t9800-$B application/merge-patch+json '{\"spec\":{\"devices\":[{\"name\":\"gpu-1\"}]}}' &&
	 call '$TA' DELETE $slices/t9800-$B application/json && k get resourceslice t9800-$B -o jsonpath='{.spec.devices[*].name}{\"\n\"}'" <<X
403
resourceslices.resource.k8s.io "t9800-$B" is forbidden: $deny: canhazgpu-nodeagent of node $A may not write ResourceSlice t9800-$B of node $B: only its own node
403
resourceslices.resource.k8s.io "t9800-$B" is forbidden: $deny: canhazgpu-nodeagent of node $A may not write ResourceSlice t9800-$B of node $B: only its own node
gpu-0
X
check_output "the agent of $A deletes its ResourceSlice" "call '$TA' DELETE $slices/t9800-$A-own application/json && k get resourceslice t9800-$A-own --ignore-not-found -o name" <<X
200
X
check_output 'a token of the agent bound to no pod writes no node' \
	"call '$TU' PATCH /api/v1/nodes/$A application/merge-patch+json '$label' && call '$TU' PATCH /api/v1/nodes/$A/status application/merge-patch+json '$status'" <<X
403
nodes "$A" is forbidden: $deny: canhazgpu-nodeagent with a token bound to no node may not write node $A
403
nodes "$A" is forbidden: $deny: canhazgpu-nodeagent with a token bound to no node may not write node $A
X
check_output 'a token of the agent bound to no pod writes no ResourceSlice' \
	"call '$TU' POST $slices application/json '$(slice "t9800-$A-unbound" "$A")' && call '$TU' DELETE $slices/t9800-$A-applied application/json" <<X
403
resourceslices.resource.k8s.io "t9800-$A-unbound" is forbidden: $deny: canhazgpu-nodeagent with a token bound to no node may not write ResourceSlice t9800-$A-unbound
403
resourceslices.resource.k8s.io "t9800-$A-applied" is forbidden: $deny: canhazgpu-nodeagent with a token bound to no node may not write ResourceSlice t9800-$A-applied
X
# NodeCacheStatus: the agent's own only (its cache loop applies it, then
# its status, as claim-make does)
ncs=/apis/canhazgpu.dev/v1alpha1/nodecachestatuses
cdeny_ncs="ValidatingAdmissionPolicy 'canhazgpu-nodeagent-own-cache-status' with binding 'canhazgpu-nodeagent-own-cache-status' denied request"
# cache NAME [STATUS]: NAME's NodeCacheStatus, with a status of no items
cache() {
	jq -n -c --arg n "$1" --arg s "${2:-}" '{apiVersion: "canhazgpu.dev/v1alpha1", kind: "NodeCacheStatus",
		metadata: {name: $n, labels: {"t9800.canhazgpu.dev/test": "1", "kubernetes.io/hostname": $n}}}
		+ if $s == "" then {} else {status: {nodeName: $n, items: []}} end'
}
check_output "the agent of $A applies its NodeCacheStatus, then its status" \
	"call '$TA' PATCH '$ncs/$A?fieldManager=t9800&force=true' application/apply-patch+yaml '$(cache "$A")' &&
	 call '$TA' PATCH '$ncs/$A/status?fieldManager=t9800&force=true' application/apply-patch+yaml '$(cache "$A" status)' &&
	 k get nodecachestatuses.canhazgpu.dev $A -o jsonpath='{.status.nodeName}{\"\n\"}'" <<X
201
200
$A
X
check_output "the agent of $A may not create the NodeCacheStatus of $B" \
	"call '$TA' PATCH '$ncs/$B?fieldManager=t9800&force=true' application/apply-patch+yaml '$(cache "$B")' &&
	 call '$TA' POST $ncs application/json '$(cache "$B")'" <<X
403
nodecachestatuses.canhazgpu.dev "$B" is forbidden: $cdeny_ncs: canhazgpu-nodeagent of node $A may not write NodeCacheStatus $B: only its own node's
403
nodecachestatuses.canhazgpu.dev "$B" is forbidden: $cdeny_ncs: canhazgpu-nodeagent of node $A may not write NodeCacheStatus $B: only its own node's
X
cache "$B" | k create -f - >/dev/null
check_output "the agent of $A may not write the status of $B's NodeCacheStatus" \
	"call '$TA' PATCH '$ncs/$B/status?fieldManager=t9800&force=true' application/apply-patch+yaml '$(cache "$B" status)' &&
	 k get nodecachestatuses.canhazgpu.dev $B -o jsonpath='{.status}{\"\n\"}'" <<X
403
nodecachestatuses.canhazgpu.dev "$B" is forbidden: $cdeny_ncs: canhazgpu-nodeagent of node $A may not write NodeCacheStatus $B: only its own node's

X
check_output 'a token of the agent bound to no pod writes no NodeCacheStatus; no agent deletes one' \
	"call '$TU' PATCH '$ncs/$A/status?fieldManager=t9800&force=true' application/apply-patch+yaml '$(cache "$A" status)' &&
	 call '$TA' DELETE $ncs/$A application/json" <<X
403
nodecachestatuses.canhazgpu.dev "$A" is forbidden: $cdeny_ncs: canhazgpu-nodeagent with a token bound to no node may not write NodeCacheStatus $A
403
nodecachestatuses.canhazgpu.dev "$A" is forbidden: User "system:serviceaccount:$SYS:canhazgpu-nodeagent" cannot delete resource "nodecachestatuses" in API group "canhazgpu.dev" at the cluster scope
X
check_output 'RBAC still refuses what the policy does not look at' "call '$TA' GET /api/v1/namespaces/$SYS/secrets application/json" <<X
403
secrets is forbidden: User "system:serviceaccount:$SYS:canhazgpu-nodeagent" cannot list resource "secrets" in API group "" in the namespace "$SYS"
X

# --- the tools read what they read with exactly these rights
# kubeconfig NAME TOKEN: NAME.kubeconfig, the API server with TOKEN
kubeconfig() {
	jq -n --arg server "$SERVER" --arg ca "$(base64 -w 0 ca.crt)" --arg token "$2" '
	{apiVersion: "v1", kind: "Config", "current-context": "c",
	 clusters: [{name: "c", cluster: {server: $server, "certificate-authority-data": $ca}}],
	 users: [{name: "u", user: {token: $token}}], contexts: [{name: "c", context: {cluster: "c", user: "u"}}]}' >"$1.kubeconfig"
}
kubeconfig agent "$TA"
kubeconfig controller "$(k create token canhazgpu-controller -n "$SYS")"
kubeconfig webhook "$(k create token k8shazgpu-webhook -n "$SYS")"
TD=$(k create token canhazgpu-draplugin -n "$SYS")
check 'the node agent lists and watches ResourceClaims and GPUWorkloads (claim-watch)' \
	"claim-watch --kubeconfig agent.kubeconfig -1 -A resourceclaims.resource.k8s.io >/dev/null &&
	 claim-watch --kubeconfig agent.kubeconfig -1 -A gpuworkloads.canhazgpu.dev >/dev/null"
NSEC=canhazgpu-node-secrets
check_output 'the node agent gets a Secret of canhazgpu-node-secrets by name, none there (claim-watch -g), may not list them, nor get one of its own namespace' \
	"claim-watch --kubeconfig agent.kubeconfig -g t9800-none -n $NSEC secrets && echo got none &&
	 must_fail 1 claim-watch --kubeconfig agent.kubeconfig -1 -n $NSEC secrets 2>&1 &&
	 must_fail 1 claim-watch --kubeconfig agent.kubeconfig -g t9800-none -n $SYS secrets 2>&1" <<X
got none
claim-watch: GET /api/v1/namespaces/$NSEC/secrets: 403 Forbidden: secrets is forbidden: User "system:serviceaccount:$SYS:canhazgpu-nodeagent" cannot list resource "secrets" in API group "" in the namespace "$NSEC"
claim-watch: GET /api/v1/namespaces/$SYS/secrets/t9800-none: 403 Forbidden: secrets "t9800-none" is forbidden: User "system:serviceaccount:$SYS:canhazgpu-nodeagent" cannot get resource "secrets" in API group "" in the namespace "$SYS"
X
check_output 'the node agent lists the pods of its node (claim-watch -f), and may not delete one' \
	"claim-watch --kubeconfig agent.kubeconfig -1 -n $SYS -f spec.nodeName=h100 pods | jq -r .object.metadata.name &&
	 printf '%s\\n' '{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"t9800-agent-h100\",\"namespace\":\"$SYS\"}}' |
	 must_fail 1 claim-make --kubeconfig agent.kubeconfig -D 2>&1 >/dev/null" <<X
t9800-agent-h100
claim-make: v1/Pod/$SYS/t9800-agent-h100: DELETE /api/v1/namespaces/$SYS/pods/t9800-agent-h100: 403 Forbidden: pods "t9800-agent-h100" is forbidden: User "system:serviceaccount:$SYS:canhazgpu-nodeagent" cannot delete resource "pods" in API group "" in the namespace "$SYS"
X
check 'the webhook lists and watches nodes, pods and RuntimeClasses (claim-watch)' \
	"for r in nodes pods runtimeclasses.node.k8s.io; do claim-watch --kubeconfig webhook.kubeconfig -1 -A \$r >/dev/null || exit; done"
check 'the controller lists everything it watches, its ConfigMap by name (sched-queue -1)' \
	"mkdir -p state && sched-queue --kubeconfig controller.kubeconfig -1 -n t9800-none -m $SYS/k8shazgpu-config -d state"
check_output 'the DRA plugin gets a claim by name (404 for none, not 403)' \
	"call '$TD' GET /apis/resource.k8s.io/v1/namespaces/default/resourceclaims/t9800-none application/json" <<X
404
resourceclaims.resource.k8s.io "t9800-none" not found
X

# --- the certificate Job writes its one Secret, never a token's
cdeny="ValidatingAdmissionPolicy 'k8shazgpu-webhook-certs-secret' with binding 'k8shazgpu-webhook-certs-secret' denied request"
secret() {
	jq -n -c --arg name "$1" --arg type "$2" '{apiVersion: "v1", kind: "Secret", type: $type,
		metadata: {name: $name, annotations: {"kubernetes.io/service-account.name": "canhazgpu-controller"}}}'
}
certok() { [ "$(call "$TC" POST "/api/v1/namespaces/$SYS/secrets?dryRun=All" application/json "$(secret t9800-probe Opaque)" | head -n 1)" = 403 ]; }
check 'the certificate Secret policy is in force' 'eventually 30 certok'
# created (dry run) when it is missing; when an install made it, the
# create gets past admission to the conflict
if k get secret -n "$SYS" k8shazgpu-webhook-certs >/dev/null 2>&1; then
	want=409 msg='secrets "k8shazgpu-webhook-certs" already exists'
else
	want=201 msg=
fi
check_output 'cert-make may create its Secret (dry run)' \
	"call '$TC' POST '/api/v1/namespaces/$SYS/secrets?dryRun=All' application/json '$(secret k8shazgpu-webhook-certs kubernetes.io/tls | jq -c '.data = {"tls.crt": "", "tls.key": ""}')'" <<X
$want${msg:+
$msg}
X
check_output 'cert-make may not create its Secret as another type' \
	"call '$TC' POST '/api/v1/namespaces/$SYS/secrets?dryRun=All' application/json '$(secret k8shazgpu-webhook-certs Opaque)'" <<X
403
secrets "k8shazgpu-webhook-certs" is forbidden: $cdeny: k8shazgpu-webhook-certs may write a Secret of type kubernetes.io/tls only, not Opaque
X
check_output 'cert-make may not create another Secret' \
	"call '$TC' POST '/api/v1/namespaces/$SYS/secrets?dryRun=All' application/json '$(secret t9800-other Opaque)'" <<X
403
secrets "t9800-other" is forbidden: $cdeny: k8shazgpu-webhook-certs may write Secret k8shazgpu-webhook-certs only, not t9800-other
X
check_output 'cert-make may not create a service-account token Secret' \
	"call '$TC' POST '/api/v1/namespaces/$SYS/secrets?dryRun=All' application/json '$(secret k8shazgpu-webhook-certs kubernetes.io/service-account-token)'" <<X
403
secrets "k8shazgpu-webhook-certs" is forbidden: $cdeny: k8shazgpu-webhook-certs may write a Secret of type kubernetes.io/tls only, not kubernetes.io/service-account-token
X

# --- clean-up leaves nothing of the test's
cleanup
trap - EXIT
check_output 'the labels, status, slices and pods of the test are gone' \
	"k get nodes -o json | jq -r '.items[] | select(.metadata.labels[\"t9800.canhazgpu.dev/agent\"] or .status.capacity[\"t9800.canhazgpu.dev/probe\"]) | .metadata.name';
	 k get resourceslices -l t9800.canhazgpu.dev/test -o name; k get pods -A -l t9800.canhazgpu.dev/test -o name" <<X
X
done_testing
