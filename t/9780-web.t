#!/bin/sh
# k8shazgpu web on the simulated cluster: a GPU node of this test's own,
# published by its agent with a Redis ledger of its own (a host user holds
# GPU 0), pods holding a whole GPU and a MIG device by their claims, a pod
# whose claim cannot be met and a GPUWorkload no node fits waiting: the
# page, filtered to the node and this test's namespace, says exactly who
# holds what, and what waits; a user whose rights end at the namespace
# sees what is refused named and the rest, or, asking for the namespace,
# the whole page; in headless Chromium, served, its text is the same, and
# a phone-sized screenshot is kept. The ledger down: the
# agent says so on its Node and the page names it, showing the rest.
. "$(dirname "$0")/lib.sh"

[ -n "${K8SHAZGPU_SIM_DIR:-}" ] && [ -f "$K8SHAZGPU_SIM_DIR/state" ] ||
	skip_all "no k8shazgpu-sim cluster (run under t/run)"
need_cluster
NS=t9780-web
N=t9780-web

# the user ClusterRoles, when this test applied them
made_roles=
cleanup() {
	k delete clusterrolebinding t9780-web-viewer --ignore-not-found >/dev/null 2>&1
	[ -z "$made_roles" ] || k delete clusterrole k8shazgpu-user k8shazgpu-user-cluster --ignore-not-found >/dev/null 2>&1
	k delete pods -n "$NS" --all --grace-period=0 --force --ignore-not-found >/dev/null 2>&1
	k delete node "$N" --ignore-not-found --wait=false >/dev/null 2>&1
	ns_deleted "$NS" && gone 60 "node $N" k get node "$N" --ignore-not-found -o name ||
		{ echo "# t9780: left: $(k get namespace,node "$NS" "$N" --ignore-not-found -o name 2>&1 | tr '\n' ' ')"; return 1; }
}

cat >topo.yaml <<EOF
apiVersion: canhazgpu.dev/v1alpha1
kind: Topology
metadata:
  name: t9780
defaults:
  family: hopper
  driverVersion: "550.90.07"
  cudaVersion: "12.4"
  computeCapability: "9.0"
nodes:
- name: $N
  product: NVIDIA-H100-80GB-HBM3
  memoryMiB: 81559
  gpus: 3
  migByGPU: {"2": [3g.40gb, 3g.40gb]}
EOF
# text: the page as its visible text (cells two blanks apart); when: its
# times as words
text() {
	sed -n '/<body>/,/<\/body>/p' | sed -e 's#</t[dh]>#  #g' -e 's/<[^>]*>//g' \
		-e 's/&lt;/</g; s/&gt;/>/g; s/&quot;/"/g; s/&#39;/'"'"'/g; s/&amp;/\&/g' -e 's/ *$//' | grep -v '^$'
}
when() {
	sed -E -e 's/^as of .* UTC/as of NOW/' -e 's/(^| )[0-9]+(s|m|h [0-9]+m|d [0-9]+h)($|;| )/\1T\3/g' \
		-e 's/since [0-9TZ:-]+:/since WHEN:/'
}
chrome() {
	chromium --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
		--disable-background-networking --disable-component-update --disable-sync \
		--user-data-dir="$(mktemp -d "$SCRATCH/chrome.XXXXXX")" "$@" 2>>chrome.err
}
# cycle: one cycle of the node's agent, with the test's ledger
cycle() { k8shazgpu-nodeagent -1 -N "$N" -t topo.yaml 2>>agent.log; }

cleanup || { echo "Bail out! t9780: what an earlier run left is not gone"; exit 1; }
# (after start_redis, whose own EXIT trap this one replaces)
start_redis
trap 'stop_redis; cleanup || exit 1' EXIT
trap 'exit 1' INT TERM
gpu-reserve init -g 3 -p fake >/dev/null
gpu-reserve reserve -G 0 -t manual -u alice -U alice -n 'fine-tune <b>7B</b>' -d 2h >/dev/null
yaml2json "$TOP/manifests/deviceclasses.yaml" | claim-make -a >/dev/null
crd_apply "$TOP/manifests/crds/gpuworkloads.yaml" || { echo "Bail out! the GPUWorkload CRD is not served"; exit 1; }
# the node, as the sim makes its KWOK nodes (but for the label type=kwok
# that other tests list the sim's nodes by), then published by its agent
yaml2json topo.yaml | jq -c -f "$TOP/scripts/jq/sim-topology.jq" | jq -c 'del(.metadata.labels.type)' | claim-make -a >/dev/null
cycle
# the first MIG device the node's agent names
mig1=$(k get node "$N" -o json | jq -r '[.metadata.annotations["agentaflow.gpu/devices"] | fromjson | .[]
	| select(.mig != null) | .uuid] | first')

