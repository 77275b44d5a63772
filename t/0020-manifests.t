#!/bin/sh
# Every manifest parses, names its object, and asks for no wildcard rights.
. "$(dirname "$0")/lib.sh"

for f in $(cd "$TOP" && find manifests -name '*.yaml' | sort); do
	check "$f parses and every object has apiVersion, kind, name" \
		"yaml2json -s '$TOP/$f' | jq -e -s 'all(.[]; .apiVersion and .kind and (.metadata.name or .kind == \"Topology\" or .kind == \"Kustomization\"))' >/dev/null"
done
check_output 'no RBAC rule grants a wildcard' \
	"cat '$TOP'/manifests/*/rbac.yaml | yaml2json -s | jq -r 'select(.rules) | .rules[] | select((.verbs + .resources + .apiGroups) | index(\"*\")) | tojson'" <<'X'
X
check 'the Grafana dashboard is JSON with panels' "jq -e '.panels | length > 0' '$TOP/manifests/grafana-dashboard.json' >/dev/null"
kubectl=$("$TOP/scripts/sim-build" bindir)/kubectl
if [ -x "$kubectl" ]; then
	check_output 'kubectl kustomize manifests/ renders every object' \
		"'$kubectl' kustomize '$TOP/manifests' | yaml2json -s | jq -r '.kind' | sort | uniq -c | sed 's/^ *//'" <<'X'
4 ClusterRole
4 ClusterRoleBinding
1 ConfigMap
1 CustomResourceDefinition
2 DaemonSet
2 Deployment
2 DeviceClass
1 MutatingWebhookConfiguration
1 Namespace
1 Role
1 RoleBinding
2 Service
4 ServiceAccount
X
else
	t_result 0 "kubectl kustomize # SKIP the control plane is not built"
fi
done_testing
