#!/bin/sh
# k8shazgpu run, vllm run, cleanup and status on the shared cluster, on
# two KWOK nodes of this test's own (two whole GPUs each; GPU 1 of the
# second held on its host through a real redis-server): the objects a
# run creates (claim, ConfigMaps and pod, owned by the claim, labelled,
# constrained), what it prints, --prefer-node honored when the node fits
# and not when it is full, a name taken, a timeout and a pod that cannot
# start leaving nothing, the cache plan filled and waited for, status
# against the API and Redis, cleanup --name and --all deleting exactly
# what runs made and nothing foreign. What needs a real pod's output is
# t/9760-vllm-node.t's.
. "$(dirname "$0")/lib.sh"
need_cluster
NS=t9750
A=t9750-a
B=t9750-b
TOL=kwok.x-k8s.io/node=fake:NoSchedule
kns() { k8shazgpu-sim kubectl -n "$NS" "$@"; }
unset K8SHAZGPU_NAMESPACE K8SHAZGPU_CONTEXT K8SHAZGPU_OUTPUT K8SHAZGPU_PACK_IMAGE
# the applier vllm run puts in ConfigMap k8shazgpu-applier-VERSION-DIGEST
# (no pod runs on KWOK nodes: any build's serves)
K8SHAZGPU_APPLIER=$BUILD/static/diff-pack
export K8SHAZGPU_APPLIER
APPLIER_CM=k8shazgpu-applier-$(claim-make -V | awk '{ print $2 }')-$(sha256sum <"$K8SHAZGPU_APPLIER" | cut -c1-12)

cleanup() {
	cl_rc=0
	ns_deleted "$NS" 120 || cl_rc=1
	k delete nodecachestatuses.canhazgpu.dev "$A" --ignore-not-found >/dev/null 2>&1
	k delete node "$A" "$B" --ignore-not-found --wait=false >/dev/null 2>&1
	gone 60 "nodes $A $B" k get node "$A" "$B" --ignore-not-found -o name || cl_rc=1
	k delete resourceslices --field-selector "spec.nodeName=$A" >/dev/null 2>&1
	k delete resourceslices --field-selector "spec.nodeName=$B" >/dev/null 2>&1
	[ ! -s "$SCRATCH/items" ] || k8shazgpu cache remove $(cat "$SCRATCH/items") >/dev/null 2>&1
	return $cl_rc
}
cleanup || { echo "Bail out! t9750: what an earlier run left is not gone"; exit 1; }
start_redis
trap 'stop_redis; cleanup || exit 1' EXIT
trap 'exit 1' INT TERM

cat >topo.yaml <<'EOF'
defaults: {product: NVIDIA-H100-80GB-HBM3, memoryMiB: 81559, computeCapability: "9.0",
  driverVersion: "550.90.07", cudaVersion: "12.4", cpu: "64", memory: 512Gi, pods: "110"}
nodes:
- {name: t9750-a, gpus: 2}
- {name: t9750-b, gpus: 2}
EOF
yaml2json "$TOP/manifests/deviceclasses.yaml" | claim-make -a >/dev/null
for f in cacheplans nodecachestatuses; do
	crd_apply "$TOP/manifests/crds/$f.yaml" || { echo "Bail out! t9750: $f.yaml not applied"; exit 1; }
done
k create namespace "$NS" >/dev/null
k8shazgpu-sim nodes topo.yaml | claim-make -a >/dev/null
# GPU 1 of B held by alice on the host: the node agent's pipeline
gpu-reserve init -g 2 >/dev/null
gpu-reserve reserve -G 1 -u alice -t manual -d 1h >/dev/null
gpu-probe -t topo.yaml -n "$A" | claim-make -a -m k8shazgpu-nodeagent -N "$A" >/dev/null
gpu-probe -t topo.yaml -n "$B" | gpu-reserve mark | claim-make -a -m k8shazgpu-nodeagent -N "$B" >/dev/null
eventually 60 kns get serviceaccount default >/dev/null
eventually 30 k get cacheplans.canhazgpu.dev >/dev/null

