#!/bin/sh
# claim-watch without a cluster: usage, the lib pieces, an unreachable
# server, and -R, which replays captured watch streams through the very
# line handler of a live watch: normal events, bookmarks, repeats, ERROR
# events, garbled, truncated and oversized lines, each with an exact
# output, warning and exit status. What needs a server is in
# t/9100-claim-watch.t, against a real one.
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

cat >scan.in <<'EOF'
{"type":"ADDED","object":{"metadata":{"uid":"u1"}}}
 { "type" : "A\u0044DED" , "object" : { "a" : [ 1 , 2.5e3 , true , null , "x  y" ] } }
{"k\u0065y":"caf\u00e9 \ud83d\ude00 \"q\" \\ \/","n":"a\u0000b","s":"<\u003c>","x":"last","x":"\u006cast"}
[1,2]
{"a":"\ud800"}
{"a":"x
{"a":01}
{"a" "b"}
{"a":"é\u00e9"}
EOF
check_output 'js_scan checks as js_parse does, changes nothing, and decodes only what is asked for' \
	'unit jscan type object object.a object.metadata.uid key n s x a <scan.in' <<'EOF'
compact {"type":"ADDED","object":{"metadata":{"uid":"u1"}}}
type = ADDED (eq)
object = {"metadata":{"uid":"u1"}}
object.metadata.uid = u1 (eq)
spaced {"type":"A\u0044DED","object":{"a":[1,2.5e3,true,null,"x  y"]}}
type = ADDED (eq)
object = { "a" : [ 1 , 2.5e3 , true , null , "x  y" ] }
object.a = [ 1 , 2.5e3 , true , null , "x  y" ]
compact {"k\u0065y":"caf\u00e9 \ud83d\ude00 \"q\" \\ \/","n":"a\u0000b","s":"<\u003c>","x":"last","x":"\u006cast"}
key = café 😀 "q" \ / (eq)
n = a (not eq)
s = <<> (eq)
x = last (eq)
compact [1,2]
error at column 7: invalid Unicode surrogate
error at column 6: unterminated string
error at column 7: ',' or '}' expected
error at column 6: ':' expected
compact {"a":"é\u00e9"}
a = éé (eq)
EOF

# ---- unreachable -------------------------------------------------------

cp "$FIXTURES/unreachable.kubeconfig" unreachable.yaml
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


# ---- -R: captured watch streams replayed ----------------------------------

brief='jq -c "[.type, .object.metadata.name, .object.metadata.resourceVersion]"'

cat >normal.watch <<'EOF'
{"type":"ADDED","object":{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"a","namespace":"demo","uid":"uid-a","resourceVersion":"10"},"data":{"v":"1"}}}
{"type":"ADDED","object":{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"b","namespace":"demo","uid":"uid-b","resourceVersion":"11"},"data":{"v":"1"}}}
{"type":"MODIFIED","object":{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"a","namespace":"demo","uid":"uid-a","resourceVersion":"12"},"data":{"v":"2"}}}
{"type":"DELETED","object":{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"b","namespace":"demo","uid":"uid-b","resourceVersion":"13"},"data":{"v":"1"}}}
EOF
check 'ADDED, MODIFIED, DELETED come out as they went in; exit 0, no warning' \
	'claim-watch -R normal.watch >out 2>err && cmp out normal.watch && ! test -s err'
check 'the same from standard input (-), with \r\n line ends' \
	"sed 's/\$/\\r/' normal.watch | claim-watch -R - >out 2>err && cmp out normal.watch && ! test -s err"
check_output '-c 2 stops after two events, exit 0; --replay is -R' \
	"claim-watch -c 2 --replay normal.watch | $brief" <<'EOF'
["ADDED","a","10"]
["ADDED","b","11"]
EOF
check 'an empty capture prints nothing, exit 0' \
	': >empty.watch && claim-watch -R empty.watch >out 2>&1 && ! test -s out'

cat >bookmark.watch <<'EOF'
{"type":"ADDED","object":{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"a","namespace":"demo","uid":"uid-a","resourceVersion":"10"},"data":{"v":"1"}}}
{"type":"BOOKMARK","object":{"kind":"ConfigMap","apiVersion":"v1","metadata":{"resourceVersion":"15"}}}
{"type":"ADDED","object":{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"b","namespace":"demo","uid":"uid-b","resourceVersion":"16"},"data":{"v":"1"}}}
{"type":"BOOKMARK","object":{"kind":"ConfigMap","apiVersion":"v1","metadata":{"resourceVersion":"20"}}}
EOF
check_output 'bookmarks are followed, not printed; -v names the resume point' \
	"claim-watch -v -R bookmark.watch 2>err | $brief && cat err" <<'EOF'
["ADDED","a","10"]
["ADDED","b","16"]
claim-watch: bookmark.watch: a watch would resume from resourceVersion 20
EOF

