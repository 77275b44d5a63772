#!/bin/sh
# stat-serve answers /metrics, /healthz and /readyz from files, on loopback;
# hostile metrics files (a FIFO without a writer, /dev/zero, a directory,
# a huge or invalid file) get a short 500 and the server keeps serving;
# -c checks a file line by line as /metrics would serve it.
. "$(dirname "$0")/lib.sh"

mkdir -p st
# a free port, taken again if another socket had it first
for try in 1 2 3 4 5; do
	port=$(free_port)
	stat-serve -l 127.0.0.1:$port -d st -s 2 2>serve.err &
	pid=$!
	n=0
	until curl -s -o /dev/null "http://127.0.0.1:$port/healthz" || [ $n -ge 50 ]; do
		kill -0 $pid 2>/dev/null || break
		sleep 0.1; n=$((n + 1))
	done
	kill -0 $pid 2>/dev/null && break
	wait $pid
done
# get PATH: the body and the status, or 000 when no answer came in 2s
get() { curl -s --max-time 2 -w ' %{http_code}\n' "http://127.0.0.1:$port$1"; }

check_output 'healthz is ok while it runs' 'get /healthz' <<'X'
ok
 200
X
check_output 'no metrics file yet: 503' 'get /metrics' <<'X'
no metrics yet
 503
X
check_output 'metrics are the file, as Prometheus text' '
	printf "%s\n" "# TYPE a gauge" "a 1" >st/metrics &&
	curl -s -D - "http://127.0.0.1:$port/metrics" | tr -d "\r" | grep -v "^Date:\|^Content-Length:\|^Connection:"' <<'X'
HTTP/1.1 200 OK
Content-Type: text/plain; version=0.0.4; charset=utf-8

# TYPE a gauge
a 1
X
check_output 'readyz: 503 before any cycle, 200 after one, 503 when stale or in the future' '
	get /readyz; touch st/ready; get /readyz; touch -d "-10 seconds" st/ready
	get /readyz | sed "s/ 1[01]s / 10s /"	# 11 when a second began in between
	touch -d "+1 hour" st/ready; get /readyz | sed "s/ 3[56][0-9][0-9]s / Ns /"; rm st/ready' <<'X'
not ready: no cycle finished yet
 503
ok
 200
not ready: last good cycle 10s ago
 503
not ready: last good cycle Ns in the future
 503
X
check_output 'unknown path 404, POST 405' \
	'get /nope; curl -s -X POST -w " %{http_code}\n" "http://127.0.0.1:$port/metrics"' <<'X'
not found
 404
method not allowed
 405
X

# ---- hostile metrics files: never read, never waited for ----

check_output 'a FIFO without a writer: 500 at once, and healthz and readyz answer' '
	rm -f st/metrics && mkfifo st/metrics && mkfifo st/ready &&
	get /metrics; get /healthz; get /readyz; rm st/ready' <<'X'
bad metrics file: not a regular file
 500
ok
 200
ok
 200
X
check_output '/dev/zero: 500 at once, and the server still serves' '
	rm -f st/metrics && ln -s /dev/zero st/metrics &&
	get /metrics; get /healthz' <<'X'
bad metrics file: not a regular file
 500
ok
 200
X
check_output 'a directory: 500' 'rm -f st/metrics && mkdir st/metrics && get /metrics' <<'X'
bad metrics file: not a regular file
 500
X
check_output 'a missing file again: 503' 'rmdir st/metrics && get /metrics' <<'X'
no metrics yet
 503
X
check_output 'a 10 GiB sparse file: 500 without reading it' \
	'truncate -s 10G st/metrics && get /metrics' <<'X'
bad metrics file: over 1048576 bytes
 500
X
check_output 'a file of 1 MiB of NUL bytes: read to its bound, 500' \
	'rm st/metrics && truncate -s 1M st/metrics && get /metrics' <<'X'
bad metrics file: line 1: a NUL byte
 500
X
check_output 'an invalid line: the exact answer, naming it; HEAD says the same status' '
	printf "%s\n" "# TYPE a gauge" "a{node=\"x\"} 1" "a{node=\"x\"y\"} 2" >st/metrics &&
	get /metrics && curl -s -I -w "%{http_code}\n" -o /dev/null "http://127.0.0.1:$port/metrics"' <<'X'
bad metrics file: line 3: no , or } after a label value
 500
500
X
check_output 'a last line without its line feed (a file cut short): 500' '
	printf "a 1\na 2" >st/metrics && get /metrics' <<'X'
bad metrics file: line 2: no line feed at its end
 500