# the GPUWorkload a second before the pod, so that it waits longer
jq -n -c --arg ns "$NS" '{apiVersion: "v1", kind: "Namespace", metadata: {name: $ns}},
	{apiVersion: "canhazgpu.dev/v1alpha1", kind: "GPUWorkload", metadata: {name: "big", namespace: $ns},
	 spec: {modelName: "llama", gpuCount: 8, nodeSelector: {"t9780-web": "nowhere"}}}' | claim-make -a >/dev/null
sleep 1
jq -n -c --arg ns "$NS" --arg n "$N" --arg mig "$mig1" '
	{tolerations: [{operator: "Exists"}],
	 affinity: {nodeAffinity: {requiredDuringSchedulingIgnoredDuringExecution: {nodeSelectorTerms: [
		{matchFields: [{key: "metadata.name", operator: "In", values: [$n]}]}]}}}} as $on
	| {name: "main", image: "registry.invalid/none:0", resources: {claims: [{name: "dev"}]}} as $c
	| def claim($name; $class; $cel): {apiVersion: "resource.k8s.io/v1", kind: "ResourceClaim",
		metadata: {name: $name, namespace: $ns}, spec: {devices: {requests: [{name: "dev",
		exactly: {deviceClassName: $class, selectors: [{cel: {expression: $cel}}]}}]}}};
	def pod($name; $claim): {apiVersion: "v1", kind: "Pod", metadata: {name: $name, namespace: $ns},
		spec: ($on + {resourceClaims: [{name: "dev", resourceClaimName: $claim}], containers: [$c]})};
	claim("whole-one"; "gpu.canhazgpu.dev"; "device.attributes[\"gpu.canhazgpu.dev\"].index == 1"),
	claim("mig-a"; "mig.canhazgpu.dev"; "device.attributes[\"gpu.canhazgpu.dev\"].uuid == \"\($mig)\""),
	claim("nine"; "gpu.canhazgpu.dev"; "device.attributes[\"gpu.canhazgpu.dev\"].index == 9"),
	pod("train"; "whole-one"), pod("infer"; "mig-a"), pod("waits"; "nine")' |
	claim-make -a >/dev/null
running() { test "$(k get pods -n "$NS" --field-selector=status.phase=Running -o name | wc -l)" = 2; }
eventually 90 running || echo "# the pods: $(k get pods -n "$NS" -o wide 2>&1)"
cycle

page_text='k8shazgpu -n '$NS' web --node '$N' --once --refresh 0 | text | when'
check_output 'the page of the node and the namespace, exact: host user, pods by their claims, the queue' \
	"$page_text" <<'EOF'
k8shazgpu status
as of NOW
1 node, 2 GPUs and 2 MIG devices: 1 free, 3 held, 0 unhealthy
node t9780-web Ready
NVIDIA-H100-80GB-HBM3; published T ago
Device  Health  Held by, for how long
GPU 0  ok  host alice (manual, fine-tune <b>7B</b>) for T
GPU 1  ok  pod t9780-web/train (claim whole-one) for T
GPU 2 MIG 3g.40gb  ok  pod t9780-web/infer (claim mig-a) for T
GPU 2 MIG 3g.40gb  ok  free
Queue
Waiting  Wants  For
workload t9780-web/big  8 GPUs  T
pod t9780-web/waits  claims nine  T
EOF

# a user of the namespace alone (manifests/users/rbac.yaml), by a token
k get clusterrole k8shazgpu-user >/dev/null 2>&1 || made_roles=1
yaml2json "$TOP/manifests/users/rbac.yaml" | claim-make -a >/dev/null &&
	k create serviceaccount viewer -n "$NS" >/dev/null &&
	k create rolebinding viewer -n "$NS" --clusterrole=k8shazgpu-user --serviceaccount="$NS:viewer" >/dev/null &&
	k create clusterrolebinding t9780-web-viewer --clusterrole=k8shazgpu-user-cluster --serviceaccount="$NS:viewer" >/dev/null &&
	token=$(k create token viewer -n "$NS") &&
	yaml2json "$KUBECONFIG" | jq -c --arg token "$token" \
		'.users = [{name: "viewer", user: {token: $token}}] | .contexts |= map(.context.user = "viewer")' >viewer.kubeconfig ||
	echo "# no viewer"
