#!/bin/sh
# Each jq program of scripts/jq on a fixture: its input NDJSON and its
# arguments as the scripts give them, its exact output. The modules
# (cache.jq, host.jq) through include, as the programs load them.
. "$(dirname "$0")/lib.sh"

J=$TOP/scripts/jq
export J

# gpus.jq
mkdir c1
cat >c1/nodes <<'EOF'
{"apiVersion":"v1","kind":"Node","metadata":{"name":"a","annotations":{"agentaflow.gpu/devices":"[{\"index\": 0, \"uuid\": \"GPU-a0\", \"health\": \"ok\"}, {\"index\": 1, \"uuid\": \"GPU-a1\", \"health\": \"ok\"}, {\"index\": 2, \"uuid\": \"GPU-a2\", \"health\": \"ok\", \"held\": true}]","canhazgpu.dev/host-holds":"[{\"gpu\": 2, \"user\": \"bob\", \"type\": \"manual\"}]"}}}
{"apiVersion":"v1","kind":"Node","metadata":{"name":"b","annotations":{"agentaflow.gpu/devices":"[{\"index\": 0, \"uuid\": \"GPU-b0\", \"health\": \"ok\", \"mig_enabled\": true}, {\"index\": 0, \"uuid\": \"MIG-b0-1\", \"mig\": \"1g.18gb\", \"health\": \"ok\"}, {\"index\": 0, \"uuid\": \"MIG-b0-2\", \"mig\": \"1g.18gb\", \"health\": \"ok\"}]"}}}
EOF
cat >c1/slices <<'EOF'
{"apiVersion":"resource.k8s.io/v1","kind":"ResourceSlice","spec":{"driver":"gpu.canhazgpu.dev","pool":{"name":"a"},"devices":[{"name":"gpu-0"},{"name":"gpu-1"}]}}
{"apiVersion":"resource.k8s.io/v1","kind":"ResourceSlice","spec":{"driver":"gpu.canhazgpu.dev","pool":{"name":"b"},"devices":[{"name":"1g.18gb-0"},{"name":"1g.18gb-1"}]}}
EOF
cat >c1/claims <<'EOF'
{"apiVersion":"resource.k8s.io/v1","kind":"ResourceClaim","metadata":{"namespace":"ns1","name":"c1","uid":"u-c1"},"status":{"allocation":{"devices":{"results":[{"driver":"gpu.canhazgpu.dev","pool":"a","device":"gpu-1"}]}},"reservedFor":[{"resource":"pods","name":"p1"}]}}
{"apiVersion":"resource.k8s.io/v1","kind":"ResourceClaim","metadata":{"namespace":"ns1","name":"c2","uid":"u-c2"},"status":{"allocation":{"devices":{"results":[{"driver":"gpu.canhazgpu.dev","pool":"b","device":"1g.18gb-0"}]}}}}
{"apiVersion":"resource.k8s.io/v1","kind":"ResourceClaim","metadata":{"namespace":"ns1","name":"c3","uid":"u-c3"},"status":{}}
{"apiVersion":"resource.k8s.io/v1","kind":"ResourceClaim","metadata":{"namespace":"ns2","name":"c4","uid":"u-c4"},"status":{"allocation":{"devices":{"results":[{"driver":"gpu.canhazgpu.dev","pool":"a","device":"gpu-0"}]}}}}
EOF
cat >c1/pods <<'EOF'
{"apiVersion":"v1","kind":"Pod","metadata":{"namespace":"ns1","name":"p1"},"spec":{"resourceClaims":[{"name":"gpus","resourceClaimName":"c1"}]},"status":{"phase":"Running"}}
{"apiVersion":"v1","kind":"Pod","metadata":{"namespace":"ns1","name":"p2"},"spec":{"resourceClaims":[{"name":"gpus","resourceClaimName":"c2"}]},"status":{"phase":"Pending"}}
EOF
check_output 'gpus.jq: per node its GPUs free, held, allocated; the claims of ns1' 'cd c1 && jq -L "$J" -f "$J/gpus.jq" -n -c --slurpfile nodes nodes --slurpfile slices slices --slurpfile claims claims --slurpfile pods pods --arg ns ns1 --argjson all false --arg only_node '"'"''"'"' --arg only_claim '"'"''"'"' | jq -S .' <<'EOF'
{
  "claims": [
    {
      "gpus": [
        1
      ],
      "name": "c1",
      "namespace": "ns1",
      "node": "a",
      "phase": "Running",
      "pod": "p1",
      "status": "Allocated"
    },
    {
      "gpus": [
        "1g.18gb-0"
      ],
      "name": "c2",
      "namespace": "ns1",
      "node": "b",
      "phase": "Pending",
      "pod": "p2",
      "status": "Allocated"
    },
    {
      "gpus": [],
      "name": "c3",
      "namespace": "ns1",
      "node": null,
      "phase": null,
      "pod": null,
      "status": "Pending"
    }
  ],
  "gpu_nodes": [
    {
      "allocated": [
        {
          "claim": "c4",
          "device": "gpu-0",
          "gpu": 0,
          "namespace": "ns2",
          "node": "a",
          "pod": null
        },
        {
          "claim": "c1",
          "device": "gpu-1",
          "gpu": 1,
          "namespace": "ns1",
          "node": "a",
          "pod": "p1"
        }
      ],
      "available": [],
      "available_mig": [],
      "held": [
        {
          "gpu": 2,
          "type": "manual",
          "user": "bob"
        }
      ],
      "mig": false,
      "name": "a",
      "total": 3
    },
    {
      "allocated": [
        {
          "claim": "c2",
          "device": "1g.18gb-0",
          "gpu": null,
          "namespace": "ns1",
          "node": "b",
          "pod": "p2"
        }
      ],
      "available": [],
      "available_mig": [
        "1g.18gb-1"
      ],
      "held": [],
      "mig": true,
      "name": "b",
      "total": 1
    }
  ],
  "summary": {
    "allocated": 2,
    "available": 0,
    "held": 1,
    "mig_allocated": 1,
    "mig_available": 1,
    "total": 4
  }
}
EOF

# gpus.jq
mkdir c2
cat >c2/nodes <<'EOF'
{"apiVersion":"v1","kind":"Node","metadata":{"name":"a","annotations":{"agentaflow.gpu/devices":"[{\"index\": 0, \"uuid\": \"GPU-a0\", \"health\": \"ok\"}, {\"index\": 1, \"uuid\": \"GPU-a1\", \"health\": \"ok\"}, {\"index\": 2, \"uuid\": \"GPU-a2\", \"health\": \"ok\", \"held\": true}]","canhazgpu.dev/host-holds":"[{\"gpu\": 2, \"user\": \"bob\", \"type\": \"manual\"}]"}}}
{"apiVersion":"v1","kind":"Node","metadata":{"name":"b","annotations":{"agentaflow.gpu/devices":"[{\"index\": 0, \"uuid\": \"GPU-b0\", \"health\": \"ok\", \"mig_enabled\": true}, {\"index\": 0, \"uuid\": \"MIG-b0-1\", \"mig\": \"1g.18gb\", \"health\": \"ok\"}, {\"index\": 0, \"uuid\": \"MIG-b0-2\", \"mig\": \"1g.18gb\", \"health\": \"ok\"}]"}}}
EOF
cat >c2/slices <<'EOF'
{"apiVersion":"resource.k8s.io/v1","kind":"ResourceSlice","spec":{"driver":"gpu.canhazgpu.dev","pool":{"name":"a"},"devices":[{"name":"gpu-0"},{"name":"gpu-1"}]}}
{"apiVersion":"resource.k8s.io/v1","kind":"ResourceSlice","spec":{"driver":"gpu.canhazgpu.dev","pool":{"name":"b"},"devices":[{"name":"1g.18gb-0"},{"name":"1g.18gb-1"}]}}
EOF
cat >c2/claims <<'EOF'
{"apiVersion":"resource.k8s.io/v1","kind":"ResourceClaim","metadata":{"namespace":"ns1","name":"c1","uid":"u-c1"},"status":{"allocation":{"devices":{"results":[{"driver":"gpu.canhazgpu.dev","pool":"a","device":"gpu-1"}]}},"reservedFor":[{"resource":"pods","name":"p1"}]}}
{"apiVersion":"resource.k8s.io/v1","kind":"ResourceClaim","metadata":{"namespace":"ns1","name":"c2","uid":"u-c2"},"status":{"allocation":{"devices":{"results":[{"driver":"gpu.canhazgpu.dev","pool":"b","device":"1g.18gb-0"}]}}}}
{"apiVersion":"resource.k8s.io/v1","kind":"ResourceClaim","metadata":{"namespace":"ns1","name":"c3","uid":"u-c3"},"status":{}}
{"apiVersion":"resource.k8s.io/v1","kind":"ResourceClaim","metadata":{"namespace":"ns2","name":"c4","uid":"u-c4"},"status":{"allocation":{"devices":{"results":[{"driver":"gpu.canhazgpu.dev","pool":"a","device":"gpu-0"}]}}}}
EOF
cat >c2/pods <<'EOF'
{"apiVersion":"v1","kind":"Pod","metadata":{"namespace":"ns1","name":"p1"},"spec":{"resourceClaims":[{"name":"gpus","resourceClaimName":"c1"}]},"status":{"phase":"Running"}}
{"apiVersion":"v1","kind":"Pod","metadata":{"namespace":"ns1","name":"p2"},"spec":{"resourceClaims":[{"name":"gpus","resourceClaimName":"c2"}]},"status":{"phase":"Pending"}}
EOF
check_output 'gpus.jq: -A, one node, one claim' 'cd c2 && jq -L "$J" -f "$J/gpus.jq" -n -c --slurpfile nodes nodes --slurpfile slices slices --slurpfile claims claims --slurpfile pods pods --arg ns ns1 --argjson all true --arg only_node a --arg only_claim c4 ' <<'EOF'
{"summary":{"total":3,"available":0,"allocated":2,"held":1,"mig_available":0,"mig_allocated":0},"gpu_nodes":[{"name":"a","total":3,"mig":false,"available":[],"available_mig":[],"held":[{"gpu":2,"user":"bob","type":"manual"}],"allocated":[{"gpu":0,"node":"a","device":"gpu-0","namespace":"ns2","claim":"c4","pod":null},{"gpu":1,"node":"a","device":"gpu-1","namespace":"ns1","claim":"c1","pod":"p1"}]}],"claims":[{"name":"c4","namespace":"ns2","status":"Allocated","node":"a","gpus":[0],"pod":null,"phase":null}]}
EOF

