#!/bin/sh
# claim-watch without a cluster: usage, an unreachable server, and a
# scripted fake API server (python3, TLS with a CA, client certificate and
# token made here) that drops, truncates, garbles and expires the watch,
# so every recovery path is checked against an exact event sequence and
# the exact requests made.
. "$(dirname "$0")/lib.sh"

unset KUBECONFIG KUBERNETES_SERVICE_HOST KUBERNETES_SERVICE_PORT
HOME=$SCRATCH/home
export HOME
mkdir -p "$HOME"

# ---- usage -------------------------------------------------------------

check 'claim-watch -h prints usage and options on stdout' \
	'claim-watch -h >h.out 2>h.err && ! test -s h.err &&
	 grep -q "^usage: claim-watch" h.out && grep -q -- "--kubeconfig" h.out'
check 'claim-watch -V prints the version' \
	'claim-watch -V | grep -q "^claim-watch [0-9]"'
check 'no resource is a usage error (2)' \
	'must_fail 2 claim-watch 2>e && grep -q "^usage: claim-watch" e'
check 'two resources are a usage error (2)' \
	'must_fail 2 claim-watch pods nodes 2>/dev/null'
check 'an unknown option is a usage error (2)' \
	'must_fail 2 claim-watch -Z pods 2>/dev/null'
check_output '-A with -n is a usage error (2)' \
	'must_fail 2 claim-watch -A -n x pods 2>&1 | head -n 1' <<'EOF'
claim-watch: -A and -n exclude each other
EOF
check_output '-c 0 is a usage error (2)' \
	'must_fail 2 claim-watch -c 0 pods 2>&1 | head -n 1' <<'EOF'
claim-watch: -c: not a positive integer: 0
EOF
check_output '-t x is a usage error (2)' \
	'must_fail 2 claim-watch -t x pods 2>&1 | head -n 1' <<'EOF'
claim-watch: -t: not a positive number: x
EOF

# ---- the library pieces, offline ----------------------------------------

# unit NAME ARGS: a test driver, under valgrind when asked.
unit() {
	u=$BUILD/unit/$1
	shift
	if [ "${VALGRIND:-}" = 1 ]; then
		valgrind -q --error-exitcode=99 --leak-check=full \
			--errors-for-leak-kinds=definite,indirect "$u" "$@"
	else
		"$u" "$@"
	fi
}
check_output 'the uid table: random puts, takes, deletes, growth, walks' \
	'unit hmap 4 1 && unit hmap 4 99' <<'EOF'
ok 4
ok 4
EOF
check_output 'base64 round trips, every padding' \
	'for s in "" f fo foo foob fooba foobar "a b"; do unit kube b64 "$s"; done' <<'EOF'

Zg==
Zm8=
Zm9v
Zm9vYg==
Zm9vYmE=
Zm9vYmFy
YSBi
EOF
check_output 'paths and queries are percent-escaped' \
	"unit kube escape 'a b/c?d=é~_.-' && unit kube query '/api/v1/pods?limit=2' labelSelector 'app in (a,b),x!=y'" <<'EOF'
a%20b%2Fc%3Fd%3D%C3%A9~_.-
/api/v1/pods?limit=2&labelSelector=app%20in%20%28a%2Cb%29%2Cx%21%3Dy
EOF

# ---- unreachable -------------------------------------------------------

cat >unreachable.yaml <<'EOF'
apiVersion: v1
kind: Config
current-context: dead
contexts:
- name: dead
  context: {cluster: dead, user: nobody}
clusters:
- name: dead
  cluster:
    server: https://127.0.0.1:1
users:
- name: nobody
  user: {token: not-a-real-token}
EOF
check_output 'an unreachable server exits 75 at once, naming the URL' \
	'start=$(date +%s)
	 must_fail 75 claim-watch --kubeconfig unreachable.yaml pods 2>err
	 sed "s/after [0-9]* ms/after N ms/" err
	 test $(($(date +%s) - start)) -le 5' <<'EOF'
claim-watch: GET https://127.0.0.1:1/api: Failed to connect to 127.0.0.1 port 1 after N ms: Couldn't connect to server
EOF
check_output 'the same through $KUBECONFIG; nothing on stdout' \
	'KUBECONFIG=$PWD/unreachable.yaml; export KUBECONFIG
	 must_fail 75 claim-watch -1 configmaps 2>/dev/null' </dev/null
