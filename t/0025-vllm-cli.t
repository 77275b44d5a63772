#!/bin/sh
# k8shazgpu vllm run, run, cleanup and status without a cluster: with
# --dry-run the exact objects a run would create (claim, ConfigMaps owned
# by it, pod), from a stand-in diff-pack that records its arguments;
# diff-pack's failures mapped to statuses and messages; every usage
# error; the namespace from -n, the dispatcher, the kubeconfig context.
. "$(dirname "$0")/lib.sh"

# two contexts, of namespaces ns1 (the current one) and ns2
cp "$FIXTURES/cli/kubeconfig" kubeconfig
mkdir bin
# diff-pack: records its arguments in dp.args, then fails as FAKE_DP
# says, or prints two ConfigMaps and the checkout record
cat >bin/diff-pack <<'EOF'
#!/bin/sh
printf '%s\n' "$@" >"$SCRATCH/dp.args"
case ${FAKE_DP:-ok} in
ok) ;;
*) echo "diff-pack: fake failure $FAKE_DP" >&2; exit "$FAKE_DP" ;;
esac
B=1111111111111111111111111111111111111111 H=2222222222222222222222222222222222222222
for i in 0 1; do
	printf '{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"demo-pack-%d","namespace":"ns1","labels":{"app.kubernetes.io/managed-by":"k8shazgpu","canhazgpu.dev/run":"demo","canhazgpu.dev/workload":"vllm"},"annotations":{"canhazgpu.dev/pack-sha256":"ab12"}},"immutable":true,"binaryData":{"pack.00%d":"SEVMTE8="}}\n' $i $i
done
printf '{"kind":"checkout","root":"/src/vllm","remote":"origin","remote_url":%s,"branch":"feature","head":"%s","base_ref":"refs/remotes/upstream/main","merge_base":"%s","base":"%s","image":"%s","image_checked":false,"image_digest":null,"files":{"put":2,"link":1,"del":1},"bytes":10,"pack_sha256":"ab12","pack_size":1100000,"pack":null,"configmaps":["demo-pack-0","demo-pack-1"],"native":[],"submodules":[],"hidden":[],"warnings":[]}\n' \
	"${FAKE_URL:-\"git@github.com:alice/vllm.git\"}" $H $B $B "${FAKE_IMAGE:-public.ecr.aws/q9t5s3a7/vllm-ci-postmerge-repo:$B}"
EOF
chmod +x bin/diff-pack
PATH=$SCRATCH/bin:$PATH
KUBECONFIG=$SCRATCH/kubeconfig
# the applier the pods mount: its ConfigMap is named by its digest
printf 'applier\n' >applier
K8SHAZGPU_APPLIER=$SCRATCH/applier
export PATH KUBECONFIG K8SHAZGPU_APPLIER SCRATCH
unset K8SHAZGPU_NAMESPACE K8SHAZGPU_CONTEXT K8SHAZGPU_OUTPUT FAKE_DP FAKE_URL FAKE_IMAGE
B40=1111111111111111111111111111111111111111
IMG=public.ecr.aws/q9t5s3a7/vllm-ci-postmerge-repo:$B40

# st CMD...: its stdout, "exit N", its stderr
st() {
	"$@" >st.out 2>st.err
	st_rc=$?
	cat st.out
	echo "exit $st_rc"
	cat st.err
}
vr() { k8shazgpu vllm run "$@"; }
dry() { vr --name demo --dry-run "$@" 2>/dev/null; }

# ---------------------------------------------------------------- vllm run --dry-run

check_output 'vllm run: the claim: 2 GPUs by index, the annotations, the labels' \
	"dry --gpu-ids 3,1 --port 8080 -- vllm serve facebook/opt-125m --arg 'a b' | sed -n 1p | jq -S 'del(.metadata.annotations[\"canhazgpu.dev/provenance\"])'" <<EOF
{
  "apiVersion": "resource.k8s.io/v1",
  "kind": "ResourceClaim",
  "metadata": {
    "annotations": {
      "canhazgpu.dev/base": "$B40",
      "canhazgpu.dev/cmd": "[\"vllm\",\"serve\",\"facebook/opt-125m\",\"--arg\",\"a b\"]",
      "canhazgpu.dev/gpu-ids": "3,1",
      "canhazgpu.dev/head": "2222222222222222222222222222222222222222",
      "canhazgpu.dev/image": "$IMG",
      "canhazgpu.dev/image-name": "vllm-checkout-11111111",
      "canhazgpu.dev/models": "facebook/opt-125m",
      "canhazgpu.dev/pack-sha256": "ab12",
      "canhazgpu.dev/port": "8080",
      "canhazgpu.dev/repo-name": "alice-vllm",
      "canhazgpu.dev/workload": "vllm"
    },
    "labels": {
      "app.kubernetes.io/managed-by": "k8shazgpu",
      "canhazgpu.dev/run": "demo",
      "canhazgpu.dev/workload": "vllm"
    },
    "name": "demo",
    "namespace": "ns1"
  },
  "spec": {
    "devices": {
      "requests": [
        {
          "exactly": {
            "allocationMode": "ExactCount",
            "count": 2,
            "deviceClassName": "gpu.canhazgpu.dev",
            "selectors": [
              {
                "cel": {
                  "expression": "device.attributes[\"gpu.canhazgpu.dev\"].index in [1, 3]"
                }
              }
            ]
          },
          "name": "gpus"
        }
      ]
    }
  }
}
EOF
check_output 'vllm run: diff-pack asked for the ConfigMaps, labelled with the run' 'dry >/dev/null; cat dp.args' <<'EOF'
-k
demo-pack
-n
ns1
-l
canhazgpu.dev/run=demo
-l
canhazgpu.dev/workload=vllm
EOF
check_output 'vllm run: the ConfigMaps as diff-pack made them, owned by the claim' \
	'dry | sed -n 2,3p >cms && diff-pack >dp.out && sed "\$d" dp.out | jq -c ".metadata.ownerReferences = [{apiVersion: \"resource.k8s.io/v1\", kind: \"ResourceClaim\", name: \"demo\", uid: \"DRY-RUN\"}]" | cmp - cms && wc -l <cms' <<'EOF'