# gpus-text.jq
mkdir c3
cat >c3/nodes <<'EOF'
{"apiVersion":"v1","kind":"Node","metadata":{"name":"a","annotations":{"agentaflow.gpu/devices":"[{\"index\": 0, \"uuid\": \"GPU-a0\", \"health\": \"ok\"}, {\"index\": 1, \"uuid\": \"GPU-a1\", \"health\": \"ok\"}, {\"index\": 2, \"uuid\": \"GPU-a2\", \"health\": \"ok\", \"held\": true}]","canhazgpu.dev/host-holds":"[{\"gpu\": 2, \"user\": \"bob\", \"type\": \"manual\"}]"}}}
{"apiVersion":"v1","kind":"Node","metadata":{"name":"b","annotations":{"agentaflow.gpu/devices":"[{\"index\": 0, \"uuid\": \"GPU-b0\", \"health\": \"ok\", \"mig_enabled\": true}, {\"index\": 0, \"uuid\": \"MIG-b0-1\", \"mig\": \"1g.18gb\", \"health\": \"ok\"}, {\"index\": 0, \"uuid\": \"MIG-b0-2\", \"mig\": \"1g.18gb\", \"health\": \"ok\"}]"}}}
EOF
cat >c3/slices <<'EOF'
{"apiVersion":"resource.k8s.io/v1","kind":"ResourceSlice","spec":{"driver":"gpu.canhazgpu.dev","pool":{"name":"a"},"devices":[{"name":"gpu-0"},{"name":"gpu-1"}]}}
{"apiVersion":"resource.k8s.io/v1","kind":"ResourceSlice","spec":{"driver":"gpu.canhazgpu.dev","pool":{"name":"b"},"devices":[{"name":"1g.18gb-0"},{"name":"1g.18gb-1"}]}}
EOF
cat >c3/claims <<'EOF'
{"apiVersion":"resource.k8s.io/v1","kind":"ResourceClaim","metadata":{"namespace":"ns1","name":"c1","uid":"u-c1"},"status":{"allocation":{"devices":{"results":[{"driver":"gpu.canhazgpu.dev","pool":"a","device":"gpu-1"}]}},"reservedFor":[{"resource":"pods","name":"p1"}]}}
{"apiVersion":"resource.k8s.io/v1","kind":"ResourceClaim","metadata":{"namespace":"ns1","name":"c2","uid":"u-c2"},"status":{"allocation":{"devices":{"results":[{"driver":"gpu.canhazgpu.dev","pool":"b","device":"1g.18gb-0"}]}}}}
{"apiVersion":"resource.k8s.io/v1","kind":"ResourceClaim","metadata":{"namespace":"ns1","name":"c3","uid":"u-c3"},"status":{}}
{"apiVersion":"resource.k8s.io/v1","kind":"ResourceClaim","metadata":{"namespace":"ns2","name":"c4","uid":"u-c4"},"status":{"allocation":{"devices":{"results":[{"driver":"gpu.canhazgpu.dev","pool":"a","device":"gpu-0"}]}}}}
EOF
cat >c3/pods <<'EOF'
{"apiVersion":"v1","kind":"Pod","metadata":{"namespace":"ns1","name":"p1"},"spec":{"resourceClaims":[{"name":"gpus","resourceClaimName":"c1"}]},"status":{"phase":"Running"}}
{"apiVersion":"v1","kind":"Pod","metadata":{"namespace":"ns1","name":"p2"},"spec":{"resourceClaims":[{"name":"gpus","resourceClaimName":"c2"}]},"status":{"phase":"Pending"}}
EOF
check_output 'gpus-text.jq: the text of status, one namespace and all' 'cd c3 && jq -L "$J" -f "$J/gpus.jq" -n -c --slurpfile nodes nodes --slurpfile slices slices --slurpfile claims claims --slurpfile pods pods --arg ns ns1 --argjson all false --arg only_node '"'"''"'"' --arg only_claim '"'"''"'"' >g && jq -L "$J" -f "$J/gpus-text.jq" -r --arg ns ns1 --argjson all false g && jq -L "$J" -f "$J/gpus.jq" -n -c --slurpfile nodes nodes --slurpfile slices slices --slurpfile claims claims --slurpfile pods pods --arg ns ns1 --argjson all true --arg only_node '"'"''"'"' --arg only_claim '"'"''"'"' >g && jq -L "$J" -f "$J/gpus-text.jq" -r --arg ns ns1 --argjson all true g' <<'EOF'

GPU Summary:
  Total GPUs: 4
  Available: 0
  Allocated: 2
  Held on hosts: 1
  MIG devices: 1 available, 1 allocated

Node a:
  Total GPUs: 3
  Available GPUs: none
  Held on the host: 2 (bob, manual)
  Allocated GPUs:
    GPU 0: ns2/c4 (Pod: none)
    GPU 1: ns1/c1 (Pod: p1)

Node b:
  Total GPUs: 1
  Available GPUs: none
  Available MIG devices: 1g.18gb-1
  Held on the host: none
  Allocated GPUs:
    1g.18gb-0: ns1/c2 (Pod: p2)

ResourceClaims in namespace ns1:
  c1:
    Status: Allocated
    Node: a
    GPU IDs: 1
    Pod: p1 (Running)
  c2:
    Status: Allocated
    Node: b
    GPU IDs: 1g.18gb-0
    Pod: p2 (Pending)
  c3:
    Status: Pending
    Node: -
    GPU IDs: none
    Pod: none

GPU Summary:
  Total GPUs: 4
  Available: 0
  Allocated: 2
  Held on hosts: 1
  MIG devices: 1 available, 1 allocated

Node a:
  Total GPUs: 3
  Available GPUs: none
  Held on the host: 2 (bob, manual)
  Allocated GPUs:
    GPU 0: ns2/c4 (Pod: none)
    GPU 1: ns1/c1 (Pod: p1)

Node b:
  Total GPUs: 1
  Available GPUs: none
  Available MIG devices: 1g.18gb-1
  Held on the host: none
  Allocated GPUs:
    1g.18gb-0: ns1/c2 (Pod: p2)

ResourceClaims in all namespaces:
  ns1/c1:
    Status: Allocated
    Node: a
    GPU IDs: 1
    Pod: p1 (Running)
  ns1/c2:
    Status: Allocated
    Node: b
    GPU IDs: 1g.18gb-0
    Pod: p2 (Pending)
  ns1/c3:
    Status: Pending
    Node: -
    GPU IDs: none
    Pod: none
  ns2/c4:
    Status: Allocated
    Node: a
    GPU IDs: 0
    Pod: none
EOF

# cleanup-pick.jq
mkdir c4
cat >c4/claims <<'EOF'
{"apiVersion":"v1","kind":"ResourceClaim","metadata":{"namespace":"ns1","name":"r1","uid":"u-r1","labels":{"canhazgpu.dev/run":"r1","app.kubernetes.io/managed-by":"k8shazgpu"}}}
{"apiVersion":"v1","kind":"ResourceClaim","metadata":{"namespace":"ns1","name":"r2","uid":"u-r2","labels":{"canhazgpu.dev/run":"r2"}}}
EOF
cat >c4/pods <<'EOF'
{"apiVersion":"v1","kind":"Pod","metadata":{"namespace":"ns1","name":"r1","uid":"u-r1","labels":{"canhazgpu.dev/run":"r1","app.kubernetes.io/managed-by":"k8shazgpu"}}}
{"apiVersion":"v1","kind":"Pod","metadata":{"namespace":"ns1","name":"r2","uid":"u-r2","labels":{"canhazgpu.dev/run":"r2","app.kubernetes.io/managed-by":"k8shazgpu"}}}
{"apiVersion":"v1","kind":"Pod","metadata":{"namespace":"ns1","name":"r3","uid":"u-r3","labels":{"canhazgpu.dev/run":"r3","app.kubernetes.io/managed-by":"k8shazgpu"}}}
EOF
cat >c4/cms <<'EOF'
{"apiVersion":"v1","kind":"ConfigMap","metadata":{"namespace":"ns1","name":"r1-pack-0","uid":"u-r1-pack-0","labels":{"canhazgpu.dev/run":"r1","app.kubernetes.io/managed-by":"k8shazgpu"},"ownerReferences":[{"kind":"ResourceClaim","name":"r1","uid":"u-r1"}]}}
{"apiVersion":"v1","kind":"ConfigMap","metadata":{"namespace":"ns1","name":"r1-x","uid":"u-r1-x","labels":{"canhazgpu.dev/run":"r1","app.kubernetes.io/managed-by":"k8shazgpu"},"ownerReferences":[{"kind":"ResourceClaim","name":"r1","uid":"other"}]}}
{"apiVersion":"v1","kind":"ConfigMap","metadata":{"namespace":"ns1","name":"r3-pack-0","uid":"u-r3-pack-0","labels":{"canhazgpu.dev/run":"r3","app.kubernetes.io/managed-by":"k8shazgpu"},"ownerReferences":[{"kind":"ResourceClaim","name":"r3","uid":"u-r3"}]}}
EOF
check_output 'cleanup-pick.jq: every run: what goes, what stays and why' 'cd c4 && jq -L "$J" -f "$J/cleanup-pick.jq" -n -c --arg run '"'"''"'"' --slurpfile claims claims --slurpfile pods pods --slurpfile cms cms ' <<'EOF'
{"warn":"configmap r1-x: labelled for run r1 but not owned by its claim; left alone"}
{"del":[{"apiVersion":"v1","kind":"Pod","metadata":{"namespace":"ns1","name":"r1","uid":"u-r1"}},{"apiVersion":"v1","kind":"ConfigMap","metadata":{"namespace":"ns1","name":"r1-pack-0","uid":"u-r1-pack-0"}},{"apiVersion":"v1","kind":"ResourceClaim","metadata":{"namespace":"ns1","name":"r1","uid":"u-r1"}}],"run":"r1"}
{"warn":"resourceclaim r2 is not one of ours (it lacks canhazgpu.dev/run=r2 or app.kubernetes.io/managed-by=k8shazgpu); left alone"}
{"del":[{"apiVersion":"v1","kind":"Pod","metadata":{"namespace":"ns1","name":"r2","uid":"u-r2"}}],"run":"r2"}
{"del":[{"apiVersion":"v1","kind":"Pod","metadata":{"namespace":"ns1","name":"r3","uid":"u-r3"}},{"apiVersion":"v1","kind":"ConfigMap","metadata":{"namespace":"ns1","name":"r3-pack-0","uid":"u-r3-pack-0"}}],"run":"r3"}
EOF

