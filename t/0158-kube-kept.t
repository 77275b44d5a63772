#!/bin/sh
# lib/h1 through t/unit/h1: a request's head; answers framed by chunks
# (sizes, extensions, a trailer), by Content-Length, by the connection's
# end, with no body (HEAD, 204, 304), after 100 Continue, the same when
# handed over one byte at a time; the connection kept or not (Connection:
# close, HTTP/1.0, no length); Retry-After. Hostile answers named by
# byte: two lengths, a coding not supported, a status under 100, a bad
# (a NUL after its digits) or lying chunk size, a head over 64 KiB, not
# HTTP, a 101, a body over the limit before it is read, a connection that
# ends or fails inside an answer (a fuzz target too, t/fuzz/h1-answer.c).
# Then lib/kube's kept connection (kube_keep, through t/unit/kube -K)
# against an HTTPS server on 127.0.0.1 (t/tlsserve): the same answers as
# libcurl's transfers for lists, applies and errors; many requests on one
# connection; Retry-After obeyed; a kept connection the server dropped is
# opened anew and the request sent once more, a new one that drops is an
# error; a crafted chunked answer read whole; an answer that closes the
# connection makes the next request open one; an untrusted certificate
# refused, once, as without it.
. "$(dirname "$0")/lib.sh"

check_output 'h1_head: the request line, Host, the lines given, the length' \
	'unit h1 head PATCH "/a/b?x=1&y=2" 127.0.0.1:6443 12 "Accept: application/json" "User-Agent: t"; echo
	 unit h1 head GET /api 127.0.0.1:1 -1' <<'EOF'
PATCH /a/b?x=1&y=2 HTTP/1.1\r
Host: 127.0.0.1:6443\r
Accept: application/json\r
User-Agent: t\r
Content-Length: 12\r
\r

GET /api HTTP/1.1\r
Host: 127.0.0.1:1\r
\r
EOF

# Five answers on one connection, each framed another way.
printf 'HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n3;ext=1\r\n{"a\r\nA \r\n":"0123456\r\n3\r\n"}\n\r\n0\r\nX-Trailer: 1\r\n\r\n' >answers
printf 'HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 429 Too Many Requests\r\nRetry-After: 3\r\nContent-Length: 2\r\n\r\nhi' >>answers
printf 'HTTP/1.1 204 No Content\r\nContent-Length: 0\r\n\r\n' >>answers
printf 'HTTP/1.1 304 Not Modified\r\nContent-Length: 9\r\n\r\n' >>answers
printf 'HTTP/1.0 200 OK\nConnection: keep-alive, Close\n\nthe rest \001\377 to the end\n' >>answers
cat >answers.out <<'EOF'
answer 200 keep=1 after=-1 len=16
{"a":"0123456"}

answer 429 keep=1 after=3 len=2
hi
answer 204 keep=1 after=-1 len=0
answer 304 keep=1 after=-1 len=0
answer 200 keep=0 after=-1 len=23
the rest \x01\xff to the end

end
EOF
check_output 'five answers on one connection: chunked, 100 then 429, 204, 304, to the end' \
	'unit h1 read <answers' <answers.out
check_output 'the same handed over one byte at a time, and seven at a time' \
	'unit h1 read -p 1 <answers; unit h1 read -p 7 <answers' <<EOF
$(cat answers.out)
$(cat answers.out)
EOF
check_output 'answers to HEAD have no body, whatever their length says' \
	'printf "HTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\nHTTP/1.1 404 Not Found\r\nTransfer-Encoding: chunked\r\n\r\n" | unit h1 read -M HEAD' <<'EOF'
answer 200 keep=1 after=-1 len=0
answer 404 keep=1 after=-1 len=0
end
EOF

# bad 'printf format' [read options]: one hostile answer
bad() { printf "$1" | unit h1 read ${2:-}; }
check_output 'hostile answers: each refused, named by its byte' '
	bad "HTTP/1.1 200 OK\r\nContent-Length: 5\r\nContent-Length: 6\r\n\r\nhello"
	bad "HTTP/1.1 200 OK\r\nContent-Length: 5\r\nContent-Length: 5\r\n\r\nhello"
	bad "HTTP/1.1 200 OK\r\nContent-Length: -5\r\n\r\n"
	bad "HTTP/1.1 200 OK\r\nContent-Length: 99999999999999999999\r\n\r\n"
	bad "HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip, chunked\r\n\r\n"
	bad "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n"
	bad "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\000\r\nhello\r\n0\r\n\r\n"
	bad "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nabc\r\n0\r\n\r\n"
	bad "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nfffffffffffffffff\r\n"
	bad "SSH-2.0-OpenSSH\r\n\r\n"
	bad "HTTP/1.1 2000 OK\r\n\r\n"
	bad "HTTP/1.1 000 Continue\r\n\r\n"
	bad "HTTP/1.1 101 Switching Protocols\r\n\r\n"
	bad "HTTP/1.1 200 OK\r\nno colon here\r\n\r\n"' <<'EOF'
