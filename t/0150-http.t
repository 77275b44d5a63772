#!/bin/sh
# lib/http through t/unit/http: the one verdict on a transfer (the whole
# table), Retry-After in seconds and HTTP-dates, the header parser on
# hostile input (duplicates, continuations, no colon, bad names, CR
# without LF, control and non-ASCII bytes, too many and too big fields),
# origins and joined URLs; then a real HTTPS server on 127.0.0.1 whose
# certificate no client trusts (t/tlsserve): a verification failure is
# permanent, and kube, hf, cache-sync, gpu-alert and diff-pack --check
# make one try, not more.
. "$(dirname "$0")/lib.sh"

check_output 'the verdict of every curl code named, and of HTTP statuses' 'unit http classify' <<'EOF'
CURLE_OPERATION_TIMEDOUT 0 timeout retry
CURLE_COULDNT_RESOLVE_HOST 0 unreachable retry
CURLE_COULDNT_RESOLVE_PROXY 0 unreachable retry
CURLE_COULDNT_CONNECT 0 unreachable retry
CURLE_SSL_CONNECT_ERROR 0 unreachable retry
CURLE_SEND_ERROR 0 unreachable retry
CURLE_RECV_ERROR 0 broken retry
CURLE_PARTIAL_FILE 0 broken retry
CURLE_GOT_NOTHING 0 broken retry
CURLE_WEIRD_SERVER_REPLY 0 broken retry
CURLE_HTTP2 0 broken retry
CURLE_HTTP2_STREAM 0 broken retry
CURLE_WRITE_ERROR 0 broken retry
CURLE_TOO_MANY_REDIRECTS 0 broken retry
CURLE_PEER_FAILED_VERIFICATION 0 untrusted permanent
CURLE_SSL_CACERT_BADFILE 0 untrusted permanent
CURLE_SSL_CERTPROBLEM 0 untrusted permanent
CURLE_SSL_ISSUER_ERROR 0 untrusted permanent
CURLE_SSL_PINNEDPUBKEYNOTMATCH 0 untrusted permanent
CURLE_SSL_CRL_BADFILE 0 untrusted permanent
CURLE_SSL_INVALIDCERTSTATUS 0 untrusted permanent
CURLE_SSL_CLIENTCERT 0 untrusted permanent
CURLE_URL_MALFORMAT 0 local permanent
CURLE_UNSUPPORTED_PROTOCOL 0 local permanent
CURLE_BAD_FUNCTION_ARGUMENT 0 local permanent
CURLE_UNKNOWN_OPTION 0 local permanent
CURLE_NOT_BUILT_IN 0 local permanent
CURLE_FAILED_INIT 0 local permanent
CURLE_OUT_OF_MEMORY 0 local permanent
CURLE_SSL_CIPHER 0 local permanent
CURLE_SSL_ENGINE_NOTFOUND 0 local permanent
CURLE_SSL_ENGINE_SETFAILED 0 local permanent
CURLE_SSL_ENGINE_INITFAILED 0 local permanent
CURLE_ABORTED_BY_CALLBACK 0 stopped permanent
CURLE_OK 0 refused permanent
CURLE_OK 100 refused permanent
CURLE_OK 200 ok ok
CURLE_OK 204 ok ok
CURLE_OK 206 ok ok
CURLE_OK 299 ok ok
CURLE_OK 301 refused permanent
CURLE_OK 304 refused permanent
CURLE_OK 400 refused permanent
CURLE_OK 401 refused permanent
CURLE_OK 403 refused permanent
CURLE_OK 404 refused permanent
CURLE_OK 408 busy retry
CURLE_OK 409 refused permanent
CURLE_OK 410 refused permanent
CURLE_OK 416 refused permanent
CURLE_OK 428 refused permanent
CURLE_OK 429 busy retry
CURLE_OK 431 refused permanent
CURLE_OK 499 refused permanent
CURLE_OK 500 busy retry
CURLE_OK 501 busy retry
CURLE_OK 502 busy retry
CURLE_OK 503 busy retry
CURLE_OK 504 busy retry
CURLE_OK 599 busy retry
CURLE_COULDNT_CONNECT 200 unreachable retry
CURLE_PEER_FAILED_VERIFICATION 503 untrusted permanent
EOF