# cleanup-pick.jq
mkdir c5
cat >c5/claims <<'EOF'
{"apiVersion":"v1","kind":"ResourceClaim","metadata":{"namespace":"ns1","name":"r1","uid":"u-r1","labels":{"canhazgpu.dev/run":"r1","app.kubernetes.io/managed-by":"k8shazgpu"}}}
{"apiVersion":"v1","kind":"ResourceClaim","metadata":{"namespace":"ns1","name":"r2","uid":"u-r2","labels":{"canhazgpu.dev/run":"r2"}}}
EOF
cat >c5/pods <<'EOF'
{"apiVersion":"v1","kind":"Pod","metadata":{"namespace":"ns1","name":"r1","uid":"u-r1","labels":{"canhazgpu.dev/run":"r1","app.kubernetes.io/managed-by":"k8shazgpu"}}}
{"apiVersion":"v1","kind":"Pod","metadata":{"namespace":"ns1","name":"r2","uid":"u-r2","labels":{"canhazgpu.dev/run":"r2","app.kubernetes.io/managed-by":"k8shazgpu"}}}
{"apiVersion":"v1","kind":"Pod","metadata":{"namespace":"ns1","name":"r3","uid":"u-r3","labels":{"canhazgpu.dev/run":"r3","app.kubernetes.io/managed-by":"k8shazgpu"}}}
EOF
cat >c5/cms <<'EOF'
{"apiVersion":"v1","kind":"ConfigMap","metadata":{"namespace":"ns1","name":"r1-pack-0","uid":"u-r1-pack-0","labels":{"canhazgpu.dev/run":"r1","app.kubernetes.io/managed-by":"k8shazgpu"},"ownerReferences":[{"kind":"ResourceClaim","name":"r1","uid":"u-r1"}]}}
{"apiVersion":"v1","kind":"ConfigMap","metadata":{"namespace":"ns1","name":"r1-x","uid":"u-r1-x","labels":{"canhazgpu.dev/run":"r1","app.kubernetes.io/managed-by":"k8shazgpu"},"ownerReferences":[{"kind":"ResourceClaim","name":"r1","uid":"other"}]}}
{"apiVersion":"v1","kind":"ConfigMap","metadata":{"namespace":"ns1","name":"r3-pack-0","uid":"u-r3-pack-0","labels":{"canhazgpu.dev/run":"r3","app.kubernetes.io/managed-by":"k8shazgpu"},"ownerReferences":[{"kind":"ResourceClaim","name":"r3","uid":"u-r3"}]}}
EOF
check_output 'cleanup-pick.jq: run r1 alone' 'cd c5 && jq -L "$J" -f "$J/cleanup-pick.jq" -n -c --arg run r1 --slurpfile claims claims --slurpfile pods pods --slurpfile cms cms ' <<'EOF'
{"warn":"configmap r1-x: labelled for run r1 but not owned by its claim; left alone"}
{"del":[{"apiVersion":"v1","kind":"Pod","metadata":{"namespace":"ns1","name":"r1","uid":"u-r1"}},{"apiVersion":"v1","kind":"ConfigMap","metadata":{"namespace":"ns1","name":"r1-pack-0","uid":"u-r1-pack-0"}},{"apiVersion":"v1","kind":"ResourceClaim","metadata":{"namespace":"ns1","name":"r1","uid":"u-r1"}}],"run":"r1"}
EOF

# vllm-build.jq
mkdir c6
check_output 'vllm-build.jq: run: the values, the claim (2 GPUs by index) and the pod' 'cd c6 && jq -L "$J" -f "$J/vllm-build.jq" -n -c --arg name demo --arg ns ns1 --arg m app.kubernetes.io/managed-by --arg class gpu.canhazgpu.dev --arg attr '"'"'device.attributes["gpu.canhazgpu.dev"]'"'"' --arg wrapper "exec \"\$@\"" --arg applier k8shazgpu-applier-1 --arg w run --arg gpus 2 --arg ids 3,1 --arg image busybox:1 --arg port 80 --arg prefer h1 --arg iname '"'"''"'"' --arg rname '"'"''"'"' --argjson nt 1 --argjson has_argv 1 --args -- k '"'"''"'"' '"'"''"'"' NoSchedule echo '"'"'a b'"'"' ' <<'EOF'
{"ok":true,"image":"busybox:1","image_name":"","repo_name":"","url":"","branch":"main","packline":""}
{"apiVersion":"resource.k8s.io/v1","kind":"ResourceClaim","metadata":{"name":"demo","namespace":"ns1","labels":{"app.kubernetes.io/managed-by":"k8shazgpu","canhazgpu.dev/run":"demo","canhazgpu.dev/workload":"run"},"annotations":{"canhazgpu.dev/workload":"run","canhazgpu.dev/image":"busybox:1","canhazgpu.dev/cmd":"[\"echo\",\"a b\"]","canhazgpu.dev/port":"80","canhazgpu.dev/prefer-node":"h1","canhazgpu.dev/gpu-ids":"3,1"}},"spec":{"devices":{"requests":[{"name":"gpus","exactly":{"deviceClassName":"gpu.canhazgpu.dev","allocationMode":"ExactCount","count":2,"selectors":[{"cel":{"expression":"device.attributes[\"gpu.canhazgpu.dev\"].index in [1, 3]"}}]}}]}}}
{"apiVersion":"v1","kind":"Pod","metadata":{"name":"demo","namespace":"ns1","labels":{"app.kubernetes.io/managed-by":"k8shazgpu","canhazgpu.dev/run":"demo","canhazgpu.dev/workload":"run"},"ownerReferences":[{"apiVersion":"resource.k8s.io/v1","kind":"ResourceClaim","name":"demo","uid":"DRY-RUN"}]},"spec":{"restartPolicy":"Never","resourceClaims":[{"name":"gpus","resourceClaimName":"demo"}],"affinity":{"nodeAffinity":{"preferredDuringSchedulingIgnoredDuringExecution":[{"weight":100,"preference":{"matchExpressions":[{"key":"kubernetes.io/hostname","operator":"In","values":["h1"]}]}}]}},"tolerations":[{"key":"k","operator":"Exists","effect":"NoSchedule"}],"containers":[{"name":"main","image":"busybox:1","command":["echo","a b"],"ports":[{"name":"main","containerPort":80}],"resources":{"claims":[{"name":"gpus"}]}}]}}
EOF

# vllm-build.jq
mkdir c7
cat >c7/in <<'EOF'
{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"demo-pack-0","namespace":"ns1"},"immutable":true,"binaryData":{"pack.000":"SEVMTE8="}}
{"kind":"checkout","root":"/src/vllm","remote":"origin","remote_url":"git@github.com:alice/vllm.git","branch":"feature","head":"2222222222222222222222222222222222222222","base_ref":"refs/remotes/upstream/main","merge_base":"1111111111111111111111111111111111111111","base":"1111111111111111111111111111111111111111","image":"reg/vllm:1111111111111111111111111111111111111111","files":{"put":2,"link":1,"del":1},"bytes":10,"pack_sha256":"ab12","configmaps":["demo-pack-0"]}
EOF
check_output 'vllm-build.jq: vllm run: the values, claim, ConfigMap owned by it, pod with the pack' 'cd c7 && jq -L "$J" -f "$J/vllm-build.jq" -n -c --arg name demo --arg ns ns1 --arg m app.kubernetes.io/managed-by --arg class gpu.canhazgpu.dev --arg attr '"'"'device.attributes["gpu.canhazgpu.dev"]'"'"' --arg wrapper "exec \"\$@\"" --arg applier k8shazgpu-applier-1 --arg w vllm --arg gpus 1 --arg ids '"'"''"'"' --arg image '"'"''"'"' --arg port 8000 --arg prefer '"'"''"'"' --arg iname '"'"''"'"' --arg rname '"'"''"'"' --argjson nt 0 --argjson has_argv 0 in --args -- ' <<'EOF'
{"ok":true,"image":"reg/vllm:1111111111111111111111111111111111111111","image_name":"vllm-checkout-11111111","repo_name":"alice-vllm","url":"git@github.com:alice/vllm.git","branch":"feature","packline":"pack: 2 put, 1 links, 1 deleted, 10 bytes over 111111111111 (refs/remotes/upstream/main); image reg/vllm:1111111111111111111111111111111111111111"}
{"apiVersion":"resource.k8s.io/v1","kind":"ResourceClaim","metadata":{"name":"demo","namespace":"ns1","labels":{"app.kubernetes.io/managed-by":"k8shazgpu","canhazgpu.dev/run":"demo","canhazgpu.dev/workload":"vllm"},"annotations":{"canhazgpu.dev/workload":"vllm","canhazgpu.dev/image":"reg/vllm:1111111111111111111111111111111111111111","canhazgpu.dev/port":"8000","canhazgpu.dev/base":"1111111111111111111111111111111111111111","canhazgpu.dev/head":"2222222222222222222222222222222222222222","canhazgpu.dev/pack-sha256":"ab12","canhazgpu.dev/image-name":"vllm-checkout-11111111","canhazgpu.dev/repo-name":"alice-vllm"}},"spec":{"devices":{"requests":[{"name":"gpus","exactly":{"deviceClassName":"gpu.canhazgpu.dev","allocationMode":"ExactCount","count":1}}]}}}
{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"demo-pack-0","namespace":"ns1","ownerReferences":[{"apiVersion":"resource.k8s.io/v1","kind":"ResourceClaim","name":"demo","uid":"DRY-RUN"}]},"immutable":true,"binaryData":{"pack.000":"SEVMTE8="}}
{"apiVersion":"v1","kind":"Pod","metadata":{"name":"demo","namespace":"ns1","labels":{"app.kubernetes.io/managed-by":"k8shazgpu","canhazgpu.dev/run":"demo","canhazgpu.dev/workload":"vllm"},"ownerReferences":[{"apiVersion":"resource.k8s.io/v1","kind":"ResourceClaim","name":"demo","uid":"DRY-RUN"}]},"spec":{"restartPolicy":"Never","resourceClaims":[{"name":"gpus","resourceClaimName":"demo"}],"containers":[{"name":"vllm","image":"reg/vllm:1111111111111111111111111111111111111111","command":["/bin/sh","-c","exec \"$@\"","k8shazgpu-vllm"],"ports":[{"name":"vllm-api","containerPort":8000}],"startupProbe":{"exec":{"command":["/bin/sh","-c","test -e /k8shazgpu/bin/.applied"]},"periodSeconds":1,"failureThreshold":600},"volumeMounts":[{"name":"k8shazgpu-bin","mountPath":"/k8shazgpu/bin"},{"name":"applier","mountPath":"/k8shazgpu/tool","readOnly":true},{"name":"pack","mountPath":"/k8shazgpu/pack","readOnly":true}],"resources":{"claims":[{"name":"gpus"}]}}],"volumes":[{"name":"k8shazgpu-bin","emptyDir":{}},{"name":"applier","configMap":{"name":"k8shazgpu-applier-1","defaultMode":365}},{"name":"pack","projected":{"sources":[{"configMap":{"name":"demo-pack-0"}}]}}]}}
EOF

