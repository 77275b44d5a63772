#!/bin/sh
# scripts/image-build and scripts/oci-push: the four component images
# and diff-pack's (one static binary, one layer),
# their exact file lists, configs and labels, the same digests from two
# builds, one base layer shared by all, each image really running (its
# layers unpacked, chroot), under 20 MiB unpacked (25 the node agent's); pushed to a real
# registry (Debian's docker-registry on loopback), again with every blob
# skipped, and the failures: nothing listening, a registry refusing.
. "$(dirname "$0")/lib.sh"
. "$TOP/t/lib-image.sh"

comps="nodeagent draplugin controller webhook"
ldd "$BUILD/claim-make" 2>/dev/null | grep -q libasan &&
	skip_all "$B is a sanitizer build: images carry the plain tools"
[ "$(id -u)" = 0 ] || skip_all "unpacking and chroot need root"
CHROOT=$(PATH=$PATH:/usr/sbin:/sbin command -v chroot)
version=$(sed -n 's/^VERSION = //p' "$TOP/Makefile")
revision=$(git -C "$TOP" rev-parse HEAD)
[ -z "$(git -C "$TOP" status --porcelain)" ] || revision=$revision-dirty
source=$(git -C "$TOP" remote get-url origin 2>/dev/null || echo "$TOP")

# The registry, ours: filesystem storage here, stopped by its PID.
start_registry

# root C: image C's layers unpacked in order into root-C
root() {
	[ -d "root-$1" ] || { mkdir "root-$1" && for i in 0 1; do layer "$1" one $i | tar -C "root-$1" --numeric-owner -xf - || return 1; done &&
		mknod -m 666 "root-$1/dev/null" c 1 3; }
}
in_root() { c=$1; shift; env -i PATH=/usr/bin:/bin HOME=/ "$CHROOT" "$@"; }

check 'make image: five OCI layout tars, one line each' \
	'image-build -b "$BUILD" -o one >one.out 2>one.err && cat one.err && test ! -s one.err &&
	 for c in $comps diff-pack; do test -f one/$c.tar; done'

check_output 'the lines name each image and its digest' 'cut -d" " -f1 one.out' <<EOF
k8shazgpu/nodeagent:$version
k8shazgpu/draplugin:$version
k8shazgpu/controller:$version
k8shazgpu/webhook:$version
k8shazgpu/diff-pack:$version
EOF

# what each line must say, worked out from the layout itself
for c in $comps; do
	lay $c one
	m=$(man_ $c one)
	d=sha256:$(sha256sum "$m" | cut -d' ' -f1)
	packed=$(($(wc -c <"$m") + $(jq -r '[.config.size, .layers[].size] | add' "$m")))
	unpacked=$({ layer $c one 0; } | tar -tvf - | awk '/^-/ { n += $3 } END { print n + 0 }')
	unpacked=$((unpacked + $({ layer $c one 1; } | tar -tvf - | awk '/^-/ { n += $3 } END { print n + 0 }')))
	test "$(jq -r '.manifests[0].digest' one/$c/index.json)" = "$d" || echo "$c: index names another digest"
	awk -v n="k8shazgpu/$c:$version" -v d="$d" -v p="$packed" -v u="$unpacked" \
		'BEGIN { printf "%s %s %.2f %.2f\n", n, d, p / 1048576, u / 1048576 }'
done >one.want
lay diff-pack one
m=$(man_ diff-pack one)
awk -v n="k8shazgpu/diff-pack:$version" -v d="sha256:$(sha256sum "$m" | cut -d' ' -f1)" \
	-v p="$(($(wc -c <"$m") + $(jq -r '[.config.size, .layers[].size] | add' "$m")))" \
	-v u="$(layer diff-pack one 0 | tar -tvf - | awk '/^-/ { n += $3 } END { print n + 0 }')" \
	'BEGIN { printf "%s %s %.2f %.2f\n", n, d, p / 1048576, u / 1048576 }' >>one.want
check_output 'each line: the manifest digest, compressed and unpacked MiB' 'cat one.out' <one.want

