#!/bin/sh
# claim-watch against the simulated cluster: ConfigMaps created, changed and
# deleted while watching come out exactly once and in order; a capture of
# the same watch by kubectl get --raw replays (-R) to the same events, its
# bookmark followed; changes made after kube-apiserver is stopped and
# restarted mid-watch come out once; a forced 410 (apiserver restarted and
# etcd compacted while the watcher is frozen) becomes a relist and exactly
# the difference; a paged -1 list equals kubectl's, also when its continue
# token expires between pages; selectors, -A and -t; CRDs, DRA and apps
# resources resolve; a user without rights gets a one-line 403, a bogus
# token a 401, a server certificate from another CA a TLS refusal, a
# resource that does not exist a one-line refusal; insecure-skip-tls-verify
# is honoured and a proxy in the environment is not used for loopback.
. "$(dirname "$0")/lib.sh"

[ -n "${K8SHAZGPU_TEST_KUBECONFIG:-}" ] && [ -n "${K8SHAZGPU_SIM_DIR:-}" ] &&
	[ -f "$K8SHAZGPU_SIM_DIR/state" ] ||
	skip_all "no k8shazgpu-sim cluster (run under t/run)"
KUBECONFIG=$K8SHAZGPU_TEST_KUBECONFIG
export KUBECONFIG
eval "$(k8shazgpu-sim env | grep '^ETCD_ENDPOINT=')"
NS=t9100-claim-watch
CRD=widgets.t9100.example.com

# Generous waits: under valgrind claim-watch starts slowly.
WAIT=90

EVENTUALLY_HZ=5
has() { grep -q -- "$2" "$1"; }
lines_at_least() { [ "$(wc -l <"$1")" -ge "$2" ]; }
# has_line FILE TEXT: FILE has TEXT, and no line cut short at its end.
has_line() { grep -q -- "$2" "$1" && [ "$(tail -c 1 "$1" | od -An -c | tr -d ' ')" = '\n' ]; }

# cm NAME LABEL V: make a labelled ConfigMap with data v=V.
cm() {
	printf '{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"%s","namespace":"%s","labels":{"t9100":"%s"}},"data":{"v":"%s"}}' \
		"$1" "$NS" "$2" "$3" | k create -f - >/dev/null
}
setv() { k -n "$NS" patch cm "$1" --type merge -p "{\"data\":{\"v\":\"$2\"}}" >/dev/null; }
rmcm() { k -n "$NS" delete cm "$1" >/dev/null; }
brief() { jq -c '[.type, .object.metadata.name, .object.data.v]' "$@"; }

# watcher NAME ARGS...: claim-watch in the background, output in NAME.out
# and NAME.err; WATCHER is its pid.
watcher() {
	name=$1
	shift
	claim-watch -v -n "$NS" "$@" configmaps >"$name.out" 2>"$name.err" &
	WATCHER=$!
}
# finish NAME: wait for the watcher; its exit status goes to NAME.rc.
finish() {
	wait "$WATCHER"
	echo $? >"$1.rc"
}

restart_apiserver() {
	k8shazgpu-sim stop apiserver >/dev/null 2>&1
	k8shazgpu-sim start apiserver >/dev/null 2>&1
}
etcd_revision() {
	curl -sS -X POST "$ETCD_ENDPOINT/v3/kv/range" -d '{"key":"AA=="}' | jq -r .header.revision
}
compact_etcd() {
	curl -sS -X POST "$ETCD_ENDPOINT/v3/kv/compaction" \
		-d "{\"revision\":\"$(etcd_revision)\",\"physical\":true}" >/dev/null
}

cleanup() {
	kill -CONT "$WATCHER" 2>/dev/null
	kill "$WATCHER" 2>/dev/null
	kill "$RAW" 2>/dev/null
	[ -e resume ] || touch resume
	k8shazgpu-sim start apiserver >/dev/null 2>&1
	k delete namespace "$NS" --wait=false >/dev/null 2>&1
	k delete crd "$CRD" --wait=false >/dev/null 2>&1
}
WATCHER= RAW=
trap cleanup EXIT

k delete namespace "$NS" --ignore-not-found --wait=true >/dev/null 2>&1
k create namespace "$NS" >/dev/null

