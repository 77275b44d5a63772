#!/bin/sh
# pod-exec without a cluster: its usage and what it refuses (2), files it
# cannot read (1), an API server that cannot be reached (75), each with
# its exact message. The exec itself, through the API server and the
# kubelet of the real node, is t/9764's (vllm sync runs through it).
. "$(dirname "$0")/lib.sh"

st() { "$@" 2>&1; echo "exit $?"; }
cp "$TOP/t/fixtures/unreachable.kubeconfig" dead.kubeconfig

check_output '-h: the usage on stdout, exit 0' 'st pod-exec -h | sed -n "1,2p;\$p"' <<'EOF'
usage: pod-exec [-n namespace] [-c container] [-i file] [-t seconds]
                [--context name] [--kubeconfig file] pod command [arg...]
exit 0
EOF

check_output 'no pod, no command, a bad -t, unknown options, a missing value: named by the tool, the usage, exit 2' \
	'for a in "" "p" "-t soon p true" "-t 0 p true" "-x p true" "--bogus p true" "-n"; do st pod-exec $a | grep -v "^ "; done' <<'EOF'
usage: pod-exec [-n namespace] [-c container] [-i file] [-t seconds]
exit 2
usage: pod-exec [-n namespace] [-c container] [-i file] [-t seconds]
exit 2
pod-exec: -t: not a positive number: soon
usage: pod-exec [-n namespace] [-c container] [-i file] [-t seconds]
exit 2
pod-exec: -t: not a positive number: 0
usage: pod-exec [-n namespace] [-c container] [-i file] [-t seconds]
exit 2
pod-exec: unknown option -x
usage: pod-exec [-n namespace] [-c container] [-i file] [-t seconds]
exit 2
pod-exec: unknown option --bogus
usage: pod-exec [-n namespace] [-c container] [-i file] [-t seconds]
exit 2
pod-exec: -n needs an argument
usage: pod-exec [-n namespace] [-c container] [-i file] [-t seconds]
exit 2
EOF

check_output 'an input or a kubeconfig that cannot be read: named, exit 1' \
	'st pod-exec --kubeconfig dead.kubeconfig -i missing p true; st pod-exec --kubeconfig missing.kubeconfig p true' <<'EOF'
pod-exec: missing: No such file or directory
exit 1
pod-exec: kubeconfig: missing.kubeconfig: No such file or directory
exit 1
EOF

check_output 'an API server nothing listens on: the request named, exit 75' \
	'st pod-exec --kubeconfig dead.kubeconfig -n ns -c main p sh -c "echo hi" | sed "s/after [0-9]* ms/after N ms/"' <<'EOF'
pod-exec: GET https://127.0.0.1:1/api/v1/namespaces/ns/pods/p/exec?command=sh&command=-c&command=echo%20hi&container=main&stdin=true&stdout=true&stderr=true: Failed to connect to 127.0.0.1 port 1 after N ms: Couldn't connect to server
exit 75
EOF
done_testing
