#!/bin/sh
# charts/k8shazgpu: helm lint is clean; with its default values the chart
# renders, object by object, what `kubectl kustomize manifests/` does (and
# with monitoring on, manifests/monitoring too); each value changes what it
# names and nothing else; the schema refuses a wrong type, an unknown key,
# a value outside its enum.
. "$(dirname "$0")/lib.sh"

helm=$(helm-build 2>helm-build.err) || skip_all "helm could not be built: $(tail -n 1 helm-build.err)"
kubectl=$(sim-build bindir)/kubectl
[ -x "$kubectl" ] || kubectl=$(sim-build 2>sim-build.err)/kubectl ||
	skip_all "kubectl could not be built: $(tail -n 1 sim-build.err)"
CHART=$TOP/charts/k8shazgpu

# One object a line, keys sorted, in the order kind, namespace, name.
objects() { yaml2json -s | jq -c -S 'select(. != null)' | jq -s -c 'sort_by(.kind, .metadata.namespace // "", .metadata.name)[]'; }
key() { jq -r '"\(.kind) \(.metadata.namespace // "-")/\(.metadata.name)"' "$@"; }
# render: the chart's objects, less the annotation that keeps a CRD on
# helm uninstall (crds.keep, checked on its own below): manifests/ has no
# uninstall of its own to keep anything from.
render() {
	"$helm" template k8shazgpu "$CHART" "$@" | objects | jq -c 'del(.metadata.annotations["helm.sh/resource-policy"])
		| if .metadata.annotations == {} then del(.metadata.annotations) else . end'
}
# crd_policy ARGS...: each CRD the chart renders and its resource policy
crd_policy() {
	"$helm" template k8shazgpu "$CHART" "$@" | objects |
		jq -r 'select(.kind == "CustomResourceDefinition") | "\(.metadata.name) \(.metadata.annotations["helm.sh/resource-policy"] // "-")"'
}

check_output 'helm lint: no warning, no error' "cd '$TOP' && '$helm' lint charts/k8shazgpu" <<'X'
==> Linting charts/k8shazgpu
[INFO] Chart.yaml: icon is recommended

1 chart(s) linted, 0 chart(s) failed
X

"$kubectl" kustomize "$TOP/manifests" | objects >kustomize.json
render >helm.json
check_output 'the same objects as kubectl kustomize manifests/' "key helm.json" <<X
$(key kustomize.json)
X
# each object the same, field by field
for k in $(key kustomize.json | tr ' ' '@'); do
	k=$(echo "$k" | tr '@' ' ')
	check_output "$k: the same" \
		"jq -S --arg k '$k' 'select(\"\(.kind) \(.metadata.namespace // \"-\")/\(.metadata.name)\" == \$k)' helm.json" <<X
$(jq -S --arg k "$k" 'select("\(.kind) \(.metadata.namespace // "-")/\(.metadata.name)" == $k)' kustomize.json)
X
done

{ "$kubectl" kustomize "$TOP/manifests" && echo --- && "$kubectl" kustomize "$TOP/manifests/monitoring"; } | objects >kustomize-mon.json
check_output 'crds.keep: by default helm uninstall keeps every CRD (and so every GPUWorkload); false: none' \
	'crd_policy; crd_policy --set crds.keep=false' <<'X'
cacheplans.canhazgpu.dev keep
gpunodes.agentaflow.io keep
gpunodes.canhazgpu.dev keep
gpuworkloads.canhazgpu.dev keep
nodecachestatuses.canhazgpu.dev keep
cacheplans.canhazgpu.dev -
gpunodes.agentaflow.io -
gpunodes.canhazgpu.dev -
gpuworkloads.canhazgpu.dev -
nodecachestatuses.canhazgpu.dev -
X

check_output 'monitoring.enabled: also what kubectl kustomize manifests/monitoring renders' \
	"render --set monitoring.enabled=true | diff kustomize-mon.json -" <<'X'
X
check_output 'monitoring.labels: on the ServiceMonitors and the PrometheusRule, beside their own' \
	"render --set monitoring.enabled=true --set monitoring.labels.release=prom | diff kustomize-mon.json - | sed -n 's/^> //p' | jq -r '[.kind, .metadata.name, (.metadata.labels | tojson)] | join(\" \")' " <<'X'
PrometheusRule canhazgpu {"app.kubernetes.io/part-of":"k8shazgpu","release":"prom"}
ServiceMonitor canhazgpu-controller {"app.kubernetes.io/part-of":"k8shazgpu","release":"prom"}
ServiceMonitor canhazgpu-nodeagent {"app.kubernetes.io/part-of":"k8shazgpu","release":"prom"}
X

