#!/bin/sh
# `k8shazgpu vllm run` on the real node of the shared cluster, with the
# stand-in vLLM repository of t/vllmrepo: its upstream over smart HTTP,
# the base commit's image (made here, pushed to the sim's registry) and a
# developer clone with every kind of local change. From a subdirectory of
# the clone, `vllm run --check --follow` prints exactly the files of the
# developer's working tree and the argv with its quoting; the applier's
# record counts each kind of change. Hand-made hostile packs (a `..` path,
# a write through a symlink the pack makes, or through one of the image,
# a symlink out of the tree) are
# refused by the pod's applier with exit 7, the fake vllm never started.
# `--gpu-ids 1,3` gets a claim of gpu-1 and gpu-3 and a pod that sees only
# their UUIDs; `--prefer-node` puts the pod on the real node; `status`
# while it runs (and the host holds one more GPU) shows the claim as the
# API has it and the node's holds as its Redis ledger has them; `cleanup
# --name` leaves no claim, pod, ConfigMap nor hold. The CachePlan items
# the runs added are taken out at the end (the plan deleted if it was not
# there before and is left empty).
. "$(dirname "$0")/lib.sh"
need_cluster
D=$K8SHAZGPU_SIM_DIR
[ -S "$D/redis/redis.sock" ] && [ -f "$D/kubelet.pid" ] && [ -f "$D/node-state" ] ||
	skip_all 'the shared cluster has no real node (k8shazgpu-sim up --no-node, or not root)'
. "$D/state"
. "$D/node-state"
[ -n "${REGISTRY_PORT:-}" ] || skip_all "the shared cluster has no registry"
command -v diff-pack >/dev/null 2>&1 || skip_all "diff-pack is not built"
. "$TOP/t/lib-vllm.sh"
static_applier
[ -x "$TOP/scripts/k8shazgpu-vllm" ] || skip_all "scripts/k8shazgpu-vllm is missing"
NS=t9760
HOST=$NODE_NAME
ctr_() { "$nodebin/ctr" --address "$D/containerd/containerd.sock" --namespace k8s.io "$@"; }
ledger() { gpu-reserve -a "$D/redis/redis.sock" status | jq -r '[.gpu, .state, .user // "-"] | map(tostring) | join(" ")'; }
held_by() { ledger | awk -v u="k8s:$NS/$1" '$3 == u { print $1 }' | paste -sd' ' -; }

# the CachePlan items the runs added (vllm run without --skip-cache-check
# adds the image and the repository when missing), by the names they said
plan_remember
cleanup() {
	[ ! -s repo/gitserve.pid ] || kill "$(cat repo/gitserve.pid)" 2>/dev/null
	gpu-reserve -a "$D/redis/redis.sock" release -u t9760 >/dev/null 2>&1
	plan_cleanup
	ns_deleted "$NS"
}
cleanup || { echo "Bail out! t9760: what an earlier run left is not gone"; exit 1; }
trap cleanup EXIT
trap 'exit 1' INT TERM

# ---- the repository, its base image, the developer's clone
vllm_repo
# the pods' applier: the static one found above, which vllm run puts in
# ConfigMap k8shazgpu-applier-VERSION-DIGEST of the namespace
K8SHAZGPU_APPLIER=$PACKBIN
export K8SHAZGPU_APPLIER
APPLIER_CM=k8shazgpu-applier-$(claim-make -V | awk '{ print $2 }')-$(sha256sum <"$PACKBIN" | cut -c1-12)
# the base image's tag is the base commit's: a copy the node cached from
# an earlier build of the fixture must not stand in for this one
ctr_ images rm "$VR_IMAGE" >/dev/null 2>&1

yaml2json "$TOP/manifests/deviceclasses.yaml" | claim-make -a >/dev/null
k create namespace "$NS" >/dev/null
eventually 60 k get serviceaccount default -n "$NS" >/dev/null