# ---- create, change, delete --------------------------------------------

cm pre seq 1
watcher seq -l t9100=seq -c 7 -t 180
eventually $WAIT has seq.err 'watching'
cm a seq 1
cm b seq 1
setv a 2
rmcm b
setv a 3
rmcm a
finish seq

check_output 'create/change/delete while watching: each once, in order' 'brief seq.out' <<'EOF'
["ADDED","pre","1"]
["ADDED","a","1"]
["ADDED","b","1"]
["MODIFIED","a","2"]
["DELETED","b","1"]
["MODIFIED","a","3"]
["DELETED","a","3"]
EOF
check '-c 7 ends the watch with status 0' 'test "$(cat seq.rc)" = 0'
check 'events are whole objects with kind and apiVersion' \
	'jq -e "select(.object.kind != \"ConfigMap\" or .object.apiVersion != \"v1\" or
		.object.metadata.namespace != \"$NS\" or (.object.metadata.uid | length) != 36)" seq.out >bad.out;
	 ! test -s bad.out'

# ---- a captured watch, replayed ----------------------------------------

# kubectl get --raw saves the same watch as it comes from the server; its
# initial events end with a BOOKMARK from the server (sendInitialEvents).
# cap-other moves the resourceVersion past those of cap-a and cap-b.
cm cap-a cap 1
cm cap-b cap 1
cm cap-other capx 1
watcher cap -l t9100=cap -c 5 -t 180
k8shazgpu-sim kubectl get --raw "/api/v1/namespaces/$NS/configmaps?watch=1&labelSelector=t9100%3Dcap&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true" \
	>cap.raw 2>cap.raw.err &
RAW=$!
eventually $WAIT has cap.err 'watching'
eventually $WAIT has cap.raw '"BOOKMARK"'
setv cap-a 2
rmcm cap-b
cm cap-c cap 1
finish cap
eventually $WAIT has_line cap.raw '"name":"cap-c"'
{ kill "$RAW" && wait "$RAW"; } 2>/dev/null
RAW=

check_output 'the live watch: the list, then each change' 'brief cap.out' <<'EOF'
["ADDED","cap-a","1"]
["ADDED","cap-b","1"]
["MODIFIED","cap-a","2"]
["DELETED","cap-b","1"]
["ADDED","cap-c","1"]
EOF
check_output '-s: the list, one SYNCED line, then the watch (quiet here)' \
	"claim-watch -s -n $NS -l t9100=cap -t 3 configmaps | brief" <<'EOF'
["ADDED","cap-a","2"]
["ADDED","cap-c","1"]
["SYNCED",null,null]
EOF
check_output '-g: one object by name, as ADDED; a name with none prints nothing' \
	"claim-watch -g cap-a -n $NS configmaps | brief; claim-watch -g nope -n $NS configmaps; echo rc=\$?" <<'EOF'
["ADDED","cap-a","2"]
rc=0
EOF
check '-g with a selector is a usage error' 'must_fail 2 claim-watch -g cap-a -l x=y configmaps 2>/dev/null'
check 'the capture of kubectl get --raw replays to the same events, object for object' \
	'claim-watch -R cap.raw >replayed.out 2>replayed.err && ! test -s replayed.err &&
	 jq -S -c . cap.out >live.sorted && jq -S -c . replayed.out >replayed.sorted &&
	 cmp live.sorted replayed.sorted'
sed '/"BOOKMARK"/q' cap.raw >initial.raw
bookmark_rv=$(jq -r 'select(.type == "BOOKMARK") | .object.metadata.resourceVersion' initial.raw)
initial_rv=$(jq -r 'select(.type != "BOOKMARK") | .object.metadata.resourceVersion' initial.raw | sort -n | tail -n 1)
check_output "the server's bookmark is followed, not printed: a watch would resume from its resourceVersion" \
	"claim-watch -v -R - <initial.raw 2>bookmark.err | brief &&
	 sed 's/resourceVersion $bookmark_rv\$/resourceVersion BOOKMARK/' bookmark.err" <<'EOF'
["ADDED","cap-a","1"]
["ADDED","cap-b","1"]
claim-watch: <stdin>: a watch would resume from resourceVersion BOOKMARK
EOF
check 'that resourceVersion is past those of the objects listed before it' \
	"test '$initial_rv' -lt '$bookmark_rv'"
