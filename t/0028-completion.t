#!/bin/sh
# Completion of k8shazgpu, through bash's completion function
# (scripts/completion/k8shazgpu.bash) driven as bash drives it
# (COMP_WORDS, COMP_CWORD, then COMPREPLY): commands, global options,
# a group's verbs and options read from its usage text (those of a group
# added on PATH too), option values, file names, and nothing, at once,
# for live names when the cluster cannot be reached or never answers.
# kubectl's plugin completion (kubectl_complete-hazgpu), the zsh file,
# and what `make install-completion` installs. No cluster.
. "$(dirname "$0")/lib.sh"

# the API server of the kubeconfig refuses connections (127.0.0.1:9)
cp "$FIXTURES/cli/kubeconfig" kubeconfig
KUBECONFIG=$SCRATCH/kubeconfig HOME=$SCRATCH
export KUBECONFIG HOME
unset K8SHAZGPU_NAMESPACE K8SHAZGPU_CONTEXT K8SHAZGPU_OUTPUT K8SHAZGPU_COMPLETE_TIMEOUT

. "$TOP/t/lib-complete.sh"

check_output 'the commands' "comp ''" <<'EOF'
status
nodes
workloads
submit
strategy
watch
health
generate-template
host
cache
vllm
run
cleanup
web
EOF
check_output 'the commands that begin with the word' "comp c" <<'EOF'
cache
cleanup
EOF
check_output 'the global options' "comp -" <<'EOF'
-n
-A
--context
-o
EOF
check_output 'a command after the global options and their values' "comp -n ns1 --context one -o json wo" <<'EOF'
workloads
EOF
check_output 'an option of a command of the dispatcher' "comp status --n" <<'EOF'
--name
--node
EOF
check_output 'the verbs of a group' "comp host ''" <<'EOF'
reserve
release
run
status
queue
report
admin
web
EOF
check_output "a verb's options, after the group's own" "comp host reserve -" <<'EOF'
--redis-host
--redis-port
--redis-socket
--redis-db
--redis-password-file
--memory-threshold
-g
-G
-d
-n
-u
-f
--nonblock
-w
-s
--gpus
--gpu-ids
--duration
--note
--user
--force
--wait
--short
EOF
check_output "a verb's options after an option with a value" "comp host status -j -" <<'EOF'
--redis-host
--redis-port
--redis-socket
--redis-db
--redis-password-file
--memory-threshold
-j
-s
--no-color
--json
--summary
EOF
check_output "a verb's option's value, named in the verb's own usage (host admin -h)" "comp host admin --provider a" <<'EOF'
amd
EOF
check_output 'the words a verb takes first' "comp cache update ''" <<'EOF'
image
gitrepo
model
all
EOF
check_output 'a sub-verb' "comp cache plan ''" <<'EOF'
show
EOF
check_output 'the options of the verb named, not of the others' "comp cache wait --" <<'EOF'
--context
--timeout
--node
EOF
# vllm run's options are those its usage names, whatever they are now
k8shazgpu-vllm -h | grep -o -- '--[a-z][a-z0-9-]*' | awk '!seen[$0]++' | sort >vllm.opts
check 'every option vllm -h names, and only those, for vllm run --' \
	"comp vllm run -- | sort | diff vllm.opts - && test \$(wc -l <vllm.opts) -gt 10"
check_output 'an option only the usage text of vllm names' "comp vllm run --skip" <<'EOF'
--skip-cache-check
EOF
check_output "an option's values from its a|b|c" "comp -o ''" <<'EOF'
json
wide
capacity
EOF
check_output "a verb's option's values" "comp host admin -p a" <<'EOF'
amd
EOF
check_output 'the strategies' "comp strategy bin" <<'EOF'
binpack
binpack_gpu
EOF
check_output "the kubeconfig's contexts" "comp --context ''" <<'EOF'
one
two
EOF
check_output "a value after --option=, which bash replaces alone" "comp --context=" <<'EOF'
=one
=two
EOF
check_output 'a value after --option=VALUE' "comp --context=t" <<'EOF'
two
EOF
check_output 'a value after -o=' "comp -o=w" <<'EOF'
wide
EOF
check_output "a value after --output=, the long spelling of the usage's -o" "comp --output=c" <<'EOF'
capacity
EOF
check_output 'options with values given as --option=VALUE before' "comp --context=one -o=json hea" <<'EOF'
health
EOF
mkdir -p files/sub && : >files/a.yaml && : >files/b.json
check_output 'file names for FILE (bash sorts them to show)' "cd files && comp submit '' | LC_ALL=C sort" <<'EOF'
a.yaml
b.json
sub
EOF
check_output 'directories for DIR' "cd files && comp vllm run -C ''" <<'EOF'
sub
EOF

