#!/bin/sh
# `k8shazgpu vllm run --save` and `--replay` on the real node of the
# shared cluster, with the stand-in vLLM repository of t/vllmrepo: a run
# with --save keeps its provenance (the image by digest, the pack by
# sha256) in its claim and in a file; the checkout then moves on (a new
# commit, an edit), and `--replay NAME` prints the first run's hashes and
# its pod sees exactly the first run's files and argv; `--replay FILE`
# does the same in another namespace. Refused, with nothing created: a
# replay whose pack ConfigMap was deleted, a provenance file edited by
# hand, a checkout whose pack the pod would refuse, and a saved pack the
# pod would refuse (the applier's own check, diff-pack -u -c).
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
NS=t9766 NS2=t9766-other
HOST=$NODE_NAME

# the CachePlan items the runs added, taken out at the end
plan_remember
cleanup() {
	[ ! -s repo/gitserve.pid ] || kill "$(cat repo/gitserve.pid)" 2>/dev/null
	plan_cleanup
	ns_deleted "$NS" && ns_deleted "$NS2"
}
cleanup || { echo "Bail out! t9766: what an earlier run left is not gone"; exit 1; }
trap cleanup EXIT
trap 'exit 1' INT TERM

# ---- the repository, its base image, the developer's clone
vllm_repo
K8SHAZGPU_APPLIER=$PACKBIN
export K8SHAZGPU_APPLIER
yaml2json "$TOP/manifests/deviceclasses.yaml" | claim-make -a >/dev/null
for n in "$NS" "$NS2"; do
	k create namespace "$n" >/dev/null
	eventually 120 k get serviceaccount default -n "$n" >/dev/null
done

# objects of run $2 in namespace $1, one "kind/name" a line
left_of() {
	k get resourceclaims,pods,configmaps -n "$1" -l "canhazgpu.dev/run=$2" -o name
	k get resourceclaims,pods,configmaps -n "$1" --field-selector "metadata.name=$2" -o name 2>/dev/null
}
# st CMD...: "exit N", then CMD's stderr
st() { "$@" >st.out 2>st.err; echo "exit $?"; cat st.err; }
vllm() { k8shazgpu vllm run --timeout 600 "$@"; }
# sign FILE: its sha256 made again, as a hand that knows the format would
sign() { jq -c --arg d "$(jq -S -c 'del(.sha256)' "$1" | sha256sum | cut -c1-64)" '. + {sha256: $d}' "$1" >"$1.s" && mv "$1.s" "$1"; }

# ---- the first run, saved
(cd "$VR_DEV" && vllm -n "$NS" --prefer-node "$HOST" --toleration k8shazgpu.dev/real-node --image-repo "$VR_REPO" \
	--name first --save "$SCRATCH/first.json" --follow -- vllm bench 'a b') >first.out 2>first.err
echo $? >first.rc
vr_expect "$VR_DEV" >first.files
vr_argv bench 'a b' >>first.files
check_output 'the first run, with --save and --follow, exits 0' 'cat first.rc' <<'EOF'
0
EOF
check 'its pod printed the files of the working tree, and the argv' 'sed 1d first.out | cmp - first.files'
HEAD1=$(git -C "$VR_DEV" rev-parse HEAD)
DIGEST=$(jq -r .image first.json)
PACK1=$(jq -r .pack.sha256 first.json)
check_output 'first.json: the image by digest, the base and head, the command, the GPU request' \
	"jq -c '[(.image | sub(\"@sha256:[0-9a-f]{64}\$\"; \"@D\")), .image_tag, .base, .head, .argv, .gpus, .port, .prefer_node, .tolerations, .pack.configmaps]' first.json" <<EOF
["$VR_REPO@D","$VR_IMAGE","$VR_BASE","$HEAD1",["vllm","bench","a b"],1,8000,"$HOST",["k8shazgpu.dev/real-node"],["first-pack-0"]]
EOF
check_output 'the claim keeps the same provenance, and the pack by its sha256' \
	"k get resourceclaim -n $NS first -o json | jq -r '.metadata.annotations | (.[\"canhazgpu.dev/provenance\"] | fromjson | tojson), .[\"canhazgpu.dev/pack-sha256\"]'" <<EOF
$(jq -c . first.json)
$PACK1
EOF
check 'the digest is the one the node ran' \
	"k get pod -n $NS first -o json | jq -r '.status.containerStatuses[0].imageID' | grep -qF \"\${DIGEST#*@}\""

# ---- the checkout moves on: a commit, then an edit
(cd "$VR_DEV" && printf 'moved = 1\n' >>vllm/moved.py && git add -A && git commit -q -m moved &&
	printf 'edited = 2\n' >>vllm/__init__.py) >moved.err 2>&1
vr_expect "$VR_DEV" >moved.files
check 'the checkout now differs from what the first run ran' \
	'! cmp -s moved.files first.files && [ "$(git -C "$VR_DEV" rev-parse HEAD)" != "$HEAD1" ]'

