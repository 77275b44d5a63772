#!/bin/sh
# lib/kubeconfig.c through build/unit/kubeconfig: what it resolves from one
# file, several files merged, --context, relative paths, -data against
# file, token against tokenFile, the in-cluster service account, and the
# exact message and status for each bad input. Secrets print as lengths.
. "$(dirname "$0")/lib.sh"

unset KUBECONFIG KUBERNETES_SERVICE_HOST KUBERNETES_SERVICE_PORT \
	K8SHAZGPU_SERVICEACCOUNT_DIR
HOME=$SCRATCH/home
export HOME
mkdir -p "$HOME/.kube" certs sa

kc() { unit kubeconfig "$@"; }
# show prints the fields a test looks at, one per line.
show() { jq -r 'to_entries[] | "\(.key)=\(.value | if type == "object" then tojson else . end)"'; }

printf 'CA ONE\n' >certs/ca.crt
printf 'CERT ONE\n' >certs/client.crt
printf 'KEY ONE KEY\n' >certs/client.key
printf '  s3cr3t-from-file\n\n' >certs/token
# base64 of "CA DATA\n", "CERT DATA\n", "KEY DATA\n"
ca_data=Q0EgREFUQQo= cert_data=Q0VSVCBEQVRBCg== key_data=S0VZIERBVEEK

cat >one.yaml <<EOF
apiVersion: v1
kind: Config
current-context: dev
preferences: {}
contexts:
- name: dev
  context:
    cluster: dev-cluster
    user: dev-user
    namespace: team-a
- name: prod
  context: {cluster: prod-cluster, user: prod-user}
- name: by-token-file
  context: {cluster: prod-cluster, user: token-file-user}
- name: both-tokens
  context: {cluster: prod-cluster, user: both-user}
- name: insecure
  context: {cluster: insecure-cluster, user: dev-user}
clusters:
- name: dev-cluster
  cluster:
    server: https://127.0.0.1:6443/
    certificate-authority: certs/ca.crt
- name: prod-cluster
  cluster:
    server: https://prod.example:443
    certificate-authority-data: $ca_data
    certificate-authority: certs/not-there.crt
- name: insecure-cluster
  cluster:
    server: https://10.1.2.3
    insecure-skip-tls-verify: true
users:
- name: dev-user
  user:
    client-certificate: certs/client.crt
    client-key: certs/client.key
- name: prod-user
  user:
    client-certificate-data: $cert_data
    client-key-data: $key_data
    token: abcdefgh
- name: token-file-user
  user:
    tokenFile: certs/token
- name: both-user
  user:
    token: the-token-wins
    tokenFile: certs/not-there
EOF

check_output 'current-context, a relative CA and client certificate files' \
	"kc -k one.yaml | show" <<EOF
source=one.yaml
context=dev
cluster=dev-cluster
user=dev-user
server=https://127.0.0.1:6443
namespace=team-a
insecure=false
in_cluster=false
ca={"path":"certs/ca.crt","data":"CA ONE\n"}
cert={"path":"certs/client.crt","data":"CERT ONE\n"}
key={"path":"certs/client.key","bytes":12}
token=null
token_file=null
EOF

check_output 'relative paths are relative to the kubeconfig, from anywhere' \
	"mkdir -p elsewhere && cd elsewhere && kc -k '$SCRATCH/one.yaml' | jq -r '.ca.path, .cert.data'" <<EOF
$SCRATCH/certs/ca.crt
CERT ONE

EOF

check_output '--context: -data wins over the file; token; namespace defaults' \
	"kc -k one.yaml -c prod | show" <<'EOF'
source=one.yaml
context=prod
cluster=prod-cluster
user=prod-user
server=https://prod.example:443
namespace=default
insecure=false
in_cluster=false
ca={"path":null,"data":"CA DATA\n"}
cert={"path":null,"data":"CERT DATA\n"}
key={"path":null,"bytes":9}
token=<set: 8 bytes>
token_file=null
EOF

check_output 'tokenFile is read relative to the kubeconfig and trimmed' \
	"kc -k one.yaml -c by-token-file | jq -r '.token, .token_file, .cert'" <<'EOF'
<set: 16 bytes>
certs/token
null
EOF

check_output 'token wins over tokenFile (which is then not read)' \
	"kc -k one.yaml -c both-tokens | jq -r '.token, .token_file'" <<'EOF'
<set: 14 bytes>
null
EOF

check_output 'insecure-skip-tls-verify: true' \
	"kc -k one.yaml -c insecure | jq -c '[.server, .insecure, .ca]'" <<'EOF'
["https://10.1.2.3",true,null]
EOF