# a group added on PATH is completed from its usage alone
mkdir bin
# (a verb its summary names, with a usage of its own)
cat >bin/k8shazgpu-t0028 <<'EOF'
#!/bin/sh
# k8shazgpu-group: 99
case ${1-} in
--summary)
	echo '  t0028 VERB ...          a test group'
	echo '  t0028 extra [--deep]    more'
	exit 0 ;;
extra)
	cat <<'USAGE'
usage: k8shazgpu-t0028 extra [options]
  -z, --zone a|b        the zone
      --deep            deeper
USAGE
	exit 0 ;;
esac
cat <<'USAGE'
usage: k8shazgpu-t0028 [-n namespace] [--level low|high] verb
  show WORKLOAD [--watch] [--format yaml|json]
                          a workload
  drop [--force] CLAIM...
USAGE
EOF
chmod +x bin/k8shazgpu-t0028
check_output 'the verbs of a group on PATH, and of its summary' "PATH=\$SCRATCH/bin:\$PATH comp t0028 ''" <<'EOF'
show
drop
extra
EOF
check_output "a verb's options from its own usage, -z as --zone" "PATH=\$SCRATCH/bin:\$PATH comp t0028 extra -" <<'EOF'
-n
--level
-z
--zone
--deep
EOF
check_output 'their values' "PATH=\$SCRATCH/bin:\$PATH comp t0028 extra -z ''; PATH=\$SCRATCH/bin:\$PATH comp t0028 extra --zone=" <<'EOF'
a
b
=a
=b
EOF
check_output 'its options' "PATH=\$SCRATCH/bin:\$PATH comp t0028 show -" <<'EOF'
-n
--level
--watch
--format
EOF
check_output 'its values' "PATH=\$SCRATCH/bin:\$PATH comp t0028 -n x --level h show --format ''" <<'EOF'
yaml
json
EOF

# live names: the cluster refuses the connection
check_output 'no namespaces from a cluster one cannot reach' "comp -n ''" </dev/null
check_output 'no claims' "comp status --name ''" </dev/null
check_output 'no runs' "comp -n ns1 cleanup --name ''" </dev/null
check_output 'no nodes' "comp cache list ''" </dev/null
check_output 'no workloads' "PATH=\$SCRATCH/bin:\$PATH comp t0028 show ''" </dev/null
check_output 'no cache items, the types only' "comp cache remove ''" <<'EOF'
image
gitrepo
model
EOF
# an API server that takes the connection and never answers: nothing,
# with status 0, after claim-watch's -t (a hang would be killed by
# timeout, status 124)
port=$(free_port)
perl -MIO::Socket::INET -e '$s = IO::Socket::INET->new(LocalAddr => "127.0.0.1", LocalPort => $ARGV[0],
	Listen => 16, ReuseAddr => 1) or die "listen: $!"; print "up\n"; $| = 1; my @c; push @c, $s->accept while 1' "$port" >perl.out &
silent=$!
eventually 10 grep -q up perl.out
sed "s|https://127.0.0.1:9|https://127.0.0.1:$port|" kubeconfig >kubeconfig.silent
check_output 'no namespaces from an API server that never answers' \
	"KUBECONFIG=\$SCRATCH/kubeconfig.silent timeout 10 k8shazgpu __complete -n ''; echo \"exit \$?\"" <<'EOF'
exit 0
EOF
check_output 'nor cache items' \
	"KUBECONFIG=\$SCRATCH/kubeconfig.silent timeout 10 k8shazgpu __complete cache update image ''; echo \"exit \$?\"" <<'EOF'
exit 0
EOF
kill "$silent"

# kubectl hazgpu: kubectl asks kubectl_complete-hazgpu, which ends with
# a directive line (4: no file names, 0: file names)
check_output 'kubectl_complete-hazgpu: the verbs' "kubectl_complete-hazgpu host re" <<'EOF'
reserve
release
report
:4
EOF
check_output 'kubectl_complete-hazgpu: file names' "kubectl_complete-hazgpu submit ''" <<'EOF'
:0
EOF
check_output 'kubectl_complete-hazgpu: nothing' "kubectl_complete-hazgpu -n ''" <<'EOF'
:4
EOF
check_output 'bash completes kubectl-hazgpu too' \
	"bash -c '. \"\$1\"; complete -p kubectl-hazgpu' bash \"\$TOP/scripts/completion/k8shazgpu.bash\"" <<'EOF'