check "claim-watch's own output replays to itself, byte for byte" \
	'claim-watch -R cap.out | cmp - cap.out'

# ---- kube-apiserver restarted mid-watch --------------------------------

cm r0 restart 1
watcher restart -l t9100=restart -c 6 -t 240
eventually $WAIT has restart.err 'watching'
cm r1 restart 1
eventually $WAIT has restart.out '"r1"'
restart_apiserver
# once the watcher shows this one, it is back; what follows must come once
cm r2-sync restart 1
eventually $WAIT has restart.out '"r2-sync"'
setv r1 2
cm r3 restart 1
rmcm r0
finish restart

check_output 'changes after an apiserver restart: each once, in order' 'brief restart.out' <<'EOF'
["ADDED","r0","1"]
["ADDED","r1","1"]
["ADDED","r2-sync","1"]
["MODIFIED","r1","2"]
["ADDED","r3","1"]
["DELETED","r0","1"]
EOF
check 'the watcher lost its connection and resumed, status 0' \
	'test "$(cat restart.rc)" = 0 && test "$(grep -c "watching" restart.err)" -ge 2'
sed 's/^/# /' restart.err

# ---- a forced 410: relist and the difference ---------------------------

cm del gone 1
cm keep gone 1
cm mod gone 1
# More objects than claim-watch keeps unpacked (64), so that the DELETED
# events of the relist come out of its deflated store.
i=0
while [ $i -lt 70 ]; do
	printf '{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"z-%02d","namespace":"%s","labels":{"t9100":"gone"}},"data":{"v":"1"}}\n' $i "$NS"
	i=$((i + 1))
done | jq -s '{apiVersion:"v1",kind:"List",items:.}' | k create -f - >/dev/null
watcher gone -l t9100=gone -c 77 -t 240
eventually $WAIT has gone.err 'watching'
kill -STOP "$WATCHER"
# while it is frozen: its connection drops, things change, the new
# apiserver's watch cache starts after the changes, etcd forgets them
restart_apiserver
cm new gone 2
setv mod 2
rmcm del
rmcm z-00
k8shazgpu-sim stop apiserver >/dev/null 2>&1
compact_etcd
k8shazgpu-sim start apiserver >/dev/null 2>&1
kill -CONT "$WATCHER"
finish gone

check_output 'after 410: ADDED, MODIFIED, DELETED for exactly what changed' \
	"brief gone.out | grep -v '^\\[\"ADDED\",\"z-'" <<'EOF'
["ADDED","del","1"]
["ADDED","keep","1"]
["ADDED","mod","1"]
["MODIFIED","mod","2"]
["ADDED","new","2"]
["DELETED","del","1"]
["DELETED","z-00","1"]
EOF
check 'the DELETED events carry the objects as printed before, byte for byte' \
	'for n in del z-00; do
		grep "\"name\":\"$n\"" gone.out | cut -d , -f 2- >$n.objs &&
		test "$(wc -l <$n.objs)" = 2 && test "$(uniq $n.objs | wc -l)" = 1 || exit 1
	 done
	 grep -c "^{\"type\":\"ADDED\",.*\"name\":\"z-" gone.out | grep -qx 70'
check 'the 410 was met and answered by a new list' \
	'test "$(cat gone.rc)" = 0 && grep -q "410" gone.err && grep -q "listing again" gone.err'
sed 's/^/# /' gone.err

# ---- paging -------------------------------------------------------------

for i in 1 2 3 4 5; do cm page-$i page $i; done
strip='del(.metadata.managedFields)'
check 'a -1 list in pages of 2 equals kubectl get -o json, item for item' \
	"claim-watch -1 -L 2 -n $NS -l t9100=page configmaps | jq -S -c '.object | $strip' >ours &&
	 k get configmaps -n $NS -l t9100=page -o json | jq -S -c '.items[] | $strip' >theirs &&
	 test \$(wc -l <ours) = 5 && cmp ours theirs"
check 'every -1 event is ADDED' \
	"claim-watch -1 -L 2 -n $NS -l t9100=page cm | jq -r .type | uniq -c | grep -qx ' *5 ADDED'"