# vllm-build.jq
mkdir c8
cat >c8/in <<'EOF'
{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"demo-pack-0","namespace":"ns1"},"immutable":true,"binaryData":{"pack.000":"SEVMTE8="}}
EOF
check_output 'vllm-build.jq: vllm run without a checkout record: not ok' 'cd c8 && jq -L "$J" -f "$J/vllm-build.jq" -n -c --arg name demo --arg ns ns1 --arg m app.kubernetes.io/managed-by --arg class gpu.canhazgpu.dev --arg attr '"'"'device.attributes["gpu.canhazgpu.dev"]'"'"' --arg wrapper "exec \"\$@\"" --arg applier k8shazgpu-applier-1 --arg w vllm --arg gpus 1 --arg ids '"'"''"'"' --arg image '"'"''"'"' --arg port 8000 --arg prefer '"'"''"'"' --arg iname '"'"''"'"' --arg rname '"'"''"'"' --argjson nt 0 --argjson has_argv 0 in --args -- ' <<'EOF'
{"ok":false}
EOF

# vllm-decide.jq
mkdir c9
cat >c9/in <<'EOF'
{"type":"ADDED","object":{"spec":{},"status":{"phase":"Pending","conditions":[{"type":"PodScheduled","status":"False","reason":"Unschedulable","message":"0/3 nodes are available"}]}}}
{"type":"MODIFIED","object":{"spec":{},"status":{"phase":"Pending"}}}
{"type":"MODIFIED","object":{"spec":{"nodeName":"h1"},"status":{"phase":"Pending","initContainerStatuses":[{"name":"pack-tool","state":{"waiting":{"reason":"PodInitializing"}}}]}}}
{"type":"MODIFIED","object":{"spec":{"nodeName":"h1"},"status":{"phase":"Pending","containerStatuses":[{"name":"vllm","state":{"waiting":{"reason":"ImagePullBackOff","message":"not found"}}}]}}}
{"type":"MODIFIED","object":{"spec":{"nodeName":"h1"},"status":{"phase":"Running","containerStatuses":[{"name":"vllm","started":false,"state":{"running":{}}}]}}}
{"type":"MODIFIED","object":{"spec":{"nodeName":"h1"},"status":{"phase":"Running","containerStatuses":[{"name":"vllm","started":true,"state":{"running":{}}}]}}}
{"type":"MODIFIED","object":{"spec":{"nodeName":"h1"},"status":{"phase":"Failed","reason":"Evicted","message":"disk"}}}
{"type":"DELETED","object":{}}
EOF
check_output 'vllm-decide.jq: each event of the pod: what to say, then the outcome' 'cd c9 && jq -L "$J" -f "$J/vllm-decide.jq" -r --arg main vllm --argjson follow false --argjson started true in ' <<'EOF'
say pending: Unschedulable: 0/3 nodes are available
say pending: not scheduled yet
say scheduled on h1; pack-tool: PodInitializing
failed container vllm: ImagePullBackOff: not found
say started on h1; applying the pack
ok h1
failed pod failed: Evicted disk
gone
EOF

# vllm-decide.jq
mkdir c10
cat >c10/in <<'EOF'
{"type":"ADDED","object":{"spec":{},"status":{"phase":"Pending","conditions":[{"type":"PodScheduled","status":"False","reason":"Unschedulable","message":"0/3 nodes are available"}]}}}
{"type":"MODIFIED","object":{"spec":{},"status":{"phase":"Pending"}}}
{"type":"MODIFIED","object":{"spec":{"nodeName":"h1"},"status":{"phase":"Pending","initContainerStatuses":[{"name":"pack-tool","state":{"waiting":{"reason":"PodInitializing"}}}]}}}
{"type":"MODIFIED","object":{"spec":{"nodeName":"h1"},"status":{"phase":"Pending","containerStatuses":[{"name":"vllm","state":{"waiting":{"reason":"ImagePullBackOff","message":"not found"}}}]}}}
{"type":"MODIFIED","object":{"spec":{"nodeName":"h1"},"status":{"phase":"Running","containerStatuses":[{"name":"vllm","started":false,"state":{"running":{}}}]}}}
{"type":"MODIFIED","object":{"spec":{"nodeName":"h1"},"status":{"phase":"Running","containerStatuses":[{"name":"vllm","started":true,"state":{"running":{}}}]}}}
{"type":"MODIFIED","object":{"spec":{"nodeName":"h1"},"status":{"phase":"Failed","reason":"Evicted","message":"disk"}}}
{"type":"DELETED","object":{}}
EOF
check_output 'vllm-decide.jq: --follow: a started container need not have passed its probe' 'cd c10 && jq -L "$J" -f "$J/vllm-decide.jq" -r --arg main vllm --argjson follow true --argjson started false in ' <<'EOF'
say pending: Unschedulable: 0/3 nodes are available
say pending: not scheduled yet
say scheduled on h1; pack-tool: PodInitializing
failed container vllm: ImagePullBackOff: not found
ok h1
ok h1
failed pod failed: Evicted disk
gone
EOF

# vllm-report.jq
mkdir c11
cat >c11/in <<'EOF'
{"type":"ADDED","object":{"status":{"allocation":{"devices":{"results":[{"device":"gpu-3","pool":"h1"},{"device":"gpu-1","pool":"h1"}]}}}}}
EOF
check_output 'vllm-report.jq: where it runs, as text and as JSON' 'cd c11 && jq -L "$J" -f "$J/vllm-report.jq" -n -r --arg name demo --arg ns ns1 --arg node h1 --arg port 8000 --arg uid u1 --arg output '"'"''"'"' in && jq -L "$J" -f "$J/vllm-report.jq" -n -r --arg name demo --arg ns ns1 --arg node h1 --arg port 0 --arg uid u1 --arg output json in' <<'EOF'
pod:   demo (namespace ns1)
node:  h1
GPUs:  gpu-3 (index 3), gpu-1 (index 1)
reach: kubectl port-forward -n ns1 pod/demo 8000:8000
logs:  kubectl logs -n ns1 -f demo
{"kind":"run","name":"demo","namespace":"ns1","claim_uid":"u1","node":"h1","devices":["gpu-3","gpu-1"],"gpus":[3,1],"port":null}
EOF

# cache-check.jq
mkdir c12
cat >c12/in <<'EOF'
{"name":"v","type":"image","image":{"ref":"reg/v:1"}}
{"name":"bad name!","type":"image","image":{"ref":"reg/v:1"}}
{"name":"r","type":"gitRepo","gitRepo":{"url":"https://x/r.git","branch":"main","commit":"XYZ","pathName":"hub_cache"}}
{"name":"m","type":"models","models":{"repoId":"org/m","revision":"main"},"nodeSelector":{"a/b":"bad value!"}}
EOF
check_output 'cache-check.jq: the first problem of each item, naming the argument' 'cd c12 && jq -L "$J" -f "$J/cache-check.jq" -r --argjson args '"'"'{"name":"--name","ref":"REF","url":"URL","repoId":"REPO_ID","pullSecret":"--pull-secret","branch":"--branch","commit":"--commit","pathName":"--path-name","revision":"--revision","selector":"-l"}'"'"' in ' <<'EOF'
--name "bad name!": 1 to 50 letters, digits, ".", "_" or "-", starting and ending with a letter or digit
--commit "XYZ": 7 to 40 hex digits
-l "bad value!": a label value: up to 63 letters, digits, ".", "_" or "-"
EOF

# cache-pending.jq
mkdir c13
cat >c13/items <<'EOF'
[{"name":"v","type":"image","image":{"ref":"reg/v:1"},"scope":"allNodes"},{"name":"r","type":"gitRepo","gitRepo":{"url":"https://x/r.git","branch":"main"},"scope":"allNodes"},{"name":"m","type":"models","models":{"repoId":"org/m","revision":"main"},"scope":"nodeSelector","nodeSelector":{"gpu":"big"}},{"name":"z","type":"image","image":{"ref":"reg/z:1"},"scope":"nodeSelector","nodeSelector":{"gpu":"none"}}]
EOF
cat >c13/ncs <<'EOF'
{"metadata":{"name":"n1"},"status":{"nodeName":"n1","items":[{"name":"v","phase":"ready","ref":"reg/v:1"},{"name":"r","phase":"failed","reason":"NotFound"},{"name":"m","phase":"ready","ref":"org/m@old"}]}}
{"metadata":{"name":"n2"},"status":{"nodeName":"n2","items":[{"name":"v","phase":"pulling"}]}}
{"metadata":{"name":"gone"},"status":{"nodeName":"gone","items":[]}}
EOF
cat >c13/nodes <<'EOF'
{"metadata":{"name":"n1","labels":{"gpu":"big"}}}
{"metadata":{"name":"n2","labels":{}}}
{"metadata":{"name":"n3"}}
EOF
check_output 'cache-pending.jq: what is not ready where; items no node is in scope of' 'cd c13 && jq -L "$J" -f "$J/cache-pending.jq" -n -c --slurpfile items items --slurpfile ncs ncs --slurpfile nodes nodes --argjson only '"'"'[]'"'"' ' <<'EOF'
{"pending":[{"node":"n2","name":"v","state":"pulling"},{"node":"n1","name":"r","state":"failed NotFound"},{"node":"n2","name":"r","state":"not reported"},{"node":"n1","name":"m","state":"ready as org/m@old"}],"unscoped":["z"]}
EOF

# cache-pending.jq
mkdir c14
cat >c14/items <<'EOF'
[{"name":"v","type":"image","image":{"ref":"reg/v:1"},"scope":"allNodes"},{"name":"r","type":"gitRepo","gitRepo":{"url":"https://x/r.git","branch":"main"},"scope":"allNodes"},{"name":"m","type":"models","models":{"repoId":"org/m","revision":"main"},"scope":"nodeSelector","nodeSelector":{"gpu":"big"}},{"name":"z","type":"image","image":{"ref":"reg/z:1"},"scope":"nodeSelector","nodeSelector":{"gpu":"none"}}]
EOF
cat >c14/ncs <<'EOF'
{"metadata":{"name":"n1"},"status":{"nodeName":"n1","items":[{"name":"v","phase":"ready","ref":"reg/v:1"},{"name":"r","phase":"failed","reason":"NotFound"},{"name":"m","phase":"ready","ref":"org/m@old"}]}}
{"metadata":{"name":"n2"},"status":{"nodeName":"n2","items":[{"name":"v","phase":"pulling"}]}}
{"metadata":{"name":"gone"},"status":{"nodeName":"gone","items":[]}}
EOF
cat >c14/nodes <<'EOF'
{"metadata":{"name":"n1","labels":{"gpu":"big"}}}
{"metadata":{"name":"n2","labels":{}}}
{"metadata":{"name":"n3"}}
EOF
check_output 'cache-pending.jq: nodes asked for, one without a status' 'cd c14 && jq -L "$J" -f "$J/cache-pending.jq" -n -c --slurpfile items items --slurpfile ncs ncs --slurpfile nodes nodes --argjson only '"'"'["n2","n3"]'"'"' ' <<'EOF'
{"pending":[{"node":"n3","name":"-","state":"no NodeCacheStatus"},{"node":"n2","name":"v","state":"pulling"},{"node":"n2","name":"r","state":"not reported"}],"unscoped":["m","z"]}
EOF

