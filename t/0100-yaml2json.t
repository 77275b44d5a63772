#!/bin/sh
# yaml2json: YAML documents to JSON lines (lib/y2j.c through the tool).
. "$(dirname "$0")/lib.sh"

cat >block.yaml <<'EOF'
# a comment
name: a100
count: 8
labels:
  tier: gold
  zone: "eu-1"
devices:
- index: 0
  mig: [1g.10gb, 2g.20gb]
- index: 1
  mig: []
empty: {}
EOF
check_output 'block mapping and sequence' 'yaml2json block.yaml' <<'EOF'
{"name":"a100","count":8,"labels":{"tier":"gold","zone":"eu-1"},"devices":[{"index":0,"mig":["1g.10gb","2g.20gb"]},{"index":1,"mig":[]}],"empty":{}}
EOF

check_output 'flow style, stdin' \
	"printf '%s\n' '{a: [1, {b: c}], \"d e\": [x, y], f: {}}' | yaml2json" <<'EOF'
{"a":[1,{"b":"c"}],"d e":["x","y"],"f":{}}
EOF

cat >multi.yaml <<'EOF'
a: 1
---
- b
...
--- c
---
EOF
check_output 'each document one line; a trailing --- is null' \
	'yaml2json multi.yaml' <<'EOF'
{"a":1}
["b"]
"c"
null
EOF

check_output '-s skips null documents' 'yaml2json -s multi.yaml' <<'EOF'
{"a":1}
["b"]
"c"
EOF

check_output '-a wraps each file in an array' \
	'yaml2json -a multi.yaml block.yaml </dev/null && yaml2json -a -s multi.yaml' <<'EOF'
[{"a":1},["b"],"c",null]
[{"name":"a100","count":8,"labels":{"tier":"gold","zone":"eu-1"},"devices":[{"index":0,"mig":["1g.10gb","2g.20gb"]},{"index":1,"mig":[]}],"empty":{}}]
[{"a":1},["b"],"c"]
EOF

check_output 'empty input: no document, or []' \
	'printf "# only a comment\n" | yaml2json && yaml2json -a </dev/null' <<'EOF'
[]
EOF

check_output 'files in order, - is stdin' \
	'echo "x: from stdin" | yaml2json multi.yaml -' <<'EOF'
{"a":1}
["b"]
"c"
null
{"x":"from stdin"}
EOF

cat >scalars.yaml <<'EOF'
- ~
- null
- Null
- NULL
-
- true
- True
- TRUE
- false
- FALSE
- yes
- no
- on
- off
- y
- 0
- -17
- +12
- 017
- 0o17
- 0x1f
- 0x1F
- 0X1f
- 0o18
- 0b101
- 1_000
- 1e3
- 1E-2
- .5
- -.5
- 1.
- +1.5e+2
- 1e
- .
- 12:30
- 9223372036854775807
- -9223372036854775808
- .inf x
- 2024-01-02
- 1.2.3
- v1
EOF
check_output 'plain scalars typed by the YAML 1.2 core schema' \
	'yaml2json scalars.yaml' <<'EOF'
[null,null,null,null,null,true,true,true,false,false,"yes","no","on","off","y",0,-17,12,17,15,31,31,"0X1f","0o18","0b101","1_000",1000.0,0.01,0.5,-0.5,1.0,150.0,"1e",".","12:30",9223372036854775807,-9223372036854775808,".inf x","2024-01-02","1.2.3","v1"]
EOF

cat >tagged.yaml <<'EOF'
- "123"
- '123'
- "true"
- !!str 123
- !!str true
- !!str .inf
- !!int "42"
- !!int 0x10
- !!float 1
- !!float "0o10"
- !!bool "False"
- !!null ""
- !!null ~
- !custom 5
- ! 7
- "tab\there \u00e9 \"q\""
- |
  literal
  text
- >
  folded
  text
EOF
check_output 'quoted, block and tagged scalars' 'yaml2json tagged.yaml' <<'EOF'
["123","123","true","123","true",".inf",42,16,1.0,8.0,false,null,null,"5","7","tab\there é \"q\"","literal\ntext\n","folded text\n"]
EOF

