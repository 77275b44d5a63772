#!/bin/sh
# k8shazgpu installed with Helm into the shared cluster: `k8shazgpu-sim
# install --helm` builds and pushes the images as the kustomize install
# does and runs `helm install` of charts/k8shazgpu, the images, the GPU
# node, the runtime class and the ledger's socket given as values (the
# cluster's ports and host networking by a post-renderer of overlays/sim's
# patches). Every component comes Ready on the real node; the node agent
# publishes the node; `helm uninstall` leaves nothing of ours. Bad input:
# values the chart's schema refuses install nothing. What of ours was
# there before (the GPUNode CRDs the sim serves) is made again at the end.
. "$(dirname "$0")/lib.sh"
. "$TOP/t/lib-install.sh"
need_cluster
D=$K8SHAZGPU_SIM_DIR
[ -f "$D/node-state" ] && [ -f "$D/kubelet.pid" ] || skip_all 'the shared cluster has no real node (k8shazgpu-sim up --no-node, or not root)'
command -v docker-registry >/dev/null 2>&1 || skip_all 'docker-registry is not installed (make deps)'
helm=$(helm-build 2>helm-build.err) || skip_all "helm could not be built: $(tail -n 1 helm-build.err)"
. "$D/state"
. "$D/node-state"
NS=canhazgpu-system
HOST=$NODE_NAME
hm() { "$helm" --kubeconfig "$D/kubeconfig" "$@"; }

# what of ours the cluster has, by kubectl's names
ours() {
	k get namespace "$NS" canhazgpu-node-secrets --ignore-not-found -o name
	k get crd -o name | grep -e canhazgpu -e agentaflow
	k get clusterroles,clusterrolebindings -o name | grep -e canhazgpu -e k8shazgpu
	k get mutatingwebhookconfigurations,validatingadmissionpolicies,validatingadmissionpolicybindings,deviceclasses -o name |
		grep -e canhazgpu -e k8shazgpu
	k get secrets -n default -o name | grep sh.helm.release
	hm list -A -q
}
# (what an earlier run that failed left installed goes first)
[ ! -f "$D/installed" ] || k8shazgpu-sim uninstall >/dev/null 2>&1 ||
	{ echo "Bail out! k8shazgpu is installed in the shared cluster and k8shazgpu-sim uninstall failed"; exit 1; }
hm uninstall k8shazgpu -n default --ignore-not-found --wait >/dev/null 2>&1
gone 180 "namespace $NS" k get namespace "$NS" --ignore-not-found -o name || { echo "Bail out! namespace $NS stays"; exit 1; }
# Objects of ours made before by the sim or by other tests (the GPUNode
# CRDs the sim serves, DeviceClasses), which the install takes over and
# the uninstall deletes: made again from manifests/ at the end.
ours | sort >before
# an object's kubectl name: kind.group/name
KEY='def key: "\(.kind | ascii_downcase)\(.apiVersion | if contains("/") then "." + sub("/.*"; "") else "" end)/\(.metadata.name)";'
"$(sim-build bindir)/kubectl" kustomize "$TOP/manifests" | yaml2json -s |
	jq -c --rawfile before before "$KEY"' ($before | split("\n")) as $b | select(key as $k | any($b[]; . == $k))' >restore.json
check_output 'what was there before is of manifests/, to be made again' \
	"jq -r '$KEY key' restore.json | sort | diff - before" <<'EOF'
EOF

cleanup() {
	[ ! -f "$D/installed" ] || k8shazgpu-sim uninstall >/dev/null 2>&1
	hm uninstall k8shazgpu -n default --ignore-not-found --wait >/dev/null 2>&1
	gone 180 "namespace $NS" k get namespace "$NS" --ignore-not-found -o name || return 1
	[ -s restore.json ] || return 0
	for n in $(jq -r 'select(.kind == "CustomResourceDefinition") | .metadata.name' restore.json); do
		gone 120 "CRD $n, being deleted," crd_deleting "$n" || return 1
	done
	claim-make -a <restore.json >/dev/null || return 1
	for n in $(jq -r 'select(.kind == "CustomResourceDefinition") | .metadata.name' restore.json); do
		eventually 60 crd_established "$n" || return 1
	done
}
trap cleanup EXIT
trap 'exit 1' INT TERM