# host-status.jq
mkdir c15
cat >c15/in <<'EOF'
{"kind":"pool","gpu_count":3,"provider":"nvidia"}
{"kind":"gpu-state","gpu":0,"state":"IN_USE","user":"alice","actual_user":"alice","type":"manual","claim_uid":null,"since":"2026-11-28T09:57:03Z","heartbeat":null,"expires":"2026-11-28T10:57:03Z","last_released":null,"note":"a note","queue_id":null,"memory_used_mib":null,"error":null}
{"kind":"gpu-state","gpu":1,"state":"AVAILABLE","user":null,"actual_user":null,"type":null,"claim_uid":null,"since":null,"heartbeat":null,"expires":null,"last_released":"2026-11-28T08:00:00Z","note":null,"queue_id":null,"memory_used_mib":null,"error":null}
{"kind":"gpu-state","gpu":2,"state":"IN_USE","user":"k8s:ns1/c1","actual_user":null,"type":"k8s","claim_uid":"u-c1","since":"2026-11-28T09:00:00Z","heartbeat":null,"expires":null,"last_released":null,"note":null,"queue_id":null,"memory_used_mib":null,"error":null}
EOF
check_output 'host-status.jq: canhazgpu status as a table, as JSON, as a summary' 'cd c15 && jq -L "$J" -f "$J/host-status.jq" -s -r --argjson now 1795860000 --argjson mib 1024 --argjson gpus '"'"'{"0": {"name": "NVIDIA H100", "procs": 1, "users": ["alice"]}}'"'"' --arg mode table --argjson color false in && jq -L "$J" -f "$J/host-status.jq" -s -r --argjson now 1795860000 --argjson mib 1024 --argjson gpus '"'"'{"0": {"name": "NVIDIA H100", "procs": 1, "users": ["alice"]}}'"'"' --arg mode table --argjson color true in | cat -v && jq -L "$J" -f "$J/host-status.jq" -s -c --argjson now 1795860000 --argjson mib 1024 --argjson gpus '"'"'{"0": {"name": "NVIDIA H100", "procs": 1, "users": ["alice"]}}'"'"' --arg mode json --argjson color false in && jq -L "$J" -f "$J/host-status.jq" -s -r --argjson now 1795860000 --argjson mib 1024 --argjson gpus '"'"'{"0": {"name": "NVIDIA H100", "procs": 1, "users": ["alice"]}}'"'"' --arg mode summary --argjson color false in' <<'EOF'
 GPU │ STATUS      │ USER       │ DURATION  │ TYPE   │ DETAILS              │ VALIDATION        │ NOTE   
