# a cluster an interrupted demo left behind goes first
k8shazgpu-sim down >/dev/null 2>&1 || k8shazgpu-sim down
say "Starting a real Kubernetes control plane on 127.0.0.1 (etcd, kube-apiserver, kube-scheduler, kube-controller-manager) with KWOK simulating two H200 nodes cut into MIG devices and two nodes of whole GPUs"
k8shazgpu-sim up -t "$TOP/manifests/sim/test.yaml"
eval "$(k8shazgpu-sim env)"
export KUBECONFIG

say "The nodes and the MIG devices they offer (as the real API server reports them)"
kc get nodes -o custom-columns='NODE:.metadata.name,READY:.status.conditions[?(@.type=="Ready")].status,MIG-1g.10gb:.status.allocatable.nvidia\.com/mig-1g\.10gb,MIG-2g.20gb:.status.allocatable.nvidia\.com/mig-2g\.20gb'
