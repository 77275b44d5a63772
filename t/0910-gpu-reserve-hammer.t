#!/bin/sh
# Eight clients hammer one real redis-server with 2,000 mixed operations
# (reserve by count and by id, release, run, queued reserve with a wait):
# after every reserve each client claims its GPUs in a Redis set of its
# own keys (SETNX hammer:owner:<gpu>), and gives them up before every
# release, so a GPU held twice is caught at the step it happens. At the
# end no owner claim is left, every GPU is free and the queue empty.
. "$(dirname "$0")/lib.sh"
start_redis
plan 5
GPUS=6
CLIENTS=8
OPS=250
# Under valgrind each operation takes a second: a tenth of them.
[ "${VALGRIND:-}" != 1 ] || OPS=25
gpu-reserve init -g $GPUS >/dev/null

# own CLIENT GPU...: claim each GPU for CLIENT; a claim already there is
# a double booking, counted in hammer:double.
own() {
	c=$1
	shift
	for g; do
		[ "$(rcli setnx "hammer:owner:$g" "$c")" = 1 ] || rcli incr hammer:double >/dev/null
	done
}
# disown CLIENT GPU...: give the claims up; one not ours is counted too.
disown() {
	c=$1
	shift
	for g; do
		[ "$(rcli get "hammer:owner:$g")" = "$c" ] || rcli incr hammer:double >/dev/null
		rcli del "hammer:owner:$g" >/dev/null
	done
}
client() {
	c=c$1
	held=
	i=0
	while [ $i -lt $OPS ]; do
		case $(((i * 7 + $1) % 6)) in
		0 | 1)
			ids=$(gpu-reserve reserve -g $((i % 2 + 1)) -u $c -b 2>/dev/null | jq -r .gpu)
			[ -z "$ids" ] || { own $c $ids; held="$held $ids"; }
			;;
		2)
			g=$(((i + $1) % GPUS))
			ids=$(gpu-reserve reserve -G $g -u $c -b 2>/dev/null | jq -r .gpu)
			[ -z "$ids" ] || { own $c $ids; held="$held $ids"; }
			;;
		3)
			# shellcheck disable=SC2086
			[ -z "$held" ] || disown $c $held
			gpu-reserve release -u $c >/dev/null 2>&1
			held=
			;;
		4)
			gpu-reserve run -g 1 -u $c -b -- sh -c '
				g=$CUDA_VISIBLE_DEVICES
				[ "$(redis-cli -h 127.0.0.1 -p "$REDIS_PORT" setnx "hammer:owner:$g" "$1")" = 1 ] ||
					redis-cli -h 127.0.0.1 -p "$REDIS_PORT" incr hammer:double >/dev/null
				redis-cli -h 127.0.0.1 -p "$REDIS_PORT" del "hammer:owner:$g" >/dev/null' sh "$c-run" >/dev/null 2>&1
			;;
		5)
			ids=$(gpu-reserve reserve -g 1 -u $c -w 1s 2>/dev/null | jq -r .gpu)
			[ -z "$ids" ] || { own $c $ids; held="$held $ids"; }
			;;
		esac
		i=$((i + 1))
	done
	# shellcheck disable=SC2086
	[ -z "$held" ] || disown $c $held
	gpu-reserve release -u $c >/dev/null 2>&1
	echo done >"client-$1"
}

n=0
while [ $n -lt $CLIENTS ]; do
	client $n &
	n=$((n + 1))
done
wait
check_output "every client ran its $OPS operations" 'cat client-* | sort | uniq -c | sed "s/^ *//"' <<'EOF'
8 done
EOF
check_output 'no GPU was ever held by two clients at once' 'rcli get hammer:double' <<'EOF'

EOF
check_output 'no owner claim is left behind' 'rcli --scan --pattern "hammer:owner:*"' <<'EOF'
EOF
check_output 'every GPU is free at the end' 'gpu-reserve status | jq -r .state | sort | uniq -c | sed "s/^ *//"' <<'EOF'
6 AVAILABLE
EOF
check_output 'the queue is empty and history was written for the releases' \
	'echo "$(rcli zcard canhazgpu:queue) $(rcli zcard canhazgpu:usage_history_sorted | awk "{print (\$1 > $OPS / 5)}")"' <<'EOF'
0 1
EOF
