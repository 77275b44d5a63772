#!/bin/sh
# lib/grpc and lib/drapb through t/unit/grpc-echo (a server on two unix
# sockets, as the kubelet plugin has) and t/unit/grpc-call (a client on
# nghttp2's client API): framing, every error status with its exact
# message, percent-encoded grpc-message, the plugin messages against
# protobuf bytes written out by hand, one socket answering while the
# other is busy, idle connections kept, cancelled and vanished clients,
# garbage instead of HTTP/2, SIGTERM; and curl as a client not ours.
. "$(dirname "$0")/lib.sh"

EVENTUALLY_HZ=10
call() { unit grpc-call "$@"; }
DRA1=/k8s.io.kubelet.pkg.apis.dra.v1.DRAPlugin
DRA1B1=/k8s.io.kubelet.pkg.apis.dra.v1beta1.DRAPlugin
REG=/pluginregistration.Registration

# started as unit does, but in this shell, so that $! is its PID
if [ "${VALGRIND:-}" = 1 ]; then
	set -- valgrind -q --error-exitcode=99 --leak-check=full \
		--errors-for-leak-kinds=definite,indirect
else
	set --
fi
"$@" "$BUILD/unit/grpc-echo" "$SCRATCH/reg.sock" "$SCRATCH/dra.sock" \
	>echo.out 2>echo.err &
echo_pid=$!
stop_echo() { kill "$echo_pid" 2>/dev/null; }
trap stop_echo EXIT
eventually 30 grep -qx ready echo.out ||
	{ echo "Bail out! grpc-echo did not start: $(cat echo.err)"; exit 1; }

check 'both sockets are there, mode 0660' '
	test -S reg.sock && test -S dra.sock &&
	test "$(stat -c %a reg.sock) $(stat -c %a dra.sock)" = "660 660"'

check_output 'Echo: the request comes back, as HEADERS, DATA, trailers' '
	printf hello | call -v dra.sock /test.Echo/Echo' <<'EOF'
headers :status=200 content-type=application/grpc
data 10
trailers grpc-status=0 end
status 0
68656c6c6f
EOF

check_output 'an empty message is 5 bytes each way' '
	call -v dra.sock /test.Echo/Echo </dev/null' <<'EOF'
headers :status=200 content-type=application/grpc
data 5
trailers grpc-status=0 end
status 0

EOF

check_output 'application/grpc+proto is gRPC too' '
	printf x | call -t application/grpc+proto dra.sock /test.Echo/Echo' <<'EOF'
status 0
78
EOF

check_output 'unknown method: Trailers-Only, status 12' '
	call -v dra.sock /test.Echo/Nope </dev/null &&
	call reg.sock /test.Echo/Echo </dev/null' <<'EOF'
headers :status=200 content-type=application/grpc grpc-status=12 grpc-message=unknown method /test.Echo/Nope end
status 12
message unknown method /test.Echo/Nope
status 12
message unknown method /test.Echo/Echo
EOF

check_output 'content-type text/plain, or GET: HTTP 415 without a gRPC status' '
	printf x | call -v -t text/plain dra.sock /test.Echo/Echo &&
	printf x | call -m GET dra.sock /test.Echo/Echo' <<'EOF'
headers :status=415 end
http 415
http 415
EOF

printf '\1\0\0\0\1x' >compressed
printf '\2\0\0\0\1x' >flag2
printf '\0\0\0' >short-prefix
printf '\0\0\0\0\12abc' >short-body
printf '\0\0\0\0\1a\0\0\0\0\1b' >two
: >empty
check_output 'framing errors: each its status and message' '
	for f in compressed flag2 short-prefix short-body two empty; do
		call -r dra.sock /test.Echo/Echo $f || exit 1
	done' <<'EOF'
status 12
message compressed messages are not supported
status 13
message bad message flag 2
status 13
message truncated message prefix: 3 of 5 bytes
status 13
message truncated message: 3 of 10 bytes
status 3
message more than one request message
status 13
message request has no message
EOF

head -c 4194304 /dev/zero | tr '\0' a >max
printf b >>max
check_output 'a message over 4 MiB: 8 RESOURCE_EXHAUSTED; 4 MiB exactly is served' '
	call dra.sock /test.Echo/Echo max &&
	head -c 4194304 max | call dra.sock /test.Echo/Echo >max.out &&
	sed -n 1p max.out && sed -n 2p max.out | wc -c' <<'EOF'
status 8
message request message of 4194305 bytes is over the limit of 4194304
status 0
8388609
EOF