# st CMD...: its stdout, "exit N", its stderr
st() {
	"$@" >st.out 2>st.err
	st_rc=$?
	cat st.out
	echo "exit $st_rc"
	cat st.err
}
kr() { k8shazgpu -n "$NS" run --toleration "$TOL" "$@"; }
uid() { kns get "$1" "$2" -o jsonpath='{.metadata.uid}'; }
# ours: every object of the namespace but its own ConfigMap, kind/name
ours() {
	kns get pods,configmaps,resourceclaims -o json |
		jq -r '.items[] | select(.metadata.name != "kube-root-ca.crt") | "\(.kind | ascii_downcase)/\(.metadata.name)"' |
		sed "s|^configmap/$APPLIER_CM\$|configmap/APPLIER|" | sort
}
# left PATTERN: those of ours matching PATTERN (for gone)
left() { ours | grep "$1" || :; }

# ---------------------------------------------------------------- run, prefer-node

check_output 'run --prefer-node A: on A, both its GPUs; how to reach it' \
	"kr --image busybox:1 --name p1 --gpus 2 --prefer-node $A --port 8080 --timeout 60 -- sleep 1000" <<EOF
pod:   p1 (namespace $NS)
node:  $A
GPUs:  gpu-0 (index 0), gpu-1 (index 1)
reach: kubectl port-forward -n $NS pod/p1 8080:8080
logs:  kubectl logs -n $NS -f p1
EOF
check_output 'the claim: labels, annotations, the request' \
	"kns get resourceclaim p1 -o json | jq -c '.metadata.labels, .metadata.annotations, .spec.devices.requests'" <<EOF
{"app.kubernetes.io/managed-by":"k8shazgpu","canhazgpu.dev/run":"p1","canhazgpu.dev/workload":"run"}
{"canhazgpu.dev/cmd":"[\"sleep\",\"1000\"]","canhazgpu.dev/image":"busybox:1","canhazgpu.dev/port":"8080","canhazgpu.dev/prefer-node":"$A","canhazgpu.dev/workload":"run"}
[{"exactly":{"allocationMode":"ExactCount","count":2,"deviceClassName":"gpu.canhazgpu.dev"},"name":"gpus"}]
EOF
check_output 'the pod: owned by the claim (its uid), labelled, its claim, the preference' \
	"kns get pod p1 -o json | jq -c --arg uid \$(uid resourceclaim p1) '[.metadata.ownerReferences[0].uid == \$uid, .metadata.ownerReferences[0].kind], .metadata.labels, .spec.resourceClaims, .spec.affinity.nodeAffinity, .spec.containers[0].resources'" <<EOF
[true,"ResourceClaim"]
{"app.kubernetes.io/managed-by":"k8shazgpu","canhazgpu.dev/run":"p1","canhazgpu.dev/workload":"run"}
[{"name":"gpus","resourceClaimName":"p1"}]
{"preferredDuringSchedulingIgnoredDuringExecution":[{"preference":{"matchExpressions":[{"key":"kubernetes.io/hostname","operator":"In","values":["$A"]}]},"weight":100}]}
{"claims":[{"name":"gpus"}]}
EOF
check_output 'a name taken: status 1, nothing made' \
	"st kr --image busybox:1 --name p1 --timeout 20; ours" <<EOF
exit 1
k8shazgpu run: name p1 is taken: resourceclaim p1 exists in namespace $NS
pod/p1
resourceclaim/p1
EOF
check_output '--gpu-ids 0 on B (GPU 1 held on the host there): GPU 0; B is full then' \
	"kr --image busybox:1 --name p3 --gpu-ids 0 --prefer-node $B --timeout 60 | sed -n 2,3p;
	 kns get resourceclaim p3 -o json | jq -c '.spec.devices.requests[0].exactly.selectors, [.status.allocation.devices.results[] | [.pool, .device]]'" <<EOF
node:  $B
GPUs:  gpu-0 (index 0)
[{"cel":{"expression":"device.attributes[\"gpu.canhazgpu.dev\"].index in [0]"}}]
[["$B","gpu-0"]]
EOF