check 'secrets never appear in the output' \
	'for c in dev prod by-token-file both-tokens; do kc -k one.yaml -c $c; done >all.out &&
	 ! grep -e abcdefgh -e s3cr3t -e the-token-wins -e "KEY ONE" -e "KEY DATA" all.out'

# the token file changes once the first load is printed
check_output 'a rotated tokenFile is read again when it changes' \
	"(until test -s rot.out; do sleep 0.1; done
	  printf 'rotated\n' >certs/token; touch -d '2001-01-01' certs/token; echo) |
	 kc -k one.yaml -c by-token-file -r >rot.out && jq -r .token rot.out" <<'EOF'
<set: 16 bytes>
<set: 7 bytes>
EOF
printf '  s3cr3t-from-file\n\n' >certs/token

# ---- several files -----------------------------------------------------

cat >a.yaml <<'EOF'
apiVersion: v1
kind: Config
contexts:
- name: shared
  context: {cluster: shared, user: alice}
clusters:
- name: shared
  cluster: {server: "https://first:1"}
users:
- name: alice
  user: {token: alice-token}
EOF
mkdir -p b
cat >b/b.yaml <<'EOF'
apiVersion: v1
kind: Config
current-context: from-b
contexts:
- name: from-b
  context: {cluster: shared, user: bob, namespace: bee}
- name: shared
  context: {cluster: b-only, user: bob}
clusters:
- name: shared
  cluster: {server: "https://second:2"}
- name: b-only
  cluster: {server: "https://b-only:3", certificate-authority: ca.crt}
users:
- name: bob
  user: {tokenFile: token}
EOF
printf 'BEE CA\n' >b/ca.crt
printf 'bob-token\n' >b/token

check_output 'KUBECONFIG merges: the first file to name a cluster wins it' \
	"KUBECONFIG=$SCRATCH/missing.yaml:$SCRATCH/a.yaml::$SCRATCH/b/b.yaml kc | jq -c '[.source, .context, .server, .namespace, .token_file]'" <<EOF
["$SCRATCH/b/b.yaml","from-b","https://first:1","bee","$SCRATCH/b/token"]
EOF

check_output 'the first file to name a context wins it; its paths stay its own' \
	"KUBECONFIG=$SCRATCH/b/b.yaml:$SCRATCH/a.yaml kc -c shared | jq -c '[.source, .server, .ca.path, .token]'" <<EOF
["$SCRATCH/b/b.yaml","https://b-only:3","$SCRATCH/b/ca.crt","<set: 9 bytes>"]
EOF

check_output 'and the other way round' \
	"KUBECONFIG=$SCRATCH/a.yaml:$SCRATCH/b/b.yaml kc -c shared | jq -c '[.source, .server, .user]'" <<EOF
["$SCRATCH/a.yaml","https://first:1","alice"]
EOF

check_output 'current-context comes from the first file that sets it' \
	"KUBECONFIG=$SCRATCH/one.yaml:$SCRATCH/b/b.yaml kc | jq -r .context" <<'EOF'
dev
EOF

check_output '~/.kube/config by default' \
	"cp one.yaml certs/../home/.kube/config && mkdir -p home/.kube/certs && cp certs/* home/.kube/certs/ && kc | jq -r '.source, .ca.path'" <<EOF
$HOME/.kube/config
$HOME/.kube/certs/ca.crt
EOF
rm -f home/.kube/config

check_output '--kubeconfig overrides KUBECONFIG' \
	"KUBECONFIG=$SCRATCH/b/b.yaml kc -k one.yaml | jq -r .context" <<'EOF'
dev
EOF

# ---- in-cluster --------------------------------------------------------

printf 'SA CA\n' >sa/ca.crt
printf 'sa-token-value\n' >sa/token
printf 'gpu-system\n' >sa/namespace
incluster="export KUBERNETES_SERVICE_HOST=10.96.0.1 KUBERNETES_SERVICE_PORT=443 K8SHAZGPU_SERVICEACCOUNT_DIR=$SCRATCH/sa;"

check_output 'in-cluster: service host, CA, token, namespace' \
	"$incluster kc | show" <<EOF
source=in-cluster
context=null
cluster=null
user=null
server=https://10.96.0.1:443
namespace=gpu-system
insecure=false
in_cluster=true
ca={"path":"$SCRATCH/sa/ca.crt","data":"SA CA\n"}
cert=null
key=null
token=<set: 14 bytes>
token_file=$SCRATCH/sa/token
EOF

check_output 'in-cluster: an IPv6 service host is bracketed; no namespace file' \
	"mkdir -p sa6 && cp sa/ca.crt sa/token sa6/ &&
	 export KUBERNETES_SERVICE_HOST=fd00::1 KUBERNETES_SERVICE_PORT=6443 K8SHAZGPU_SERVICEACCOUNT_DIR=$SCRATCH/sa6; kc | jq -r '.server, .namespace'" <<'EOF'
