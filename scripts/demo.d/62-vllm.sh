if [ -S "$D/redis/redis.sock" ] && [ -f "$D/plugin.pid" ] && [ -f "$D/node-state" ] && command -v docker-registry >/dev/null 2>&1 &&
	command -v perl >/dev/null 2>&1 && command -v python3 >/dev/null 2>&1 && [ -x "$BUILD/static/diff-pack" ]; then
	say "vLLM from a developer's checkout: k8shazgpu vllm run runs the exact working tree on a GPU of the real node"
	. "$D/state"
	# the pods' applier: the static diff-pack, which vllm run puts in a
	# ConfigMap of the namespace (no init container, no image of its own)
	K8SHAZGPU_APPLIER=$BUILD/static/diff-pack
	export K8SHAZGPU_APPLIER
	# a stand-in vLLM: upstream over HTTP, the CI image of its main
	# commit, a developer's clone with local changes (t/vllmrepo)
	. "$TOP/t/vllmrepo"
	vport=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
	vr_all "$work/vr" "$REGISTRY_PORT" "$vport" >/dev/null 2>"$work/vr.log" || { cat "$work/vr.log"; exit 1; }
	. "$work/vr/vllmrepo.env"
	echo " A stand-in vLLM repository, served over HTTP on 127.0.0.1 ($VR_URL). vLLM's CI publishes an"
	echo " image per main commit; here the one of commit $(echo "$VR_BASE" | cut -c1-10) is made with no container engine"
	echo " and pushed as $VR_REPO:$(echo "$VR_BASE" | cut -c1-10)... (its tree in /vllm-workspace, the installed"
	echo " package in dist-packages, and a fake 'vllm' that prints the sha256 of every file it sees)."
	echo " A developer's clone ($VR_DEV): origin/main has moved on since; one commit not pushed:"
	git -C "$VR_DEV" log --oneline origin/main..HEAD | sed 's/^/   /'
	echo " and git status --short (staged, unstaged, untracked; ignored files not shown):"
	git -C "$VR_DEV" status --short | sed 's/^/   /'
	skip=
	[ -n "${cached:-}" ] || skip=--skip-cache-check
	echo " From its vllm/ subdirectory: k8shazgpu vllm run --name demo --gpus 1 --follow -- vllm bench 'a b' \"c'd\""
	echo " (with --prefer-node $HOST, --image-repo $VR_REPO --check; the applier comes in ConfigMap k8shazgpu-applier-...):"
	t0=$(date +%s.%N)
	(cd "$VR_DEV/vllm" && k8shazgpu -n default vllm run --name demo --gpus 1 --prefer-node "$HOST" \
		--toleration k8shazgpu.dev/real-node --image-repo "$VR_REPO" --check \
		$skip --follow -- vllm bench 'a b' "c'd") >"$work/run.out" 2>"$work/run.err" &&
		rc=0 || rc=$?
	t1=$(date +%s.%N)
	sed 's/^/   | /' "$work/run.err"
	echo " The pod's output (exit $rc, $(echo "$t0 $t1" | awk '{ printf "%.1f", $2 - $1 }') s from invocation to the end), first the applier's record:"
	grep '^{"kind":"unpack"' "$work/run.out" | jq -c '{put, link, del, already}' | sed 's/^/   /'
	grep -v '^{"kind":"unpack"' "$work/run.out" | awk 'NR <= 6 || /^argv:/ { print "   " $0 } NR == 7 { print "   ..." }'
	grep -v -e '^{"kind":"unpack"' -e '^argv:' "$work/run.out" >"$work/run.files" || true
	vr_expect "$VR_DEV" >"$work/want.files"
	if cmp -s "$work/run.files" "$work/want.files"; then
		echo " Every one of the $(wc -l <"$work/want.files") files the pod saw has the bytes, mode or link target of the developer's"
		echo " working tree: unpushed, staged, unstaged and untracked changes, deletions, renames, the binary, the CRLF file."
	else
		echo " The pod saw other files than the working tree's:"
		diff "$work/want.files" "$work/run.files" | sed 's/^/   /'
	fi
	echo " The claim records what ran (annotations):"
	kc get resourceclaim -n default demo -o json | jq -r '.metadata.annotations | to_entries[]
		| select(.key | test("image$|base$|head$|pack-sha256$|cmd$")) | "   \(.key)=\(.value)"'
	echo " The checkout moves on (a new commit, a new file); k8shazgpu vllm run --replay demo --name demo-again"
	echo " runs what the first run ran, from the provenance on its claim: the same image by digest, the same"
	echo " pack (its bytes checked by the applier before anything is made), the same command:"
	echo moved >"$VR_DEV/vllm/moved-on.txt"
	git -C "$VR_DEV" add vllm/moved-on.txt
	git -C "$VR_DEV" -c user.name=demo -c user.email=demo@localhost commit -q -m 'the checkout moves on'
	(cd "$VR_DEV/vllm" && k8shazgpu -n default vllm run --replay demo --name demo-again $skip --follow) \
		>"$work/replay.out" 2>"$work/replay.err" && rc=0 || rc=$?
	sed 's/^/   | /' "$work/replay.err"
	grep -v -e '^{"kind":"unpack"' -e '^argv:' "$work/replay.out" >"$work/replay.files" || true
	if [ $rc = 0 ] && cmp -s "$work/replay.files" "$work/want.files"; then
		echo " The replay's pod saw the same $(wc -l <"$work/want.files") files as the first run's, byte for byte; the new commit is not in it."
	else
		echo " The replay (exit $rc) saw other files than the first run:"
		diff "$work/want.files" "$work/replay.files" | sed 's/^/   /'
	fi
	echo " Edits live in seconds: k8shazgpu vllm run --name live -- vllm serve ./m returns once the pod runs; then"
	echo " an edit of vllm/config.py, and k8shazgpu vllm sync --name live sends what differs from the pod's tree"
	echo " (through pods/exec), the pod's applier checks and applies it, and its supervisor restarts the command:"
	(cd "$VR_DEV" && k8shazgpu -n default vllm run --name live --gpus 1 --prefer-node "$HOST" \
		--toleration k8shazgpu.dev/real-node --image-repo "$VR_REPO" $skip -- vllm serve ./m) \
		>"$work/live.out" 2>"$work/live.err" || sed 's/^/   | /' "$work/live.err"
	# runs N: the pod live printed N listings (one per start of its command)
	runs() { [ "$(kc logs -n default live 2>/dev/null | grep -c '^argv:')" = "$1" ]; }
	eventually -i 0.2 60 "the live run's command to start" runs 1
	echo 'EDITED = True' >>"$VR_DEV/vllm/config.py"
	t0=$(date +%s.%N)
	(cd "$VR_DEV" && k8shazgpu -n default vllm sync --name live) 2>&1 | sed 's/^/   | /'
	eventually -i 0.1 30 "the synced command to start again" runs 2
	t1=$(date +%s.%N)
	kc logs -n default live | awk '/^argv:/ { n++ } n == 1 && !/^argv:/' >"$work/live.files"
	vr_expect "$VR_DEV" >"$work/live.want"
	if cmp -s "$work/live.files" "$work/live.want"; then
		echo " $(echo "$t0 $t1" | awk '{ printf "%.1f", $2 - $1 }') s from the sync to the command running again; it lists the working tree as it is now,"
		echo " the edit and the new commit included: $(grep -c . "$work/live.want") files. No new claim, pod, image pull or container."
	else
		echo " The restarted command saw other files than the working tree:"
		diff "$work/live.want" "$work/live.files" | sed 's/^/   /'
	fi
	k8shazgpu -n default cleanup --name live >/dev/null
	echo " These commands named no model. One that does (vllm serve ORG/NAME, --model, --tokenizer) has each"
	echo " model put in the cache plan and waited for until a node holds it, and runs there, reading the node's"
	echo " hub cache read-only with HF_HUB_CACHE and HF_HUB_OFFLINE=1: a cached model is never downloaded again."
	echo " A model the cache cannot fetch fails the run, with the node's reason, before a GPU is claimed."
	echo " k8shazgpu run --gpu-ids 1,3 -- a pod asking for GPUs 1 and 3 by index; it prints what it was given:"
	k8shazgpu -n default run --name ids --image k8s.io/busybox:local --gpu-ids 1,3 --prefer-node "$HOST" \
		--toleration k8shazgpu.dev/real-node -- sh -c 'echo CUDA_VISIBLE_DEVICES=$CUDA_VISIBLE_DEVICES; sleep 600' >/dev/null 2>"$work/ids.err" ||
		sed 's/^/   /' "$work/ids.err"
	eventually -i 0.2 20 "pod ids to print" prints kc logs -n default ids
	kc logs -n default ids | sed 's/^/   /'
	echo "   (the UUIDs of gpu-1 and gpu-3 on $HOST: $(kc get resourceslices -o json | jq -r --arg n "$HOST" '[.items[] | select(.spec.nodeName == $n) | .spec.devices[] | select(.name == "gpu-1" or .name == "gpu-3") | .attributes.uuid.string] | join(",")'))"
	echo " A host user takes GPU 0 through the ledger; k8shazgpu status shows both kinds of holder:"
	gpu-reserve -a "$D/redis/redis.sock" reserve -u carol -G 0 -d 1h >/dev/null 2>&1 || true
	carol_held() { kc get node "$HOST" -o json | jq -e '.metadata.annotations["canhazgpu.dev/host-holds"] // "" | ., contains("carol")'; }
	eventually -i 0.2 20 "node $HOST's annotation to name carol's hold" carol_held
	indent k8shazgpu -n default status --node "$HOST"
	gpu-reserve -a "$D/redis/redis.sock" release -u carol >/dev/null 2>&1 || true
	echo " k8shazgpu cleanup --all: exactly what the runs created, found by labels and owner"
	indent k8shazgpu -n default cleanup --all
	eventually -i 0.2 30 "what the runs created to go" \
		is '' kc get pods,configmaps,resourceclaims -n default -l canhazgpu.dev/run,app.kubernetes.io/managed-by=k8shazgpu -o name
	ledger_free() { ! gpu-reserve -a "$D/redis/redis.sock" status | grep IN_USE; }
	eventually -i 0.2 30 "the ledger to hold no GPU" ledger_free
	echo "   left: $(kc get pods,configmaps,resourceclaims -n default -l canhazgpu.dev/run,app.kubernetes.io/managed-by=k8shazgpu -o name | wc -l) objects of runs (the applier's ConfigMap stays for the next); the ledger:"
	gpu-reserve -a "$D/redis/redis.sock" status | jq -r '"   GPU \(.gpu): \(.state)"'
	[ -n "${cached:-}" ] && k8shazgpu cache remove $(sed -n 's/^cache item \([^ ]*\) added.*/\1/p' "$work/run.err") >/dev/null 2>&1
	stop "$VR_GITSERVE_PID"
	vllmrun=1
fi
