# t/lib.sh: TAP helpers shared by every test script. Source it first.
#
#   plan N                      announce N tests (or call done_testing at the end)
#   check 'desc' 'cmds'         ok when cmds (eval'd, in the scratch dir) exit 0
#   check_output 'desc' 'cmd'   ok when cmd's stdout equals the expected text on stdin
#   must_fail N cmd...          true when cmd exits with exactly status N (not a crash)
#   eventually SECONDS cmd...   true once cmd succeeds, tried once a second
#   free_port                   print a TCP port no socket uses now
#   unit NAME ARGS...           run the unit driver build/unit/NAME (under
#                               valgrind when the tools are)
#   skip_all 'why'              skip the whole script
#   start_redis / rcli ARGS...  a redis-server of this script's own; redis-cli on it
#   ledger_keys                 every canhazgpu:* key on it and its value, sorted
#   out CMD...                  CMD's stdout, then "exit N", then its stderr
#   gone S WHAT CMD...          wait up to S seconds for CMD to print nothing
#   deleted S WHAT ARGS...      kubectl delete ARGS until they are gone
#   crd_apply FILE...           apply CRDs once no deletion of them is under
#                               way, and wait until they are Established
#   probe ARGS / pj FILTER ARGS gpu-probe's records (through jq), status, messages
#   tls_serve ARGS...           t/tlsserve with a fresh certificate for 127.0.0.1
#                               (tls.crt) and ARGS, logging to tls.log; sets S
#
# Each script runs in its own fresh scratch directory t/trash/<script>/.
set -u

