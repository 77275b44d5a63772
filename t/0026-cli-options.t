#!/bin/sh
# The global options of every k8shazgpu command group in each spelling
# cli-lib.sh accepts: -n NS, -nNS, -n=NS, --namespace NS, --namespace=NS;
# -o, --output and --context alike; -A, --all-namespaces. Given before the
# group (to the dispatcher) and after it, each asserted by the exact
# arguments the group gives claim-watch (a stand-in that records them) or
# by the exact object or message it makes. No cluster.
. "$(dirname "$0")/lib.sh"

# two contexts, of namespaces ns1 (the current one) and ns2
cp "$FIXTURES/cli/kubeconfig" kubeconfig
mkdir bin
# claim-watch: one line of its arguments in calls, no objects
cat >bin/claim-watch <<'EOF'
#!/bin/sh
echo "claim-watch $*" >>"$SCRATCH/calls"
EOF
# diff-pack: no ConfigMaps, the checkout record alone
cat >bin/diff-pack <<'EOF'
#!/bin/sh
B=1111111111111111111111111111111111111111
printf '{"kind":"checkout","root":"/src/vllm","remote":"origin","remote_url":"git@github.com:alice/vllm.git","branch":"b","head":"%s","base_ref":"refs/remotes/upstream/main","merge_base":"%s","base":"%s","image":"reg/vllm:%s","image_checked":false,"image_digest":null,"files":{"put":0,"link":0,"del":0},"bytes":0,"pack_sha256":"ab12","pack_size":0,"pack":null,"configmaps":[],"native":[],"submodules":[],"hidden":[],"warnings":[]}\n' $B $B $B $B
EOF
chmod +x bin/claim-watch bin/diff-pack
PATH=$SCRATCH/bin:$PATH
KUBECONFIG=$SCRATCH/kubeconfig
printf 'applier\n' >"$SCRATCH/applier"
K8SHAZGPU_APPLIER=$SCRATCH/applier
K8SHAZGPU_SIM_DIR=$SCRATCH/sim
export PATH KUBECONFIG K8SHAZGPU_APPLIER K8SHAZGPU_SIM_DIR SCRATCH
unset K8SHAZGPU_NAMESPACE K8SHAZGPU_CONTEXT K8SHAZGPU_OUTPUT

# each SPELLING...: runs `try` with each spelling's words (a spelling is
# one string, split on spaces) and prints "SPELLING: " and what try printed
each() {
	IFS=' '
	for sp; do
		# shellcheck disable=SC2086
		printf '%s: %s\n' "$sp" "$(try $sp 2>&1)"
	done
}
# the first claim-watch call of CMD..., its other output dropped
first_call() { rm -f calls; "$@" >/dev/null 2>&1; head -n 1 calls; }

NS='-n x|-nx|-n=x|--namespace x|--namespace=x'
CTX='--context two|--context=two'
OUT='-o bogus|-obogus|-o=bogus|--output bogus|--output=bogus'
ALL='-A|--all-namespaces'
# spell LIST: the spellings of LIST (|-separated) as arguments of each
# shellcheck disable=SC2086
spell() { (IFS='|'; set -f; each $1); }

# ---------------------------------------------------------------- k8shazgpu

