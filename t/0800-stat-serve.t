#!/bin/sh
# stat-serve answers /metrics, /healthz and /readyz from files, on loopback.
. "$(dirname "$0")/lib.sh"

port=$((20000 + $$ % 10000))
mkdir -p st
stat-serve -l 127.0.0.1:$port -d st -s 2 2>serve.err &
pid=$!
n=0
until curl -s -o /dev/null "http://127.0.0.1:$port/healthz" || [ $n -ge 50 ]; do sleep 0.1; n=$((n + 1)); done
get() { curl -s -w ' %{http_code}\n' "http://127.0.0.1:$port$1"; }

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
check_output 'readyz: 503 before any cycle, 200 after one, 503 when stale' '
	get /readyz; touch st/ready; get /readyz; touch -d "-10 seconds" st/ready; get /readyz' <<'X'
not ready: no cycle finished yet
 503
ok
 200
not ready: last good cycle 10s ago
 503
X
check_output 'unknown path 404, POST 405' \
	'get /nope; curl -s -X POST -w " %{http_code}\n" "http://127.0.0.1:$port/metrics"' <<'X'
not found
 404
method not allowed
 405
X
kill -TERM $pid
wait $pid
t_result $? 'TERM stops it with status 0'
check 'a busy port is an error with status 1' '
	stat-serve -l 127.0.0.1:$port -d st & p2=$!; sleep 0.3
	stat-serve -l 127.0.0.1:$port -d st 2>err; rc=$?; kill $p2; wait $p2
	test $rc = 1 && grep -q "^stat-serve: 127.0.0.1:$port: cannot listen" err'
check 'with -P it stops when its parent dies' '
	sh -c "stat-serve -P -l 127.0.0.1:$port -d st & echo \$! >child.pid; sleep 0.5" && sleep 0.5 &&
	! awk "{ exit \$3 == \"Z\" }" "/proc/$(cat child.pid)/stat" 2>/dev/null'
check 'a bad address is a usage error' \
	'must_fail 2 stat-serve -l 0.0.0.0 2>err && grep -q "not an IPv4 address" err'
done_testing
