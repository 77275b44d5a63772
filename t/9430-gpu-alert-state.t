#!/bin/sh
# gpu-alert -S against the shared cluster: a GPU node's devices as
# claim-watch reads them from the API server, each run of gpu-alert a
# controller's lifetime; the told health kept in a real ConfigMap, so that
# a restart posts nothing again, a device that turned unhealthy, or
# recovered, between two runs posts once, the ConfigMap holding exactly
# the devices last told unhealthy. Posts counted by t/alertserve.
. "$(dirname "$0")/lib.sh"
need_cluster
NS=t9430-gpu-alert
NODE=t9430-gpu

"$TOP/t/alertserve" -l hook.log >serve.out 2>serve.err 3>&- 4>&- &
serve_pid=$!
cleanup() {
	k delete node "$NODE" --ignore-not-found >/dev/null 2>&1
	ns_deleted "$NS"
}
cleanup || { echo "Bail out! t9430: what an earlier run left is not gone"; exit 1; }
trap 'kill $serve_pid 2>/dev/null; cleanup' EXIT
trap 'exit 1' INT TERM
eventually 30 grep -q '^listening on' serve.out ||
	{ echo "Bail out! alertserve did not start: $(cat serve.err)"; exit 1; }
E=http://127.0.0.1:$(sed -n 's/^listening on 127.0.0.1://p' serve.out)
k create namespace "$NS" >/dev/null
k -n "$NS" create secret generic alert-webhook --from-literal=webhook-url="$E/hook" >/dev/null

# devices A B: the node's agentaflow.gpu/devices with GPU-a and GPU-b of
# health A and B, as claim-make writes it
devices() {
	printf '[{"index":0,"uuid":"GPU-a","product":"NVIDIA H100 80GB HBM3","mig":null,"health":"%s","temp_c":40,"ecc_errors":0,"health_reasons":[]},{"index":1,"uuid":"GPU-b","product":"NVIDIA H100 80GB HBM3","mig":null,"health":"%s","temp_c":40,"ecc_errors":0,"health_reasons":[]}]' "$1" "$2"
}
set_devices() { k annotate node "$NODE" --overwrite "agentaflow.gpu/devices=$(devices "$1" "$2")" >/dev/null; }
printf '{"apiVersion":"v1","kind":"Node","metadata":{"name":"%s","labels":{"agentaflow.gpu/enabled":"true"}}}\n' "$NODE" |
	k create -f - >/dev/null
# run: one controller lifetime: the node listed, alerts posted, the end
run() {
	claim-watch -1 -g "$NODE" nodes | gpu-alert -s "$NS/alert-webhook" -S "$NS/gpu-alert-state"
}
mark() { wc -l <hook.log; }
# posts: the texts posted since mark $1
posts() { tail -n "+$(($1 + 1))" hook.log | jq -r 'select(.n > 0) | .body.text'; }
# state: the ConfigMap's keys and states
state() { k -n "$NS" get configmap gpu-alert-state -o json | jq -r '.data | to_entries[] | "\(.key) \(.value | fromjson | .state)"'; }
: >hook.log

set_devices unhealthy ok
m=$(mark)
check_output 'first run: the unhealthy device posted once, kept in a ConfigMap made for it' \
	'run && posts '"$m"' && state' <<X
{"kind":"alert","node":"$NODE","device":"GPU-a","event":"unhealthy","sent":true,"tries":1}
GPU 0 on node $NODE is unhealthy
${NODE}_GPU-a unhealthy
X
m=$(mark)
check_output 'a restart with nothing changed: no post, the ConfigMap as it was' \
	'run && posts '"$m"' && state' <<X
${NODE}_GPU-a unhealthy
X
set_devices unhealthy unhealthy
m=$(mark)
check_output 'a device turned unhealthy while down: one post, for it alone' \
	'run && posts '"$m"' && state | sort' <<X
{"kind":"alert","node":"$NODE","device":"GPU-b","event":"unhealthy","sent":true,"tries":1}
GPU 1 on node $NODE is unhealthy
${NODE}_GPU-a unhealthy
${NODE}_GPU-b unhealthy
X
set_devices ok unhealthy
m=$(mark)
check_output 'a device recovered while down: one post, its key removed' \
	'run && posts '"$m"' && state' <<X
{"kind":"alert","node":"$NODE","device":"GPU-a","event":"recovered","sent":true,"tries":1}
GPU 0 on node $NODE recovered: health is ok
${NODE}_GPU-b unhealthy
X
m=$(mark)
check_output 'and a restart after that: no post' \
	'run && posts '"$m"' && state' <<X
${NODE}_GPU-b unhealthy
X
# a write that crossed another's: gpu-alert reads its input from a fifo,
# the ConfigMap is changed (an annotation) between its two alerts
mkfifo feed
gpu-alert -s "$NS/alert-webhook" -S "$NS/gpu-alert-state" <feed >cross.out 2>cross.err &
alert_pid=$!
exec 5>feed
set_devices ok unhealthy
m=$(mark)
# node: the Node's watch event as claim-watch writes it, for devices A B
node() { set_devices "$1" "$2" && claim-watch -1 -g "$NODE" nodes >&5; }
has_a() { state | grep -q GPU-a; }
# in this shell, which holds the fifo open
node unhealthy unhealthy && eventually 30 has_a &&
	k -n "$NS" annotate configmap gpu-alert-state other-writer=yes >/dev/null &&
	node unhealthy ok
exec 5>&-
wait $alert_pid
cross() {
	cat cross.out cross.err && posts "$m" && state &&
		k -n "$NS" get configmap gpu-alert-state -o jsonpath='{.metadata.annotations.other-writer}' && echo
}
check_output 'a write after another writer changed the ConfigMap: made on the fresh resourceVersion, the other change kept' \
	cross <<X
{"kind":"alert","node":"$NODE","device":"GPU-a","event":"unhealthy","sent":true,"tries":1}
{"kind":"alert","node":"$NODE","device":"GPU-b","event":"recovered","sent":true,"tries":1}
GPU 0 on node $NODE is unhealthy
GPU 1 on node $NODE recovered: health is ok
${NODE}_GPU-a unhealthy
yes
X
check_output 'the API server refuses a merge patch on a resourceVersion no longer current, as gpu-alert counts on' \
	'k -n "$NS" patch configmap gpu-alert-state --type merge -p "{\"metadata\":{\"resourceVersion\":\"1\"},\"data\":{}}" 2>&1 | sed "s/Operation cannot be fulfilled on configmaps .*: the object/the object/"' <<X
Error from server (Conflict): the object has been modified; please apply your changes to the latest version and try again
X
done_testing