check_output '-l takes set-based selectors and -f field selectors, escaped' \
	"claim-watch -1 -n $NS -l 't9100 in (page,nothing),t9100!=x' -f 'metadata.name!=page-3' cm |
	 jq -r .object.metadata.name" <<'EOF'
page-1
page-2
page-4
page-5
EOF

# A continue token that expires between pages: gdb holds claim-watch just
# before it asks for its second page while page-6 is created, etcd is
# compacted past the token and kube-apiserver restarted (so its watch
# cache cannot serve the token either): the server answers 410 Expired.
# claim-watch lists again from the start; page-6, made after the token,
# proves the new list, and nothing comes out twice.

# held NAME ARGS...: claim-watch ARGS, output in NAME.out and NAME.err,
# status in NAME.rc, held by gdb before its first continue request until
# the file resume appears (it makes the file paused then). Under
# VALGRIND=1 gdb drives it through valgrind's gdbserver; LeakSanitizer
# cannot work under gdb and is turned off.
held() {
	name=$1
	shift
	bp="break kube_query if key[0] == 'c' && key[1] == 'o'"
	hold='shell touch paused; while ! test -e resume; do sleep 0.1; done'
	if [ "${VALGRIND:-}" = 1 ]; then
		valgrind -q --vgdb=yes --vgdb-error=0 --vgdb-prefix="$SCRATCH/vgdb" \
			--error-exitcode=99 --leak-check=full \
			--errors-for-leak-kinds=definite,indirect \
			"$BUILD/claim-watch" "$@" >"$name.out" 2>"$name.vg" &
		pid=$!
		eventually $WAIT ls "$SCRATCH/vgdb-from-vgdb-to-$pid-"*
		gdb -q -batch -ex "target remote | vgdb --vgdb-prefix=$SCRATCH/vgdb --pid=$pid" \
			-ex "$bp" -ex continue -ex delete -ex "$hold" -ex continue \
			"$BUILD/claim-watch" >"$name.gdb" 2>&1
		wait "$pid"
		echo $? >"$name.rc"
		sed '/^==[0-9]*==/d' "$name.vg" >"$name.err"
	else
		ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0 \
			gdb -q -batch -ex "$bp" -ex "run $* >$name.out 2>$name.err" \
			-ex delete -ex "$hold" -ex continue \
			"$BUILD/claim-watch" >"$name.gdb" 2>&1
		sed -n 's/.*exited normally.*/0/p; s/.*exited with code \([0-9]*\).*/\1/p' \
			"$name.gdb" >"$name.rc"
	fi
}
if command -v gdb >/dev/null 2>&1; then
	rm -f paused resume
	held expired -1 -L 2 -n "$NS" -l t9100=page configmaps &
	HELD=$!
	eventually $WAIT test -e paused
	cm page-6 page 6
	k8shazgpu-sim stop apiserver >/dev/null 2>&1
	compact_etcd
	k8shazgpu-sim start apiserver >/dev/null 2>&1
	touch resume
	wait "$HELD"
	check_output 'a continue token expired between pages: listed again, each object once, status 0' \
		'jq -r "[.type, .object.metadata.name] | join(\" \")" expired.out; cat expired.err expired.rc' <<'EOF'
ADDED page-1
ADDED page-2
ADDED page-3
ADDED page-4
ADDED page-5
ADDED page-6
0
EOF
else
	cm page-6 page 6
	t_result 0 'a continue token expired between pages # SKIP no gdb'
fi

# -t ends a watch with status 0 whatever it is doing; -A lists every namespace.
T=3
[ "${VALGRIND:-}" = 1 ] && T=20
check_output "-A -t $T: the list of every namespace, a quiet watch, then status 0" \
	"claim-watch -A -t $T -l t9100=page configmaps >quiet.out; echo status \$?
	 jq -r '.type + \" \" + .object.metadata.namespace + \"/\" + .object.metadata.name' quiet.out" <<EOF
status 0
ADDED $NS/page-1
ADDED $NS/page-2
ADDED $NS/page-3
ADDED $NS/page-4
ADDED $NS/page-5
ADDED $NS/page-6
EOF

# ---- resources by every name -------------------------------------------

