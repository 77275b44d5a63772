if [ -f "$D/node-state" ] && command -v docker-registry >/dev/null 2>&1; then
	say "Installing k8shazgpu the way users do: images built here with no container engine, kubectl apply -k, every component in a pod on the real node"
	# the controller of the sections above gives way to the one in the cluster
	stop "${controller:-}"
	controller=
	. "$D/state"
	k8shazgpu-sim install 2>&1 | grep -v '^oci-push: ' | sed 's/^/   /'
	echo " The images, pushed to the sim's registry on 127.0.0.1:$REGISTRY_PORT (one base layer shared by the four components; diff-pack's is its static binary alone):"
	awk '{ printf "   %-24s %s  %5.2f MiB compressed, %5.2f MiB unpacked\n", $1, substr($2, 1, 19), $3, $4 }' "$D/install/images.txt"
	read -r t0 t1 <"$D/install/timing"
	echo " From kubectl apply -k to every component Ready: $(echo "$t0 $t1" | awk '{ printf "%.1f", ($2 - $1) / 1000 }') s. Its pods:"
	kc -n canhazgpu-system get pods -o custom-columns='POD:.metadata.name,READY:.status.containerStatuses[0].ready,NODE:.spec.nodeName,STATUS:.status.phase' |
		sed 's/^/   /'
	kc create namespace installed >/dev/null
	eventually -i 0.2 10 "the default ServiceAccount of namespace installed" has_sa installed
	echo " A GPUWorkload for one GPU of '$HOST': the in-cluster controller places it, its Job runs there and says:"
	jq -n -c --arg node "$HOST" '{apiVersion: "canhazgpu.dev/v1alpha1", kind: "GPUWorkload",
		metadata: {name: "hello", namespace: "installed"},
		spec: {gpuCount: 1, nodeSelector: {"kubernetes.io/hostname": $node},
			podTemplate: {spec: {containers: [{name: "main", image: "k8s.io/busybox:local", imagePullPolicy: "Never",
				command: ["sh", "-c", "echo hello from $(hostname), NVIDIA_VISIBLE_DEVICES=$NVIDIA_VISIBLE_DEVICES"]}]}}}}' |
		kc create -f - >/dev/null
	eventually -i 0.2 60 "Job hello to succeed" is 1 kc get job -n installed hello -o jsonpath='{.status.succeeded}'
	kc logs -n installed job/hello 2>&1 | sed 's/^/   /'
	echo " Each component's ServiceAccount may do only what it uses. The node agent, for one:"
	sa=system:serviceaccount:canhazgpu-system:canhazgpu-nodeagent
	for q in "patch nodes" "patch resourceslices.resource.k8s.io" "get secrets -n canhazgpu-system" "create pods" "delete nodes"; do
		# shellcheck disable=SC2086
		printf '   can it %-40s %s\n' "$q?" "$(kc auth can-i --as="$sa" $q 2>/dev/null || true)"
	done
	echo " RBAC cannot say 'only your own node'; a ValidatingAdmissionPolicy does, by the node bound into the"
	echo " agent pod's token. With a token bound to that pod, on '$HOST', labelling another node is refused:"
	agent=$(kc -n canhazgpu-system get pods -l app.kubernetes.io/name=canhazgpu-nodeagent -o jsonpath='{.items[0].metadata.name}')
	token=$(kc -n canhazgpu-system create token canhazgpu-nodeagent --bound-object-kind Pod --bound-object-name "$agent")
	other=$(kc get nodes -l type=kwok -o jsonpath='{.items[0].metadata.name}')
	for n in "$HOST" "$other"; do
		printf '   label node %-8s ' "$n:"
		"$bindir/kubectl" --kubeconfig=/dev/null --server="https://127.0.0.1:$API_PORT" \
			--certificate-authority="$D/pki/ca.crt" --token="$token" \
			label node "$n" demo.canhazgpu.dev/own=yes --overwrite 2>&1 | head -n 1
	done
	kc label node "$HOST" demo.canhazgpu.dev/own- >/dev/null 2>&1 || true
	kc delete namespace installed --wait=false >/dev/null
	echo " Uninstall is kubectl delete -k; the sim's own node agent and plugin take the node back:"
	k8shazgpu-sim uninstall 2>&1 | sed 's/^/   /'
fi
