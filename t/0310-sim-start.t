#!/bin/sh
# k8shazgpu-sim starts where another program holds its ports, beside a
# second sim started at the same instant, and after a component fails;
# each failure prints the log's tail, down -k keeps every log, down waits
# for every process it stops; the build cache refuses a binary of the
# wrong version, a read-only directory and a full disk by name. Clusters
# of this file's own (no real node, except the last, as root), beside the
# shared one t/run starts meanwhile.
. "$(dirname "$0")/lib.sh"

command -v gpu-probe >/dev/null 2>&1 || skip_all "the tools are not built"
bindir=$(sim-build bindir)
[ -x "$bindir/kube-apiserver" ] || skip_all "the control plane is not built (t/run all builds it)"

# ---- free-port ----

check 'free-port: 13 distinct ports of the range, none in use now' '
	free-port 13 >p && test "$(sort -u p | wc -l)" = 13 &&
	awk "\$1 < 20000 || \$1 > 31999 { exit 1 }" p &&
	for q in $(cat p); do ! ss -Htan "sport = :$q" | grep -q .; done'
check 'free-port: 8 draws at the same instant are 8 different sets' '
	for i in 1 2 3 4 5 6 7 8; do free-port 13 | paste -sd" " >"draw$i" & done; wait &&
	test "$(cat draw? | sort -u | wc -l)" = 8'
check_output 'free-port: a range too small, and a bad count, are usage errors' \
	'free-port -r 5-6 3; echo "exit $?"; free-port x; echo "exit $?"' <<'EOF'
exit 2
exit 2
EOF

# ---- ports taken by another program ----

# hold PORT...: listen on each until told to stop (a program that got
# there first); sets holder.
hold() {
	python3 -c '
import socket, sys, time
socks = []
for p in sys.argv[1:]:
    s = socket.socket()
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind(("127.0.0.1", int(p)))
    s.listen()
    socks.append(s)
print("held", flush=True)
time.sleep(600)' "$@" >held &
	holder=$!
	eventually 10 grep -q held held
}
state_port() { sed -n "s/^$2=//p" "$1/state"; }
procs_of() { # DIR: the PIDs of its recorded processes still running
	for f in "$1"/*.pid; do
		[ -s "$f" ] && [ -d "/proc/$(cat "$f")" ] && ! grep -q '^State:.*Z' "/proc/$(cat "$f")/status" 2>/dev/null &&
			cat "$f"
	done 2>/dev/null
	return 0
}

A=$SCRATCH/a
B=$SCRATCH/b
trap 'kill $holder 2>/dev/null; K8SHAZGPU_SIM_DIR=$A k8shazgpu-sim down >/dev/null 2>&1
	K8SHAZGPU_SIM_DIR=$B k8shazgpu-sim down >/dev/null 2>&1; stop_redis' EXIT
set -- $(free-port 13)
ports="$*"
# etcd's client and peer ports, the API server's, the controller-manager's,
# the scheduler's and KWOK's: every control-plane listener is taken
hold "$1" "$2" "$3" "$4" "$5" "$6"
taken="$1 $2 $3 $4 $5 $6"
# and a second sim starts at the same instant
K8SHAZGPU_SIM_DIR=$B k8shazgpu-sim up --no-node >b.out 2>b.err &
bpid=$!
check 'up: every port taken by another program gets a new one; the cluster comes up' '
	K8SHAZGPU_SIM_DIR=$A K8SHAZGPU_SIM_PORTS="$ports" k8shazgpu-sim up --no-node >a.out 2>a.err'
check_output 'up: it says which component moved, once each' \
	'sed -n "s/^k8shazgpu-sim: \([a-z-]*\): a port was taken by another program; trying again on.*/\1/p" a.err' <<'EOF'
etcd
apiserver
controller-manager
scheduler
kwok
EOF
check 'up: the state, the kubeconfig and the listeners name the new ports, none of those taken' '
	for v in ETCD_PORT ETCD_PEER_PORT API_PORT CM_PORT SCHED_PORT KWOK_PORT; do
		p=$(state_port "$A" $v) && case " $taken " in *" $p "*) exit 1 ;; esac
	done &&
	grep -q "server: https://127.0.0.1:$(state_port "$A" API_PORT)\$" "$A/kubeconfig" &&
	ss -Hltnp "sport = :$(state_port "$A" API_PORT)" | grep -q "pid=$(cat "$A/apiserver.pid"),"'