cat >crd.json <<EOF
{"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
 "metadata": {"name": "$CRD"},
 "spec": {"group": "t9100.example.com", "scope": "Namespaced",
  "names": {"plural": "widgets", "singular": "widget", "kind": "Widget", "shortNames": ["wdg"]},
  "versions": [{"name": "v1", "served": true, "storage": true,
   "schema": {"openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": true}}}]}}
EOF
k create -f crd.json >/dev/null
k wait --for condition=established --timeout=60s crd/$CRD >/dev/null
printf '{"apiVersion":"t9100.example.com/v1","kind":"Widget","metadata":{"name":"w1","namespace":"%s"},"spec":{"size":3}}' \
	"$NS" >w1.json
eventually 30 k create -f w1.json
widget_names() { for r in "$@"; do claim-watch -1 -n "$NS" "$r" | jq -r '[.type, .object.kind, .object.metadata.name] | join(" ")'; done; }
eventually 30 claim-watch -1 -n "$NS" wdg
check_output 'a CRD by plural.group, group/version/plural, singular, kind, short name' \
	"widget_names $CRD t9100.example.com/v1/widgets widget Widget wdg widgets.v1.t9100.example.com" <<'EOF'
ADDED Widget w1
ADDED Widget w1
ADDED Widget w1
ADDED Widget w1
ADDED Widget w1
ADDED Widget w1
EOF

count() { claim-watch -1 -A "$1" | wc -l; }
kcount() { k get "$1" -A -o json | jq '.items | length'; }
for r in resourceslices.resource.k8s.io deviceclasses.resource.k8s.io \
	deployments.apps apps/v1/deployments po nodes v1/namespaces leases.coordination.k8s.io; do
	check "claim-watch -1 -A $r lists what kubectl lists" \
		"test \"\$(count $r)\" = \"\$(kcount ${r##*/})\""
done

# ---- the REST calls of lib/kube.c (build/unit/kube) ------------------------

kube() { unit kube "$@"; }
P=/api/v1/namespaces/$NS/configmaps
obj() { printf '{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"%s"%s},"data":%s}' "$@"; }
uid() { kube get "$P/$1" | jq -r .metadata.uid; }
rv() { kube get "$P/$1" | jq -r .metadata.resourceVersion; }

check_output 'create (POST), and a second create: 409 AlreadyExists, exit 1' \
	"obj rest '' '{\"a\":\"1\"}' | kube create $P | jq -c '[.metadata.name, .data]' &&
	 obj rest '' '{}' | kube create $P 2>&1; echo \$?" <<EOF
["rest",{"a":"1"}]
kube: POST $P: 409 Conflict: configmaps "rest" already exists
kind=api status=409 reason=AlreadyExists
1
EOF
check_output 'replace (PUT) with a stale resourceVersion: 409; without: replaced' \
	"obj rest ',\"resourceVersion\":\"1\"' '{\"b\":\"2\"}' | kube replace $P/rest 2>&1; echo \$?
	 obj rest '' '{\"a\":\"1\",\"b\":\"2\"}' | kube replace $P/rest | jq -c .data" <<EOF
kube: PUT $P/rest: 409 Conflict: Operation cannot be fulfilled on configmaps "rest": the object has been modified; please apply your changes to the latest version and try again
kind=api status=409 reason=Conflict
1
{"a":"1","b":"2"}
EOF
check_output 'merge, JSON and strategic merge patches' \
	"echo '{\"data\":{\"c\":\"3\"}}' | kube merge $P/rest | jq -c .data &&
	 echo '[{\"op\":\"remove\",\"path\":\"/data/a\"}]' | kube json $P/rest | jq -c .data &&
	 echo '{\"metadata\":{\"labels\":{\"x\":\"y\"}}}' | kube strategic $P/rest | jq -c '[.metadata.labels, .data]'" <<'EOF'
{"a":"1","b":"2","c":"3"}
{"b":"2","c":"3"}
[{"x":"y"},{"b":"2","c":"3"}]
EOF
check_output 'server-side apply: create, a conflict between managers, force' \
	"obj applied '' '{\"k\":\"v\"}' | kube apply $P/applied one | jq -c '[.data, [.metadata.managedFields[] | .manager + \" \" + .operation]]' &&
	 obj applied '' '{\"k\":\"w\"}' | kube apply $P/applied two 2>&1; echo \$?
	 obj applied '' '{\"k\":\"w\"}' | kube apply $P/applied two force | jq -c '[.data, [.metadata.managedFields[] | .manager + \" \" + .operation]]'" <<EOF
