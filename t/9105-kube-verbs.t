#!/bin/sh
# claim-make -c and -D, claim-watch -F against the shared cluster: objects
# created with a POST print their uid and resourceVersion, exactly those
# the server holds; a name taken fails (exit 1) leaving the object as it
# was, and of five creators racing for one name exactly one wins; -D
# deletes, honours a uid precondition and reports an object already gone;
# a pod on the real node printing three lines is followed to the end, also
# when it is followed before its container started; a container chosen by
# -C; a pod that does not exist, and one never scheduled, exit 1.
. "$(dirname "$0")/lib.sh"
need_cluster
D=$K8SHAZGPU_SIM_DIR
NS=t9105-kube-verbs
HOST=$(hostname)

cleanup() {
	ns_deleted "$NS"
}
cleanup || { echo "Bail out! t9105: what an earlier run left is not gone"; exit 1; }
trap cleanup EXIT
trap 'exit 1' INT TERM
k create namespace "$NS" >/dev/null
eventually 60 k get serviceaccount default -n "$NS" >/dev/null

# cm NAME [V]: a ConfigMap object with data v=V, namespace left to -n.
cm() { printf '{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"%s"},"data":{"v":"%s"}}\n' "$1" "${2:-1}"; }
# server NAME: uid and resourceVersion of ConfigMap NAME as the server has them.
server() { k get cm "$1" -n "$NS" -o json | jq -r '"\(.metadata.uid) \(.metadata.resourceVersion)"'; }

# ---- -c ----

