# sim-lib.sh: the supervisor both k8shazgpu-sim and sim-node are made of,
# sourced (not run): a start that survives a taken port or a slow machine,
# a stop that waits, and logs that outlive a failure. Each script keeps its
# own table of components and its commands; this file holds the rest.
#
# The sourcing script sets prog (the name messages start with) and D (the
# state directory), and defines, for each COMPONENT ('-' in a function's
# name as '_'):
#   ours PID COMPONENT    true while PID is still the program COMPONENT
#                         started (argv0_is, cmdline_has)
#   start_COMPONENT       start it (start_daemon, or its own way)
#   launch_COMPONENT      start it in the background, its PID recorded in
#                         pidfile_of COMPONENT (for start_daemon)
#   ready_COMPONENT       true once it answers on its health endpoint
#   ports_moved COMPONENT rewrite whatever names a port new_ports changed
# and may redefine after sourcing:
#   pidfile_of COMPONENT  the file its PID is recorded in ($D/COMPONENT.pid)
#   companions_of COMPONENT  the components stopped after it (none)
#   may_start COMPONENT   false when start_one is to leave it (always true)
# shellcheck shell=sh disable=SC2154 # prog, here, pki: the sourcing script's

: "${K8SHAZGPU_SIM_TIMEOUT:=120}"
: "${K8SHAZGPU_SIM_AGENT_INTERVAL:=10}"
: "${K8SHAZGPU_SIM_STOP_TIMEOUT:=15}"

say() { printf '%s: %s\n' "$prog" "$*" >&2; }
# A message that names a log ("see FILE.log") shows that log's last lines.
die() {
	say "$*"
	case $* in *"see /"*.log*)
		dl=${*##*see }
		log_tail "${dl%%[ )]*}" ;;
	esac
	exit 1
}

# LOG [N [OFFSET]]: the last N (15) lines of LOG (of what it got after byte
# OFFSET) on stderr, indented, under its name.
log_tail() {
	[ -s "$1" ] || return 0
	{
		echo "--- the last lines of $1:"
		tail -c +$((${3:-0} + 1)) "$1" | tail -n "${2:-15}" | sed 's/^/    /'
	} >&2
}

# COMPONENT LOG WHY [OFFSET]: fail the start, naming COMPONENT and WHY,
# with the tail of what LOG got after OFFSET, and where every log is.
fail_start() {
	say "$1 $3"
	log_tail "$2" 15 "${4:-0}"
	say "every log of this cluster is in $D; 'k8shazgpu-sim down -k' keeps them"
	exit 1
}

# LOG OFFSET: true when what LOG got after byte OFFSET says a port was taken.
port_taken() {
	tail -c +$(($2 + 1)) "$1" 2>/dev/null | grep -qi 'address already in use'
}

# PID: true while that process runs (a zombie has ended).
alive() {
	[ -n "$1" ] && [ -d "/proc/$1" ] && ! grep -q '^State:[[:space:]]*Z' "/proc/$1/status" 2>/dev/null
}

# PID PATH: true when PID's argv[0] is PATH.
argv0_is() {
	[ -r "/proc/$1/cmdline" ] && [ "$(tr '\0' '\n' <"/proc/$1/cmdline" | head -n 1)" = "$2" ]
}

# PID STRING: true when PID's command line holds STRING.
cmdline_has() {
	tr '\0' ' ' 2>/dev/null <"/proc/$1/cmdline" | grep -qF -- "$2"
}

pidfile_of() { echo "$D/$1.pid"; }
companions_of() { :; }
may_start() { :; }

# COMPONENT: its PID while that process is still the one started (ours),
# else nothing.
pid_of() {
	po_f=$(pidfile_of "$1")
	[ -s "$po_f" ] || return 0
	po_pid=$(cat "$po_f")
	! ours "$po_pid" "$1" || echo "$po_pid"
}

# COMPONENT: start it unless it runs (or may_start says to leave it).
start_one() {
	[ -z "$(pid_of "$1")" ] || return 0
	may_start "$1" || return 0
	"start_$(echo "$1" | tr - _)"
}