check_output 'each image: two layers, the first (the base) the same in all four' '
	for c in $comps; do jq -r "[(.layers | length), .layers[0].digest] | join(\" \")" "$(man_ $c one)"; done | sort -u | wc -l
	for c in $comps; do jq -r ".layers | length" "$(man_ $c one)"; done | sort -u' <<'EOF'
1
2
EOF

check 'the base layer: exactly the expected files, modes and owners' \
	'layer nodeagent one 0 | tar -tvf - --numeric-owner | awk "{ s = \$1 \" \" \$2 \" \" \$6; if (\$7 == \"->\") s = s \" -> \" \$8; print s }" >base.got &&
	 diff -u "$FIXTURES/image/base.list" base.got'
for c in $comps; do
	check "the $c layer: exactly its tools, wrapper and own libraries" \
		"layer $c one 1 | tar -tvf - --numeric-owner | awk '{ s = \$1 \" \" \$2 \" \" \$6; if (\$7 == \"->\") s = s \" -> \" \$8; print s }' >$c.got &&
		 diff -u \"\$FIXTURES/image/$c.list\" $c.got"
done

check_output 'the configs: entrypoint, PATH, user (none for the DRA plugin), labels' '
	for c in $comps; do
		jq -c -S "{architecture, os, config}" "$(blob one/$c "$(jq -r .config.digest "$(man_ $c one)")")"
	done' <<EOF
{"architecture":"amd64","config":{"Entrypoint":["/usr/bin/k8shazgpu-nodeagent"],"Env":["PATH=/usr/bin:/bin"],"Labels":{"org.opencontainers.image.description":"probes the node's GPUs and publishes them: labels, extended resources, ResourceSlices, ledger holds","org.opencontainers.image.revision":"$revision","org.opencontainers.image.source":"$source","org.opencontainers.image.title":"k8shazgpu/nodeagent","org.opencontainers.image.version":"$version"},"User":"65534:65534"},"os":"linux"}
{"architecture":"amd64","config":{"Entrypoint":["/usr/bin/k8shazgpu-draplugin"],"Env":["PATH=/usr/bin:/bin"],"Labels":{"org.opencontainers.image.description":"the DRA kubelet plugin of driver gpu.canhazgpu.dev","org.opencontainers.image.revision":"$revision","org.opencontainers.image.source":"$source","org.opencontainers.image.title":"k8shazgpu/draplugin","org.opencontainers.image.version":"$version"}},"os":"linux"}
{"architecture":"amd64","config":{"Entrypoint":["/usr/bin/k8shazgpu-controller"],"Env":["PATH=/usr/bin:/bin"],"Labels":{"org.opencontainers.image.description":"places GPUWorkloads as Jobs and binds the pods given to its scheduler; sends GPU health alerts","org.opencontainers.image.revision":"$revision","org.opencontainers.image.source":"$source","org.opencontainers.image.title":"k8shazgpu/controller","org.opencontainers.image.version":"$version"},"User":"65534:65534"},"os":"linux"}
{"architecture":"amd64","config":{"Entrypoint":["/usr/bin/k8shazgpu-webhook"],"Env":["PATH=/usr/bin:/bin"],"Labels":{"org.opencontainers.image.description":"the admission webhook: MIG-size fallback, RuntimeClass GPU limits","org.opencontainers.image.revision":"$revision","org.opencontainers.image.source":"$source","org.opencontainers.image.title":"k8shazgpu/webhook","org.opencontainers.image.version":"$version"},"User":"65534:65534"},"os":"linux"}
EOF

check_output 'the diff-pack image: one layer holding /diff-pack alone, static, as nobody; it runs with no C library' '
	jq -r ".layers | length" "$(man_ diff-pack one)"
	layer diff-pack one 0 | tar -tvf - --numeric-owner | awk "{ print \$1, \$2, \$6 }"
	jq -c ".config | {Entrypoint, User}" "$(blob one/diff-pack "$(jq -r .config.digest "$(man_ diff-pack one)")")"
	mkdir root-diff-pack && layer diff-pack one 0 | tar -C root-diff-pack -xf - &&
	env -i "$CHROOT" root-diff-pack /diff-pack -V' <<EOF
1
drwxr-xr-x 0/0 ./
-rwxr-xr-x 0/0 ./diff-pack
{"Entrypoint":["/diff-pack"],"User":"65534:65534"}
diff-pack $version
EOF