check 'A full: --prefer-node A lands elsewhere (neither on A nor on B)' \
	"kr --image busybox:1 --name p2 --prefer-node $A --timeout 60 >p2.out && grep '^node: ' p2.out && ! grep -q '^node:  \($A\|$B\)\$' p2.out"

# ---------------------------------------------------------------- status

check_output 'status of A and B: GPUs, the host hold, claims, the Redis ledger agrees' \
	"k8shazgpu -n $NS status --node $A | sed 1,4d; k8shazgpu -n $NS status --node $B --name p3 | sed 1,4d;
	 gpu-reserve status | jq -r 'select(.gpu == 1) | [.state, .user, .type] | join(\" \")'" <<EOF
GPU Summary:
  Total GPUs: 2
  Available: 0
  Allocated: 2
  Held on hosts: 0

Node $A:
  Total GPUs: 2
  Available GPUs: none
  Held on the host: none
  Allocated GPUs:
    GPU 0: $NS/p1 (Pod: p1)
    GPU 1: $NS/p1 (Pod: p1)

ResourceClaims in namespace $NS:
  p1:
    Status: Allocated
    Node: $A
    GPU IDs: 0, 1
    Pod: p1 (Running)
  p2:
    Status: Allocated
    Node: $(kns get resourceclaim p2 -o jsonpath='{.status.allocation.devices.results[0].pool}')
    GPU IDs: $(kns get resourceclaim p2 -o jsonpath='{.status.allocation.devices.results[0].device}' | sed 's/^gpu-//')
    Pod: p2 (Running)
  p3:
    Status: Allocated
    Node: $B
    GPU IDs: 0
    Pod: p3 (Running)
GPU Summary:
  Total GPUs: 2
  Available: 0
  Allocated: 1
  Held on hosts: 1

Node $B:
  Total GPUs: 2
  Available GPUs: none
  Held on the host: 1 (alice, manual)
  Allocated GPUs:
    GPU 0: $NS/p3 (Pod: p3)

ResourceClaims in namespace $NS:
  p3:
    Status: Allocated
    Node: $B
    GPU IDs: 0
    Pod: p3 (Running)
IN_USE alice manual
EOF
check_output 'status -o json: the same, as the API has it' \
	"k8shazgpu -n $NS -o json status --node $B --name p3 | jq -c '.namespace, .summary, .gpu_nodes, .claims'" <<EOF
"$NS"
{"total":2,"available":0,"allocated":1,"held":1,"mig_available":0,"mig_allocated":0}
[{"name":"$B","total":2,"mig":false,"available":[],"available_mig":[],"held":[{"gpu":1,"user":"alice","type":"manual"}],"allocated":[{"gpu":0,"node":"$B","device":"gpu-0","namespace":"$NS","claim":"p3","pod":"p3"}]}]
[{"name":"p3","namespace":"$NS","status":"Allocated","node":"$B","gpus":[0],"pod":"p3","phase":"Running"}]
EOF
check_output 'status --name of no claim, --node of no GPU node: status 1' \
	"st k8shazgpu -n $NS status --name nope; st k8shazgpu status --node nope" <<EOF
exit 1
k8shazgpu: status: no ResourceClaim nope in namespace $NS
exit 1
k8shazgpu: status: no GPU node nope
EOF

# ---------------------------------------------------------------- failures leave nothing

check_output 'a timeout: status 124, the scheduler'"'"'s reason, nothing left' \
	"st kr --image busybox:1 --name big --gpus 9 --timeout 15 >big.out; sed -n 1p big.out;
	 grep -m 1 '^k8shazgpu run: pending: Unschedulable' big.out | sed 's/^\(k8shazgpu run: pending: Unschedulable\): .*/\1/'; tail -n 1 big.out;
	 gone 60 big left big || echo not gone; ours" <<EOF