try() { first_call k8shazgpu "$@" workloads; }
check_output 'k8shazgpu: -n, --context, -A in every spelling' "spell '$NS|$CTX|$ALL'" <<'EOF'
-n x: claim-watch -1 -n x gpuworkloads.canhazgpu.dev
-nx: claim-watch -1 -n x gpuworkloads.canhazgpu.dev
-n=x: claim-watch -1 -n x gpuworkloads.canhazgpu.dev
--namespace x: claim-watch -1 -n x gpuworkloads.canhazgpu.dev
--namespace=x: claim-watch -1 -n x gpuworkloads.canhazgpu.dev
--context two: claim-watch -1 --context two gpuworkloads.canhazgpu.dev
--context=two: claim-watch -1 --context two gpuworkloads.canhazgpu.dev
-A: claim-watch -1 -A gpuworkloads.canhazgpu.dev
--all-namespaces: claim-watch -1 -A gpuworkloads.canhazgpu.dev
EOF
try() { k8shazgpu "$@" workloads; echo "exit $?"; }
check_output 'k8shazgpu: -o in every spelling, before the command' "spell '$OUT'" <<'EOF'
-o bogus: k8shazgpu: -o: one of json, wide, capacity (got bogus)
exit 2
-obogus: k8shazgpu: -o: one of json, wide, capacity (got bogus)
exit 2
-o=bogus: k8shazgpu: -o: one of json, wide, capacity (got bogus)
exit 2
--output bogus: k8shazgpu: -o: one of json, wide, capacity (got bogus)
exit 2
--output=bogus: k8shazgpu: -o: one of json, wide, capacity (got bogus)
exit 2
EOF
try() { k8shazgpu workloads "$@"; echo "exit $?"; }
check_output 'k8shazgpu: -o in every spelling, after the command' "spell '$OUT'" <<'EOF'
-o bogus: k8shazgpu: -o: one of json, wide, capacity (got bogus)
exit 2
-obogus: k8shazgpu: -o: one of json, wide, capacity (got bogus)
exit 2
-o=bogus: k8shazgpu: -o: one of json, wide, capacity (got bogus)
exit 2
--output bogus: k8shazgpu: -o: one of json, wide, capacity (got bogus)
exit 2
--output=bogus: k8shazgpu: -o: one of json, wide, capacity (got bogus)
exit 2
EOF
try() { k8shazgpu "$@" >/dev/null 2>err; echo "exit $?"; head -n 1 err; }
check_output 'k8shazgpu: a value missing; an unknown option: the usage, exit 2' \
	"spell '-n|--namespace|-o|--output|--context|-x|--nope'" <<'EOF'
-n: exit 2
k8shazgpu: -n needs a namespace
--namespace: exit 2
k8shazgpu: --namespace needs a namespace
-o: exit 2
k8shazgpu: -o needs json, wide or capacity
--output: exit 2
k8shazgpu: --output needs json, wide or capacity
--context: exit 2
k8shazgpu: --context needs a name
-x: exit 2
usage: k8shazgpu [-n namespace | -A] [--context name] [-o json|wide|capacity] command [args]
--nope: exit 2
usage: k8shazgpu [-n namespace | -A] [--context name] [-o json|wide|capacity] command [args]
EOF
check_output 'k8shazgpu: -o json prints the objects; a value that looks like an option is a value' \
	'rm -f calls; echo "{\"object\":{\"kind\":\"GPUWorkload\"}}" >obj
	 printf "#!/bin/sh\necho \"claim-watch \$*\" >>\"\$SCRATCH/calls\"; cat \"\$SCRATCH/obj\"\n" >bin/claim-watch
	 k8shazgpu --output=json workloads; k8shazgpu workloads -ojson; k8shazgpu -n -A workloads -o json; cat calls' <<'EOF'
{"kind":"GPUWorkload"}
{"kind":"GPUWorkload"}
{"kind":"GPUWorkload"}
claim-watch -1 gpuworkloads.canhazgpu.dev
claim-watch -1 gpuworkloads.canhazgpu.dev
claim-watch -1 -n -A gpuworkloads.canhazgpu.dev
EOF
printf '#!/bin/sh\necho "claim-watch $*" >>"$SCRATCH/calls"\n' >bin/claim-watch

# ---------------------------------------------------------------- cleanup

try() { first_call k8shazgpu "$@" cleanup --name r; }
check_output 'cleanup: -n, --context in every spelling, before the group' "spell '$NS|$CTX'" <<'EOF'
-n x: claim-watch -1 -n x -f metadata.name=r resourceclaims.resource.k8s.io
-nx: claim-watch -1 -n x -f metadata.name=r resourceclaims.resource.k8s.io
-n=x: claim-watch -1 -n x -f metadata.name=r resourceclaims.resource.k8s.io
--namespace x: claim-watch -1 -n x -f metadata.name=r resourceclaims.resource.k8s.io
--namespace=x: claim-watch -1 -n x -f metadata.name=r resourceclaims.resource.k8s.io
--context two: claim-watch -1 --context two -f metadata.name=r resourceclaims.resource.k8s.io
--context=two: claim-watch -1 --context two -f metadata.name=r resourceclaims.resource.k8s.io
EOF
try() { first_call k8shazgpu cleanup --name r "$@"; }
check_output 'cleanup: -n, --context in every spelling, after the group' "spell '$NS|$CTX'" <<'EOF'
-n x: claim-watch -1 -n x -f metadata.name=r resourceclaims.resource.k8s.io
-nx: claim-watch -1 -n x -f metadata.name=r resourceclaims.resource.k8s.io
-n=x: claim-watch -1 -n x -f metadata.name=r resourceclaims.resource.k8s.io
--namespace x: claim-watch -1 -n x -f metadata.name=r resourceclaims.resource.k8s.io
--namespace=x: claim-watch -1 -n x -f metadata.name=r resourceclaims.resource.k8s.io
--context two: claim-watch -1 --context two -f metadata.name=r resourceclaims.resource.k8s.io
--context=two: claim-watch -1 --context two -f metadata.name=r resourceclaims.resource.k8s.io
EOF
try() { k8shazgpu cleanup "$@" --all 2>&1; echo "exit $?"; }
check_output 'cleanup: -o in every spelling; --name both ways; an unknown option' \
	"spell '$OUT' && try --name=r; try --name r; try -A | head -n 2" <<'EOF'