check_output 'the index names each image for ctr image import' '
	for c in $comps; do jq -r ".manifests[0].annotations | [.[\"io.containerd.image.name\"], .[\"org.opencontainers.image.ref.name\"]] | join(\" \")" one/$c/index.json; done' <<EOF
k8shazgpu/nodeagent:$version $version
k8shazgpu/draplugin:$version $version
k8shazgpu/controller:$version $version
k8shazgpu/webhook:$version $version
EOF

for c in $comps; do
	check "the $c image runs: its wrapper's help, each tool's, jq as nobody" "
		root $c || exit 1
		tools=\$(layer $c one 1 | tar -tf - | sed -n 's|^\./usr/bin/||p' | grep -v -e '^k8shazgpu-' -e '^\$')
		test \"\$(echo \$tools | wc -w)\" -ge 2 || exit 1
		w=k8shazgpu-$c
		env -i PATH=/usr/bin:/bin HOME=/ sh \"\$TOP/scripts/\$w\" -h >want 2>&1; echo \$? >>want
		in_root $c root-$c \$w -h >got 2>&1; echo \$? >>got
		grep -q -F \"usage: \$w\" got && diff -u want got || exit 1
		for t in \$tools; do
			\"\$BUILD/\$t\" -h >want 2>&1; echo \$? >>want
			in_root $c root-$c \$t -h >got 2>&1; echo \$? >>got
			grep -q -F \"usage: \$t\" got && diff -u want got || exit 1
		done
		test \"\$(in_root $c --userspec=65534:65534 root-$c jq -n 1)\" = 1"
done

check_output 'no path of the build machine in any image' '
	for c in $comps; do grep -r -l -F -e "$TOP" -e "$BUILD" -e "$HOME/.cache" root-$c || :; done'  </dev/null

check_output 'the base: /tmp 1777, the CA bundle, root and nobody' '
	stat -c "%a %U" root-controller/tmp
	cmp root-controller/etc/ssl/certs/ca-certificates.crt /etc/ssl/certs/ca-certificates.crt && echo CA bundle
	cat root-controller/etc/passwd root-controller/etc/group' <<'EOF'
1777 root
CA bundle
root:x:0:0:root:/root:/bin/sh
nobody:x:65534:65534:nobody:/nonexistent:/bin/false
root:x:0:
nogroup:x:65534:
EOF

# the node agent's image carries the cache's cache-sync and libgit2 with
# the libraries it loads (mbedtls, libssh2, krb5, pcre2): 25 MiB for it;
# the controller's three processes (sched-queue, sched-bind, claim-watch |
# gpu-alert): 22 MiB
check_output 'each image is under its bound unpacked: 25 MiB for the node agent, 22 for the controller, 20 for the others, 2 for diff-pack' \
	'awk "{ m = \$1 ~ /nodeagent/ ? 25 : \$1 ~ /controller/ ? 22 : \$1 ~ /diff-pack/ ? 2 : 20; print \$1, (\$4 < m ? \"under \" m \" MiB\" : \"over \" m \" MiB: \" \$4) }" one.out' <<EOF
k8shazgpu/nodeagent:$version under 25 MiB
k8shazgpu/draplugin:$version under 20 MiB
k8shazgpu/controller:$version under 22 MiB
k8shazgpu/webhook:$version under 20 MiB
k8shazgpu/diff-pack:$version under 2 MiB
EOF

# the second build pushes too, as make image PUSH=... does
eventually 20 curl -sf "http://$REG/v2/"
check 'reproducible: a second build, pushing, prints the same, the same bytes' \
	'image-build -b "$BUILD" -o two -P "$REG/k8shazgpu" >two.out 2>two.err && diff -u one.out two.out &&
	 for c in $comps diff-pack; do cmp one/$c.tar two/$c.tar || exit 1; done'