exit 124
k8shazgpu run: pending: Unschedulable
k8shazgpu run: deleted what this run made: pod/big resourceclaim/big
pod/p1
pod/p2
pod/p3
resourceclaim/p1
resourceclaim/p2
resourceclaim/p3
EOF
if k get node "$(hostname)" >/dev/null 2>&1; then
	check_output 'an image that cannot be pulled (real node): status 1, the reason, nothing left' \
		"st k8shazgpu -n $NS run --toleration k8shazgpu.dev/real-node:NoSchedule --image 127.0.0.1:1/none:1 --name nopull --timeout 120 |
		 sed -n '1p; \$p'; gone 60 nopull left nopull || echo not gone" <<'EOF'
exit 1
k8shazgpu run: deleted what this run made: pod/nopull resourceclaim/nopull
EOF
	RN="k8shazgpu -n $NS run --toleration k8shazgpu.dev/real-node:NoSchedule --image k8s.io/busybox:local --timeout 120"
	check_output '--follow (real node): the log alone on stdout, the command'"'"'s status; the pod on stderr' \
		"$RN --name fol --follow -- sh -c 'echo \"hello \$0\"; sleep 1; echo bye; exit 3' 'a b' >fol.out 2>fol.err; echo \"exit \$?\"; cat fol.out;
		 grep -c '^\(pod\|node\|GPUs\|logs\): ' fol.err" <<'EOF'
exit 3
hello a b
bye
4
EOF
	check_output 'a command that cannot start (real node): status 1, the reason, nothing left' \
		"st $RN --name nx -- /nonexistent a | grep -v '^k8shazgpu run: \(pod\|scheduled\)' | sed 's/(StartError): .*\(exec: [^:]*\).*/(StartError): ... \1/'; gone 60 nx left nx || echo not gone" <<'EOF'
exit 1
k8shazgpu run: container main exited 128 (StartError): ... exec: "/nonexistent"
k8shazgpu run: deleted what this run made: pod/nx resourceclaim/nx
EOF
	k8shazgpu -n "$NS" cleanup --name fol >/dev/null
else
	for s in 1 2 3; do echo "ok $((t_n + s)) # SKIP no real node"; done
	t_n=$((t_n + 3))
fi

# ---------------------------------------------------------------- vllm run

# a checkout: base on origin/main; a change, a new file
mkdir repo
(
	cd repo && git init -q -b main . && mkdir vllm && echo 'x = 1' >vllm/__init__.py && echo hi >README &&
		git add . && git -c user.email=t@t -c user.name=t commit -qm base &&
		git update-ref refs/remotes/origin/main HEAD && git remote add origin git@github.com:alice/vllm.git &&
		echo 'x = 2' >vllm/__init__.py && echo new >vllm/new.py
) || { echo "Bail out! t9750: no test checkout"; exit 1; }
BASE=$(git -C repo rev-parse HEAD)
IMG=public.ecr.aws/q9t5s3a7/vllm-ci-postmerge-repo:$BASE
ITEM=vllm-checkout-$(printf '%.8s' "$BASE")
printf '%s alice-vllm\n' "$ITEM" >items
# ncs PHASE: A's NodeCacheStatus: the image item in PHASE
ncs() {
	jq -n -c --arg n "$A" --arg item "$ITEM" --arg ref "$IMG" --arg phase "$1" '{apiVersion: "canhazgpu.dev/v1alpha1",
		kind: "NodeCacheStatus", metadata: {name: $n, labels: {"kubernetes.io/hostname": $n}},
		status: {nodeName: $n, items: [{name: $item, type: "image", phase: $phase, ref: $ref, present: ($phase == "ready"),
			reason: "", message: ""}], lastUpdate: "2026-11-24T12:00:05Z"}}' | claim-make -a -m t9750 >/dev/null
}
kv() { (cd repo && k8shazgpu -n "$NS" vllm run --toleration "$TOL" "$@"); }
ncs pulling
check_output 'vllm run: the image not cached in time: status 124, the plan filled, nothing made' \
	"st kv --name v0 --prefer-node $A --timeout 4 | grep -v '^NODE\|^$A\|^pack: ' | sed 's/after [0-9]*s:/after Ns:/'; ours | grep v0;
	 k get cacheplans.canhazgpu.dev default -o json | jq -c --arg i $ITEM '.spec.items[] | select(.name == \$i or .name == \"alice-vllm\")'" <<EOF