cat >keys.yaml <<'EOF'
1: int
true: bool
~: tilde
"quoted": q
0x10: hex
? explicit
: e
EOF
check_output 'keys are their source text' 'yaml2json keys.yaml' <<'EOF'
{"1":"int","true":"bool","~":"tilde","quoted":"q","0x10":"hex","explicit":"e"}
EOF

cat >anchors.yaml <<'EOF'
defaults: &defaults
  image: cuda:12
  gpus: 1
  env: [A, B]
first: *defaults
list: [&one 1, *one, &s str, *s]
&k name: value
copy: *k
redefined: &one 2
after: *one
EOF
check_output 'anchors and aliases' 'yaml2json anchors.yaml' <<'EOF'
{"defaults":{"image":"cuda:12","gpus":1,"env":["A","B"]},"first":{"image":"cuda:12","gpus":1,"env":["A","B"]},"list":[1,1,"str","str"],"name":"value","copy":"name","redefined":2,"after":2}
EOF

cat >merge.yaml <<'EOF'
base: &base
  image: cuda
  gpus: 1
extra: &extra
  gpus: 9
  node: small
one:
  <<: *base
  gpus: 2
many:
  name: x
  <<: [*extra, *base]
inline:
  a: 0
  <<: {a: 1, b: 2}
quoted:
  "<<": not a merge
EOF
check_output 'merge keys: own keys win, then the earlier mapping' \
	'yaml2json merge.yaml' <<'EOF'
{"base":{"image":"cuda","gpus":1},"extra":{"gpus":9,"node":"small"},"one":{"gpus":2,"image":"cuda"},"many":{"name":"x","gpus":9,"node":"small","image":"cuda"},"inline":{"a":0,"b":2},"quoted":{"<<":"not a merge"}}
EOF

cat >seeds.yaml <<'EOF'
# Workload shapes the earlier systems documented.
apiVersion: agentaflow.io/v1
kind: GPUWorkload
metadata:
  name: my-training-job
  namespace: agentaflow
spec:
  priority: 5
  gpuMemoryRequired: 8192  # 8GB
  schedulingStrategy: "least_utilized"
  gpuRequirements:
    minGPUMemory: 8192
    gpuCount: 1
    exclusiveAccess: true
  podTemplate:
    spec:
      containers:
      - name: training
        image: pytorch/pytorch:latest-gpu
        resources:
          limits:
            nvidia.com/gpu: 1
---
apiVersion: gpu.warp.dev/v1alpha1
kind: GPUWorkload
metadata:
  name: my-model
spec:
  modelName: "llama2"           # the model
  gpuCount: 2
  priority: "high"
  schedulingStrategy: "leastLoaded"
  retryPolicy:
    maxRetries: 3
    backoffSeconds: 30
---
apiVersion: v1
kind: Pod
metadata:
  name: nvidia-smi
spec:
  restartPolicy: OnFailure
  runtimeClassName: seeweb-nvidia-1xa6000 # <<<< an A6000
  containers:
  - name: nvidia
    image: nvidia/cuda:12.6.0-base-ubuntu20.04
    command: ["/bin/bash", "-c", "--"]
    args: ["sleep 3600"]
    imagePullPolicy: Always
    resources:
      limits:
        nvidia.com/gpu: 1
        memory: 16Gi
        cpu: 2
---
apiVersion: kubeflow.org/v1
kind: PyTorchJob
metadata:
  annotations:
    agentaflow.gpu/scheduling-strategy: "priority"
    agentaflow.gpu/priority: "10"
---
apiVersion: canhazgpu.dev/v1alpha1
kind: Topology
metadata:
  name: seed-mig
defaults:
  product: NVIDIA-H200
  memoryMiB: 71680
  driverVersion: "550.90.07"
  computeCapability: "9.0"
  memory: 512Gi
nodes:
- name: small
  gpus: 4
  mig: [1g.10gb, 1g.10gb, 1g.10gb, 1g.10gb, 1g.10gb, 1g.10gb, 1g.10gb]