cat >repeats.watch <<'EOF'
{"type":"ADDED","object":{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"a","namespace":"demo","uid":"uid-a","resourceVersion":"10"},"data":{"v":"1"}}}
{"type":"ADDED","object":{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"a","namespace":"demo","uid":"uid-a","resourceVersion":"10"},"data":{"v":"1"}}}
{"type":"MODIFIED","object":{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"a","namespace":"demo","uid":"uid-a","resourceVersion":"12"},"data":{"v":"2"}}}
{"type":"MODIFIED","object":{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"a","namespace":"demo","uid":"uid-a","resourceVersion":"12"},"data":{"v":"2"}}}
{"type":"DELETED","object":{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"x","namespace":"demo","uid":"uid-x","resourceVersion":"5"},"data":{"v":"1"}}}
{"type":"DELETED","object":{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"a","namespace":"demo","uid":"uid-a","resourceVersion":"13"},"data":{"v":"2"}}}
{"type":"DELETED","object":{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"a","namespace":"demo","uid":"uid-a","resourceVersion":"13"},"data":{"v":"2"}}}
EOF
check_output 'a repeated event (same uid and resourceVersion) comes out once; so does a deletion, of printed objects only' \
	"claim-watch -R repeats.watch 2>&1 | $brief" <<'EOF'
["ADDED","a","10"]
["MODIFIED","a","12"]
["DELETED","a","13"]
EOF

cat >error.watch <<'EOF'
{"type":"ADDED","object":{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"a","namespace":"demo","uid":"uid-a","resourceVersion":"10"},"data":{"v":"1"}}}
{"type":"ERROR","object":{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"too old resource version: 10 (12)","reason":"Expired","code":410}}
{"type":"ADDED","object":{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"b","namespace":"demo","uid":"uid-b","resourceVersion":"14"},"data":{"v":"1"}}}
{"type":"ERROR","object":{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"etcdserver: request timed out","reason":"InternalError","code":500}}
{"type":"MODIFIED","object":{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"b","namespace":"demo","uid":"uid-b","resourceVersion":"15"},"data":{"v":"2"}}}
EOF
check_output 'an ERROR event (410, 500): one warning with line and offset, skipped, exit 1' \
	"must_fail 1 claim-watch -R error.watch 2>err | $brief && cat err" <<'EOF'
["ADDED","a","10"]
["ADDED","b","14"]
["MODIFIED","b","15"]
claim-watch: error.watch: line 2 at byte 162: watch error 410: too old resource version: 10 (12)
claim-watch: error.watch: line 4 at byte 495: watch error 500: etcdserver: request timed out
EOF

cat >bad.watch <<'EOF'
{"type":"ADDED","object":{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"a","namespace":"demo","uid":"uid-a","resourceVersion":"10"},"data":{"v":"1"}}}
this is not json