# CHANGED-OBJECTS: the objects of this rendering that differ from the
# default one, by key
changed() { render "$@" >r.json && diff helm.json r.json | sed -n 's/^> //p' >changed.json && key changed.json; }
IMAGES='select(.spec.template.spec or .spec.jobTemplate) | (.spec.jobTemplate.spec.template.spec // .spec.template.spec)
	| .containers[] | "\(.name) \(.image)"'
D=sha256:$(printf '%064d' 7)
check_output 'images: the registry before every image, a digest in place of the tag' \
	"changed --set images.registry=registry.example:5000 --set images.digests.controller=$D >/dev/null && jq -r '$IMAGES' r.json" <<X
certs registry.example:5000/k8shazgpu/webhook:0.1.0
draplugin registry.example:5000/k8shazgpu/draplugin:0.1.0
nodeagent registry.example:5000/k8shazgpu/nodeagent:0.1.0
cache registry.example:5000/k8shazgpu/nodeagent:0.1.0
controller registry.example:5000/k8shazgpu/controller@$D
webhook registry.example:5000/k8shazgpu/webhook:0.1.0
certs registry.example:5000/k8shazgpu/webhook:0.1.0
X
check_output 'images: repository and tag, nothing else changed' \
	"changed --set images.repository=gpu/k8shazgpu --set images.tag=0.2.0 && jq -r '$IMAGES' r.json" <<'X'
CronJob canhazgpu-system/k8shazgpu-webhook-certs
DaemonSet canhazgpu-system/canhazgpu-draplugin
DaemonSet canhazgpu-system/canhazgpu-nodeagent
Deployment canhazgpu-system/canhazgpu-controller
Deployment canhazgpu-system/k8shazgpu-webhook
Job canhazgpu-system/k8shazgpu-webhook-certs
certs gpu/k8shazgpu/webhook:0.2.0
draplugin gpu/k8shazgpu/draplugin:0.2.0
nodeagent gpu/k8shazgpu/nodeagent:0.2.0
cache gpu/k8shazgpu/nodeagent:0.2.0
controller gpu/k8shazgpu/controller:0.2.0
webhook gpu/k8shazgpu/webhook:0.2.0
certs gpu/k8shazgpu/webhook:0.2.0
X

PLACED='select(.kind == "DaemonSet") | .metadata.name as $n | .spec.template.spec
	| "\($n) \(.nodeSelector | tojson) \(.tolerations | tojson) \(.runtimeClassName | tojson)"'
check_output 'nodeSelector, tolerations, runtimeClassName: where the DaemonSets run, and only they' \
	"changed --set-json 'nodeSelector={\"nvidia.com/gpu.present\":null,\"gpu\":\"h200\"}' --set-json 'tolerations=[{\"key\":\"gpu\",\"operator\":\"Exists\"}]' --set runtimeClassName=nvidia-cdi && jq -r '$PLACED' changed.json" <<'X'
DaemonSet canhazgpu-system/canhazgpu-draplugin
DaemonSet canhazgpu-system/canhazgpu-nodeagent
canhazgpu-draplugin {"gpu":"h200"} [{"key":"gpu","operator":"Exists"}] "nvidia-cdi"
canhazgpu-nodeagent {"gpu":"h200"} [{"key":"gpu","operator":"Exists"}] "nvidia-cdi"
X
check_output 'nodeSelector key null, empty tolerations and runtimeClassName: none written' \
	"changed --set-json 'nodeSelector={\"nvidia.com/gpu.present\":null}' --set-json 'tolerations=[]' --set runtimeClassName= >/dev/null && jq -r '$PLACED' changed.json" <<'X'
canhazgpu-draplugin null null null
canhazgpu-nodeagent null null null
X

check_output 'redis: the socket the agents are given, the directory mounted at its own path' \
	"changed --set redis.socketDir=/var/run/canhazgpu --set redis.socket=ledger.sock && jq -r 'select(.kind == \"DaemonSet\") | .metadata.name as \$n | .spec.template.spec
		| \"\(\$n) \(.containers[0].env[] | select(.name == \"K8SHAZGPU_REDIS\") | .value) \(.containers[0].volumeMounts[] | select(.name == \"redis\") | .mountPath) \(.volumes[] | select(.name == \"redis\") | .hostPath | tojson)\"' changed.json" <<'X'
DaemonSet canhazgpu-system/canhazgpu-draplugin
DaemonSet canhazgpu-system/canhazgpu-nodeagent
canhazgpu-draplugin /var/run/canhazgpu/ledger.sock /var/run/canhazgpu {"path":"/var/run/canhazgpu","type":"DirectoryOrCreate"}
canhazgpu-nodeagent /var/run/canhazgpu/ledger.sock /var/run/canhazgpu {"path":"/var/run/canhazgpu","type":"DirectoryOrCreate"}
X