EOF
check_output 'the example manifests of the seeds' 'yaml2json seeds.yaml' <<'EOF'
{"apiVersion":"agentaflow.io/v1","kind":"GPUWorkload","metadata":{"name":"my-training-job","namespace":"agentaflow"},"spec":{"priority":5,"gpuMemoryRequired":8192,"schedulingStrategy":"least_utilized","gpuRequirements":{"minGPUMemory":8192,"gpuCount":1,"exclusiveAccess":true},"podTemplate":{"spec":{"containers":[{"name":"training","image":"pytorch/pytorch:latest-gpu","resources":{"limits":{"nvidia.com/gpu":1}}}]}}}}
{"apiVersion":"gpu.warp.dev/v1alpha1","kind":"GPUWorkload","metadata":{"name":"my-model"},"spec":{"modelName":"llama2","gpuCount":2,"priority":"high","schedulingStrategy":"leastLoaded","retryPolicy":{"maxRetries":3,"backoffSeconds":30}}}
{"apiVersion":"v1","kind":"Pod","metadata":{"name":"nvidia-smi"},"spec":{"restartPolicy":"OnFailure","runtimeClassName":"seeweb-nvidia-1xa6000","containers":[{"name":"nvidia","image":"nvidia/cuda:12.6.0-base-ubuntu20.04","command":["/bin/bash","-c","--"],"args":["sleep 3600"],"imagePullPolicy":"Always","resources":{"limits":{"nvidia.com/gpu":1,"memory":"16Gi","cpu":2}}}]}}
{"apiVersion":"kubeflow.org/v1","kind":"PyTorchJob","metadata":{"annotations":{"agentaflow.gpu/scheduling-strategy":"priority","agentaflow.gpu/priority":"10"}}}
{"apiVersion":"canhazgpu.dev/v1alpha1","kind":"Topology","metadata":{"name":"seed-mig"},"defaults":{"product":"NVIDIA-H200","memoryMiB":71680,"driverVersion":"550.90.07","computeCapability":"9.0","memory":"512Gi"},"nodes":[{"name":"small","gpus":4,"mig":["1g.10gb","1g.10gb","1g.10gb","1g.10gb","1g.10gb","1g.10gb","1g.10gb"]}]}
EOF

printf 'kind: Pod\r\nspec:\r\n  cpu: "2"\r\n  args:\r\n  - a\r\n  - b\r\nnote: |\r\n  one\r\n  two\r\n---\r\nx: 1\r\n' >crlf.yaml
check_output 'CRLF line ends' 'yaml2json crlf.yaml' <<'EOF'
{"kind":"Pod","spec":{"cpu":"2","args":["a","b"]},"note":"one\ntwo\n"}
{"x":1}
EOF

printf 'metadata:\n  name: a\n  labels: b: c\n' >colon.yaml
check_output 'syntax error: FILE:LINE:COL, exit 1' \
	'yaml2json colon.yaml 2>&1; echo "exit $?"' <<'EOF'
yaml2json: colon.yaml:3:12: mapping values are not allowed in this context
exit 1
EOF

printf 'metadata:\n  name: a\n spec: 1\n' >indent.yaml
printf 'a: [1, 2\nb: 3\n' >flow.yaml
printf 'a:\n\t- x\n' >tab.yaml
printf 'a: "open\n' >quote.yaml
check_output 'more syntax errors' \
	'for f in indent flow tab quote; do yaml2json $f.yaml 2>&1; echo "exit $?"; done' <<'EOF'
yaml2json: indent.yaml:3:2: did not find expected key (while parsing a block mapping at 1:1)
exit 1
yaml2json: flow.yaml:2:2: did not find expected ',' or ']' (while parsing a flow sequence at 1:4)
exit 1
yaml2json: tab.yaml:2:1: found character that cannot start any token (while scanning for the next token at 2:1)
exit 1
yaml2json: quote.yaml:2:1: found unexpected end of stream (while scanning a quoted scalar at 1:4)
exit 1
EOF

printf 'a: ok\nb: \377\n' >latin1.yaml
printf 'a: 1\nb: x\001y\n' >ctrl.yaml
check_output 'bad bytes: invalid UTF-8, control characters' \
	'yaml2json latin1.yaml ctrl.yaml 2>&1; echo "exit $?"' <<'EOF'
