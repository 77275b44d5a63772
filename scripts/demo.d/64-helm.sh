# Helm: the chart renders what kustomize does; its schema refuses bad values.
helm=$("$TOP/scripts/helm-build" path)
if [ -x "$helm" ]; then
	say "The same install as a Helm chart: charts/k8shazgpu, with its default values, renders what kubectl kustomize manifests/ does"
	objects() { yaml2json -s | jq -c -S 'select(. != null)' | jq -s -c 'sort_by(.kind, .metadata.namespace // "", .metadata.name)[]'; }
	# (less the annotation that keeps the CRDs on helm uninstall: crds.keep)
	"$helm" template k8shazgpu "$TOP/charts/k8shazgpu" | objects | jq -c 'del(.metadata.annotations["helm.sh/resource-policy"])
		| if .metadata.annotations == {} then del(.metadata.annotations) else . end' >"$D/helm.json"
	kc kustomize "$TOP/manifests" | objects >"$D/kustomize.json"
	if cmp -s "$D/helm.json" "$D/kustomize.json"; then
		echo "   helm template and kubectl kustomize: the same $(wc -l <"$D/helm.json") objects, field by field"
		echo "   (but that helm uninstall keeps the CRDs, and so every GPUWorkload, unless crds.keep=false)"
	else
		echo "   they differ:"
		diff "$D/kustomize.json" "$D/helm.json" | head -n 10 | cut -c 1-150 | sed 's/^/   /'
	fi
	echo " Values change what they name; --set images.registry=registry.example.com --set allocation=dra:"
	"$helm" template k8shazgpu "$TOP/charts/k8shazgpu" --set images.registry=registry.example.com --set allocation=dra |
		objects | jq -r 'select(.kind == "Deployment" and .metadata.name == "canhazgpu-controller") | .spec.template.spec.containers[0]
			| "   image \(.image), \(.env[] | select(.name == "K8SHAZGPU_ALLOCATION") | "\(.name)=\(.value)")"'
	echo " and the chart's schema refuses a value it does not know (--set alocation=dra):"
	"$helm" template k8shazgpu "$TOP/charts/k8shazgpu" --set alocation=dra 2>&1 >/dev/null | grep . | sed 's/^/   /' || true
	rm -f "$D/helm.json" "$D/kustomize.json"
fi