check_output 'a user of one namespace, every namespace asked: what is refused named, the rest shown' \
	"KUBECONFIG=viewer.kubeconfig k8shazgpu web --node $N --once --refresh 0 | text | when" <<'EOF'
k8shazgpu status
as of NOW
Missing: resourceclaims.resource.k8s.io: GET /apis/resource.k8s.io/v1/resourceclaims: 403 Forbidden: resourceclaims.resource.k8s.io is forbidden: User "system:serviceaccount:t9780-web:viewer" cannot list resource "resourceclaims" in API group "resource.k8s.io" at the cluster scope
Missing: pods: GET /api/v1/pods: 403 Forbidden: pods is forbidden: User "system:serviceaccount:t9780-web:viewer" cannot list resource "pods" in API group "" at the cluster scope
Missing: gpuworkloads.canhazgpu.dev: GET /apis/canhazgpu.dev/v1alpha1/gpuworkloads: 403 Forbidden: gpuworkloads.canhazgpu.dev is forbidden: User "system:serviceaccount:t9780-web:viewer" cannot list resource "gpuworkloads" in API group "canhazgpu.dev" at the cluster scope
1 node, 2 GPUs and 2 MIG devices: 3 free, 1 held, 0 unhealthy
node t9780-web Ready
NVIDIA-H100-80GB-HBM3; published T ago
Device  Health  Held by, for how long
GPU 0  ok  host alice (manual, fine-tune <b>7B</b>) for T
GPU 1  ok  free
GPU 2 MIG 3g.40gb  ok  free
GPU 2 MIG 3g.40gb  ok  free
Queue
nothing waits
EOF
check 'the same user, its namespace asked (-n): the whole page' \
	"KUBECONFIG=viewer.kubeconfig k8shazgpu -n $NS web --node $N --once --refresh 0 | text | when >viewer.txt &&
	 eval \"\$page_text\" | diff - viewer.txt"

k8shazgpu -n "$NS" web --node "$N" --port 0 --refresh 0 >serve.out 2>serve.err &
wpid=$!
eventually 10 grep -q serving serve.out
url=$(sed -n 's|^serving \(http://.*\)$|\1|p' serve.out)
check_output 'in Chromium, served: the same text' '
	chrome --dump-dom "$url" >dom.html && text <dom.html | when >chrome.txt &&
	eval "$page_text" | diff - chrome.txt && echo same' <<'EOF'
same
EOF
check_output 'in Chromium: a phone-sized screenshot (390x844 PNG)' '
	chrome --window-size=390,844 --hide-scrollbars --screenshot="$SCRATCH/status-page.png" "$url" >/dev/null &&
	od -A n -t u1 -j 16 -N 8 status-page.png | awk "{print \$1 * 16777216 + \$2 * 65536 + \$3 * 256 + \$4, \$5 * 16777216 + \$6 * 65536 + \$7 * 256 + \$8}"' <<'EOF'
390 844
EOF
kill -TERM $wpid
wait $wpid
check_output 'the server stopped by TERM: 0, nothing on stderr' "echo exit $?; cat serve.err" <<'EOF'
exit 0
EOF

stop_redis
check_output 'the ledger down: the agent fails (75) and says so on its Node' 'cycle; echo "exit $?"' <<'EOF'
exit 75
EOF
check_output 'the page names the node ledger missing, and shows the rest as last published' \
	"$page_text | sed 's/:$REDIS_PORT:/:PORT:/'" <<'EOF'
k8shazgpu status
as of NOW
Missing: node t9780-web: the ledger (Redis) unreachable since WHEN: redis 127.0.0.1:PORT: Connection refused; its host users as last published
1 node, 2 GPUs and 2 MIG devices: 1 free, 3 held, 0 unhealthy
node t9780-web Ready
NVIDIA-H100-80GB-HBM3; published T ago
Device  Health  Held by, for how long
GPU 0  ok  host alice (manual, fine-tune <b>7B</b>) for T
GPU 1  ok  pod t9780-web/train (claim whole-one) for T
GPU 2 MIG 3g.40gb  ok  pod t9780-web/infer (claim mig-a) for T
GPU 2 MIG 3g.40gb  ok  free
Queue
Waiting  Wants  For
workload t9780-web/big  8 GPUs  T
pod t9780-web/waits  claims nine  T
EOF
done_testing