check_output '-c creates each object; the records name the uid and resourceVersion the server holds' '
	{ cm a; cm b; } | claim-make -c -n "$NS" >out &&
	jq -r "[.op, .ref, .uid, .resourceVersion] | join(\" \")" out | while read -r op ref uid rv; do
		[ "$uid $rv" = "$(server "${ref##*/}")" ] && echo "$op $ref"
	done' <<EOF
create v1/ConfigMap/$NS/a
create v1/ConfigMap/$NS/b
EOF

check_output '-c: a name taken is reported and fails (1), the object unchanged; the others are made' '
	{ cm a 2; cm c; } | claim-make -c -n "$NS" >out 2>err; echo "exit $?"
	jq -c "del(.uid, .resourceVersion)" out; cat err
	k get cm a -n "$NS" -o jsonpath="{.data.v}{\"\\n\"}"' <<EOF
exit 1
{"kind":"result","op":"exists","ref":"v1/ConfigMap/$NS/a"}
{"kind":"result","op":"create","ref":"v1/ConfigMap/$NS/c"}
claim-make: v1/ConfigMap/$NS/a: already exists
1
EOF

check_output '-c: of five creators racing for one ResourceClaim exactly one wins' '
	claim=$(jq -n -c --arg ns "$NS" "{apiVersion: \"resource.k8s.io/v1\", kind: \"ResourceClaim\",
		metadata: {name: \"race\", namespace: \$ns}, spec: {devices: {requests: [{name: \"gpus\",
		exactly: {deviceClassName: \"gpu.canhazgpu.dev\", count: 1}}]}}}")
	for i in 1 2 3 4 5; do echo "$claim" | claim-make -c >race.$i 2>/dev/null & done; wait
	cat race.* | jq -r .op | sort | uniq -c | sed "s/^ *//"
	[ "$(cat race.* | jq -r "select(.op == \"create\") | .uid")" = \
		"$(k get resourceclaim race -n "$NS" -o jsonpath={.metadata.uid})" ] && echo same uid' <<'EOF'
1 create
4 exists
same uid
EOF

# ---- -D ----

check_output '-D: a uid precondition that does not hold fails (1) and deletes nothing' '
	printf "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"a\",\"namespace\":\"%s\",\"uid\":\"0-not-it\"}}\n" "$NS" |
		claim-make -D >out 2>err; echo "exit $?"
	cat out; sed "s/ (.*//" err; k get cm a -n "$NS" -o name' <<EOF
exit 1
claim-make: v1/ConfigMap/$NS/a: DELETE /api/v1/namespaces/$NS/configmaps/a: 409 Conflict: Operation cannot be fulfilled on ConfigMap "a": the UID in the precondition
configmap/a
EOF

check_output '-D deletes (with its uid as precondition, or none) and reports one already gone' '
	uid=$(k get cm a -n "$NS" -o jsonpath={.metadata.uid})
	{ printf "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"a\",\"uid\":\"%s\"}}\n" "$uid"
	  cm b; cm gone; } | claim-make -D -n "$NS" >out; echo "exit $?"
	jq -c "del(.uid)" out
	[ "$(jq -r "select(.op == \"delete\") | .uid" out | head -n 1)" = "$uid" ] && echo uid of a
	k get cm -n "$NS" -o name | grep -v kube-root-ca' <<EOF
exit 0
{"kind":"result","op":"delete","ref":"v1/ConfigMap/$NS/a"}
{"kind":"result","op":"delete","ref":"v1/ConfigMap/$NS/b"}
{"kind":"result","op":"absent","ref":"v1/ConfigMap/$NS/gone"}
uid of a
configmap/c
EOF

# ---- -F ----

# pod NAME NODE INIT CMD...: a pod on node NODE whose containers c0, c1...
# run CMD... in turn (an init container running INIT first, unless empty),
# from image $IMAGE (default: the node's busybox).
pod() {
	name=$1 node=$2 init=$3
	shift 3
	for cmd; do printf '%s\n' "$cmd"; done | jq -R . | jq -s -c --arg name "$name" --arg node "$node" --arg init "$init" --arg ns "$NS" --arg image "${IMAGE:-k8s.io/busybox:local}" '
	def c(n; cmd): {name: n, image: $image, imagePullPolicy: "Never", command: ["sh", "-c", cmd]};
	{apiVersion: "v1", kind: "Pod", metadata: {name: $name, namespace: $ns},
	 spec: {nodeSelector: {"kubernetes.io/hostname": $node}, restartPolicy: "Never",
		tolerations: [{key: "k8shazgpu.dev/real-node", operator: "Exists", effect: "NoSchedule"}],
		terminationGracePeriodSeconds: 1,
		initContainers: (if $init == "" then [] else [c("init"; $init)] end),
		containers: [to_entries[] | c("c\(.key)"; .value)]}}' | claim-make -c >/dev/null
}

if [ -f "$D/kubelet.pid" ]; then
	check_output '-F prints the three lines of a pod, followed before its container started, then exits 0' '
		pod three "$HOST" "sleep 3" "echo one; sleep 1; echo two; sleep 1; echo three"
		start=$(date +%s)
		claim-watch -F three -n "$NS" -r 120; echo "exit $?"
		[ $(($(date +%s) - start)) -ge 3 ] && echo "waited"' <<'EOF'
one
two
three
exit 0
waited
EOF
	# kube_stream cuts lines and drops a last one without its newline:
	# only a claim-watch on kube_stream_bytes passes the raw bytes on.
	if grep -q kube_stream_bytes "$TOP/lib/kube.h"; then
		check_output '-F: a last line without a newline comes out as it is' '
			pod tail "$HOST" "" "echo one; printf tail"
			claim-watch -F tail -n "$NS" -r 120 | od -An -c | tr -s " "' <<'EOF'
 o n e \n t a i l
EOF
	else
		t_result 0 "-F: a last line without a newline # skip no kube_stream_bytes in lib/kube.h"
	fi
	check_output '-F -C picks a container; without it a pod of two is refused (1)' '
		pod two "$HOST" "" "echo zero" "echo one"
		claim-watch -F two -C c1 -n "$NS" -r 120; echo "exit $?"
		claim-watch -F two -n "$NS" -r 120 2>err; echo "exit $?"
		grep -c "a container name must be specified" err' <<'EOF'
one
exit 0
exit 1
1
EOF
	check_output '-F: a container that cannot start is given up after -r seconds, naming why (1)' '
		IMAGE=k8s.io/absent:none pod never "$HOST" "" "true"
		eventually 60 sh -c "k8shazgpu-sim kubectl get pod never -n $NS -o jsonpath={.status.containerStatuses[0].state.waiting.reason} | grep -qx ErrImageNeverPull"
		claim-watch -F never -n "$NS" -r 1 2>&1; echo "exit $?"' <<EOF
claim-watch: pod $NS/never: container not started after 1 s: waiting: ErrImageNeverPull
exit 1
EOF
else
	for d in '-F three lines' '-F last line' '-F -C' '-F never'; do t_result 0 "$d # skip no real node"; done
fi

check_output '-F: a pod that does not exist exits 1 naming it' '
	claim-watch -F nope -n "$NS" 2>&1; echo "exit $?"' <<EOF
claim-watch: GET /api/v1/namespaces/$NS/pods/nope: 404 Not Found: pods "nope" not found
exit 1
EOF

check_output '-F: a pod never scheduled is given up after -r seconds (1)' '
	pod nowhere no-such-node "" "echo x"
	claim-watch -F nowhere -n "$NS" -r 1 2>&1; echo "exit $?"' <<EOF
claim-watch: pod $NS/nowhere: not scheduled after 1 s
exit 1
EOF

done_testing