https://[fd00::1]:6443
default
EOF

check_output 'a kubeconfig wins over in-cluster' \
	"$incluster export KUBECONFIG=$SCRATCH/a.yaml; kc -c shared | jq -r .source" <<EOF
$SCRATCH/a.yaml
EOF

check_output 'in-cluster without a token: exit 1' \
	"$incluster export K8SHAZGPU_SERVICEACCOUNT_DIR=$SCRATCH/nowhere; kc 2>&1; echo \$?" <<EOF
kctest: kubeconfig: in-cluster: $SCRATCH/nowhere/token: No such file or directory
1
EOF

# ---- bad input: one message naming the file and the field; exit 1 ---------

# bad NAME: a kubeconfig with one context "c", cluster "k", user "u"; stdin
# adds to it.
bad() {
	{
		printf 'current-context: c\ncontexts:\n- name: c\n  context: {cluster: k, user: u}\n'
		cat
	} >"$1"
}

check_output 'no configuration at all' \
	'kc 2>&1; echo $?' <<EOF
kctest: kubeconfig: $HOME/.kube/config: no configuration found: no such file, and not running in a cluster
1
EOF

check_output '--kubeconfig that does not exist' \
	'kc -k nope.yaml 2>&1; echo $?' <<'EOF'
kctest: kubeconfig: nope.yaml: No such file or directory
1
EOF

check_output 'a context that is not there' \
	'kc -k one.yaml -c foo 2>&1; echo $?' <<'EOF'
kctest: kubeconfig: one.yaml: context "foo" not found
1
EOF

check_output 'a context missing from every merged file names them all' \
	"KUBECONFIG=a.yaml:b/b.yaml kc -c foo 2>&1; echo \$?" <<'EOF'
kctest: kubeconfig: a.yaml:b/b.yaml: context "foo" not found
1
EOF

check_output 'no current-context and no --context' \
	'kc -k a.yaml 2>&1; echo $?' <<'EOF'
kctest: kubeconfig: a.yaml: current-context is not set and no context given
1
EOF

bad nocluster.yaml <<'EOF'
clusters:
- name: other
  cluster: {server: "https://x"}
EOF
check_output 'a cluster that is not there' \
	'kc -k nocluster.yaml 2>&1; echo $?' <<'EOF'
kctest: kubeconfig: nocluster.yaml: cluster "k" not found
1
EOF

bad noserver.yaml <<'EOF'
clusters:
- name: k
  cluster: {certificate-authority-data: Q0EK}
EOF
check_output 'a cluster without a server' \
	'kc -k noserver.yaml 2>&1; echo $?' <<'EOF'
kctest: kubeconfig: noserver.yaml: clusters[0].cluster.server: not set
1
EOF

bad badb64.yaml <<'EOF'
clusters:
- name: k
  cluster: {server: "https://x"}
users:
- name: other
  user: {}
- name: u
  user:
    client-certificate-data: QUJDREVGR0hJSktMT*5P
    client-key-data: S0VZCg==
EOF
check_output 'bad base64, with the offset of the first bad byte' \
	'kc -k badb64.yaml 2>&1; echo $?' <<'EOF'
kctest: kubeconfig: badb64.yaml: users[1].user.client-certificate-data: invalid base64 at offset 17
1
EOF

bad badpad.yaml <<'EOF'
clusters:
- name: k
  cluster: {server: "https://x", certificate-authority-data: "QUJD=A"}
EOF
check_output 'base64 with data after its padding' \
	'kc -k badpad.yaml 2>&1; echo $?' <<'EOF'
kctest: kubeconfig: badpad.yaml: clusters[0].cluster.certificate-authority-data: invalid base64 at offset 4
1
EOF

bad noca.yaml <<'EOF'
clusters:
- name: k
  cluster: {server: "https://x", certificate-authority: certs/ca-gone.crt}
EOF
check_output 'a certificate authority file that is not there' \
	'kc -k noca.yaml 2>&1; echo $?' <<'EOF'
kctest: kubeconfig: noca.yaml: clusters[0].cluster.certificate-authority: certs/ca-gone.crt: No such file or directory
1
EOF

printf 'KEY\n' >certs/locked.key
chmod 000 certs/locked.key
bad locked.yaml <<'EOF'
clusters:
- name: k
  cluster: {server: "https://x"}
users:
- name: u
  user: {client-certificate: certs/client.crt, client-key: certs/locked.key}
EOF
if [ "$(id -u)" -ne 0 ]; then
	check_output 'an unreadable client key' \
		'kc -k locked.yaml 2>&1; echo $?' <<'EOF'