# ---- bad input -------------------------------------------------------------

printf 'image:\n  tag: latest\n' >bad.yaml
check_output 'values the schema refuses: helm install says which, and installs nothing' \
	"out hm install k8shazgpu '$TOP/charts/k8shazgpu' -n default -f bad.yaml; ours | sort | diff before -" <<'EOF'
exit 1
Error: INSTALLATION FAILED: values don't meet the specifications of the schema(s) in the following chart(s):
k8shazgpu:
- at '': additional properties 'image' not allowed

EOF

# ---- install ---------------------------------------------------------------

ready_pods() {
	k get pods -n "$NS" -o json | jq -r '.items[] | select(.metadata.deletionTimestamp == null)
		| select(.metadata.labels["app.kubernetes.io/name"] != "k8shazgpu-webhook-certs")
		| [.metadata.labels["app.kubernetes.io/name"], .spec.nodeName,
		   (any(.status.conditions[]?; .type == "Ready" and .status == "True") | tostring)] | join(" ")' | sort
}
check 'k8shazgpu-sim install --helm: images built and pushed, the chart installed, every component Ready' \
	'k8shazgpu-sim install --helm 2>install.err'
check_output 'one release, deployed' "hm list -A -o json | jq -r '.[] | [.name, .namespace, .status, .chart, .app_version] | join(\" \")'" <<'EOF'
k8shazgpu default deployed k8shazgpu-0.1.0 0.1.0
EOF
check_output 'one pod of each component, on the real node, Ready' 'ready_pods' <<EOF
canhazgpu-controller $HOST true
canhazgpu-draplugin $HOST true
canhazgpu-nodeagent $HOST true
k8shazgpu-webhook $HOST true
EOF
check_output 'each runs its image from the sim registry, by the digest built (images.registry, images.digests)' '
	k get pods -n "$NS" -o json | jq -r ".items[] | select(.metadata.labels[\"app.kubernetes.io/name\"] != \"k8shazgpu-webhook-certs\")
		| .status.containerStatuses[0].imageID" | sort' <<EOF
$(grep -v '^diff-pack ' "$D/install/digests" | while read -r c d; do echo "127.0.0.1:$REGISTRY_PORT/k8shazgpu/$c@$d"; done | sort)
EOF
check_output 'the DaemonSets as the values say: the real node, no runtime class, the ledger socket in the sim' \
	"k get daemonsets -n $NS -o json | jq -r '.items[] | .metadata.name as \$n | .spec.template.spec
		| \"\(\$n) \(.nodeSelector | tojson) \(.runtimeClassName // \"-\") \(.containers[0].env[] | select(.name == \"K8SHAZGPU_REDIS\") | .value)\"'" <<EOF
canhazgpu-draplugin {"k8shazgpu.dev/real-node":"true"} - $D/redis/redis.sock
canhazgpu-nodeagent {"k8shazgpu.dev/real-node":"true"} - $D/redis/redis.sock
EOF
check_output 'the sim gave its own node agent and plugin processes up to them' \
	"k8shazgpu-sim status | awk '\$1 == \"node-agent\" || \$1 == \"plugin\" {print \$1, \$2}'" <<'EOF'
node-agent cluster
plugin cluster
EOF

# ---- the node agent does its work ------------------------------------------

check_republished

# ---- uninstall -------------------------------------------------------------

check 'k8shazgpu-sim uninstall: helm uninstall removes all of it' 'k8shazgpu-sim uninstall 2>uninstall.err'
check_output 'nothing of ours is left: no release, no object' 'ours; echo end' <<'EOF'
end
EOF
check_output 'the sim runs its own node agent and plugin again' \
	"k8shazgpu-sim status | awk '\$1 == \"node-agent\" || \$1 == \"plugin\" {print \$1, \$2}'" <<'EOF'
node-agent running
plugin running
EOF
check 'what of ours was there before is there again' 'cleanup && ours | sort | diff before -'
done_testing
