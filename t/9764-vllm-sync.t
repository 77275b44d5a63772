#!/bin/sh
# `k8shazgpu vllm sync` on the real node of the shared cluster, with the
# stand-in vLLM repository of t/vllmrepo: a run's pod (the fake vllm
# serving: it lists the hashes of its files, then stays up) gets an edit
# of the developer's tree through pods/exec, applied by its own applier,
# and its command restarts and lists exactly the new tree; a second sync
# with nothing changed does nothing; a sync the pod refuses (a file
# changed in the pod behind the sync's back: its base blob differs)
# leaves every file of the pod as it was and the command not restarted;
# a symbolic link out of the package directory is refused before
# anything is sent; a pod that is gone, or whose command a TERM ended,
# is refused with status 3.
. "$(dirname "$0")/lib.sh"
need_cluster
D=$K8SHAZGPU_SIM_DIR
[ -f "$D/kubelet.pid" ] && [ -f "$D/node-state" ] ||
	skip_all 'the shared cluster has no real node (k8shazgpu-sim up --no-node, or not root)'
. "$D/state"
. "$D/node-state"
[ -n "${REGISTRY_PORT:-}" ] || skip_all "the shared cluster has no registry"
command -v diff-pack >/dev/null 2>&1 && command -v pod-exec >/dev/null 2>&1 || skip_all "diff-pack or pod-exec is not built"
. "$TOP/t/lib-vllm.sh"
static_applier
K8SHAZGPU_APPLIER=$PACKBIN
export K8SHAZGPU_APPLIER
NS=t9764
HOST=$NODE_NAME
cleanup() {
	[ ! -s repo/gitserve.pid ] || kill "$(cat repo/gitserve.pid)" 2>/dev/null
	ns_deleted "$NS"
}
cleanup || { echo "Bail out! t9764: what an earlier run left is not gone"; exit 1; }
trap cleanup EXIT
trap 'exit 1' INT TERM

vllm_repo
yaml2json "$TOP/manifests/deviceclasses.yaml" | claim-make -a >/dev/null
k create namespace "$NS" >/dev/null
eventually 60 k get serviceaccount default -n "$NS" >/dev/null

vllm_run() { k8shazgpu -n "$NS" vllm run --prefer-node "$HOST" --toleration k8shazgpu.dev/real-node \
	--image-repo "$VR_REPO" --skip-cache-check "$@"; }