[{"k":"v"},["one Apply"]]
kube: PATCH $P/applied: 409 Conflict: Apply failed with 1 conflict: conflict with "one": .data.k
kind=api status=409 reason=Conflict
1
[{"k":"w"},["two Apply"]]
EOF
check_output 'delete with preconditions: wrong uid, stale resourceVersion, then right' \
	"u=\$(uid rest) r=\$(rv rest)
	 kube delete $P/rest 00000000-0000-0000-0000-000000000000 2>&1 | sed \"s/\$u/UID/\"
	 kube delete $P/rest \$u 1 2>&1 | sed \"s/(\$r)/(RV)/\"
	 kube delete $P/rest \$u \$r | jq -r .status
	 kube get $P/rest 2>&1; echo \$?" <<EOF
kube: DELETE $P/rest: 409 Conflict: Operation cannot be fulfilled on ConfigMap "rest": the UID in the precondition (00000000-0000-0000-0000-000000000000) does not match the UID in record (UID). The object might have been deleted and then recreated
kind=api status=409 reason=Conflict
kube: DELETE $P/rest: 409 Conflict: Operation cannot be fulfilled on ConfigMap "rest": the ResourceVersion in the precondition (1) does not match the ResourceVersion in record (RV). The object might have been modified
kind=api status=409 reason=Conflict
Success
kube: GET $P/rest: 404 Not Found: configmaps "rest" not found
kind=api status=404 reason=NotFound
1
EOF
check_output 'list in pages of 1: every item, typed, and the list resourceVersion' \
	"kube list '$P?labelSelector=t9100%3Dpage' 1 | jq -c '[(.resourceVersion | test(\"^[0-9]+\$\")), [.items[] | .kind + \"/\" + .metadata.name]]'" <<'EOF'
[true,["ConfigMap/page-1","ConfigMap/page-2","ConfigMap/page-3","ConfigMap/page-4","ConfigMap/page-5","ConfigMap/page-6"]]
EOF
check_output 'discovery: group, version, plural, kind and scope' \
	"kube resolve po deployments.apps resourceslices.resource.k8s.io Node apps/v1/statefulsets cronjob | jq -r '[.group, .version, .resource, .kind, .namespaced] | join(\" \")'" <<'EOF'
 v1 pods Pod true
apps v1 deployments Deployment true
resource.k8s.io v1 resourceslices ResourceSlice false
 v1 nodes Node false
apps v1 statefulsets StatefulSet true
batch v1 cronjobs CronJob true
EOF
check_output 'paths: namespaced, cluster-scoped (namespace ignored), collection' \
	"kube path deployments.apps ns1 web && kube path nodes ns1 n1 && kube path po" <<'EOF'
/apis/apps/v1/namespaces/ns1/deployments/web
/api/v1/nodes/n1
/api/v1/pods
EOF

# ---- refusals -------------------------------------------------------------

check_output 'a user without rights: one-line 403, exit 1' \
	"must_fail 1 claim-watch --kubeconfig '$K8SHAZGPU_SIM_DIR/kubeconfig-nobody' -n $NS configmaps 2>&1" <<EOF
claim-watch: GET /api/v1/namespaces/$NS/configmaps: 403 Forbidden: configmaps is forbidden: User "nobody" cannot list resource "configmaps" in API group "" in the namespace "$NS"
EOF
check_output 'a resource that does not exist: exit 1' \
	"must_fail 1 claim-watch podz 2>&1 | sed 's/:[0-9]*\$/:PORT/'" <<'EOF'
claim-watch: no resource "podz" on https://127.0.0.1:PORT
EOF
check_output 'a group that does not exist: exit 1' \
	"must_fail 1 claim-watch nope.example.com/v1/things 2>&1 | sed 's/:[0-9]*\$/:PORT/'" <<'EOF'
