# t/lib-install.sh: what the tests of k8shazgpu installed in the shared
# cluster share (t/9810 with kustomize, t/9812 with Helm; t/lib.sh is
# sourced first, HOST and D set).

# slice_devices: the devices of the real node's ResourceSlices, sorted;
# same_slice: they are those gpu-probe finds (devices.want, written by
# check_republished)
slice_devices() {
	k get resourceslices -o json | jq -r --arg n "$HOST" '.items[] | select(.spec.nodeName == $n) | .spec.devices[].name' | sort
}
same_slice() { slice_devices >devices.got && cmp -s devices.got devices.want; }
node_product() { k get node "$HOST" -o jsonpath='{.metadata.labels.nvidia\.com/gpu\.product}'; }

# check_republished: with the real node's product label and ResourceSlice
# taken away, the node agent's pod publishes both again.
check_republished() {
	gpu-probe -t "$D/realnode.yaml" -n "$HOST" | claim-make -N "$HOST" |
		jq -r 'select(.kind == "ResourceSlice") | .spec.devices[].name' | sort >devices.want
	k label node "$HOST" nvidia.com/gpu.product- >/dev/null
	k delete resourceslices --field-selector "spec.nodeName=$HOST" >/dev/null
	check 'the node agent pod publishes the node again: its label and its ResourceSlice' \
		'eventually 60 same_slice && eventually 30 test "$(node_product)" = NVIDIA-H100-80GB-HBM3'
}
