# sim-lib.sh: how k8shazgpu-sim and sim-node run their daemons, sourced
# (not run): a start that survives a taken port or a slow machine, a stop
# that waits, and logs that outlive a failure.
#
# The sourcing script sets D (the state directory) and defines say, die,
# pidfile_of COMPONENT (the file its PID is recorded in), pid_of COMPONENT
# (that PID while it is still the program started), and for each COMPONENT
# it starts: launch_COMPONENT
# (start it in the background, its PID recorded) and ready_COMPONENT
# (true once it answers on its health endpoint), '-' in the name as '_'. ports_moved COMPONENT
# rewrites whatever holds a port that new_ports changed.

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
