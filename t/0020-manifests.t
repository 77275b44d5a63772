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
7 ClusterRole
5 ClusterRoleBinding
2 ConfigMap
1 CronJob
5 CustomResourceDefinition
2 DaemonSet
2 Deployment
2 DeviceClass
1 Job
1 MutatingWebhookConfiguration
2 Namespace
4 Role
4 RoleBinding
2 Service
5 ServiceAccount
3 ValidatingAdmissionPolicy
3 ValidatingAdmissionPolicyBinding
X
	# every container of ours: its image, user, and what it may do
	PODS='select(.spec.template.spec or .spec.jobTemplate) | (.spec.jobTemplate.spec.template.spec // .spec.template.spec) as $p
		| $p.containers[] | . as $c'
	V=$(sed -n 's/^VERSION = //p' "$TOP/Makefile")
	check_output 'each container: our image of this version, non-root unless the DRA plugin or the node cache, nothing privileged' \
		"jq -r '$PODS | [.name, .image, (.securityContext.runAsUser | tostring), (.securityContext.privileged // false | tostring),
			(.securityContext.allowPrivilegeEscalation | tostring), (.securityContext.readOnlyRootFilesystem | tostring),
			(.securityContext.capabilities.drop | tostring)] | join(\" \")' all.json | sort" <<X
cache k8shazgpu/nodeagent:$V 0 false false true ["ALL"]
certs k8shazgpu/webhook:$V 65534 false false true ["ALL"]
certs k8shazgpu/webhook:$V 65534 false false true ["ALL"]
controller k8shazgpu/controller:$V 65534 false false true ["ALL"]
draplugin k8shazgpu/draplugin:$V 0 false false true ["ALL"]
nodeagent k8shazgpu/nodeagent:$V 65534 false false true ["ALL"]
webhook k8shazgpu/webhook:$V 65534 false false true ["ALL"]
X
	check_output 'each long-running container: /healthz and /readyz probes (none for the node cache), requests and a memory limit' \
		"jq -r 'select(.kind == \"DaemonSet\" or .kind == \"Deployment\") | .spec.template.spec.containers[]
			| [.name, .livenessProbe.httpGet.path // \"-\", .readinessProbe.httpGet.path // \"-\", (.resources.requests | keys | join(\",\")),
			   (.resources.limits | keys | join(\",\"))] | join(\" \")' all.json | sort" <<'X'
cache - - cpu,memory memory
controller /healthz /readyz cpu,memory memory
draplugin /healthz /readyz cpu,memory memory
nodeagent /healthz /readyz cpu,memory memory
webhook /healthz /readyz cpu,memory memory
X
	check_output 'each server listens at its pod'\''s own address (status.podIP), none at every address; the probes go there' \
		"jq -r 'select(.kind == \"DaemonSet\" or .kind == \"Deployment\") | .spec.template.spec.containers[]
			| [.name, ([(.command // [])[], ((.env // [])[] | .value // empty)] | map(select(test(\"POD_IP|0[.]0[.]0[.]0|^:[0-9]\"))) | join(\" \")),
			   ((.env // []) | map(select(.name == \"POD_IP\") | .valueFrom.fieldRef.fieldPath) | join(\" \")),
			   (.livenessProbe.httpGet.host // \"-\"), (.readinessProbe.httpGet.host // \"-\")] | join(\" \")' all.json | sort" <<'X'
cache   - -
controller $(POD_IP):9090 status.podIP - -
draplugin $(POD_IP):8082 status.podIP - -
nodeagent $(POD_IP):8081 status.podIP - -
webhook $(POD_IP):8443 status.podIP - -
X
	check_output 'the node cache container: the cache and the runtime socket at their node paths, the cache directory, no Secret in its environment' \
		"jq -c 'select(.kind == \"DaemonSet\" and .metadata.name == \"canhazgpu-nodeagent\") | .spec.template.spec as \$p
			| \$p.containers[] | select(.name == \"cache\") | .command,
			  (.volumeMounts[] | . as \$m | \$p.volumes[] | select(.name == \$m.name) | [\$m.mountPath, .hostPath.path // \"emptyDir\", .hostPath.type // .emptyDir.medium]),
			  (.env[] | [.name, .value // .valueFrom])' all.json" <<'X'
["k8shazgpu-nodeagent-cache","-i","30"]
["/var/lib/canhazgpu-cache","/var/lib/canhazgpu-cache","DirectoryOrCreate"]
["/run/containerd/containerd.sock","/run/containerd/containerd.sock","Socket"]
["/tmp","emptyDir","Memory"]
["NODE_NAME",{"fieldRef":{"fieldPath":"spec.nodeName"}}]
["K8SHAZGPU_CACHE_DIR","/var/lib/canhazgpu-cache"]
X
	check_output 'the DRA plugin: the host'\''s / read-only at /host, named to dra-plugin with -H; its other mounts the kubelet'\''s and the CDI directories' \
		"jq -c 'select(.kind == \"DaemonSet\" and .metadata.name == \"canhazgpu-draplugin\") | .spec.template.spec as \$p
			| \$p.containers[0] | .command[5:],
			  (.volumeMounts[] | . as \$m | \$p.volumes[] | select(.name == \$m.name) | [\$m.mountPath, .hostPath.path // \"emptyDir\", \$m.readOnly // false])' all.json" <<'X'
["--","-H","/host"]
["/var/lib/kubelet/plugins_registry","/var/lib/kubelet/plugins_registry",false]
["/var/lib/kubelet/plugins","/var/lib/kubelet/plugins",false]
["/var/run/cdi","/var/run/cdi",false]
["/run/redis","/run/redis",false]
["/tmp","emptyDir",false]
["/host","/",true]
X
	check_output 'the node agent'\''s rights on the cache: the plan read, its status written, Secrets got by name in canhazgpu-node-secrets only' \
		"jq -c 'select((.kind == \"ClusterRole\" or .kind == \"Role\") and (.metadata.name | startswith(\"canhazgpu-nodeagent\")))
			| .kind as \$k | .metadata.namespace as \$ns | .rules[]
			| select(.apiGroups == [\"canhazgpu.dev\"] and (.resources[0] | startswith(\"gpuworkloads\") | not) or .resources == [\"secrets\"])
			| [\$k, \$ns, .resources, .verbs]' all.json | sort" <<'X'
["ClusterRole",null,["cacheplans"],["get","list","watch"]]
["ClusterRole",null,["nodecachestatuses","nodecachestatuses/status"],["get","create","update","patch"]]
["Role","canhazgpu-node-secrets",["secrets"],["get"]]
X
	check_output 'the policies: the node agent writes its own node, slices, NodeCacheStatus and GPUNodes only' \
		"jq -r 'select(.kind == \"ValidatingAdmissionPolicy\" and (.metadata.name | startswith(\"canhazgpu-nodeagent\")))
			| [.metadata.name, (.spec.matchConstraints.resourceRules[] | .resources | join(\",\"))] | join(\" \")' all.json | sort" <<'X'
canhazgpu-nodeagent-own-cache-status nodecachestatuses,nodecachestatuses/*,gpunodes,gpunodes/* gpunodes,gpunodes/*
canhazgpu-nodeagent-own-node nodes,nodes/* resourceslices
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