-o bogus: k8shazgpu cleanup: -o: json or nothing (got bogus)
exit 2
-obogus: k8shazgpu cleanup: -o: json or nothing (got bogus)
exit 2
-o=bogus: k8shazgpu cleanup: -o: json or nothing (got bogus)
exit 2
--output bogus: k8shazgpu cleanup: -o: json or nothing (got bogus)
exit 2
--output=bogus: k8shazgpu cleanup: -o: json or nothing (got bogus)
exit 2
k8shazgpu cleanup: --name or --all, not both
exit 2
k8shazgpu cleanup: --name or --all, not both
exit 2
k8shazgpu cleanup: unexpected argument "-A"
usage: k8shazgpu-cleanup [-n namespace] [--context name] (--name RUN | --all) [--dry-run]
EOF

# ---------------------------------------------------------------- run and vllm run

ns_of() { jq -r 'select(.kind == "ResourceClaim") | .metadata.namespace'; }
try() { k8shazgpu "$@" run --image i --dry-run | ns_of; }
check_output 'run: -n, --context in every spelling, before the group' "spell '$NS|$CTX'" <<'EOF'
-n x: x
-nx: x
-n=x: x
--namespace x: x
--namespace=x: x
--context two: ns2
--context=two: ns2
EOF
try() { k8shazgpu run --image i "$@" --dry-run -- cmd -n y --context=one | jq -c 'select(.kind == "Pod") | [.metadata.namespace, .spec.containers[0].command]'; }
check_output 'run: -n, --context in every spelling, among its options; after -- they are the command'"'"'s' "spell '$NS|$CTX'" <<'EOF'
-n x: ["x",["cmd","-n","y","--context=one"]]
-nx: ["x",["cmd","-n","y","--context=one"]]
-n=x: ["x",["cmd","-n","y","--context=one"]]
--namespace x: ["x",["cmd","-n","y","--context=one"]]
--namespace=x: ["x",["cmd","-n","y","--context=one"]]
--context two: ["ns2",["cmd","-n","y","--context=one"]]
--context=two: ["ns2",["cmd","-n","y","--context=one"]]
EOF
try() { k8shazgpu vllm run --name demo "$@" --dry-run 2>/dev/null | ns_of; }
check_output 'vllm run: -n, --context in every spelling' "spell '$NS|$CTX'" <<'EOF'
-n x: x
-nx: x
-n=x: x
--namespace x: x
--namespace=x: x
--context two: ns2
--context=two: ns2
EOF
try() { k8shazgpu vllm run "$@"; echo "exit $?"; }
check_output 'vllm: -o in every spelling; a value missing' "spell '$OUT|-n|--context'" <<'EOF'
-o bogus: k8shazgpu vllm: -o: json or nothing (got bogus)
exit 2
-obogus: k8shazgpu vllm: -o: json or nothing (got bogus)
exit 2
-o=bogus: k8shazgpu vllm: -o: json or nothing (got bogus)
exit 2
--output bogus: k8shazgpu vllm: -o: json or nothing (got bogus)
exit 2
--output=bogus: k8shazgpu vllm: -o: json or nothing (got bogus)
exit 2
-n: k8shazgpu vllm: -n needs a namespace
exit 2
--context: k8shazgpu vllm: --context needs a name
exit 2
EOF