─────┼─────────────┼────────────┼───────────┼────────┼──────────────────────┼───────────────────┼────────
 0   │ ● IN_USE    │ alice      │ 0h 2m 57s │ MANUAL │ expires in 0h 57m 3s │ no usage detected │ a note 
 1   │ ● AVAILABLE │ -          │ -         │ -      │ free for 2h 0m 0s    │                   │ -      
 2   │ ● IN_USE    │ k8s:ns1/c1 │ 1h 0m 0s  │ K8S    │ claim u-c1           │ no usage detected │ -      
 ^[[36;1mGPU^[[0m M-bM-^TM-^B ^[[36;1mSTATUS^[[0m      M-bM-^TM-^B ^[[36;1mUSER^[[0m       M-bM-^TM-^B ^[[36;1mDURATION^[[0m  M-bM-^TM-^B ^[[36;1mTYPE^[[0m   M-bM-^TM-^B ^[[36;1mDETAILS^[[0m              M-bM-^TM-^B ^[[36;1mVALIDATION^[[0m        M-bM-^TM-^B ^[[36;1mNOTE^[[0m   
M-bM-^TM-^@M-bM-^TM-^@M-bM-^TM-^@M-bM-^TM-^@M-bM-^TM-^@M-bM-^TM-<M-bM-^TM-^@M-bM-^TM-^@M-bM-^TM-^@M-bM-^TM-^@M-bM-^TM-^@M-bM-^TM-^@M-bM-^TM-^@M-bM-^TM-^@M-bM-^TM-^@M-bM-^TM-^@M-bM-^TM-^@M-bM-^TM-^@M-bM-^TM-^@M-bM-^TM-<M-bM-^TM-^@M-bM-^TM-^@M-bM-^TM-^@M-bM-^TM-^@M-bM-^TM-^@M-bM-^TM-^@M-bM-^TM-^@M-bM-^TM-^@M-bM-^TM-^@M-bM-^TM-^@M-bM-^TM-^@M-bM-^TM-^@M-bM-^TM-<M-bM-^TM-^@M-bM-^TM-^@M-bM-^TM-^@M-bM-^TM-^@M-bM-^TM-^@M-bM-^TM-^@M-bM-^TM-^@M-bM-^TM-^@M-bM-^TM-^@M-bM-^TM-^@M-bM-^TM-^@M-bM-^TM-<M-bM-^TM-^@M-bM-^TM-^@M-bM-^TM-^@M-bM-^TM-^@M-bM-^TM-^@M-bM-^TM-^@M-bM-^TM-^@M-bM-^TM-^@M-bM-^TM-<M-bM-^TM-^@M-bM-^TM-^@M-bM-^TM-^@M-bM-^TM-^@M-bM-^TM-^@M-bM-^TM-^@M-bM-^TM-^@M-bM-^TM-^@M-bM-^TM-^@M-bM-^TM-^@M-bM-^TM-^@M-bM-^TM-^@M-bM-^TM-^@M-bM-^TM-^@M-bM-^TM-^@M-bM-^TM-^@M-bM-^TM-^@M-bM-^TM-^@M-bM-^TM-^@M-bM-^TM-^@M-bM-^TM-^@M-bM-^TM-^@M-bM-^TM-<M-bM-^TM-^@M-bM-^TM-^@M-bM-^TM-^@M-bM-^TM-^@M-bM-^TM-^@M-bM-^TM-^@M-bM-^TM-^@M-bM-^TM-^@M-bM-^TM-^@M-bM-^TM-^@M-bM-^TM-^@M-bM-^TM-^@M-bM-^TM-^@M-bM-^TM-^@M-bM-^TM-^@M-bM-^TM-^@M-bM-^TM-^@M-bM-^TM-^@M-bM-^TM-^@M-bM-^TM-<M-bM-^TM-^@M-bM-^TM-^@M-bM-^TM-^@M-bM-^TM-^@M-bM-^TM-^@M-bM-^TM-^@M-bM-^TM-^@M-bM-^TM-^@
 0   M-bM-^TM-^B ^[[34mM-bM-^WM-^O IN_USE   ^[[0m M-bM-^TM-^B alice      M-bM-^TM-^B 0h 2m 57s M-bM-^TM-^B MANUAL M-bM-^TM-^B expires in 0h 57m 3s M-bM-^TM-^B ^[[2mno usage detected^[[0m M-bM-^TM-^B a note 
 1   M-bM-^TM-^B ^[[32;1mM-bM-^WM-^O AVAILABLE^[[0m M-bM-^TM-^B ^[[2m-^[[0m          M-bM-^TM-^B ^[[2m-^[[0m         M-bM-^TM-^B ^[[2m-^[[0m      M-bM-^TM-^B free for 2h 0m 0s    M-bM-^TM-^B ^[[2m^[[0m                  M-bM-^TM-^B ^[[2m-^[[0m      
 2   M-bM-^TM-^B ^[[34mM-bM-^WM-^O IN_USE   ^[[0m M-bM-^TM-^B k8s:ns1/c1 M-bM-^TM-^B 1h 0m 0s  M-bM-^TM-^B K8S    M-bM-^TM-^B claim u-c1           M-bM-^TM-^B ^[[2mno usage detected^[[0m M-bM-^TM-^B ^[[2m-^[[0m      
[{"gpu_id":0,"status":"IN_USE","user":"alice","duration":"0h 2m 57s","type":"MANUAL","note":"a note","details":"expires in 0h 57m 3s","validation":"no usage detected","expiry_time":"2026-11-28T10:57:03Z"},{"gpu_id":1,"status":"AVAILABLE","details":"free for 2h 0m 0s","last_released":"2026-11-28T08:00:00Z"},{"gpu_id":2,"status":"IN_USE","user":"k8s:ns1/c1","duration":"1h 0m 0s","type":"K8S","details":"claim u-c1","validation":"no usage detected"}]

 HOST      │ TOTAL │ GPU MODELS │ AVAILABLE │ IN USE 
───────────┼───────┼────────────┼───────────┼────────
 localhost │ 3     │ -          │ ✓ 1       │ 2      

EOF

# host-queue.jq
mkdir c16
cat >c16/in <<'EOF'
{"kind":"queue-entry","position":2,"id":"q2","entry":{"id":"q2","user":"bob","actual_user":"bob","requested_count":1,"allocated_gpus":[3],"enqueue_time":1795859000,"last_heartbeat":1795859990,"reservation_type":"run","note":"n"}}
{"kind":"queue-entry","position":1,"id":"q1","entry":{"id":"q1","user":"alice","requested_count":0,"requested_ids":[0,2],"enqueue_time":"2026-11-28T09:00:00.500000000+00:00","reservation_type":"manual"}}
EOF
check_output 'host-queue.jq: canhazgpu queue as a table and as JSON' 'cd c16 && TZ=UTC jq -L "$J" -f "$J/host-queue.jq" -s -r --argjson now 1795860000 --arg mode table --argjson color false in && TZ=UTC jq -L "$J" -f "$J/host-queue.jq" -s -c --argjson now 1795860000 --arg mode json --argjson color false in' <<'EOF'
GPU Reservation Queue
=====================

Position   User            Requested       Allocated    Waiting
--------   ----            ---------       ---------    -------
1                          0 GPUs          0/0          -
2                          0 GPUs          0/0          -

Total: 2 entries waiting for 0 GPUs (0 partially allocated)
{"entries":[{"id":"q1","user":"alice","actual_user":"","requested_count":0,"requested_ids":[0,2],"allocated_gpus":null,"reservation_type":"manual","enqueue_time":"2026-11-28T09:00:00.5Z","last_heartbeat":null},{"id":"q2","user":"bob","actual_user":"bob","requested_count":1,"allocated_gpus":[3],"reservation_type":"run","note":"n","enqueue_time":"2026-11-28T09:43:20Z","last_heartbeat":"2026-11-28T09:59:50Z"}],"total_waiting":2,"total_gpus_requested":3,"total_gpus_allocated":1}
EOF

# host-report.jq
mkdir c17
cat >c17/in <<'EOF'
{"kind":"usage","user":"alice","gpu_hours":1.5,"percentage":75.0,"run_count":1,"manual_count":1,"k8s_count":0}
{"kind":"usage","user":"k8s:ns1/c1","gpu_hours":0.5,"percentage":25.0,"run_count":0,"manual_count":0,"k8s_count":2}
{"kind":"usage-total","gpu_hours":2.0,"reservations":4,"users":2,"start":"2026-10-29T09:57:03Z","end":"2026-11-28T09:57:03Z","days":30.0}
EOF
check_output 'host-report.jq: canhazgpu report as JSON and as rows for awk' 'cd c17 && jq -L "$J" -f "$J/host-report.jq" -s -c --argjson now 1795860000 --arg mode json --argjson color false in && jq -L "$J" -f "$J/host-report.jq" -s -r --argjson now 1795860000 --arg mode table --argjson color false in' <<'EOF'
{"users":[{"name":"alice","gpu_hours":1.5,"percentage":75,"run_count":1,"manual_count":1},{"name":"k8s:ns1/c1","gpu_hours":0.5,"percentage":25,"run_count":0,"manual_count":2}],"total_gpu_hours":2,"total_reservations":4,"unique_users":2,"start_date":"2026-10-29","end_date":"2026-11-28","days":30}

=== GPU Reservation Report ===
Period: 2026-10-29 to 2026-11-28 (30 days)

U	User                
R	alice               	1.5	75	1	1
R	k8s:ns1/c1          	0.5	25	0	2
T	2	1	3

Total reservations: 4
Unique users: 2

EOF

# cache.jq
mkdir c18
cat >c18/in <<'EOF'
{"name":"v","type":"image","image":{"ref":"reg/v:1"},"scope":"allNodes"}
{"name":"r","type":"gitRepo","gitRepo":{"url":"https://x/r.git","branch":"main"},"scope":"allNodes"}
{"name":"m","type":"models","models":{"repoId":"org/m","revision":"main"},"scope":"nodeSelector","nodeSelector":{"gpu":"big"}}
{"name":"z","type":"image","image":{"ref":"reg/z:1"},"scope":"nodeSelector","nodeSelector":{"gpu":"none"}}
EOF
check_output 'cache.jq: the type word, the ref nodes report, the scope; norm fills the defaults' 'cd c18 && jq -c  -L "$J" '"'"'include "cache"; [word, want_ref, selector], norm'"'"' in' <<'EOF'
["image","reg/v:1","allNodes"]
{"scope":"allNodes","name":"v","type":"image","image":{"ref":"reg/v:1"}}
["gitrepo","https://x/r.git@main","allNodes"]
{"scope":"allNodes","name":"r","type":"gitRepo","gitRepo":{"branch":"main","syncStrategy":"hardReset","url":"https://x/r.git"}}
["model","org/m@main","gpu=big"]
{"scope":"nodeSelector","name":"m","type":"models","models":{"revision":"main","cache":"blobs","repoId":"org/m"},"nodeSelector":{"gpu":"big"}}
["image","reg/z:1","gpu=none"]
{"scope":"nodeSelector","name":"z","type":"image","image":{"ref":"reg/z:1"},"nodeSelector":{"gpu":"none"}}
EOF

# cache.jq
mkdir c19
cat >c19/in <<'EOF'
{"phase":"pulling","bytesDone":1536,"bytesTotal":3145728}
{"phase":"pulling","bytesDone":1023}
{"phase":"ready","bytesDone":5,"bytesTotal":1073741824}
{"phase":"failed"}
EOF
check_output 'cache.jq: byte counts and progress for people' 'cd c19 && jq -r  -L "$J" '"'"'include "cache"; [progress, (.bytesDone | bytes), (.bytesTotal | bytes)] | join(" | ")'"'"' in && jq -n -r  -L "$J" '"'"'include "cache"; ("sha256:0123456789abcdef", "", null) | short'"'"'' <<'EOF'
0% 0.0/3.0 MiB | 1.5 KiB | 3.0 MiB
1023 B | 1023 B | -
1.0 GiB | 5 B | 1.0 GiB
- | - | -
0123456789ab
-
-
EOF

# host.jq
mkdir c20
cat >c20/in <<'EOF'
[["0","alice"],["12",null]]
EOF
check_output 'host.jq: times, durations, canhazgpu'"'"'s table' 'cd c20 && jq -n -c --argjson now 1795860000 --argjson color false  -L "$J" '"'"'include "host"; ("2026-11-28T09:57:03.25+00:00", "x", 3) | [t, (t | ago)]'"'"' && jq -n -r --argjson now 0 --argjson color false  -L "$J" '"'"'include "host"; (59, 61, 3661) | dur'"'"' && jq -r --argjson now 0 --argjson color false  -L "$J" '"'"'include "host"; table(["GPU", "USER"])'"'"' in' <<'EOF'
[1795859823,177]
[null,null]
[null,null]
0h 0m 59s
0h 1m 1s
1h 1m 1s
 GPU │ USER  
─────┼───────
 0   │ alice 
 12  │       
EOF

# sim-topology.jq
mkdir c21
cat >c21/in <<'EOF'
{"defaults":{"cpu":"64","labels":{"zone":"a"}},"nodes":[{"name":"h","count":"2","instanceType":"p5"},{"name":"s","memory":"128Gi","pods":50,"annotations":{"x":"y"}}]}
EOF
check_output 'sim-topology.jq: a topology to bare KWOK nodes' 'cd c21 && jq -L "$J" -f "$J/sim-topology.jq" -c in ' <<'EOF'
{"apiVersion":"v1","kind":"Node","metadata":{"name":"h-0","labels":{"zone":"a","type":"kwok","kubernetes.io/hostname":"h-0","kubernetes.io/os":"linux","kubernetes.io/arch":"amd64","node.kubernetes.io/instance-type":"p5"},"annotations":{"kwok.x-k8s.io/node":"fake"}},"spec":{"taints":[{"key":"kwok.x-k8s.io/node","value":"fake","effect":"NoSchedule"}]},"status":{"capacity":{"cpu":"64","memory":"256Gi","pods":"110"},"allocatable":{"cpu":"64","memory":"256Gi","pods":"110"}}}
{"apiVersion":"v1","kind":"Node","metadata":{"name":"h-1","labels":{"zone":"a","type":"kwok","kubernetes.io/hostname":"h-1","kubernetes.io/os":"linux","kubernetes.io/arch":"amd64","node.kubernetes.io/instance-type":"p5"},"annotations":{"kwok.x-k8s.io/node":"fake"}},"spec":{"taints":[{"key":"kwok.x-k8s.io/node","value":"fake","effect":"NoSchedule"}]},"status":{"capacity":{"cpu":"64","memory":"256Gi","pods":"110"},"allocatable":{"cpu":"64","memory":"256Gi","pods":"110"}}}
{"apiVersion":"v1","kind":"Node","metadata":{"name":"s","labels":{"zone":"a","type":"kwok","kubernetes.io/hostname":"s","kubernetes.io/os":"linux","kubernetes.io/arch":"amd64"},"annotations":{"x":"y","kwok.x-k8s.io/node":"fake"}},"spec":{"taints":[{"key":"kwok.x-k8s.io/node","value":"fake","effect":"NoSchedule"}]},"status":{"capacity":{"cpu":"64","memory":"128Gi","pods":"50"},"allocatable":{"cpu":"64","memory":"128Gi","pods":"50"}}}
EOF

# vllm-models.jq
check_output 'vllm-models.jq: the models of vllm serve, --model and --tokenizer (both spellings), each once; local paths left; the first bad word' 'jq -n -r -f "$J/vllm-models.jq" --args -- vllm serve org/a --tokenizer=org/t --model b --tokenizer ./t org/a --model=org/a
	 jq -n -r -f "$J/vllm-models.jq" --args -- /opt/venv/bin/vllm serve /models/m --model ../x --tokenizer http://h/t
	 jq -n -r -f "$J/vllm-models.jq" --args -- vllm serve --port 1 sh -c "vllm serve org/x" --model' <<'EOF'
["org/a","org/t","b"]

[]
--model "../x": not a Hugging Face model id (NAME or ORG/NAME) nor a local path (/... or ./...)
[]

EOF

# vllm-models-ready.jq
mkdir c22
cat >c22/plan <<'EOF'
{"spec":{"items":[{"name":"org-m","type":"models","models":{"repoId":"org/m"}},{"name":"org-t","type":"models","models":{"repoId":"org/t"}},{"name":"img","type":"image","image":{"ref":"r/i:1"}}]}}
EOF
cat >c22/ncs <<'EOF'
{"metadata":{"name":"a"},"status":{"nodeName":"a","items":[{"name":"org-m","phase":"ready"},{"name":"org-t","phase":"pulling"}]}}
{"metadata":{"name":"b"},"status":{"nodeName":"b","items":[{"name":"org-m","phase":"failed","reason":"NotFound","message":"repository org/m not found"},{"name":"org-t","phase":"ready"}]}}
{"metadata":{"name":"c"},"status":{"nodeName":"c","items":[{"name":"org-m","phase":"ready"}]}}
{"metadata":{"name":"gone"},"status":{"items":[{"name":"org-m","phase":"ready"}]}}
EOF
cat >c22/nodes <<'EOF'
{"metadata":{"name":"a"}}
{"metadata":{"name":"b"}}
{"metadata":{"name":"c"}}
EOF
# ready IDS [ONLY]: the program's answer
cat >c22/ready <<'EOF'
jq -n -r --argjson ids "$1" --arg only "${2-}" --slurpfile plan plan --slurpfile ncs ncs --slurpfile nodes nodes -f "$J/vllm-models-ready.jq"
EOF
check_output 'vllm-models-ready.jq: the nodes holding every model; failed on every node in scope (with the reasons); pending, and why' 'cd c22 &&
	sh ready "[\"org/m\"]"; sh ready "[\"org/m\"]" b; sh ready "[\"org/m\",\"org/t\"]"; sh ready "[\"org/m\",\"org/t\"]" a
	sh ready "[\"org/x\"]" c; sh ready "[\"org/m\"]" gone; sh ready "[\"org/t\"]" b' <<'EOF'
ready a c
failed model org/m on node b: NotFound: repository org/m not found
pending org/t on a: pulling, org/m on b: failed, org/t on c: not reported
pending org/t on a: pulling
pending org/x on c: not reported
pending node gone reports no cache status
ready b
EOF

# vllm-provenance.jq
cat >prov.in <<'EOF'
{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"r-pack-0"},"data":{}}
{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"r-pack-1"},"data":{}}
{"kind":"checkout","image":"reg/vllm:abc","image_digest":"sha256:1111111111111111111111111111111111111111111111111111111111111111","base":"aaaa","head":"bbbb","merge_base":"aaaa","pack_sha256":"cccc","pack_size":10,"bytes":9,"files":{"put":1,"link":0,"del":0}}
{"kind":"checkout","image":"reg/vllm:abc","base":"aaaa","head":"bbbb","merge_base":"aaaa","pack_sha256":"cccc","pack_size":10,"bytes":9,"files":{"put":1,"link":0,"del":0}}
EOF
# prov N: the record made of the ConfigMaps and checkout record N (3 or 4)
prov() { sed -n "1,2p;$1p" prov.in | jq -n -c --arg name r --arg ns n --arg gpus 2 --arg ids '' --arg port 8000 --arg prefer node1 \
	--argjson tols '["k=v:NoSchedule"]' -f "$J/vllm-provenance.jq" --args -- vllm serve 'a b'; }
check_output 'vllm-provenance.jq: the image by the digest the registry named (null when none), the pack and its ConfigMaps, argv, the GPU request' \
	'prov 3; prov 4 | jq -c "[.image, .image_tag]"' <<'EOF'
{"kind":"vllm-run","version":1,"run":"r","namespace":"n","image":"reg/vllm@sha256:1111111111111111111111111111111111111111111111111111111111111111","image_tag":"reg/vllm:abc","base":"aaaa","head":"bbbb","merge_base":"aaaa","pack":{"sha256":"cccc","size":10,"bytes":9,"files":{"put":1,"link":0,"del":0},"configmaps":["r-pack-0","r-pack-1"]},"argv":["vllm","serve","a b"],"gpus":2,"gpu_ids":"","port":8000,"prefer_node":"node1","tolerations":["k=v:NoSchedule"]}
[null,"reg/vllm:abc"]
EOF
# vllm-replay.jq
prov 3 >prov.json
cat >cms.in <<'EOF'
{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"r-pack-1","uid":"u1"},"immutable":true,"data":{"index.json":"{}"}}
{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"other"},"data":{"x":"y"}}
{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"r-pack-0","uid":"u0"},"immutable":true,"data":{"index.json":"{}"},"binaryData":{"pack.000":"eA=="}}
EOF
check_output 'vllm-replay.jq: the first run'"'"'s ConfigMaps under the new run'"'"'s names, in the provenance'"'"'s order, then the checkout record; a ConfigMap gone named' \
	'jq -n -c --arg name again --arg ns m --argjson prov "$(cat prov.json)" -f "$J/vllm-replay.jq" cms.in;
	 sed 3d cms.in | jq -n -c --arg name again --arg ns m --argjson prov "$(cat prov.json)" -f "$J/vllm-replay.jq"' <<'EOF'
{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"again-pack-0","namespace":"m","labels":{"app.kubernetes.io/managed-by":"k8shazgpu","canhazgpu.dev/run":"again","canhazgpu.dev/workload":"vllm"},"annotations":{"canhazgpu.dev/pack-sha256":"cccc"}},"immutable":true,"data":{"index.json":"{}"},"binaryData":{"pack.000":"eA=="}}
{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"again-pack-1","namespace":"m","labels":{"app.kubernetes.io/managed-by":"k8shazgpu","canhazgpu.dev/run":"again","canhazgpu.dev/workload":"vllm"},"annotations":{"canhazgpu.dev/pack-sha256":"cccc"}},"immutable":true,"data":{"index.json":"{}"}}
{"kind":"checkout","remote_url":null,"branch":null,"base_ref":"run r","image":"reg/vllm@sha256:1111111111111111111111111111111111111111111111111111111111111111","image_tag":"reg/vllm:abc","image_digest":null,"base":"aaaa","head":"bbbb","merge_base":"aaaa","pack_sha256":"cccc","pack_size":10,"bytes":9,"files":{"put":1,"link":0,"del":0}}
{"missing":"r-pack-0"}
EOF
# web-state.jq
mkdir cweb
cat >cweb/nodes <<'EOF'
{"apiVersion":"v1","kind":"Node","metadata":{"name":"b","annotations":{"agentaflow.gpu/last-update":"2026-11-28T10:00:00Z","canhazgpu.dev/ledger-unreachable":"unreachable since 2026-11-28T10:00:05Z: redis /run/redis.sock: Connection refused","agentaflow.gpu/devices":"[{\"index\": 0, \"uuid\": \"GPU-b0\", \"product\": \"H200\", \"health\": \"ok\", \"mig_enabled\": true}, {\"index\": 0, \"uuid\": \"MIG-b0-1\", \"product\": \"H200\", \"mig\": \"1g.18gb\", \"health\": \"ok\"}, {\"index\": 0, \"uuid\": \"MIG-b0-2\", \"product\": \"H200\", \"mig\": \"1g.18gb\", \"health\": \"unhealthy\", \"reasons\": [\"XID 79\"]}]","canhazgpu.dev/host-holds":"[{\"gpu\": 0, \"user\": \"carol\", \"type\": \"run\", \"since\": \"2026-11-28T09:00:00+01:00\", \"expires\": null, \"note\": null}]"}},"status":{"conditions":[{"type":"Ready","status":"False"}]}}
{"apiVersion":"v1","kind":"Node","metadata":{"name":"a","annotations":{"agentaflow.gpu/last-update":"2026-11-28T10:00:00Z","agentaflow.gpu/devices":"[{\"index\": 1, \"uuid\": \"GPU-a1\", \"product\": \"H100\", \"health\": \"warn\", \"reasons\": [\"temperature 86 C\"]}, {\"index\": 0, \"uuid\": \"GPU-a0\", \"product\": \"H100\", \"health\": \"ok\"}, {\"index\": 2, \"uuid\": \"GPU-a2\", \"product\": \"H100\", \"health\": \"ok\", \"held\": true}, {\"index\": 3, \"uuid\": \"GPU-a3\", \"product\": \"H100\", \"health\": \"ok\"}]","canhazgpu.dev/host-holds":"[{\"gpu\": 2, \"user\": \"bob\", \"type\": \"manual\", \"since\": \"2026-11-28T09:30:00Z\", \"expires\": null, \"note\": \"<eval>\"}, {\"gpu\": 3, \"user\": \"k8s:x/y\", \"type\": \"k8s\", \"since\": null}, {\"gpu\": 3, \"type\": \"unreserved\"}]"}},"status":{"conditions":[{"type":"Ready","status":"True"}]}}
{"apiVersion":"v1","kind":"Node","metadata":{"name":"c","annotations":{"agentaflow.gpu/devices":"[{\"index\": 0, \"uuid\": \"GPU-c0\", \"health\": \"ok\"}]"}}}
EOF
cat >cweb/slices <<'EOF'
{"apiVersion":"resource.k8s.io/v1","kind":"ResourceSlice","spec":{"driver":"gpu.canhazgpu.dev","pool":{"name":"a"},"devices":[{"name":"gpu-0","attributes":{"uuid":{"string":"GPU-a0"}}},{"name":"gpu-1","attributes":{"uuid":{"string":"GPU-a1"}}}]}}
{"apiVersion":"resource.k8s.io/v1","kind":"ResourceSlice","spec":{"driver":"gpu.canhazgpu.dev","pool":{"name":"b"},"devices":[{"name":"gpu-0-mig-1g-18gb-0","attributes":{"uuid":{"string":"MIG-b0-1"}}},{"name":"gpu-0-mig-1g-18gb-1","attributes":{"uuid":{"string":"MIG-b0-2"}}}]}}
{"apiVersion":"resource.k8s.io/v1","kind":"ResourceSlice","spec":{"driver":"other.example.com","pool":{"name":"a"},"devices":[{"name":"gpu-0","attributes":{"uuid":{"string":"OTHER"}}}]}}
EOF
cat >cweb/claims <<'EOF'
{"metadata":{"name":"c1","namespace":"team","creationTimestamp":"2026-11-28T09:50:00Z"},"status":{"allocation":{"devices":{"results":[{"driver":"gpu.canhazgpu.dev","pool":"a","device":"gpu-0"}]}},"reservedFor":[{"resource":"pods","name":"train"}]}}
{"metadata":{"name":"c2","namespace":"team","creationTimestamp":"2026-11-28T09:55:00Z"},"status":{"allocation":{"devices":{"results":[{"driver":"gpu.canhazgpu.dev","pool":"b","device":"gpu-0-mig-1g-18gb-0"}]}}}}
{"metadata":{"name":"c3","namespace":"other","creationTimestamp":"2026-11-28T09:55:00Z"},"status":{"allocation":{"devices":{"results":[{"driver":"gpu.canhazgpu.dev","pool":"a","device":"gpu-1"}]}}}}
{"metadata":{"name":"c4","namespace":"team","creationTimestamp":"2026-11-28T09:58:00Z"},"status":{}}
EOF
cat >cweb/pods <<'EOF'
{"metadata":{"name":"train","namespace":"team","creationTimestamp":"2026-11-28T09:50:00Z","annotations":{"canhazgpu.dev/devices":"[\"GPU-a0\"]"}},"spec":{"nodeName":"a","resourceClaims":[{"name":"g","resourceClaimName":"c1"}]},"status":{"phase":"Running","startTime":"2026-11-28T09:51:00Z"}}
{"metadata":{"name":"waits","namespace":"team","creationTimestamp":"2026-11-28T09:58:00Z"},"spec":{"resourceClaims":[{"name":"g","resourceClaimName":"c4"}]},"status":{"phase":"Pending"}}
{"metadata":{"name":"sched","namespace":"team","creationTimestamp":"2026-11-28T09:40:00Z"},"spec":{"schedulerName":"k8shazgpu"},"status":{"phase":"Pending"}}
{"metadata":{"name":"plain","namespace":"team","creationTimestamp":"2026-11-28T09:40:00Z"},"spec":{},"status":{"phase":"Pending"}}
{"metadata":{"name":"bound","namespace":"team","creationTimestamp":"2026-11-28T09:20:00Z","annotations":{"canhazgpu.dev/devices":"[\"GPU-a1\", \"MIG-b0-2\"]"}},"spec":{"nodeName":"a","schedulerName":"k8shazgpu"},"status":{"phase":"Running","startTime":"2026-11-28T09:21:00Z"}}
{"metadata":{"name":"ended","namespace":"team","creationTimestamp":"2026-11-28T09:20:00Z","annotations":{"canhazgpu.dev/devices":"[\"GPU-a1\"]"}},"spec":{"nodeName":"a"},"status":{"phase":"Succeeded"}}
{"metadata":{"name":"bad","namespace":"team","creationTimestamp":"2026-11-28T09:20:00Z","annotations":{"canhazgpu.dev/devices":"{\"x\": 1}"}},"spec":{"nodeName":"a"},"status":{"phase":"Running"}}
EOF
cat >cweb/wl <<'EOF'
{"metadata":{"name":"llama","namespace":"team","creationTimestamp":"2026-11-28T08:00:00Z"},"spec":{"gpuCount":1},"status":{"phase":"Running","assignedNode":"a","devices":["GPU-a3"],"lastTransitionTime":"2026-11-28T08:10:00Z"}}
{"metadata":{"name":"big","namespace":"team","creationTimestamp":"2026-11-28T09:30:00Z"},"spec":{"gpuCount":8}}
{"metadata":{"name":"small","namespace":"team","creationTimestamp":"2026-11-28T09:45:00Z"},"spec":{"gpuRequirements":{"gpuCount":1,"migProfile":"1g.18gb"}},"status":{"phase":"Pending","requestedGPUs":"1"}}
{"metadata":{"name":"done","namespace":"team","creationTimestamp":"2026-11-28T07:00:00Z"},"spec":{},"status":{"phase":"Succeeded"}}
EOF
# web NS ONLY: the state, the namespace and the nodes shown as given
web() { jq -n -c --argjson now 1795860000 --arg ns "$1" --argjson only "$2" --argjson missing '["x: forbidden"]' \
	--slurpfile nodes nodes --slurpfile slices slices --slurpfile claims claims --slurpfile pods pods \
	--slurpfile wl wl -f "$J/web-state.jq"; }
check_output 'web-state.jq: who holds each device (pods by claims and by their devices annotation, once, on their node, claims, workloads, host users; a MIG-mode GPU as its MIG devices, k8s holds left to the claims), a ledger said unreachable, the queue oldest first; one namespace and node' \
	"cd cweb && web '' '[]' && web team '[\"b\"]'" <<'EOF'
{"title":"k8shazgpu status","now":1795860000,"missing":["x: forbidden","node b: the ledger (Redis) unreachable since 2026-11-28T10:00:05Z: redis /run/redis.sock: Connection refused; its host users as last published"],"nodes":[{"name":"a","ready":"True","updated":1795860000,"devices":[{"gpu":0,"mig":null,"name":"H100","health":"ok","reasons":[],"holders":[{"kind":"pod","name":"team/train","detail":"claim c1","since":1795859460}]},{"gpu":1,"mig":null,"name":"H100","health":"warn","reasons":["temperature 86 C"],"holders":[{"kind":"claim","name":"other/c3","detail":null,"since":1795859700},{"kind":"pod","name":"team/bound","detail":null,"since":1795857660}]},{"gpu":2,"mig":null,"name":"H100","health":"ok","reasons":[],"holders":[{"kind":"host","name":"bob","detail":"manual, <eval>","since":1795858200}]},{"gpu":3,"mig":null,"name":"H100","health":"ok","reasons":[],"holders":[{"kind":"workload","name":"team/llama","detail":"running","since":1795853400},{"kind":"host","name":"in use without a reservation","detail":"unreserved","since":null}]}]},{"name":"b","ready":"False","updated":1795860000,"devices":[{"gpu":0,"mig":"1g.18gb","name":"H200","health":"ok","reasons":[],"holders":[{"kind":"claim","name":"team/c2","detail":null,"since":1795859700},{"kind":"host","name":"carol","detail":"run","since":1795852800}]},{"gpu":0,"mig":"1g.18gb","name":"H200","health":"unhealthy","reasons":["XID 79"],"holders":[{"kind":"host","name":"carol","detail":"run","since":1795852800}]}]},{"name":"c","ready":null,"updated":null,"devices":[{"gpu":0,"mig":null,"name":null,"health":"ok","reasons":[],"holders":[]}]}],"queue":[{"kind":"workload","name":"team/big","wants":"8 GPUs","since":1795858200},{"kind":"pod","name":"team/sched","wants":"GPUs from scheduler k8shazgpu","since":1795858800},{"kind":"workload","name":"team/small","wants":"1 GPU (MIG 1g.18gb)","since":1795859100},{"kind":"pod","name":"team/waits","wants":"claims c4","since":1795859880}]}
{"title":"k8shazgpu status","now":1795860000,"missing":["x: forbidden","node b: the ledger (Redis) unreachable since 2026-11-28T10:00:05Z: redis /run/redis.sock: Connection refused; its host users as last published"],"nodes":[{"name":"b","ready":"False","updated":1795860000,"devices":[{"gpu":0,"mig":"1g.18gb","name":"H200","health":"ok","reasons":[],"holders":[{"kind":"claim","name":"team/c2","detail":null,"since":1795859700},{"kind":"host","name":"carol","detail":"run","since":1795852800}]},{"gpu":0,"mig":"1g.18gb","name":"H200","health":"unhealthy","reasons":["XID 79"],"holders":[{"kind":"host","name":"carol","detail":"run","since":1795852800}]}]}],"queue":[{"kind":"workload","name":"team/big","wants":"8 GPUs","since":1795858200},{"kind":"pod","name":"team/sched","wants":"GPUs from scheduler k8shazgpu","since":1795858800},{"kind":"workload","name":"team/small","wants":"1 GPU (MIG 1g.18gb)","since":1795859100},{"kind":"pod","name":"team/waits","wants":"claims c4","since":1795859880}]}
EOF
# web-host.jq
cat >cweb/hin <<'EOF'
{"kind":"gpu-state","gpu":0,"state":"IN_USE","user":"alice<b>","actual_user":"alice","type":"manual","claim_uid":null,"since":"2026-11-28T09:00:00Z","heartbeat":null,"expires":"2026-11-28T11:00:00Z","last_released":null,"note":"it's <i>mine</i>","queue_id":null,"memory_used_mib":null,"error":null}
{"kind":"gpu-state","gpu":1,"state":"IN_USE","user":"k8s:team/c1","actual_user":null,"type":"k8s","claim_uid":"u1","since":"2026-11-28T09:30:00.5Z","heartbeat":null,"expires":null,"last_released":null,"note":null,"queue_id":null,"memory_used_mib":null,"error":null}
{"kind":"gpu-state","gpu":2,"state":"AVAILABLE","user":null,"actual_user":null,"type":null,"claim_uid":null,"since":null,"heartbeat":null,"expires":null,"last_released":null,"note":null,"queue_id":null,"memory_used_mib":null,"error":null}
{"kind":"gpu-state","gpu":3,"state":"ERROR","user":null,"actual_user":null,"type":null,"claim_uid":null,"since":null,"heartbeat":null,"expires":null,"last_released":null,"note":null,"queue_id":null,"memory_used_mib":null,"error":"invalid JSON"}
{"kind":"gpu-state","gpu":4,"state":"IN_USE","user":"dave","actual_user":"dave","type":"run","claim_uid":null,"since":"2026-11-28T09:59:00Z","heartbeat":"2026-11-28T09:59:50Z","expires":null,"last_released":null,"note":null,"queue_id":null,"memory_used_mib":null,"error":null}
{"kind":"queue-entry","position":1,"id":"q1","user":"carol","actual_user":"carol","requested":3,"requested_ids":null,"allocated":[2],"type":"manual","enqueued":"2026-11-28T09:58:00Z"}
{"kind":"queue-entry","position":2,"id":"q2","user":"erin","actual_user":"erin","requested":2,"requested_ids":[0,1],"allocated":[],"type":"run","enqueued":"2026-11-28T09:59:00Z"}
EOF
check_output 'web-host.jq: the ledger as one node: host users, k8s holds, an unreadable entry, the queue (what a waiter has); the ledger unreachable; some of it unreadable' \
	'cd cweb && host() { jq -s -c --argjson now 1795860000 --arg host "gpu<1>" --arg why "$1" --argjson rc "$2" -L "$J" '"'"'include "web-host"; host_state'"'"' "$3"; }
	host "" 0 hin; host "redis 127.0.0.1:1: Connection refused" 75 /dev/null; head -n 2 hin | host "canhazgpu:gpu:7: unreadable" 1 -' <<'EOF'
{"title":"gpu<1>: k8shazgpu host status","now":1795860000,"missing":[],"nodes":[{"name":"gpu<1>","ready":null,"updated":null,"devices":[{"gpu":0,"mig":null,"name":null,"health":null,"reasons":[],"holders":[{"kind":"host","name":"alice<b> (alice)","detail":"manual, it's <i>mine</i>","since":1795856400}]},{"gpu":1,"mig":null,"name":null,"health":null,"reasons":[],"holders":[{"kind":"k8s","name":"team/c1","detail":null,"since":1795858200}]},{"gpu":2,"mig":null,"name":null,"health":null,"reasons":[],"holders":[]},{"gpu":3,"mig":null,"name":null,"health":null,"reasons":[],"holders":[{"kind":"host","name":"an unreadable ledger entry","detail":"invalid JSON","since":null}]},{"gpu":4,"mig":null,"name":null,"health":null,"reasons":[],"holders":[{"kind":"host","name":"dave","detail":"run","since":1795859940}]}]}],"queue":[{"kind":"host","name":"carol","wants":"3 GPUs, has 2","since":1795859880},{"kind":"host","name":"erin","wants":"GPUs 0, 1","since":1795859940}]}
{"title":"gpu<1>: k8shazgpu host status","now":1795860000,"missing":["the ledger (Redis): redis 127.0.0.1:1: Connection refused"],"nodes":[],"queue":[]}
{"title":"gpu<1>: k8shazgpu host status","now":1795860000,"missing":["some of the ledger: canhazgpu:gpu:7: unreadable"],"nodes":[{"name":"gpu<1>","ready":null,"updated":null,"devices":[{"gpu":0,"mig":null,"name":null,"health":null,"reasons":[],"holders":[{"kind":"host","name":"alice<b> (alice)","detail":"manual, it's <i>mine</i>","since":1795856400}]},{"gpu":1,"mig":null,"name":null,"health":null,"reasons":[],"holders":[{"kind":"k8s","name":"team/c1","detail":null,"since":1795858200}]}]}],"queue":[]}
EOF
check 'every program of scripts/jq has its fixture here' \
	'for f in "$J"/*.jq; do n=$(basename "$f" .jq); grep -q "J/$n\.jq\|include \"$n\"" "$TOP/t/0027-jq.t" || { echo "$n: no fixture"; exit 1; }; done'
check 'no script evaluates what jq prints' '! grep -n "eval.*jq" "$TOP"/scripts/*'

done_testing
