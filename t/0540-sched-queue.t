#!/bin/sh
# sched-queue without a cluster: every bad option refused with status 2 and
# a message naming it, and an API server that cannot be reached ends a
# one-pass run with 75 at once, as the wrapper does too. What it does on a
# cluster is in t/9400, t/9407 (a list refused) and t/9410.
. "$(dirname "$0")/lib.sh"

usage='usage: sched-queue [-1v] [-S strategy] [-n namespace] [-m ns/name] [-T tolerations]
                   [-I image] [-B seconds] [-r seconds] [-w writers] [-d statedir]
                   [-A extended|dra] [--context name] [--kubeconfig file]
       sched-queue -f events [-v] [-S strategy] [-m ns/name] [-T tolerations]
                   [-I image] [-B seconds] [-A extended|dra]'
# ARGS: run sched-queue ARGS, which must fail with 2; print its first line
# of stderr and say whether the usage followed.
refused() {
	must_fail 2 sched-queue "$@" 2>err >/dev/null || return 1
	head -n 1 err
	tail -n +2 err >rest
	printf '%s\n' "$usage" | cmp -s - rest && echo "(usage)"
}

check_output 'an unknown strategy' 'refused -S fastest' <<'EOF'
sched-queue: -S fastest: unknown strategy
(usage)
EOF
check_output 'an allocation mode neither extended nor dra' 'refused -A claims' <<'EOF'
sched-queue: -A claims: not extended or dra
(usage)
EOF
check_output 'tolerations that are no JSON array' 'refused -T "{}"; refused -T "[1,"' <<'EOF'
sched-queue: -T: not a JSON array of tolerations: not an array
(usage)
sched-queue: -T: not a JSON array of tolerations: ']' expected near end of file
(usage)
EOF
check_output 'a ConfigMap named without its namespace' 'refused -m nope; refused -m /x; refused -m ns/' <<'EOF'
sched-queue: -m nope: expected namespace/name
(usage)
sched-queue: -m /x: expected namespace/name
(usage)
sched-queue: -m ns/: expected namespace/name
(usage)
EOF
check_output 'writers from 1 to 16, whole numbers' 'refused -w 0; refused -w 17; refused -w 2x' <<'EOF'
sched-queue: -w 0: a number from 1 to 16
(usage)
sched-queue: -w 17: a number from 1 to 16
(usage)
sched-queue: -w 2x: a number from 1 to 16
(usage)
EOF
check_output 'a resync of at least 10 s; a backoff of at least 1 s' 'refused -r 5; refused -B 0; refused -B soon' <<'EOF'
sched-queue: -r 5: not a number of seconds >= 10
(usage)
sched-queue: -B 0: not a number of seconds >= 1
(usage)
sched-queue: -B soon: not a number of seconds >= 1
(usage)
EOF
check_output 'no operands' 'refused extra' <<'EOF'
usage: sched-queue [-1v] [-S strategy] [-n namespace] [-m ns/name] [-T tolerations]
EOF

cp "$FIXTURES/unreachable.kubeconfig" unreachable.yaml
check_output 'an unreachable API server ends a one-pass run with 75, naming the URL' \
	'must_fail 75 sched-queue -1 --kubeconfig unreachable.yaml -d . 2>err
	 sed "s/after [0-9]* ms/after N ms/" err' <<'EOF'
sched-queue: GET https://127.0.0.1:1/api: Failed to connect to 127.0.0.1 port 1 after N ms: Couldn't connect to server
EOF
check_output 'so does the controller with -1; nothing written to its state' \
	'KUBECONFIG=$PWD/unreachable.yaml must_fail 75 k8shazgpu-controller -1 -d state 2>/dev/null; ls state' </dev/null
done_testing