yaml2json: latin1.yaml:2:4: invalid leading UTF-8 octet (#xFF)
yaml2json: ctrl.yaml:2:5: control characters are not allowed (#x01)
exit 1
EOF

cat >dup.yaml <<'EOF'
metadata:
  name: a
  labels:
    app: x
    app: y
---
next: converted
---
{a: 1, "a": 2}
EOF
check_output 'duplicate keys: an error, the next document still read' \
	'yaml2json dup.yaml 2>&1; echo "exit $?"' <<'EOF'
yaml2json: dup.yaml:5:5: duplicate key "app"
{"next":"converted"}
yaml2json: dup.yaml:9:8: duplicate key "a"
exit 1
EOF

printf 'ok: 1\n---\na: 1\na: 2\nb: [1,\n---\nnever: read\n' >both.yaml
check_output 'a syntax error after another error is told too, and ends the file' \
	'yaml2json both.yaml 2>&1; echo "exit $?"' <<'EOF'
{"ok":1}
yaml2json: both.yaml:4:1: duplicate key "a"
yaml2json: both.yaml:6:1: did not find expected node content (while parsing a flow node at 6:1)
exit 1
EOF

cat >values.yaml <<'EOF'
a: .inf
---
b: -.Inf
---
c: .NaN
---
d: 9223372036854775808
---
e: 0x8000000000000000
---
f: 1e400
---
g: !!int 1.5
---
h: !!bool yes
---
i: !!null 0
---
j: *nowhere
---
? [complex]
: key
---
{[a]: 1}
---
<<: [1]
EOF
check_output 'values JSON cannot hold, bad tags, aliases, keys' \
	'yaml2json values.yaml 2>&1; echo "exit $?"' <<'EOF'
yaml2json: values.yaml:1:4: cannot represent .inf in JSON
yaml2json: values.yaml:3:4: cannot represent -.Inf in JSON
yaml2json: values.yaml:5:4: cannot represent .NaN in JSON
yaml2json: values.yaml:7:4: integer 9223372036854775808 out of range
yaml2json: values.yaml:9:4: integer 0x8000000000000000 out of range
yaml2json: values.yaml:11:4: real 1e400 out of range
yaml2json: values.yaml:13:4: "1.5" is not a valid !!int
yaml2json: values.yaml:15:4: "yes" is not a valid !!bool
yaml2json: values.yaml:17:4: "0" is not a valid !!null
yaml2json: values.yaml:19:4: undefined alias "nowhere"
yaml2json: values.yaml:21:3: mapping key must be a scalar
yaml2json: values.yaml:24:2: mapping key must be a scalar
yaml2json: values.yaml:26:5: merge value must be a mapping or a sequence of mappings
exit 1
EOF

cat >bomb.yaml <<'EOF'
a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]
b: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a]
c: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b]
d: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c]
e: &e [*d,*d,*d,*d,*d,*d,*d,*d,*d]
f: &f [*e,*e,*e,*e,*e,*e,*e,*e,*e]
g: &g [*f,*f,*f,*f,*f,*f,*f,*f,*f]
h: &h [*g,*g,*g,*g,*g,*g,*g,*g,*g]
i: &i [*h,*h,*h,*h,*h,*h,*h,*h,*h]
EOF
limit=20
[ "${VALGRIND:-}" = 1 ] && limit=300
check_output 'an alias bomb is refused quickly' \
	"timeout $limit yaml2json bomb.yaml 2>&1; echo \"exit \$?\"" <<'EOF'
yaml2json: bomb.yaml:7:8: alias "f" makes the document larger than 1000000 nodes
exit 1
EOF

awk 'BEGIN { for (i = 0; i < 1001; i++) printf "[";
	for (i = 0; i < 1001; i++) printf "]"; print "" }' >deep.yaml
awk 'BEGIN { printf "a: &a "; for (i = 0; i < 600; i++) printf "[";
	for (i = 0; i < 600; i++) printf "]"; printf "\nb: ";
	for (i = 0; i < 400; i++) printf "["; printf "*a";
	for (i = 0; i < 400; i++) printf "]"; print "" }' >deepalias.yaml
check_output 'nesting is bounded, through aliases too' \
	'yaml2json deep.yaml deepalias.yaml 2>&1; echo "exit $?"' <<'EOF'
yaml2json: deep.yaml:1:1001: nesting deeper than 1000 levels
yaml2json: deepalias.yaml:2:404: alias "a" nests deeper than 1000 levels
exit 1
EOF

# Nesting is refused before libyaml scans ahead through it: its scanner
# costs the square of the flow nesting (40,000 levels took 11 s). The
# input is cut there, and read again from the next line that starts or
# ends a document.
awk 'BEGIN { for (i = 0; i < 40000; i++) printf "{a: "; print "";
	print "--- next" }' >flow40k.yaml
