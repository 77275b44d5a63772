say "A host user and a pod share one node, never one GPU: the canhazgpu ledger in Redis"
# A node of its own, with the host's Redis (a real redis-server here).
# Bind or retry: a port another program took first gets another draw.
redis_ours() { [ "$(redis-cli -p "$rport" info server 2>/dev/null | tr -d '\r' | sed -n 's/^process_id://p')" = "$(cat "$work/redis.pid" 2>/dev/null)" ]; }
tries=0
until [ $tries -ge 5 ]; do
	tries=$((tries + 1))
	rport=$(free-port -r 12000-19999)
	rm -f "$work/redis.pid"
	: >"$work/redis.log"
	redis-server --bind 127.0.0.1 --port "$rport" --save '' --appendonly no --daemonize yes \
		--pidfile "$work/redis.pid" --logfile "$work/redis.log" --dir "$work" \
		--notify-keyspace-events 'K$g' >/dev/null || continue
	n=0
	until redis_ours || grep -q 'already in use' "$work/redis.log" || [ $n -ge 100 ]; do sleep 0.1; n=$((n + 1)); done
	redis_ours && break
	[ ! -s "$work/redis.pid" ] || stop "$(cat "$work/redis.pid")"
done
redis_ours || { log_tail "$work/redis.log"; die "no redis-server of the demo's own could start"; }
K8SHAZGPU_REDIS=127.0.0.1:$rport
export K8SHAZGPU_REDIS
cat >"$work/shared.yaml" <<'EOF'
defaults: {product: NVIDIA-H100-80GB-HBM3, memoryMiB: 81559, computeCapability: "9.0",
  driverVersion: "550.90.07", cudaVersion: "12.4", cpu: "64", memory: 512Gi, pods: "110"}
nodes:
- {name: shared, gpus: 4}
EOF
k8shazgpu-sim nodes "$work/shared.yaml" | claim-make -a >/dev/null
# (this machine has no GPU tool: the provider is canhazgpu's fake one)
admin_out=$(k8shazgpu host admin --gpus 4 --provider fake 2>&1) ||
	{ printf '%s\n' "$admin_out" >&2; die "k8shazgpu host admin failed"; }
printf '%s\n' "$admin_out" | sed 's/^/   /'
k8shazgpu-nodeagent -i 60 -N shared -t "$work/shared.yaml" -r "$K8SHAZGPU_REDIS" 2>"$work/agent-shared.log" &
ledger_agent=$!
offered() {
	kc get resourceslices -o json | jq -r '[.items[] | select(.spec.nodeName == "shared") | .spec.devices[].name] | sort | join(" ")'
}
# wait_offered DEVICES: until the node's slice offers exactly DEVICES.
wait_offered() {
	eventually -i 0.1 10 "node 'shared' to offer $1" is "$1" offered
	echo "   node 'shared' offers the cluster: $(offered) (after $((polls / 10)).$((polls % 10)) s)"
}
# free_now: the devices of the GPUs nobody holds, as the ledger says.
free_now() { gpu-reserve status | jq -r -s 'map(select(.state == "AVAILABLE") | "gpu-\(.gpu)") | join(" ")'; }
wait_offered "gpu-0 gpu-1 gpu-2 gpu-3"
echo " alice, on the host: k8shazgpu host reserve --gpus 2 --duration 1h"
indent env USER=alice k8shazgpu host reserve --gpus 2 --duration 1h
wait_offered "$(free_now)"
echo "   (the agent's interval is 60 s: Redis woke it)"
kc get node shared -o json | jq -r '.metadata.annotations["canhazgpu.dev/host-holds"] | fromjson | .[] | "   node annotation canhazgpu.dev/host-holds: GPU \(.gpu) held by \(.user) (\(.type))"'
echo " A pod asks for one GPU on node 'shared' through DRA"
kc create namespace shared >/dev/null
eventually -i 0.2 10 "the default ServiceAccount of namespace shared" has_sa shared
cat <<EOF | kc apply -f - >/dev/null
apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata: {name: one-gpu, namespace: shared}
spec: {spec: {devices: {requests: [{name: gpu, exactly: {deviceClassName: gpu.canhazgpu.dev}}]}}}
---
apiVersion: v1
kind: Pod
metadata: {name: trainer, namespace: shared}
spec:
  nodeSelector: {kubernetes.io/hostname: shared}
  tolerations: [{key: kwok.x-k8s.io/node, operator: Exists, effect: NoSchedule}]
  resourceClaims: [{name: gpu, resourceClaimTemplateName: one-gpu}]
  containers: [{name: main, image: registry.invalid/train:1, resources: {claims: [{name: gpu}]}}]
