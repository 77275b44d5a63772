#!/bin/sh
# The simulated cluster t/run started with the test topology: nodes Ready
# with their exact MIG capacities, kube-scheduler placing MIG pods and KWOK
# running them, a 13th 2g.20gb pod left Pending, every listener on loopback.
# The real node, when the cluster has one (t/9700), is tainted: no pod here
# lands on it.
. "$(dirname "$0")/lib.sh"

need_cluster
. "$K8SHAZGPU_SIM_DIR/state"
REAL=
[ ! -f "$K8SHAZGPU_SIM_DIR/node-state" ] || REAL=$(. "$K8SHAZGPU_SIM_DIR/node-state"; echo "$NODE_NAME")
NS=t9000-sim

# NAME: a pod asking for one 2g.20gb MIG device, tolerating the KWOK taint.
mig_pod() {
	cat <<EOF
{"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "$1", "namespace": "$NS"},
 "spec": {"tolerations": [{"key": "kwok.x-k8s.io/node", "operator": "Exists", "effect": "NoSchedule"}],
  "containers": [{"name": "main", "image": "registry.invalid/none:0",
   "resources": {"limits": {"nvidia.com/mig-2g.20gb": "1"}}}]}}
EOF
}

phases() { k get pods -n "$NS" -o json | jq -r '.items[] | "\(.metadata.name) \(.status.phase) \(.spec.nodeName)"' | sort -V; }
all_running() { [ "$(phases | grep -c ' Running medium$')" -eq "$1" ]; }

{
	cat <<'EOF'
etcd running
apiserver running
controller-manager running
scheduler running
kwok running
agent small
agent medium
agent h100
agent l4
nodes 4
EOF
	[ -z "$REAL" ] || printf '%s\n' "redis running" \
		"registry $(command -v docker-registry >/dev/null && echo running || echo absent)" \
		"containerd running" "kubelet running" "node-agent running" \
		"plugin $(command -v dra-plugin >/dev/null && echo running || echo absent)"
} >status.expect
check_output 'status: every component running' \
	'k8shazgpu-sim status | awk "{print \$1, \$2}"' <status.expect

{
	printf '%s\n' "KUBECONFIG=$K8SHAZGPU_SIM_DIR/kubeconfig" "ETCD_ENDPOINT=http://127.0.0.1:$ETCD_PORT" \
		"K8SHAZGPU_SIM_DIR=$K8SHAZGPU_SIM_DIR"
	[ -z "$REAL" ] || echo "K8SHAZGPU_REDIS=$K8SHAZGPU_SIM_DIR/redis/redis.sock"
} >env.expect
check_output 'env: KUBECONFIG first, then the etcd endpoint, the state directory, the real node'"'"'s ledger' \
	'k8shazgpu-sim env' <env.expect

check 'the etcd endpoint answers' 'curl -fsS "$(k8shazgpu-sim env | sed -n "s/^ETCD_ENDPOINT=//p")/health" | grep -q true'