awk 'BEGIN { for (i = 0; i < 40000; i++) printf "["; print "" }' >seq40k.yaml
quick=5
[ "${VALGRIND:-}" = 1 ] && quick=60
check_output '40,000 nested flow collections: refused at once, the next document read' \
	"timeout $quick yaml2json flow40k.yaml seq40k.yaml 2>&1; echo \"exit \$?\"" <<'EOF'
yaml2json: flow40k.yaml:1:4001: nesting deeper than 1000 levels
"next"
yaml2json: seq40k.yaml:1:1001: nesting deeper than 1000 levels
exit 1
EOF

{
	awk 'BEGIN { for (i = 0; i < 1200; i++) printf "[";
		for (i = 0; i < 1200; i++) printf "]"; print "" }'
	printf '%s\n' '---   # not in the document above' '...'
	awk 'BEGIN { printf "--- {x: "; for (i = 0; i < 5000; i++) printf "["; print "" }'
	cat <<'EOF'
  - '---'
  "... \
--- 2
... # end
--- [3]
EOF
} >resync.yaml
check_output 'after a cut, reading goes on at the next line of --- or ...' \
	'yaml2json resync.yaml 2>&1; echo "exit $?"' <<'EOF'
yaml2json: resync.yaml:1:1001: nesting deeper than 1000 levels
null
yaml2json: resync.yaml:4:1008: nesting deeper than 1000 levels
2
[3]
exit 1
EOF

awk 'BEGIN { for (i = 0; i < 1000; i++) printf "{a: "; printf "x";
	for (i = 0; i < 1000; i++) printf "}"; print "" }' >flow1000.yaml
awk 'BEGIN { for (i = 0; i < 1000; i++) printf "- "; print "x" }' >dash1000.yaml
check_output 'nesting of exactly 1000 levels is read' \
	'yaml2json flow1000.yaml dash1000.yaml | awk "{ print length(\$0) }"' <<'EOF'
6003
2003
EOF

awk 'BEGIN { for (i = 0; i < 1001; i++) printf "- "; print "x" }' >dash.yaml
awk 'BEGIN { for (i = 0; i < 1001; i++) { for (j = 0; j < i; j++) printf " ";
	print "a:" } for (j = 0; j < 1001; j++) printf " "; print "x" }' >deepblock.yaml
awk 'BEGIN { for (i = 0; i < 600; i++) printf "[a: "; printf "x";
	for (i = 0; i < 600; i++) printf "]"; print ""; print "--- next" }' >pairs.yaml
check_output 'block nesting too; flow pairs nest twice, the next document is read' \
	'yaml2json dash.yaml deepblock.yaml pairs.yaml 2>&1; echo "exit $?"' <<'EOF'
yaml2json: dash.yaml:1:2001: nesting deeper than 1000 levels
yaml2json: deepblock.yaml:1001:1001: nesting deeper than 1000 levels
yaml2json: pairs.yaml:1:2001: nesting deeper than 1000 levels
"next"
exit 1
EOF

awk 'BEGIN { printf "[a "; for (i = 0; i < 3000; i++) printf "["; print "" }' >early.yaml
awk 'BEGIN { printf "{a: 1, a: 2, b: "; for (i = 0; i < 3000; i++) printf "[";
	print ""; print "--- next" }' >dupdeep.yaml
check_output 'an error before the excess is told as ever; one of ours, then the excess' \
	'yaml2json early.yaml dupdeep.yaml 2>&1; echo "exit $?"' <<'EOF'
yaml2json: early.yaml:1:4: did not find expected ',' or ']' (while parsing a flow sequence at 1:1)
yaml2json: dupdeep.yaml:1:8: duplicate key "a"
yaml2json: dupdeep.yaml:1:1022: nesting deeper than 1000 levels
"next"
exit 1
EOF

# Text is bounded as nodes are: 16 MiB of scalars per document, aliases
# counted as what they expand to; with -a for the file's documents
# together, as the array holds them all.
awk 'BEGIN { s = "x"; while (length(s) < 1048576) s = s s;
	print "a: &a \"" s "\""; printf "b: [*a";
	for (i = 0; i < 20; i++) printf ", *a"; print "]" }' >textbomb.yaml
