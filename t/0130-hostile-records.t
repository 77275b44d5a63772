#!/bin/sh
# Hostile records, across every NDJSON reader: strings holding \u0000,
# numbers out of range, reals that must come out as they went in, records
# past the size bound, read errors, fields of the wrong type, and names
# with control characters in diagnostics.
. "$(dirname "$0")/lib.sh"

# ---- strings are what they say ------------------------------------------

cat >inv <<'X'
{"kind":"node","name":"n1"}
{"kind":"gpu","node":"n1","uuid":"GPU-a","index":0}
{"kind":"gpu","node":"n1","uuid":"GPU-b","index":1}
{"kind":"allocation","id":"host/alice","devices":["GPU-a"]}
X
check_output 'sched-pick: a release of "host/alice\u0000x" is refused and frees nothing' '
	{ cat inv; echo "{\"kind\":\"release\",\"id\":\"host/alice\\u0000x\"}";
	  echo "{\"kind\":\"request\",\"id\":\"r1\",\"gpus\":2}"; } | sched-pick 2>&1
	echo "exit $?"' <<'X'
sched-pick: <stdin>:5: a string holds \u0000, which no record may carry
{"kind":"unschedulable","id":"r1","reason":"no node has 2 free healthy GPUs"}
exit 1
X

check_output 'sched-pick: uuids that differ after a NUL never merge' '
	printf "%s\n" "{\"kind\":\"gpu\",\"node\":\"n1\",\"uuid\":\"GPU-a\\u0000x\",\"index\":2}" |
	sched-pick 2>&1; echo "exit $?"' <<'X'
sched-pick: <stdin>:1: a string holds \u0000, which no record may carry
exit 1
X

check_output 'claim-make refuses a record whose string holds \u0000, and goes on' '
	printf "%s\n" "{\"kind\":\"gpu\",\"node\":\"n\\u0000x\",\"uuid\":\"GPU-a\",\"index\":0}" \
		"{\"kind\":\"nothing\",\"key\\u0000\":1}" |
	claim-make 2>&1 >/dev/null; echo "exit $?"' <<'X'
claim-make: <stdin>:1: invalid JSON at column 31: a string holds \u0000, which no record may carry
claim-make: <stdin>:2: invalid JSON at column 29: a member name holds \u0000, which no record may carry
exit 1
X

cat >rcinv <<'X'
{"kind":"runtimeclass","name":"rc","annotations":{"limits.k8s.gpu/memory":"32Gi"}}
{"kind":"runtimeclass","name":"rc\u0000x","annotations":{}}
X
check_output 'webhook-patch: an inventory name holding \u0000 is refused, not merged' '
	echo "{}" | webhook-patch -i rcinv 2>&1; echo "exit $?"' <<'X'
webhook-patch: rcinv:2: invalid JSON at column 41: a string holds \u0000, which no record may carry
exit 1
X

cat >stream <<'X'
{"type":"ADDED","object":{"metadata":{"uid":"u1","name":"a","resourceVersion":"1"}}}
{"type":"ADDED","object":{"metadata":{"uid":"u1\u0000x","name":"b","resourceVersion":"2"}}}
{"type":"MODIFIED","object":{"metadata":{"uid":"u2","name":"c","resourceVersion":"3"},"n":1e999}}
{"type":"MODIFIED","object":{"metadata":{"uid":"u2","name":"c","resourceVersion":"3"},"n":123456789012345678901}}
{"type":"ADDED","object":{"metadata":{"uid":"u3","name":"d","resourceVersion":"4"}}}
X
check_output 'claim-watch: a uid holding \u0000 and numbers out of range are bad events' '
	claim-watch -R stream 2>&1; echo "exit $?"' <<'X'
{"type":"ADDED","object":{"metadata":{"uid":"u1","name":"a","resourceVersion":"1"}}}
claim-watch: stream: line 2 at byte 85: a string holds \u0000, which no object may carry
claim-watch: stream: line 3 at byte 177: a number out of range
claim-watch: stream: line 4 at byte 275: a number out of range
{"type":"ADDED","object":{"metadata":{"uid":"u3","name":"d","resourceVersion":"4"}}}
exit 1
X

# ---- every record written is JSON, every number kept ----------------------