check_output 'both nodes Ready with their exact MIG capacities' \
	"k get nodes -l type=kwok -o json | jq -r '.items[] | [.metadata.name,
		(.status.conditions[] | select(.type == \"Ready\") | .status),
		.status.allocatable[\"nvidia.com/mig-1g.10gb\"] // \"-\", .status.allocatable[\"nvidia.com/mig-2g.20gb\"] // \"-\",
		.status.allocatable[\"nvidia.com/gpu\"] // \"-\"] | join(\" \")' | sort" <<'EOF'
h100 True - - 2
l4 True - - 2
medium True 4 12 -
small True 28 - -
EOF

check 'resource.k8s.io/v1 is served (DRA)' \
	'k api-resources --api-group=resource.k8s.io -o name | grep -qx resourceslices.resource.k8s.io &&
	 k get --raw /apis/resource.k8s.io/v1 | jq -e ".resources | any(.name == \"resourceclaims\")"'

check 'the unprivileged user is refused with 403' \
	'code=$(curl -s -o /dev/null -w "%{http_code}" --cacert "$K8SHAZGPU_SIM_DIR/pki/ca.crt" \
		--cert "$K8SHAZGPU_SIM_DIR/pki/nobody.crt" --key "$K8SHAZGPU_SIM_DIR/pki/nobody.key" \
		"https://127.0.0.1:$API_PORT/api/v1/nodes") && test "$code" = 403 &&
	 ! k --kubeconfig="$K8SHAZGPU_SIM_DIR/kubeconfig-nobody" get nodes 2>err && grep -q Forbidden err'

k create namespace "$NS" >/dev/null 2>&1
eventually 60 k get serviceaccount default -n "$NS"

check_output 'a 2g.20gb pod is placed on medium and runs' \
	'mig_pod mig-1 | k create -f - >/dev/null && eventually 60 all_running 1 ; phases' <<'EOF'
mig-1 Running medium
EOF

check_output 'twelve 2g.20gb pods all run on medium' \
	'for i in 2 3 4 5 6 7 8 9 10 11 12; do mig_pod mig-$i; done | k create -f - >/dev/null &&
	 eventually 90 all_running 12; phases | sort | uniq -c -f1 | awk "{print \$1, \$3, \$4}"' <<'EOF'
12 Running medium
EOF

unschedulable() {
	k get pod mig-13 -n "$NS" -o json | jq -e -r '.status.conditions[]
		| select(.type == "PodScheduled" and .status == "False" and .reason == "Unschedulable") | .message'
}
if [ -n "$REAL" ]; then
	NOT_AVAILABLE="0/5 nodes are available: 1 node(s) had untolerated taint(s), 4 Insufficient nvidia.com/mig-2g.20gb."
else
	NOT_AVAILABLE="0/4 nodes are available: 4 Insufficient nvidia.com/mig-2g.20gb."
fi
check_output 'the 13th stays Pending: Insufficient nvidia.com/mig-2g.20gb (the real node: its taint)' \
	'mig_pod mig-13 | k create -f - >/dev/null && eventually 60 unschedulable && sleep 2 &&
	 k get pod mig-13 -n "$NS" -o jsonpath="{.status.phase}{\"\\n\"}" &&
	 unschedulable | sed "s/\\. .*/./" &&
	 k get events -n "$NS" --field-selector involvedObject.name=mig-13 -o json |
		jq -r "[.items[].reason] | unique | .[]"' <<EOF
Pending
$NOT_AVAILABLE
FailedScheduling
EOF

listeners() {
	for c in etcd apiserver controller-manager scheduler kwok; do
		pid=$(cat "$K8SHAZGPU_SIM_DIR/$c.pid")
		ss -ltnpH | grep "pid=$pid," | awk -v c="$c" '{print c, $4}'
	done
}
if command -v ss >/dev/null 2>&1; then
	check_output 'every listener is on 127.0.0.1, on the recorded ports' 'listeners | sort' <<EOF
$(printf '%s\n' "apiserver 127.0.0.1:$API_PORT" "controller-manager 127.0.0.1:$CM_PORT" \
	"etcd 127.0.0.1:$ETCD_PEER_PORT" "etcd 127.0.0.1:$ETCD_PORT" "kwok 127.0.0.1:$KWOK_PORT" \
	"scheduler 127.0.0.1:$SCHED_PORT" | sort)
EOF
else
	t_result 0 "every listener on 127.0.0.1 # SKIP no ss"
fi

check_output 'stop and start one component' \
	'k8shazgpu-sim stop scheduler && { k8shazgpu-sim status; echo "exit $?"; } | awk "/^scheduler|^exit/ {print \$1, \$2}" &&
	 k8shazgpu-sim start scheduler && k8shazgpu-sim status >/dev/null; echo "exit $?"' <<'EOF'
scheduler stopped
exit 1
exit 0
EOF

check 'up again says it is already up' \
	'k8shazgpu-sim up 2>err && grep -q "already up" err'

# Leave the cluster as found: the pods go, and medium's devices are free again.
k delete namespace "$NS" --wait=true --timeout=90s >/dev/null 2>&1
check 'cleanup: the test namespace is gone' '! k get namespace "$NS" 2>/dev/null'

done_testing
