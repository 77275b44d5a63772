#!/bin/sh
# The real node of the shared cluster (scripts/sim-node): a kubelet named
# after the hostname, Ready and tainted; busybox pods that really run, with
# logs, exec and port-forward through the API server; pod addresses on the
# sim's own subnet; the kubelet's listeners on loopback; the ledger on its
# unix socket; stop and start of the kubelet. Then a second sim of this
# script's own, brought up and down: down leaves no process, mount,
# bridge, cgroup, socket or CDI file behind.
. "$(dirname "$0")/lib.sh"

need_cluster
[ "$(id -u)" = 0 ] || skip_all "the real node needs root"
D=$K8SHAZGPU_SIM_DIR
[ -f "$D/node-state" ] || skip_all "the shared cluster has no real node (up --no-node)"
. "$D/state"
. "$D/node-state"
NS=t9700-node
HOST=$(hostname | tr '[:upper:]' '[:lower:]')

# NAME COMMAND-JSON: a busybox pod for the real node, tolerating its taint.
pod() {
	cat <<EOF
{"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "$1", "namespace": "$NS"},
 "spec": {"restartPolicy": "Never", "nodeSelector": {"kubernetes.io/hostname": "$HOST"},
  "tolerations": [{"key": "k8shazgpu.dev/real-node", "operator": "Exists", "effect": "NoSchedule"}],
  "terminationGracePeriodSeconds": 1,
  "containers": [{"name": "main", "image": "k8s.io/busybox:local", "imagePullPolicy": "Never",
   "command": $2}]}}
EOF
}
phase() { k get pod "$1" -n "$NS" -o jsonpath='{.status.phase}'; }
phase_is() { [ "$(phase "$1")" = "$2" ]; }
WEB='["sh", "-c", "mkdir -p /tmp/www && echo served from the pod >/tmp/www/index.html && exec httpd -f -p 8080 -h /tmp/www"]'