check_output 'sched-pick refuses a node cost of 1e400: no inf is ever written' '
	printf "%s\n" "{\"kind\":\"node\",\"name\":\"n1\",\"cost\":1e400}" \
		"{\"kind\":\"node\",\"name\":\"n2\",\"cost\":-1e400}" \
		"{\"kind\":\"node\",\"name\":\"n3\",\"cost\":1.7976931348623157e308}" \
		"{\"kind\":\"gpu\",\"node\":\"n3\",\"uuid\":\"G\",\"index\":0}" \
		"{\"kind\":\"request\",\"id\":\"r\",\"strategy\":\"cost_optimized\"}" |
	sched-pick 2>&1; echo "exit $?"' <<'X'
sched-pick: <stdin>:1: a number out of range (integers fit in 64 bits, reals are finite doubles)
sched-pick: <stdin>:2: a number out of range (integers fit in 64 bits, reals are finite doubles)
{"kind":"placement","id":"r","node":"n3","devices":["G"],"indexes":[0],"strategy":"cost_optimized","score":1.7976931348623157e308}
exit 1
X

check_output 'claim-make refuses numbers out of range as sched-pick does' '
	printf "%s\n" "{\"kind\":\"gpu\",\"memory_mib\":99999999999999999999}" \
		"{\"kind\":\"gpu\",\"util_pct\":1e400}" | claim-make 2>&1; echo "exit $?"' <<'X'
claim-make: <stdin>:1: invalid JSON at column 47: a number out of range (integers fit in 64 bits, reals are finite doubles)
claim-make: <stdin>:2: invalid JSON at column 30: a number out of range (integers fit in 64 bits, reals are finite doubles)
exit 1
X

cat >reals <<'X'
{"apiVersion":"example.com/v1","kind":"Thing","metadata":{"name":"t"},"spec":{"a":0.30000000000000004,"b":0.1,"c":1e20,"d":100.0,"e":1e-7,"f":-0.0,"g":5e-324,"h":123456789.123456789,"i":1e15,"j":2.5}}
X
check_output 'reals come out as they went in: 15 digits, or 16 or 17 where needed' '
	yaml2json reals && claim-make reals' <<'X'
{"apiVersion":"example.com/v1","kind":"Thing","metadata":{"name":"t"},"spec":{"a":0.30000000000000004,"b":0.1,"c":1e20,"d":100.0,"e":1e-7,"f":-0.0,"g":4.94065645841247e-324,"h":123456789.12345679,"i":1e15,"j":2.5}}
{"apiVersion":"example.com/v1","kind":"Thing","metadata":{"name":"t"},"spec":{"a":0.30000000000000004,"b":0.1,"c":1e20,"d":100.0,"e":1e-7,"f":-0.0,"g":4.94065645841247e-324,"h":123456789.12345679,"i":1e15,"j":2.5}}
X

check 'every real written reads back as the same double' '
	awk "BEGIN { srand(7); for (i = 0; i < 2000; i++)
		printf \"%.17g\n\", (rand() - 0.5) * 10 ^ int(rand() * 600 - 300) }" >r.in &&
	awk "{ printf \"{\\\"apiVersion\\\":\\\"x/v1\\\",\\\"kind\\\":\\\"X\\\",\\\"metadata\\\":{\\\"name\\\":\\\"x\\\"},\\\"v\\\":%s}\n\", \$0 }" r.in |
		claim-make | jq -r ".v" >r.out &&
	paste r.in r.out | awk "{ if (\$1 + 0 != \$2 + 0) { print; bad = 1 } } END { exit bad }"'

# ---- a read error is not end of input --------------------------------------

check_output 'a record past 16 MiB is named and skipped; the records after it are read' '
	{ echo "{\"kind\":\"node\",\"name\":\"n1\"}"
	  awk "BEGIN { printf \"{\\\"kind\\\":\\\"node\\\",\\\"name\\\":\\\"\"; for (i = 0; i < 17 * 1024; i++) printf \"%01024d\", 0; print \"\\\"}\" }"
	  echo "{\"kind\":\"gpu\",\"node\":\"n1\",\"uuid\":\"G\",\"index\":0}"
	  echo "{\"kind\":\"request\",\"id\":\"r\"}"; } | sched-pick 2>&1; echo "exit $?"' <<'X'
sched-pick: <stdin>:2: record longer than 16777216 bytes (the bound of every input record): skipped
{"kind":"placement","id":"r","node":"n1","devices":["G"],"indexes":[0],"strategy":"least_utilized","score":0.0}
exit 1
X

check_output 'webhook-patch filter mode: a review past 8 MiB is answered unread, the next one read' '
	{ awk "BEGIN { printf \"{\\\"a\\\":\\\"\"; for (i = 0; i < 9 * 1024; i++) printf \"%01024d\", 0; print \"\\\"}\" }"
	  echo "{}"; } | webhook-patch -i /dev/null 2>err | jq -r .response.status.message; cat err' <<'X'