CONTROLLER_ENV='(select(.kind == "Deployment" and .metadata.name == "canhazgpu-controller")
	| .spec.template.spec.containers[0].env[] | select(.value) | "\(.name)=\(.value)")'
check_output 'allocation dra: the controller gives Jobs devices by ResourceClaim' \
	"changed --set allocation=dra && jq -r '$CONTROLLER_ENV' changed.json" <<'X'
Deployment canhazgpu-system/canhazgpu-controller
SCHEDULING_STRATEGY=least_utilized
SCHEDULING_INTERVAL=5s
K8SHAZGPU_METRICS_ADDR=$(POD_IP):9090
GPU_UTILIZATION_GOAL=80
LOG_LEVEL=info
K8SHAZGPU_ALLOCATION=dra
X
check_output 'alerts off: no alerts, no state kept, and no rights or ConfigMap for them' \
	"changed --set alerts.enabled=false && jq -r '$CONTROLLER_ENV' changed.json | grep ALERT &&
		key helm.json | sort >h.keys && key r.json | sort >r.keys && comm -23 h.keys r.keys" <<'X'
Deployment canhazgpu-system/canhazgpu-controller
K8SHAZGPU_ALERT_SECRET=off
K8SHAZGPU_ALERT_STATE=off
ConfigMap canhazgpu-system/gpu-alert-state
Role canhazgpu-system/canhazgpu-controller-alerts
RoleBinding canhazgpu-system/canhazgpu-controller-alerts
X
check_output 'alerts.secret: the controller reads that Secret, and may get it only' \
	"changed --set alerts.secret=chat-webhook && jq -r '$CONTROLLER_ENV, (select(.kind == \"Role\") | .rules[0] | tojson)' changed.json | grep -e ALERT -e secrets" <<'X'
Deployment canhazgpu-system/canhazgpu-controller
Role canhazgpu-system/canhazgpu-controller-alerts
K8SHAZGPU_ALERT_SECRET=canhazgpu-system/chat-webhook
{"apiGroups":[""],"resourceNames":["chat-webhook"],"resources":["secrets"],"verbs":["get"]}
X

# The schema: values of the wrong type, keys it does not know, and values
# outside an enum are refused before anything is rendered.
bad() {
	printf '%s\n' "$@" >bad.yaml
	"$helm" template k8shazgpu "$CHART" -f bad.yaml
}
check_output 'a wrong type: refused, by its path' 'out bad "alerts:" "  enabled: \"yes\""' <<'X'
exit 1
Error: values don't meet the specifications of the schema(s) in the following chart(s):
k8shazgpu:
- at '/alerts/enabled': got string, want boolean

X
check_output 'an unknown key: refused' 'out bad "image:" "  registry: registry.example:5000"' <<'X'
exit 1
Error: values don't meet the specifications of the schema(s) in the following chart(s):
k8shazgpu:
- at '': additional properties 'image' not allowed

X
check_output 'an unknown key inside a known one: refused' 'out bad "images:" "  registy: registry.example:5000"' <<'X'
exit 1
Error: values don't meet the specifications of the schema(s) in the following chart(s):
k8shazgpu:
- at '/images': additional properties 'registy' not allowed

X
check_output 'an allocation mode that is not extended or dra: refused' 'out bad "allocation: DRA"' <<'X'
exit 1
Error: values don't meet the specifications of the schema(s) in the following chart(s):
k8shazgpu:
- at '/allocation': value must be one of 'extended', 'dra'

X
check_output 'a digest that is not sha256:HEX: refused' 'out bad "images:" "  digests:" "    webhook: latest"' <<'X'
exit 1
Error: values don't meet the specifications of the schema(s) in the following chart(s):
k8shazgpu:
- at '/images/digests/webhook': 'latest' does not match pattern '^(sha256:[0-9a-f]{64})?$'

X
check_output 'a Redis socket that is a path, not a name in socketDir: refused' 'out bad "redis:" "  socket: /run/redis/redis.sock"' <<'X'
exit 1
Error: values don't meet the specifications of the schema(s) in the following chart(s):
k8shazgpu:
- at '/redis/socket': '/run/redis/redis.sock' does not match pattern '^[^/]+$'

X
check_output 'helm lint: the same refusal, as an error' \
	"bad 'image:' '  registry: registry.example:5000' 2>/dev/null; cd '$TOP' && '$helm' lint charts/k8shazgpu -f '$SCRATCH/bad.yaml'; echo exit \$?" <<'X'
==> Linting charts/k8shazgpu
[INFO] Chart.yaml: icon is recommended
[ERROR] values.yaml: - at '': additional properties 'image' not allowed

[ERROR] templates/: values don't meet the specifications of the schema(s) in the following chart(s):
k8shazgpu:
- at '': additional properties 'image' not allowed


exit 1
X

done_testing