vllm_sync() { k8shazgpu -n "$NS" vllm sync "$@"; }
# how many times the fake vllm started (its argv lines in the log), and
# its last listing: the lines after the last but one argv line
argvs() { k logs -n "$NS" "$1" | grep -c '^argv:'; }
last_listing() { k logs -n "$NS" "$1" | awk '/^argv:/ { n++ } { l[NR] = $0; a[NR] = n }
	END { for (i = 1; i <= NR; i++) if (a[i] == n - 1 || (a[i] == n && l[i] ~ /^argv:/)) if (a[i] != n - 1 || l[i] !~ /^argv:/) print l[i] }'; }
# what the pod's files are now: the fake vllm run once more in the pod
pod_files() { pod-exec -n "$NS" -c vllm "$1" vllm; }

(cd "$VR_DEV" && vllm_run --name live -- vllm serve m) >live.out 2>live.err
echo $? >live.rc
check_output 'vllm run of a serving command exits 0 once the pod runs' 'cat live.rc' <<'EOF'
0
EOF
eventually 60 [ "$(argvs live)" = 1 ]

# ---- an edit goes live
echo 'EDITED = True' >>"$VR_DEV/vllm/config.py"
(cd "$VR_DEV" && vllm_sync --name live) >sync1.out 2>sync1.err
echo $? >sync1.rc
check_output 'vllm sync of one edit: exit 0, one file put, the command restarted' 'cat sync1.rc sync1.out sync1.err' <<'EOF'
0
k8shazgpu vllm sync: pod live: 1 put, 0 links, 0 deleted; command restarted
EOF
check_output 'the restarted command lists exactly the working tree, edit included' \
	'eventually 30 [ "$(argvs live)" = 2 ] && last_listing live' <<EOF
$(vr_expect "$VR_DEV")
$(vr_argv serve m)
EOF

# ---- nothing changed: nothing done
(cd "$VR_DEV" && vllm_sync --name live) >sync2.out 2>sync2.err
echo $? >sync2.rc
sleep 2
check_output 'a second sync with no change does nothing, says so, exits 0; the command was not restarted' \
	'cat sync2.rc sync2.out sync2.err; argvs live' <<'EOF'
0
k8shazgpu vllm sync: nothing to sync: pod live runs the working tree as it is
2
EOF

# ---- refused in the pod: a file changed there behind the sync's back
pod-exec -n "$NS" -c vllm live sh -c 'echo "# changed in the pod" >>/usr/local/lib/python3.12/dist-packages/vllm/config.py'
pod_files live >before
echo 'EDITED_AGAIN = 1' >>"$VR_DEV/vllm/config.py"
echo 'NEW = 1' >"$VR_DEV/vllm/synced_new.py"
(cd "$VR_DEV" && vllm_sync --name live) >sync3.out 2>sync3.err
echo $? >sync3.rc
check_output 'a sync the pod refuses exits 6 with the base blob named, and nothing written' \
	'cat sync3.rc; sed "s/blob [0-9a-f]\{40\}/blob B/g; s|/k8shazgpu/bin/sync.pack|PACK|" sync3.err' <<'EOF'
6
diff-pack: /usr/local/lib/python3.12/dist-packages/vllm/config.py: base blob mismatch: expected blob B, found blob B
diff-pack: PACK: nothing written
k8shazgpu vllm sync: pod live refused the sync (above): its tree is as it was, its command not restarted
EOF
check_output 'after the refusal every file of the pod is as it was, and the command was not restarted' \
	'pod_files live | cmp - before && echo same; argvs live' <<'EOF'
same
2
EOF

# ---- refused before sending: a link out of the package directory
ln -s ../../../../../etc "$VR_DEV/vllm/escape"
(cd "$VR_DEV" && vllm_sync --name live) >sync4.out 2>sync4.err
echo $? >sync4.rc
check_output 'a symbolic link out of the package directory: exit 7, nothing sent, the pod as it was' \
	'cat sync4.rc; tail -n 1 sync4.err; pod_files live | cmp - before && echo same' <<'EOF'
7
k8shazgpu vllm sync: nothing synced: the pod would refuse the paths named above
same
EOF
rm "$VR_DEV/vllm/escape"

# ---- no pod, or a pod not running
(cd "$VR_DEV" && vllm_sync --name nosuch) >sync5.out 2>sync5.err
echo $? >sync5.rc
check_output 'a sync to a run with no pod: exit 3' 'cat sync5.rc sync5.err' <<EOF
3
k8shazgpu vllm sync: no pod nosuch in namespace $NS: nothing synced
EOF
# the supervisor told to stop (as the kubelet does): the command gets
# the TERM, the container ends, and the pod no longer runs
pod-exec -n "$NS" -c vllm live sh -c 'kill -TERM "$(cat /k8shazgpu/bin/supervisor.pid)"'
ended() { [ "$(k get pod -n "$NS" live -o jsonpath='{.status.containerStatuses[0].state.terminated.reason}')" != '' ]; }
eventually 60 ended
(cd "$VR_DEV" && vllm_sync --name live) >sync6.out 2>sync6.err
echo $? >sync6.rc
check_output 'a sync to a pod whose command ended (TERM to the supervisor): exit 3, nothing synced' 'cat sync6.rc sync6.err' <<'EOF'
3
k8shazgpu vllm sync: pod live is not running (its container vllm terminated): nothing synced
EOF
done_testing