# pushed C: the blobs' and manifest's lines oci-push writes; $1 the verb
pushed() {
	m=$(man_ "$2" one)
	jq -r --arg w "$REG/k8shazgpu/$2" --arg v "$1" '.config, .layers[] | "oci-push: \($w): \(.digest) \(if $v == "pushed" then "pushed (\(.size) bytes)" else "present, skipped" end)"' "$m"
	echo "oci-push: $REG/k8shazgpu/$2:$version: manifest sha256:$(sha256sum "$m" | cut -d' ' -f1) pushed"
}
for c in $comps diff-pack; do pushed pushed $c; done >two.want
check_output 'the push: each blob, then the manifest by tag' 'cat two.err' <two.want

check_output 'the registry serves each manifest by tag with the local digest' '
	for c in $comps diff-pack; do
		curl -sf -D h -o m -H "Accept: application/vnd.oci.image.manifest.v1+json" "http://$REG/v2/k8shazgpu/$c/manifests/$version" &&
		d=$(tr -d "\r" <h | sed -n "s/^docker-content-digest: //ip") &&
		test "$d" = "sha256:$(sha256sum m | cut -d" " -f1)" && cmp m "$(man_ $c one)" && echo "$c $d"
	done' <<EOF
$(for c in $comps diff-pack; do echo "$c $(sed -n "s|^k8shazgpu/$c:[^ ]* \([^ ]*\) .*|\1|p" one.out)"; done)
EOF

pushed skipped controller >again.want
check_output 'pushed again: every blob skipped, said so; the digest printed' \
	'oci-push one/controller.tar "$REG/k8shazgpu/controller:$version" 2>again.err && cat again.err' <<EOF
$(sed -n 's|^k8shazgpu/controller:[^ ]* \([^ ]*\) .*|\1|p' one.out)
$(cat again.want)
EOF

check_output 'nothing listening: exit 75, the registry named' \
	'must_fail 75 oci-push one/controller.tar 127.0.0.1:1/k8shazgpu/controller 2>&1' <<'EOF'
oci-push: 127.0.0.1:1: cannot connect
EOF

cp -R one/webhook bad
bad_config=$(jq -r .config.digest "$(man_ webhook one)")
echo x >>"$(blob bad "$bad_config")"
check_output 'a blob that is not what its digest says: the registry refuses, exit 1, its error code' \
	'must_fail 1 oci-push bad "$REG/k8shazgpu/bad" 2>&1' <<EOF
oci-push: $REG/k8shazgpu/bad: upload of $bad_config: 400 DIGEST_INVALID: provided digest did not match uploaded content
EOF

check_output 'any other registry name gets HTTPS, even 127.1: TLS to a plain HTTP registry fails, exit 1' \
	'must_fail 1 oci-push one/controller.tar "127.1:$REG_PORT/k8shazgpu/controller" 2>&1 | sed "s/: [^:]*SSL.*/: TLS error/"' <<EOF
oci-push: 127.1:$REG_PORT: blob $(jq -r .config.digest "$(man_ controller one)"): TLS error
EOF

check_output 'usage: exit 2 with a message' '
	must_fail 2 oci-push one/controller.tar 2>&1
	must_fail 2 oci-push one/controller.tar k8shazgpu/controller 2>&1
	must_fail 2 oci-push one/controller.tar "$REG/K8s/x" 2>&1
	must_fail 2 oci-push one/controller.tar "$REG/k8s/x:-bad" 2>&1
	must_fail 2 image-build extra 2>&1
	must_fail 1 oci-push "$SCRATCH/registry.yml" "$REG/k8s/x" 2>&1 | sed "s|$SCRATCH/||"
	must_fail 1 image-build -b "$SCRATCH" -o three 2>&1 | sed "s|$SCRATCH|SCRATCH|g"' <<EOF
usage: oci-push [-q] LAYOUT REGISTRY/REPOSITORY[:TAG]
oci-push: k8shazgpu/controller: no registry host (such as 127.0.0.1:5000/name)
oci-push: $REG/K8s/x: not a repository name: K8s/x
oci-push: $REG/k8s/x:-bad: not a tag: -bad
usage: image-build [-a arch] [-b builddir] [-o outdir] [-S scriptdir] [-v version] [-p prefix] [-P registry/repo]
oci-push: registry.yml: not a tar: tar: This does not look like a tar archive
image-build: SCRATCH/gpu-probe: missing (make B=SCRATCH first)
EOF

done_testing