# 784111777 is Sun, 06 Nov 1994 08:49:37 GMT; now is 30 s before it
check_output 'Retry-After: delay-seconds, the three HTTP-date forms, a date past; anything else -1' '
	unit http retry-after 784111747 120 " 120 " "7	" 1.5 0 00 99999999999 \
		"Sun, 06 Nov 1994 08:49:37 GMT" "Sunday, 06-Nov-94 08:49:37 GMT" \
		"Sun Nov  6 08:49:37 1994" "Sat, 05 Nov 1994 08:49:37 GMT" \
		-5 +5 1e3 0x10 12abc 1. .5 "" " " soon "1 2"' <<'EOF'
120
120
7
1.5
0
0
1e+11
30
30
30
0
-1
-1
-1
-1
-1
-1
-1
-1
-1
-1
-1
EOF

printf '%s\r\n' 'HTTP/1.1 302 Found' 'Location: /next' 'X-Repo-Commit: old' '' >hdr
printf '%s\r\n' 'HTTP/1.1 100 Continue' '' 'HTTP/2 200 ' 'Content-Type: application/json' \
	'content-type: text/plain' 'ETag: "abc"' 'X-Linked-Size: 42' \
	'Link: <a>; rel="next"' 'link: <b>; rel="last"' 'Folded: one' '   two' '	three' \
	'NoColon' 'Bad Name: x' ' orphan' ': y' 'Bad(Name): z' 'Retry-After:   5   ' 'Empty:' \
	'Dup: 1' 'DUP: 2' >>hdr
printf 'X-Ctl: a\rb\001c\177d\000e\r\n' >>hdr
printf 'X-Utf8: caf\303\251 \377\r\n' >>hdr
printf 'Nam\303\251: x\r\n' >>hdr
printf 'WWW-Authenticate: Bearer realm="https://a/token",\r\n service="reg"\r\n' >>hdr
printf 'X-Lf-Only: yes\nX-Cr-Only: a\rX-Not-A-Field: b\r\n' >>hdr
printf '\r\nX-After-End: kept\r\n' >>hdr
printf 'X-Last: no newline\r' >>hdr
check_output 'headers: the last answer only, names in any case, the last of a duplicate, lists joined, continuations, bad lines dropped and counted, control bytes made spaces' \
	'unit http headers content-type Link dup location folded www-authenticate x-cr-only missing <hdr' <<'EOF'
status 200
field Content-Type: application/json
field content-type: text/plain
field ETag: "abc"
field X-Linked-Size: 42
field Link: <a>; rel="next"
field link: <b>; rel="last"
field Folded: one two three
field Retry-After: 5
field Empty: 
field Dup: 1
field DUP: 2
field X-Ctl: a b c d e
field X-Utf8: caf\xc3\xa9 \xff
field WWW-Authenticate: Bearer realm="https://a/token", service="reg"
field X-Lf-Only: yes
field X-Cr-Only: a X-Not-A-Field: b
field X-After-End: kept
field X-Last: no newline
dropped 6
bytes 314
last content-type: text/plain
list content-type: application/json, text/plain
last Link: <b>; rel="last"
list Link: <a>; rel="next", <b>; rel="last"
last dup: 2
list dup: 1, 2
last location: -
list location: -
last folded: one two three
list folded: one two three
last www-authenticate: Bearer realm="https://a/token", service="reg"
list www-authenticate: Bearer realm="https://a/token", service="reg"
last x-cr-only: a X-Not-A-Field: b
list x-cr-only: a X-Not-A-Field: b
last missing: -
list missing: -
EOF

