#!/bin/sh
# lib/wl through t/unit/wl: a GPUWorkload checked (the controller's
# messages), its priority and retry numbers, the sched-pick request it
# makes, the constraints its pod template puts on nodes, and its Job.
. "$(dirname "$0")/lib.sh"

wl() { unit wl "$@"; }

check_output 'the former controller checks, in its words' 'wl problem <<IN
spec {"gpuCount": 0}
spec {"gpuCount": 65}
spec {"gpuRequirements": {"gpuCount": 1.5}}
spec {"gpuCount": "2"}
spec {"gpuMemoryRequired": -1}
spec {"gpuRequirements": {"minGPUMemory": "lots"}}
spec {"priority": "urgent"}
spec {"priority": 1.5}
spec {"priority": [1]}
spec {"schedulingStrategy": "fastest"}
spec {"schedulingStrategy": false}
spec {"gpuRequirements": {"migProfile": "7x"}}
spec {"gpuRequirements": {"migProfile": "8g.80gb"}}
spec {"gpuRequirements": {"migProfile": 5}}
IN' <<'EOF'
spec.gpuCount must be a whole number from 1 to 64, got 0
spec.gpuCount must be a whole number from 1 to 64, got 65
spec.gpuCount must be a whole number from 1 to 64, got 1.5
spec.gpuCount must be a whole number from 1 to 64, got "2"
spec.gpuMemoryRequired must be a number of MiB, 0 or more, got -1
spec.gpuMemoryRequired must be a number of MiB, 0 or more, got "lots"
spec.priority must be a number or low, medium, high, critical, got "urgent"
spec.priority must be a number or low, medium, high, critical, got 1.5
spec.priority must be a number or low, medium, high, critical, got [1]
spec.schedulingStrategy: unknown strategy "fastest"
spec.schedulingStrategy: unknown strategy false
spec.gpuRequirements.migProfile: not a MIG profile: "7x"
spec.gpuRequirements.migProfile: not a MIG profile: "8g.80gb"
spec.gpuRequirements.migProfile: not a MIG profile: 5
EOF

check_output 'valid workloads pass' 'wl problem <<IN
spec {}
{"metadata": {"name": "a", "namespace": "b", "uid": "c"}}
spec {"gpuCount": 2.0, "gpuMemoryRequired": 0, "priority": "Critical", "schedulingStrategy": "bestFit"}
spec {"gpuCount": false, "priority": null, "gpuRequirements": {"migProfile": "1c.3g.40gb", "migFallback": ["3g.40gb", "1g.10gb+me"], "exclusiveAccess": false}}
spec {"gpuRequirements": {"gpuIds": [0, 1], "gpuCount": 2}, "retryPolicy": {"maxRetries": 0, "backoffSeconds": 0.5}}
spec {"gpuRequirements": {"gpuIds": [3, 3], "migProfile": "1g.10gb"}}
spec {"nodeSelector": {"pool": "a"}, "podTemplate": {"spec": {"nodeSelector": {"pool": "a", "zone": "z"}}}}
IN' <<'EOF'
ok
ok
ok
ok
ok
ok
ok
EOF

