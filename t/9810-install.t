#!/bin/sh
# k8shazgpu installed the way users install it, into the shared cluster:
# `k8shazgpu-sim install` builds the images, pushes them to the sim's
# loopback registry and runs `kubectl apply -k` of the sim's overlay; every
# component then runs in a pod on the real node. Each does its work there:
# the node agent publishes the node, the controller places a GPUWorkload
# whose Job runs on the node, the webhook moves a pod to a smaller MIG
# size, the DRA plugin prepares a claim. Each component's pod killed comes
# back and catches up with no work done twice. Bad input: an image that
# is not in the registry, a registry that is not there, a webhook
# certificate expired (the cluster stays usable, /readyz names the cause,
# the certificate Job renews it). `k8shazgpu-sim uninstall` leaves nothing.
. "$(dirname "$0")/lib.sh"
. "$TOP/t/lib-install.sh"
need_cluster
D=$K8SHAZGPU_SIM_DIR
[ -f "$D/node-state" ] && [ -f "$D/kubelet.pid" ] || skip_all 'the shared cluster has no real node (k8shazgpu-sim up --no-node, or not root)'
command -v docker-registry >/dev/null 2>&1 || skip_all 'docker-registry is not installed (make deps)'
. "$D/state"
. "$D/node-state"
NS=canhazgpu-system
T=t9810
HOST=$NODE_NAME

cleanup() {
	k delete namespace "$T" --ignore-not-found --wait=false >/dev/null 2>&1
	[ ! -f "$D/installed" ] || k8shazgpu-sim uninstall >/dev/null 2>&1
	gone 180 "namespace $T" k get namespace "$T" --ignore-not-found -o name
}
cleanup || { echo "Bail out! t9810: what an earlier run left is not gone"; exit 1; }
trap cleanup EXIT
trap 'exit 1' INT TERM

# ready_pods: "component node ready" for each pod of ours, sorted.
ready_pods() {
	k get pods -n "$NS" -o json | jq -r '.items[] | select(.metadata.deletionTimestamp == null)
		| select(.metadata.labels["app.kubernetes.io/name"] != "k8shazgpu-webhook-certs")
		| [.metadata.labels["app.kubernetes.io/name"], .spec.nodeName,
		   (any(.status.conditions[]?; .type == "Ready" and .status == "True") | tostring)] | join(" ")' | sort
}
ALL_READY="canhazgpu-controller $HOST true
canhazgpu-draplugin $HOST true
canhazgpu-nodeagent $HOST true
k8shazgpu-webhook $HOST true"
all_ready() { [ "$(ready_pods)" = "$ALL_READY" ]; }
pod_of() { k get pods -n "$NS" -l "app.kubernetes.io/name=$1" -o jsonpath='{.items[0].metadata.name}'; }

# ---- install ---------------------------------------------------------------

check 'k8shazgpu-sim install: images built and pushed, overlay applied, every component Ready' \
	'k8shazgpu-sim install 2>install.err'
check_output 'one pod of each component, on the real node, Ready' 'ready_pods' <<EOF
$ALL_READY
EOF
check_output 'each runs its image from the sim registry, by the digest built' '
	k get pods -n "$NS" -o json | jq -r ".items[] | select(.metadata.labels[\"app.kubernetes.io/name\"] != \"k8shazgpu-webhook-certs\")
		| .status.containerStatuses[0].imageID" | sort' <<EOF
$(sort -k1,1 "$D/install/digests" | grep -v '^diff-pack ' | while read -r c d; do echo "127.0.0.1:$REGISTRY_PORT/k8shazgpu/$c@$d"; done | sort)
EOF
check_output 'the sim gave its own node agent and plugin processes up to them' \
	"k8shazgpu-sim status | awk '\$1 == \"node-agent\" || \$1 == \"plugin\" {print \$1, \$2}'" <<'EOF'