awk 'BEGIN { s = "x"; while (length(s) < 1048576) s = s s;
	for (i = 0; i < 17; i++) print "--- " s }' >megs.yaml
check_output 'an alias bomb of one long scalar is refused; -a bounds the whole file' \
	'yaml2json textbomb.yaml 2>&1; echo "exit $?";
	yaml2json megs.yaml | wc -l; yaml2json -a megs.yaml >all 2>&1; echo "exit $?"; cut -c 1-120 all' <<'EOF'
yaml2json: textbomb.yaml:2:61: alias "a" makes the document hold more than 16777216 bytes of text
exit 1
17
exit 1
yaml2json: megs.yaml:17:5: the documents together hold more than 16777216 bytes of text
EOF

printf '%s\n' 'a: "x\0y"' --- '"k\0": 1' --- 'ok: "\x41"' >nul.yaml
check_output 'a NUL character in a scalar or a key is refused' \
	'yaml2json nul.yaml 2>&1; echo "exit $?"' <<'EOF'
yaml2json: nul.yaml:1:4: scalar holds a NUL character (\0)
yaml2json: nul.yaml:3:1: scalar holds a NUL character (\0)
{"ok":"A"}
exit 1
EOF

cat >reals.yaml <<'EOF'
- 0.30000000000000004
- 0.1
- -2.5e-3
- !!float 9007199254740993
- !!float 0x10
- !!float "12"
EOF
check_output 'reals keep every digit: the nearest double, written back exactly' \
	'yaml2json reals.yaml' <<'EOF'
[0.30000000000000004,0.1,-0.0025,9007199254740992.0,16.0,12.0]
EOF

awk 'BEGIN { printf "!!float 1"; for (i = 0; i < 400; i++) printf "0"; print "";
	print "--- -1e400"; print "--- !!float .NaN"; print "--- !!float \"-.inf\"";
	print "--- -9223372036854775809"; print "--- !!int 0o2000000000000000000000" }' >range.yaml
check_output 'reals beyond double range, infinities, NaN, long integers: refused' \
	'yaml2json range.yaml 2>&1; echo "exit $?"' <<'EOF'
yaml2json: range.yaml:1:1: real 1000000000000000000000000000000000000000000000000000000000000000 out of range
yaml2json: range.yaml:2:5: real -1e400 out of range
yaml2json: range.yaml:3:5: cannot represent .NaN in JSON
yaml2json: range.yaml:4:5: cannot represent -.inf in JSON
yaml2json: range.yaml:5:5: integer -9223372036854775809 out of range
yaml2json: range.yaml:6:5: integer 0o2000000000000000000000 out of range
exit 1
EOF

check_output 'a file that fails does not stop the others; -a writes no partial array' \
	'yaml2json -a nosuch.yaml dup.yaml multi.yaml 2>&1; echo "exit $?"' <<'EOF'
yaml2json: nosuch.yaml: No such file or directory
yaml2json: dup.yaml:5:5: duplicate key "app"
yaml2json: dup.yaml:9:8: duplicate key "a"
[{"a":1},["b"],"c",null]
exit 1
EOF

check_output 'a directory is a read error' \
	'mkdir -p dir && yaml2json dir 2>&1; echo "exit $?"' <<'EOF'
yaml2json: dir: read error: Is a directory
exit 1
EOF

check_output 'bad option: usage, exit 2' 'yaml2json -Z 2>&1; echo "exit $?"' <<'EOF'
yaml2json: unknown option -Z
usage: yaml2json [-ahsV] [file ...]
exit 2
EOF

check_output '-h on stdout, exit 0' 'yaml2json -h 2>/dev/null | head -1; yaml2json -h >/dev/null; echo "exit $?"' <<'EOF'
usage: yaml2json [-ahsV] [file ...]
exit 0
EOF

check_output '-V prints the version' \
	"yaml2json -V | sed 's/ [0-9][0-9a-z.-]*\$/ VERSION/'" <<'EOF'
yaml2json VERSION
EOF

check 'a write error ends the tool with status 1' \
	'test -w /dev/full || exit 0; must_fail 1 yaml2json multi.yaml >/dev/full 2>err && grep -q "write error" err'

done_testing