invalid AdmissionReview: request body larger than 8388608 bytes
invalid AdmissionReview: apiVersion is missing
webhook-patch: <stdin>:1: record longer than 8388608 bytes (the bound of every input record): skipped
webhook-patch: <stdin>:2: invalid AdmissionReview: apiVersion is missing
X

mkdir adir
check_output 'a read error ends the tool with status 1 and says so' '
	sched-pick adir 2>&1; echo "exit $?"; claim-make adir 2>&1; echo "exit $?"' <<'X'
sched-pick: adir: read error: Is a directory
exit 1
claim-make: adir: read error: Is a directory
exit 1
X

# A sanitizer's shadow memory, or valgrind, needs more address space than
# the limit this test sets.
if [ "${VALGRIND:-}" = 1 ] || ldd "$BUILD/sched-pick" 2>/dev/null | grep -q 'lib[at]san'; then
	t_n=$((t_n + 1))
	echo "ok $t_n # SKIP memory limits under ASan or valgrind"
else
	check_output 'memory running out on a long record is an error, never end of input' '
		awk "BEGIN { printf \"{\\\"kind\\\":\\\"node\\\",\\\"name\\\":\\\"\"; for (i = 0; i < 15 * 1024; i++) printf \"%01024d\", 0; print \"\\\"}\" }" >long &&
		echo "{\"kind\":\"request\",\"id\":\"r\"}" >>long &&
		(ulimit -v 40000; sched-pick long >out 2>err; echo "exit $?"); cat out; sed "s/:.*:/: ... :/" err' <<'X'
exit 1
sched-pick: ... : Cannot allocate memory
X
fi

# ---- wrong types are bad records -------------------------------------------

check_output 'sched-pick checks health and util_pct' '
	printf "%s\n" "{\"kind\":\"gpu\",\"node\":\"n1\",\"uuid\":\"G1\",\"index\":0,\"health\":\"broken\"}" \
		"{\"kind\":\"gpu\",\"node\":\"n1\",\"uuid\":\"G2\",\"index\":1,\"health\":false}" \
		"{\"kind\":\"gpu\",\"node\":\"n1\",\"uuid\":\"G3\",\"index\":2,\"util_pct\":\"high\"}" \
		"{\"kind\":\"gpu\",\"node\":\"n1\",\"uuid\":\"G4\",\"index\":3,\"util_pct\":101}" \
		"{\"kind\":\"gpu\",\"node\":7,\"uuid\":\"G5\",\"index\":4}" \
		"{\"kind\":\"gpu\",\"node\":\"n1\",\"uuid\":\"G6\",\"index\":5,\"health\":\"warn\",\"util_pct\":12.5}" \
		"{\"kind\":\"request\",\"id\":\"r\",\"gpus\":2}" | sched-pick 2>&1; echo "exit $?"' <<'X'
sched-pick: <stdin>:1: gpu G1: health must be "ok", "warn", "unhealthy" or null
sched-pick: <stdin>:2: gpu G2: health must be "ok", "warn", "unhealthy" or null
sched-pick: <stdin>:3: gpu G3: util_pct must be a number from 0 to 100 or null
sched-pick: <stdin>:4: gpu G4: util_pct must be a number from 0 to 100 or null
sched-pick: <stdin>:5: gpu record needs a uuid and a node, each a non-empty string
{"kind":"unschedulable","id":"r","reason":"no node has 2 free healthy GPUs"}
exit 1
X

# ---- names with control characters reach stderr cleaned --------------------

check_output 'control characters and bad UTF-8 in quoted names are shown as ?' '
	printf "%s\n" "{\"kind\":\"gpu\",\"node\":\"n1\",\"uuid\":\"\\u001b[31mred\\n\",\"index\":0,\"health\":1}" |
	sched-pick 2>&1 | od -c | sed -n 1,6p; printf "{}\n" > "$(printf "bad\033name")"; sched-pick "$(printf "bad\033name")" 2>&1' <<'X'
0000000   s   c   h   e   d   -   p   i   c   k   :       <   s   t   d
0000020   i   n   >   :   1   :       g   p   u       ?   [   3   1   m
0000040   r   e   d   ?   :       h   e   a   l   t   h       m   u   s
0000060   t       b   e       "   o   k   "   ,       "   w   a   r   n
0000100   "   ,       "   u   n   h   e   a   l   t   h   y   "       o
0000120   r       n   u   l   l  \n
sched-pick: bad?name:1: record has no kind
X

done_testing