check_output 'a context that is not there exits 1' \
	'must_fail 1 claim-watch --kubeconfig unreachable.yaml --context gone pods 2>&1' <<EOF
claim-watch: kubeconfig: unreachable.yaml: context "gone" not found
EOF

if ! command -v python3 >/dev/null 2>&1 || ! command -v openssl >/dev/null 2>&1; then
	echo "# python3 or openssl missing: fake API server tests skipped"
	done_testing
	exit
fi

# ---- a fake API server -------------------------------------------------

ec() { openssl req -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes "$@" 2>/dev/null; }
ec -x509 -keyout ca.key -out ca.crt -days 30 -subj /CN=fake-ca
ec -keyout server.key -out server.csr -subj /CN=127.0.0.1
printf 'subjectAltName=IP:127.0.0.1\n' >san.ext
openssl x509 -req -in server.csr -CA ca.crt -CAkey ca.key -CAcreateserial \
	-out server.crt -days 30 -extfile san.ext 2>/dev/null
ec -keyout client.key -out client.csr -subj /CN=watcher
openssl x509 -req -in client.csr -CA ca.crt -CAkey ca.key -CAcreateserial \
	-out client.crt -days 30 2>/dev/null
ec -x509 -keyout other.key -out other-ca.crt -days 30 -subj /CN=other-ca

cat >fakeapi.py <<'EOF'
# fakeapi.py SCRIPT LOG PORTFILE: a scripted Kubernetes API server on
# 127.0.0.1 (server.crt, ca.crt for client certificates). SCRIPT holds
# queues of answers to lists and watches of configmaps; every request is
# logged, never its token. The last list answer repeats; a watch with no
# answer left is held open. "secrets" is always forbidden.
import json, os, ssl, sys, time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import urlsplit, parse_qs

script = json.load(open(sys.argv[1]))
log = open(sys.argv[2], "a", buffering=1)
queues = {"list": script.get("list", []), "watch": script.get("watch", [])}

def res(name, kind):
    return {"resource": name, "scope": "Namespaced", "singularResource": name[:-1],
            "responseKind": {"group": "", "version": "v1", "kind": kind},
            "shortNames": ["cm"] if name == "configmaps" else [], "verbs": ["list", "watch"]}
def disc(groups):
    return {"kind": "APIGroupDiscoveryList", "apiVersion": "apidiscovery.k8s.io/v2", "items": groups}
CORE = disc([{"metadata": {"name": ""}, "versions": [{"version": "v1",
        "resources": [res("configmaps", "ConfigMap"), res("secrets", "Secret")]}]}])
def status(code, reason, msg):
    return {"kind": "Status", "apiVersion": "v1", "status": "Failure",
            "message": msg, "reason": reason, "code": code}

class H(BaseHTTPRequestHandler):
    def log_message(self, *a):
        pass

    def answer(self, code, body):
        data = json.dumps(body).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def authorized(self):
        want = script.get("token")
        if want and self.headers.get("Authorization") != "Bearer " + want:
            return False
        cn = script.get("client_cn")
        if cn:
            cert = self.connection.getpeercert() or {}
            names = [v for rdn in cert.get("subject", ()) for k, v in rdn if k == "commonName"]
            return cn in names
        return True

    def do_GET(self):
        u = urlsplit(self.path)
        watch = "watch" in parse_qs(u.query)
        ok = self.authorized()
        log.write("GET %s%s\n" % (self.path, "" if ok else " (refused)"))
        if not ok:
            return self.answer(401, status(401, "Unauthorized", "Unauthorized"))
        if u.path == "/api":
            return self.answer(200, CORE)
        if u.path == "/api/v1":
            return self.answer(200, {"kind": "APIResourceList", "groupVersion": "v1", "resources": [
                {"name": "configmaps", "singularName": "configmap", "namespaced": True,
                 "kind": "ConfigMap", "verbs": ["list", "watch"], "shortNames": ["cm"]}]})
        if u.path == "/apis":
            return self.answer(200, disc([]))
        if u.path.endswith("/secrets"):
            return self.answer(403, status(403, "Forbidden", 'secrets is forbidden: User "watcher" cannot list resource "secrets" in API group "" in the namespace "default"'))
        q = queues["watch" if watch else "list"]
        if not watch:
            r = q.pop(0) if len(q) > 1 else q[0]
            return self.answer(r.get("status", 200), r.get("body", r))
        if not q:
            self.send_response(200)
            self.end_headers()
            self.wfile.flush()
            time.sleep(3600)
            return
        r = q.pop(0)
        if "status" in r:
            return self.answer(r["status"], r["body"])
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.end_headers()
        for line in r["lines"]:
            self.wfile.write((line if isinstance(line, str) else json.dumps(line) + "\n").encode())
            self.wfile.flush()
        if r.get("hold"):
            time.sleep(3600)

ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
ctx.load_cert_chain("server.crt", "server.key")
ctx.load_verify_locations("ca.crt")
ctx.verify_mode = ssl.CERT_OPTIONAL
srv = ThreadingHTTPServer(("127.0.0.1", 0), H)
srv.daemon_threads = True
srv.socket = ctx.wrap_socket(srv.socket, server_side=True)
with open(sys.argv[3] + ".tmp", "w") as f:
    f.write(str(srv.server_address[1]))
