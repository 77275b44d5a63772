#!/bin/sh
# lib/sqe_keep through t/unit/sqe: what the controller's engine keeps of
# each object its watches bring, so that a workload costs what is kept
# and not what came: no managedFields, annotations (and labels, but a
# Node's) only under the project's prefixes, of owners their kind and uid,
# no resourceVersion (nothing reads one), no Job spec, labels, generation or
# creation time, and of its status what says how it runs or ended, of a
# Node's status its conditions alone. The same watches on a cluster are t/9400.
. "$(dirname "$0")/lib.sh"

big=$(head -c 1048576 /dev/zero | tr '\0' x)
printf '%s\n' "{\"apiVersion\":\"canhazgpu.dev/v1alpha1\",\"kind\":\"GPUWorkload\",\"metadata\":{\"name\":\"w\",\"namespace\":\"t\",\"uid\":\"u1\",\"generation\":2,\"resourceVersion\":\"7\",\"creationTimestamp\":\"2026-03-01T00:00:00Z\",\"labels\":{\"team\":\"a\",\"canhazgpu.dev/queue\":\"q\"},\"annotations\":{\"kubectl.kubernetes.io/last-applied-configuration\":\"$big\",\"canhazgpu.dev/strategy\":\"packed\",\"canhazgpu.devx\":\"no\"},\"managedFields\":[{\"manager\":\"kubectl\"}],\"finalizers\":[\"f\"]},\"spec\":{\"gpuCount\":1},\"status\":{\"phase\":\"Pending\"}}" >wl.json
check_output 'a workload: a 1 MiB annotation and what no one reads are left out' 'unit sqe keep gpuworkloads <wl.json' <<'EOF'
{"apiVersion":"canhazgpu.dev/v1alpha1","kind":"GPUWorkload","metadata":{"name":"w","namespace":"t","uid":"u1","generation":2,"creationTimestamp":"2026-03-01T00:00:00Z","labels":{"canhazgpu.dev/queue":"q"},"annotations":{"canhazgpu.dev/strategy":"packed"}},"spec":{"gpuCount":1},"status":{"phase":"Pending"}}
EOF

cat >job.json <<'EOF'
{"apiVersion":"batch/v1","kind":"Job","metadata":{"name":"w","namespace":"t","uid":"j1","labels":{"batch.kubernetes.io/controller-uid":"j1","app.kubernetes.io/managed-by":"k8shazgpu"},"annotations":{"canhazgpu.dev/node":"n1","canhazgpu.dev/devices":"0","other":"x"},"ownerReferences":[{"apiVersion":"canhazgpu.dev/v1alpha1","kind":"GPUWorkload","name":"w","uid":"u1","controller":true,"blockOwnerDeletion":true}],"deletionTimestamp":"2026-03-01T00:00:01Z"},"spec":{"template":{"spec":{"containers":[]}}},"status":{"active":1,"ready":1,"startTime":"2026-03-01T00:00:00Z","uncountedTerminatedPods":{},"conditions":[{"type":"Failed","status":"True","reason":"BackoffLimitExceeded","message":"m","lastProbeTime":"2026-03-01T00:00:01Z","lastTransitionTime":"2026-03-01T00:00:01Z"}]}}
EOF
check_output 'a Job: no spec and no labels, each owner as kind and uid, our annotations, its readiness and conditions' 'unit sqe keep jobs <job.json' <<'EOF'
{"apiVersion":"batch/v1","kind":"Job","metadata":{"name":"w","namespace":"t","uid":"j1","annotations":{"canhazgpu.dev/node":"n1","canhazgpu.dev/devices":"0"},"ownerReferences":[{"kind":"GPUWorkload","uid":"u1"}],"deletionTimestamp":"2026-03-01T00:00:01Z"},"status":{"ready":1,"conditions":[{"type":"Failed","status":"True","message":"m"}]}}
EOF

cat >node.json <<'EOF'
{"apiVersion":"v1","kind":"Node","metadata":{"name":"n1","labels":{"pool":"a","canhazgpu.dev/gpu":"true"},"annotations":{"agentaflow.gpu/devices":"[]","canhazgpu.dev/cost":"2","node.alpha.kubernetes.io/ttl":"0"},"managedFields":[]},"spec":{"taints":[{"key":"k","effect":"NoSchedule"}]},"status":{"conditions":[{"type":"Ready","status":"True"}],"images":[{"names":["a"]}],"capacity":{"cpu":"2"}}}
EOF
check_output 'a Node: every label (affinity reads them), our annotations, its conditions' 'unit sqe keep nodes <node.json' <<'EOF'
{"apiVersion":"v1","kind":"Node","metadata":{"name":"n1","labels":{"pool":"a","canhazgpu.dev/gpu":"true"},"annotations":{"agentaflow.gpu/devices":"[]","canhazgpu.dev/cost":"2"}},"spec":{"taints":[{"key":"k","effect":"NoSchedule"}]},"status":{"conditions":[{"type":"Ready","status":"True"}]}}
EOF

printf '%s\n' '{"a":' '{"metadata":{"name":"c"},"data":{"strategy":"packed"}}' >bad.json
check_output 'a line that is no JSON is said; the next is read' 'unit sqe keep configmaps <bad.json' <<'EOF'
bad: unexpected token near end of file
{"metadata":{"name":"c"},"data":{"strategy":"packed"}}
EOF

check_output 'a feed that is not one is refused' 'unit sqe keep pod </dev/null 2>&1; echo "exit $?"' <<'EOF'
unit/sqe: no feed pod
exit 2
EOF

done_testing