2
EOF
check_output 'vllm run: the pod: the applier ConfigMap mounted, wrapper, argv kept as given, port, mounts' \
	"dry -- vllm serve ./m 'a b' '\$HOME' '' | sed -n 4p | jq -S ." <<EOF
{
  "apiVersion": "v1",
  "kind": "Pod",
  "metadata": {
    "labels": {
      "app.kubernetes.io/managed-by": "k8shazgpu",
      "canhazgpu.dev/run": "demo",
      "canhazgpu.dev/workload": "vllm"
    },
    "name": "demo",
    "namespace": "ns1",
    "ownerReferences": [
      {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaim",
        "name": "demo",
        "uid": "DRY-RUN"
      }
    ]
  },
  "spec": {
    "containers": [
      {
        "args": [
          "vllm",
          "serve",
          "./m",
          "a b",
          "\$HOME",
          ""
        ],
        "command": [
          "/bin/sh",
          "-c",
          "set -e\\npkg=\\nif command -v python3 >/dev/null 2>&1; then\\n  pkg=\$(python3 -c 'import os, vllm; print(os.path.dirname(vllm.__file__))' 2>/dev/null) || pkg=\\nfi\\nb=/k8shazgpu/bin tree=\${K8SHAZGPU_TREE:-/vllm-workspace}\\nrm -f \\"\$b/state.json\\"\\n/k8shazgpu/tool/diff-pack -u -d /k8shazgpu/pack -t \\"\$tree\\" \${pkg:+-P \\"\$pkg\\"} -S \\"\$b/state.json\\"\\nprintf \\"%s\\\\n\\" \\"\$tree\\" >\\"\$b/tree\\"\\nprintf \\"%s\\\\n\\" \\"\$pkg\\" >\\"\$b/pkgdir\\"\\n: >\\"\$b/.applied\\"\\ncd \\"\$tree\\"\\nset +e\\ngen=0 restart=0 stop=0 sent=0 child=\\n# stop_child: TERM to the child, once, when it is ready: its traps the\\n# default ones (before, a signal would run this shell's traps in it and be\\n# lost), waited for 5 s at most\\nstop_child() {\\n  [ -n \\"\$child\\" ] && [ \$sent = 0 ] || return 0\\n  sent=1 n=0\\n  while [ ! -e \\"\$b/ready\\" ] && [ \$n -lt 100 ]; do n=\$((n + 1)); sleep 0.05; done\\n  kill -TERM \\"\$child\\" 2>/dev/null\\n}\\ntrap \\"restart=1; stop_child\\" HUP\\ntrap \\"stop=1; stop_child\\" TERM INT\\nread -r self rest </proc/self/stat\\necho \\"\$self\\" >\\"\$b/supervisor.pid\\"\\nwhile :; do\\n  restart=0 sent=0\\n  rm -f \\"\$b/ready\\"\\n  (trap - HUP TERM INT; : >\\"\$b/ready\\"; exec \\"\$@\\") &\\n  child=\$!\\n  echo \\"\$gen \$child\\" >\\"\$b/run\\"\\n  # a signal caught while the child was forked, before \$child was set\\n  [ \\"\$restart\$stop\\" = 00 ] || stop_child\\n  while :; do\\n    wait \\"\$child\\"\\n    rc=\$?\\n    kill -0 \\"\$child\\" 2>/dev/null || break\\n  done\\n  child=\\n  [ \\"\$stop\\" = 0 ] && [ \\"\$restart\\" = 1 ] || exit \\"\$rc\\"\\n  gen=\$((gen + 1))\\ndone",
          "k8shazgpu-vllm"
        ],
        "image": "$IMG",
        "name": "vllm",
        "ports": [
          {
            "containerPort": 8000,
            "name": "vllm-api"
          }
        ],
        "resources": {
          "claims": [
            {
              "name": "gpus"
            }
          ]
        },
        "startupProbe": {
          "exec": {
            "command": [
              "/bin/sh",
              "-c",
              "test -e /k8shazgpu/bin/.applied"
            ]
          },
          "failureThreshold": 600,
          "periodSeconds": 1
        },
        "volumeMounts": [
          {
            "mountPath": "/k8shazgpu/bin",
            "name": "k8shazgpu-bin"
          },
          {
            "mountPath": "/k8shazgpu/tool",
            "name": "applier",
            "readOnly": true
          },
          {
            "mountPath": "/k8shazgpu/pack",
            "name": "pack",
            "readOnly": true
          }
        ]
      }
    ],
    "resourceClaims": [
      {
        "name": "gpus",
        "resourceClaimName": "demo"
      }
    ],
    "restartPolicy": "Never",
    "volumes": [
      {
        "emptyDir": {},
        "name": "k8shazgpu-bin"
      },
      {
        "configMap": {
          "defaultMode": 365,
          "name": "k8shazgpu-applier-0.1.0-87ff67ed302e"
        },
        "name": "applier"
      },
      {
        "name": "pack",
        "projected": {
          "sources": [
            {
              "configMap": {
                "name": "demo-pack-0"
              }
            },
            {
              "configMap": {
                "name": "demo-pack-1"
              }
            }
          ]
        }
      }
    ]
  }
}
EOF
# the wrapper run here by sh, in ./bin, its diff-pack and cd lines made no-ops
check_output 'the wrapper passes the arguments through exactly' \
	"dry -- printf '[%s]' 'a b' '\$HOME' '' '\"' '*' | sed -n 4p >pod.json &&
	 jq -r '.spec.containers[0].command[2]' pod.json | sed 's|^b=/k8shazgpu/bin |b=bin |; s|^/k8shazgpu/tool/diff-pack .*|:|; s|^cd .*|:|' >w.sh && mkdir -p bin &&
	 jq -j '.spec.containers[0].args[] + \"\\u0000\"' pod.json | xargs -0 sh -c \"\$(cat w.sh)\" k8shazgpu-vllm; echo" <<'EOF'