error bad got=62: answer byte 36: two Content-Lengths
answer 200 keep=1 after=-1 len=5
hello
end
error bad got=39: answer byte 17: Content-Length not a length
error bad got=57: answer byte 17: Content-Length not a length
error bad got=53: answer byte 17: Transfer-Encoding gzip, chunked not supported
error bad got=51: answer byte 47: not a chunk size
error bad got=63: answer byte 47: not a chunk size
error bad got=60: answer byte 52: a chunk longer than its size
error bad got=66: answer byte 47: a chunk size too large
error bad got=19: answer byte 0: not an HTTP/1.x status line
error bad got=20: answer byte 0: not an HTTP/1.x status line
error bad got=25: answer byte 0: not an HTTP/1.x status line
error bad got=36: answer byte 36: 101 to a plain request
error bad got=34: answer byte 17: a field line without a name
EOF

check_output 'over the limit: refused before the body is read (Content-Length, a chunk), or where it passes it (to the end)' '
	bad "HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n" "-m 99"
	bad "HTTP/1.1 200 OK\r\nContent-Length: 99\r\n\r\n" "-m 99"
	bad "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n40\r\n" "-m 66"
	bad "HTTP/1.1 200 OK\r\n\r\n0123456789" "-m 9"' <<'EOF'
error big got=40: answer byte 40: a body larger than 99 bytes
error end got=39: the connection closed inside the body (answer byte 39)
error big got=59: answer byte 59: a body larger than 66 bytes
error big got=29: answer byte 28: a body larger than 9 bytes
EOF

{ printf 'HTTP/1.1 200 OK\r\nX: '; head -c 70000 /dev/zero | tr '\0' a; printf '\r\n\r\n'; } >long-head
check_output 'a head over 64 KiB; a connection that ends, or fails, inside an answer; before one' '
	unit h1 read <long-head
	bad "HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\nonly ten b"
	bad "HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\nonly ten b" "-f 45"
	bad "HTTP/1.1 200 OK\r\nContent-"
	bad "" "-f 0"' <<'EOF'
error bad got=70024: answer byte 0: the head longer than 65536 bytes
error end got=50: the connection closed inside the body (answer byte 50)
error read got=50: 
error end got=25: the connection closed inside the answer (answer byte 25)
error read got=0: 
EOF

# ---- lib/kube's kept connection, against t/tlsserve ----
echo '{"kind":"Node","metadata":{"name":"x"}}' >page.json
tls_serve -b page.json -q queue
kc() {
	printf '%s\n' "apiVersion: v1" "kind: Config" "current-context: t" \
		"contexts: [{name: t, context: {cluster: c, user: u}}]" \
		"clusters: [{name: c, cluster: {server: \"$S\"$1}}]" \
		"users: [{name: u, user: {token: x}}]"
}
kc ", certificate-authority: $SCRATCH/tls.crt" >kc
kc "" >kc-untrusted

# log: what the server saw: C a connection, then each request's method
# and what answered it from the queue
log() { sed -n 's/^connect$/C/p; s/^request \([A-Z]*\) .*/\1/p; s/^queued \([a-z0-9]*\) .*/\1/p' tls.log | tr '\n' ' '; echo; }
# both ARGS...: unit kube ARGS with libcurl's transfers, then kept (-K),
# each with the queue $Q (printf format) and the object in.json on
# stdin; the two outputs, exit status included, must be the same
both() {
	for K in "" -K; do
		: >tls.log
		printf "${Q:-}" >queue
		unit kube $K "$@" <in.json >raw 2>&1
		echo "exit $?" >>raw
		sed "s/127.0.0.1:[0-9]*/127.0.0.1:PORT/" raw >got$K
	done
	cmp -s got got-K || { echo "kept differs:"; diff got got-K; }
	cat got-K
}
# kept ARGS...: unit kube -K ARGS, queue $Q, then what the server saw
kept() {
	: >tls.log
	printf "${Q:-}" >queue
	unit kube -K "$@" <in.json >got 2>&1
	echo "exit $?" >>got
	sed "s/127.0.0.1:[0-9]*/127.0.0.1:PORT/" got
	log
}
echo '{"kind":"Job","apiVersion":"batch/v1","metadata":{"name":"j","namespace":"n"}}' >in.json

check_output 'kept or not, the same: a get, an apply, a 404, a 429 then the object, a 500' '
	Q= both -k kc get /api/v1/nodes/x
	Q= both -k kc apply-meta /apis/batch/v1/namespaces/n/jobs/j m force
	Q="404 -\n" both -k kc get /api/v1/nodes/x
	Q="429 0\n" both -k kc get /api/v1/nodes/x
	Q="500 -\n" both -k kc delete /api/v1/nodes/x' <<'EOF'
{"kind":"Node","metadata":{"name":"x"}}
exit 0
{"kind":"Node","metadata":{"name":"x"}}
exit 0
kube: GET /api/v1/nodes/x: 404 Not Found: queued 404
kind=api status=404 reason=
exit 1
{"kind":"Node","metadata":{"name":"x"}}
exit 0
kube: DELETE https://127.0.0.1:PORT/api/v1/nodes/x: 500 Internal Server Error: queued 500
kind=temp status=500 reason=
exit 75
EOF