os.rename(sys.argv[3] + ".tmp", sys.argv[3])
srv.serve_forever()
EOF

FAKE_PID=
stop_fake() {
	[ -n "$FAKE_PID" ] && kill "$FAKE_PID" 2>/dev/null && wait "$FAKE_PID" 2>/dev/null
	FAKE_PID=
}
trap stop_fake EXIT

# start_fake SCRIPT: serve SCRIPT; sets PORT, writes fake.yaml for it.
start_fake() {
	stop_fake
	rm -f port log
	python3 fakeapi.py "$1" log port &
	FAKE_PID=$!
	i=0
	while [ ! -s port ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
	PORT=$(cat port)
	cat >fake.yaml <<EOF
apiVersion: v1
kind: Config
current-context: fake
contexts:
- name: fake
  context: {cluster: fake, user: watcher}
clusters:
- name: fake
  cluster:
    server: https://127.0.0.1:$PORT
    certificate-authority: ca.crt
users:
- name: watcher
  user:
    client-certificate: client.crt
    client-key: client.key
    token: tok-123
EOF
}

# Scripts are built from these: cm NAME RV is a ConfigMap, ev TYPE NAME RV
# a watch event, page RV CONTINUE NAME RV... a list page, st CODE REASON
# MESSAGE a Status.
cm() { printf '{"metadata":{"name":"%s","namespace":"default","uid":"uid-%s","resourceVersion":"%s"},"data":{"v":"%s"}}' "$1" "$1" "$2" "$2"; }
ev() { printf '{"type":"%s","object":%s}' "$1" "$(cm "$2" "$3")"; }
page() {
	rv=$1 cont=$2
	shift 2
	printf '{"kind":"ConfigMapList","apiVersion":"v1","metadata":{"resourceVersion":"%s"%s},"items":[' \
		"$rv" "${cont:+,\"continue\":\"$cont\"}"
	sep=
	while [ $# -gt 0 ]; do
		printf '%s%s' "$sep" "$(cm "$1" "$2")"
		sep=,
		shift 2
	done
	printf ']}'
}
st() { printf '{"kind":"Status","apiVersion":"v1","status":"Failure","message":"%s","reason":"%s","code":%s}' "$3" "$2" "$1"; }
bookmark() { printf '{"type":"BOOKMARK","object":{"kind":"ConfigMap","apiVersion":"v1","metadata":{"resourceVersion":"%s"}}}' "$1"; }
brief='jq -c "[.type, .object.metadata.name, .object.metadata.resourceVersion]"'
requests() { sed 's/&timeoutSeconds=[0-9]*$/\&timeoutSeconds=T/' log; }
warnings() { sed "s/127.0.0.1:$PORT/FAKE/; s/timeoutSeconds=[0-9]*/timeoutSeconds=T/; s/retrying in [0-9.]* s/retrying in S/" "$@"; }

# The whole story: a paged list, a watch event, a 410 ERROR event and the
# relist difference, a bookmark, a garbled line, a truncated line, an HTTP
# 410, an HTTP 500, and a repeated event that must not be repeated.
cat >story.json <<EOF
{"token": "tok-123", "client_cn": "watcher",
 "list": [$(page 12 tok1 a 10 b 11), $(page 12 "" c 12),
          $(page 17 "" a 13 b 16 d 17), $(page 22 "" a 13 b 16 e 21)],
 "watch": [
  {"lines": [$(ev MODIFIED a 13), {"type": "ERROR", "object": $(st 410 Expired "too old resource version: 12 (15)")}]},
  {"lines": [$(ev ADDED e 18), $(bookmark 20), "this is not json\n"]},
  {"lines": [$(ev MODIFIED e 21), "{\"type\":\"ADDED\",\"obj"]},
  {"status": 410, "body": $(st 410 Expired "too old resource version: 21 (22)")},
  {"status": 500, "body": $(st 500 InternalError "etcd is sulking")},
  {"lines": [$(ev ADDED f 23), $(ev MODIFIED e 21)], "hold": true}
 ]}
EOF
start_fake story.json
must_fail 1 claim-watch --kubeconfig fake.yaml -L 2 -c 11 -t 60 cm >story.out 2>story.err
echo $? >story.rc

check_output 'every change once, in order, with the 410 relists as differences' \
	"$brief story.out" <<'EOF'
["ADDED","a","10"]
["ADDED","b","11"]
["ADDED","c","12"]
["MODIFIED","a","13"]
["MODIFIED","b","16"]
["ADDED","d","17"]
["DELETED","c","12"]
["ADDED","e","18"]
["MODIFIED","e","21"]
["DELETED","d","17"]
["ADDED","f","23"]
EOF
check_output 'events carry the whole object' 'sed -n 7p story.out' <<'EOF'
{"type":"DELETED","object":{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c","namespace":"default","uid":"uid-c","resourceVersion":"12"},"data":{"v":"12"}}}
EOF
check 'list items get the kind and apiVersion of the list' \
	'test "$(head -n 1 story.out | jq -c "[.object.apiVersion, .object.kind]")" = "[\"v1\",\"ConfigMap\"]"'
check 'bad stream lines make the exit status 1' 'test "$(cat story.rc)" = 0'
check_output 'each watch resumes from the last resourceVersion, bookmarks included' \
	'requests' <<'EOF'
GET /api
GET /apis
GET /api/v1/namespaces/default/configmaps?limit=2
GET /api/v1/namespaces/default/configmaps?limit=2&continue=tok1
GET /api/v1/namespaces/default/configmaps?watch=1&allowWatchBookmarks=true&resourceVersion=12&timeoutSeconds=T
GET /api/v1/namespaces/default/configmaps?limit=2
GET /api/v1/namespaces/default/configmaps?watch=1&allowWatchBookmarks=true&resourceVersion=17&timeoutSeconds=T
GET /api/v1/namespaces/default/configmaps?watch=1&allowWatchBookmarks=true&resourceVersion=20&timeoutSeconds=T
GET /api/v1/namespaces/default/configmaps?watch=1&allowWatchBookmarks=true&resourceVersion=21&timeoutSeconds=T
GET /api/v1/namespaces/default/configmaps?limit=2
GET /api/v1/namespaces/default/configmaps?watch=1&allowWatchBookmarks=true&resourceVersion=22&timeoutSeconds=T
GET /api/v1/namespaces/default/configmaps?watch=1&allowWatchBookmarks=true&resourceVersion=22&timeoutSeconds=T
EOF
check_output 'one warning per bad line (URL, line, byte offset) and per failure' \
	'warnings story.err' <<'EOF'
claim-watch: GET https://FAKE/api/v1/namespaces/default/configmaps?watch=1&allowWatchBookmarks=true&resourceVersion=17&timeoutSeconds=T: line 3 at byte 256: invalid JSON: '[' or '{' expected near 'this': retrying in S
claim-watch: GET https://FAKE/api/v1/namespaces/default/configmaps?watch=1&allowWatchBookmarks=true&resourceVersion=20&timeoutSeconds=T: truncated line 2 at byte 146: retrying in S
claim-watch: GET https://FAKE/api/v1/namespaces/default/configmaps: 500 Internal Server Error: etcd is sulking: retrying in S
EOF

# -1, selectors, -A, -t (valgrind needs longer to get as far as the watch).
T=1
[ "${VALGRIND:-}" = 1 ] && T=10
cat >quiet.json <<EOF
{"token": "tok-123", "list": [$(page 5 "" x 4 y 5)], "watch": []}
EOF
start_fake quiet.json
check_output '-1 lists and exits 0; -l and -f are passed on escaped' \
	"claim-watch --kubeconfig fake.yaml -1 -l 'app in (a,b)' -f metadata.name!=z cm | $brief && requests" <<'EOF'
["ADDED","x","4"]
["ADDED","y","5"]
GET /api
GET /apis
GET /api/v1/namespaces/default/configmaps?labelSelector=app%20in%20%28a%2Cb%29&fieldSelector=metadata.name%21%3Dz&limit=500
EOF
start_fake quiet.json
check_output '-t ends a quiet watch with status 0; -A lists all namespaces' \
	"claim-watch --kubeconfig fake.yaml -A -t $T configmap | $brief && requests" <<'EOF'
["ADDED","x","4"]
["ADDED","y","5"]
GET /api
GET /apis
GET /api/v1/configmaps?limit=500
GET /api/v1/configmaps?watch=1&allowWatchBookmarks=true&resourceVersion=5&timeoutSeconds=T
EOF
check_output '-n picks the namespace; v1/configmaps names the version' \
	"claim-watch --kubeconfig fake.yaml -n other -t $T v1/configmaps | wc -l; grep -c 'namespaces/other/configmaps' log" <<'EOF'
2
2
EOF

# A continue token that expires between pages: the list starts over, and
# nothing is printed twice.
cat >expired.json <<EOF
{"token": "tok-123",
 "list": [$(page 30 tokA x 29), {"status": 410, "body": $(st 410 Expired "The provided continue parameter is too old")},
          $(page 31 tokB x 29), $(page 31 "" y 31)]}
EOF
start_fake expired.json
check_output 'an expired continue token: the list starts again, no repeats' \
	"claim-watch --kubeconfig fake.yaml -1 -L 1 cm | $brief && requests" <<'EOF'
["ADDED","x","29"]
["ADDED","y","31"]
GET /api
GET /apis
GET /api/v1/namespaces/default/configmaps?limit=1
GET /api/v1/namespaces/default/configmaps?limit=1&continue=tokA
GET /api/v1/namespaces/default/configmaps?limit=1
GET /api/v1/namespaces/default/configmaps?limit=1&continue=tokB
EOF
start_fake expired.json
check_output 'a proxy in the environment is not used for loopback' \
	"https_proxy=http://127.0.0.1:1 HTTPS_PROXY=http://127.0.0.1:1 NO_PROXY=example.com claim-watch --kubeconfig fake.yaml -1 -L 1 cm | $brief" <<'EOF'
["ADDED","x","29"]
["ADDED","y","31"]
EOF

# Refusals.
start_fake quiet.json
check_output 'a 403 is one line with the Status message, exit 1' \
	'must_fail 1 claim-watch --kubeconfig fake.yaml secrets 2>&1' <<'EOF'
claim-watch: GET /api/v1/namespaces/default/secrets: 403 Forbidden: secrets is forbidden: User "watcher" cannot list resource "secrets" in API group "" in the namespace "default"
EOF
check_output 'a resource the server does not have, exit 1' \
	'must_fail 1 claim-watch --kubeconfig fake.yaml podz 2>&1 | sed "s/:$PORT/:PORT/"' <<'EOF'
claim-watch: no resource "podz" on https://127.0.0.1:PORT
EOF
check_output 'v1/podz too' \
	'must_fail 1 claim-watch --kubeconfig fake.yaml v1/podz 2>&1 | sed "s/:$PORT/:PORT/"' <<'EOF'
claim-watch: no resource "v1/podz" on https://127.0.0.1:PORT
EOF
sed 's/ca\.crt/other-ca.crt/' fake.yaml >wrong-ca.yaml
check 'a server certificate the CA did not sign is refused, exit 1' \
	'must_fail 1 claim-watch --kubeconfig wrong-ca.yaml cm 2>e &&
	 grep -q "^claim-watch: GET https://127.0.0.1:$PORT/api: SSL certificate problem: " e'
sed '/certificate-authority/d' fake.yaml >no-ca.yaml
check 'without a CA the system store is used, and refuses too' \
	'must_fail 1 claim-watch --kubeconfig no-ca.yaml cm 2>e && grep -q "SSL certificate problem" e'
sed 's/certificate-authority: ca.crt/insecure-skip-tls-verify: true/' fake.yaml >insecure.yaml
check 'insecure-skip-tls-verify: true in the kubeconfig is honoured' \
	'claim-watch --kubeconfig insecure.yaml -1 cm | grep -c ADDED | grep -qx 2'
sed 's/tok-123/wrong/' fake.yaml >bad-token.yaml
check_output 'a refused token: 401, and the token is never shown' \
	'must_fail 1 claim-watch --kubeconfig bad-token.yaml cm 2>&1; tail -n 1 log' <<'EOF'
claim-watch: GET /api: 401 Unauthorized: Unauthorized
GET /api (refused)
EOF

stop_fake
done_testing