{"kind":"ConfigMap","metadata":{"name":"a"}}
{"type":"ADDED","object":"a"}
{"type":"SNAPSHOT","object":{}}
{"type":"ADDED","object":{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"b","namesp
{"type":"ADDED","object":{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"c","namespace":"demo","uid":"uid-c","resourceVersion":"20"},"data":{"v":"1"}}}
EOF
check_output 'garbled, blank, cut and unknown lines: one warning each naming line and byte, skipped, exit 1' \
	"must_fail 1 claim-watch -R bad.watch 2>err | $brief && cat err" <<'EOF'
["ADDED","a","10"]
["ADDED","c","20"]
claim-watch: bad.watch: line 2 at byte 162: invalid JSON: '[' or '{' expected near 'this'
claim-watch: bad.watch: line 3 at byte 179: invalid JSON: '[' or '{' expected near end of file
claim-watch: bad.watch: line 4 at byte 180: not a watch event
claim-watch: bad.watch: line 5 at byte 225: not a watch event
claim-watch: bad.watch: line 6 at byte 255: unknown event type "SNAPSHOT"
claim-watch: bad.watch: line 7 at byte 287: invalid JSON: premature end of input near '"namesp'
EOF

cat >spaced.watch <<'EOF'
{ "type" : "ADDED", "object" : { "kind" : "ConfigMap", "metadata" : {"name":"sp","namespace":"demo","uid":"uid-sp","resourceVersion":"30"}, "data" : {"html":"<b>\u0026amp;</b> caf\u00e9", "s":"two  spaces, a \"quote\" } and a tab\t"} } }	
{"type":"ADDED","object":{"kind":"ConfigMap","metadata":{"name":"sp","namespace":"demo","uid":"uid-\u0073p","resourceVersion":"3\u0030"}}}
{"t\u0079pe":"MOD\u0049FIED","object":{"kind":"ConfigMap","metadata":{"name":"sp","namespace":"demo","uid":"uid-sp","resourceVersion":"31"}}}
[{"type":"ADDED","object":{}}]
EOF
check_output 'an object comes out as the bytes that came in, only without the whitespace between tokens; escaped names and values are read decoded' \
	'must_fail 1 claim-watch -R spaced.watch 2>err; cat err' <<'EOF'
{"type":"ADDED","object":{"kind":"ConfigMap","metadata":{"name":"sp","namespace":"demo","uid":"uid-sp","resourceVersion":"30"},"data":{"html":"<b>\u0026amp;</b> caf\u00e9","s":"two  spaces, a \"quote\" } and a tab\t"}}}
{"type":"MODIFIED","object":{"kind":"ConfigMap","metadata":{"name":"sp","namespace":"demo","uid":"uid-sp","resourceVersion":"31"}}}
claim-watch: spaced.watch: line 4 at byte 520: not a watch event
EOF

head -n 2 normal.watch >truncated.watch
printf '%s' '{"type":"MODIFIED","object":{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"a","namespace":"demo","uid":"uid-a","resourceVersion":"12"},"data":{"v":"2"}}}' >>truncated.watch
check_output 'a last line without its newline is truncated: warned, exit 1' \
	"must_fail 1 claim-watch -R truncated.watch 2>err | $brief && cat err" <<'EOF'
["ADDED","a","10"]
["ADDED","b","11"]
claim-watch: truncated.watch: truncated line 3 at byte 324
EOF

# xs N: N bytes of x.
xs() { head -c "$1" /dev/zero | tr '\0' x; }
check_output 'a line of 64 MiB is read; a longer one is skipped with a warning, and the lines after it keep their numbers and offsets' \
	"{ head -n 1 normal.watch; xs 67108864; echo; xs 67108865; echo; echo garbage; sed -n 2p normal.watch; } |
	 must_fail 1 claim-watch -R - 2>err | $brief && cat err" <<'EOF'
["ADDED","a","10"]
["ADDED","b","11"]
claim-watch: <stdin>: line 2 at byte 162: invalid JSON: '[' or '{' expected
claim-watch: <stdin>: line 3 at byte 67109027 longer than 67108864 bytes
claim-watch: <stdin>: line 4 at byte 134217893: invalid JSON: '[' or '{' expected near 'garbage'
EOF

cp "$FIXTURES/claim-watch/configmaps.watch" .
check_output 'a capture of kube-apiserver 1.34 (see t/fixtures/claim-watch/README) replays its events' \
	"claim-watch -v -R configmaps.watch 2>err | jq -c '[.type, .object.metadata.name, .object.data.v]' && cat err" <<'EOF'
["ADDED","a","1"]
["ADDED","b","1"]
["MODIFIED","a","2"]
["DELETED","b","1"]
["ADDED","c","1"]
claim-watch: configmaps.watch: a watch would resume from resourceVersion 555
EOF
check 'and prints every event but the bookmark byte for byte' \
	'grep -v "\"type\":\"BOOKMARK\"" configmaps.watch >events.expect &&
	 claim-watch -R configmaps.watch | cmp - events.expect'

check_output 'a capture that cannot be opened: exit 1' \
	'must_fail 1 claim-watch -R nope.watch 2>&1' <<'EOF'
claim-watch: nope.watch: No such file or directory
EOF
check_output 'a capture that cannot be read: exit 1' \
	'mkdir -p dir.watch && must_fail 1 claim-watch -R dir.watch 2>&1' <<'EOF'
claim-watch: dir.watch: read error: Is a directory
EOF
check_output '-R with a resource is a usage error (2)' \
	'must_fail 2 claim-watch -R normal.watch pods 2>&1 | head -n 1' <<'EOF'
claim-watch: -R takes no resource
EOF
check_output '-R with an option for a server is a usage error (2)' \
	'must_fail 2 claim-watch -n demo -R normal.watch 2>&1 | head -n 1
	 must_fail 2 claim-watch -R normal.watch --kubeconfig x 2>&1 | head -n 1' <<'EOF'
claim-watch: -R and -n exclude each other
claim-watch: -R and --kubeconfig exclude each other
EOF


# ---- -F: a pod's log ------------------------------------------------------

check_output '-F takes no resource and few options; -C goes with -F only' \
	'must_fail 2 claim-watch -F p pods 2>&1 | head -n 1
	 must_fail 2 claim-watch -F p -1 2>&1 | head -n 1
	 must_fail 2 claim-watch -F p -L 5 2>&1 | head -n 1
	 must_fail 2 claim-watch -C c pods 2>&1 | head -n 1
	 must_fail 2 claim-watch -R normal.watch --follow p 2>&1 | head -n 1' <<'EOF'
claim-watch: -F goes with -C, -n, -t, -r, -v, --context, --kubeconfig only
claim-watch: -F goes with -C, -n, -t, -r, -v, --context, --kubeconfig only
claim-watch: -F goes with -C, -n, -t, -r, -v, --context, --kubeconfig only
claim-watch: -C goes with -F only
claim-watch: -R and -F exclude each other
EOF
check_output '-F: an unreachable server exits 75 at once, naming the pod' \
	'must_fail 75 claim-watch --kubeconfig unreachable.yaml -n ns -F p -C c 2>&1 |
	 sed "s/after [0-9]* ms/after N ms/"' <<'EOF'
claim-watch: GET https://127.0.0.1:1/api/v1/namespaces/ns/pods/p: Failed to connect to 127.0.0.1 port 1 after N ms: Couldn't connect to server
EOF

done_testing
