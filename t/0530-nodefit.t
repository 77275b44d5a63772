#!/bin/sh
# lib/nodefit through t/unit/nodefit: tolerations against taints by the
# Kubernetes rules; required node affinity (every operator, matchFields,
# terms ORed, requirements ANDed, empty and malformed terms); the
# inventory records of a Node as the controller's jq PLAN wrote them and
# as sched-pick reads them; the digest that tells a Node event that
# changed nothing used from one that did.
. "$(dirname "$0")/lib.sh"

# nf: the driver; a failure (a bad request, or valgrind's 99) shows in
# the output every check compares
nf() { unit nodefit || echo "exit $?"; }

# ---- fixtures ----

# gpu2: two whole A100s, ready, cheap, cost 2.5, heartbeat fields and
# annotations nodefit must not read.
cat >gpu2.json <<'EOF'
{"apiVersion":"v1","kind":"Node","metadata":{"name":"gpu2","resourceVersion":"100","labels":{"kubernetes.io/hostname":"gpu2","nvidia.com/gpu.product":"NVIDIA-A100-SXM4-80GB","zone":"a","gen":"3","size":"x1","gpu-orchestrator/cheap-node":"true"},"annotations":{"canhazgpu.dev/cost":"2.5","agentaflow.gpu/last-update":"2026-11-23T10:00:00Z","agentaflow.gpu/devices":"[{\"index\":0,\"uuid\":\"GPU-aaa\",\"product\":\"NVIDIA A100-SXM4-80GB\",\"memory_mib\":81920,\"memory_used_mib\":1024,\"util_pct\":12.5,\"mig_enabled\":false,\"health\":\"ok\"},{\"index\":1,\"uuid\":\"GPU-bbb\",\"product\":\"NVIDIA A100-SXM4-80GB\",\"memory_mib\":81920,\"memory_used_mib\":0,\"util_pct\":0,\"mig_enabled\":false,\"health\":\"warn\",\"reasons\":[\"temperature 85 C\"]}]"}},"spec":{"podCIDR":"10.0.0.0/24"},"status":{"conditions":[{"type":"MemoryPressure","status":"False","lastHeartbeatTime":"2026-11-23T10:00:00Z"},{"type":"Ready","status":"True","lastHeartbeatTime":"2026-11-23T10:00:00Z","reason":"KubeletReady"}]}}
EOF
# mig: one A100 in MIG mode split 1g.10gb + 3g.40gb, as claim-make
# publishes it (mig a profile name, parent_uuid beside it).
cat >mig.json <<'EOF'
{"metadata":{"name":"mig","labels":{"nvidia.com/mig.strategy":"mixed"},"annotations":{"agentaflow.gpu/devices":"[{\"index\":0,\"uuid\":\"GPU-ppp\",\"product\":\"NVIDIA A100-SXM4-80GB\",\"memory_mib\":81920,\"memory_used_mib\":null,\"util_pct\":null,\"mig_enabled\":true,\"health\":\"ok\"},{\"index\":0,\"uuid\":\"MIG-111\",\"product\":\"NVIDIA A100-SXM4-80GB\",\"memory_mib\":9728,\"memory_used_mib\":null,\"util_pct\":null,\"mig_enabled\":true,\"mig\":\"1g.10gb\",\"parent_uuid\":\"GPU-ppp\",\"health\":\"ok\"},{\"index\":0,\"uuid\":\"MIG-333\",\"product\":\"NVIDIA A100-SXM4-80GB\",\"memory_mib\":40192,\"memory_used_mib\":null,\"util_pct\":null,\"mig_enabled\":true,\"mig\":\"3g.40gb\",\"parent_uuid\":\"GPU-ppp\",\"health\":\"ok\"}]"}},"status":{"conditions":[{"type":"Ready","status":"True"}]}}
EOF
# four idle GPUs, as the nodes a naive picker would prefer
four='[{\"index\":0,\"uuid\":\"NODE-0\",\"memory_mib\":81920,\"util_pct\":0},{\"index\":1,\"uuid\":\"NODE-1\",\"memory_mib\":81920,\"util_pct\":0},{\"index\":2,\"uuid\":\"NODE-2\",\"memory_mib\":81920,\"util_pct\":0},{\"index\":3,\"uuid\":\"NODE-3\",\"memory_mib\":81920,\"util_pct\":0}]'
# cordoned: kubectl cordon sets spec.unschedulable and the taint
printf '%s\n' "{\"metadata\":{\"name\":\"cordoned\",\"annotations\":{\"agentaflow.gpu/devices\":\"$(echo "$four" | sed s/NODE/COR/g)\"}},\"spec\":{\"unschedulable\":true,\"taints\":[{\"key\":\"node.kubernetes.io/unschedulable\",\"effect\":\"NoSchedule\",\"timeAdded\":\"2026-11-23T09:00:00Z\"}]},\"status\":{\"conditions\":[{\"type\":\"Ready\",\"status\":\"True\"}]}}" >cordoned.json
printf '%s\n' "{\"metadata\":{\"name\":\"notready\",\"annotations\":{\"agentaflow.gpu/devices\":\"$(echo "$four" | sed s/NODE/NR/g)\"}},\"status\":{\"conditions\":[{\"type\":\"Ready\",\"status\":\"False\",\"reason\":\"KubeletNotReady\"}]}}" >notready.json
# tainted: every effect, and an effect nodefit does not know
cat >tainted.json <<'EOF'
{"metadata":{"name":"tainted","labels":{"zone":"a"}},"spec":{"taints":[{"key":"soft","effect":"PreferNoSchedule"},{"key":"odd","effect":"Sometimes"},{"key":"gpu","value":"a100","effect":"NoSchedule"},{"key":"evict","effect":"NoExecute"}]},"status":{"conditions":[{"type":"Ready","status":"True"}]}}
EOF
for f in gpu2 mig cordoned notready tainted; do
	jq -e . $f.json >/dev/null || { echo "Bail out! fixture $f.json"; exit 1; }
