say "In short"
echo "   - a real control plane on 127.0.0.1 with simulated H200 MIG nodes, built and started by k8shazgpu-sim"
echo "   - claim-watch streamed every pod change as it happened"
echo "   - node agents published GPU labels, extended resources and DRA ResourceSlices;"
echo "     kube-scheduler placed MIG pods by extended resource and by DRA claim, and a re-partition left nothing stale"
echo "   - the admission webhook, called by the API server over TLS, moved the 13th and 14th 2g.20gb pods to 1g.10gb"
echo "     so that all 14 ran, filled in a RuntimeClass's limits and refused pods over them, 8Ei included, naming the limits"
echo "   - a node agent cycle removed only the labels it had applied, keeping another tool's"
echo "   - the controller placed GPUWorkloads of three API shapes, fell back on MIG sizes, retried and failed"
echo "     what cannot fit, refused bad specs naming the field, and switched strategy at run time"
echo "   - it kept its state from watches: workloads that fit waited in a queue and started as Jobs finished,"
echo "     and while nothing happened it used no CPU and wrote nothing"
echo "   - a real H200's captures replayed to GPU feature discovery's labels and values, a DRA device named by"
echo "     its minor with NVIDIA's and the standard PCI attributes, and a CDI spec that names nothing the node lacks"
echo "   - every GPU node had a GPUNode (both groups) that kubectl get gpunodes and k8shazgpu nodes showed alike;"
echo "     seed 003's virtual node k8s.gpu showed capacity and allocatable going 63->61->2 cpu as pods came"
echo "   - pods of a Deployment and a Job, given to scheduler k8shazgpu by their annotations, were bound by"
echo "     sched-bind in priority order, never to a GPU already taken; a malformed annotation was named and left alone"
echo "   - a GPU going unhealthy and recovering reached a chat webhook once each, from the URL kept in a Secret"
echo "   - a GPUWorkload in dra mode asked for 2g.20gb, else 1g.10gb, as firstAvailable; kube-scheduler fell back"
echo "   - host users (k8shazgpu host, canhazgpu's verbs) and pods shared node 'shared' through the Redis ledger:"
echo "     a GPU reserved on the host left the node's ResourceSlice within a second, the pod's GPU showed"
echo "     in host status as a K8S hold, and no GPU was ever given to both"
echo "   - the status page (k8shazgpu web), fetched with curl, showed alice's GPUs and the pod's on one page"
echo "   - hostile input to the ledger (a terminal escape in a note, an empty list of GPUs, a pool size that"
echo "     would have kept Redis busy under its lock) was refused at once by the same bounds in C and in Lua"
if [ -S "$D/redis/redis.sock" ] && [ -f "$D/plugin.pid" ]; then
	echo "   - on the real node, pods ran for real: our DRA kubelet plugin held their GPUs in the node's ledger and"
	echo "     gave each container exactly its GPUs by UUID through a CDI spec, removed when the pods went"
fi
if [ -n "${cached:-}" ]; then
	echo "   - the node cache: a CachePlan of an image, a git repository and a model went ready on the real node"
	echo "     with the pushed digest, the branch's commit and the hub's files checked by hash; a pod used them with no"
	echo "     pull and no network, a new commit was swapped in whole, a bad tag was reported, removals freed the disk"
fi
if [ -n "${vllmrun:-}" ]; then
	echo "   - vllm run took a developer's checkout (unpushed, staged, unstaged and untracked changes, deletions,"
	echo "     renames, a binary, a symlink) to the real node on the CI image of its merge-base: the pod saw exactly"
	echo "     the working tree's bytes, the command its own quoted argv; --gpu-ids gave exactly GPUs 1 and 3,"
	echo "     status showed pods' and host users' holds side by side, and cleanup left nothing"
fi
if [ -f "$D/node-state" ] && command -v docker-registry >/dev/null 2>&1; then
	echo "   - k8shazgpu installed itself the way users will: four small images built with no container engine,"
	echo "     pushed to a registry, kubectl apply -k; its node agent, DRA plugin, controller and webhook ran in pods"
	echo "     with only the rights they use, an admission policy kept the agent to its own node, and delete -k undid it"
fi
if [ -x "$("$TOP/scripts/helm-build" path)" ]; then
	echo "   - the Helm chart rendered the same objects as kustomize, set images and allocation by values, and its"
	echo "     schema refused a value it did not know"
fi