check_output 'grpc-message is percent-encoded on the wire and decodes exactly' '
	call -v dra.sock /test.Echo/Fail </dev/null' <<'EOF'
headers :status=200 content-type=application/grpc grpc-status=9 grpc-message=GPU 3 held: 100%25 by %E2%80%9Calice%E2%80%9D%0Asee ledger end
status 9
message GPU 3 held: 100% by “alice”
see ledger
EOF

# PluginInfo, field by field: 0a 09 "DRAPlugin" (1 type), 12 11
# "gpu.canhazgpu.dev" (2 name), 1a LEN endpoint (3), 22 0c "v1.DRAPlugin"
# and 22 11 "v1beta1.DRAPlugin" (4 supported_versions, in that order).
ep=$SCRATCH/dra.sock
ep_hex=$(printf %s "$ep" | od -An -tx1 -v | tr -d ' \n')
check_output 'GetInfo: the PluginInfo bytes, v1.DRAPlugin first' '
	call reg.sock $REG/GetInfo </dev/null' <<EOF
status 0
0a09445241506c7567696e12116770752e63616e68617a6770752e6465761a$(printf %02x ${#ep})${ep_hex}220c76312e445241506c7567696e2211763162657461312e445241506c7567696e
EOF

check_output 'GetInfo decoded' 'call -j reg.sock $REG/GetInfo' <<EOF
status 0
{"type":"DRAPlugin","name":"gpu.canhazgpu.dev","endpoint":"$ep","supportedVersions":["v1.DRAPlugin","v1beta1.DRAPlugin"]}
EOF

check_output 'NotifyRegistrationStatus: decoded by the server, empty answer' '
	echo "{\"registered\":false,\"error\":\"version mismatch\"}" |
		call -j reg.sock $REG/NotifyRegistrationStatus &&
	echo "{\"registered\":true}" |
		call reg.sock $REG/NotifyRegistrationStatus /dev/null &&
	printf "\10\1" | call reg.sock $REG/NotifyRegistrationStatus &&
	grep ^notify echo.out' <<'EOF'
status 0
{}
status 0

status 0

notify registered=0 error=version mismatch
notify registered=0 error=
notify registered=1 error=
EOF

# NodePrepareResourcesRequest by hand: 0a 0c {0a 02 "ns", 12 02 "u1",
# 1a 02 "c1"}. The answer: the map entry 0a 35 {0a 02 "u1" (key), 12 2f
# (value) {0a 2d (Device) {0a 03 "req", 12 04 "pool", 1a 06 "dev-c1",
# 22 18 "k8s.canhazgpu.dev/gpu=u1"}}}.
check_output 'NodePrepareResources: protobuf bytes by hand, both ways' '
	printf "\12\14\12\2ns\22\2u1\32\2c1" |
		call dra.sock $DRA1/NodePrepareResources' <<'EOF'
status 0
0a350a027531122f0a2d0a037265711204706f6f6c1a066465762d633122186b38732e63616e68617a6770752e6465762f6770753d7531
EOF

cat >claims.json <<'EOF'
{"claims":[{"namespace":"ns","uid":"u1","name":"c1"},{"namespace":"ns","uid":"u2","name":"bad"}]}
EOF
check_output 'v1 and v1beta1 NodePrepareResources, NodeUnprepareResources in JSON' '
	call -j dra.sock $DRA1/NodePrepareResources claims.json &&
	call -j dra.sock $DRA1B1/NodePrepareResources claims.json &&
	call -j dra.sock $DRA1/NodeUnprepareResources claims.json &&
	call -j dra.sock $DRA1B1/NodeUnprepareResources claims.json' <<'EOF'
status 0
{"claims":{"u1":{"devices":[{"requestNames":["req"],"poolName":"pool","deviceName":"dev-c1","cdiDeviceIDs":["k8s.canhazgpu.dev/gpu=u1"]}]},"u2":{"devices":[],"error":"no such device"}}}
status 0
{"claims":{"u1":{"devices":[{"requestNames":["req"],"poolName":"pool","deviceName":"dev-c1","cdiDeviceIDs":["k8s.canhazgpu.dev/gpu=u1"]}]},"u2":{"devices":[],"error":"no such device"}}}
status 0
{"claims":{"u1":{},"u2":{}}}
status 0
{"claims":{"u1":{},"u2":{}}}
EOF

check_output 'a request that does not decode, or has bad UTF-8: status 3' '
	printf "\12\14\12\2" | call dra.sock $DRA1/NodePrepareResources &&
	printf "\12\3\22\1\377" | call dra.sock $DRA1/NodePrepareResources' <<'EOF'
status 3
message not a valid NodePrepareResourcesRequest message
status 3
message a string is not valid UTF-8
EOF

# The order of completion, not a time: GetInfo on the other socket, and
# Echo on another connection to the same one, end while Slow sleeps.
printf 3000 >ms3000
check_output 'GetInfo and Echo answered while a Slow(3000) runs' '
	{ call dra.sock /test.Echo/Slow ms3000 >slow.out && echo slow >>order; } &
	slow=$!
	eventually 30 grep -qx "slow 3000" echo.out &&
	call -j reg.sock $REG/GetInfo >info.out && echo getinfo >>order &&
	printf x | call dra.sock /test.Echo/Echo >echo1.out && echo echo >>order &&
	wait $slow && cat order slow.out && grep -c "^status 0" info.out echo1.out' <<'EOF'
getinfo
echo
slow
status 0
33303030
info.out:1
echo1.out:1
EOF

check_output 'three calls on one connection, idle between them' '
	printf abc | call -k 3 -i 1 dra.sock /test.Echo/Echo' <<'EOF'
status 0
616263
status 0
616263
status 0
616263
EOF

printf 800 >ms800
check_output 'a call cancelled mid-Slow; the next on the same connection works' '
	call -k 2 -c 200 dra.sock /test.Echo/Slow ms800' <<'EOF'
cancelled
status 0
383030
EOF

printf 1000 >ms1000
# slow_calls_over MS N: more than N Slow(MS) calls have begun
slow_calls_over() { test "$(grep -c "^slow $1\$" echo.out)" -gt "$2"; }
check_output 'a client gone mid-Slow: the server goes on serving' '
	n=$(grep -c "^slow 1000\$" echo.out)
	"$BUILD/unit/grpc-call" dra.sock /test.Echo/Slow ms1000 >/dev/null &
	gone=$!
	eventually 30 slow_calls_over 1000 "$n" &&
	kill -KILL $gone && sleep 1.5 &&
	printf ok | call dra.sock /test.Echo/Echo' <<'EOF'
status 0
6f6b
EOF

check_output 'garbage instead of the preface: SETTINGS, GOAWAY, closed; logged once' '
	printf "GET / HTTP/1.1\r\nHost: x\r\n\r\n" | call -g dra.sock &&
	{ printf "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"; printf "\0\0\5\4\0\0\0\0\0abcde"; } |
		call -g reg.sock &&
	printf still | call dra.sock /test.Echo/Echo &&
	cat echo.err' <<'EOF'
frame SETTINGS
frame GOAWAY PROTOCOL_ERROR
closed
frame SETTINGS
frame GOAWAY FRAME_SIZE_ERROR
closed
status 0
7374696c6c
grpc-echo: dra: closed a connection: no HTTP/2 client preface
grpc-echo: registration: closed a connection: FRAME_SIZE_ERROR
EOF

check 'a file that is not a socket is not removed' '
	: >plain && must_fail 1 unit grpc-echo plain other.sock 2>err &&
	test -f plain && ! test -e other.sock &&
	test "$(cat err)" = "grpc-echo: plain: exists and is not a socket"'

# curl, built on nghttp2 too but a client not ours: trailers in -v.
if curl -V 2>/dev/null | grep -q 'Features:.*HTTP2' &&
	curl -V | grep -q 'Features:.*UnixSockets'; then
	printf '\0\0\0\0\2hi' >hi.req
	check_output 'curl --http2-prior-knowledge: headers, body, grpc-status trailer' '
		curl -sv --http2-prior-knowledge --unix-socket dra.sock \
			-H "content-type: application/grpc" -H "te: trailers" \
			--data-binary @hi.req -o hi.resp \
			http://localhost/test.Echo/Echo 2>&1 |
			sed -n "s/\r//; s/ *$//; /^</p" &&
		od -An -tx1 hi.resp' <<'EOF'
< HTTP/2 200
< content-type: application/grpc
<
< grpc-status: 0
 00 00 00 00 02 68 69
EOF
fi

kill -TERM $echo_pid
wait $echo_pid
echo_rc=$?
check 'SIGTERM: exit 0, both sockets gone, nothing more on stderr' '
	test $echo_rc = 0 && ! test -e reg.sock && ! test -e dra.sock &&
	test "$(wc -l <echo.err)" = 2'

done_testing