# ---- --replay NAME: the first run's hashes, files and argv
(cd "$VR_DEV" && vllm -n "$NS" --replay first --name again --follow) >again.out 2>again.err
echo $? >again.rc
check_output '--replay first exits 0, printing the first run'"'"'s hashes' \
	'cat again.rc; grep "^k8shazgpu vllm run: \(replaying\|  pack\)" again.err' <<EOF
0
k8shazgpu vllm run: replaying first (namespace $NS): base $VR_BASE, head $HEAD1
k8shazgpu vllm run:   pack $PACK1, image $DIGEST
EOF
check 'its pod has the first run'"'"'s files and argv, not the checkout'"'"'s' 'sed 1d again.out | cmp - first.files'
check_output 'its pod ran the image by digest, on the first run'"'"'s node' \
	"k get pod -n $NS again -o jsonpath='{.spec.containers[0].image} {.spec.nodeName}'; echo" <<EOF
$DIGEST $HOST
EOF

# ---- --replay FILE, into another namespace
(cd / && vllm -n "$NS2" --replay "$SCRATCH/first.json" --name moved --follow) >moved.out 2>moved.err
echo $? >moved.rc
check_output "--replay first.json in namespace $NS2 exits 0, printing the same hashes" \
	'cat moved.rc; grep "^k8shazgpu vllm run: \(replaying\|  pack\)" moved.err' <<EOF
0
k8shazgpu vllm run: replaying first (namespace $NS): base $VR_BASE, head $HEAD1
k8shazgpu vllm run:   pack $PACK1, image $DIGEST
EOF
check 'its pod has the first run'"'"'s files and argv' 'sed 1d moved.out | cmp - first.files'

# ---- refused, nothing created
k delete configmap -n "$NS" first-pack-0 >/dev/null
check_output '--replay of a run whose pack ConfigMap is gone: 1, named, nothing created' \
	"st vllm -n $NS --replay first --name gone; left_of $NS gone" <<'EOF'
exit 1
k8shazgpu vllm run: run first: configmap first-pack-0 of its pack is gone: not replayed
EOF
check_output '--replay of a run not in the namespace: 1, nothing created' \
	"st vllm -n $NS2 --replay first --name nosuch; left_of $NS2 nosuch" <<EOF
exit 1
k8shazgpu vllm run: run first: no claim first in namespace $NS2
EOF
jq '.gpus = 2' first.json >edited.json && cp first.json.pack edited.json.pack
check_output 'a provenance file edited by hand: 5, named, nothing created' \
	"st vllm -n $NS2 --replay $SCRATCH/edited.json --name edited; left_of $NS2 edited" <<EOF
exit 5
k8shazgpu vllm run: $SCRATCH/edited.json: the provenance record does not match its sha256 $(jq -r .sha256 first.json) (it hashes to $(jq -S -c 'del(.sha256)' edited.json | sha256sum | cut -c1-64)): edited?
EOF
# a saved pack the pod would refuse (a link out of the package
# directory), its provenance signed again to match
{
	printf 'K8SHAZGPU-PACK 1\n'
	jq -n -c --arg b "$VR_BASE" --arg h "$HEAD1" '{kind: "pack", version: 1, base: $b, head: $h, data_size: 0,
		entries: [{op: "link", path: "vllm/escape", target: "../../../../../../etc/passwd", base_blob: null}]}'
} >evil.pack
ES=$(sha256sum <evil.pack | cut -c1-64) EN=$(wc -c <evil.pack)
jq -c --arg s "$ES" '.pack.sha256 = $s' first.json >evil.json && sign evil.json
jq -c --arg s "$ES" --argjson n "$EN" --arg b "$(base64 -w0 <evil.pack)" \
	'.binaryData = {"pack.000": $b} | .data = {"index.json": ({kind: "pack-index", version: 1, sha256: $s, size: $n,
		chunks: [{key: "pack.000", size: $n, sha256: $s}]} | tojson)}' first.json.pack >evil.json.pack
check_output 'a saved pack the pod would refuse: 7, the applier'"'"'s reason, nothing created' \
	"st vllm -n $NS2 --replay $SCRATCH/evil.json --name evil; left_of $NS2 evil" <<EOF
exit 7
    diff-pack: pack: entry 1 (vllm/escape): link target ../../../../../../etc/passwd escapes the tree: a target that leaves the package directory
    diff-pack: pack: refused, as diff-pack -u would refuse it
k8shazgpu vllm run: $SCRATCH/evil.json.pack: the pod would refuse this pack (above): not replayed
EOF
# a checkout whose pack the pod would refuse: refused by the packer, with
# the same judge (dp_path)
ln -s ../../../../../../etc/passwd "$VR_DEV/vllm/escape"
check_output 'a checkout with a link out of the package directory: 7, nothing created' \
	"(cd $VR_DEV && st vllm -n $NS --prefer-node $HOST --image-repo $VR_REPO --name hostile); left_of $NS hostile" <<EOF
exit 7
diff-pack: vllm/escape: link target ../../../../../../etc/passwd escapes the tree: a target that leaves the package directory
diff-pack: $VR_DEV: nothing packed: diff-pack -u would refuse the paths above
k8shazgpu vllm run: no pack made: the pod would refuse it, for the paths named above (links that leave the tree, a directory replaced by a link)
EOF
done_testing
