say "A real GPU, as NVIDIA's own stack describes it: the H200 gpu-check captured (driver 580.159.04), replayed by gpu-probe"
G=$TOP/t/fixtures/gpu-probe
gpu-probe -q -N h200 -r "$G/h200.csv" -m "$G/h200.list" -x "$G/h200.xml" -R "$G/h200-root/proc" -Y "$G/h200-root/sys" >"$work/h200.ndjson"
jq -r '"   GPU \(.index): minor \(.minor) (/dev/nvidia\(.minor)), CUDA \(.cuda_version), PCIe root \(.pcie_root), NUMA node \(.numa_node), PCI class \(.pci_class)"' "$work/h200.ndjson"
claim-make "$work/h200.ndjson" >"$work/h200.objects"
echo " GPU feature discovery's labels, with its values (the revision as printed, 04):"
jq -r 'select(.kind == "Node") | .metadata.labels | to_entries[] | select(.key | test("driver-version|runtime-version.full|gpu.mode|replicas|sharing|mps")) | "   \(.key)=\(.value)"' "$work/h200.objects"
echo " its DRA device, named by minor as NVIDIA's DRA driver names it, with the standard PCI attributes:"
jq -r 'select(.kind == "ResourceSlice") | .spec.devices[] | "   \(.name): " + ([.attributes | to_entries[] | select(.key | test("brand|cudaDriverVersion|pci|numa")) | "\(.key)=\(.value | to_entries[0].value)"] | join(" "))' "$work/h200.objects"
echo " the CDI spec a claim of it gets on this machine, which has no NVIDIA driver: nothing made up, and why"
dra-plugin -N h200 -g "$work/h200.ndjson" spec gpu-0 2>/dev/null |
	jq -r '.annotations | to_entries[] | select(.key | test("device-nodes|driver")) | "   \(.key): \(.value | split("; ")[0])"'
echo " (on a GPU machine, scripts/gpu-check checks all of this live and runs CUDA in a container given only that spec)"