check_output 'the real node: named after the hostname, Ready, kubelet 1.34.4, tainted and labelled' \
	"k get node $HOST -o json | jq -r '.metadata.name,
		(.status.conditions[] | select(.type == \"Ready\") | .status), .status.nodeInfo.kubeletVersion,
		(.spec.taints[] | \"\\(.key)=\\(.value):\\(.effect)\"), .metadata.labels[\"k8shazgpu.dev/real-node\"],
		(.status.addresses[] | select(.type == \"Hostname\") | .address)'" <<EOF
$HOST
True
v1.34.4
k8shazgpu.dev/real-node=true:NoSchedule
true
$HOST
EOF

k create namespace "$NS" >/dev/null 2>&1
eventually 60 k get serviceaccount default -n "$NS"

check_output 'a busybox pod runs echo: Completed, and kubectl logs has its output' \
	'pod echo "[\"echo\", \"hello from $HOST\"]" | k create -f - >/dev/null &&
	 eventually 60 phase_is echo Succeeded &&
	 k get pod echo -n "$NS" --no-headers -o custom-columns=S:.status.containerStatuses[0].state.terminated.reason,N:.spec.nodeName &&
	 k logs echo -n "$NS"' <<EOF
Completed   $HOST
hello from $HOST
EOF

pod web "$WEB" | k create -f - >/dev/null
k wait --for=condition=Ready pod/web -n "$NS" --timeout=60s >/dev/null 2>&1

check_output 'kubectl exec runs in the pod' \
	'k exec web -n "$NS" -- sh -c "cat /tmp/www/index.html; echo \$((6 * 7)); hostname"' <<'EOF'
served from the pod
42
web
EOF

PF_PORT=$(free_port)
k port-forward -n "$NS" pod/web "$PF_PORT:8080" >pf.log 2>&1 &
PF=$!
fetch() { curl -fsS --max-time 2 "http://127.0.0.1:$PF_PORT/index.html"; }
check_output 'kubectl port-forward reaches busybox httpd in the pod' \
	'eventually 20 fetch && fetch' <<'EOF'
served from the pod
EOF
kill "$PF" 2>/dev/null
wait "$PF" 2>/dev/null

# in_subnet IP: IP lies in the sim's 198.18.N.0/24, part of 198.18.0.0/15
in_subnet() {
	case $SUBNET in 198.18.*.0/24) ;; *) return 1 ;; esac
	[ "${1%.*}.0/24" = "$SUBNET" ] && [ "${1##*.}" -ge 2 ] && [ "${1##*.}" -le 254 ]
}
check 'the pod has an address on the sim'"'"'s own bridge subnet (198.18.N.0/24)' \
	'ip=$(k get pod web -n "$NS" -o jsonpath="{.status.podIP}") && echo "pod IP $ip, subnet $SUBNET" &&
	 in_subnet "$ip" && ip -4 -br addr show "$BRIDGE" | grep -q " ${SUBNET%.0/24}.1/24"'

if command -v ss >/dev/null 2>&1; then
	check_output 'the kubelet listens on loopback only, on the recorded ports' \
		'ss -ltnpH | grep "pid=$(cat "$D/kubelet.pid")," | awk "{print \$4}" | sort' <<EOF
$(printf '%s\n' "$KUBELET_ADDR:$KUBELET_HEALTHZ_PORT" "$KUBELET_ADDR:$KUBELET_PORT" | sort)
EOF
else
	t_result 0 "kubelet listeners # SKIP no ss"
fi

check_output 'env names the ledger socket; the ledger holds the node'"'"'s 5 GPUs' \
	'k8shazgpu-sim env | grep ^K8SHAZGPU_REDIS= &&
	 redis-cli -s "$D/redis/redis.sock" get canhazgpu:gpu_count &&
	 redis-cli -s "$D/redis/redis.sock" config get port | tail -n 1' <<EOF
K8SHAZGPU_REDIS=$D/redis/redis.sock
5
0
EOF

slice() {
	k get resourceslices -o json | jq -r --arg n "$HOST" '.items[] | select(.spec.nodeName == $n)
		| [(.spec.devices | length), (.spec.devices | map(.attributes.type.string) | unique | join("+"))] | join(" ")'
}
slice_is() { [ "$(slice)" = "$1" ]; }
check_output 'the node agent publishes its GPUs: 4 whole, 4 MIG devices on GPU 4' \
	'eventually 30 slice_is "8 gpu+mig"; slice' <<'EOF'
8 gpu+mig
EOF

ready() { [ "$(k get node "$HOST" -o jsonpath='{.status.conditions[?(@.type=="Ready")].status}')" = True ]; }
check_output 'stop and start the kubelet' \
	'k8shazgpu-sim stop kubelet && { k8shazgpu-sim status; echo "exit $?"; } | awk "/^kubelet|^exit/ {print \$1, \$2}" &&
	 k8shazgpu-sim start kubelet && ready && k8shazgpu-sim status >/dev/null; echo "exit $?"' <<'EOF'
kubelet stopped
exit 1
exit 0
EOF

# (a kubelet just restarted answers exec with "pod does not exist" until it
# has synced its pods again: exec is tried until it answers)
check_output 'a restarted kubelet keeps running pods; its slice is back within a cycle' \
	'eventually 30 slice_is "8 gpu+mig" && phase web && echo &&
	 eventually 30 k exec web -n "$NS" -- true && k exec web -n "$NS" -- echo still here' <<'EOF'
Running
still here
EOF

if command -v dra-plugin >/dev/null 2>&1; then
	check_output 'stop and start the DRA plugin: its sockets go and come back' '
		reg=$D/kubelet/plugins_registry/gpu.canhazgpu.dev-reg.sock dra=$D/kubelet/plugins/gpu.canhazgpu.dev/dra.sock
		k8shazgpu-sim stop plugin && { [ -e "$reg" ] || echo no reg; } && { [ -e "$dra" ] || echo no dra; } &&
		k8shazgpu-sim start plugin && [ -S "$reg" ] && [ -S "$dra" ] && echo both back' <<'EOF'
no reg
no dra
both back
EOF
else
	t_result 0 "stop and start the DRA plugin # SKIP dra-plugin not built"
fi

k delete namespace "$NS" --wait=true --timeout=90s >/dev/null 2>&1
check 'cleanup: the test namespace is gone' '! k get namespace "$NS" 2>/dev/null'

# ---- a second sim: up, a pod running, down leaves nothing ----------------

S=$SCRATCH/sim
s() { K8SHAZGPU_SIM_DIR=$S k8shazgpu-sim "$@"; }
stop_second() { s down >/dev/null 2>&1 || :; }
trap stop_second EXIT
check 'a second sim comes up beside the shared one, with its own real node' \
	's up -t test 2>up2.log || { tail -n 20 up2.log; exit 1; }
	 s status >/dev/null'
. "$S/node-state" 2>/dev/null || :
check 'its node has another bridge and subnet, other ports' \
	'. "$S/state"; . "$S/node-state"; echo "$BRIDGE $SUBNET $KUBELET_PORT"
	 test "$BRIDGE" != "$(. "$D/node-state"; echo "$BRIDGE")" && test "$SUBNET" != "$(. "$D/node-state"; echo "$SUBNET")" &&
	 test "$KUBELET_PORT" != "$(. "$D/state"; echo "$KUBELET_PORT")"'

# what the node has while a pod runs: PIDs (node components, shims, pod
# processes), mounts, the bridge, the pods' cgroups, sockets, CDI files
s kubectl create namespace "$NS" >/dev/null 2>&1
eventually 60 s kubectl get serviceaccount default -n "$NS"
pod web "$WEB" | s kubectl create -f - >/dev/null 2>&1
s kubectl wait --for=condition=Ready pod/web -n "$NS" --timeout=60s >/dev/null 2>&1
mkdir -p "$S/cdi" && echo '{}' >"$S/cdi/k8shazgpu-test_claim.json" # as the plugin writes them
ids=$(ls "$S/containerd/state/io.containerd.runtime.v2.task/k8s.io" 2>/dev/null)
{
	cat "$S"/redis.pid "$S"/containerd.pid "$S"/kubelet.pid "$S"/agent-*.pid "$S"/plugin*.pid 2>/dev/null
	cat "$S"/containerd/state/io.containerd.runtime.v2.task/k8s.io/*/shim.pid 2>/dev/null
	for id in $ids; do cat /sys/fs/cgroup/pids/k8s.io/"$id"/cgroup.procs 2>/dev/null; done
} | sort -un >pids
awk -v d="$S/" 'substr($5, 1, length(d)) == d {print $5}' /proc/self/mountinfo | sort >mounts
for id in $ids; do ls -d /sys/fs/cgroup/*/k8s.io/"$id" 2>/dev/null; done >cgroups
find "$S" "$SHIM_DIR" -type s 2>/dev/null | sort >sockets
check 'while a pod runs there are node processes, mounts, cgroups, sockets, a bridge, a CDI file' \
	'echo "$(wc -l <pids) pids, $(wc -l <mounts) mounts, $(wc -l <cgroups) cgroups, $(wc -l <sockets) sockets"
	 [ "$(s kubectl get pod web -n "$NS" -o jsonpath="{.status.phase}")" = Running ] &&
	 [ "$(wc -l <pids)" -ge 7 ] && [ "$(wc -l <mounts)" -ge 3 ] && [ "$(wc -l <cgroups)" -ge 2 ] &&
	 grep -q "/redis.sock$" sockets && grep -q "/containerd.sock$" sockets &&
	 ip link show "$BRIDGE" >/dev/null && ls "$S/cdi" | grep -q .'

alive() { while read -r p; do [ ! -d "/proc/$p" ] || grep -qs '^State:.*Z' "/proc/$p/status" || echo "pid $p: $(tr '\0' ' ' <"/proc/$p/cmdline")"; done <pids; }
check_output 'down stops it' 's down 2>&1; echo "exit $?"' <<'EOF'
exit 0
EOF
check_output 'down left no process' 'alive' </dev/null
check_output 'down left no mount' 'while read -r m; do grep -F " $m " /proc/self/mountinfo; done <mounts' </dev/null
check_output 'down left no bridge' 'ip link show "$BRIDGE" 2>/dev/null' </dev/null
check_output 'down left no cgroup of the pods' 'while read -r g; do [ ! -d "$g" ] || echo "$g"; done <cgroups' </dev/null
check_output 'down left no socket' 'while read -r f; do [ ! -e "$f" ] || echo "$f"; done <sockets; [ ! -d "$SHIM_DIR" ] || echo "$SHIM_DIR"' </dev/null
check_output 'down left no CDI file, no state directory, no CNI cache or log link' \
	'ls -d "$S" 2>/dev/null; ls /var/lib/cni/results 2>/dev/null | grep -F "$NETNAME"
	 for id in $ids; do ls /var/lib/cni/results 2>/dev/null | grep -F "$id"; ls /var/log/containers 2>/dev/null | grep -F "$id"; done' </dev/null
trap - EXIT

done_testing