[a b][$HOME][]["][*]
EOF
# supervise: the wrapper of pod.json run here in ./sup on a command that
# says it started and sleeps; a HUP restarts it, a TERM ends it, and the
# wrapper's status is then the command's (30 s for each step: with the
# shared cluster starting beside it, 10 s was once too little). Each
# signal goes once the command has said it started, as vllm sync's HUP
# comes once the command runs: a signal while the child is still being
# forked can reach the shell's copy of the trap, not the command.
supervise() {
	jq -r '.spec.containers[0].command[2]' pod.json | sed 's|^b=/k8shazgpu/bin |b=sup |; s|^/k8shazgpu/tool/diff-pack .*|:|; s|^cd .*|:|' >s.sh
	mkdir -p sup
	sh -c "$(cat s.sh)" k8shazgpu-vllm sh -c 'echo started; exec sleep 30' >sup.out &
	sv_pid=$!
	eventually 30 test -s sup/run || { echo "no sup/run after 30 s: $(cat sup.out)"; return 1; }
	eventually 30 grep -q started sup.out || { echo "the command did not start in 30 s"; return 1; }
	kill -HUP "$(cat sup/supervisor.pid)"
	eventually 30 grep -q '^1 ' sup/run || { echo "not restarted after 30 s: run $(cat sup/run)"; return 1; }
	eventually 30 test "$(grep -c started sup.out)" = 2 ||
		{ echo "the command did not start again in 30 s"; return 1; }
	kill -TERM "$(cat sup/supervisor.pid)"
	sv_rc=0
	wait "$sv_pid" || sv_rc=$?
	cat sup.out
	echo "status $sv_rc, generation $(cut -d' ' -f1 sup/run), supervisor $([ "$(cat sup/supervisor.pid)" = "$sv_pid" ] && echo pid ok)"
}
check_output 'the wrapper supervises: HUP restarts the command, TERM ends it, its status the container'"'"'s' supervise <<'EOF'
started
started
status 143, generation 1, supervisor pid ok
EOF
# restarts in quick succession: a command that runs at once (no shell line
# first), each HUP sent as soon as the supervisor has recorded the new
# child, often before the child is ready; every one must restart it once
# (a lost one leaves sleep to run its 30 s), and the TERM after them must
# end it. (The fork window itself, microseconds, is not hit on demand.)
supervise_fast() {
	rm -rf sup && mkdir sup
	sh -c "$(cat s.sh)" k8shazgpu-vllm sleep 30 >sup.out &
	sv_pid=$!
	eventually 30 test -s sup/supervisor.pid || { echo "no sup/supervisor.pid after 30 s"; return 1; }
	g=0
	while [ $g -lt 20 ]; do
		EVENTUALLY_HZ=50 eventually 10 grep -q "^$g " sup/run || { echo "generation $g not started in 10 s: run $(cat sup/run)"; return 1; }
		kill -HUP "$(cat sup/supervisor.pid)"
		g=$((g + 1))
	done
	EVENTUALLY_HZ=50 eventually 10 grep -q "^20 " sup/run || { echo "generation 20 not started in 10 s: run $(cat sup/run)"; return 1; }
	kill -TERM "$(cat sup/supervisor.pid)"
	sv_rc=0
	wait "$sv_pid" || sv_rc=$?
	echo "status $sv_rc, generation $(cut -d' ' -f1 sup/run)"
}
check_output 'the wrapper: 20 HUPs, each as soon as the last child is recorded, 20 restarts; then TERM ends it' supervise_fast <<'EOF'
status 143, generation 20
EOF
check_output 'the default command, one GPU, no selector; --port 0: no port' \
	'dry --port 0 | jq -c "select(.kind == \"Pod\") | .spec.containers[0] | [.args, .ports]"; dry --port 0 | jq -c "select(.kind == \"ResourceClaim\") | [.metadata.annotations[\"canhazgpu.dev/cmd\"], .metadata.annotations[\"canhazgpu.dev/port\"], .spec.devices.requests[0].exactly]"' <<'EOF'
[["sleep","300"],null]
["[\"sleep\",\"300\"]",null,{"deviceClassName":"gpu.canhazgpu.dev","allocationMode":"ExactCount","count":1}]
EOF
check_output '--prefer-node and --toleration (every form)' \
	'dry --prefer-node h100 --toleration a --toleration b=c --toleration d:NoSchedule --toleration e.io/f=g:NoExecute |
	 jq -c "select(.kind == \"Pod\") | .spec | .affinity, .tolerations"' <<'EOF'
{"nodeAffinity":{"preferredDuringSchedulingIgnoredDuringExecution":[{"weight":100,"preference":{"matchExpressions":[{"key":"kubernetes.io/hostname","operator":"In","values":["h100"]}]}}]}}
[{"key":"a","operator":"Exists"},{"key":"b","operator":"Equal","value":"c"},{"key":"d","operator":"Exists","effect":"NoSchedule"},{"key":"e.io/f","operator":"Equal","value":"g","effect":"NoExecute"}]
EOF
check_output 'diff-pack options: -C, --base, --fetch, --image, --check; --pack-image ignored, with a warning' \
	'vr --name demo --dry-run -C /src --base v1 --fetch --image reg/v:1 --check --pack-image p/dp:2 2>&1 >dry.out | grep -v "^pack: "; jq -c "select(.kind == \"Pod\") | [.spec.initContainers, .spec.volumes[1]]" dry.out; sed -n "9,\$p" dp.args' <<'EOF'
k8shazgpu vllm run: warning: --pack-image is deprecated and ignored: diff-pack comes in a ConfigMap
[null,{"name":"applier","configMap":{"name":"k8shazgpu-applier-0.1.0-87ff67ed302e","defaultMode":365}}]
-C
/src
-b
v1
--fetch
-i
reg/v:1
--check
EOF
check_output '--image-repo is diff-pack -r' 'dry --image-repo reg/vllm >/dev/null; sed -n "9,\$p" dp.args' <<'EOF'
-r
reg/vllm
EOF
check_output 'cache item names: from the base and the remote, an https one, none, or given' \
	'ann() { jq -r "select(.kind == \"ResourceClaim\") | .metadata.annotations | \"\(.[\"canhazgpu.dev/image-name\"]) \(.[\"canhazgpu.dev/repo-name\"])\""; }
	 FAKE_URL="\"https://github.com/bob/vllm\"" dry | ann; FAKE_URL=null dry | ann; FAKE_URL="\"/srv/vllm.git\"" dry | ann; FAKE_URL="\"file:///srv/x/vllm\"" dry | ann
	 dry --image-name pinned --repo-name mine | ann' <<'EOF'
vllm-checkout-11111111 bob-vllm
vllm-checkout-11111111 local-vllm
vllm-checkout-11111111 local-vllm
vllm-checkout-11111111 local-vllm
pinned mine
EOF
check_output 'what diff-pack says of the pack goes to stderr' 'vr --name demo --dry-run 2>&1 >/dev/null' <<EOF
pack: 2 put, 1 links, 1 deleted, 10 bytes over 111111111111 (refs/remotes/upstream/main); image $IMG
EOF

# ---------------------------------------------------------------- vllm run: the models

# pod_hub: what the pod has of the hub cache: its env, the mount, the
# volume, the affinity
pod_hub() { jq -c 'select(.kind == "Pod") | [.spec.containers[0].env, [.spec.containers[0].volumeMounts[] | select(.name == "hub")],
	[.spec.volumes[] | select(.name == "hub")], .spec.affinity]'; }
models_ann() { jq -r 'select(.kind == "ResourceClaim") | .metadata.annotations["canhazgpu.dev/models"] // "-"'; }
check_output 'the models a command names: vllm serve MODEL, --model V, --model=V, --tokenizer; each once; local paths left alone' \
	'dry -- vllm serve org/a --tokenizer org/t --model=b --served-model-name x org/a | models_ann
	 dry -- /opt/venv/bin/vllm serve ./here --tokenizer=/models/t | models_ann
	 dry -- python3 -m vllm.entrypoints.openai.api_server --model org/c | models_ann
	 dry -- vllm serve --model org/d | models_ann
	 dry -- vllm bench serve x | models_ann' <<'EOF'
org/a org/t b
-
org/c
org/d
-
EOF
check_output 'a model named: the nodes'"'"' hub cache mounted read-only, HF_HUB_CACHE on it; not offline nor placed yet (a dry run reads no cache)' \
	'dry -- vllm serve org/a | pod_hub' <<'EOF'
[[{"name":"HF_HUB_CACHE","value":"/k8shazgpu/hub"}],[{"name":"hub","mountPath":"/k8shazgpu/hub","readOnly":true}],[{"name":"hub","hostPath":{"path":"/var/lib/canhazgpu-cache/hub_cache","type":"Directory"}}],null]
EOF
check_output '--hub-cache DIR (and K8SHAZGPU_HUB_CACHE) name the host path; no model or --skip-cache-check: no hub cache' \
	'dry --hub-cache /srv/hub -- vllm serve org/a | pod_hub; K8SHAZGPU_HUB_CACHE=/h dry -- vllm serve org/a | pod_hub
	 dry -- vllm serve ./m | pod_hub; dry --skip-cache-check -- vllm serve org/a | pod_hub' <<'EOF'
[[{"name":"HF_HUB_CACHE","value":"/k8shazgpu/hub"}],[{"name":"hub","mountPath":"/k8shazgpu/hub","readOnly":true}],[{"name":"hub","hostPath":{"path":"/srv/hub","type":"Directory"}}],null]
[[{"name":"HF_HUB_CACHE","value":"/k8shazgpu/hub"}],[{"name":"hub","mountPath":"/k8shazgpu/hub","readOnly":true}],[{"name":"hub","hostPath":{"path":"/h","type":"Directory"}}],null]
[null,[],[],null]
[null,[],[],null]
EOF
# bad CMD...: vllm run (not a dry run) of that command, and whether
# diff-pack ran (it must not: nothing is packed, asked or made)
bad() { rm -f dp.args; st vr --name demo "$@"; [ ! -e dp.args ] || echo "diff-pack ran"; }
check_output 'a model that is no model id: exit 2, the argument named, nothing done' '
	bad -- vllm serve ../x; bad -- vllm serve --model http://hub/org/m; bad -- vllm serve org/a --tokenizer=
	bad -- vllm serve "$(printf "a\tb")"; bad -- vllm serve org/a/b; bad -- vllm serve a--b; bad -- vllm serve --model=~/m
	bad --hub-cache hub -- vllm serve org/a' <<'EOF'
exit 2
k8shazgpu vllm run: vllm serve "../x": not a Hugging Face model id (NAME or ORG/NAME) nor a local path (/... or ./...)
exit 2
k8shazgpu vllm run: --model "http://hub/org/m": not a Hugging Face model id (NAME or ORG/NAME) nor a local path (/... or ./...)
exit 2
k8shazgpu vllm run: --tokenizer "": not a Hugging Face model id (NAME or ORG/NAME) nor a local path (/... or ./...)
exit 2
k8shazgpu vllm run: vllm serve "a\tb": not a Hugging Face model id (NAME or ORG/NAME) nor a local path (/... or ./...)
exit 2
k8shazgpu vllm run: vllm serve "org/a/b": not a Hugging Face model id (NAME or ORG/NAME) nor a local path (/... or ./...)
exit 2
k8shazgpu vllm run: vllm serve "a--b": not a Hugging Face model id (NAME or ORG/NAME) nor a local path (/... or ./...)
exit 2
k8shazgpu vllm run: --model "~/m": not a Hugging Face model id (NAME or ORG/NAME) nor a local path (/... or ./...)
exit 2
k8shazgpu vllm run: --hub-cache "hub": an absolute path on the nodes
EOF

# ---------------------------------------------------------------- diff-pack failing

for f in '3 no pack made: not a vLLM checkout diff-pack can use (above)' \
	'4 no pack made: the changes are over the cap (above); K8SHAZGPU_PACK_CAP raises it' \
	'8 no image of the checkout'"'"'s base (above); --image or --image-repo names one' \
	'75 the registry could not be reached (above); try again, or leave out --check' \
	'1 diff-pack failed (status 1)' '2 diff-pack failed (status 2)'; do
	s=${f%% *}
	want=$s
	[ "$s" != 2 ] || want=1
	check_output "diff-pack's status $s: exit $want, its message and ours" "FAKE_DP=$s st vr --name demo --dry-run" <<EOF
exit $want
diff-pack: fake failure $s
k8shazgpu vllm run: ${f#* }
EOF
done

# ---------------------------------------------------------------- run --dry-run

check_output 'run: the claim and the pod: container main, the command as given, the port' \
	"k8shazgpu run --image busybox:1 --name job --gpus 2 --port 80 --dry-run -- sh -c 'echo \"\$0\"' x" <<'EOF'
{"apiVersion":"resource.k8s.io/v1","kind":"ResourceClaim","metadata":{"name":"job","namespace":"ns1","labels":{"app.kubernetes.io/managed-by":"k8shazgpu","canhazgpu.dev/run":"job","canhazgpu.dev/workload":"run"},"annotations":{"canhazgpu.dev/workload":"run","canhazgpu.dev/image":"busybox:1","canhazgpu.dev/cmd":"[\"sh\",\"-c\",\"echo \\\"$0\\\"\",\"x\"]","canhazgpu.dev/port":"80"}},"spec":{"devices":{"requests":[{"name":"gpus","exactly":{"deviceClassName":"gpu.canhazgpu.dev","allocationMode":"ExactCount","count":2}}]}}}
{"apiVersion":"v1","kind":"Pod","metadata":{"name":"job","namespace":"ns1","labels":{"app.kubernetes.io/managed-by":"k8shazgpu","canhazgpu.dev/run":"job","canhazgpu.dev/workload":"run"},"ownerReferences":[{"apiVersion":"resource.k8s.io/v1","kind":"ResourceClaim","name":"job","uid":"DRY-RUN"}]},"spec":{"restartPolicy":"Never","resourceClaims":[{"name":"gpus","resourceClaimName":"job"}],"containers":[{"name":"main","image":"busybox:1","command":["sh","-c","echo \"$0\"","x"],"ports":[{"name":"main","containerPort":80}],"resources":{"claims":[{"name":"gpus"}]}}]}}
EOF
check_output 'run without a command: the image'"'"'s own; no port by default' \
	'k8shazgpu run --image=busybox:1 --name=job --dry-run | jq -c "select(.kind == \"Pod\") | .spec.containers[0]"' <<'EOF'
{"name":"main","image":"busybox:1","resources":{"claims":[{"name":"gpus"}]}}
EOF
check_output 'default names: k8shazgpu-vllm-NNNN, k8shazgpu-run-NNNN' \
	'vr --dry-run 2>/dev/null | jq -r "select(.kind != \"ConfigMap\") | .metadata.name" | sed "s/[0-9]\{4\}$/NNNN/" | uniq; k8shazgpu run --image i --dry-run | jq -r .metadata.name | sed "s/[0-9]\{4\}$/NNNN/" | uniq' <<'EOF'
k8shazgpu-vllm-NNNN
k8shazgpu-run-NNNN
EOF

# ---------------------------------------------------------------- the namespace

ns() { jq -r 'select(.kind == "ResourceClaim") | .metadata.namespace'; }
check_output 'the namespace: the context'"'"'s, --context'"'"'s, -n (after or before the group), default' \
	'k8shazgpu run --image i --dry-run | ns; k8shazgpu run --context two --image i --dry-run | ns
	 k8shazgpu run -n x --image i --dry-run | ns; k8shazgpu -n y run --image i --dry-run | ns
	 k8shazgpu --context=two run --image i --dry-run | ns
	 KUBECONFIG=$SCRATCH/none k8shazgpu run --image i --dry-run | ns' <<'EOF'
ns1
ns2
x
y
ns2
default
EOF

# ---------------------------------------------------------------- usage errors

u() { st k8shazgpu "$@"; }
check_output 'usage errors: exit 2 and the reason' '
	u run --dry-run; u run --image i --gpus 0; u run --image i --gpus x; u run --image i --gpus 129
	u run --image i --gpu-ids 1,,3; u run --image i --gpu-ids 1,a; u run --image i --gpu-ids ,; u run --image i --gpu-ids 1,01
	u run --image i --gpus 3 --gpu-ids 1,3; u run --image i --name Demo; u run --image i --name -x
	u run --image i --name 123456789012345678901234567890123456789012345678901234
	u run --image i --timeout 0; u run --image i --port 65536; u run --image i --port -1
	u run --image i --toleration k:Sometimes; u run --image i --toleration "=v"; u run --image i --prefer-node "A B"
	u run --image i --bogus; u run --image i stray; u run --image i --pack-image x; u run --image; u run --image "a b"
	u vllm run --image i --image-repo r; u vllm run --image-name -x; u vllm run --repo-name "a b"
	u vllm run -o yaml; u vllm run --name' <<'EOF'
exit 2
k8shazgpu run: --image IMAGE is required
exit 2
k8shazgpu run: --gpus: a whole number from 1 to 128, not "0"
exit 2
k8shazgpu run: --gpus: a whole number from 1 to 128, not "x"
exit 2
k8shazgpu run: --gpus: a whole number from 1 to 128, not "129"
exit 2
k8shazgpu run: --gpu-ids "1,,3": GPU indexes, comma-separated (1,3)
exit 2
k8shazgpu run: --gpu-ids "1,a": GPU indexes, comma-separated (1,3)
exit 2
k8shazgpu run: --gpu-ids ",": GPU indexes, comma-separated (1,3)
exit 2
k8shazgpu run: --gpu-ids "1,01": GPU 1 twice
exit 2
k8shazgpu run: --gpus 3 and --gpu-ids 1,3 disagree: that is 2 GPUs
exit 2
k8shazgpu run: --name "Demo": up to 53 of a-z, 0-9 and "-", starting and ending with a letter or digit
exit 2
k8shazgpu run: --name "-x": up to 53 of a-z, 0-9 and "-", starting and ending with a letter or digit
exit 2
k8shazgpu run: --name "123456789012345678901234567890123456789012345678901234": up to 53 of a-z, 0-9 and "-", starting and ending with a letter or digit
exit 2
k8shazgpu run: --timeout: whole seconds, at least 1, not "0"
exit 2
k8shazgpu run: --port: a port from 1 to 65535, or 0 for none, not "65536"
exit 2
k8shazgpu run: --port: a port from 1 to 65535, or 0 for none, not "-1"
exit 2
k8shazgpu run: --toleration k:Sometimes: the effect is NoSchedule, PreferNoSchedule or NoExecute, not "Sometimes"
exit 2
k8shazgpu run: --toleration =v: KEY[=VALUE][:EFFECT], KEY a taint's key
exit 2
k8shazgpu run: --prefer-node "A B": not a node name
exit 2
k8shazgpu run: unknown option --bogus (see --help)
exit 2
k8shazgpu run: unexpected argument "stray": the command goes after --
exit 2
k8shazgpu run: unknown option --pack-image (see --help)
exit 2
k8shazgpu run: --image needs a value
exit 2
k8shazgpu run: --image "a b": no spaces in an image reference
exit 2
k8shazgpu vllm run: --image and --image-repo: one or the other
exit 2
k8shazgpu vllm run: --image-name "-x": not a cache item name
exit 2
k8shazgpu vllm run: --repo-name "a b": not a cache item name
exit 2
k8shazgpu vllm: -o: json or nothing (got yaml)
exit 2
k8shazgpu vllm run: --name needs a value
EOF
check_output 'an unknown command: exit 2, the usage' 'st k8shazgpu vllm frob | sed -n 1,3p' <<'EOF'
exit 2
k8shazgpu vllm: unknown command "frob"
usage: k8shazgpu-vllm run [options] [-- command [arg...]]
EOF
# ---------------------------------------------------------------- provenance, --save, --replay F
# The applier that checks a replayed pack is the pods' own, the static
# diff-pack (its -u -c): the real one here.
D64=$(printf '%064d' 7)
# the fake diff-pack's image is one by digest (it takes no -i)
FAKE_IMAGE=reg/v@sha256:$D64
export FAKE_IMAGE
check_output 'the provenance in the claim: the image by digest, the pack, argv, GPUs, port, tolerations; its sha256 its own' \
	"dry --gpu-ids 1 --toleration k=v:NoSchedule -- vllm serve ./m 'a b' |
	sed -n 1p | jq -r '.metadata.annotations[\"canhazgpu.dev/provenance\"]' >prov.json &&
	jq -c 'del(.sha256)' prov.json && [ \"\$(jq -S -c 'del(.sha256)' prov.json | sha256sum | cut -c1-64)\" = \"\$(jq -r .sha256 prov.json)\" ] && echo signed" <<EOF
{"kind":"vllm-run","version":1,"run":"demo","namespace":"ns1","image":"reg/v@sha256:$D64","image_tag":"reg/v@sha256:$D64","base":"$B40","head":"2222222222222222222222222222222222222222","merge_base":"$B40","pack":{"sha256":"ab12","size":1100000,"bytes":10,"files":{"put":2,"link":1,"del":1},"configmaps":["demo-pack-0","demo-pack-1"]},"argv":["vllm","serve","./m","a b"],"gpus":1,"gpu_ids":"1","port":8000,"prefer_node":"","tolerations":["k=v:NoSchedule"]}
signed
EOF
check_output '--save with an image by tag: the registry asked (--check); no digest named: refused, nothing written' \
	'unset FAKE_IMAGE; st vr --name demo --dry-run --save run.json | grep -v "^pack: "; grep -c -- --check dp.args; ls run.json* 2>&1 | sed "s/^ls: //"' <<EOF
exit 1
k8shazgpu vllm run: --save: the digest of image $IMG is not known (the registry named none): a tag is not saved
1
cannot access 'run.json*': No such file or directory
EOF
check_output '--save F: F the provenance, F.pack the ConfigMaps as diff-pack made them' \
	"vr --name demo --dry-run --save run.json -- vllm serve 2>&1 >/dev/null | grep -v '^pack: ';
	cmp -s prov.json run.json || jq -c '[.argv, .gpus, .image]' run.json; diff-pack | sed '\$d' | cmp - run.json.pack && echo same" <<EOF
k8shazgpu vllm run: saved: run.json and run.json.pack (k8shazgpu vllm run --replay run.json runs it again)
[["vllm","serve"],1,"reg/v@sha256:$D64"]
same
EOF

# a real pack (one file put, over the fake record's base and head), in
# the ConfigMap its provenance names; sign FILE: its sha256 made again
printf 'x = 1\n' >x.py
{
	printf 'K8SHAZGPU-PACK 1\n'
	printf '{"kind":"pack","version":1,"base":"%s","head":"%s","data_size":6,"entries":[{"op":"put","path":"vllm/x.py","mode":"100644","size":6,"offset":0,"sha256":"%s","base_blob":null}]}\n' \
		"$B40" 2222222222222222222222222222222222222222 "$(sha256sum <x.py | cut -c1-64)"
	cat x.py
} >real.pack
PS=$(sha256sum <real.pack | cut -c1-64)
# cms PACK: the ConfigMap of PACK (one chunk), as diff-pack -k makes it
cms() {
	jq -n -c --arg s "$(sha256sum <"$1" | cut -c1-64)" --arg n "$(wc -c <"$1" | tr -d ' ')" --arg b "$(base64 -w0 <"$1")" \
		'{apiVersion: "v1", kind: "ConfigMap", metadata: {name: "demo-pack-0"}, immutable: true,
		  data: {"index.json": ({kind: "pack-index", version: 1, sha256: $s, size: ($n | tonumber),
			chunks: [{key: "pack.000", size: ($n | tonumber), sha256: $s}]} | tojson)},
		  binaryData: {"pack.000": $b}}'
}
sign() { jq -c --arg d "$(jq -S -c 'del(.sha256)' "$1" | sha256sum | cut -c1-64)" '. + {sha256: $d}' "$1" >"$1.s" && mv "$1.s" "$1"; }
jq -c --arg s "$PS" '.pack.sha256 = $s | .pack.configmaps = ["demo-pack-0"]' run.json >real.json && sign real.json
cms real.pack >real.json.pack
K8SHAZGPU_APPLIER=$BUILD/static/diff-pack
export K8SHAZGPU_APPLIER
check_output '--replay F: its hashes said; the image by digest, the same pack bytes under the new name, the same argv and GPUs' \
	"vr --replay real.json --name again --dry-run >again.out 2>again.err; echo \"exit \$?\"; cat again.err;
	jq -c 'select(.kind == \"ResourceClaim\") | .metadata.annotations | [.[\"canhazgpu.dev/image\"], .[\"canhazgpu.dev/pack-sha256\"] == \"$PS\", .[\"canhazgpu.dev/base\"]]' again.out;
	jq -c 'select(.kind == \"ConfigMap\") | [.metadata.name, .metadata.labels[\"canhazgpu.dev/run\"], .binaryData == \$p[0].binaryData, .data == \$p[0].data]' --slurpfile p real.json.pack again.out;
	jq -c 'select(.kind == \"Pod\") | [.spec.containers[0].image, .spec.containers[0].args, .spec.volumes[2].projected.sources]' again.out" <<EOF
exit 0
k8shazgpu vllm run: replaying demo (namespace ns1): base $B40, head 2222222222222222222222222222222222222222
k8shazgpu vllm run:   pack $PS, image reg/v@sha256:$D64
pack: 2 put, 1 links, 1 deleted, 10 bytes over 111111111111 (run demo); image reg/v@sha256:$D64
["reg/v@sha256:$D64",true,"$B40"]
["again-pack-0","again",true,true]
["reg/v@sha256:$D64",["vllm","serve"],[{"configMap":{"name":"again-pack-0"}}]]
EOF
check_output '--replay F reads no checkout: diff-pack is not run' 'rm -f dp.args && vr --replay real.json --dry-run >/dev/null 2>&1; ls dp.args 2>&1 | sed "s/^ls: //"' <<'EOF'
cannot access 'dp.args': No such file or directory
EOF
# a provenance file edited by hand: its own digest, then its pack's
jq -c '.argv = ["sh", "-c", "evil"]' real.json >edited.json && cp real.json.pack edited.json.pack
check_output '--replay F edited by hand: 5, named, nothing made' 'st vr --replay edited.json --dry-run' <<EOF
exit 5
k8shazgpu vllm run: edited.json: the provenance record does not match its sha256 $(jq -r .sha256 real.json) (it hashes to $(jq -S -c 'del(.sha256)' edited.json | sha256sum | cut -c1-64)): edited?
EOF
jq -c --arg s "$D64" '.pack.sha256 = $s' real.json >edited.json && sign edited.json
check_output '--replay F, signed again but naming another pack: 5, the applier says why' 'st vr --replay edited.json --dry-run' <<EOF
exit 5
    diff-pack: pack: sha256 $PS, expected $D64 (-s)
k8shazgpu vllm run: edited.json.pack: not the pack of sha256 $D64 the provenance names: not replayed
EOF
rm edited.json.pack
check_output '--replay F without F.pack: 1' 'st vr --replay edited.json --dry-run' <<'EOF'
exit 1
k8shazgpu vllm run: edited.json.pack: missing: a saved run is its file and its pack, F and F.pack
EOF
# a hostile pack (two links that climb out together), signed: refused
# here with the applier's own words, before anything is made
{
	printf 'K8SHAZGPU-PACK 1\n'
	printf '{"kind":"pack","version":1,"base":"%s","head":"%s","data_size":0,"entries":[{"op":"link","path":"vllm/a/l1","target":"..","base_blob":null},{"op":"link","path":"vllm/a/y/l2","target":"../l1/..","base_blob":null}]}\n' \
		"$B40" 2222222222222222222222222222222222222222
} >evil.pack
jq -c --arg s "$(sha256sum <evil.pack | cut -c1-64)" '.pack.sha256 = $s' real.json >evil.json && sign evil.json
cms evil.pack >evil.json.pack
check_output '--replay F of a pack the pod would refuse: 7, the applier'"'"'s reason' 'st vr --replay evil.json --dry-run' <<'EOF'
exit 7
    diff-pack: pack: entry 2 (vllm/a/y/l2): link target ../l1/.. escapes the tree: a target that leaves the package directory through the link vllm/a/l1
    diff-pack: pack: refused, as diff-pack -u would refuse it
k8shazgpu vllm run: evil.json.pack: the pod would refuse this pack (above): not replayed
EOF
jq -c '.image = null' real.json >notag.json && sign notag.json && cp real.json.pack notag.json.pack
check_output '--replay F of a run whose image digest was not known: 1' 'st vr --replay notag.json --dry-run' <<'EOF'
exit 1
k8shazgpu vllm run: notag.json: its image's digest was not known (it ran without --check or --save): it cannot be replayed exactly
EOF
jq -c '.binaryData["../x"] = "eA=="' real.json.pack >keyed.json.pack && cp real.json keyed.json
check_output '--replay F whose ConfigMap holds a key other than index.json, pack.NNN: 5' \
	'st vr --replay keyed.json --dry-run' <<'EOF'
exit 5
k8shazgpu vllm run: keyed.json.pack: key "../x": not index.json or pack.NNN
EOF
check_output '--replay fixes what ran: other options refused (2)' \
	'for o in "--gpus 2" "--port 1" "--image x@sha256:'"$D64"'" "--toleration k" "-C /src" "--check" "-- sh"; do
	 st vr --replay real.json --dry-run $o | sed -n 2p; done' <<'EOF'
k8shazgpu vllm run: --replay runs what the run ran: --gpus cannot change it
k8shazgpu vllm run: --replay runs what the run ran: --port cannot change it
k8shazgpu vllm run: --replay runs what the run ran: --image cannot change it
k8shazgpu vllm run: --replay runs what the run ran: --toleration cannot change it
k8shazgpu vllm run: --replay runs what the run ran: -C cannot change it
k8shazgpu vllm run: --replay reads no checkout and asks no registry: no --fetch, no --check
k8shazgpu vllm run: --replay runs the command the run ran: no command after --
EOF
K8SHAZGPU_APPLIER=$SCRATCH/applier
unset FAKE_IMAGE

check_output 'vllm sync and --watch: their usage errors (2), before any request' \
	'st k8shazgpu vllm sync; st k8shazgpu vllm sync --name Bad_Name; st k8shazgpu vllm sync --name x --interval soon;
	 st vr --name demo --watch --follow --dry-run; st k8shazgpu vllm sync --name x extra' <<'EOF'
exit 2
k8shazgpu vllm sync: --name N is required: the run to sync
exit 2
k8shazgpu vllm sync: --name "Bad_Name": not a run name
exit 2
k8shazgpu vllm sync: --interval: seconds (1, 0.5), not "soon"
exit 2
k8shazgpu vllm run: --watch and --follow: one or the other (the log: kubectl logs -f)
exit 2
k8shazgpu vllm sync: unexpected argument "extra"
EOF
done_testing