# ---------------------------------------------------------------- cache

try() { first_call k8shazgpu "$@" cache plan show; }
check_output 'cache: --context both ways, before the group' "spell '$CTX'" <<'EOF'
--context two: claim-watch -1 --context two -f metadata.name=default cacheplans.canhazgpu.dev
--context=two: claim-watch -1 --context two -f metadata.name=default cacheplans.canhazgpu.dev
EOF
try() { first_call k8shazgpu cache plan "$@" show; }
check_output 'cache: --context both ways, among the words of its command' "spell '$CTX'" <<'EOF'
--context two: claim-watch -1 --context two -f metadata.name=default cacheplans.canhazgpu.dev
--context=two: claim-watch -1 --context two -f metadata.name=default cacheplans.canhazgpu.dev
EOF
try() { k8shazgpu cache list "$@"; echo "exit $?"; }
check_output 'cache: -o in every spelling; a value missing' "spell '$OUT|-o'" <<'EOF'
-o bogus: k8shazgpu cache: -o: one of json, wide (got bogus)
exit 2
-obogus: k8shazgpu cache: -o: one of json, wide (got bogus)
exit 2
-o=bogus: k8shazgpu cache: -o: one of json, wide (got bogus)
exit 2
--output bogus: k8shazgpu cache: -o: one of json, wide (got bogus)
exit 2
--output=bogus: k8shazgpu cache: -o: one of json, wide (got bogus)
exit 2
-o: k8shazgpu cache: -o needs json or wide
exit 2
EOF

# ---------------------------------------------------------------- host and sim

try() { k8shazgpu host status "$@" 2>&1; echo "exit $?"; }
check_output 'host: its options in every spelling (the value checked before Redis is asked)' \
	"spell '--redis-db x|--redis-db=x|--memory-threshold=-1|--redis-port' && try -g" <<'EOF'
--redis-db x: k8shazgpu host status: --redis-db: not a whole number: x
exit 2
--redis-db=x: k8shazgpu host status: --redis-db: not a whole number: x
exit 2
--memory-threshold=-1: k8shazgpu host status: --memory-threshold: not a whole number: -1
exit 2
--redis-port: k8shazgpu host status: --redis-port needs a value
exit 2
k8shazgpu host status: -g: unknown option
usage: k8shazgpu host status [-j] [-s] [--no-color]
exit 2
EOF
try() { k8shazgpu host reserve "$@"; echo "exit $?"; }
check_output 'host reserve: -g in every spelling' "spell '-g x|-gx|-g=x|--gpus x|--gpus=x|-g'" <<'EOF'
-g x: k8shazgpu host reserve: -g: not a whole number: x
exit 2
-gx: k8shazgpu host reserve: -g: not a whole number: x
exit 2
-g=x: k8shazgpu host reserve: -g: not a whole number: x
exit 2
--gpus x: k8shazgpu host reserve: -g: not a whole number: x
exit 2
--gpus=x: k8shazgpu host reserve: -g: not a whole number: x
exit 2
-g: k8shazgpu host reserve: -g needs a value
exit 2
EOF
try() { k8shazgpu-sim up "$@" 2>&1; echo "exit $?"; }
check_output 'sim up: -t in every spelling; without its value, the usage' \
	"spell '-t ./no.yaml|-t./no.yaml|-t=./no.yaml'; try -t | sed -n '1p;\$p'; try -x | sed -n '1p;\$p'; test ! -e sim" <<'EOF'
-t ./no.yaml: k8shazgpu-sim: ./no.yaml: no such topology file
exit 1
-t./no.yaml: k8shazgpu-sim: ./no.yaml: no such topology file
exit 1
-t=./no.yaml: k8shazgpu-sim: ./no.yaml: no such topology file
exit 1
usage: k8shazgpu-sim up [-t TOPOLOGY] [--no-node]
exit 2
usage: k8shazgpu-sim up [-t TOPOLOGY] [--no-node]
exit 2
EOF

# ---------------------------------------------------------------- the dispatcher

