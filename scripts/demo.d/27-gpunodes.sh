say "GPUNodes: one per GPU node (agentaflow.io/v1 and canhazgpu.dev/v1alpha1), written by its node agent in the same cycle as the labels"
kc get gpunodes.agentaflow.io
echo " k8shazgpu nodes reads the same objects:"
indent k8shazgpu nodes
