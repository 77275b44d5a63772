#!/bin/sh
# lib/grpcc (the unary gRPC client) and the parts of lib/cri that need no
# container runtime, through t/unit/cri against t/unit/grpc-echo (our own
# server, lib/grpc): answers with and without a message, Trailers-Only
# failures with a percent-encoded grpc-message, a caller's headers, 4 MiB
# each way, the 16 MiB cap, a missing socket, a socket nothing listens
# on, a server that never answers (HTTP/2 or not) and the local timeout;
# lib/cri's reasons from made-up runtime messages in containerd's wording,
# a runtime that is not containerd asked to pin, refs to repositories,
# and credentials from dockerconfigjson (docker.io's aliases, wildcards,
# "auth" decoding, malformed objects).
. "$(dirname "$0")/lib.sh"

EVENTUALLY_HZ=10
cri() { unit cri "$@"; }

if [ "${VALGRIND:-}" = 1 ]; then
	set -- valgrind -q --error-exitcode=99 --leak-check=full \
		--errors-for-leak-kinds=definite,indirect
else
	set --
fi
"$@" "$BUILD/unit/grpc-echo" "$SCRATCH/reg.sock" "$SCRATCH/d.sock" \
	>echo.out 2>echo.err &
echo_pid=$!
"$BUILD/unit/cri" "$SCRATCH/mute.sock" mute >mute.out 2>&1 3>&- 4>&- &
mute_pid=$!
"$BUILD/unit/cri" "$SCRATCH/gone.sock" mute >gone.out 2>&1 3>&- 4>&- &
gone_pid=$!
stop() { kill "$echo_pid" "$mute_pid" "$gone_pid" 2>/dev/null; }
trap stop EXIT
eventually 30 grep -qx ready echo.out ||
	{ echo "Bail out! grpc-echo did not start: $(cat echo.err)"; exit 1; }
eventually 30 grep -qx ready mute.out && eventually 30 grep -qx ready gone.out ||
	{ echo "Bail out! cri mute did not start"; exit 1; }
# gone.sock stays behind with nothing listening on it
kill "$gone_pid" && wait "$gone_pid" 2>/dev/null

check_output 'a call: the message back, status 0; an empty message is 0 bytes' '
	printf hello | cri d.sock call /test.Echo/Echo 0 &&
	cri d.sock call /test.Echo/Echo 1000 </dev/null' <<'EOF'
{"status":0,"size":5,"response":"68656c6c6f"}
{"status":0,"size":0,"response":""}
EOF

check_output 'Trailers-Only failures: the status, the message percent-decoded; exit 1' '
	must_fail 1 cri d.sock call /test.Echo/Fail 0 </dev/null &&
	must_fail 1 cri d.sock call /test.Echo/Nope 0 </dev/null' <<'EOF'
{"status":9,"message":"GPU 3 held: 100% by “alice”\nsee ledger"}
{"status":12,"message":"unknown method /test.Echo/Nope"}
EOF

check_output 'the caller'\''s headers go out: its content-type replaces ours (HTTP 415)' '
	printf x | cri d.sock call /test.Echo/Echo 0 containerd-namespace k8s.io &&
	printf x | must_fail 1 cri d.sock call /test.Echo/Echo 0 content-type text/plain' <<'EOF'
{"status":0,"size":1,"response":"78"}
{"errno":"EPROTO","error":"HTTP status 415, not a gRPC answer"}
EOF

head -c 4194304 /dev/zero | tr '\0' b >4m
check_output '4 MiB each way; 16 MiB answered; 16 MiB and a byte refused' '
	cri d.sock call /test.Echo/Echo 0 <4m &&
	printf 16777216 | cri d.sock call /test.Echo/Big 0 &&
	printf 16777217 | must_fail 1 cri d.sock call /test.Echo/Big 0' <<'EOF'
{"status":0,"size":4194304,"response":""}
{"status":0,"size":16777216,"response":""}
{"errno":"EMSGSIZE","error":"the answer is over the limit of 16777216 bytes"}
EOF