# big: 150 fields (100 kept), one of 70000 bytes, a continuation past the
# limit (its field dropped whole)
{
	printf 'HTTP/1.1 200 OK\r\n'
	printf 'X-Huge: %070000d\r\n' 0
	i=0; while [ $i -lt 150 ]; do printf 'F%03d: %0600d\r\n' $i 0; i=$((i + 1)); done
} >big
{
	printf 'HTTP/1.1 200 OK\r\nA: %060000d\r\n %06000d\r\nB: b\r\n %04000d\r\n' 0 0 0
} >fold
check_output 'headers: at most 100 fields and 65536 bytes; what passes them is dropped' '
	unit http headers F000 F099 F100 <big | grep -v "^field" | sed "s/: 0*$/: 0.../" &&
	unit http headers A B <fold | sed "s/0000*/0.../"' <<'EOF'
status 200
dropped 51
bytes 60400
last F000: 0...
list F000: 0...
last F099: 0...
list F099: 0...
last F100: -
list F100: -
status 200
field B: b 0...
dropped 1
bytes 4003
last A: -
list A: -
last B: b 0...
list B: b 0...
EOF

check_output 'origins: lowercase host, the default port written out; joined URLs' '
	unit http origin HTTPS://Hub.Example/x && unit http origin "http://127.0.0.1:8080/a?b" &&
	unit http origin "http://[::1]/" && unit http origin "not a url" &&
	unit http join "http://h:1/api/x?recursive=true" "/api/y?cursor=2" &&
	unit http join "http://h:1/a/b" "https://cdn.example/z" && unit http join "http://h:1/a/b" "c"' <<'EOF'
https://hub.example:443
http://127.0.0.1:8080
http://[::1]:80
-
http://h:1/api/y?cursor=2
https://cdn.example/z
http://h:1/a/c
EOF

# ---- a server whose certificate no client trusts ----
tls_serve
: >tls.log
# tries CMD...: CMD, then the log's lines since, counted by kind
# (and CMD's exit status)
tries() {
	tries_n=$(wc -l <tls.log)
	"$@"
	tries_st=$?
	sleep 0.2
	tail -n "+$((tries_n + 1))" tls.log | sort | uniq -c | sed 's/^ *//'
	return $tries_st
}
# quiet CMD...: CMD without its output; errs CMD...: its messages alone
quiet() { "$@" >/dev/null 2>&1; }
errs() { "$@" 2>&1 >/dev/null; }

check_output 'the untrusted certificate: permanent; trusted (-c), the same server answers' '
	tries unit http get $S/x && tries unit http get -c tls.crt $S/x' <<'EOF'
0 untrusted permanent
1 connect
1 handshake failed
200 ok ok
1 connect
1 request GET /x
EOF


check_output 'kube: the untrusted certificate fails, exit 1 (not 75); with the CA in the kubeconfig the request gets through' '
	for ca in "" "certificate-authority: $SCRATCH/tls.crt"; do
		printf "%s\n" "apiVersion: v1" "kind: Config" "current-context: t" \
			"contexts: [{name: t, context: {cluster: c, user: u}}]" \
			"clusters: [{name: c, cluster: {server: \"$S\", $ca}}]" \
			"users: [{name: u, user: {token: x}}]" >kc
		tries unit kube -k kc get /api 2>&1; echo "exit $?"
	done | sed "s/$TPORT/PORT/"' <<'EOF'
kube: GET https://127.0.0.1:PORT/api: SSL certificate problem: self-signed certificate
kind=fail status=0 reason=
1 connect
1 handshake failed
exit 1
kube: GET /api: invalid JSON answer: '[' or '{' expected near 'ok'
kind=baddata status=200 reason=
1 connect
1 request GET /api
exit 1
EOF

