say "Re-partitioning GPU 0 of node 'small' into one 7g.70gb instance: one agent cycle later nothing stale is left"
show_small() {
	kc get node small -o json | jq -r '"   labels: " + ([.metadata.labels | to_entries[] | select(.key | test("^nvidia.com/mig-.*count$")) | "\(.key)=\(.value)"] | join(" ")),
		"   allocatable: " + ([.status.allocatable | to_entries[] | select(.key | startswith("nvidia.com/")) | "\(.key)=\(.value)"] | join(" "))'
	echo "   DRA devices: $(kc get resourceslice small-0.gpu.canhazgpu.dev -o json | jq '.spec.devices | length')"
}
kc label node small nvidia.com/mig.config=all-7g.70gb --overwrite >/dev/null
echo " before (the label nvidia.com/mig.config was set by someone else, as the MIG manager does):"
show_small
sed -i '/^- name: small/a\  migByGPU: {"0": [7g.70gb]}' "$K8SHAZGPU_SIM_DIR/topology.yaml"
k8shazgpu-nodeagent -1 -N small -t "$K8SHAZGPU_SIM_DIR/topology.yaml"
echo " after:"
show_small
echo "   kept, as the agent removes only what it applied: $(kc get node small -o jsonpath='{.metadata.labels.nvidia\.com/mig\.config}' | sed 's/^/nvidia.com\/mig.config=/')"
