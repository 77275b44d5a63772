# sim-topology.jq: k8shazgpu-sim: turns a topology document into bare KWOK Node
# objects: names, labels, taint, cpu/memory/pods. What the GPUs add comes
# from gpu-probe and claim-make (gpu_side), which also check the layout.
def num: if type == "string" and test("^[0-9]+$") then tonumber else . end;
(.defaults // {}) as $d
| (.nodes // [])[]
| ($d * . | .count |= num) as $n
| (if $n.count then [range(0; $n.count) as $k | "\($n.name)-\($k)"] else [$n.name] end)[] as $name
| {cpu: ($n.cpu // "32" | tostring), memory: ($n.memory // "256Gi" | tostring),
   pods: ($n.pods // "110" | tostring)} as $r
| {apiVersion: "v1", kind: "Node",
   metadata: {name: $name,
     labels: (($n.labels // {}) + {type: "kwok", "kubernetes.io/hostname": $name,
       "kubernetes.io/os": "linux", "kubernetes.io/arch": "amd64"}
       + (if $n.instanceType then {"node.kubernetes.io/instance-type": $n.instanceType} else {} end)),
     annotations: (($n.annotations // {}) + {"kwok.x-k8s.io/node": "fake"})},
   spec: {taints: [{key: "kwok.x-k8s.io/node", value: "fake", effect: "NoSchedule"}]},
   status: {capacity: $r, allocatable: $r}}