check_output 'the moved cluster answers: its two nodes' \
	'K8SHAZGPU_SIM_DIR=$A k8shazgpu-sim kubectl get nodes -o name' <<'EOF'
node/medium
node/small
EOF
wait $bpid
echo "exit $?" >b.rc
check 'a second sim started at the same instant came up too, on other ports' '
	test "$(cat b.rc)" = "exit 0" && K8SHAZGPU_SIM_DIR=$B k8shazgpu-sim status >/dev/null &&
	test "$(state_port "$A" API_PORT)" != "$(state_port "$B" API_PORT)" &&
	test "$(K8SHAZGPU_SIM_DIR=$B k8shazgpu-sim kubectl get nodes -o name | wc -l)" = 2'
kill $holder

# ---- a component that fails to start ----

cp "$A/kubeconfig-scheduler" kubeconfig-scheduler.good
K8SHAZGPU_SIM_DIR=$A k8shazgpu-sim stop scheduler
echo 'not: [a kubeconfig' >"$A/kubeconfig-scheduler"
check 'a component that exits while starting is tried once more, then fails with exit 1' \
	'K8SHAZGPU_SIM_DIR=$A must_fail 1 k8shazgpu-sim start scheduler 2>start.err'
check_output 'the failure names the component, shows its log, and says where every log is' \
	'sed -n -e "s/^\(k8shazgpu-sim: scheduler .*\)/\1/p" -e "s/^--- the last lines of .*\/\(scheduler.log\):/tail of \1/p" \
		-e "/error loading config file/{s/.*\(error loading config file\).*/    \1/p;}" -e "s|$A|STATE|; s/^\(k8shazgpu-sim: every log .*\)/\1/p" start.err | uniq' <<'EOF'
k8shazgpu-sim: scheduler exited while starting; trying once more
tail of scheduler.log
    error loading config file
k8shazgpu-sim: scheduler exited while starting, twice
tail of scheduler.log
    error loading config file
k8shazgpu-sim: every log of this cluster is in STATE; 'k8shazgpu-sim down -k' keeps them
EOF
cp kubeconfig-scheduler.good "$A/kubeconfig-scheduler"
check 'with its configuration mended it starts' \
	'K8SHAZGPU_SIM_DIR=$A k8shazgpu-sim start scheduler && K8SHAZGPU_SIM_DIR=$A k8shazgpu-sim status >/dev/null'

# ---- down keeps the logs when asked, and waits ----

procs_of "$A" >a.pids
check 'down -k: every log kept where K8SHAZGPU_SIM_LOGS says, and named' '
	K8SHAZGPU_SIM_DIR=$A K8SHAZGPU_SIM_LOGS=$SCRATCH/kept k8shazgpu-sim down -k 2>down.err &&
	cat down.err && test "$(cat down.err)" = "k8shazgpu-sim: logs kept in $SCRATCH/kept" &&
	for l in etcd apiserver controller-manager scheduler kwok agent-small agent-medium; do
		grep -q . "kept/$l.log" || exit 1
	done && grep -c "^=== " kept/scheduler.log && test "$(grep -c "^=== " kept/scheduler.log)" = 5 && grep -q "error loading config file" kept/scheduler.log'
check 'down: the state directory is gone and so is every process it recorded, when down returns' '
	test ! -e "$A" && test -s a.pids && for p in $(cat a.pids); do test ! -d /proc/$p || grep -q "^State:.*Z" /proc/$p/status || exit 1; done'
check_output 'down: an unknown option is a usage error' \
	'K8SHAZGPU_SIM_DIR=$B k8shazgpu-sim down -x 2>/dev/null; echo "exit $?"' <<'EOF'
exit 2
EOF
check 'down (no -k) of the second sim keeps nothing and leaves nothing' '
	procs_of "$B" >b.pids && K8SHAZGPU_SIM_DIR=$B k8shazgpu-sim down 2>down-b.err && test ! -s down-b.err &&
	test ! -e "$B" && ! ls -d "$B".logs.* 2>/dev/null &&
	for p in $(cat b.pids); do test ! -d /proc/$p || grep -q "^State:.*Z" /proc/$p/status || exit 1; done'

# ---- the real node's ports (as root) ----