node-agent cluster
plugin cluster
EOF
check_output 'the certificate Job wrote the Secret and the caBundle' '
	k get secret -n "$NS" k8shazgpu-webhook-certs -o jsonpath="{.type}"; echo
	test "$(k get mutatingwebhookconfiguration k8shazgpu-webhook -o jsonpath="{.webhooks[0].clientConfig.caBundle}")" = \
		"$(k get secret -n "$NS" k8shazgpu-webhook-certs -o jsonpath="{.data.ca\.crt}")" && echo caBundle matches' <<'EOF'
kubernetes.io/tls
caBundle matches
EOF
secret_rv() { k get secret -n "$NS" k8shazgpu-webhook-certs -o jsonpath='{.metadata.resourceVersion}'; }
job_gone() { [ -z "$(k get job -n "$NS" k8shazgpu-webhook-certs --ignore-not-found -o name)" ]; }
RV=$(secret_rv)
# (the finished Job is deleted by the TTL controller, ttlSecondsAfterFinished
# 0, on its own time: applied again only once it is gone)
check_output 'apply -k again changes nothing but running the certificate Job again' '
	eventually 60 job_gone && k apply -k "$D/install" | grep -v " unchanged$"' <<'EOF'
job.batch/k8shazgpu-webhook-certs created
EOF
check 'which keeps the certificate, and the caBundle stays' '
	eventually 60 job_gone && test "$(secret_rv)" = "$RV" &&
	test "$(k get mutatingwebhookconfiguration k8shazgpu-webhook -o jsonpath="{.webhooks[0].clientConfig.caBundle}")" = \
		"$(k get secret -n "$NS" k8shazgpu-webhook-certs -o jsonpath="{.data.ca\.crt}")"'

# ---- the node agent --------------------------------------------------------

check_republished
check_output 'and the GPUs as extended resources, for GPUWorkloads' \
	"k get node $HOST -o jsonpath='{.status.allocatable.nvidia\.com/gpu} {.status.allocatable.nvidia\.com/mig-2g\.20gb}'; echo" <<'EOF'
4 3
EOF

# ---- the controller --------------------------------------------------------

k create namespace "$T" >/dev/null
eventually 60 k get serviceaccount default -n "$T" >/dev/null
jq -n -c --arg ns "$T" --arg node "$HOST" '{apiVersion: "canhazgpu.dev/v1alpha1", kind: "GPUWorkload",
	metadata: {name: "hello", namespace: $ns},
	spec: {gpuCount: 1, nodeSelector: {"kubernetes.io/hostname": $node},
		podTemplate: {spec: {containers: [{name: "main", image: "k8s.io/busybox:local", imagePullPolicy: "Never",
			command: ["sh", "-c", "echo placed on $NODE with $NVIDIA_VISIBLE_DEVICES"],
			env: [{name: "NODE", valueFrom: {fieldRef: {fieldPath: "spec.nodeName"}}}]}]}}}}' |
	k create -f - >/dev/null
wl_phase() { k get gpuworkload -n "$T" hello -o jsonpath='{.status.phase}'; }
job_done() { [ "$(k get job -n "$T" hello -o jsonpath='{.status.succeeded}')" = 1 ]; }
check 'the in-cluster controller places the GPUWorkload; its Job runs on the real node' 'eventually 120 job_done'
DEV=$(k get job -n "$T" hello -o json | jq -r '.metadata.annotations["canhazgpu.dev/devices"] | fromjson | join(",")')
check_output 'its pod printed the node and the device the controller chose' \
	'k logs -n "$T" job/hello' <<EOF
placed on $HOST with $DEV
EOF

# ---- the webhook -----------------------------------------------------------