exit 124
cache item $ITEM added (image $IMG)
cache item alice-vllm added (gitrepo git@github.com:alice/vllm.git)
k8shazgpu vllm run: waiting for the nodes' cache to hold $ITEM
k8shazgpu cache wait: not ready after Ns:
k8shazgpu vllm run: timed out after Ns: the image is not in the nodes' cache
{"image":{"ref":"$IMG"},"name":"$ITEM","scope":"allNodes","type":"image"}
{"gitRepo":{"branch":"main","pathName":"alice-vllm","syncStrategy":"hardReset","url":"git@github.com:alice/vllm.git"},"name":"alice-vllm","scope":"allNodes","type":"gitRepo"}
EOF
check_output 'cleanup --name p1: its pod and claim' "k8shazgpu -n $NS cleanup --name p1; gone 60 p1 left p1 || echo not gone" <<'EOF'
pod/p1 deleted
resourceclaim/p1 deleted
EOF
ncs ready
check_output 'vllm run: the cache ready on A: runs there; its output' \
	"kv --name v1 --prefer-node $A --gpus 2 --timeout 60 2>err; grep -c 'added' err" <<EOF
pod:   v1 (namespace $NS)
node:  $A
GPUs:  gpu-0 (index 0), gpu-1 (index 1)
reach: kubectl port-forward -n $NS pod/v1 8000:8000
logs:  kubectl logs -n $NS -f v1
0
EOF
check_output 'vllm run: the ConfigMaps diff-pack made, owned by the claim; the claim names the pack' \
	"(cd repo && diff-pack) >rec && kns get configmap v1-pack-0 -o json |
	 jq -c --arg uid \$(uid resourceclaim v1) '[(.metadata.ownerReferences == [{apiVersion: \"resource.k8s.io/v1\", kind: \"ResourceClaim\", name: \"v1\", uid: \$uid}]), .metadata.labels, (.data | keys), (.binaryData | keys)]' &&
	 kns get resourceclaim v1 -o json | jq -c --slurpfile r rec '.metadata.annotations | [.[\"canhazgpu.dev/pack-sha256\"] == \$r[0].pack_sha256, .[\"canhazgpu.dev/base\"] == \$r[0].base, .[\"canhazgpu.dev/head\"] == \$r[0].head, .[\"canhazgpu.dev/image-name\"], .[\"canhazgpu.dev/repo-name\"], .[\"canhazgpu.dev/image\"]]' &&
	 kns get pod v1 -o json | jq -c '.spec.initContainers, .spec.containers[0].image, .spec.volumes[1], .spec.volumes[2]'" <<EOF
[true,{"app.kubernetes.io/managed-by":"k8shazgpu","canhazgpu.dev/run":"v1","canhazgpu.dev/workload":"vllm"},["index.json"],["pack.000"]]
[true,true,true,"$ITEM","alice-vllm","$IMG"]
null
"$IMG"
{"configMap":{"defaultMode":365,"name":"$APPLIER_CM"},"name":"applier"}
{"name":"pack","projected":{"defaultMode":420,"sources":[{"configMap":{"name":"v1-pack-0"}}]}}
EOF
check_output 'vllm run: the applier ConfigMap, made once for the namespace: the applier exactly, immutable, no owner, no run label' \
	"kns get configmap $APPLIER_CM -o json | jq -c '[.immutable, .metadata.labels, .metadata.ownerReferences, (.binaryData | keys)]' &&
	 kns get configmap $APPLIER_CM -o json | jq -r '.binaryData[\"diff-pack\"]' | base64 -d | cmp - $K8SHAZGPU_APPLIER && echo same" <<'EOF'
[true,{"app.kubernetes.io/managed-by":"k8shazgpu","canhazgpu.dev/component":"applier"},null,["diff-pack"]]
same
EOF

# ---------------------------------------------------------------- cleanup