X
check_output 'a file /proc says is empty is read to its end all the same' '
	rm st/metrics && ln -s /proc/$pid/status st/metrics && get /metrics' <<'X'
bad metrics file: line 1: the value is not a number
 500
X
check_output 'each reason a file was not served is told once, in turn' 'cat serve.err' <<'X'
stat-serve: st/metrics: not a regular file
stat-serve: st/metrics: over 1048576 bytes
stat-serve: st/metrics: line 1: a NUL byte
stat-serve: st/metrics: line 3: no , or } after a label value
stat-serve: st/metrics: line 2: no line feed at its end
stat-serve: st/metrics: line 1: the value is not a number
X
check 'a file growing while read: 500, and the server still serves' '
	rm st/metrics && : >st/metrics && { yes "a{x=\"1\"} 1" | head -c 20000000 >>st/metrics & } &&
	sleep 0.1 && s=$(curl -s -o /dev/null --max-time 2 -w "%{http_code}" "http://127.0.0.1:$port/metrics") &&
	wait && rm st/metrics && test "$s" = 500 && test "$(get /healthz)" = "ok
 200"'
check_output 'a good file again: served as it is' '
	printf "# HELP a Help with \\\\\\\\ and \\\\n.\n# TYPE a gauge\na{q=\"\\\\\"x\\\\\\\\\"} 1 1700000000000\n" >st/metrics &&
	cat st/metrics && get /metrics' <<'X'
# HELP a Help with \\ and \n.
# TYPE a gauge
a{q="\"x\\"} 1 1700000000000
# HELP a Help with \\ and \n.
# TYPE a gauge
a{q="\"x\\"} 1 1700000000000
 200
X

# ---- slow clients: /healthz is answered whatever they do ----

# t/trickle starts requests and sends a byte a second, so that none is
# ever whole and no idle timeout fires. A request must be whole within
# 5 s of the connection's start; 8 connections of one address, 32 in
# all, a new one taking the place of the one that waited longest.
check_output 'a few slow clients: each closed at its deadline, 5 s after its start' \
	"'$TOP/t/trickle' -n 4 127.0.0.1 $port" <<'X'
opened 4 connections from 1 addresses
closed by the server: 4 of 4, 0 answered
closed before their deadline (their place taken): 0
closed at their deadline (5 to 8 s after their start): 4
X
# 64 from 8 other addresses: the 33rd and on take the places of the
# first 32, the probe that of one more; the last 31 go at their deadline
check_output '64 slow clients from 8 addresses: /healthz answers within 1 s, all are closed' \
	"'$TOP/t/trickle' -n 64 -a 127.0.0.2,127.0.0.3,127.0.0.4,127.0.0.5,127.0.0.6,127.0.0.7,127.0.0.8,127.0.0.9 \\
		--probe /healthz 127.0.0.1 $port" <<'X'
opened 64 connections from 8 addresses
probe GET /healthz: 200 within 1 s
closed by the server: 64 of 64, 0 answered
closed before their deadline (their place taken): 33
closed at their deadline (5 to 8 s after their start): 31
X
# 64 from the probe's own address: 8 at a time, the probe taking one
check_output '64 slow clients from the probe'\''s own address: /healthz answers within 1 s, all are closed' \
	"'$TOP/t/trickle' -n 64 -a 127.0.0.1 --probe /healthz 127.0.0.1 $port" <<'X'
opened 64 connections from 1 addresses
probe GET /healthz: 200 within 1 s
closed by the server: 64 of 64, 0 answered
closed before their deadline (their place taken): 57
closed at their deadline (5 to 8 s after their start): 7
X
check 'it still runs' "kill -0 $pid"
kill -TERM $pid
wait $pid
t_result $? 'TERM stops it with status 0'
# up PORT: true once a server answers on PORT (tries for 10s)
up() { EVENTUALLY_HZ=10 eventually 10 curl -s -o /dev/null "http://127.0.0.1:$1/healthz"; }
check 'a busy port is an error with status 1' '
	stat-serve -l 127.0.0.1:$port -d st 2>/dev/null & p2=$!; up $port
	timeout 30 stat-serve -l 127.0.0.1:$port -d st 2>err; rc=$?; kill $p2; wait $p2
	test $rc = 1 && grep -q "^stat-serve: 127.0.0.1:$port: cannot listen" err'