# objects of run $1 still in the namespace, one "kind/name" a line
left_of() {
	k get resourceclaims,pods,configmaps -n "$NS" -l "canhazgpu.dev/run=$1" -o name
	k get resourceclaims,pods -n "$NS" --field-selector "metadata.name=$1" -o name 2>/dev/null
}
vllm_run() { k8shazgpu -n "$NS" vllm run --prefer-node "$HOST" --toleration k8shazgpu.dev/real-node \
	--image-repo "$VR_REPO" --check "$@"; }

# ---- the developer's tree, run with --follow from a subdirectory
(cd "$VR_DEV/vllm/engine" && vllm_run --name tree --follow -- vllm bench 'a b' "c'd") >tree.out 2>tree.err
echo $? >tree.rc
check_output 'vllm run --follow from a subdirectory exits 0' 'cat tree.rc' <<'EOF'
0
EOF
# with --follow, stdout is the pod's log alone (what the CLI says of the
# pod goes to stderr): the applier's record first
check_output 'the pod prints exactly the hashes of the working tree, and the argv quoted' \
	'sed 1d tree.out' <<EOF
$(vr_expect "$VR_DEV")
$(vr_argv bench 'a b' "c'd")
EOF
check_output "stdout's first line: the applier's record: 11 files put, 2 links, 3 deletions" \
	'sed -n 1p tree.out | jq -c "{kind, tree, put, link, del, skipped, already}"' <<'EOF'
{"kind":"unpack","tree":"/vllm-workspace","put":11,"link":2,"del":3,"skipped":0,"already":false}
EOF
check_output "stderr: the pod, its node and GPUs, as without --follow" \
	'grep "^\(pod\|node\|GPUs\|reach\|logs\): " tree.err | sed "s/gpu-[0-9]* (index [0-9]*)/GPU/"' <<EOF
pod:   tree (namespace $NS)
node:  $HOST
GPUs:  GPU
reach: kubectl port-forward -n $NS pod/tree 8000:8000
logs:  kubectl logs -n $NS -f tree
EOF
check_output 'the image is the base commit'"'"'s, not origin/main'"'"'s' \
	'k get resourceclaim -n $NS tree -o json | jq -r ".metadata.annotations | .[\"canhazgpu.dev/image\"], .[\"canhazgpu.dev/base\"]"' <<EOF
$VR_IMAGE
$VR_BASE
EOF
check_output '--prefer-node: the pod ran on the real node' "k get pod -n $NS tree -o jsonpath='{.spec.nodeName}'; echo" <<EOF
$HOST
EOF
check 'the ignored files did not arrive (nor does the expected list name them)' \
	'! grep -E "(debug|trace)\.log|local/secret" tree.out'
check_output 'the pod has no init container: the applier came in its ConfigMap, which holds the static diff-pack' \
	"k get pod -n $NS tree -o json | jq -c '[.spec.initContainers, (.spec.volumes[] | select(.name == \"applier\") | .configMap)]'
	 k get configmap -n $NS $APPLIER_CM -o json | jq -r '.binaryData[\"diff-pack\"]' | base64 -d | cmp - $PACKBIN && echo same" <<EOF
[null,{"defaultMode":365,"name":"$APPLIER_CM"}]
same
EOF
k get configmap -n "$NS" "$APPLIER_CM" -o jsonpath='{.metadata.uid}' >applier.uid

# ---- --gpu-ids 1,3: that claim, those UUIDs, a run that stays up
gpu-probe -t "$D/realnode.yaml" -n "$HOST" | claim-make -N "$HOST" |
	jq -r 'select(.kind == "ResourceSlice") | .spec.devices[] | "\(.name) \(.attributes.uuid.string)"' >uuids