TOP=$(cd "$(dirname "$0")/.." && pwd)
: "${B:=build}"
case $B in /*) BUILD=$B ;; *) BUILD=$TOP/$B ;; esac
PATH=$BUILD:$TOP/scripts:$PATH
if [ "${VALGRIND:-}" = 1 ] && [ -d "$BUILD/valgrind" ]; then
	PATH=$BUILD/valgrind:$PATH
fi
export PATH TOP BUILD
FIXTURES=$TOP/t/fixtures

T_NAME=$(basename "$0" .t)
SCRATCH=$TOP/t/trash/$T_NAME
rm -rf "$SCRATCH" && mkdir -p "$SCRATCH" && cd "$SCRATCH" || exit 1

t_n=0
t_failed=0

plan() { echo "1..$1"; }

unit() {
	u=$BUILD/unit/$1
	shift
	if [ "${VALGRIND:-}" = 1 ]; then
		valgrind -q --error-exitcode=99 --leak-check=full \
			--errors-for-leak-kinds=definite,indirect "$u" "$@"
	else
		"$u" "$@"
	fi
}

skip_all() { echo "1..0 # SKIP $1"; exit 0; }

# need_cluster stops the script, as a failure, unless t/run started the
# shared cluster; exports its KUBECONFIG.
need_cluster() {
	if [ -z "${K8SHAZGPU_SIM_DIR:-}" ] || [ ! -f "$K8SHAZGPU_SIM_DIR/state" ]; then
		echo "Bail out! no k8shazgpu-sim cluster: run this test with t/run"
		exit 1
	fi
	KUBECONFIG=$K8SHAZGPU_SIM_DIR/kubeconfig
	export KUBECONFIG
}

# k: kubectl against the shared cluster (the sim's kubeconfig).
k() { k8shazgpu-sim kubectl "$@"; }

# ns_deleted NS [SECS]: delete namespace NS without waiting on kubectl,
# then wait (default 180 s) until it is gone; fails, naming what it last
# saw, when it is not.
ns_deleted() {
	k delete namespace "$1" --ignore-not-found --wait=false >/dev/null 2>&1
	gone "${2:-180}" "namespace $1" k get namespace "$1" --ignore-not-found -o name
}

# tls_serve ARGS...: a certificate for 127.0.0.1 (tls.crt, tls.key), then
# t/tlsserve presenting it with ARGS, its log tls.log, stopped at exit;
# S is its URL, TPORT its port. Bails out when either cannot start.
tls_serve() {
	openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes \
		-keyout tls.key -out tls.crt -days 2 -subj /CN=localhost \
		-addext subjectAltName=IP:127.0.0.1,DNS:localhost 2>openssl.err ||
		{ echo "Bail out! openssl could not make a certificate: $(cat openssl.err)"; exit 1; }
	"$TOP/t/tlsserve" -c tls.crt -k tls.key -l tls.log "$@" >tls.out 2>tls.err 3>&- 4>&- &
	tls_pid=$!
	trap 'kill $tls_pid 2>/dev/null' EXIT
	eventually 30 grep -q '^listening on' tls.out ||
		{ echo "Bail out! tlsserve did not start: $(cat tls.err)"; exit 1; }
	TPORT=$(sed -n 's/^listening on 127.0.0.1://p' tls.out)
	S=https://127.0.0.1:$TPORT
}

# kill_groups FILE: TERM every process group whose leader's PID is a line
# of FILE (the sessions a test started with setsid and recorded).
kill_groups() {
	[ -s "$1" ] || return 0
	while read -r kg; do kill -- "-$kg" 2>/dev/null; done <"$1"
	:
}

t_result() {
	t_n=$((t_n + 1))
	if [ "$1" -eq 0 ]; then
		echo "ok $t_n - $2"
	else
		echo "not ok $t_n - $2"
		t_failed=$((t_failed + 1))
	fi
}

check() {
	( eval "$2" ) >"$SCRATCH/.out" 2>&1
	rc=$?
	[ $rc -eq 0 ] || sed 's/^/# /' "$SCRATCH/.out"
	t_result $rc "$1"
}

check_output() {
	cat >"$SCRATCH/.expect"
	( eval "$2" ) >"$SCRATCH/.out" 2>"$SCRATCH/.err"
	if cmp -s "$SCRATCH/.expect" "$SCRATCH/.out"; then
		t_result 0 "$1"
	else
		diff -u "$SCRATCH/.expect" "$SCRATCH/.out" | sed 's/^/# /'
		sed 's/^/# stderr: /' "$SCRATCH/.err"
		t_result 1 "$1"
	fi
}

must_fail() {
	want=$1
	shift
	"$@"
	got=$?
	if [ "$got" -ne "$want" ]; then
		echo "must_fail: $* exited $got, expected $want" >&2
		return 1
	fi
	return 0
}

# eventually SECONDS CMD...: retry CMD $EVENTUALLY_HZ times a second (1
# unless set) until it succeeds (true) or SECONDS seconds of tries have
# failed (false); CMD's output is discarded.
eventually() {
	ev_hz=${EVENTUALLY_HZ:-1}
	ev_n=$(($1 * ev_hz))
	ev_pause=$(awk -v hz="$ev_hz" 'BEGIN { print 1 / hz }')
	shift
	while ! "$@" >/dev/null 2>&1; do
		ev_n=$((ev_n - 1))
		[ $ev_n -gt 0 ] || return 1
		sleep "$ev_pause"
	done
}

# gone SECONDS WHAT CMD...: wait until CMD succeeds printing nothing; else
# say WHAT is not gone, and fail.
gone() {
	gone_s=$1 gone_what=$2
	shift 2
	eventually "$gone_s" prints_nothing "$@" && return 0
	echo "$T_NAME: $gone_what not gone after $gone_s s; last seen: $(printf '%s' "$gone_last" | head -n 3 | tr '\n' ' ')" >&2
	return 1
}
# prints_nothing CMD...: CMD succeeds and prints nothing; what it printed
# (its errors too) is kept in $gone_last for the message of gone.
gone_last=
prints_nothing() { gone_last=$("$@" 2>&1) && [ -z "$gone_last" ]; }

# deleted SECONDS WHAT ARGS...: delete the objects kubectl ARGS name (ones
# not found are no error) and wait until none is listed, deleting again
# each time: a delete answered "not found" while the API server sets a
# CRD's storage up again (after the CRD was applied) leaves the object
# there, and only a later delete removes it.
deleted() {
	del_s=$1 del_what=$2
	shift 2
	gone "$del_s" "$del_what" delete_listed "$@"
}
# probe ARGS: gpu-probe's records of node node1, then "exit N", then its
# messages (the gpu-probe tests).
probe() {
	gpu-probe -N node1 "$@" 2>err
	echo "exit $?"
	cat err
}

# pj FILTER ARGS: probe, with the records through jq -c FILTER.
pj() {
	filter=$1
	shift
	gpu-probe -N node1 "$@" >records 2>err
	st=$?
	jq -c "$filter" records
	echo "exit $st"
	cat err
}

# crd_apply FILE...: apply the CRDs of manifest files (claim-make -a) so
# that they serve: a CRD another test deleted is first waited for until
# gone (applied while it terminates, it would vanish under this test), and
# each is then waited for until Established.
crd_apply() {
	for crd_f; do
		crd_name=$(yaml2json "$crd_f" | jq -r 'select(.kind == "CustomResourceDefinition") | .metadata.name')
		gone 120 "CRD $crd_name, being deleted," crd_deleting "$crd_name" &&
			yaml2json "$crd_f" | claim-make -a >/dev/null &&
			eventually 60 crd_established "$crd_name" || return 1
	done
}
crd_deleting() { k8shazgpu-sim kubectl get crd "$1" --ignore-not-found -o jsonpath='{.metadata.deletionTimestamp}'; }
crd_established() {
	[ "$(k8shazgpu-sim kubectl get crd "$1" -o jsonpath='{.status.conditions[?(@.type=="Established")].status}' 2>/dev/null)" = True ]
}

delete_listed() {
	k8shazgpu-sim kubectl delete "$@" --ignore-not-found --wait=false >/dev/null 2>&1
	k8shazgpu-sim kubectl get "$@" -o name --ignore-not-found
}

# ctl_running prints the processes still running (a zombie has ended) of
# the process groups listed in $SCRATCH/ctl.pids, one a line.
ctl_running() {
	[ ! -f "$SCRATCH/ctl.pids" ] ||
		ps -e -o pgid=,pid=,stat= | awk 'NR == FNR {g[$1]; next} ($1 in g) && $3 !~ /^Z/' "$SCRATCH/ctl.pids" -
}

# free_port prints a TCP port from 12000 to 19999 that no socket uses now:
# below the range k8shazgpu-sim takes its ports from, so a cluster started
# at the same time does not take it either.
free_port() { free-port -r 12000-19999; }

# start_redis starts a real redis-server on a free loopback port for this
# script, with keyspace notifications for the canhazgpu keys, no
# persistence, stopped by its PID when the script exits. It sets
# REDIS_PORT and REDIS (the address gpu-reserve -a takes) and exports
# K8SHAZGPU_REDIS. rcli runs redis-cli against it.
start_redis() {
	sr_try=0
	while [ $sr_try -lt 5 ]; do
		sr_try=$((sr_try + 1))
		REDIS_PORT=$(free_port)
		rm -f "$SCRATCH/redis.pid"
		redis-server --bind 127.0.0.1 --port "$REDIS_PORT" --save '' \
			--appendonly no --daemonize yes --pidfile "$SCRATCH/redis.pid" \
			--logfile "$SCRATCH/redis.log" --dir "$SCRATCH" \
			--notify-keyspace-events 'K$g' >/dev/null || continue
		trap stop_redis EXIT
		REDIS=127.0.0.1:$REDIS_PORT
		K8SHAZGPU_REDIS=$REDIS
		export REDIS_PORT REDIS K8SHAZGPU_REDIS
		# ours, not another test's server that had the port first
		eventually 10 redis_is_ours && return 0
		stop_redis
	done
	echo "Bail out! no redis-server of this test's own could start: $(tail -n 2 "$SCRATCH/redis.log" 2>/dev/null)"
	exit 1
}
redis_is_ours() {
	[ -s "$SCRATCH/redis.pid" ] &&
		[ "$(rcli info server 2>/dev/null | tr -d '\r' | sed -n 's/^process_id://p')" = "$(cat "$SCRATCH/redis.pid")" ]
}
# stop_redis: TERM it and wait until it is gone (it writes into $SCRATCH).
stop_redis() {
	[ -s "$SCRATCH/redis.pid" ] || return 0
	sr_pid=$(cat "$SCRATCH/redis.pid")
	kill "$sr_pid" 2>/dev/null || return 0
	sr_n=0
	while [ -d "/proc/$sr_pid" ] && ! grep -q '^State:.*Z' "/proc/$sr_pid/status" 2>/dev/null && [ $sr_n -lt 100 ]; do
		sleep 0.1
		sr_n=$((sr_n + 1))
	done
}
rcli() { redis-cli -h 127.0.0.1 -p "$REDIS_PORT" "$@"; }

done_testing() {
	echo "1..$t_n"
	[ "$t_failed" -eq 0 ]
}

# out CMD...: CMD's stdout, then "exit N", then its stderr (o.out, o.err).
out() {
	"$@" >o.out 2>o.err
	st=$?
	cat o.out
	echo "exit $st"
	cat o.err
}