# gone PID: true when PID is no process, or a zombie
gone() { ! kill -0 "$1" 2>/dev/null || [ "$(awk '{ print $3 }' "/proc/$1/stat" 2>/dev/null)" = Z ]; }
check 'with -P it stops when its parent dies' '
	sh -c "stat-serve -P -l 127.0.0.1:$port -d st & echo \$! >child.pid; sleep 0.5" &&
	EVENTUALLY_HZ=10 eventually 20 gone "$(cat child.pid)"'
check 'a bad address is a usage error' \
	'must_fail 2 stat-serve -l 0.0.0.0 2>err && grep -q "not an IPv4 address" err'

# ---- -c: the check /metrics makes, line by line ----

# verdicts FILE: each line of FILE checked as a file of its own: "ok" or
# the reason, then the line
verdicts() {
	while IFS= read -r l; do
		printf '%s\n' "$l" >one.prom
		if stat-serve -c one.prom 2>err; then
			printf 'ok: %s\n' "$l"
		else
			printf '%s: %s\n' "$(sed 's/^stat-serve: one.prom: line 1: //' err)" "$l"
		fi
	done <"$1"
}
cat >good.txt <<'X'
a 1
a NaN
a -Inf
a +inf
a 1e-400
a .5
a 5.
a -1.5E+3 1700000000000
  a	1  