uuid() { awk -v d="$1" '$1 == d { print $2 }' uuids; }
U13=$(uuid gpu-1),$(uuid gpu-3)
SHOW='env | grep -E "^(CUDA|NVIDIA)_VISIBLE_DEVICES=" | sort; exec vllm serve m'
(cd "$VR_DEV" && vllm_run --name ids --gpu-ids 1,3 -- sh -c "$SHOW") >ids.out 2>ids.err
echo $? >ids.rc
check_output 'vllm run --gpu-ids 1,3 (no --follow) exits 0 once the pod runs' 'cat ids.rc' <<'EOF'
0
EOF
devs() { k get resourceclaim -n "$NS" "$1" -o json | jq -r '[.status.allocation.devices.results[].device] | sort | join(" ")'; }
check_output 'the claim is allocated gpu-1 and gpu-3' 'devs ids' <<'EOF'
gpu-1 gpu-3
EOF
printed() { k logs -n "$NS" "$1" | grep -q '^argv:'; }
check_output 'the pod sees exactly those two UUIDs' \
	"eventually 60 printed ids; k logs -n $NS ids | grep VISIBLE_DEVICES" <<EOF
CUDA_VISIBLE_DEVICES=$U13
NVIDIA_VISIBLE_DEVICES=$U13
EOF
check_output 'the node ledger holds GPUs 1 and 3 for it' 'held_by ids' <<'EOF'
1 3
EOF
check 'the second run used the applier ConfigMap the first made' \
	"[ \"\$(k get configmap -n $NS $APPLIER_CM -o jsonpath='{.metadata.uid}')\" = \"\$(cat applier.uid)\" ]"

# ---- status while ids holds its GPUs and the host holds one more: the
# claims as the API has them, the node's GPUs as its ledger has them
FREE=$(ledger | awk '$2 == "AVAILABLE" && $1 != 1 && $1 != 3 && $1 != 4 { print $1; exit }')
gpu-reserve -a "$D/redis/redis.sock" reserve -b -G "$FREE" -u t9760 -d 10m >/dev/null
status_json() { k8shazgpu -n "$NS" -o json status --node "$HOST"; }
# the node's GPUs by the ledger: those held not by Kubernetes, and this
# namespace's, as status -o json shows them
by_ledger() {
	ledger | awk -v ns="k8s:$NS/" '$2 != "AVAILABLE" && $3 !~ /^k8s/ { h = h sep $1 " " $3; sep = "," }
		index($3, ns) == 1 { a = a sep2 $1 " " substr($3, length(ns) + 1); sep2 = "," }
		END { print "held " h; print "allocated " a }'
}
by_status() {
	status_json | jq -r --arg ns "$NS" '.gpu_nodes[0] |
		"held " + ([.held[] | "\(.gpu) \(.user)"] | join(",")),
		"allocated " + ([.allocated[] | select(.namespace == $ns) | "\(.gpu) \(.claim)"] | join(","))'
}
status_is_ledger() { [ "$(by_status)" = "$(by_ledger)" ]; }
check 'status -o json: the node'"'"'s host holds and allocations are the ledger'"'"'s' \
	'eventually 60 status_is_ledger || { by_ledger; by_status; false; }'
check_output 'and the ledger holds: the host hold, and gpu 1 and 3 for ids' 'by_ledger' <<EOF
held $FREE t9760
allocated 1 ids,3 ids
EOF
# the claim as the API has it: allocation, node, devices, the pod using
# it and that pod's phase
by_api() {
	k get resourceclaim -n "$NS" ids -o json | jq -c --arg phase "$(k get pod -n "$NS" ids -o jsonpath='{.status.phase}')" '
		{status: (if .status.allocation then "Allocated" else "Pending" end), node: .status.allocation.devices.results[0].pool,
		 gpus: [.status.allocation.devices.results[].device | ltrimstr("gpu-") | tonumber] | sort,
		 pod: [.status.reservedFor[] | select(.resource == "pods") | .name][0], phase: $phase}'
}
check_output 'status -o json: the claim as the API has it' \
	'status_json | jq -c ".claims[] | select(.name == \"ids\") | {status, node, gpus, pod, phase}"; by_api' <<EOF
{"status":"Allocated","node":"$HOST","gpus":[1,3],"pod":"ids","phase":"Running"}
{"status":"Allocated","node":"$HOST","gpus":[1,3],"pod":"ids","phase":"Running"}
EOF
check 'status (text) runs' "k8shazgpu -n $NS status >status.out 2>status.err"
check_output 'its block for the real node' "sed -n '/^Node $HOST:/,/^\$/p' status.out | grep -v MIG" <<EOF
Node $HOST:
  Total GPUs: 5
  Available GPUs: $(printf '0\n2\n' | grep -vx "$FREE" | paste -sd, - | sed 's/,/, /g')
  Held on the host: $FREE (t9760, manual)
  Allocated GPUs:
    GPU 1: $NS/ids (Pod: ids)
    GPU 3: $NS/ids (Pod: ids)