# One line each; a long value is cut at 200 bytes.
long=$(printf 'x%.0s' $(seq 1 300))
check_output 'the new checks name the field' 'wl problem <<IN
{"metadata": {"namespace": "b", "uid": "c"}}
{"metadata": {"name": "a", "namespace": "", "uid": "c"}}
{"metadata": {"name": "a", "namespace": "b", "uid": 7}}
[]
spec []
spec {"gpuRequirements": "big"}
spec {"nodeSelector": {"pool": "a"}, "podTemplate": {"spec": {"nodeSelector": {"pool": "b"}}}}
spec {"nodeSelector": {"pool": 1}}
spec {"podTemplate": {"spec": {"nodeSelector": ["pool"]}}}
spec {"podTemplate": {"spec": {"tolerations": {"key": "a"}}}}
spec {"podTemplate": {"spec": {"tolerations": ["a"]}}}
spec {"podTemplate": {"spec": {"containers": [{"name": "a", "env": {}}]}}}
spec {"podTemplate": {"spec": {"affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [1]}}}}}}
spec {"podTemplate": {"metadata": {"labels": {"a": 1}}}}
spec {"podTemplate": "pod"}
spec {"retryPolicy": {"maxRetries": 1001}}
spec {"retryPolicy": {"maxRetries": 2.5}}
spec {"retryPolicy": {"backoffSeconds": 86401}}
spec {"retryPolicy": {"backoffSeconds": "10s"}}
spec {"gpuRequirements": {"gpuIds": [0, -1]}}
spec {"gpuRequirements": {"gpuIds": []}}
spec {"gpuRequirements": {"gpuIds": 3}}
spec {"gpuRequirements": {"gpuIds": [0, 1, 0]}}
spec {"gpuRequirements": {"gpuIds": [0, 1]}, "gpuCount": 1}
spec {"gpuRequirements": {"gpuIds": [0], "gpuCount": 2}}
spec {"gpuRequirements": {"migProfile": "1g.10gb", "migFallback": ["2g.20gb", "x"]}}
spec {"gpuRequirements": {"migFallback": "2g.20gb"}}
spec {"gpuRequirements": {"exclusiveAccess": "yes"}}
spec {"preferredNode": 3}
spec {"image": ["a"]}
spec {"command": "sleep 1"}
spec {"modelName": 1}
spec {"nodeSelector": {"k": "$long"}, "podTemplate": {"spec": {"nodeSelector": {"k": "y"}}}}
spec {"priority": "$long"}
IN' <<EOF
metadata.name must be a non-empty string, got null
metadata.namespace must be a non-empty string, got ""
metadata.uid must be a non-empty string, got 7
a GPUWorkload must be an object, got []
spec must be an object, got []
spec.gpuRequirements must be an object, got "big"
spec.nodeSelector pool=a and spec.podTemplate.spec.nodeSelector pool=b disagree
spec.nodeSelector must be an object of strings, got {"pool":1}
spec.podTemplate.spec.nodeSelector must be an object of strings, got ["pool"]
spec.podTemplate.spec.tolerations must be an array of objects, got {"key":"a"}
spec.podTemplate.spec.tolerations must be an array of objects, got ["a"]
spec.podTemplate.spec.containers[0].env must be an array of objects, got {}
spec.podTemplate.spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms must be an array of objects, got [1]
spec.podTemplate.metadata.labels must be an object of strings, got {"a":1}
spec.podTemplate must be an object, got "pod"
spec.retryPolicy.maxRetries must be a whole number from 0 to 1000, got 1001
spec.retryPolicy.maxRetries must be a whole number from 0 to 1000, got 2.5
spec.retryPolicy.backoffSeconds must be a number of seconds from 0 to 86400, got 86401
spec.retryPolicy.backoffSeconds must be a number of seconds from 0 to 86400, got "10s"
spec.gpuRequirements.gpuIds must be an array of 1 to 64 GPU indexes, got [0,-1]
spec.gpuRequirements.gpuIds must be an array of 1 to 64 GPU indexes, got []
spec.gpuRequirements.gpuIds must be an array of 1 to 64 GPU indexes, got 3
spec.gpuRequirements.gpuIds names GPU 0 twice
spec.gpuRequirements.gpuIds names 2 GPUs but spec.gpuCount is 1
spec.gpuRequirements.gpuIds names 1 GPU but spec.gpuRequirements.gpuCount is 2
spec.gpuRequirements.migFallback: not a MIG profile: "x"
spec.gpuRequirements.migFallback must be an array of up to 8 MIG profiles, got "2g.20gb"
spec.gpuRequirements.exclusiveAccess must be true or false, got "yes"
spec.preferredNode must be a node name, got 3
spec.image must be a string, got ["a"]
spec.command must be an array of strings, got "sleep 1"
spec.modelName must be a string, got 1
spec.nodeSelector k=$(printf 'x%.0s' $(seq 1 200)) and spec.podTemplate.spec.nodeSelector k=y disagree
spec.priority must be a number or low, medium, high, critical, got "$(printf 'x%.0s' $(seq 1 199))...
EOF

check_output 'priority words, counts and retry policy' 'wl numbers <<IN
spec {}
spec {"priority": "low"}
spec {"priority": "Normal"}
spec {"priority": "MEDIUM"}
spec {"priority": "high"}
spec {"priority": "critical"}
spec {"priority": "42"}
spec {"priority": "-3"}
spec {"priority": 7}
spec {"priority": 8.0, "gpuRequirements": {"gpuCount": 4}}
spec {"gpuCount": 2, "gpuRequirements": {"gpuCount": 4}}
spec {"gpuRequirements": {"gpuIds": [5, 6, 7]}}
spec {"retryPolicy": {"maxRetries": 0, "backoffSeconds": 2.5}}
spec {"retryPolicy": {"maxRetries": null, "backoffSeconds": 60}}
IN' <<'EOF'
priority=0 gpus=1 retries=3 backoff=10
priority=1 gpus=1 retries=3 backoff=10
priority=5 gpus=1 retries=3 backoff=10
priority=5 gpus=1 retries=3 backoff=10
priority=10 gpus=1 retries=3 backoff=10
priority=100 gpus=1 retries=3 backoff=10
priority=42 gpus=1 retries=3 backoff=10
priority=-3 gpus=1 retries=3 backoff=10
priority=7 gpus=1 retries=3 backoff=10
priority=8 gpus=4 retries=3 backoff=10
priority=0 gpus=2 retries=3 backoff=10
priority=0 gpus=3 retries=3 backoff=10
priority=0 gpus=1 retries=0 backoff=2.5
priority=0 gpus=1 retries=3 backoff=60
EOF

check_output 'requests: plain, MIG with fallback, gpuIds, preferred node, memory' 'wl request <<IN
spec {}
spec {"gpuCount": 2, "gpuMemoryRequired": 40960, "priority": "high", "schedulingStrategy": "binpack"}
spec {"gpuRequirements": {"migProfile": "1g.10gb", "migFallback": ["2g.20gb", "3g.40gb"], "minGPUMemory": 1024}, "gpuMemoryRequired": 5}
spec {"gpuRequirements": {"migProfile": "3g.40gb", "exclusiveAccess": false}}
spec {"gpuRequirements": {"gpuIds": [2, 3]}}
spec {"gpuRequirements": {"gpuIds": [1.0], "gpuCount": 1.0}, "preferredNode": "node-7"}
{"metadata": {"name": "a\"b", "namespace": "n", "uid": "u"}, "spec": {"nodeSelector": {"pool": "x"}}}
IN' <<'EOF'
{"kind":"request","id":"ns/w1","gpus":1,"min_memory_mib":0,"exclusive":true,"priority":0,"created":"2025-01-02T03:04:05Z"}
{"kind":"request","id":"ns/w1","gpus":2,"min_memory_mib":40960,"exclusive":true,"priority":10,"created":"2025-01-02T03:04:05Z","strategy":"binpack"}
{"kind":"request","id":"ns/w1","gpus":1,"min_memory_mib":1024,"exclusive":true,"priority":0,"created":"2025-01-02T03:04:05Z","mig_profile":"1g.10gb","mig_fallback":["2g.20gb","3g.40gb"]}
{"kind":"request","id":"ns/w1","gpus":1,"min_memory_mib":0,"exclusive":false,"priority":0,"created":"2025-01-02T03:04:05Z","mig_profile":"3g.40gb","mig_fallback":[]}
{"kind":"request","id":"ns/w1","gpus":2,"min_memory_mib":0,"exclusive":true,"priority":0,"created":"2025-01-02T03:04:05Z","gpu_ids":[2,3]}
{"kind":"request","id":"ns/w1","gpus":1,"min_memory_mib":0,"exclusive":true,"priority":0,"created":"2025-01-02T03:04:05Z","gpu_ids":[1],"prefer_node":"node-7"}
{"kind":"request","id":"n/a\"b","gpus":1,"min_memory_mib":0,"exclusive":true,"priority":0,"node_selector":{"pool":"x"}}
EOF

check_output 'node selectors merged, the extra key added (and overriding)' 'wl request k8shazgpu.dev/admits-abc <<IN
spec {}
spec {"nodeSelector": {"pool": "a"}, "podTemplate": {"spec": {"nodeSelector": {"zone": "z", "pool": "a"}}}}
spec {"podTemplate": {"spec": {"nodeSelector": {"zone": "z"}}}}
spec {"nodeSelector": {"k8shazgpu.dev/admits-abc": "no", "b": "c"}}
IN' <<'EOF'
{"kind":"request","id":"ns/w1","gpus":1,"min_memory_mib":0,"exclusive":true,"priority":0,"created":"2025-01-02T03:04:05Z","node_selector":{"k8shazgpu.dev/admits-abc":"true"}}
{"kind":"request","id":"ns/w1","gpus":1,"min_memory_mib":0,"exclusive":true,"priority":0,"created":"2025-01-02T03:04:05Z","node_selector":{"pool":"a","zone":"z","k8shazgpu.dev/admits-abc":"true"}}
{"kind":"request","id":"ns/w1","gpus":1,"min_memory_mib":0,"exclusive":true,"priority":0,"created":"2025-01-02T03:04:05Z","node_selector":{"zone":"z","k8shazgpu.dev/admits-abc":"true"}}
{"kind":"request","id":"ns/w1","gpus":1,"min_memory_mib":0,"exclusive":true,"priority":0,"created":"2025-01-02T03:04:05Z","node_selector":{"b":"c","k8shazgpu.dev/admits-abc":"true"}}
EOF

# sched-pick reads the request as written: gpuIds with no gpuCount ask for
# that many GPUs, and the extra key keeps it off n2.
check_output 'sched-pick places the request' '
	cat >inv <<IN &&
{"kind":"node","name":"n2","labels":{"pool":"a"},"ready":true}
{"kind":"gpu","node":"n2","index":0,"uuid":"GPU-2","memory_mib":81920}
{"kind":"gpu","node":"n2","index":1,"uuid":"GPU-3","memory_mib":81920}
{"kind":"node","name":"n1","labels":{"pool":"a","k/x":"true"},"ready":true}
{"kind":"gpu","node":"n1","index":0,"uuid":"GPU-0","memory_mib":81920}
{"kind":"gpu","node":"n1","index":1,"uuid":"GPU-1","memory_mib":81920}
IN
	echo "spec {\"priority\": \"high\", \"gpuRequirements\": {\"gpuIds\": [0, 1]}, \"nodeSelector\": {\"pool\": \"a\"}}" |
		wl request k/x >>inv && sched-pick -S spread inv' <<'EOF'
{"kind":"placement","id":"ns/w1","node":"n1","devices":["GPU-0","GPU-1"],"indexes":[0,1],"strategy":"spread","score":2}
EOF

ctl='[{"key":"nvidia.com/gpu","operator":"Exists","effect":"NoSchedule"},{"key":"b","value":"c"}]'
check_output 'constraints: template tolerations, then the controller ones not listed' "wl constraints '$ctl' <<IN
spec {}
spec {\"podTemplate\": {\"spec\": {\"tolerations\": [{\"effect\": \"NoSchedule\", \"operator\": \"Exists\", \"key\": \"nvidia.com/gpu\"}, {\"key\": \"t\", \"operator\": \"Exists\"}]}}}
spec {\"podTemplate\": {\"spec\": {\"affinity\": {\"nodeAffinity\": {\"requiredDuringSchedulingIgnoredDuringExecution\": {\"nodeSelectorTerms\": [{\"matchExpressions\": [{\"key\": \"gpu\", \"operator\": \"In\", \"values\": [\"h200\"]}]}]}}}}}}
IN" <<'EOF'
{"terms":[],"tolerations":[{"effect":"NoSchedule","key":"nvidia.com/gpu","operator":"Exists"},{"key":"b","value":"c"}]}
{"terms":[],"tolerations":[{"effect":"NoSchedule","key":"nvidia.com/gpu","operator":"Exists"},{"key":"t","operator":"Exists"},{"key":"b","value":"c"}]}
{"terms":[{"matchExpressions":[{"key":"gpu","operator":"In","values":["h200"]}]}],"tolerations":[{"effect":"NoSchedule","key":"nvidia.com/gpu","operator":"Exists"},{"key":"b","value":"c"}]}
EOF

check 'constraints alike whatever the order of members' "
	wl constraints '[]' >a <<IN &&
spec {\"gpuCount\": 1, \"podTemplate\": {\"spec\": {\"tolerations\": [{\"key\": \"t\", \"operator\": \"Exists\"}], \"affinity\": {\"nodeAffinity\": {\"requiredDuringSchedulingIgnoredDuringExecution\": {\"nodeSelectorTerms\": [{\"matchExpressions\": [{\"key\": \"gpu\", \"operator\": \"In\", \"values\": [\"h200\"]}]}]}}}}}}
IN
	wl constraints '[{\"operator\": \"Exists\", \"key\": \"t\"}]' >b <<IN &&
spec {\"podTemplate\": {\"spec\": {\"affinity\": {\"nodeAffinity\": {\"requiredDuringSchedulingIgnoredDuringExecution\": {\"nodeSelectorTerms\": [{\"matchExpressions\": [{\"values\": [\"h200\"], \"operator\": \"In\", \"key\": \"gpu\"}]}]}}}, \"tolerations\": [{\"operator\": \"Exists\", \"key\": \"t\"}]}}}
IN
	cmp a b && test \$(wc -l <a) = 1"

# The Job of a workload placed on node n1, devices GPU-a and GPU-b.
job() { wl job n1 '["GPU-a","GPU-b"]' "$@"; }
check_output 'Job: no podTemplate runs the default image and the command' "job binpack - - '[]' <<IN
spec {\"command\": [\"sleep\", \"1\"], \"modelName\": \"llama\"}
spec {\"image\": \"busybox\"}
IN" <<'EOF'
{"apiVersion":"batch/v1","kind":"Job","metadata":{"annotations":{"canhazgpu.dev/devices":"[\"GPU-a\",\"GPU-b\"]","canhazgpu.dev/node":"n1","canhazgpu.dev/strategy":"binpack"},"labels":{"app.kubernetes.io/managed-by":"k8shazgpu","canhazgpu.dev/workload":"w1"},"name":"w1","namespace":"ns","ownerReferences":[{"apiVersion":"canhazgpu.dev/v1alpha1","blockOwnerDeletion":true,"controller":true,"kind":"GPUWorkload","name":"w1","uid":"u-1"}]},"spec":{"backoffLimit":0,"template":{"metadata":{"annotations":{"canhazgpu.dev/devices":"[\"GPU-a\",\"GPU-b\"]"},"labels":{"canhazgpu.dev/workload":"w1"}},"spec":{"affinity":{"nodeAffinity":{"requiredDuringSchedulingIgnoredDuringExecution":{"nodeSelectorTerms":[{"matchFields":[{"key":"metadata.name","operator":"In","values":["n1"]}]}]}}},"containers":[{"command":["sleep","1"],"env":[{"name":"NVIDIA_VISIBLE_DEVICES","value":"GPU-a,GPU-b"},{"name":"MODEL_NAME","value":"llama"}],"image":"nvidia/cuda:12.4.1-base-ubuntu22.04","name":"main","resources":{"limits":{"nvidia.com/gpu":"2"},"requests":{"nvidia.com/gpu":"2"}}}],"restartPolicy":"Never","tolerations":[]}}}}
{"apiVersion":"batch/v1","kind":"Job","metadata":{"annotations":{"canhazgpu.dev/devices":"[\"GPU-a\",\"GPU-b\"]","canhazgpu.dev/node":"n1","canhazgpu.dev/strategy":"binpack"},"labels":{"app.kubernetes.io/managed-by":"k8shazgpu","canhazgpu.dev/workload":"w1"},"name":"w1","namespace":"ns","ownerReferences":[{"apiVersion":"canhazgpu.dev/v1alpha1","blockOwnerDeletion":true,"controller":true,"kind":"GPUWorkload","name":"w1","uid":"u-1"}]},"spec":{"backoffLimit":0,"template":{"metadata":{"annotations":{"canhazgpu.dev/devices":"[\"GPU-a\",\"GPU-b\"]"},"labels":{"canhazgpu.dev/workload":"w1"}},"spec":{"affinity":{"nodeAffinity":{"requiredDuringSchedulingIgnoredDuringExecution":{"nodeSelectorTerms":[{"matchFields":[{"key":"metadata.name","operator":"In","values":["n1"]}]}]}}},"containers":[{"env":[{"name":"NVIDIA_VISIBLE_DEVICES","value":"GPU-a,GPU-b"}],"image":"busybox","name":"main","resources":{"limits":{"nvidia.com/gpu":"2"},"requests":{"nvidia.com/gpu":"2"}}}],"restartPolicy":"Never","tolerations":[]}}}}
EOF

# From here on only the pod template's spec is shown.
pod() { jq -c .spec.template.spec; }
check_output 'Job: two containers, only the first gets the devices; the others lose theirs' "job binpack - img '[]' <<IN | pod
spec {\"podTemplate\": {\"metadata\": {\"labels\": {\"app\": \"x\"}}, \"spec\": {\"serviceAccountName\": \"sa\", \"initContainers\": [{\"name\": \"i\", \"image\": \"init\", \"resources\": {\"limits\": {\"nvidia.com/gpu\": \"1\"}}}], \"containers\": [{\"name\": \"a\", \"image\": \"ia\", \"env\": [{\"name\": \"X\", \"value\": \"1\"}, {\"name\": \"NVIDIA_VISIBLE_DEVICES\", \"value\": \"all\"}], \"resources\": {\"limits\": {\"cpu\": \"2\", \"nvidia.com/gpu\": \"8\"}, \"requests\": {\"nvidia.com/mig-1g.10gb\": \"1\"}}}, {\"name\": \"b\", \"image\": \"ib\", \"env\": [{\"name\": \"NVIDIA_VISIBLE_DEVICES\", \"value\": \"all\"}], \"resources\": {\"limits\": {\"nvidia.com/gpu\": \"1\", \"memory\": \"1Gi\"}}}]}}}
IN" <<'EOF'
{"affinity":{"nodeAffinity":{"requiredDuringSchedulingIgnoredDuringExecution":{"nodeSelectorTerms":[{"matchFields":[{"key":"metadata.name","operator":"In","values":["n1"]}]}]}}},"containers":[{"env":[{"name":"X","value":"1"},{"name":"NVIDIA_VISIBLE_DEVICES","value":"GPU-a,GPU-b"}],"image":"ia","name":"a","resources":{"limits":{"cpu":"2","nvidia.com/gpu":"2"},"requests":{"nvidia.com/gpu":"2"}}},{"env":[],"image":"ib","name":"b","resources":{"limits":{"memory":"1Gi"}}}],"initContainers":[{"image":"init","name":"i","resources":{"limits":{}}}],"restartPolicy":"Never","serviceAccountName":"sa","tolerations":[]}
EOF

check_output 'Job: the template labels kept; a MIG placement asks for its profile' "wl job n2 '[\"MIG-1\"]' best_fit 1g.10gb - '[]' <<IN | jq -c '[.spec.template.metadata, .spec.template.spec.containers[0].resources]'
spec {\"podTemplate\": {\"metadata\": {\"labels\": {\"app\": \"x\"}, \"annotations\": {\"note\": \"y\"}}, \"spec\": {\"containers\": [{\"name\": \"a\", \"image\": \"ia\"}]}}}
IN" <<'EOF'
[{"annotations":{"canhazgpu.dev/devices":"[\"MIG-1\"]","note":"y"},"labels":{"app":"x","canhazgpu.dev/workload":"w1"}},{"limits":{"nvidia.com/mig-1g.10gb":"1"},"requests":{"nvidia.com/mig-1g.10gb":"1"}}]
EOF

check_output 'Job: tolerations equal to the controller ones listed once' "job spread - - '$ctl' <<IN | pod
spec {\"podTemplate\": {\"spec\": {\"tolerations\": [{\"operator\": \"Exists\", \"key\": \"nvidia.com/gpu\", \"effect\": \"NoSchedule\"}], \"containers\": [{\"name\": \"a\", \"image\": \"ia\"}]}}}
IN" <<'EOF'
{"affinity":{"nodeAffinity":{"requiredDuringSchedulingIgnoredDuringExecution":{"nodeSelectorTerms":[{"matchFields":[{"key":"metadata.name","operator":"In","values":["n1"]}]}]}}},"containers":[{"env":[{"name":"NVIDIA_VISIBLE_DEVICES","value":"GPU-a,GPU-b"}],"image":"ia","name":"a","resources":{"limits":{"nvidia.com/gpu":"2"},"requests":{"nvidia.com/gpu":"2"}}}],"restartPolicy":"Never","tolerations":[{"effect":"NoSchedule","key":"nvidia.com/gpu","operator":"Exists"},{"key":"b","value":"c"}]}
EOF

check_output 'Job: the template affinity kept, the pin ANDed into each required term' "job spread - - '[]' <<IN | pod
spec {\"podTemplate\": {\"spec\": {\"affinity\": {\"podAntiAffinity\": {\"x\": 1}, \"nodeAffinity\": {\"preferredDuringSchedulingIgnoredDuringExecution\": [{\"weight\": 1}], \"requiredDuringSchedulingIgnoredDuringExecution\": {\"nodeSelectorTerms\": [{\"matchExpressions\": [{\"key\": \"gpu\", \"operator\": \"In\", \"values\": [\"h200\"]}]}, {\"matchFields\": [{\"key\": \"metadata.name\", \"operator\": \"NotIn\", \"values\": [\"n9\"]}]}]}}}, \"containers\": [{\"name\": \"a\", \"image\": \"ia\"}]}}}
IN" <<'EOF'
{"affinity":{"nodeAffinity":{"preferredDuringSchedulingIgnoredDuringExecution":[{"weight":1}],"requiredDuringSchedulingIgnoredDuringExecution":{"nodeSelectorTerms":[{"matchExpressions":[{"key":"gpu","operator":"In","values":["h200"]}],"matchFields":[{"key":"metadata.name","operator":"In","values":["n1"]}]},{"matchFields":[{"key":"metadata.name","operator":"NotIn","values":["n9"]},{"key":"metadata.name","operator":"In","values":["n1"]}]}]}},"podAntiAffinity":{"x":1}},"containers":[{"env":[{"name":"NVIDIA_VISIBLE_DEVICES","value":"GPU-a,GPU-b"}],"image":"ia","name":"a","resources":{"limits":{"nvidia.com/gpu":"2"},"requests":{"nvidia.com/gpu":"2"}}}],"restartPolicy":"Never","tolerations":[]}
EOF

check_output 'Job: OnFailure kept, any other restart policy is Never' "job spread - - '[]' <<IN | jq -r .spec.template.spec.restartPolicy
spec {\"podTemplate\": {\"spec\": {\"restartPolicy\": \"OnFailure\", \"containers\": [{\"name\": \"a\", \"image\": \"ia\"}]}}}
spec {\"podTemplate\": {\"spec\": {\"restartPolicy\": \"Always\", \"containers\": [{\"name\": \"a\", \"image\": \"ia\"}]}}}
IN" <<'EOF'
OnFailure
Never
EOF

check_output 'Job: no devices, no strategy: no strategy annotation, counts of 0' "wl job n1 '[]' - - - '[]' <<IN | jq -c '[.metadata.annotations, .spec.template.spec.containers[0].resources]'
spec {}
IN" <<'EOF'
[{"canhazgpu.dev/devices":"[]","canhazgpu.dev/node":"n1"},{"limits":{"nvidia.com/gpu":"0"},"requests":{"nvidia.com/gpu":"0"}}]
EOF

# DRA (sched-queue -A dra): the MIG chain a claim may take, the request
# the engine gets for it, the claim template and the Job that uses it.
check_output 'chain: migFallback when given (even []), else the built-in chain; canonical, once, at most 8' 'wl chain <<IN
spec {"gpuRequirements": {"migProfile": "2g.20gb"}}
spec {"gpuRequirements": {"migProfile": "3g.71gb"}}
spec {"gpuRequirements": {"migProfile": "1g.10gb"}}
spec {"gpuRequirements": {"migProfile": "2g.20gb", "migFallback": []}}
spec {"gpuRequirements": {"migProfile": "2g.20gb", "migFallback": null}}
spec {"gpuRequirements": {"migProfile": "1c.3g.40gb", "migFallback": ["3g.40gb", "1c.3g.40gb", "2g.20gb", "2g.20gb", "1g.10gb+me", "1g.10gb", "1g.5gb", "1g.6gb", "1g.7gb"]}}
spec {"gpuCount": 2}
IN' <<'EOF'
["2g.20gb","1g.10gb"]
["3g.71gb","2g.35gb","1g.18gb"]
["1g.10gb"]
["2g.20gb"]
["2g.20gb","1g.10gb"]
["1c.3g.40gb","3g.40gb","2g.20gb","1g.10gb+me","1g.10gb","1g.5gb","1g.6gb","1g.7gb"]
[]
EOF

check_output 'chain: no built-in chains, no fallback but migFallback' 'wl chain none <<IN
spec {"gpuRequirements": {"migProfile": "2g.20gb"}}
spec {"gpuRequirements": {"migProfile": "2g.20gb", "migFallback": ["1g.10gb"]}}
IN' <<'EOF'
["2g.20gb"]
["2g.20gb","1g.10gb"]
EOF

check_output 'request for a claim: the chain as mig_fallback, exclusive always' 'wl request-dra k/x <<IN
spec {"gpuRequirements": {"migProfile": "2g.20gb", "exclusiveAccess": false}}
spec {"gpuRequirements": {"migProfile": "2g.20gb", "migFallback": []}}
spec {"gpuCount": 2, "gpuRequirements": {"exclusiveAccess": false}, "gpuMemoryRequired": 100}
IN' <<'EOF'
{"kind":"request","id":"ns/w1","gpus":1,"min_memory_mib":0,"exclusive":true,"priority":0,"created":"2025-01-02T03:04:05Z","mig_profile":"2g.20gb","mig_fallback":["1g.10gb"],"node_selector":{"k/x":"true"}}
{"kind":"request","id":"ns/w1","gpus":1,"min_memory_mib":0,"exclusive":true,"priority":0,"created":"2025-01-02T03:04:05Z","mig_profile":"2g.20gb","mig_fallback":[],"node_selector":{"k/x":"true"}}
{"kind":"request","id":"ns/w1","gpus":2,"min_memory_mib":100,"exclusive":true,"priority":0,"created":"2025-01-02T03:04:05Z","node_selector":{"k/x":"true"}}
EOF

check_output 'claim template, whole GPUs: exactly the devices placed' "wl template '[\"GPU-a\",\"GPU-b\"]' - <<IN
spec {\"gpuCount\": 2}
IN" <<'EOF'
{"apiVersion":"resource.k8s.io/v1","kind":"ResourceClaimTemplate","metadata":{"labels":{"app.kubernetes.io/managed-by":"k8shazgpu","canhazgpu.dev/workload":"w1"},"name":"w1","namespace":"ns","ownerReferences":[{"apiVersion":"canhazgpu.dev/v1alpha1","blockOwnerDeletion":true,"controller":true,"kind":"GPUWorkload","name":"w1","uid":"u-1"}]},"spec":{"metadata":{"labels":{"canhazgpu.dev/workload":"w1"}},"spec":{"devices":{"requests":[{"exactly":{"allocationMode":"ExactCount","count":2,"deviceClassName":"gpu.canhazgpu.dev","selectors":[{"cel":{"expression":"device.attributes[\"gpu.canhazgpu.dev\"].uuid in [\"GPU-a\", \"GPU-b\"]"}}]},"name":"gpus"}]}}}}
EOF

# Placed on the fallback profile, the template still starts from the one
# asked: kube-scheduler takes the largest it finds free.
check_output 'claim template, MIG: firstAvailable along the chain' "wl template '[\"MIG-1\",\"MIG-2\"]' 1g.10gb <<IN
spec {\"gpuCount\": 2, \"gpuRequirements\": {\"migProfile\": \"2g.20gb\"}}
IN" <<'EOF'
{"apiVersion":"resource.k8s.io/v1","kind":"ResourceClaimTemplate","metadata":{"labels":{"app.kubernetes.io/managed-by":"k8shazgpu","canhazgpu.dev/workload":"w1"},"name":"w1","namespace":"ns","ownerReferences":[{"apiVersion":"canhazgpu.dev/v1alpha1","blockOwnerDeletion":true,"controller":true,"kind":"GPUWorkload","name":"w1","uid":"u-1"}]},"spec":{"metadata":{"labels":{"canhazgpu.dev/workload":"w1"}},"spec":{"devices":{"requests":[{"firstAvailable":[{"allocationMode":"ExactCount","count":2,"deviceClassName":"mig.canhazgpu.dev","name":"p0","selectors":[{"cel":{"expression":"device.attributes[\"gpu.canhazgpu.dev\"].profile == \"2g.20gb\""}}]},{"allocationMode":"ExactCount","count":2,"deviceClassName":"mig.canhazgpu.dev","name":"p1","selectors":[{"cel":{"expression":"device.attributes[\"gpu.canhazgpu.dev\"].profile == \"1g.10gb\""}}]}],"name":"gpus"}]}}}}
EOF

sel() { jq -r '.spec.spec.devices.requests[0] | (.exactly // .firstAvailable[])
	| "\(.name // "-") \(.count) \(.selectors[0].cel.expression)"'; }
check_output 'claim template: CEL strings quoted; a chain of one without built-in chains' "
	printf '%s\n' 'spec {}' | wl template '[\"GPU-\\\"x\\\\y\"]' - | sel &&
	printf '%s\n' 'spec {\"gpuRequirements\": {\"migProfile\": \"3g.71gb\"}}' | wl template '[\"MIG-1\"]' 3g.71gb none | sel" <<'EOF'
- 1 device.attributes["gpu.canhazgpu.dev"].uuid in ["GPU-\"x\\y"]
p0 1 device.attributes["gpu.canhazgpu.dev"].profile == "3g.71gb"
EOF

check_output 'Job with a claim: no nvidia.com/ resources nor NVIDIA_VISIBLE_DEVICES anywhere; the claim named gpus replaced' "wl job n1 '[\"MIG-1\"]' binpack 1g.10gb - '[]' w1 <<IN | jq -c '[.metadata.annotations, .spec.template.metadata, .spec.template.spec]'
spec {\"modelName\": \"llama\", \"gpuRequirements\": {\"migProfile\": \"2g.20gb\"}, \"podTemplate\": {\"metadata\": {\"annotations\": {\"note\": \"y\", \"canhazgpu.dev/devices\": \"all\"}}, \"spec\": {\"resourceClaims\": [{\"name\": \"gpus\", \"resourceClaimName\": \"old\"}, {\"name\": \"shm\", \"resourceClaimName\": \"s\"}], \"initContainers\": [{\"name\": \"i\", \"image\": \"init\", \"env\": [{\"name\": \"NVIDIA_VISIBLE_DEVICES\", \"value\": \"all\"}]}], \"containers\": [{\"name\": \"a\", \"image\": \"ia\", \"env\": [{\"name\": \"X\", \"value\": \"1\"}, {\"name\": \"NVIDIA_VISIBLE_DEVICES\", \"value\": \"all\"}], \"resources\": {\"claims\": [{\"name\": \"gpus\"}, {\"name\": \"shm\"}], \"limits\": {\"cpu\": \"2\", \"nvidia.com/gpu\": \"8\"}, \"requests\": {\"nvidia.com/mig-1g.10gb\": \"1\"}}}, {\"name\": \"b\", \"image\": \"ib\", \"resources\": {\"limits\": {\"nvidia.com/gpu\": \"1\"}}}]}}}
IN" <<'EOF'
[{"canhazgpu.dev/devices":"[\"MIG-1\"]","canhazgpu.dev/node":"n1","canhazgpu.dev/strategy":"binpack"},{"annotations":{"note":"y"},"labels":{"canhazgpu.dev/workload":"w1"}},{"affinity":{"nodeAffinity":{"requiredDuringSchedulingIgnoredDuringExecution":{"nodeSelectorTerms":[{"matchFields":[{"key":"metadata.name","operator":"In","values":["n1"]}]}]}}},"containers":[{"env":[{"name":"X","value":"1"},{"name":"MODEL_NAME","value":"llama"}],"image":"ia","name":"a","resources":{"claims":[{"name":"shm"},{"name":"gpus"}],"limits":{"cpu":"2"},"requests":{}}},{"image":"ib","name":"b","resources":{"limits":{}}}],"initContainers":[{"env":[],"image":"init","name":"i"}],"resourceClaims":[{"name":"shm","resourceClaimName":"s"},{"name":"gpus","resourceClaimTemplateName":"w1"}],"restartPolicy":"Never","tolerations":[]}]
EOF

check_output 'Job with a claim, no podTemplate: the default container gets the claim' "wl job n1 '[\"GPU-a\"]' spread - - '[]' w1 <<IN | jq -c .spec.template.spec
spec {\"command\": [\"sleep\", \"1\"]}
IN" <<'EOF'
{"affinity":{"nodeAffinity":{"requiredDuringSchedulingIgnoredDuringExecution":{"nodeSelectorTerms":[{"matchFields":[{"key":"metadata.name","operator":"In","values":["n1"]}]}]}}},"containers":[{"command":["sleep","1"],"image":"nvidia/cuda:12.4.1-base-ubuntu22.04","name":"main","resources":{"claims":[{"name":"gpus"}]}}],"resourceClaims":[{"name":"gpus","resourceClaimTemplateName":"w1"}],"restartPolicy":"Never","tolerations":[]}
EOF

# The other functions expect a workload wl_problem accepted; on others they
# answer something (one line each) and neither crash nor leak.
cat >hostile <<'IN'
{}
{"metadata": 5, "spec": 7}
{"metadata": {"name": 1}, "spec": {"podTemplate": {"spec": {"containers": [1, "x", {"env": 5, "resources": []}], "initContainers": [3], "tolerations": "x", "affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [1, {"matchFields": 3}]}}}}, "metadata": {"labels": 1}}, "gpuRequirements": {"gpuIds": [1e300, -1, "x"], "migFallback": 3, "migProfile": 4}, "nodeSelector": [1], "priority": 1e300, "retryPolicy": {"maxRetries": -1e300}}}
spec {"priority": "99999999999999999999", "gpuCount": 1e300, "gpuRequirements": {"gpuCount": -9223372036854775808}}
spec {"gpuCount": 9223372036854775807, "podTemplate": {"spec": {"affinity": 3, "containers": [{"resources": {"limits": 1}}]}}}
IN
check 'hostile shapes: one line each, no crash' '
	for v in problem numbers request "request k" "constraints 5" "constraints [1,1]"; do
		wl $v <"$SCRATCH/hostile" >out || exit 1; test $(wc -l <out) = 5 || exit 1
	done &&
	wl job n "[\"a\",1]" s 1g.10gb img "[1,1,{}]" <"$SCRATCH/hostile" >out && test $(wc -l <out) = 5 &&
	wl job n 5 - - - null <"$SCRATCH/hostile" >out && test $(wc -l <out) = 5 &&
	wl job n "[\"a\",1]" s 1g.10gb img "[1,1,{}]" t <"$SCRATCH/hostile" >out && test $(wc -l <out) = 5 &&
	for v in chain "chain none" request-dra "request-dra k"; do
		wl $v <"$SCRATCH/hostile" >out || exit 1; test $(wc -l <out) = 5 || exit 1
	done &&
	wl template "[\"a\",1]" - <"$SCRATCH/hostile" >out && test $(wc -l <out) = 5 &&
	wl template 5 1g.10gb <"$SCRATCH/hostile" >out && test $(wc -l <out) = 5 &&
	wl template "[]" 1g.10gb none <"$SCRATCH/hostile" >out && test $(wc -l <out) = 5'

done_testing
