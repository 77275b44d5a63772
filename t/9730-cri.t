#!/bin/sh
# lib/cri against the real node's containerd (v2.4.2, scripts/node-build)
# through t/unit/cri: a tiny image pushed to the sim's registry is pulled
# by CRI (its repo digest, the pushed manifest's), listed, pinned and
# unpinned (the label on every name containerd keeps, and CRI's pinned
# read back), removed (every name gone; again, no error); a missing tag is
# NotFound, a port nothing listens on Unreachable, a socket nothing
# serves RuntimeError. A registry of this script's own, with htpasswd
# (bcrypt) logins: no credentials or a wrong password is Unauthorized, a
# dockerconfigjson's are let in; the byte progress of ingests read while
# a 64 MiB layer is pulled from it.
. "$(dirname "$0")/lib.sh"

need_cluster
[ "$(id -u)" = 0 ] || skip_all "the real node needs root"
D=$K8SHAZGPU_SIM_DIR
[ -f "$D/node-state" ] || skip_all "the shared cluster has no real node (up --no-node)"
. "$D/state"
. "$D/node-state"
[ -n "${REGISTRY_PORT:-}" ] || skip_all "the shared cluster has no registry"
SOCK=$D/containerd/containerd.sock
[ -S "$SOCK" ] || { echo "Bail out! no containerd socket at $SOCK"; exit 1; }
cri() { unit cri "$SOCK" "$@"; }
# names DIGEST: containerd's names for the image of manifest DIGEST in
# k8s.io, each with its labels (the last column of ctr's listing)
names() {
	"$nodebin/ctr" --address "$SOCK" --namespace k8s.io images ls 2>/dev/null |
		awk -v d="$1" '$3 == d { print $1, $NF }' | sort
}

REG=127.0.0.1:$REGISTRY_PORT
REF=$REG/t9730/tiny:1
mkdir tiny && echo "t9730: a tiny image" >tiny/hello.txt
oci-image -o tiny.oci tiny >digest || { echo "Bail out! oci-image failed"; exit 1; }
DIGEST=$(cat digest)
blob() { echo "tiny.oci/blobs/sha256/${1#sha256:}"; }
CONFIG=$(jq -r .config.digest "$(blob "$DIGEST")")
# what CRI counts as the image's size: manifest, config and layer
SIZE=$(($(stat -c %s "$(blob "$DIGEST")") + $(jq '.config.size + ([.layers[].size] | add)' "$(blob "$DIGEST")")))

check_output 'version: containerd v2.4.2' 'cri version' <<'EOF'
{"runtime":"containerd","version":"v2.4.2"}
EOF

check_output 'pushed; not on the node (removed first, which is no error)' '
	oci-push -q tiny.oci "$REF" && cri remove "$REF" && cri image "$REF"' <<EOF
$DIGEST
{"reason":"","message":""}
{"present":false}
EOF

check_output 'pull: the repo digest is the pushed manifest'\''s; image: present, unpinned' '
	cri pull "$REF" && cri image "$REF"' <<EOF
{"reason":"","message":"","resolved":"$DIGEST","bytes":$SIZE}
{"present":true,"id":"$CONFIG","digest":"$DIGEST","size":$SIZE,"pinned":0}
EOF

check_output 'pin: the label on every name containerd has; CRI reports it' '
	cri pin "$REF" && cri image "$REF" | jq -c "{pinned}" && names "$DIGEST"' <<EOF
{"reason":"","message":"","pinned":1}
{"pinned":1}
$REG/t9730/tiny:1 io.cri-containerd.image=managed,io.cri-containerd.pinned=pinned
$REG/t9730/tiny@$DIGEST io.cri-containerd.image=managed,io.cri-containerd.pinned=pinned
$CONFIG io.cri-containerd.image=managed,io.cri-containerd.pinned=pinned
EOF

check_output 'unpin: the label gone from every name; CRI reports it' '
	cri unpin "$REF" && cri image "$REF" | jq -c "{pinned}" && names "$DIGEST"' <<EOF
{"reason":"","message":"","pinned":0}
{"pinned":0}
$REG/t9730/tiny:1 io.cri-containerd.image=managed
$REG/t9730/tiny@$DIGEST io.cri-containerd.image=managed
$CONFIG io.cri-containerd.image=managed
EOF

check_output 'no pull in flight: progress 0 of 0' 'cri progress' <<'EOF'
{"done":0,"total":0}
EOF

check_output 'remove: every name gone; removing again is no error; pin then fails' '
	cri remove "$REF" && cri image "$REF" && names "$DIGEST" &&
	cri remove "$REF" && must_fail 1 cri pin "$REF"' <<EOF
{"reason":"","message":""}
{"present":false}
{"reason":"","message":""}
{"reason":"NotFound","message":"pin $REF: the image is not present","pinned":-1}
EOF