EOF
check_output 'its block for the claim' "sed -n '/^  ids:/,/^    Pod:/p' status.out" <<EOF
  ids:
    Status: Allocated
    Node: $HOST
    GPU IDs: 1, 3
    Pod: ids (Running)
EOF
gpu-reserve -a "$D/redis/redis.sock" release -u t9760 >/dev/null

# ---- cleanup --name: nothing of the run is left
check 'cleanup --name ids' "k8shazgpu -n $NS cleanup --name ids >cleanup.out 2>cleanup.err"
check 'its claim, pod and ConfigMaps are gone' 'gone 120 "run ids" left_of ids'
check 'and the ledger holds nothing for it' 'gone 120 "the holds of ids" held_by ids'
check 'cleanup --name tree too' "k8shazgpu -n $NS cleanup --name tree >/dev/null 2>&1 && gone 120 'run tree' left_of tree"

# ---- a pack the pod refuses, without --follow: an image with no source
# tree (busybox) makes the applier exit 3 before the command runs; the
# container never passes its startup probe, so the CLI does not report it
# running: it fails, shows the applier's words, and removes what it made
(cd "$VR_DEV" && k8shazgpu -n "$NS" vllm run --prefer-node "$HOST" --toleration k8shazgpu.dev/real-node \
	--image k8s.io/busybox:local --skip-cache-check --name refused -- vllm serve m) \
	>refused.out 2>refused.err
echo $? >refused.rc
check_output 'vllm run (no --follow) of a pack the pod refuses: status 1, the reason and the log, no report' \
	'cat refused.rc; grep -c "^k8shazgpu vllm run: container vllm exited 3 (Error)$" refused.err
	 grep -c "diff-pack: .*vllm-workspace" refused.err; grep -c "^pod: " refused.out' <<'EOF'
1
1
1
0
EOF
check 'and nothing of the run is left' 'gone 120 "run refused" left_of refused'

# ---- hostile packs, applied by the pod's applier as vllm run's pods do
WRAPPER='set -e
pkg=
if command -v python3 >/dev/null 2>&1; then
  pkg=$(python3 -c '"'"'import os, vllm; print(os.path.dirname(vllm.__file__))'"'"' 2>/dev/null) || pkg=