check_output 'kept or not, an untrusted certificate is refused, once' '
	Q= both -k kc-untrusted get /api/v1/nodes/x | sed "s/: SSL certificate problem.*/: SSL certificate problem/"; log' <<'EOF'
kube: GET https://127.0.0.1:PORT/api/v1/nodes/x: SSL certificate problem
kind=fail status=0 reason=
exit 1
C 
EOF

printf 'HTTP/1.1 200 OK\r\nContent-Length: 40\r\n\r\n{"kind":"Node","metadata":{"name":"ok"}}' >ok.http
printf 'HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n1\r\n{\r\n1a;x=y\r\n"kind":"Node","metadata":{\r\nc\r\n"name":"chun\r\n4\r\nk"}}\r\n0\r\n\r\n' >chunked.http
printf 'HTTP/1.1 200 OK\r\nConnection: close\r\n\r\n{"kind":"Node","metadata":{"name":"end"}}' >end.http.close
printf 'HTTP/1.1 200 OK\r\nContent-Length: 5\r\nContent-Length: 6\r\n\r\nhello!' >two.http
printf 'HTTP/1.1 200 OK\r\nContent-Length: 99\r\n\r\n{"kind"' >short.http
check_output 'kept: three requests, one connection; Retry-After waited out on it' '
	Q= kept -r 3 -k kc get /api/v1/nodes/x
	Q="503 0\n503 0\n" kept -k kc get /api/v1/nodes/x' <<'EOF'
{"kind":"Node","metadata":{"name":"x"}}
{"kind":"Node","metadata":{"name":"x"}}
{"kind":"Node","metadata":{"name":"x"}}
exit 0
C GET GET GET 
{"kind":"Node","metadata":{"name":"x"}}
exit 0
C GET 503 GET 503 GET 
EOF

check_output 'kept: a chunked answer read whole; one that ends with the connection, then a new one' '
	Q="raw chunked.http\n" kept -k kc get /api/v1/nodes/x
	Q="raw end.http.close\n" kept -r 2 -k kc get /api/v1/nodes/x' <<'EOF'
{"kind":"Node","metadata":{"name":"chunk"}}
exit 0
C GET raw 
{"kind":"Node","metadata":{"name":"end"}}
{"kind":"Node","metadata":{"name":"x"}}
exit 0
C GET raw C GET 
EOF

check_output 'kept: dropped by the server once used: sent again, body and all, on a new one' '
	Q="raw ok.http\ndrop -\n" kept -r 2 -k kc get /api/v1/nodes/x
	Q="raw ok.http\ndrop -\n" kept -r 2 -k kc apply-meta /apis/batch/v1/namespaces/n/jobs/j m' <<'EOF'
{"kind":"Node","metadata":{"name":"ok"}}
{"kind":"Node","metadata":{"name":"x"}}
exit 0
C GET raw GET drop C GET 
{"kind":"Node","metadata":{"name":"ok"}}
{"kind":"Node","metadata":{"name":"x"}}
exit 0
C PATCH raw PATCH drop C PATCH 
EOF

check_output 'kept: dropped when new, dropped twice, a bad answer, a short one: errors, not sent again' '
	Q="drop -\n" kept -k kc get /api/v1/nodes/x
	Q="raw ok.http\ndrop -\ndrop -\n" kept -r 2 -k kc get /api/v1/nodes/x
	Q="raw two.http\n" kept -k kc get /api/v1/nodes/x
	Q="raw short.http\n" kept -t 300 -k kc get /api/v1/nodes/x' <<'EOF'
kube: GET https://127.0.0.1:PORT/api/v1/nodes/x: the connection closed before an answer
kind=temp status=0 reason=
exit 75
C GET drop 
{"kind":"Node","metadata":{"name":"ok"}}
kube: GET https://127.0.0.1:PORT/api/v1/nodes/x: the connection closed before an answer
kind=temp status=0 reason=
exit 75
C GET raw GET drop C GET drop 
kube: GET https://127.0.0.1:PORT/api/v1/nodes/x: invalid HTTP answer: answer byte 36: two Content-Lengths
kind=temp status=0 reason=
exit 75
C GET raw 
kube: GET https://127.0.0.1:PORT/api/v1/nodes/x: no answer within 300 ms
kind=temp status=0 reason=
exit 75
C GET raw 
EOF
check_output 'kept: a deadline shorter than the timeout: the error names the time the request had, of kind deadline' '
	Q="raw short.http\n" kept -t 20000 -d 3 -k kc get /api/v1/nodes/x |
	awk "match(\$0, /within [0-9]+ ms/) { n = substr(\$0, RSTART + 7, RLENGTH - 10) + 0; sub(/within [0-9]+ ms/, n > 0 && n <= 3001 ? \"within at most 3001 ms\" : \"within \" n \" ms\") } 1"' <<'EOF'
kube: GET https://127.0.0.1:PORT/api/v1/nodes/x: no answer within at most 3001 ms
kind=deadline status=0 reason=
exit 1
C GET raw 
EOF

done_testing