complete -F _k8shazgpu kubectl-hazgpu
EOF

# zcomp WORD...: what _k8shazgpu gives zsh's compadd (or asks of
# _files), then its status, for `k8shazgpu WORD...`; outside compsys,
# compadd and _files print their arguments.
zcomp() {
	zsh -fc 'f=$1; shift
		compadd() { [[ $1 == -a ]] && print -rl -- ${(P)2} }
		_files() { print -r -- "_files${*:+ $*}" }
		eval "_k8shazgpu() { $(<$f) }"
		words=("$@") CURRENT=$#
		_k8shazgpu
		print -r -- "status $?"' zsh "$TOP/scripts/completion/_k8shazgpu" k8shazgpu "$@"
}
if command -v zsh >/dev/null 2>&1; then
	check '_k8shazgpu parses in zsh' "zsh -n '$TOP/scripts/completion/_k8shazgpu'"
	check_output 'zsh: the verbs of a group' "zcomp cache ''" <<'EOF'
add
remove
update
plan
list
status
wait
status 0
EOF
	check_output 'zsh: files, directories' "zcomp submit x; zcomp vllm run -C x" <<'EOF'
_files
status 0
_files -/
status 0
EOF
	check_output 'zsh: no namespaces from a cluster one cannot reach (status 1)' "zcomp -n ''" <<'EOF'
status 1
EOF
else
	for z in '_k8shazgpu parses' 'the verbs of a group' 'files, directories' 'no namespaces'; do
		t_n=$((t_n + 1))
		echo "ok $t_n # SKIP zsh is not installed: $z"
	done
fi

# make install-completion, as make install runs it
check_output 'make install-completion DESTDIR=... PREFIX=/usr' \
	"make -s -C '$TOP' install-completion DESTDIR='$SCRATCH/d' PREFIX=/usr >/dev/null &&
	cd d && find . ! -type d | sort && readlink usr/bin/kubectl-hazgpu usr/share/bash-completion/completions/kubectl-hazgpu" <<'EOF'
./usr/bin/kubectl-hazgpu
./usr/bin/kubectl_complete-hazgpu
./usr/libexec/k8shazgpu/complete.sh
./usr/share/bash-completion/completions/k8shazgpu
./usr/share/bash-completion/completions/kubectl-hazgpu
./usr/share/zsh/site-functions/_k8shazgpu
k8shazgpu
k8shazgpu
EOF
# the installed kubectl-hazgpu is the dispatcher, beside its libexec
cp "$TOP/scripts/k8shazgpu" d/usr/bin/
cp "$TOP/scripts/cli-lib.sh" d/usr/libexec/k8shazgpu/
check_output 'kubectl-hazgpu, installed, is k8shazgpu' "d/usr/bin/kubectl-hazgpu -h | head -n 1" <<'EOF'
usage: k8shazgpu [-n namespace | -A] [--context name] [-o json|wide|capacity] command [args]
EOF
check_output 'the installed kubectl_complete-hazgpu completes through it' "d/usr/bin/kubectl_complete-hazgpu st" <<'EOF'
status
strategy
:4
EOF
# kubectl itself, where installed, finds the plugin and its completion
if command -v kubectl >/dev/null 2>&1; then
	check_output 'kubectl hazgpu runs kubectl-hazgpu' "PATH=\$SCRATCH/d/usr/bin:\$PATH kubectl hazgpu -h | head -n 1" <<'EOF'
usage: k8shazgpu [-n namespace | -A] [--context name] [-o json|wide|capacity] command [args]
EOF
	check_output "kubectl's completion of kubectl hazgpu" "PATH=\$SCRATCH/d/usr/bin:\$PATH kubectl __complete hazgpu cache pl 2>/dev/null" <<'EOF'
plan
:4
EOF
else
	t_n=$((t_n + 1))
	echo "ok $t_n # SKIP kubectl is not installed: kubectl hazgpu not run"
	t_n=$((t_n + 1))
	echo "ok $t_n # SKIP kubectl is not installed: kubectl __complete hazgpu not run"
fi
done_testing
