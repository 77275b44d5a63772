#!/bin/sh
# Every manifest parses, names its object, and asks for no wildcard rights.
. "$(dirname "$0")/lib.sh"

for f in $(cd "$TOP" && find manifests -name '*.yaml' | sort); do
	check "$f parses and every object has apiVersion, kind, name" \
		"yaml2json -s '$TOP/$f' | jq -e -s 'all(.[]; .apiVersion and .kind and (.metadata.name or .kind == \"Topology\" or .kind == \"Kustomization\"))' >/dev/null"
done
check_output 'no RBAC rule grants a wildcard' \
	"cat '$TOP'/manifests/*/rbac.yaml '$TOP'/manifests/webhook/certs-rbac.yaml | yaml2json -s | jq -r 'select(.rules) | .rules[] | select((.verbs + .resources + .apiGroups) | index(\"*\")) | tojson'" <<'X'
X
check 'the Grafana dashboard is JSON with panels' "jq -e '.panels | length > 0' '$TOP/manifests/grafana-dashboard.json' >/dev/null"
kubectl=$("$TOP/scripts/sim-build" bindir)/kubectl
if [ -x "$kubectl" ]; then
	"$kubectl" kustomize "$TOP/manifests" | yaml2json -s >all.json
	check_output 'kubectl kustomize manifests/ renders every object' \
		"jq -r '.kind' all.json | sort | uniq -c | sed 's/^ *//'" <<'X'
5 ClusterRole
5 ClusterRoleBinding
1 ConfigMap
1 CronJob
1 CustomResourceDefinition
2 DaemonSet
2 Deployment
2 DeviceClass
1 Job
1 MutatingWebhookConfiguration
1 Namespace
2 Role
2 RoleBinding
2 Service
5 ServiceAccount
2 ValidatingAdmissionPolicy
2 ValidatingAdmissionPolicyBinding
X
	# every container of ours: its image, user, and what it may do
	PODS='select(.spec.template.spec or .spec.jobTemplate) | (.spec.jobTemplate.spec.template.spec // .spec.template.spec) as $p
		| $p.containers[] | . as $c'
	V=$(sed -n 's/^VERSION = //p' "$TOP/Makefile")
	check_output 'each container: our image of this version, non-root unless the DRA plugin, nothing privileged' \
		"jq -r '$PODS | [.name, .image, (.securityContext.runAsUser | tostring), (.securityContext.privileged // false | tostring),
			(.securityContext.allowPrivilegeEscalation | tostring), (.securityContext.readOnlyRootFilesystem | tostring),
			(.securityContext.capabilities.drop | tostring)] | join(\" \")' all.json | sort" <<X
certs k8shazgpu/webhook:$V 65534 false false true ["ALL"]
certs k8shazgpu/webhook:$V 65534 false false true ["ALL"]
controller k8shazgpu/controller:$V 65534 false false true ["ALL"]
draplugin k8shazgpu/draplugin:$V 0 false false true ["ALL"]
nodeagent k8shazgpu/nodeagent:$V 65534 false false true ["ALL"]
webhook k8shazgpu/webhook:$V 65534 false false true ["ALL"]
X
	check_output 'each long-running container: /healthz and /readyz probes, requests and a memory limit' \
		"jq -r 'select(.kind == \"DaemonSet\" or .kind == \"Deployment\") | .spec.template.spec.containers[]
			| [.name, .livenessProbe.httpGet.path, .readinessProbe.httpGet.path, (.resources.requests | keys | join(\",\")),
			   (.resources.limits | keys | join(\",\"))] | join(\" \")' all.json | sort" <<'X'
controller /healthz /readyz cpu,memory memory
draplugin /healthz /readyz cpu,memory memory
nodeagent /healthz /readyz cpu,memory memory
webhook /healthz /readyz cpu,memory memory
X
	check 'the webhook configuration names no caBundle: the certificate Job writes it, apply -k keeps it' \
		"jq -e 'select(.kind == \"MutatingWebhookConfiguration\") | all(.webhooks[]; .clientConfig | has(\"caBundle\") | not)' all.json >/dev/null"
	check_output 'the overlay of the simulated cluster renders: every pod of ours on the real node, host network' \
		"'$kubectl' kustomize '$TOP/overlays/sim' | yaml2json -s | jq -r 'select(.spec.template.spec or .spec.jobTemplate)
			| (.spec.jobTemplate.spec.template.spec // .spec.template.spec) as \$p
			| [.kind, .metadata.name, (\$p.hostNetwork | tostring), \$p.nodeSelector[\"k8shazgpu.dev/real-node\"],
			   (\$p.runtimeClassName // \"-\")] | join(\" \")' | sort" <<'X'
CronJob k8shazgpu-webhook-certs true true -
DaemonSet canhazgpu-draplugin true true -
DaemonSet canhazgpu-nodeagent true true -
Deployment canhazgpu-controller true true -
Deployment k8shazgpu-webhook true true -
Job k8shazgpu-webhook-certs true true -
X
else
	t_result 0 "kubectl kustomize # SKIP the control plane is not built"
fi
done_testing
