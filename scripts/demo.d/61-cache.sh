if [ -f "$D/node-state" ] && command -v docker-registry >/dev/null 2>&1 && command -v python3 >/dev/null 2>&1; then
	say "The node cache: one CachePlan of images, git repositories and models, kept warm on the node by its agent (cache-sync)"
	. "$D/state"
	REG=127.0.0.1:$REGISTRY_PORT
	port() { python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
	gport=$(port)
	hport=$(port)
	# an image of busybox alone, pushed to the sim's registry
	mkdir -p "$work/bb/bin" && cp /bin/busybox "$work/bb/bin/busybox"
	oci-image -o "$work/bb.oci" -e '["/bin/busybox"]' "$work/bb" >"$work/bb.digest"
	oci-push -q "$work/bb.oci" "$REG/demo/tools:1" >/dev/null
	# a git repository over smart HTTP, and a model in the hub's URL layout
	git init -q --bare -b main "$work/srv/vllm.git" && git clone -q "$work/srv/vllm.git" "$work/vllm" 2>/dev/null
	echo "release 1" >"$work/vllm/VERSION"
	git -C "$work/vllm" add VERSION && git -C "$work/vllm" -c user.name=demo -c user.email=demo@localhost commit -q -m one &&
		git -C "$work/vllm" push -q origin HEAD:main
	"$TOP/t/gitserve" http "$gport" "$work/srv" >"$work/git.out" 2>&1 </dev/null 3>&- 4>&- &
	gitserve=$!
	mkdir -p "$work/model" && printf '{"model_type": "opt", "hidden_size": 768}\n' >"$work/model/config.json"
	head -c 8388608 /dev/urandom >"$work/model/model.safetensors"
	"$TOP/t/hubserve" -p "$hport" --lfs-over 1024 demo/opt-tiny="$work/model" >"$work/hub.out" 2>&1 </dev/null 3>&- 4>&- &
	hubserve=$!
	servers_up() { cat "$work/hub.out" "$work/git.out" && grep -q listening "$work/hub.out" && grep -qx ready "$work/git.out"; }
	eventually -i 0.2 20 "the git server and the model hub to listen" servers_up
	echo " Local servers on 127.0.0.1: the sim's registry ($REG, busybox pushed as demo/tools:1), a git server"
	echo " (:$gport, repository vllm.git) and a model hub (:$hport, demo/opt-tiny: a config and an 8 MiB LFS weights file)."
	apply_crd "$TOP/manifests/crds/cacheplans.yaml" "$TOP/manifests/crds/nodecachestatuses.yaml"
	# the agent reads the hub's address from its environment, as a DaemonSet sets it
	k8shazgpu-sim stop node-agent >/dev/null
	HF_ENDPOINT=http://127.0.0.1:$hport k8shazgpu-sim start node-agent >/dev/null
	echo " k8shazgpu cache add ... (the seed's commands): three items in the CachePlan 'default'"
	indent k8shazgpu cache add image "$REG/demo/tools:1" --name tools
	indent k8shazgpu cache add gitrepo "http://127.0.0.1:$gport/vllm.git" --name vllm
	indent k8shazgpu cache add model demo/opt-tiny
	indent k8shazgpu cache plan show
	t0=$(date +%s)
	k8shazgpu cache wait --timeout 120 >/dev/null 2>&1 || echo "   (not all ready after 120 s)"
	echo " The node agent saw the plan change (a watch) and synced it; all ready after $(($(date +%s) - t0)) s. k8shazgpu cache status:"
	indent k8shazgpu cache status
	echo " The pushed image's digest was $(cut -c1-19 "$work/bb.digest")..., the repository's commit $(git -C "$work/vllm" rev-parse --short HEAD)."
	echo " On the node's disk ($D/cache): the checkout is a link swapped whole, the model in the hub's own layout:"
	(cd "$D/cache" && ls -l vllm | awk '{print "   " $(NF-2), $(NF-1), $NF}' &&
		find hub_cache -type l | sort | while read -r l; do echo "   $l -> $(readlink "$l")"; done)
	blob=$(readlink -f "$D/cache/hub_cache/models--demo--opt-tiny/snapshots/"*/model.safetensors)
	echo "   the weights' blob is named by its sha256: $(basename "$blob" | cut -c1-16)..., content sha256 $(sha256sum <"$blob" | cut -c1-16)..."
	echo " A pod runs the cached image with imagePullPolicy: Never, reads the checkout and loads the model offline"
	echo " (HF_HUB_CACHE on the cache, HF_HUB_OFFLINE=1):"
	kc create namespace cache-demo >/dev/null
	eventually -i 0.2 10 "the default ServiceAccount of namespace cache-demo" has_sa cache-demo
	jq -n -c --arg node "$HOST" --arg img "$REG/demo/tools:1" --arg cache "$D/cache" '
		{apiVersion: "v1", kind: "Pod", metadata: {name: "uses-cache", namespace: "cache-demo"},
		 spec: {nodeSelector: {"kubernetes.io/hostname": $node}, restartPolicy: "Never",
			tolerations: [{key: "k8shazgpu.dev/real-node", operator: "Exists", effect: "NoSchedule"}],
			volumes: [{name: "src", hostPath: {path: ($cache + "/vllm")}}, {name: "hub", hostPath: {path: ($cache + "/hub_cache")}}],
			containers: [{name: "main", image: $img, imagePullPolicy: "Never",
				env: [{name: "HF_HUB_CACHE", value: "/hub"}, {name: "HF_HUB_OFFLINE", value: "1"}],
				volumeMounts: [{name: "src", mountPath: "/workdir", readOnly: true}, {name: "hub", mountPath: "/hub", readOnly: true}],
				command: ["/bin/busybox", "sh", "-c",
					"echo checkout: $(/bin/busybox cat /workdir/VERSION); r=/hub/models--demo--opt-tiny; c=$(/bin/busybox cat $r/refs/main); echo model: commit $c, config $(/bin/busybox cat $r/snapshots/$c/config.json); echo weights: $(/bin/busybox wc -c < $r/snapshots/$c/model.safetensors) bytes"]}]}}' |
		kc apply -f - >/dev/null
	eventually -i 0.2 60 "pod uses-cache to succeed" is Succeeded phase_of cache-demo uses-cache
	echo "   pod uses-cache ($(kc get pod -n cache-demo uses-cache -o jsonpath='{.status.phase}')), kubectl logs:"
	kc logs -n cache-demo uses-cache | sed 's/^/     /'
	echo " A new commit on the branch, then k8shazgpu cache update gitrepo vllm: the agent fetches it into the other slot and swaps:"
	echo "release 2" >"$work/vllm/VERSION"
	git -C "$work/vllm" -c user.name=demo -c user.email=demo@localhost commit -q -a -m two && git -C "$work/vllm" push -q origin HEAD:main
	indent k8shazgpu cache update gitrepo vllm
	want=$(git -C "$work/vllm" rev-parse HEAD)
	# ITEM: what the node's cache status says of it, as JSON
	cache_item() { kc get nodecachestatuses.canhazgpu.dev "$HOST" -o json | jq -c --arg n "$1" '.status.items[] | select(.name == $n)'; }
	vllm_resolved() { cache_item vllm | jq -r .resolved; }
	eventually -i 0.2 60 "the node's cache to resolve vllm to the new commit" is "$want" vllm_resolved
	echo "   vllm now at $(echo "$want" | cut -c1-7) after $((polls / 5)) s: $D/cache/vllm -> $(readlink "$D/cache/vllm"), VERSION says '$(cat "$D/cache/vllm/VERSION")'"
	echo " A bad item is reported, not hidden: an image tag that does not exist"
	indent k8shazgpu cache add image "$REG/demo/tools:nope" --name missing
	missing_failed() { cache_item missing | jq -c -e '., .phase == "failed"'; }
	eventually -i 0.2 60 "the cache to report item missing failed" missing_failed
	k8shazgpu -o wide cache status | awk 'NR == 1 || /missing/' | sed 's/^/   /'
	du0=$(du -sk "$D/cache/hub_cache" | cut -f1)
	echo " Removing the model and the bad image from the plan: the node drops them and frees the space"
	indent k8shazgpu cache remove model demo-opt-tiny
	indent k8shazgpu cache remove image missing
	cache_items() { kc get nodecachestatuses.canhazgpu.dev "$HOST" -o json | jq '.status.items | length'; }
	eventually -i 0.2 60 "the node's cache to hold 2 items" is 2 cache_items
	echo "   hub_cache: $du0 KiB before, $(du -sk "$D/cache/hub_cache" | cut -f1) KiB after; items left:"
	indent k8shazgpu cache status
	kc delete namespace cache-demo --wait=false >/dev/null
	k8shazgpu cache remove vllm tools >/dev/null
	stop "$gitserve" "$hubserve"
	gitserve= hubserve=
	gitserve=
	cached=1
fi