fi
/k8shazgpu/tool/diff-pack -u -d /k8shazgpu/pack -t "${K8SHAZGPU_TREE:-/vllm-workspace}" ${pkg:+-P "$pkg"}
: >/k8shazgpu/bin/.applied
cd "${K8SHAZGPU_TREE:-/vllm-workspace}"
exec "$@"'
# hostile NAME ENTRIES-JSON DATA: a pack of those entries and data, in a
# ConfigMap NAME-0, and a pod NAME applying it (with the applier of the
# ConfigMap vllm run made) then running the fake vllm.
hostile() {
	printf '%s' "$3" >"$1.data"
	jq -n -c --arg base "$VR_BASE" --argjson size "$(wc -c <"$1.data")" --argjson e "$2" \
		'{kind: "pack", version: 1, base: $base, head: $base, data_size: $size, entries: $e}' >"$1.manifest"
	{ printf 'K8SHAZGPU-PACK 1\n'; cat "$1.manifest" "$1.data"; } >"$1.pack"
	h=$(sha256sum <"$1.pack" | cut -d' ' -f1) n=$(wc -c <"$1.pack")
	jq -n -c --arg name "$1" --arg ns "$NS" --arg h "$h" --argjson n "$n" --arg b64 "$(base64 -w0 <"$1.pack")" '
	{apiVersion: "v1", kind: "ConfigMap", metadata: {name: "\($name)-pack-0", namespace: $ns,
		labels: {"app.kubernetes.io/managed-by": "k8shazgpu", "canhazgpu.dev/run": $name}},
	 immutable: true, binaryData: {"pack.000": $b64},
	 data: {"index.json": ({kind: "pack-index", version: 1, sha256: $h, size: $n,
		chunks: [{key: "pack.000", size: $n, sha256: $h}]} | tojson)}}' | k create -f - >/dev/null &&
	jq -n -c --arg name "$1" --arg ns "$NS" --arg node "$HOST" --arg img "$VR_IMAGE" --arg tool "$APPLIER_CM" \
		--arg w "$WRAPPER" '
	{apiVersion: "v1", kind: "Pod", metadata: {name: $name, namespace: $ns,
		labels: {"app.kubernetes.io/managed-by": "k8shazgpu", "canhazgpu.dev/run": $name}},
	 spec: {nodeSelector: {"kubernetes.io/hostname": $node}, restartPolicy: "Never",
		tolerations: [{key: "k8shazgpu.dev/real-node", operator: "Exists"}],
		terminationGracePeriodSeconds: 1,
		containers: [{name: "vllm", image: $img, command: ["/bin/sh", "-c", $w, "k8shazgpu-vllm"], args: ["vllm", "bench"],
			volumeMounts: [{name: "k8shazgpu-bin", mountPath: "/k8shazgpu/bin"},
				{name: "applier", mountPath: "/k8shazgpu/tool", readOnly: true},
				{name: "pack", mountPath: "/k8shazgpu/pack", readOnly: true}]}],
		volumes: [{name: "k8shazgpu-bin", emptyDir: {}}, {name: "applier", configMap: {name: $tool, defaultMode: 365}},
			{name: "pack", projected: {sources: [{configMap: {name: "\($name)-pack-0"}}]}}]}}' | k create -f - >/dev/null
}
exit_code() { k get pod -n "$NS" "$1" -o jsonpath='{.status.containerStatuses[0].state.terminated.exitCode}'; }
ended() { [ -n "$(exit_code "$1")" ]; }
H6=$(printf 'pwned\n' | sha256sum | cut -d' ' -f1)
put() { printf '{"op":"put","path":"%s","mode":"100644","size":6,"offset":0,"sha256":"%s","base_blob":null}' "$1" "$H6"; }

hostile dotdot "[$(put ../../etc/passwd)]" 'pwned
'
hostile through '[{"op":"link","path":"etc","target":"/etc","base_blob":null},'"$(put etc/passwd)"']' 'pwned
'
hostile preexisting "[$(put tools/sysconf/passwd)]" 'pwned
'
hostile outside '[{"op":"link","path":"vllm/escape","target":"../../../../../../etc/passwd","base_blob":null}]' ''
for p in dotdot through preexisting outside; do
	check_output "hostile pack $p: the applier exits 7" "eventually 120 ended $p; exit_code $p; echo" <<'EOF'
7
EOF
	check "hostile pack $p: the fake vllm never ran" "! k logs -n $NS $p | grep -q '^argv:'"
done
check 'the log of the .. pack names the path' "k logs -n $NS dotdot | grep -F '../../etc/passwd'"
check 'the log of the symlink pack names the path' "k logs -n $NS through | grep -F 'etc'"
check "the log of the write through the image's symlink names it" "k logs -n $NS preexisting | grep -F 'tools/sysconf'"
check 'the log of the escaping link names it' "k logs -n $NS outside | grep -F 'vllm/escape'"
done_testing