# csync DIR: cache-sync -r 1 of plan.ndjson in DIR, its output in DIR.out
csync() {
	mkdir -p "$1" && cache-sync -d "$PWD/$1" -f 1% -s "$PWD/no.sock" -r 1 \
		plan.ndjson >"$1.out" 2>"$1.err"
}
check_output 'hf: Untrusted after one try, naming the certificate; cache-sync -r 1 makes one attempt of it, two of an unreachable hub' '
	tries must_fail 1 unit hf $S hub org/tiny | sed "s/$TPORT/PORT/" &&
	echo "{\"name\":\"m\",\"type\":\"models\",\"models\":{\"repoId\":\"org/m\"}}" >plan.ndjson &&
	n=0 && for e in $S http://127.0.0.1:$(free_port); do
		n=$((n + 1)) && HF_ENDPOINT=$e tries must_fail 1 csync c$n &&
		jq -c "select(.name) | {phase, attempts, reason}" c$n.out | tail -n 1
	done' <<'EOF'
{"reason":"Untrusted","message":"org/tiny@main: https://127.0.0.1:PORT/api/models/org/tiny/revision/main: the server's certificate failed verification: SSL certificate problem: self-signed certificate","resolved":"","files":0,"bytes":0,"fetched":0}
1 connect
1 handshake failed
1 connect
1 handshake failed
{"phase":"failed","attempts":1,"reason":"Untrusted"}
{"phase":"failed","attempts":2,"reason":"Unreachable"}
EOF

# one.ndjson: one Node watch event with one unhealthy GPU
jq -cn '{type: "ADDED", object: {apiVersion: "v1", kind: "Node",
	metadata: {name: "gpu-6", annotations: {"agentaflow.gpu/devices":
	([{index: 0, uuid: "GPU-x", product: "NVIDIA H100 80GB HBM3", memory_mib: 81559,
	   mig: null, health: "unhealthy", held: false, temp_c: 40, ecc_errors: 0,
	   health_reasons: ["Xid 79"]}] | tojson)}}}}' >one.ndjson
echo "$S/services/T0/B0/secret" >tls.url
check_output 'gpu-alert: the untrusted webhook gets one try of -R 3, exit 1, the URL never printed; -1 exits 1, not 75' '
	tries gpu-alert -R 3 -u tls.url one.ndjson 2>err; echo "exit $?"; cat err; grep -c "$TPORT\|secret\|services" err;
	NODE_NAME=x tries quiet gpu-alert -1 -R 2 -u tls.url; echo "exit $?"' <<'EOF'
{"kind":"alert","node":"gpu-6","device":"GPU-x","event":"unhealthy","sent":false,"tries":1}
1 connect
1 handshake failed
exit 1
gpu-alert: node gpu-6 device GPU-x: unhealthy alert dropped after 1 try: webhook of file tls.url: certificate failed verification: SSL peer certificate or SSH remote key was not OK
0
1 connect
1 handshake failed
exit 1
EOF

# diff-pack --check: a registry named by a loopback name is spoken to
# over http, so this one is named 0.0.0.0, which reaches the server on
# 127.0.0.1 over https
export GIT_AUTHOR_NAME=t GIT_AUTHOR_EMAIL=t@example.com \
	GIT_COMMITTER_NAME=t GIT_COMMITTER_EMAIL=t@example.com \
	GIT_CONFIG_NOSYSTEM=1 HOME=$SCRATCH/home GIT_CEILING_DIRECTORIES=$SCRATCH
git init -q -b main up && mkdir up/vllm && echo 'x = 1' >up/vllm/__init__.py &&
	git -C up add -A && git -C up commit -qm one && git clone -q --bare up up.git &&
	git clone -q up.git work || { echo "Bail out! no checkout"; exit 1; }
check_output 'diff-pack --check: the untrusted registry refused after one try, exit 1, not 75' '
	NO_PROXY=0.0.0.0 tries errs diff-pack -C work --check -i "0.0.0.0:$TPORT/x:tag"; echo "exit $?"' <<EOF
diff-pack: https://0.0.0.0:$TPORT: SSL certificate problem: self-signed certificate
1 connect
1 handshake failed
exit 1
EOF

done_testing