# COMPONENT: TERM what we started, KILL it after the stop timeout; wait
# until it is gone, then stop its companions.
stop_one() {
	so_pid=$(pid_of "$1")
	[ -z "$so_pid" ] || stop_pid "$so_pid" "$K8SHAZGPU_SIM_STOP_TIMEOUT" "$1 (pid $so_pid)"
	rm -f "$(pidfile_of "$1")"
	for so_c in $(companions_of "$1"); do
		stop_one "$so_c"
	done
}

# COMPONENT...: every one signalled first, then each waited for: they shut
# down together.
stop_all() {
	for sa_c; do
		sa_pid=$(pid_of "$sa_c")
		[ -z "$sa_pid" ] || kill -TERM "$sa_pid" 2>/dev/null || :
	done
	for sa_c; do
		stop_one "$sa_c"
	done
}

# WHAT SECONDS CMD...: retry CMD every half second until it succeeds, or
# fail naming WHAT.
wait_until() {
	wu_what=$1 wu_n=$(($2 * 2))
	shift 2
	until "$@" >/dev/null 2>&1; do
		wu_n=$((wu_n - 1))
		[ $wu_n -gt 0 ] || die "timed out waiting for $wu_what"
		sleep 0.5
	done
}

# PID VAR...: true when PID listens on every port the VARs name (the health
# endpoint that answered is ours, not another program's on the same port).
owns_ports() {
	op_pid=$1
	shift
	for op_v; do
		eval "op_p=\$$op_v"
		ss -Hltnp "sport = :$op_p" 2>/dev/null | grep -q "pid=$op_pid," || return 1
	done
}

# VAR...: a new free port for each, in $D/state and in this shell.
new_ports() {
	for np_v; do
		np_p=$(free-port) || die "no free port for $np_v"
		sed "s/^$np_v=.*/$np_v=$np_p/" "$D/state" >"$D/state.new" && mv "$D/state.new" "$D/state" ||
			die "cannot write $D/state"
		eval "$np_v=$np_p"
	done
}