kctest: kubeconfig: locked.yaml: users[0].user.client-key: certs/locked.key: Permission denied
1
EOF
fi
sed 's|certs/locked.key|certs|' locked.yaml >dirkey.yaml
check_output 'a client key that is a directory' \
	'kc -k dirkey.yaml 2>&1; echo $?' <<'EOF'
kctest: kubeconfig: dirkey.yaml: users[0].user.client-key: certs: Is a directory
1
EOF

bad nokey.yaml <<'EOF'
clusters:
- name: k
  cluster: {server: "https://x"}
users:
- name: u
  user: {client-certificate: certs/client.crt}
EOF
check_output 'a client certificate without its key' \
	'kc -k nokey.yaml 2>&1; echo $?' <<'EOF'
kctest: kubeconfig: nokey.yaml: users[0].user: client-certificate without client-key
1
EOF

bad notokenfile.yaml <<'EOF'
clusters:
- name: k
  cluster: {server: "https://x"}
users:
- name: u
  user: {tokenFile: /nonexistent/token}
EOF
check_output 'a tokenFile that is not there' \
	'kc -k notokenfile.yaml 2>&1; echo $?' <<'EOF'
kctest: kubeconfig: notokenfile.yaml: users[0].user.tokenFile: /nonexistent/token: No such file or directory
1
EOF

bad exec.yaml <<'EOF'
clusters:
- name: k
  cluster: {server: "https://x"}
users:
- name: u
  user:
    exec: {apiVersion: client.authentication.k8s.io/v1, command: aws}
EOF
check_output 'exec credential plugins are refused plainly' \
	'kc -k exec.yaml 2>&1; echo $?' <<'EOF'
kctest: kubeconfig: exec.yaml: users[0].user: exec and auth-provider credentials are not supported
1
EOF

bad insecure-ca.yaml <<'EOF'
clusters:
- name: k
  cluster: {server: "https://x", insecure-skip-tls-verify: true, certificate-authority-data: Q0EK}
EOF
check_output 'insecure-skip-tls-verify together with a CA' \
	'kc -k insecure-ca.yaml 2>&1; echo $?' <<'EOF'
kctest: kubeconfig: insecure-ca.yaml: clusters[0].cluster: insecure-skip-tls-verify: true together with a certificate authority is not allowed
1
EOF

bad insecure-str.yaml <<'EOF'
clusters:
- name: k
  cluster: {server: "https://x", insecure-skip-tls-verify: "yes"}
EOF
check_output 'insecure-skip-tls-verify must be a boolean' \
	'kc -k insecure-str.yaml 2>&1; echo $?' <<'EOF'
kctest: kubeconfig: insecure-str.yaml: clusters[0].cluster.insecure-skip-tls-verify: not a boolean
1
EOF

bad server-list.yaml <<'EOF'
clusters:
- name: k
  cluster: {server: [https://x]}
EOF
check_output 'a field of the wrong type' \
	'kc -k server-list.yaml 2>&1; echo $?' <<'EOF'
kctest: kubeconfig: server-list.yaml: clusters[0].cluster.server: not a string
1
EOF

bad clusters-map.yaml <<'EOF'
clusters: {k: {server: "https://x"}}
EOF
check_output 'a list that is not a list' \
	'kc -k clusters-map.yaml 2>&1; echo $?' <<'EOF'
kctest: kubeconfig: clusters-map.yaml: clusters: not a list
1
EOF

printf 'apiVersion: v1\ncontexts:\n- name: c\n  context: {cluster: k\n' >syntax.yaml
check 'malformed YAML: file, line and column' \
	'must_fail 1 kc -k syntax.yaml 2>err && grep -q "^kctest: kubeconfig: syntax.yaml:[0-9]*:[0-9]*: " err'
printf 'a: 1\na: 2\n' >dupkey.yaml
check_output 'a repeated key' \
	'kc -k dupkey.yaml 2>&1; echo $?' <<'EOF'
kctest: kubeconfig: dupkey.yaml:2:1: duplicate key "a"
1
EOF
printf -- '- just\n- a list\n' >list.yaml
check_output 'a document that is not a mapping' \
	'kc -k list.yaml 2>&1; echo $?' <<'EOF'
kctest: kubeconfig: list.yaml: not a mapping
1
EOF

check_output 'a bad file early in KUBECONFIG stops the load' \
	"KUBECONFIG=dupkey.yaml:one.yaml kc 2>&1; echo \$?" <<'EOF'
kctest: kubeconfig: dupkey.yaml:2:1: duplicate key "a"
1
EOF

check 'an empty kubeconfig file is no configuration' \
	': >empty.yaml && must_fail 1 kc -k empty.yaml 2>err && grep -q "current-context is not set" err'

done_testing