check_output 'k8shazgpu -h: the commands, then each group'"'"'s own lines in its place' 'k8shazgpu -h' <<'EOF'
usage: k8shazgpu [-n namespace | -A] [--context name] [-o json|wide|capacity] command [args]
commands:
  status [--name CLAIM] [--node NODE]
                          GPUs per node (free, held on the host, allocated),
                          workloads per phase, the strategy, the claims
  nodes                   GPU nodes (their GPUNodes): devices, free, GPUs, product,
                          MIG, utilization tier, health; -o capacity: capacity and
                          allocatable less pod requests of cpu, memory, GPUs, pods
  workloads               GPUWorkloads with phase, node and devices
  submit FILE...          create GPUWorkloads from YAML or JSON (also the
                          agentaflow.io/v1 and gpu.warp.dev/v1alpha1 shapes)
  strategy [NAME]         show, or set at run time, the controller's strategy
  watch [-i seconds] [-c count]   status, refreshed
  health                  every device that is not ok, with its reasons
  generate-template [FILE]  a GPUWorkload to start from
  host VERB ...           the host's GPUs as canhazgpu: reserve, release, run,
                          status, queue, report, admin (k8shazgpu-host(1))
  cache COMMAND ...       the node cache: images, git repos and models every
                          node holds (k8shazgpu-cache(1))
  vllm run [options] [-- CMD...]
                          this vLLM checkout, as it is, on cluster GPUs
                          (k8shazgpu-vllm(1))
  vllm sync --name N [--watch]
                          the working tree's edits into run N's pod, its
                          command restarted
  run --image IMAGE [options] [-- CMD...]
                          a command on cluster GPUs (k8shazgpu-run(1))
  cleanup --name RUN | --all
                          delete what vllm run and run made (k8shazgpu-cleanup(1))
  web [--listen ADDR] [--port N] [--refresh S] [--node NODE] [--once|--state]
                          the status page: GPUs, holders, health, the queue,
                          served on 127.0.0.1:8080 (k8shazgpu-web(1))
EOF
check_output 'a group is a marked program k8shazgpu-NAME: beside the dispatcher, on PATH; the first wins' '
	mkdir -p d/bin p && cp "$TOP/scripts/k8shazgpu" "$TOP/scripts/cli-lib.sh" d/bin/
	printf "#!/bin/sh\n# k8shazgpu-group: 35\n[ \"\$1\" != --summary ] || { echo \"  hello                   says hello\"; exit 0; }\necho \"hello \$* [\$K8SHAZGPU_NAMESPACE] [\$K8SHAZGPU_CONTEXT] [\$K8SHAZGPU_OUTPUT]\"\n" >d/bin/k8shazgpu-hello
	sed "s/says hello/another/; s/^echo \"hello/echo \"other/" d/bin/k8shazgpu-hello >p/k8shazgpu-hello
	printf "#!/bin/sh\n# the mark on the third line\n# k8shazgpu-group: 1\necho zz\n" >p/k8shazgpu-zz
	printf "#!/bin/sh\necho plain\n" >p/k8shazgpu-plain
	chmod +x d/bin/k8shazgpu-hello p/k8shazgpu-hello p/k8shazgpu-zz p/k8shazgpu-plain
	d/bin/k8shazgpu -h | sed -n "/^  vllm run/,/^  run /p"
	PATH=$SCRATCH/p:$PATH d/bin/k8shazgpu -n=x --context c -o json hello a "b c"
	PATH=$SCRATCH/p:$PATH k8shazgpu hello a; PATH=$SCRATCH/p:$PATH k8shazgpu -h | grep -c "^  hello *another$"
	PATH=$SCRATCH/p:$PATH k8shazgpu zz 2>/dev/null; echo "exit $?"
	PATH=$SCRATCH/p:$PATH k8shazgpu plain 2>&1 | head -n 1
	k8shazgpu controller 2>&1 | head -n 1; k8shazgpu sim 2>&1 | head -n 1' <<'EOF'
  vllm run [options] [-- CMD...]
                          this vLLM checkout, as it is, on cluster GPUs
                          (k8shazgpu-vllm(1))
  vllm sync --name N [--watch]
                          the working tree's edits into run N's pod, its
                          command restarted
  hello                   says hello
  run --image IMAGE [options] [-- CMD...]
hello a b c [x] [c] [json]
other a [] [] []
1
exit 2
k8shazgpu: unknown command "plain"
k8shazgpu: unknown command "controller"
k8shazgpu: unknown command "sim"
EOF

done_testing