check_output 'no socket; a socket nothing listens on' '
	must_fail 1 cri missing.sock call /test.Echo/Echo 0 </dev/null &&
	must_fail 1 cri gone.sock call /test.Echo/Echo 0 </dev/null' <<'EOF'
{"errno":"ENOENT","error":"connect to missing.sock: No such file or directory"}
{"errno":"ECONNREFUSED","error":"connect to gone.sock: Connection refused"}
EOF

# ms_since T0: milliseconds since T0 (date +%s%3N)
ms_since() { echo $(($(date +%s%3N) - $1)); }
printf 3000 >ms3000
check_output 'the timeout is enforced here: a silent socket, a slow handler' '
	t0=$(date +%s%3N)
	must_fail 1 cri mute.sock call /test.Echo/Echo 300 </dev/null &&
	test "$(ms_since $t0)" -lt 2000 &&
	t0=$(date +%s%3N) &&
	must_fail 1 cri d.sock call /test.Echo/Slow 500 <ms3000 &&
	test "$(ms_since $t0)" -lt 2500 && grep -c "^slow 3000$" echo.out' <<'EOF'
{"errno":"ETIMEDOUT","error":"no answer in 300 ms"}
{"errno":"ETIMEDOUT","error":"no answer in 500 ms"}
1
EOF

# lib/cri on a server that is not a runtime, or a made-up one: each
# message in containerd 2.x's words (seen in t/9730-cri.t) gives its
# reason; the reason is read from the words, not from where they sit.
R=127.0.0.1:5000/app:1
check_output 'cri: reasons from the runtime'\''s words' '
	for m in "$R: not found" \
		"failed to resolve reference \"$R\": unexpected status from HEAD request to http://$R: 401 Unauthorized" \
		"pull access denied, repository does not exist or may require authorization: authorization failed" \
		"failed to do request: Head \"http://127.0.0.1:1/v2/app/manifests/1\": dial tcp 127.0.0.1:1: connect: connection refused" \
		"lookup nope.invalid: no such host" \
		"context deadline exceeded" \
		"failed to extract layer: no space left on device"; do
		cri d.sock pull "$m" | jq -r ".reason"
	done &&
	cri d.sock pull x | jq -c . &&
	must_fail 1 cri missing.sock pull x &&
	must_fail 1 cri d.sock image x &&
	must_fail 1 cri d.sock progress' <<'EOF'
NotFound
Unauthorized
Unauthorized
Unreachable
Unreachable
Timeout
RuntimeError
{"reason":"RuntimeError","message":"pull x: x","resolved":"","bytes":0}
{"reason":"RuntimeError","message":"pull x: no container runtime at missing.sock (No such file or directory)","resolved":"","bytes":0}
{"reason":"RuntimeError","message":"image x: unknown method /runtime.v1.ImageService/ImageStatus"}
{"error":"unsupported"}
EOF

check_output 'cri: version; pin on CRI-O is no failure: pinned -1 and why' '
	cri d.sock version && cri d.sock pin x && cri d.sock unpin x' <<'EOF'
{"runtime":"cri-o","version":"1.34.0"}
{"reason":"","message":"cri-o pins only the images its pinned_images setting (crio.conf) lists","pinned":-1}
{"reason":"","message":"cri-o pins only the images its pinned_images setting (crio.conf) lists","pinned":-1}
EOF

check_output 'refs: registry and repository, as runtimes list repo digests' '
	for r in busybox busybox:1.36 library/busybox@sha256:abc \
		index.docker.io/me/app:2 localhost/app localhost:5000/a/b/c:tag \
		127.0.0.1:5000/app:1 127.0.0.1:5000/app@sha256:0123 \
		reg.example.com/team/app:v1@sha256:0123 ghcr.io/o/r; do
		cri - repo "$r" || exit 1
	done' <<'EOF'
{"registry":"docker.io","repository":"docker.io/library/busybox"}
{"registry":"docker.io","repository":"docker.io/library/busybox"}
{"registry":"docker.io","repository":"docker.io/library/busybox"}
{"registry":"docker.io","repository":"docker.io/me/app"}
{"registry":"localhost","repository":"localhost/app"}
{"registry":"localhost:5000","repository":"localhost:5000/a/b/c"}
{"registry":"127.0.0.1:5000","repository":"127.0.0.1:5000/app"}
{"registry":"127.0.0.1:5000","repository":"127.0.0.1:5000/app"}
{"registry":"reg.example.com","repository":"reg.example.com/team/app"}
{"registry":"ghcr.io","repository":"ghcr.io/o/r"}
EOF