done

# ---- tolerations ----

T='{"key":"gpu","value":"a100","effect":"NoSchedule"}'
check_output 'tolerations: Exists, Equal, default operator, effects' "nf <<IN
tolerated exists-key [{\"key\":\"gpu\",\"operator\":\"Exists\"}] $T
tolerated exists-nokey [{\"operator\":\"Exists\"}] $T
tolerated exists-emptykey [{\"key\":\"\",\"operator\":\"Exists\"}] $T
tolerated exists-otherkey [{\"key\":\"tpu\",\"operator\":\"Exists\"}] $T
tolerated exists-value-ignored [{\"key\":\"gpu\",\"operator\":\"Exists\",\"value\":\"h100\"}] $T
tolerated equal-match [{\"key\":\"gpu\",\"operator\":\"Equal\",\"value\":\"a100\"}] $T
tolerated equal-mismatch [{\"key\":\"gpu\",\"operator\":\"Equal\",\"value\":\"h100\"}] $T
tolerated equal-novalue [{\"key\":\"gpu\",\"operator\":\"Equal\"}] $T
tolerated equal-novalue-both [{\"key\":\"gpu\",\"operator\":\"Equal\"}] {\"key\":\"gpu\",\"effect\":\"NoSchedule\"}
tolerated equal-empty-both [{\"key\":\"gpu\",\"value\":\"\"}] {\"key\":\"gpu\",\"effect\":\"NoSchedule\"}
tolerated default-op [{\"key\":\"gpu\",\"value\":\"a100\"}] $T
tolerated empty-op [{\"key\":\"gpu\",\"operator\":\"\",\"value\":\"a100\"}] $T
tolerated equal-nokey [{\"operator\":\"Equal\",\"value\":\"a100\"}] $T
tolerated unknown-op [{\"key\":\"gpu\",\"operator\":\"In\",\"value\":\"a100\"}] $T
tolerated lowercase-op [{\"key\":\"gpu\",\"operator\":\"exists\"}] $T
tolerated effect-same [{\"key\":\"gpu\",\"operator\":\"Exists\",\"effect\":\"NoSchedule\"}] $T
tolerated effect-other [{\"key\":\"gpu\",\"operator\":\"Exists\",\"effect\":\"NoExecute\"}] $T
tolerated effect-empty [{\"key\":\"gpu\",\"operator\":\"Exists\",\"effect\":\"\"}] $T
tolerated effect-null [{\"key\":\"gpu\",\"operator\":\"Exists\",\"effect\":null}] $T
tolerated noexecute [{\"key\":\"evict\",\"operator\":\"Exists\",\"effect\":\"NoExecute\"}] {\"key\":\"evict\",\"effect\":\"NoExecute\"}
tolerated noexecute-by-noschedule [{\"key\":\"evict\",\"operator\":\"Exists\",\"effect\":\"NoSchedule\"}] {\"key\":\"evict\",\"effect\":\"NoExecute\"}
tolerated second-of-two [{\"key\":\"tpu\",\"operator\":\"Exists\"},{\"key\":\"gpu\",\"value\":\"a100\"}] $T
tolerated none [] $T
tolerated null null $T
tolerated not-array {\"key\":\"gpu\",\"operator\":\"Exists\"} $T
tolerated item-not-object [\"gpu\",1,null] $T
tolerated key-not-string [{\"key\":5,\"operator\":\"Exists\"}] $T
tolerated op-not-string [{\"key\":\"gpu\",\"operator\":true}] $T
tolerated value-not-string [{\"key\":\"gpu\",\"value\":0}] {\"key\":\"gpu\",\"value\":\"0\",\"effect\":\"NoSchedule\"}
tolerated effect-not-string [{\"operator\":\"Exists\",\"effect\":[]}] $T
tolerated taint-not-object [{\"operator\":\"Exists\"}] \"gpu\"
IN" <<'EOF'
exists-key: yes
exists-nokey: yes
exists-emptykey: yes
exists-otherkey: no
exists-value-ignored: yes
equal-match: yes
equal-mismatch: no
equal-novalue: no
equal-novalue-both: yes
equal-empty-both: yes
default-op: yes
empty-op: yes
equal-nokey: no
unknown-op: no
lowercase-op: no
effect-same: yes
effect-other: no
effect-empty: yes
effect-null: yes
noexecute: yes
noexecute-by-noschedule: no
second-of-two: yes
none: no
null: no
not-array: no
item-not-object: no
key-not-string: no
op-not-string: no
value-not-string: no
effect-not-string: no
taint-not-object: no
EOF

check_output 'taints: NoSchedule and NoExecute must be tolerated, in order; others ignored' 'nf <<IN
eligible none @tainted.json null null
eligible empty @tainted.json [] []
eligible gpu @tainted.json [{"key":"gpu","operator":"Exists"}] null
eligible gpu-evict @tainted.json [{"key":"gpu","value":"a100"},{"key":"evict","operator":"Exists","effect":"NoExecute"}] null
eligible all @tainted.json [{"operator":"Exists"}] null
eligible noschedule-only @tainted.json [{"operator":"Exists","effect":"NoSchedule"}] null
eligible cordon @cordoned.json [] null
eligible cordon-tolerated @cordoned.json [{"key":"node.kubernetes.io/unschedulable","operator":"Exists"}] null
eligible taint-before-affinity @tainted.json [] [{"matchExpressions":[{"key":"zone","operator":"In","values":["b"]}]}]
eligible affinity-after-taints @tainted.json [{"operator":"Exists"}] [{"matchExpressions":[{"key":"zone","operator":"In","values":["b"]}]}]
eligible untainted @gpu2.json [] null
eligible bad-taints {"spec":{"taints":[null,"x",{"key":"k","effect":5},{"key":"k2","value":"","effect":"NoExecute"}]}} [] null
IN' <<'EOF'
none: taint gpu=a100:NoSchedule
empty: taint gpu=a100:NoSchedule
gpu: taint evict:NoExecute
gpu-evict: ok
all: ok
noschedule-only: taint evict:NoExecute
cordon: taint node.kubernetes.io/unschedulable:NoSchedule
cordon-tolerated: ok
taint-before-affinity: taint gpu=a100:NoSchedule
affinity-after-taints: affinity node affinity
untainted: ok
bad-taints: taint k2:NoExecute
EOF

check_output 'the taint named is cut to fit, as clean UTF-8' 'nf <<IN
why size-0 0 @tainted.json []
why size-1 1 @tainted.json []
why size-8 8 @tainted.json []
why size-full 256 @tainted.json []
why control 64 {"spec":{"taints":[{"key":"a\u0001b","value":"x\ny","effect":"NoSchedule"}]}} []
why utf8-cut 6 {"spec":{"taints":[{"key":"k","value":"\u00e9\u00e9","effect":"NoSchedule"}]}} []
why tolerated 8 @tainted.json [{"operator":"Exists"}]
IN' <<'EOF'
size-0: taint []
size-1: taint []
size-8: taint [gpu=a10]
size-full: taint [gpu=a100:NoSchedule]
control: taint [a?b=x?y:NoSchedule]
utf8-cut: taint [k=é?]
tolerated: other [XXXXXXXX]
EOF

# ---- node affinity ----

# aff TAG TERMS: whether gpu2 (zone a, gen 3, size x1) meets TERMS. A
# requirement kube-scheduler cannot parse (a key no label key, a value no
# label value: so no sign on a Gt or Lt integer) matches nothing.
aff() { printf 'eligible %s @gpu2.json null %s\n' "$1" "$2"; }
# expr TAG KEY OP VALUES: one term of one expression
expr() { aff "$1" "[{\"matchExpressions\":[{\"key\":\"$2\",\"operator\":\"$3\",\"values\":$4}]}]"; }
# field TAG KEY OP VALUES: one term of one field requirement
field() { aff "$1" "[{\"matchFields\":[{\"key\":\"$2\",\"operator\":\"$3\",\"values\":$4}]}]"; }

{
	expr in zone In '["b","a"]'
	expr in-miss zone In '["b"]'
	expr in-absent nolabel In '["a"]'
	expr in-novalues zone In '[]'
	expr notin zone NotIn '["b"]'
	expr notin-miss zone NotIn '["a"]'
	expr notin-absent nolabel NotIn '["a"]'
	expr notin-novalues zone NotIn '[]'
	expr exists zone Exists null
	expr exists-absent nolabel Exists null
	expr exists-values zone Exists '["a"]'
	expr dne nolabel DoesNotExist null
	expr dne-present zone DoesNotExist null
	expr gt gen Gt '["2"]'
	expr gt-equal gen Gt '["3"]'
	expr lt gen Lt '["4"]'
	expr lt-equal gen Lt '["3"]'
	expr gt-zero-padded gen Gt '["02"]'
	expr gt-plus gen Gt '["+2"]'
	expr gt-negative gen Gt '["-1"]'
	expr gt-label-not-int size Gt '["1"]'
	expr gt-value-not-int gen Gt '["two"]'
	expr gt-value-space gen Gt '[" 2"]'
	expr gt-value-real gen Gt '["2.5"]'
	expr gt-value-hex gen Gt '["0x1"]'
	expr gt-overflow gen Lt '["99999999999999999999"]'
	expr gt-two-values gen Gt '["1","2"]'
	expr gt-absent nolabel Gt '["1"]'
	expr unknown-op zone Equals '["a"]'
	expr values-not-strings zone In '[1]'
	expr values-not-array zone In '"a"'
	expr notin-bad-value zone NotIn '["b c"]'
	expr notin-empty-value nolabel NotIn '[""]'
	expr dne-bad-key 'Zone!' DoesNotExist null
	expr dne-prefixed-key example.com/zone DoesNotExist null
	expr dne-upper-prefix Example.com/zone DoesNotExist null
	expr dne-empty-prefix /zone DoesNotExist null
	expr dne-two-slashes a/b/c DoesNotExist null
	expr dne-long-key $(printf 'k%.0s' $(seq 64)) DoesNotExist null
	expr notin-long-key $(printf 'k%.0s' $(seq 63)) NotIn '["x"]'
	field name metadata.name In '["gpu2"]'
	field name-miss metadata.name In '["gpu3"]'
	field name-notin metadata.name NotIn '["gpu3"]'
	field name-notin-miss metadata.name NotIn '["gpu2"]'
	field name-two-values metadata.name In '["gpu2","gpu3"]'
	field name-exists metadata.name Exists null
	field other-field metadata.uid In '["gpu2"]'
	field label-as-field zone In '["a"]'
	aff or-second '[{"matchExpressions":[{"key":"zone","operator":"In","values":["b"]}]},{"matchExpressions":[{"key":"zone","operator":"In","values":["a"]}]}]'
	aff or-none '[{"matchExpressions":[{"key":"zone","operator":"In","values":["b"]}]},{"matchExpressions":[{"key":"zone","operator":"In","values":["c"]}]}]'
	aff and-all '[{"matchExpressions":[{"key":"zone","operator":"In","values":["a"]},{"key":"gen","operator":"Gt","values":["2"]}],"matchFields":[{"key":"metadata.name","operator":"In","values":["gpu2"]}]}]'
	aff and-one-fails '[{"matchExpressions":[{"key":"zone","operator":"In","values":["a"]},{"key":"gen","operator":"Gt","values":["5"]}]}]'
	aff and-field-fails '[{"matchExpressions":[{"key":"zone","operator":"In","values":["a"]}],"matchFields":[{"key":"metadata.name","operator":"In","values":["gpu3"]}]}]'
	aff empty-term '[{}]'
	aff empty-lists '[{"matchExpressions":[],"matchFields":[]}]'
	aff null-lists '[{"matchExpressions":null,"matchFields":null}]'
	aff empty-or-good '[{},{"matchExpressions":[{"key":"zone","operator":"Exists"}]}]'
	aff no-terms '[]'
	aff terms-not-array '{"matchExpressions":[]}'
	aff term-not-object '["zone"]'
	aff exprs-not-array '[{"matchExpressions":{"key":"zone","operator":"Exists"}}]'
	aff exprs-bad-list-beside-good '[{"matchExpressions":"x","matchFields":[{"key":"metadata.name","operator":"In","values":["gpu2"]}]}]'
	aff expr-not-object '[{"matchExpressions":["zone"]}]'
	aff expr-no-key '[{"matchExpressions":[{"operator":"Exists"}]}]'
	aff expr-no-op '[{"matchExpressions":[{"key":"zone","values":["a"]}]}]'
} >aff.in
check_output 'node affinity: operators, fields, terms ORed, requirements ANDed' \
	'nf <aff.in' <<'EOF'
in: ok
in-miss: affinity node affinity
in-absent: affinity node affinity
in-novalues: affinity node affinity
notin: ok
notin-miss: affinity node affinity
notin-absent: ok
notin-novalues: affinity node affinity
exists: ok
exists-absent: affinity node affinity
exists-values: affinity node affinity
dne: ok
dne-present: affinity node affinity
gt: ok
gt-equal: affinity node affinity
lt: ok
lt-equal: affinity node affinity
gt-zero-padded: ok
gt-plus: affinity node affinity
gt-negative: affinity node affinity
gt-label-not-int: affinity node affinity
gt-value-not-int: affinity node affinity
gt-value-space: affinity node affinity
gt-value-real: affinity node affinity
gt-value-hex: affinity node affinity
gt-overflow: affinity node affinity
gt-two-values: affinity node affinity
gt-absent: affinity node affinity
unknown-op: affinity node affinity
values-not-strings: affinity node affinity
values-not-array: affinity node affinity
notin-bad-value: affinity node affinity
notin-empty-value: ok
dne-bad-key: affinity node affinity
dne-prefixed-key: ok
dne-upper-prefix: affinity node affinity
dne-empty-prefix: affinity node affinity
dne-two-slashes: affinity node affinity
dne-long-key: affinity node affinity
notin-long-key: ok
name: ok
name-miss: affinity node affinity
name-notin: ok
name-notin-miss: affinity node affinity
name-two-values: affinity node affinity
name-exists: affinity node affinity
other-field: affinity node affinity
label-as-field: affinity node affinity
or-second: ok
or-none: affinity node affinity
and-all: ok
and-one-fails: affinity node affinity
and-field-fails: affinity node affinity
empty-term: affinity node affinity
empty-lists: affinity node affinity
null-lists: affinity node affinity
empty-or-good: ok
no-terms: ok
terms-not-array: ok
term-not-object: affinity node affinity
exprs-not-array: affinity node affinity
exprs-bad-list-beside-good: affinity node affinity
expr-not-object: affinity node affinity
expr-no-key: affinity node affinity
expr-no-op: affinity node affinity
EOF

# ---- inventory records ----

check_output 'records: a node of two whole GPUs' 'nf <<IN
records gpu2 @gpu2.json
IN' <<'EOF'
{"kind":"node","name":"gpu2","labels":{"kubernetes.io/hostname":"gpu2","nvidia.com/gpu.product":"NVIDIA-A100-SXM4-80GB","zone":"a","gen":"3","size":"x1","gpu-orchestrator/cheap-node":"true"},"ready":true,"unschedulable":false,"cheap":true,"cost":2.5}
{"kind":"gpu","node":"gpu2","index":0,"uuid":"GPU-aaa","product":"NVIDIA A100-SXM4-80GB","memory_mib":81920,"memory_used_mib":1024,"util_pct":12.5,"mig_enabled":false,"health":"ok","mig":null}
{"kind":"gpu","node":"gpu2","index":1,"uuid":"GPU-bbb","product":"NVIDIA A100-SXM4-80GB","memory_mib":81920,"memory_used_mib":0,"util_pct":0,"mig_enabled":false,"health":"warn","mig":null}
gpu2: 2
EOF

check_output 'records: a MIG node, its devices with their profile and parent' 'nf <<IN
records mig @mig.json
IN' <<'EOF'
{"kind":"node","name":"mig","labels":{"nvidia.com/mig.strategy":"mixed"},"ready":true,"unschedulable":false,"cheap":false,"cost":1}
{"kind":"gpu","node":"mig","index":0,"uuid":"GPU-ppp","product":"NVIDIA A100-SXM4-80GB","memory_mib":81920,"memory_used_mib":null,"util_pct":null,"mig_enabled":true,"health":"ok","mig":null}
{"kind":"gpu","node":"mig","index":0,"uuid":"MIG-111","product":"NVIDIA A100-SXM4-80GB","memory_mib":9728,"memory_used_mib":null,"util_pct":null,"mig_enabled":true,"health":"ok","mig":{"profile":"1g.10gb","parent_uuid":"GPU-ppp"}}
{"kind":"gpu","node":"mig","index":0,"uuid":"MIG-333","product":"NVIDIA A100-SXM4-80GB","memory_mib":40192,"memory_used_mib":null,"util_pct":null,"mig_enabled":true,"health":"ok","mig":{"profile":"3g.40gb","parent_uuid":"GPU-ppp"}}
mig: 3
EOF

check_output 'records: cordoned and not-ready nodes; taints are not folded in' 'nf <<IN
records cordoned @cordoned.json
records notready @notready.json
records tainted @tainted.json
records unknown {"metadata":{"name":"u"},"status":{"conditions":[{"type":"Ready","status":"Unknown"}]}}
records second-ready {"metadata":{"name":"r2"},"status":{"conditions":[{"type":"Ready","status":"False"},{"type":"Ready","status":"True"}]}}
records no-status {"metadata":{"name":"n"},"spec":{"unschedulable":false}}
records unsched-not-bool {"metadata":{"name":"n"},"spec":{"unschedulable":"true"}}
IN' <<'EOF'
{"kind":"node","name":"cordoned","labels":{},"ready":true,"unschedulable":true,"cheap":false,"cost":1}
{"kind":"gpu","node":"cordoned","index":0,"uuid":"COR-0","product":null,"memory_mib":81920,"memory_used_mib":null,"util_pct":0,"mig_enabled":false,"health":"ok","mig":null}
{"kind":"gpu","node":"cordoned","index":1,"uuid":"COR-1","product":null,"memory_mib":81920,"memory_used_mib":null,"util_pct":0,"mig_enabled":false,"health":"ok","mig":null}
{"kind":"gpu","node":"cordoned","index":2,"uuid":"COR-2","product":null,"memory_mib":81920,"memory_used_mib":null,"util_pct":0,"mig_enabled":false,"health":"ok","mig":null}
{"kind":"gpu","node":"cordoned","index":3,"uuid":"COR-3","product":null,"memory_mib":81920,"memory_used_mib":null,"util_pct":0,"mig_enabled":false,"health":"ok","mig":null}
cordoned: 4
{"kind":"node","name":"notready","labels":{},"ready":false,"unschedulable":false,"cheap":false,"cost":1}
{"kind":"gpu","node":"notready","index":0,"uuid":"NR-0","product":null,"memory_mib":81920,"memory_used_mib":null,"util_pct":0,"mig_enabled":false,"health":"ok","mig":null}
{"kind":"gpu","node":"notready","index":1,"uuid":"NR-1","product":null,"memory_mib":81920,"memory_used_mib":null,"util_pct":0,"mig_enabled":false,"health":"ok","mig":null}
{"kind":"gpu","node":"notready","index":2,"uuid":"NR-2","product":null,"memory_mib":81920,"memory_used_mib":null,"util_pct":0,"mig_enabled":false,"health":"ok","mig":null}
{"kind":"gpu","node":"notready","index":3,"uuid":"NR-3","product":null,"memory_mib":81920,"memory_used_mib":null,"util_pct":0,"mig_enabled":false,"health":"ok","mig":null}
notready: 4
{"kind":"node","name":"tainted","labels":{"zone":"a"},"ready":true,"unschedulable":false,"cheap":false,"cost":1}
tainted: 0
{"kind":"node","name":"u","labels":{},"ready":false,"unschedulable":false,"cheap":false,"cost":1}
unknown: 0
{"kind":"node","name":"r2","labels":{},"ready":true,"unschedulable":false,"cheap":false,"cost":1}
second-ready: 0
{"kind":"node","name":"n","labels":{},"ready":false,"unschedulable":false,"cheap":false,"cost":1}
no-status: 0
{"kind":"node","name":"n","labels":{},"ready":false,"unschedulable":false,"cheap":false,"cost":1}
unsched-not-bool: 0
EOF

check_output 'records: extra labels join the node labels and win; non-strings left out' 'nf <<IN
records extra {"metadata":{"name":"x","labels":{"zone":"a","bad":5,"gpu-orchestrator/cheap-node":"yes"}}} {"k8shazgpu.dev/c1":"true","zone":"b","n":1,"z":null}
records extra-null {"metadata":{"name":"x","labels":{"zone":"a"}}} null
records extra-not-object {"metadata":{"name":"x","labels":{"zone":"a"}}} ["zone"]
records labels-not-object {"metadata":{"name":"x","labels":["zone"]}} {"c":"true"}
IN' <<'EOF'
{"kind":"node","name":"x","labels":{"zone":"b","gpu-orchestrator/cheap-node":"yes","k8shazgpu.dev/c1":"true"},"ready":false,"unschedulable":false,"cheap":false,"cost":1}
extra: 0
{"kind":"node","name":"x","labels":{"zone":"a"},"ready":false,"unschedulable":false,"cheap":false,"cost":1}
extra-null: 0
{"kind":"node","name":"x","labels":{"zone":"a"},"ready":false,"unschedulable":false,"cheap":false,"cost":1}
extra-not-object: 0
{"kind":"node","name":"x","labels":{"c":"true"},"ready":false,"unschedulable":false,"cheap":false,"cost":1}
labels-not-object: 0
EOF

# cost NAME VALUE: a node named NAME whose cost annotation is VALUE (a
# JSON string)
cost() { printf 'records %s {"metadata":{"name":"%s","annotations":{"canhazgpu.dev/cost":%s}}}\n' "$1" "$1" "$2"; }
{
	cost whole '"3"'
	cost real '"0.25"'
	cost exp '"1e3"'
	cost negative '"-2"'
	cost zero '"0"'
	cost big '"1e300"'
	cost huge-whole '"18014398509481984"'
	cost word '"cheap"'
	cost empty '""'
	cost space '" 2"'
	cost hex '"0x10"'
	cost inf '"inf"'
	cost nan '"NaN"'
	cost overflow '"1e400"'
	cost trailing '"2x"'
	cost leading-dot '".5"'
	cost not-string '7'
} >cost.in
check_output 'records: cost is the annotation as a JSON number, else 1' \
	'nf <cost.in | grep "^{" | jq -c "[.name, .cost]"' <<'EOF'
["whole",3]
["real",0.25]
["exp",1000]
["negative",-2]
["zero",0]
["big",1e+300]
["huge-whole",18014398509481984]
["word",1]
["empty",1]
["space",1]
["hex",1]
["inf",1]
["nan",1]
["overflow",1]
["trailing",1]
["leading-dot",1]
["not-string",1]
EOF

check_output 'records: the cost as written (integers as integers)' \
	'printf "%s\n" "$(cost real "\"0.1\"")" "$(cost big "\"1e300\"")" "$(cost huge "\"18014398509481984\"")" | nf | grep -o "\"cost\":[^}]*"' <<'EOF'
"cost":0.1
"cost":1e300
"cost":18014398509481984.0
EOF

# devs NAME JSON: a node whose devices annotation is JSON (a JSON string)
devs() { printf 'records %s {"metadata":{"name":"%s","annotations":{"agentaflow.gpu/devices":%s}}}\n' "$1" "$1" "$2"; }
{
	devs not-json '"[{\"uuid\":"'
	devs object '"{\"uuid\":\"GPU-1\"}"'
	devs empty-text '""'
	devs not-string '[{"uuid":"GPU-1"}]'
	devs empty '"[]"'
	devs skipped '"[\"GPU-1\",null,{},{\"uuid\":\"\"},{\"uuid\":5},{\"index\":3,\"uuid\":\"GPU-ok\"}]"'
	devs copied '"[{\"index\":\"0\",\"uuid\":\"GPU-w\",\"memory_mib\":-1,\"health\":\"broken\",\"mig_enabled\":\"yes\",\"mig\":5,\"extra\":1}]"'
	devs defaults-null '"[{\"index\":0,\"uuid\":\"GPU-n\",\"mig_enabled\":null,\"health\":null,\"mig\":false}]"'
	devs nul-in-string '"[{\"uuid\":\"GPU-\\u0000x\"}]"'
} >devs.in
check_output 'records: device annotations bad, partly bad, or odd' 'nf <devs.in' <<'EOF'
{"kind":"node","name":"not-json","labels":{},"ready":false,"unschedulable":false,"cheap":false,"cost":1}
not-json: -1
{"kind":"node","name":"object","labels":{},"ready":false,"unschedulable":false,"cheap":false,"cost":1}
object: -1
{"kind":"node","name":"empty-text","labels":{},"ready":false,"unschedulable":false,"cheap":false,"cost":1}
empty-text: -1
{"kind":"node","name":"not-string","labels":{},"ready":false,"unschedulable":false,"cheap":false,"cost":1}
not-string: -1
{"kind":"node","name":"empty","labels":{},"ready":false,"unschedulable":false,"cheap":false,"cost":1}
empty: 0
{"kind":"node","name":"skipped","labels":{},"ready":false,"unschedulable":false,"cheap":false,"cost":1}
{"kind":"gpu","node":"skipped","index":3,"uuid":"GPU-ok","product":null,"memory_mib":null,"memory_used_mib":null,"util_pct":null,"mig_enabled":false,"health":"ok","mig":null}
skipped: 1
{"kind":"node","name":"copied","labels":{},"ready":false,"unschedulable":false,"cheap":false,"cost":1}
{"kind":"gpu","node":"copied","index":"0","uuid":"GPU-w","product":null,"memory_mib":-1,"memory_used_mib":null,"util_pct":null,"mig_enabled":"yes","health":"broken","mig":{"profile":5,"parent_uuid":null}}
copied: 1
{"kind":"node","name":"defaults-null","labels":{},"ready":false,"unschedulable":false,"cheap":false,"cost":1}
{"kind":"gpu","node":"defaults-null","index":0,"uuid":"GPU-n","product":null,"memory_mib":null,"memory_used_mib":null,"util_pct":null,"mig_enabled":false,"health":"ok","mig":null}
defaults-null: 1
{"kind":"node","name":"nul-in-string","labels":{},"ready":false,"unschedulable":false,"cheap":false,"cost":1}
nul-in-string: -1
EOF

# PLAN is the inventory part of the controller's jq program before it
# became sched-queue, less the taints it folded into unschedulable (now
# nf_eligible's); it must make the same records from the same nodes.
PLAN='.metadata.name as $n
	| {kind: "node", name: .metadata.name, labels: (.metadata.labels // {}),
	   ready: any(.status.conditions[]?; .type == "Ready" and .status == "True"),
	   unschedulable: (.spec.unschedulable // false),
	   cheap: (.metadata.labels["gpu-orchestrator/cheap-node"] == "true"),
	   cost: ((.metadata.annotations["canhazgpu.dev/cost"] // "1") | tonumber? // 1)},
	  (.metadata.annotations["agentaflow.gpu/devices"] // "[]" | fromjson? // [] | .[]
	   | {kind: "gpu", node: $n, index, uuid, product, memory_mib, memory_used_mib, util_pct,
	      mig_enabled: (.mig_enabled // false), health: (.health // "ok"),
	      mig: (if .mig then {profile: .mig, parent_uuid} else null end)})'
check 'records: the same as the jq PLAN made for the same nodes' '
	for f in gpu2 mig cordoned notready tainted; do
		jq -c "$PLAN" $f.json >$f.jq &&
		echo "records $f @$f.json" | nf | grep -v "^$f: " >$f.nf &&
		jq -c . $f.nf | cmp - $f.jq || exit 1
	done'

check_output 'sched-pick reads the records: cordoned and not-ready nodes never chosen' '
	{
		echo "records a @gpu2.json {\"k8shazgpu.dev/c1\":\"true\"}"
		echo "records b @mig.json"
		echo "records c @cordoned.json"
		echo "records d @notready.json"
	} | nf | grep "^{" >inv &&
	cat inv - <<REQ | sched-pick -S spread >placed 2>err; echo "exit $?"; cat err
{"kind":"request","id":"w/two","gpus":2}
{"kind":"request","id":"w/mig","mig_profile":"1g.10gb"}
{"kind":"request","id":"w/mig3","mig_profile":"3g.40gb"}
{"kind":"request","id":"w/more","gpus":1}
{"kind":"request","id":"w/sel","node_selector":{"k8shazgpu.dev/c1":"true"}}
REQ
	jq -c "if .kind == \"placement\" then [.id, .node, .devices] else [.id, .reason] end" placed' <<'EOF'
exit 0
["w/two","gpu2",["GPU-aaa","GPU-bbb"]]
["w/mig","mig",["MIG-111"]]
["w/mig3","mig",["MIG-333"]]
["w/more","no node has 1 free healthy GPU"]
["w/sel","no node matching node selector k8shazgpu.dev/c1=true has 1 free healthy GPU"]
EOF

# ---- GPUs held on the host ----

# claim-make writes "held" into every device of agentaflow.gpu/devices;
# a held device reaches sched-pick as unhealthy, whatever its own health.
{
	devs held-true '"[{\"index\":0,\"uuid\":\"GPU-h\",\"health\":\"ok\",\"held\":true},{\"index\":1,\"uuid\":\"GPU-f\",\"health\":\"warn\",\"held\":false}]"'
	devs held-object '"[{\"index\":0,\"uuid\":\"GPU-o\",\"health\":\"warn\",\"held\":{\"user\":\"alice\",\"type\":\"manual\"}}]"'
	devs held-null '"[{\"index\":0,\"uuid\":\"GPU-n\",\"held\":null}]"'
	devs held-mig '"[{\"index\":0,\"uuid\":\"MIG-h\",\"mig_enabled\":true,\"mig\":\"1g.10gb\",\"parent_uuid\":\"GPU-p\",\"health\":\"ok\",\"held\":true}]"'
} >held.in
check_output 'records: a held device is unhealthy to sched-pick; held false or null leave health alone' \
	'nf <held.in | grep -v "^{\"kind\":\"node\""' <<'EOF'
{"kind":"gpu","node":"held-true","index":0,"uuid":"GPU-h","product":null,"memory_mib":null,"memory_used_mib":null,"util_pct":null,"mig_enabled":false,"health":"unhealthy","mig":null}
{"kind":"gpu","node":"held-true","index":1,"uuid":"GPU-f","product":null,"memory_mib":null,"memory_used_mib":null,"util_pct":null,"mig_enabled":false,"health":"warn","mig":null}
held-true: 2
{"kind":"gpu","node":"held-object","index":0,"uuid":"GPU-o","product":null,"memory_mib":null,"memory_used_mib":null,"util_pct":null,"mig_enabled":false,"health":"unhealthy","mig":null}
held-object: 1
{"kind":"gpu","node":"held-null","index":0,"uuid":"GPU-n","product":null,"memory_mib":null,"memory_used_mib":null,"util_pct":null,"mig_enabled":false,"health":"ok","mig":null}
held-null: 1
{"kind":"gpu","node":"held-mig","index":0,"uuid":"MIG-h","product":null,"memory_mib":null,"memory_used_mib":null,"util_pct":null,"mig_enabled":true,"health":"unhealthy","mig":{"profile":"1g.10gb","parent_uuid":"GPU-p"}}
held-mig: 1
EOF

# The node agent's own output, end to end: the small node (4 H200 of 7
# 1g.10gb each) published by claim-make with GPU 0 held by alice, then
# released; 29 requests for one 1g.10gb device each.
hold='{"user":"alice","actual_user":"alice","type":"manual","since":"2026-11-24T01:02:03Z","expires":null,"note":null}'
# placed NODEFILE: the requests placed on the node, counted per GPU index,
# then the reasons of those not placed
placed() {
	echo "records small @$1" | nf | grep "^{" >inv.$1 &&
	i=1 && while [ $i -le 29 ]; do echo "{\"kind\":\"request\",\"id\":\"w/m$i\",\"mig_profile\":\"1g.10gb\"}"; i=$((i + 1)); done |
	cat inv.$1 - | sched-pick >placed.$1 && cat inv.$1 placed.$1 | jq -r -s "
		(map(select(.kind == \"gpu\") | {(.uuid): .index}) | add) as \$ix
		| (map(select(.kind == \"placement\") | \$ix[.devices[0]]) | group_by(.) | map(\"gpu \(.[0]): \(length)\") | join(\", \")),
		  (map(select(.kind == \"unschedulable\") | .reason) | group_by(.) | map(\"\(length) x \(.[0])\")[])"
}
check_output 'sched-pick never places on a GPU the host holds, MIG devices included; all of it again once released' '
	{
		jq -c --argjson h "$hold" "if .index == 0 then . + {held: \$h} else . end" "$FIXTURES/claim-make/small.ndjson"
		echo "{\"kind\":\"flush\"}"
		cat "$FIXTURES/claim-make/small.ndjson"
	} | K8SHAZGPU_NOW=86400 claim-make | jq -c "select(.kind == \"Node\") | .status = {conditions: [{type: \"Ready\", status: \"True\"}]}" >nodes &&
	sed -n 1p nodes >held.json && sed -n 2p nodes >free.json &&
	placed held.json && placed free.json &&
	echo "digest held-then-free @held.json @free.json" | nf' <<'EOF'
gpu 1: 7, gpu 2: 7, gpu 3: 7
8 x no node has 1 free 1g.10gb device
gpu 0: 7, gpu 1: 7, gpu 2: 7, gpu 3: 7
1 x no node has 1 free 1g.10gb device
held-then-free: different
EOF

# ---- digest ----

# variant TAG JQ: digest gpu2 against gpu2 changed by the jq filter JQ
variant() { printf 'digest %s @gpu2.json %s\n' "$1" "$(jq -c "$2" gpu2.json)"; }
{
	variant itself .
	variant resource-version '.metadata.resourceVersion = "101"'
	variant heartbeat '.status.conditions[].lastHeartbeatTime = "2026-11-23T10:00:10Z"'
	variant last-update '.metadata.annotations["agentaflow.gpu/last-update"] = "2026-11-23T10:00:10Z"'
	variant other-annotation '.metadata.annotations["node.alpha.kubernetes.io/ttl"] = "0"'
	variant other-condition '.status.conditions[0].status = "True"'
	variant other-spec '.spec.podCIDR = "10.0.1.0/24"'
	variant label-order '.metadata.labels = (.metadata.labels | to_entries | reverse | from_entries)'
	variant label-changed '.metadata.labels.zone = "b"'
	variant label-added '.metadata.labels.new = "x"'
	variant label-removed 'del(.metadata.labels.size)'
	variant taint-added '.spec.taints = [{"key":"gpu","effect":"NoSchedule"}]'
	variant taint-none-empty '.spec.taints = []'
	variant cordoned '.spec.unschedulable = true'
	variant not-ready '.status.conditions[1].status = "False"'
	variant devices-changed '.metadata.annotations["agentaflow.gpu/devices"] |= sub("12.5"; "13")'
	variant devices-removed 'del(.metadata.annotations["agentaflow.gpu/devices"])'
	variant held-changed '.metadata.annotations["agentaflow.gpu/devices"] |= sub("\"health\":\"ok\""; "\"health\":\"ok\",\"held\":true")'
	variant host-holds '.metadata.annotations["canhazgpu.dev/host-holds"] = "[{\"gpu\":0,\"user\":\"alice\"}]"'
	variant cost-changed '.metadata.annotations["canhazgpu.dev/cost"] = "3"'
	variant cost-removed 'del(.metadata.annotations["canhazgpu.dev/cost"])'
	variant renamed '.metadata.name = "gpu3"'
	echo 'digest taint-changed {"spec":{"taints":[{"key":"gpu","value":"a","effect":"NoSchedule"}]}} {"spec":{"taints":[{"key":"gpu","value":"b","effect":"NoSchedule"}]}}'
	echo 'digest taint-order {"spec":{"taints":[{"key":"a","effect":"NoSchedule"},{"key":"b","effect":"NoSchedule"}]}} {"spec":{"taints":[{"key":"b","effect":"NoSchedule"},{"key":"a","effect":"NoSchedule"}]}}'
	echo 'digest absent-vs-empty-devices {"metadata":{"annotations":{}}} {"metadata":{"annotations":{"agentaflow.gpu/devices":""}}}'
	echo 'digest parts-do-not-run-together {"metadata":{"annotations":{"agentaflow.gpu/devices":"ab"}}} {"metadata":{"annotations":{"agentaflow.gpu/devices":"a","canhazgpu.dev/cost":"b"}}}'
	echo 'digest not-objects null 5'
} >digest.in
check_output 'digest: the same across changes nodefit does not read, different on one it does' \
	'nf <digest.in' <<'EOF'
itself: same
resource-version: same
heartbeat: same
last-update: same
other-annotation: same
other-condition: same
other-spec: same
label-order: same
label-changed: different
label-added: different
label-removed: different
taint-added: different
taint-none-empty: different
cordoned: different
not-ready: different
devices-changed: different
devices-removed: different
held-changed: different
host-holds: same
cost-changed: different
cost-removed: different
renamed: different
taint-changed: different
taint-order: different
absent-vs-empty-devices: different
parts-do-not-run-together: different
not-objects: same
EOF

check 'digest: the same in two runs, of separately read copies' '
	jq -c "{status, spec, metadata}" gpu2.json >copy.json &&
	a=$(echo "digest a @gpu2.json" | nf) && b=$(echo "digest a @copy.json" | nf) &&
	echo "$a" | grep -Eqx "a: [0-9a-f]{16}" && test "$a" = "$b"'

check 'a line that is no request exits 1' '
	printf "digest a {\n" | unit nodefit >out; test $? -eq 1 && grep -q "^bad value 1: " out'

done_testing
