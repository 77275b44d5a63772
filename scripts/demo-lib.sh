# demo-lib.sh: how the demo tells its story and waits, sourced by
# scripts/demo before its chapters (scripts/demo.d/NN-name.sh, sourced in
# order into the same shell, so that a chapter sees what those before it
# set: $work, $port, $controller, $D, $HOST...).
# shellcheck shell=sh disable=SC2154 # work: the demo's

step="setting up"
# TITLE: a new step of the story; a failure names the step it was in.
say() { step=$*; printf '\n== %s\n' "$*"; }
die() { printf 'demo: %s\n' "$*" >&2; exit 1; }
kc() { k8shazgpu-sim kubectl "$@"; }

# PID...: stop each background process of the demo and wait until it is gone.
stop() {
	for sp; do
		[ -z "$sp" ] || stop_pid "$sp" 10
	done
}

# eventually [-i INTERVAL] SECONDS WHAT CMD...: run CMD until it succeeds,
# every INTERVAL seconds (0.5), SECONDS / INTERVAL times at most; polls is
# then how many times it failed first. CMD runs in this shell (it may set
# variables); what it prints is kept for a timeout, which fails the demo
# naming WHAT and what CMD printed last.
eventually() {
	ev_i=0.5
	[ "$1" != -i ] || { ev_i=$2; shift 2; }
	ev_max=$(awk -v s="$1" -v i="$ev_i" 'BEGIN { printf "%d", s / i + 0.5 }')
	ev_secs=$1 ev_what=$2
	shift 2
	polls=0
	until "$@" >"$work/eventually.out" 2>&1; do
		polls=$((polls + 1))
		[ $polls -le "$ev_max" ] || {
			printf 'demo: waited %s s for %s; what it saw last:\n' "$ev_secs" "$ev_what" >&2
			tail -n 20 "$work/eventually.out" | sed 's/^/   /' >&2
			exit 1
		}
		sleep "$ev_i"
	done
}

# apply_crd FILE...: apply each CustomResourceDefinition (YAML) and wait
# until the API server serves it (Established), saying so; a CRD just made
# answers 404 for a moment.
apply_crd() {
	for ac_f; do
		ac_ref=$(yaml2json "$ac_f" | claim-make -a | jq -r .ref)
		[ -n "$ac_ref" ] || die "$ac_f: not applied"
		ac_name=$(yaml2json "$ac_f" | jq -r .metadata.name)
		kc wait --for condition=Established --timeout=30s "crd/$ac_name" >/dev/null ||
			die "$ac_ref: not Established after 30 s"
		echo "   applied $ac_ref"
	done
}

# indent CMD...: what CMD prints, indented by three spaces; a failure of
# CMD fails the demo, naming it.
indent() {
	"$@" >"$work/indent.out" 2>&1 || {
		in_rc=$?
		sed 's/^/   /' "$work/indent.out"
		die "$*: exit status $in_rc"
	}
	sed 's/^/   /' "$work/indent.out"
}

# is WANT CMD...: what CMD prints, printed; true when that is WANT.
is() {
	is_want=$1
	shift
	is_got=$("$@") || :
	printf '%s\n' "$is_got"
	[ "$is_got" = "$is_want" ]
}

# atleast N CMD...: what CMD prints, printed; true when that is a number
# of N or more.
atleast() {
	al_n=$1
	shift
	al_got=$("$@") || :
	printf '%s\n' "$al_got"
	[ "$al_got" -ge "$al_n" ] 2>/dev/null
}

# lines CMD...: how many lines CMD prints.
lines() { "$@" | wc -l; }

# has_sa NAMESPACE: its default ServiceAccount exists (pods can be made).
has_sa() { kc get serviceaccount default -n "$1"; }

# phase_of NAMESPACE POD: the pod's phase.
phase_of() { kc get pod -n "$1" "$2" -o jsonpath='{.status.phase}'; }

# prints CMD...: what CMD prints, printed; true when it printed something.
prints() {
	pr_got=$("$@") || :
	printf '%s\n' "$pr_got"
	[ -n "$pr_got" ]
}

# webhook_up LOG: webhook-patch, started with -l 127.0.0.1:0, named its
# port in LOG (now in wport) and answers /readyz there.
webhook_up() {
	cat "$1"
	wport=$(sed -n 's/.*(port \([0-9]*\)).*/\1/p' "$1") && [ -n "$wport" ] &&
		curl -fsS --cacert "$work/certs/ca.crt" "https://127.0.0.1:$wport/readyz"
}