# auth: "alice:s3cr:et" and "bob:pw" in base64; a password may hold ':'
cat >auths.json <<'EOF'
{"auths": {
  "https://index.docker.io/v1/": {"auth": "YWxpY2U6czNjcjpldA=="},
  "127.0.0.1:5000": {"username": "carol", "password": "pw5000"},
  "http://127.0.0.1:5001/v2/": {"username": "x", "password": "y", "auth": "Ym9iOnB3"},
  "*.example.com": {"username": "wild", "password": "card"},
  "Reg.Example.com": {"username": "exact", "password": "wins"},
  "tokenonly.io": {"identitytoken": "t"},
  "notobj.io": "alice:pw",
  "badauth.io": {"auth": "!!!"},
  "nocolon.io": {"auth": "Ym9i"},
  "badtype.io": {"username": 7}
}}
EOF
check_output 'auth: docker.io and its aliases, hosts, "auth" over username, wildcards' '
	for r in busybox docker.io/x/y registry-1.docker.io/x/y \
		127.0.0.1:5000/app:1 127.0.0.1:5001/app 127.0.0.1:5002/app \
		reg.example.com/a other.example.com/a a.b.example.com/a; do
		cri - auth auths.json "$r" || exit 1
	done' <<'EOF'
{"found":true,"server":"docker.io","username":"alice","password":"s3cr:et"}
{"found":true,"server":"docker.io","username":"alice","password":"s3cr:et"}
{"found":true,"server":"registry-1.docker.io","username":"alice","password":"s3cr:et"}
{"found":true,"server":"127.0.0.1:5000","username":"carol","password":"pw5000"}
{"found":true,"server":"127.0.0.1:5001","username":"bob","password":"pw"}
{"found":false}
{"found":true,"server":"reg.example.com","username":"exact","password":"wins"}
{"found":true,"server":"other.example.com","username":"wild","password":"card"}
{"found":false}
EOF

printf '{"auths": []}' >notauths.json
printf '{"127.0.0.1:5000": {"auth": "Ym9iOnB3"}}' >oldshape.json
check_output 'auth: malformed entries say where, never what the secret is; exit 1' '
	for r in tokenonly.io/a notobj.io/a badauth.io/a nocolon.io/a badtype.io/a; do
		must_fail 1 cri - auth auths.json "$r" || exit 1
	done &&
	must_fail 1 cri - auth notauths.json 127.0.0.1:5000/a &&
	must_fail 1 cri - auth oldshape.json 127.0.0.1:5000/a' <<'EOF'
{"error":"auths[\"tokenonly.io\"] has no username"}
{"error":"auths[\"notobj.io\"] is not an object"}
{"error":"auths[\"badauth.io\"].auth is not base64"}
{"error":"auths[\"nocolon.io\"].auth is not base64 of user:password"}
{"error":"auths[\"badtype.io\"]: username or password is not a string"}
{"error":"no \"auths\" object"}
{"error":"no \"auths\" object"}
EOF

check_output 'pull with an auth file: the runtime gets the matching user' '
	cri d.sock pull 127.0.0.1:5001/app auths.json | jq -r .message &&
	cri d.sock pull 127.0.0.1:5002/app auths.json | jq -r .message &&
	must_fail 1 cri d.sock pull badauth.io/a auths.json' <<'EOF'
pull 127.0.0.1:5001/app: 127.0.0.1:5001/app as bob
pull 127.0.0.1:5002/app: 127.0.0.1:5002/app
{"error":"auths[\"badauth.io\"].auth is not base64"}
EOF

kill -TERM "$echo_pid"
wait "$echo_pid"
echo_rc=$?
check 'the server saw no bad client: exit 0, nothing on its stderr' '
	test $echo_rc = 0 && ! test -s echo.err'

done_testing