# foreign things: a claim named like a run but not ours, a ConfigMap
# labelled for run v1 but owned by nothing, a pod labelled v1 by another
# manager
jq -n -c --arg ns "$NS" '
	{apiVersion: "resource.k8s.io/v1", kind: "ResourceClaim", metadata: {name: "theirs", namespace: $ns, labels: {"canhazgpu.dev/run": "theirs"}},
	 spec: {devices: {requests: [{name: "gpus", exactly: {deviceClassName: "gpu.canhazgpu.dev", count: 1}}]}}},
	{apiVersion: "v1", kind: "ConfigMap", metadata: {name: "v1-stray", namespace: $ns,
	 labels: {"canhazgpu.dev/run": "v1", "app.kubernetes.io/managed-by": "k8shazgpu"}}, data: {a: "b"}},
	{apiVersion: "v1", kind: "ConfigMap", metadata: {name: "theirs-pack-0", namespace: $ns,
	 labels: {"canhazgpu.dev/run": "theirs", "app.kubernetes.io/managed-by": "k8shazgpu"}}, data: {a: "b"}},
	{apiVersion: "v1", kind: "Pod", metadata: {name: "other", namespace: $ns, labels: {"canhazgpu.dev/run": "v1"}},
	 spec: {tolerations: [{key: "kwok.x-k8s.io/node", operator: "Exists"}], containers: [{name: "c", image: "busybox:1"}]}}' |
	claim-make -c >/dev/null
check_output 'cleanup --dry-run: what would go; nothing goes' "k8shazgpu -n $NS cleanup --name p3 --dry-run; ours | grep -c p3" <<'EOF'
pod/p3 would be deleted
resourceclaim/p3 would be deleted
2
EOF
check_output 'cleanup --name: the run'"'"'s pod, ConfigMaps and claim; nothing else' \
	"k8shazgpu -n $NS cleanup --name v1 2>&1; gone 60 v1 left v1-pack || echo not gone; ours" <<'EOF'
k8shazgpu cleanup: warning: configmap v1-stray: labelled for run v1 but not owned by its claim; left alone
pod/v1 deleted
configmap/v1-pack-0 deleted
resourceclaim/v1 deleted
configmap/APPLIER
configmap/theirs-pack-0
configmap/v1-stray
pod/other
pod/p2
pod/p3
resourceclaim/p2
resourceclaim/p3
resourceclaim/theirs
EOF
check_output 'cleanup of a claim not ours: left, named; status 1' "st k8shazgpu -n $NS cleanup --name theirs" <<EOF
exit 1
k8shazgpu cleanup: warning: resourceclaim theirs is not one of ours (it lacks canhazgpu.dev/run=theirs or app.kubernetes.io/managed-by=k8shazgpu); left alone
k8shazgpu cleanup: warning: configmap theirs-pack-0: labelled for run theirs but not owned by its claim; left alone
k8shazgpu cleanup: nothing of run theirs in namespace $NS
EOF
check_output 'cleanup --all: every run; the foreign things stay' \
	"k8shazgpu -n $NS cleanup --all 2>/dev/null | sort; gone 60 runs left 'p[23]' || echo not gone; ours" <<'EOF'
pod/p2 deleted
pod/p3 deleted
resourceclaim/p2 deleted
resourceclaim/p3 deleted
configmap/APPLIER
configmap/theirs-pack-0
configmap/v1-stray
pod/other
resourceclaim/theirs
EOF
check_output 'cleanup --all again: nothing to do; the foreign things named' "st k8shazgpu -n $NS cleanup --all" <<EOF
exit 0
k8shazgpu cleanup: warning: resourceclaim theirs is not one of ours (it lacks canhazgpu.dev/run=theirs or app.kubernetes.io/managed-by=k8shazgpu); left alone
k8shazgpu cleanup: warning: configmap theirs-pack-0: labelled for run theirs but not owned by its claim; left alone
k8shazgpu cleanup: warning: configmap v1-stray: labelled for run v1 but not owned by its claim; left alone
no runs in namespace $NS
EOF
done_testing