a{} 1
a{}1
a {b="1"} 1
a{b="c\"d\\e\nf",} 1
a{ b = "1" , c="2" } 1
a{b="é ✓"} 1
a:b_c9 1
# HELP a text with \\ and \n
# HELP a
# TYPE a untyped
#HELP
# HELPER x\y
# any comment at all: "\x
X
check_output '-c: lines the format takes' 'verdicts good.txt' <<'X'
ok: a 1
ok: a NaN
ok: a -Inf
ok: a +inf
ok: a 1e-400
ok: a .5
ok: a 5.
ok: a -1.5E+3 1700000000000
ok:   a	1  
ok: a{} 1
ok: a{}1
ok: a {b="1"} 1
ok: a{b="c\"d\\e\nf",} 1
ok: a{ b = "1" , c="2" } 1
ok: a{b="é ✓"} 1
ok: a:b_c9 1
ok: # HELP a text with \\ and \n
ok: # HELP a
ok: # TYPE a untyped
ok: #HELP
ok: # HELPER x\y
ok: # any comment at all: "\x
X
cat >bad.txt <<'X'
a
a 1 2 3
a-b 1
1a 1
{b="1"} 1
a{b="c\x"} 1
a{b="c"d"} 1
a{b="c",b="d"} 1
a{__name__="c"} 1
a{b=c} 1
a{1b="c"} 1
a{b="c} 1
a{b "c"} 1
a +nan
a one
a 1e400
a -1e400
a 0x10
a 1_000
a 1e
a 1 -5
a 1 1.5
a 1 9223372036854775808
# HELP a x\y
# HELP a x\
# HELP 
# HELP a{b="c"} x
# TYPE a
# TYPE a gauge 
# TYPE a Gauge
X
check_output '-c: lines it refuses, and why' 'verdicts bad.txt' <<'X'
no value: a
text after the timestamp: a 1 2 3
a bad character after the metric name a: a-b 1
not a sample, comment or blank line: 1a 1
not a sample, comment or blank line: {b="1"} 1
a bad escape in a label value (only \\, \" and \n): a{b="c\x"} 1
no , or } after a label value: a{b="c"d"} 1
label b given twice: a{b="c",b="d"} 1
the label name __name__ is reserved: a{__name__="c"} 1
a label value not in double quotes: a{b=c} 1
bad label name: a{1b="c"} 1
a label value without its closing quote: a{b="c} 1
no = after a label name: a{b "c"} 1
the value is not a number: a +nan
the value is not a number: a one
the value is a number out of range: a 1e400
the value is a number out of range: a -1e400
the value is not a number: a 0x10
the value is not a number: a 1_000
the value is not a number: a 1e
the timestamp is not milliseconds as an int64: a 1 -5
the timestamp is not milliseconds as an int64: a 1 1.5
the timestamp is not milliseconds as an int64: a 1 9223372036854775808
a bad escape in HELP text (only \\ and \n): # HELP a x\y
a bad escape in HELP text (only \\ and \n): # HELP a x\
HELP without a metric name: # HELP 
HELP without a metric name: # HELP a{b="c"} x
TYPE not counter, gauge, histogram, summary or untyped: # TYPE a
text after the TYPE: # TYPE a gauge 
TYPE not counter, gauge, histogram, summary or untyped: # TYPE a Gauge
X
# check FILE: the verdict on the whole of FILE
c() { stat-serve -c "$1"; echo "exit $?"; }
check_output '-c: a NUL byte, bad UTF-8 (also in a label value), CRLF' '
	printf "a 1\na\0 1\n" >f1; c f1; printf "a{b=\"\377\"} 1\n" >f2; c f2
	printf "a{b=\"\355\240\200\"} 1\n" >f3; c f3; printf "a 1\r\n" >f4; c f4' <<'X'
exit 1
exit 1
exit 1
exit 1
X
check_output '-c: and what it says about them' '
	for f in f1 f2 f3 f4; do stat-serve -c $f 2>&1; done' <<'X'
stat-serve: f1: line 2: a NUL byte
stat-serve: f2: line 1: not valid UTF-8
stat-serve: f3: line 1: not valid UTF-8
stat-serve: f4: line 1: the value is not a number
X
check_output '-c: one HELP and one TYPE per family, the TYPE before its samples' '
	printf "# HELP a x\n# HELP a y\n" >f1; stat-serve -c f1 2>&1
	printf "a 1\n# TYPE a gauge\n" >f2; stat-serve -c f2 2>&1
	printf "# TYPE a gauge\n# TYPE a counter\n" >f3; stat-serve -c f3 2>&1
	printf "# TYPE s summary\n# TYPE s_count counter\n" >f4; stat-serve -c f4 2>&1
	printf "# HELP a x\n# TYPE a gauge\na 1\n# HELP b x\nb 1\n" >f5; c f5' <<'X'
stat-serve: f1: line 2: a second HELP line for a
stat-serve: f2: line 2: a second TYPE line for a, or one after its samples
stat-serve: f3: line 2: a second TYPE line for a, or one after its samples
stat-serve: f4: line 2: a second TYPE line for s_count, or one after its samples
exit 0
X
check_output '-c: histograms and summaries' '
	printf "# TYPE h histogram\nh_bucket{le=\"0.5\"} 1\nh_bucket{le=\"+Inf\"} 2\nh_sum 3\nh_count 2\n" >f1; c f1
	printf "# TYPE h histogram\nh_bucket{x=\"1\"} 1\n" >f2; stat-serve -c f2 2>&1
	printf "# TYPE h histogram\nh_bucket{le=\"half\"} 1\n" >f3; stat-serve -c f3 2>&1
	printf "# TYPE h histogram\nh_sum{le=\"\\\\\\\\\"} 1\n" >f4; stat-serve -c f4 2>&1
	printf "# TYPE h histogram\nh 1\n" >f5; stat-serve -c f5 2>&1
	printf "# TYPE s summary\ns{quantile=\"0.9\"} 1\ns_sum 3\ns_count 2\n" >f6; c f6
	printf "# TYPE s summary\ns 1\n" >f7; stat-serve -c f7 2>&1
	printf "h_bucket 1\ns 1\n" >f8; c f8' <<'X'
exit 0
stat-serve: f2: line 2: no le label
stat-serve: f3: line 2: the le label is not a number
stat-serve: f4: line 2: the le label is not a number
stat-serve: f5: line 2: histogram h: a sample not _bucket, _sum or _count
exit 0
stat-serve: f7: line 2: no quantile label
exit 0
X
check_output '-c: no series twice, whatever the order or spacing of its labels' '
	printf "a{x=\"1\",y=\"2\"} 1\na{y=\"2\",x=\"1\"} 2\n" >f1; stat-serve -c f1 2>&1
	printf "a{x=\"1\"} 1\n\na{ x = \"1\" , } 2 1000\n" >f2; stat-serve -c f2 2>&1
	printf "a{x=\"1\"} 1\na{x=\"1 \"} 1\na_b{x=\"1\"} 1\n" >f3; c f3' <<'X'
stat-serve: f1: line 2: series a given twice (first on line 1)
stat-serve: f2: line 3: series a given twice (first on line 1)
exit 0
X
check_output '-c: not a regular file, too big, missing, empty' '
	mkfifo fifo; c fifo; c /dev/zero; c .; truncate -s 1048577 big; c big; c nothing; : >empty; c empty' <<'X'
exit 1
exit 1
exit 1
exit 1
exit 1
exit 0
X
check_output '-c: what it says about those' '
	for f in fifo /dev/zero . big nothing; do stat-serve -c $f 2>&1; done' <<'X'
stat-serve: fifo: not a regular file
stat-serve: /dev/zero: not a regular file
stat-serve: .: not a regular file
stat-serve: big: over 1048576 bytes
stat-serve: nothing: No such file or directory
X
done_testing
