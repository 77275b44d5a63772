#!/bin/sh
# Completion of live names on the shared cluster, through bash's
# completion function (as t/0028-completion.t drives it): namespaces,
# ResourceClaims and the claims of runs in the namespace typed (-n, or
# --namespace=, before the group or after it), GPU nodes, GPUWorkloads (a
# group on PATH whose usage names WORKLOAD), and the cache plan's items,
# all of this test's own objects (t9747-*), so that others' do not
# change the answers.
. "$(dirname "$0")/lib.sh"
need_cluster

# The shared cluster's API server may be slow under others' load: a
# timeout of more than the default second, so that the answers are whole.
K8SHAZGPU_COMPLETE_TIMEOUT=20
HOME=$SCRATCH
export K8SHAZGPU_COMPLETE_TIMEOUT HOME
unset K8SHAZGPU_NAMESPACE K8SHAZGPU_CONTEXT K8SHAZGPU_OUTPUT
A=t9747-a B=t9747-b NODE=t9747-n1

cleanup() {
	cl_rc=0
	ns_deleted "$A" 120 || cl_rc=1
	ns_deleted "$B" 120 || cl_rc=1
	deleted 60 "node $NODE" node "$NODE" || cl_rc=1
	k8shazgpu cache remove t9747-img t9747-model >/dev/null 2>&1
	return $cl_rc
}
for f in cacheplans gpuworkloads; do
	crd_apply "$TOP/manifests/crds/$f.yaml" || { echo "Bail out! t9747: $f.yaml not applied"; exit 1; }
done
cleanup || { echo "Bail out! t9747: what an earlier run left is not gone"; exit 1; }
trap 'cleanup || exit 1' EXIT
trap 'exit 1' INT TERM

# comp WORD...: COMPREPLY, one a line, for `k8shazgpu WORD...` (t/lib-complete.sh)
. "$TOP/t/lib-complete.sh"

# two namespaces; in A two claims, one of them a run's, and two
# GPUWorkloads; B empty; a node no agent reports for; two cache items
# for nodes labelled t9747=none, which none is
jq -n -c --arg a "$A" --arg b "$B" --arg node "$NODE" '
	{apiVersion: "v1", kind: "Namespace", metadata: {name: $a}},
	{apiVersion: "v1", kind: "Namespace", metadata: {name: $b}},
	{apiVersion: "v1", kind: "Node", metadata: {name: $node}},
	({apiVersion: "resource.k8s.io/v1", kind: "ResourceClaim", metadata: {namespace: $a},
		spec: {devices: {requests: [{name: "gpus", exactly: {deviceClassName: "gpu.canhazgpu.dev", count: 1}}]}}}
	 | (.metadata.name = "t9747-claim"),
	   (.metadata.name = "t9747-run1" | .metadata.labels = {"canhazgpu.dev/run": "t9747-run1",
		"app.kubernetes.io/managed-by": "k8shazgpu"})),
	({apiVersion: "canhazgpu.dev/v1alpha1", kind: "GPUWorkload", metadata: {namespace: $a},
		spec: {modelName: "t9747", gpuCount: 64}} | (.metadata.name = "t9747-wl1"), (.metadata.name = "t9747-wl2"))' |
	claim-make -a -m t9747 >/dev/null || { echo "Bail out! t9747: the objects not made"; exit 1; }
k8shazgpu cache add image 127.0.0.1:5000/t9747:1 --name t9747-img -l t9747=none >/dev/null &&
	k8shazgpu cache add model t9747/m --name t9747-model -l t9747=none >/dev/null ||
	{ echo "Bail out! t9747: the cache items not added"; exit 1; }

# a group of the test's own, whose usage names WORKLOAD
mkdir bin
cat >bin/k8shazgpu-t9747 <<'EOF'
#!/bin/sh
# k8shazgpu-group: 99
[ "${1-}" != --summary ] || { echo '  t9747 VERB ...          a test group'; exit 0; }
cat <<'USAGE'
usage: k8shazgpu-t9747 [-n namespace] verb
  show WORKLOAD
USAGE
EOF
chmod +x bin/k8shazgpu-t9747

check_output 'namespaces' "comp -n t9747-" <<'EOF'
t9747-a
t9747-b
EOF
check_output 'namespaces after a group' "comp cleanup -n t9747-" <<'EOF'
t9747-a
t9747-b
EOF
check_output 'namespaces after --namespace=' "comp cleanup --namespace=t9747-" <<'EOF'
t9747-a
t9747-b
EOF
check_output 'the claims of the namespace of -n' "comp -n $A status --name ''" <<'EOF'
t9747-claim
t9747-run1
EOF
check_output 'none in the other' "comp -n $B status --name ''" </dev/null
check_output 'the claims of runs, -n after the group' "comp cleanup -n $A --name ''" <<'EOF'
t9747-run1
EOF
check_output 'the claims of runs, -n before it' "comp -n $A cleanup --name t" <<'EOF'
t9747-run1
EOF
check_output 'the claims of runs, --namespace=' "comp cleanup --namespace=$A --name ''" <<'EOF'
t9747-run1
EOF
check_output 'GPU nodes' "comp status --node t9747-" <<'EOF'
t9747-n1
EOF
check_output 'GPU nodes as the words of cache list' "comp cache list t9747-" <<'EOF'
t9747-n1
EOF
check_output 'GPUWorkloads' "PATH=\$SCRATCH/bin:\$PATH comp t9747 -n $A show ''" <<'EOF'
t9747-wl1
t9747-wl2
EOF
check_output 'the cache items' "comp cache remove t9747-" <<'EOF'
t9747-img
t9747-model
EOF
check_output 'the cache items of a type' "comp cache update model t9747-" <<'EOF'
t9747-model
EOF
check_output 'the cache items, after the type' "comp cache remove image t9747-" <<'EOF'
t9747-img
EOF
check_output 'the cache items kubectl hazgpu completes' "kubectl_complete-hazgpu cache wait t9747-" <<'EOF'
t9747-img
t9747-model
:4
EOF
done_testing