# free2g: 2g.20gb devices free by the cluster's own account.
free2g() {
	{ k get nodes -o json; k get pods -A -o json; } | jq -s '
		(.[0].items | map(select(any(.status.conditions[]?; .type == "Ready" and .status == "True"))
			| .status.allocatable["nvidia.com/mig-2g.20gb"] // "0" | tonumber) | add)
		- (.[1].items | map(select(.spec.nodeName and (.status.phase | IN("Succeeded", "Failed") | not))
			| .spec.containers[].resources.limits["nvidia.com/mig-2g.20gb"] // "0" | tonumber) | add // 0)'
}
# mig_pod NAME COUNT [NODE]: a pod asking COUNT 2g.20gb (bound to NODE).
mig_pod() {
	jq -cn --arg n "$1" --arg ns "$T" --arg c "$2" --arg node "${3:-}" '{apiVersion: "v1", kind: "Pod",
		metadata: {name: $n, namespace: $ns},
		spec: ({tolerations: [{key: "kwok.x-k8s.io/node", operator: "Exists", effect: "NoSchedule"},
				{key: "k8shazgpu.dev/real-node", operator: "Exists", effect: "NoSchedule"}],
			terminationGracePeriodSeconds: 1,
			containers: [{name: "c", image: "k8s.io/busybox:local", imagePullPolicy: "Never",
				command: ["sleep", "3600"], resources: {limits: {"nvidia.com/mig-2g.20gb": $c}}}]}
			+ if $node != "" then {nodeName: $node} else {} end)}' | k create -f - >/dev/null 2>>create.err
}
asks() { k get pod -n "$T" "$1" -o json | jq -r '[(.spec.containers[0].resources.limits | keys[0]),
	(.metadata.annotations["gpu-webhook.k8s.io/fallback"] // "-")] | join(" ")'; }
running() { [ "$(k get pod -n "$T" "$1" -o jsonpath='{.status.phase}')" = Running ]; }
# every 2g.20gb of every node taken, by one pod per node bound to it
k get nodes -o json | jq -r '.items[] | select((.status.allocatable["nvidia.com/mig-2g.20gb"] // "0") != "0")
	| "\(.metadata.name) \(.status.allocatable["nvidia.com/mig-2g.20gb"])"' >nodes2g
while read -r n c; do mig_pod "fill-$n" "$c" "$n"; done <nodes2g
check_output 'pods taking every 2g.20gb of the cluster keep their size' \
	'while read -r n c; do asks "fill-$n"; done <nodes2g | sort -u' <<'EOF'
nvidia.com/mig-2g.20gb -
EOF
check_output 'which leaves none free' 'free2g' <<'EOF'
0
EOF
mig_pod one-more 1
check_output 'one more asking 2g.20gb: the in-cluster webhook moves it to 1g.10gb' \
	'asks one-more' <<'EOF'
nvidia.com/mig-1g.10gb 2g.20gb->1g.10gb
EOF

# ---- the DRA plugin --------------------------------------------------------

ledger() { gpu-reserve -a "$D/redis/redis.sock" status | jq -r 'select(.user // "" | startswith("k8s:")) | "\(.gpu) \(.user)"'; }
jq -n -c --arg ns "$T" '{apiVersion: "resource.k8s.io/v1", kind: "ResourceClaim", metadata: {name: "one", namespace: $ns},
	spec: {devices: {requests: [{name: "gpus", exactly: {deviceClassName: "gpu.canhazgpu.dev", count: 1}}]}}}' |
	k create -f - >/dev/null
jq -n -c --arg ns "$T" --arg node "$HOST" '{apiVersion: "v1", kind: "Pod", metadata: {name: "dra", namespace: $ns},
	spec: {nodeSelector: {"kubernetes.io/hostname": $node}, restartPolicy: "Never", terminationGracePeriodSeconds: 1,
		tolerations: [{key: "k8shazgpu.dev/real-node", operator: "Exists", effect: "NoSchedule"}],
		resourceClaims: [{name: "gpus", resourceClaimName: "one"}],
		containers: [{name: "c", image: "k8s.io/busybox:local", imagePullPolicy: "Never",
			command: ["sh", "-c", "echo $NVIDIA_VISIBLE_DEVICES; sleep 3600"], resources: {claims: [{name: "gpus"}]}}]}}' |
	k create -f - >/dev/null
dra_running() { [ "$(k get pod -n "$T" dra -o jsonpath='{.status.phase}')" = Running ] && [ -n "$(k logs -n "$T" dra 2>/dev/null)" ]; }
check 'a DRA pod on the real node gets its GPU through the in-cluster plugin' 'eventually 120 dra_running'
DEV1=$(k get resourceclaim -n "$T" one -o jsonpath='{.status.allocation.devices.results[0].device}')
UUID1=$(gpu-probe -t "$D/realnode.yaml" -n "$HOST" | claim-make -N "$HOST" |
	jq -r --arg d "$DEV1" 'select(.kind == "ResourceSlice") | .spec.devices[] | select(.name == $d) | .attributes.uuid.string')
check_output 'it sees exactly that device' 'k logs -n "$T" dra' <<EOF
$UUID1
EOF
check_output 'the plugin holds its GPU for the claim in the node ledger' 'ledger | grep -c "k8s:$T/one"' <<'EOF'
1
EOF

# ---- each component's pod killed -------------------------------------------

# kill_pod COMPONENT: delete its pod at once; a new one must come Ready.
kill_pod() {
	old=$(pod_of "$1")
	k delete pod -n "$NS" "$old" --grace-period=1 --wait=true >/dev/null &&
	eventually 120 all_ready && [ "$(pod_of "$1")" != "$old" ]
}
SLICEGEN=$(k get resourceslices -o json | jq -r --arg n "$HOST" '[.items[] | select(.spec.nodeName == $n) | .metadata.name] | sort | join(" ")')
check 'the node agent pod killed: a new one Ready' 'kill_pod canhazgpu-nodeagent'
check 'it catches up: the same ResourceSlice, no second one' \
	'eventually 60 same_slice && test "$(k get resourceslices -o json | jq -r --arg n "$HOST" "[.items[] | select(.spec.nodeName == \$n) | .metadata.name] | sort | join(\" \")")" = "$SLICEGEN"'
check 'the controller pod killed: a new one Ready' 'kill_pod canhazgpu-controller'
check_output 'it catches up with no work done twice: one Job for the workload, done, not run again' \
	'sleep 5; k get jobs -n "$T" -o json | jq -r ".items[] | \"\(.metadata.name) \(.status.succeeded)\""; wl_phase; echo' <<'EOF'
hello 1
Succeeded
EOF
check 'the plugin pod killed: a new one Ready' 'kill_pod canhazgpu-draplugin'
check 'the DRA pod still runs, and its hold is kept' 'running dra && ledger | grep -q "k8s:$T/one"'
k delete pod -n "$T" dra --wait=false >/dev/null
check 'the new plugin unprepares what the old one prepared: the hold goes' \
	'eventually 120 sh -c "! gpu-reserve -a $D/redis/redis.sock status | grep -q k8s:$T/one"'
check 'the webhook pod killed: a new one Ready' 'kill_pod k8shazgpu-webhook'
mig_pod after-restart 1
check_output 'and it moves the next pod as before' 'asks after-restart' <<'EOF'
nvidia.com/mig-1g.10gb 2g.20gb->1g.10gb
EOF

# ---- bad input -------------------------------------------------------------

# image_pod NAME IMAGE: a pod on the real node pulling IMAGE.
image_pod() {
	jq -n -c --arg ns "$T" --arg n "$1" --arg node "$HOST" --arg img "$2" '{apiVersion: "v1", kind: "Pod",
		metadata: {name: $n, namespace: $ns},
		spec: {nodeSelector: {"kubernetes.io/hostname": $node}, terminationGracePeriodSeconds: 1,
			tolerations: [{key: "k8shazgpu.dev/real-node", operator: "Exists", effect: "NoSchedule"}],
			containers: [{name: "c", image: $img}]}}' | k create -f - >/dev/null
}
pull_failed() {
	k get events -n "$T" --field-selector "involvedObject.name=$1,reason=Failed" -o json |
		jq -e --arg t "$2" 'any(.items[]; .message | contains($t))' >/dev/null
}
image_pod noimage "127.0.0.1:$REGISTRY_PORT/k8shazgpu/nodeagent:no-such-tag"
check 'an image not in the registry: the pod event names the image and "not found"' \
	"eventually 90 pull_failed noimage '127.0.0.1:$REGISTRY_PORT/k8shazgpu/nodeagent:no-such-tag: not found'"
BAD=$(free_port)
image_pod noregistry "127.0.0.1:$BAD/k8shazgpu/nodeagent:0.1.0"
check 'a registry that is not there: the event says the connection was refused' \
	"eventually 90 pull_failed noregistry 'dial tcp 127.0.0.1:$BAD: connect: connection refused'"

# an expired certificate in the webhook's Secret
cert-make -o expired -H 127.0.0.1 -V 2025-01-01T00:00:00Z,2025-06-01T00:00:00Z >/dev/null
k create secret generic -n "$NS" k8shazgpu-webhook-certs --type=kubernetes.io/tls \
	--from-file=tls.crt=expired/tls.crt --from-file=tls.key=expired/tls.key --from-file=ca.crt=expired/ca.crt \
	--dry-run=client -o json | k replace -f - >/dev/null
WH=$(pod_of k8shazgpu-webhook)
unready() { [ "$(k get pod -n "$NS" "$WH" -o jsonpath='{.status.conditions[?(@.type=="Ready")].status}')" = False ]; }
log_says_expired() { k logs -n "$NS" "$WH" | grep -q "tls.crt: certificate expired at 2025-06-01T00:00:00Z"; }
check 'the webhook certificate expired: the pod turns unready, its log names the cause' \
	'eventually 150 unready && log_says_expired'
check 'and pods are still created (failurePolicy Ignore)' 'mig_pod while-expired 1'
k apply -k "$D/install" >/dev/null
cert_good() {
	k get secret -n "$NS" k8shazgpu-webhook-certs -o jsonpath='{.data.tls\.crt}' | base64 -d >renewed.crt &&
		cert-make -c renewed.crt -H 127.0.0.1 >/dev/null 2>&1
}
check 'apply -k again: the certificate Job renews it; the webhook is Ready again' \
	'eventually 120 cert_good && eventually 180 all_ready'
check 'and the API server calls it again: the next pod is moved' \
	'mig_pod after-renewal 1 && test "$(asks after-renewal)" = "nvidia.com/mig-1g.10gb 2g.20gb->1g.10gb"'

# ---- uninstall -------------------------------------------------------------

k delete namespace "$T" --wait=true --timeout=120s >/dev/null
check 'k8shazgpu-sim uninstall: kubectl delete -k removes all of it' 'k8shazgpu-sim uninstall 2>uninstall.err'
check_output 'nothing of it is left' '
	k get namespace "$NS" canhazgpu-node-secrets --ignore-not-found -o name
	k get crd gpuworkloads.canhazgpu.dev --ignore-not-found -o name
	k get clusterroles,clusterrolebindings -o name | grep -e canhazgpu -e k8shazgpu
	k get mutatingwebhookconfigurations,validatingadmissionpolicies,validatingadmissionpolicybindings,deviceclasses -o name |
		grep -e canhazgpu -e k8shazgpu
	echo end' <<'EOF'
end
EOF
check_output 'the sim runs its own node agent and plugin again' \
	"k8shazgpu-sim status | awk '\$1 == \"node-agent\" || \$1 == \"plugin\" {print \$1, \$2}'" <<'EOF'
node-agent running
plugin running
EOF
done_testing