claim-watch: no resource "nope.example.com/v1/things" on https://127.0.0.1:PORT
EOF
check_output 'a context the kubeconfig lacks: exit 1' \
	"must_fail 1 claim-watch --context nowhere pods 2>&1" <<EOF
claim-watch: kubeconfig: $KUBECONFIG: context "nowhere" not found
EOF

# ---- TLS, credentials, proxies ------------------------------------------

# Kubeconfigs made from the cluster's: its CA swapped for another one made
# here, or dropped, or replaced by insecure-skip-tls-verify; its client
# certificate and key as files; a bogus bearer token instead.
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes \
	-days 1 -subj /CN=not-the-cluster-ca -keyout other-ca.key -out other-ca.crt 2>/dev/null
sed "s|certificate-authority-data: .*|certificate-authority-data: $(openssl base64 -A <other-ca.crt)|" \
	"$KUBECONFIG" >wrong-ca.yaml
sed '/certificate-authority-data:/d' "$KUBECONFIG" >no-ca.yaml
sed 's|certificate-authority-data: .*|insecure-skip-tls-verify: true|' "$KUBECONFIG" >insecure.yaml
mkdir -p certs
sed -n 's/^ *client-certificate-data: //p' "$KUBECONFIG" | openssl base64 -d -A >certs/admin.crt
sed -n 's/^ *client-key-data: //p' "$KUBECONFIG" | openssl base64 -d -A >certs/admin.key
sed -e 's|client-certificate-data: .*|client-certificate: certs/admin.crt|' \
	-e 's|client-key-data: .*|client-key: certs/admin.key|' "$KUBECONFIG" >cert-files.yaml
server=$(sed -n 's/^ *server: //p' "$KUBECONFIG")
cat >bad-token.yaml <<EOF
apiVersion: v1
kind: Config
current-context: bogus
contexts:
- name: bogus
  context: {cluster: sim, user: bogus}
clusters:
- name: sim
  cluster:
    server: $server
    certificate-authority-data: $(sed -n 's/^ *certificate-authority-data: //p' "$KUBECONFIG")
users:
- name: bogus
  user: {token: t9100-bogus-token}
EOF
names() { jq -r .object.metadata.name | tr '\n' ' ' && echo; }

check_output 'a server certificate another CA signed: refused, exit 1' \
	"must_fail 1 claim-watch --kubeconfig wrong-ca.yaml -n $NS configmaps 2>&1 | sed 's|:[0-9]*/api:|:PORT/api:|'" <<'EOF'
claim-watch: GET https://127.0.0.1:PORT/api: SSL certificate problem: unable to get local issuer certificate
EOF
check_output 'no CA in the kubeconfig: the system store refuses it too, exit 1' \
	"must_fail 1 claim-watch --kubeconfig no-ca.yaml -n $NS configmaps 2>&1 | sed 's|:[0-9]*/api:|:PORT/api:|'" <<'EOF'
claim-watch: GET https://127.0.0.1:PORT/api: SSL certificate problem: unable to get local issuer certificate
EOF
check_output 'insecure-skip-tls-verify: true in the kubeconfig is honoured' \
	"claim-watch --kubeconfig insecure.yaml -1 -n $NS -l t9100=page configmaps | names" <<'EOF'
page-1 page-2 page-3 page-4 page-5 page-6 
EOF
check_output 'a client certificate and key in files beside the kubeconfig' \
	"claim-watch --kubeconfig cert-files.yaml -1 -n $NS -l t9100=page configmaps | names" <<'EOF'
page-1 page-2 page-3 page-4 page-5 page-6 
EOF
check_output 'a bogus bearer token: one-line 401, exit 1, the token never shown' \
	"must_fail 1 claim-watch --kubeconfig bad-token.yaml -n $NS configmaps 2>&1" <<'EOF'
claim-watch: GET /api: 401 Unauthorized: Unauthorized
EOF
check_output 'a proxy in the environment is not used for loopback' \
	"https_proxy=http://127.0.0.1:1 HTTPS_PROXY=http://127.0.0.1:1 http_proxy=http://127.0.0.1:1 \
	 NO_PROXY=example.com claim-watch -1 -n $NS -l t9100=page configmaps | names" <<'EOF'
page-1 page-2 page-3 page-4 page-5 page-6 
EOF

done_testing