EOF
k8s_hold() { k8shazgpu host status --json | jq -c -e '., any(.[]; .type == "K8S")'; }
eventually -i 0.2 20 "the pod's GPU to become a k8s hold (see $work/agent-shared.log)" k8s_hold
echo " What the host sees now (k8shazgpu host status, as canhazgpu status shows it):"
indent k8shazgpu host status
echo " And on the status page (k8shazgpu web, node 'shared', namespace shared), fetched with curl:"
k8shazgpu -n shared web --node shared --port 0 --refresh 0 >"$work/web.out" 2>"$work/web.err" &
web_pid=$!
web_up() { grep -q '^serving http' "$work/web.out"; }
eventually -i 0.2 10 "k8shazgpu web to serve (see $work/web.err)" web_up
curl -s "$(sed -n 's/^serving //p' "$work/web.out")" | sed -e 's#</t[dh]>#  #g' -e 's/<[^>]*>//g' \
	-e 's/&lt;/</g; s/&gt;/>/g; s/&quot;/"/g; s/&#39;/'"'"'/g; s/&amp;/\&/g' | grep '^GPU \|^Missing' | sed 's/ *$//; s/^/   /'
stop "$web_pid"
web_pid=
echo " bob, on the host, asks for 2 GPUs without waiting: only one is left"
USER=bob k8shazgpu host reserve --gpus 2 --nonblock 2>&1 | sed 's/^/   /' || true
echo " and takes that one with --short, as in export CUDA_VISIBLE_DEVICES=\$(k8shazgpu host reserve --short)"
echo "   CUDA_VISIBLE_DEVICES=$(USER=bob k8shazgpu host reserve --short)"
echo " alice releases hers; the pod ends"
indent env USER=alice k8shazgpu host release
kc delete pod trainer -n shared --wait=false >/dev/null
no_k8s_hold() { ! k8s_hold; }
eventually -i 0.2 30 "the pod's k8s hold to go" no_k8s_hold
indent k8shazgpu host status
echo " bob releases by id, naming all four: his is released, the others named and left, status 0, as canhazgpu"
st=0
USER=bob k8shazgpu host release -G 0,1,2,3 >"$work/release.out" 2>&1 || st=$?
sed 's/^/   /' "$work/release.out"
echo "   (status $st)"
wait_offered "$(free_now)"
stop "$ledger_agent"
ledger_agent=
echo " Hostile input meets the same bounds in gpu-reserve and in its scripts inside Redis: refused at once, nothing changed"
echo "   a note with a terminal escape:"
USER=mallory k8shazgpu host reserve --gpus 1 --note "$(printf 'hi\033[2J')" 2>&1 | sed '/^usage:/d; s/^/     /' || true
echo "   a release naming an empty list of GPUs (once read as \"all of bob's\"):"
echo '{"op":"release","gpu_ids":[],"user":"bob"}' | gpu-reserve - 2>&1 | sed 's/^/     /' || true
echo "   a pool size that would keep Redis busy for a minute, under the allocation lock:"
redis-cli -p "$rport" set canhazgpu:gpu_count 3000000 >/dev/null
gpu-reserve reserve -b 2>&1 | sed 's/^/     /' || true
redis-cli -p "$rport" set canhazgpu:gpu_count 4 >/dev/null
echo "   bob still holds his GPU: $(gpu-reserve status | jq -r -s 'map(select(.user == "bob") | "gpu-\(.gpu)") | join(" ")')"
ledger_agent=