# COMPONENT LOG SECONDS [PORTVAR...]: launch COMPONENT and wait until it is
# ready and owns its ports. A port another program took (its log says so)
# gets a new port and another try, up to 5 times; any other early exit gets
# one more try; a component that is still not ready after SECONDS, or
# exits again, fails the start with its log's tail.
start_daemon() {
	sd_c=$1 sd_log=$2 sd_secs=$3 sd_f=$(echo "$1" | tr - _)
	shift 3
	sd_moves=0 sd_exits=0 sd_off0=$(stat -c %s "$sd_log" 2>/dev/null || echo 0)
	while :; do
		sd_off=$(stat -c %s "$sd_log" 2>/dev/null || echo 0)
		"launch_$sd_f"
		sd_n=$((sd_secs * 5))
		# (until it has exec'd, the child is a copy of this shell, which
		# pid_of does not take for the component: alive, not yet it)
		sd_raw=$(cat "$(pidfile_of "$sd_c")" 2>/dev/null)
		while alive "$sd_raw"; do
			sd_pid=$(pid_of "$sd_c")
			[ -n "$sd_pid" ] && "ready_$sd_f" >/dev/null 2>&1 && owns_ports "$sd_pid" "$@" && return 0
			sd_n=$((sd_n - 1))
			[ $sd_n -gt 0 ] ||
				fail_start "$sd_c" "$sd_log" "not ready after ${sd_secs}s (pid $sd_raw still runs)" "$sd_off0"
			sleep 0.2
		done
		if [ $# -gt 0 ] && [ $sd_moves -lt 5 ] && port_taken "$sd_log" "$sd_off"; then
			sd_moves=$((sd_moves + 1))
			new_ports "$@"
			say "$sd_c: a port was taken by another program; trying again on $(for v; do eval "echo \$$v"; done | paste -sd' ')"
			ports_moved "$sd_c"
			continue
		fi
		sd_exits=$((sd_exits + 1))
		[ $sd_exits -le 1 ] || fail_start "$sd_c" "$sd_log" "exited while starting, twice" "$sd_off0"
		say "$sd_c exited while starting; trying once more"
		log_tail "$sd_log" 5 "$sd_off"
	done
}

# PID SECONDS [NAME]: TERM PID, wait until it is gone, KILL it after
# SECONDS; a zombie counts as gone (it writes nothing more).
stop_pid() {
	sp_pid=$1 sp_n=$(($2 * 5))
	kill -TERM "$sp_pid" 2>/dev/null || return 0
	while alive "$sp_pid"; do
		sp_n=$((sp_n - 1))
		if [ $sp_n -le 0 ]; then
			say "${3:-pid $sp_pid} ignored TERM; killing"
			kill -KILL "$sp_pid" 2>/dev/null || :
			sp_n=25
		fi
		sleep 0.2
	done
}

# NAME SUBJECT EXTENSIONS: a P-256 key and a certificate signed by the
# sim's CA in $pki.
issue() {
	openssl req -new -config "$pki/openssl.cnf" -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 \
		-nodes -keyout "$pki/$1.key" -subj "$2" -out "$pki/$1.csr" 2>>"$pki/openssl.log" &&
		printf '%b\n' "$3" >"$pki/$1.ext" &&
		openssl x509 -req -in "$pki/$1.csr" -CA "$pki/ca.crt" -CAkey "$pki/ca.key" -CAcreateserial \
			-days 3650 -extfile "$pki/$1.ext" -out "$pki/$1.crt" 2>>"$pki/openssl.log" ||
		die "openssl: cannot issue $1: see $pki/openssl.log"
	rm -f "$pki/$1.csr" "$pki/$1.ext"
}

# FILE: manifests/FILE of a checkout or of the installed data directory,
# as found; fails when there is none.
find_manifest() {
	for fm_d in "$here/../manifests" "${K8SHAZGPU_DATADIR:-/nonexistent}/manifests" \
		"$here/../share/k8shazgpu/manifests"; do
		[ -r "$fm_d/$1" ] && { echo "$fm_d/$1"; return; }
	done
	return 1
}

# NAME: our helper script NAME (or k8shazgpu-NAME) next to the running
# one or in libexec.
find_helper() {
	for fh_f in "$here/$1" "$here/k8shazgpu-$1" "$here/../libexec/k8shazgpu/$1" \
		"$here/../libexec/k8shazgpu/k8shazgpu-$1"; do
		[ -x "$fh_f" ] && { echo "$fh_f"; return; }
	done
	die "$1 not found next to $0 or in $here/../libexec/k8shazgpu"
}

# DIR: copy every log of the state directory (the components', the node's
# pods', the certificates') into DIR, keeping their paths.
keep_logs() {
	mkdir -p "$1" || die "$1: cannot keep the logs there"
	(cd "$D" && find . \( -name '*.log' -o -path ./pod-logs \) -prune -print) | while IFS= read -r kl; do
		mkdir -p "$1/$(dirname "$kl")" && cp -R "$D/$kl" "$1/$kl" 2>/dev/null || :
	done
}

# DIR: remove DIR, again while something that was just stopped still
# writes into it; fail naming what is left after 5 s.
remove_dir() {
	rd_n=0
	until rm -rf "$1" 2>/dev/null; do
		rd_n=$((rd_n + 1))
		[ $rd_n -lt 25 ] || { rm -rf "$1"; return 1; }
		sleep 0.2
	done
}

# DIR MIB WHAT: fail, naming DIR, unless DIR can be written and has MIB
# MiB free for building WHAT (a build that runs out of disk midway fails
# with a message far from its cause).
cache_room() {
	mkdir -p "$1" 2>/dev/null && [ -w "$1" ] ||
		die "$1: the build cache is not writable (set K8SHAZGPU_CACHE to a directory you can write)"
	cr_free=$(df -Pm "$1" | awk 'NR == 2 { print $4 }')
	[ "${cr_free:-0}" -ge "$2" ] ||
		die "$1: ${cr_free:-0} MiB free; building $3 needs about $2 MiB (free some, or set K8SHAZGPU_CACHE elsewhere)"
}
