say "Every node runs a node agent (gpu-probe | claim-make -a, every 10 s). The labels it published, GPU feature discovery style:"
kc get nodes -o custom-columns='NODE:.metadata.name,PRODUCT:.metadata.labels.nvidia\.com/gpu\.product,GPUS:.metadata.labels.nvidia\.com/gpu\.count,MIG:.metadata.labels.nvidia\.com/mig\.strategy,1g.10gb:.metadata.labels.nvidia\.com/mig-1g\.10gb\.count,2g.20gb:.metadata.labels.nvidia\.com/mig-2g\.20gb\.count,TIER:.metadata.labels.agentaflow\.gpu/utilization-tier'

say "...and one DRA ResourceSlice per node, a device per MIG instance (driver gpu.canhazgpu.dev)"
kc get resourceslices
kc get resourceslice small-0.gpu.canhazgpu.dev -o json |
	jq -r '.spec.devices[0] | "   e.g. device \(.name): " + ([.attributes | to_entries[] | "\(.key)=\(.value | to_entries[0].value)"] | join(" ")) + " memory=\(.capacity.memory.value)"'