DEAD=$(free_port)
check_output 'a missing tag: NotFound; a port nothing listens on: Unreachable' '
	must_fail 1 cri pull "$REG/t9730/tiny:nope" &&
	must_fail 1 cri pull "127.0.0.1:$DEAD/t9730/tiny:1"' <<EOF
{"reason":"NotFound","message":"pull $REG/t9730/tiny:nope: failed to pull and unpack image \"$REG/t9730/tiny:nope\": failed to resolve image: $REG/t9730/tiny:nope: not found","resolved":"","bytes":0}
{"reason":"Unreachable","message":"pull 127.0.0.1:$DEAD/t9730/tiny:1: failed to pull and unpack image \"127.0.0.1:$DEAD/t9730/tiny:1\": failed to resolve image: failed to do request: Head \"https://127.0.0.1:$DEAD/v2/t9730/tiny/manifests/1\": dial tcp 127.0.0.1:$DEAD: connect: connection refused","resolved":"","bytes":0}
EOF

check_output 'a socket nothing serves: RuntimeError, no container runtime there' '
	must_fail 1 unit cri "$SCRATCH/none.sock" pull "$REF" | jq -c "{reason,message}"' <<EOF
{"reason":"RuntimeError","message":"pull $REF: no container runtime at $SCRATCH/none.sock (No such file or directory)"}
EOF

# A registry of our own with logins: htpasswd wants bcrypt, which perl's
# crypt (glibc's libxcrypt) makes from a "\$2b\$" salt.
APORT=$(free_port)
AREG=127.0.0.1:$APORT
hash=$(perl -e 'print crypt("s3cr:et", "\$2b\$05\$t9730t9730t9730t9730tu")')
echo "tester:$hash" >htpasswd
cat >registry.yml <<EOF
version: 0.1
log: {level: error, accesslog: {disabled: true}}
storage: {filesystem: {rootdirectory: $SCRATCH/registry}}
http: {addr: "$AREG"}
auth:
  htpasswd: {realm: t9730, path: $SCRATCH/htpasswd}
EOF
docker-registry serve registry.yml >registry.log 2>&1 3>&- 4>&- &
reg_pid=$!
trap 'kill $reg_pid 2>/dev/null' EXIT
answers_401() { [ "$(curl -s -o /dev/null -w %{http_code} "http://$AREG/v2/")" = 401 ]; }
eventually 30 answers_401 || { echo "Bail out! the registry with logins did not start"; exit 1; }
# oci-push logs in from ~/.netrc: a home of this script's own
mkdir home && printf 'machine 127.0.0.1 login tester password s3cr:et\n' >home/.netrc
chmod 600 home/.netrc
AREF=$AREG/t9730/tiny:1
printf '{"auths": {"http://%s": {"auth": "%s"}}}\n' "$AREG" "$(printf tester:s3cr:et | base64)" >auth.json
printf '{"auths": {"%s": {"username": "tester", "password": "nope"}}}\n' "$AREG" >wrong.json

check_output 'logins: none or a wrong password is Unauthorized; the right one pulls' '
	HOME=$SCRATCH/home oci-push -q tiny.oci "$AREF" &&
	must_fail 1 cri pull "$AREF" &&
	must_fail 1 cri pull "$AREF" wrong.json &&
	cri pull "$AREF" auth.json && cri remove "$AREF"' <<EOF
$DIGEST
{"reason":"Unauthorized","message":"pull $AREF: failed to pull and unpack image \"$AREF\": failed to resolve image: pull access denied, repository does not exist or may require authorization: authorization failed: no basic auth credentials","resolved":"","bytes":0}
{"reason":"Unauthorized","message":"pull $AREF: failed to pull and unpack image \"$AREF\": failed to resolve image: unexpected status from HEAD request to http://$AREG/v2/t9730/tiny/manifests/1: 401 Unauthorized","resolved":"","bytes":0}
{"reason":"","message":"","resolved":"$DIGEST","bytes":$SIZE}
{"reason":"","message":""}
EOF

# 64 MiB that gzip cannot shrink: the pull takes long enough (half a
# second here) for the ingests to be seen, polled back to back from
# another process; not under valgrind, which makes each poll as slow as
# the whole pull
mkdir big && head -c 67108864 /dev/urandom >big/blob
oci-image -o big.oci big >big.digest
BIG=$(cat big.digest)
LAYER=$(jq '.layers[0].size' "big.oci/blobs/sha256/${BIG#sha256:}")
BREF=$AREG/t9730/big:1
poll() {
	while [ ! -e pulled ]; do "$BUILD/unit/cri" "$SOCK" progress; done >progress.out
}
check_output 'progress while a 64 MiB layer is pulled: the layer'\''s bytes, some done' '
	HOME=$SCRATCH/home oci-push -q big.oci "$BREF" >/dev/null || exit 1
	poll & poller=$!
	cri pull "$BREF" auth.json | jq -c "{reason,resolved}"
	: >pulled && wait $poller &&
	jq -r --argjson n "$LAYER" "select(.total >= \$n and .done > 0) | \"layer seen\"" progress.out | uniq &&
	cri remove "$BREF" && cri progress' <<EOF
{"reason":"","resolved":"$BIG"}
layer seen
{"reason":"","message":""}
{"done":0,"total":0}
EOF

done_testing