C=$SCRATCH/c
if [ "$(id -u)" = 0 ] && [ -x "$(node-build bindir)/kubelet" ]; then
	set -- $(free-port 13)
	ports="$*"
	# the kubelet's two ports and the registry's
	hold "$7" "$8" "$9"
	taken="$7 $8 $9"
	trap 'kill $holder 2>/dev/null; K8SHAZGPU_SIM_DIR=$C k8shazgpu-sim down >/dev/null 2>&1; stop_redis' EXIT
	check 'the real node: its ports taken by another program move, and it comes up Ready' '
		K8SHAZGPU_SIM_DIR=$C K8SHAZGPU_SIM_PORTS="$ports" k8shazgpu-sim up -t test >c.out 2>c.err'
	check_output 'the registry and the kubelet moved, once each' \
		'sed -n "s/^k8shazgpu-sim: \([a-z-]*\): a port was taken by another program; trying again on.*/\1/p" c.err' <<'EOF'
registry
kubelet
EOF
	check 'the registry serves on its new port, containerd is told of it, kubelet.yaml names the new ones' '
		r=$(state_port "$C" REGISTRY_PORT) && kp=$(state_port "$C" KUBELET_PORT) && kh=$(state_port "$C" KUBELET_HEALTHZ_PORT) &&
		for p in $r $kp $kh; do case " $taken " in *" $p "*) exit 1 ;; esac; done &&
		curl -fsS "http://127.0.0.1:$r/v2/" && test "$(ls "$C/certs.d")" = "127.0.0.1:$r" &&
		grep -qx "port: $kp" "$C/kubelet.yaml" && grep -qx "healthzPort: $kh" "$C/kubelet.yaml" &&
		K8SHAZGPU_SIM_DIR=$C k8shazgpu-sim status >/dev/null'
	kill $holder
	check 'down: the real node goes too, every process waited for' '
		procs_of "$C" >c.pids && K8SHAZGPU_SIM_DIR=$C k8shazgpu-sim down && test ! -e "$C" &&
		for p in $(cat c.pids); do test ! -d /proc/$p || grep -q "^State:.*Z" /proc/$p/status || exit 1; done'
fi

check_output 'no process of any of these clusters is left (none started twice, none orphaned)' \
	'pgrep -f "$SCRATCH/[abc]/" | while read -r p; do tr "\0" " " </proc/$p/cmdline; echo; done' </dev/null

# ---- the build cache ----

# A cache with stand-ins that say the wrong version, and no Go to rebuild.
fake=$SCRATCH/cache/$(basename "$bindir")
mkdir -p "$fake/stage"
for b in kube-apiserver kube-controller-manager kube-scheduler kubectl etcd kwok; do
	printf '#!/bin/sh\necho "Kubernetes v1.34.4"\n' >"$fake/$b"
done
printf '#!/bin/sh\necho "Kubernetes v0.0.1-hand-made"\n' >"$fake/kube-apiserver"
chmod +x "$fake"/*
mkdir nogo
for t in sed cat dirname mkdir rm df awk tr stat; do ln -s "$(command -v $t)" nogo/$t; done
check_output 'sim-build: a binary of the wrong version in the cache is named and removed, to be built again' \
	'K8SHAZGPU_CACHE=$SCRATCH/cache PATH=$SCRATCH/nogo "$TOP/scripts/sim-build" 2>&1 | sed "s|$SCRATCH|S|g" | grep -v "says version .none."; test ! -e "$fake/kube-apiserver"' <<EOF
k8shazgpu-sim-build: S/cache/$(basename "$bindir")/kube-apiserver: says version 'v0.0.1-hand-made', not v1.34.4: building it again
k8shazgpu-sim-build: go not found: the control plane is built with the Go toolchain
EOF
check_output 'sim-build: a cache directory that cannot be written is named' \
	'K8SHAZGPU_CACHE=/proc/k8shazgpu-cache "$TOP/scripts/sim-build" 2>&1; echo "exit $?"' <<'EOF'
k8shazgpu-sim-build: /proc/k8shazgpu-cache: the build cache is not writable (set K8SHAZGPU_CACHE to a directory you can write)
exit 1
EOF
if [ "$(id -u)" = 0 ] && mkdir small && mount -t tmpfs -o size=8m tmpfs small 2>/dev/null; then
	check_output 'sim-build: a disk without room for the build is named before it starts' \
		'K8SHAZGPU_CACHE=$SCRATCH/small "$TOP/scripts/sim-build" 2>&1 | sed "s|$SCRATCH|S|g"; ls small' <<'EOF'
k8shazgpu-sim-build: S/small: 8 MiB free; building the control plane needs about 6144 MiB (free some, or set K8SHAZGPU_CACHE elsewhere)
EOF
	umount small
fi

done_testing
