say "GPU health alerts: the controller posts device transitions to the chat webhook named in Secret alert-webhook (Slack's format here)"
"$TOP/t/alertserve" -l "$work/hook.log" >"$work/hook.out" 2>&1 3>&- 4>&- &
hookserve=$!
alertserve_up() {
	cat "$work/hook.out"
	hport=$(sed -n 's/^listening on 127.0.0.1:\([0-9]*\).*/\1/p' "$work/hook.out") && [ -n "$hport" ]
}
eventually -i 0.1 10 "alertserve to listen" alertserve_up
kc create namespace alerts >/dev/null
kc create secret generic alert-webhook -n alerts --from-literal=webhook-url="http://127.0.0.1:$hport/services/demo" >/dev/null
posts() { [ -s "$work/hook.log" ] && jq -s '[.[] | select(.body)] | length' "$work/hook.log" || echo 0; }
k8shazgpu-sim stop agents >/dev/null 2>&1
echo " Node l4's two GPUs pass 25 C, which this cycle's thresholds call unhealthy (gpu-probe -H temp_unhealthy=25):"
K8SHAZGPU_STATE_DIR=$work/l4state k8shazgpu-nodeagent -1 -N l4 -t "$K8SHAZGPU_SIM_DIR/topology.yaml" -- -H temp_unhealthy=25 2>/dev/null || true
eventually 30 "2 posts to the chat webhook" atleast 2 posts
indent k8shazgpu health
echo " The same cycle's readings, as the node agent's /metrics serves them to the ServiceMonitor"
echo " (manifests/monitoring; its PrometheusRule fires on k8shazgpu_gpu_health == 2):"
grep '^k8shazgpu_gpu_\(health\|temperature_celsius\){' "$work/l4state/metrics" | sed 's/^/   /'
echo " What gpu-alert keeps in ConfigMap gpu-alert-state, so that a restarted controller does not tell it again:"
alert_states() { kc get configmap gpu-alert-state -n alerts -o json | jq '.data // {} | length'; }
eventually 20 "2 GPUs' states in ConfigMap gpu-alert-state" is 2 alert_states
kc get configmap gpu-alert-state -n alerts -o json | jq -r '.data // {} | to_entries[] | "   \(.key): \(.value | fromjson | .state)"'
echo " ...and back to normal, one cycle later:"
k8shazgpu-nodeagent -1 -N l4 -t "$K8SHAZGPU_SIM_DIR/topology.yaml" 2>/dev/null
eventually 30 "4 posts to the chat webhook" atleast 4 posts
k8shazgpu-sim start agents >/dev/null 2>&1
echo " What the webhook received ($(posts) posts, each once):"
jq -r 'select(.body) | "   POST \(.path): \(.body.text)"' "$work/hook.log"
stop "$hookserve"
hookserve=
kc delete namespace alerts --wait=false >/dev/null
stop "$controller"
controller=
