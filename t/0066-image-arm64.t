#!/bin/sh
# The arm64 images (make ARCH=arm64: build-arm64/, cross-compiled against
# Debian's arm64 packages): image-build -a arm64 writes the same five
# images for arm64, file for file as the fixtures list them, every ELF
# file in them AArch64, the same digests from two builds; each tool, each
# wrapper, busybox and jq answer in them under qemu-user (no binfmt_misc
# needed: qemu-aarch64-static -L, the layers unpacked as the root) just as
# the native ones do; each image within 10% of its amd64 twin's size; and
# oci-index makes of each pair one multi-arch image, pushed whole to a
# registry by oci-push. Reproducible twice over: two image builds of one
# build directory, and the tools compiled again into another.
. "$(dirname "$0")/lib.sh"
. "$TOP/t/lib-image.sh"

comps="nodeagent draplugin controller webhook"
ldd "$BUILD/claim-make" 2>/dev/null | grep -q libasan &&
	skip_all "$B is a sanitizer build: images carry the plain tools"
command -v aarch64-linux-gnu-gcc >/dev/null && command -v qemu-aarch64-static >/dev/null ||
	skip_all "no arm64 cross toolchain (aarch64-linux-gnu-gcc, qemu-aarch64-static: make deps installs them)"
[ "$(dpkg --print-architecture)" = amd64 ] || skip_all "compares with amd64 images: runs on amd64"
ARM=$TOP/build-arm64
version=$(sed -n 's/^VERSION = //p' "$TOP/Makefile")
triplet=aarch64-linux-gnu

# root C: arm64 image C's layers unpacked in order into root-C
root() {
	[ -d "root-$1" ] || { mkdir "root-$1" &&
		for d in $(jq -r '.layers[].digest' "$(man_ "$1" one)"); do
			gzip -dc "$(blob "one/$1" "$d")" | tar -C "root-$1" --numeric-owner -xf - || return 1
		done; }
}
# arm C CMD ARGS...: CMD of root-C run there by qemu-user, its exit
# status on a last line of its own
arm() {
	r=root-$1
	shift
	env -i PATH=/usr/bin:/bin HOME=/ qemu-aarch64-static -L "$r" "$@" 2>&1
	echo "exit $?"
}

check_output 'the sysroot, built: sysroot-build prints its root at once; it names the packages it unpacked' '
	root=$(sysroot-build -a arm64 prefix)
	test "$(sysroot-build -a arm64)" = "$root" && echo same root
	awk "{ print \$1 }" "$root/.versions" | grep -x -e libc6 -e libc6-dev -e busybox-static -e jq -e libjq1 -e libonig5 -e libssl3 -e libgit2-1.8' <<'EOF'
same root
busybox-static
jq
libc6
libc6-dev
libgit2-1.8
libjq1
libonig5
libssl3
EOF

check "build-arm64 holds the tools for images (make ARCH=arm64)" \
	'test -x "$ARM/image-bin/claim-make" && test -x "$ARM/static/diff-pack"'

check 'image-build -a arm64: five OCI layout tars, one line each, nothing on stderr' \
	'image-build -a arm64 -b "$ARM" -o one >one.out 2>one.err && cat one.err && test ! -s one.err &&
	 for c in $comps diff-pack; do test -f one/$c.tar; done'

check 'reproducible: a second build prints the same digests, writes the same bytes' \
	'image-build -a arm64 -b "$ARM" -o two >two.out 2>&1 && diff -u one.out two.out &&
	 for c in $comps diff-pack; do cmp one/$c.tar two/$c.tar || exit 1; done'

# the tools compiled again from the same sources, into another build
# directory: the same images, byte for byte
check 'reproducible from the sources: compiled again elsewhere (make ARCH=arm64 B=...), the same digests' \
	'make -C "$TOP" -j2 --no-print-directory ARCH=arm64 B="$SCRATCH/b2" all >b2.log 2>&1 || { tail b2.log; exit 1; }
	 image-build -a arm64 -b "$SCRATCH/b2" -o three >three.out 2>&1 && diff -u one.out three.out &&
	 for c in $comps diff-pack; do cmp one/$c.tar three/$c.tar || exit 1; done'

check 'the amd64 images beside them, from build/' \
	'image-build -b "$BUILD" -o amd >amd.out 2>amd.err && test ! -s amd.err'

check_output 'the configs and index entries say arm64' '
	for c in $comps diff-pack; do
		m=$(man_ $c one)
		jq -r ".manifests[0].platform | \"\(.os)/\(.architecture)\"" one/$c/index.json
		jq -r "\"\(.os)/\(.architecture)\"" "$(blob one/$c "$(jq -r .config.digest "$m")")"
	done | sort | uniq -c | sed "s/^ *//"' <<'EOF'
10 linux/arm64
EOF

check 'the base layer: exactly the expected files, modes and owners' \
	'layer nodeagent one 0 | tar -tvf - --numeric-owner | awk "{ s = \$1 \" \" \$2 \" \" \$6; if (\$7 == \"->\") s = s \" -> \" \$8; print s }" >base.got &&
	 diff -u "$FIXTURES/image/arm64/base.list" base.got'
for c in $comps; do
	check "the $c layer: exactly its tools, wrapper and own libraries" \
		"layer $c one 1 | tar -tvf - --numeric-owner | awk '{ s = \$1 \" \" \$2 \" \" \$6; if (\$7 == \"->\") s = s \" -> \" \$8; print s }' >$c.got &&
		 diff -u \"\$FIXTURES/image/arm64/$c.list\" $c.got"
done

# what the amd64 image has, by name: the arm64 one has the same
names() { for i in 0 1; do layer "$1" "$2" $i | tar -tf -; done | grep -v '/$' | sed 's|.*/||' | sort; }
check 'each arm64 image: the same files by name as its amd64 twin, library for library' '
	for c in $comps; do
		lay $c amd
		names $c amd | sed "s/ld-linux-x86-64.so.2/ld-linux-aarch64.so.1/" >$c.amd && names $c one >$c.arm &&
			diff -u $c.amd $c.arm || exit 1
	done'

# machine FILE...: each ELF file's name and machine, as readelf says
machine() { for f; do printf '%s %s\n' "${f#root-*/}" "$(LC_ALL=C readelf -h "$f" | sed -n 's/^ *Machine: *//p')"; done; }
check_output 'every ELF file in the images is AArch64' '
	for c in $comps; do root $c || exit 1; done
	mkdir root-diff-pack && layer diff-pack one 0 | tar -C root-diff-pack -xf - || exit 1
	for c in $comps diff-pack; do
		find root-$c -type f -exec sh -c "head -c 4 \"\$1\" | grep -q ELF && echo \"\$1\"" sh {} \; | sort >elf.$c
		machine $(cat elf.$c)
	done | awk "{ m[\$2]++ } END { for (k in m) print k, m[k] }"
	file -b root-diff-pack/diff-pack | cut -d, -f1,2,4' <<'EOF'
AArch64 138
ELF 64-bit LSB executable, ARM aarch64, statically linked
EOF

check_output 'the loader and glibc where the arm64 loader looks' '
	readelf -l root-controller/usr/bin/sched-queue | sed -n "s/.*Requesting program interpreter: \(.*\)]$/\1/p"
	for f in lib/ld-linux-aarch64.so.1 lib/aarch64-linux-gnu/libc.so.6 usr/lib/aarch64-linux-gnu/libssl.so.3; do
		test -f root-controller/$f && echo $f
	done' <<'EOF'
/lib/ld-linux-aarch64.so.1
lib/ld-linux-aarch64.so.1
lib/aarch64-linux-gnu/libc.so.6
usr/lib/aarch64-linux-gnu/libssl.so.3
EOF

for c in $comps; do
	check "the $c image under qemu-aarch64: each tool's help, its wrapper's, as the native ones" "
		tools=\$(layer $c one 1 | tar -tf - | sed -n 's|^\./usr/bin/||p' | grep -v -e '^k8shazgpu-' -e '^\$')
		test \"\$(echo \$tools | wc -w)\" -ge 2 || exit 1
		for t in \$tools; do
			{ \"\$BUILD/\$t\" -h 2>&1; echo \"exit \$?\"; } >want
			arm $c root-$c/usr/bin/\$t -h >got
			test \"\$(head -n 1 got)\" = \"\$(head -n 1 want)\" && grep -q \"^usage: \$t \" got && diff -u want got || exit 1
		done
		w=k8shazgpu-$c
		{ env -i PATH=/usr/bin:/bin HOME=/ sh \"\$TOP/scripts/\$w\" -h 2>&1; echo \"exit \$?\"; } >want
		arm $c root-$c/bin/busybox sh root-$c/usr/bin/\$w -h >got
		grep -q \"^usage: \$w \" got && diff -u want got"
done

check_output 'busybox and jq run in the base, under qemu-aarch64' '
	arm webhook root-webhook/bin/busybox uname -m
	arm webhook root-webhook/usr/bin/jq -c -n "[1, 2] | add"' <<'EOF'
aarch64
exit 0
3
exit 0
EOF

check_output 'diff-pack, static: runs with no C library' 'arm diff-pack root-diff-pack/diff-pack -V' <<EOF
diff-pack $version
exit 0
EOF

check_output 'no path of the build machine in any image' '
	for c in $comps diff-pack; do grep -r -l -F -e "$TOP" -e "$HOME/.cache" root-$c || :; done' </dev/null

# sizes: amd64 and arm64, compressed and unpacked, and how far apart. The
# component images within 10% either way; diff-pack's no more than 10%
# larger (it is smaller: glibc's static x86-64 string functions come in
# several variants, one a CPU feature level, arm64's in fewer).
sort amd.out >amd.sorted && sort one.out >one.sorted && join amd.sorted one.sorted >sizes
while read -r n _ ap au _ bp bu; do
	echo "# $n: compressed amd64 $ap arm64 $bp MiB, unpacked amd64 $au arm64 $bu MiB"
done <sizes
check_output 'each arm64 image within 10% of its amd64 twin, compressed and unpacked' '
	awk "{ lo = \$1 ~ /diff-pack/ ? 0 : 0.9
		print \$1, (\$6 <= 1.1 * \$3 && \$6 >= lo * \$3 && \$7 <= 1.1 * \$4 && \$7 >= lo * \$4 ? \"within\" : \"not within: \" \$0) }" sizes' <<EOF
k8shazgpu/controller:$version within
k8shazgpu/diff-pack:$version within
k8shazgpu/draplugin:$version within
k8shazgpu/nodeagent:$version within
k8shazgpu/webhook:$version within
EOF

# --- the multi-arch index ---
check 'oci-index: each pair one layout, its digest printed; the same again' '
	mkdir idx idx2 &&
	for c in $comps diff-pack; do
		oci-index -o idx/$c.tar -n k8shazgpu/$c:$version amd/$c.tar one/$c.tar >>idx.out &&
		oci-index -o idx2/$c.tar -n k8shazgpu/$c:$version amd/$c.tar one/$c.tar >>idx2.out || exit 1
		cmp idx/$c.tar idx2/$c.tar || exit 1
	done && diff -u idx.out idx2.out && test "$(grep -c "^sha256:[0-9a-f]\{64\}\$" idx.out)" = 5'

# idx C: the jq summary of index C: index.json's entry, then each
# manifest the image index lists, with its platform and whether it is
# the amd64 or arm64 image's, and whether every blob is in the layout
idx() {
	lay "$1" idx && lay "$1" amd && lay "$1" one
	i=$(jq -r '.manifests[0].digest' "idx/$1/index.json")
	jq -c '[.manifests | length, .[0].mediaType, .[0].annotations]' "idx/$1/index.json"
	test "$i" = "$(sed -n "$2p" idx.out)" && test "$i" = "sha256:$(sha256sum "$(blob "idx/$1" "$i")" | cut -d' ' -f1)" &&
		echo "index digest as printed"
	jq -r '.mediaType, (.manifests[] | "\(.mediaType) \(.platform.os)/\(.platform.architecture) \(.digest) \(.size)")' \
		"$(blob "idx/$1" "$i")" | sed -e "s/$(jq -r '.manifests[0].digest' "amd/$1/index.json")/the amd64 manifest/" \
		-e "s/$(jq -r '.manifests[0].digest' "one/$1/index.json")/the arm64 manifest/" -e 's/ [0-9]*$//'
	for m in $(jq -r '.manifests[].digest' "$(blob "idx/$1" "$i")"); do
		for b in $m $(jq -r '.config.digest, .layers[].digest' "$(blob "idx/$1" "$m")"); do
			cmp -s "$(blob "idx/$1" "$b")" "$(blob amd/$1 "$b")" || cmp -s "$(blob "idx/$1" "$b")" "$(blob "one/$1" "$b")" || echo "$b missing"
		done
	done
}
check_output 'the index: one entry, an image index named for import, listing both platforms with all their blobs' \
	'idx controller 3' <<EOF
[1,"application/vnd.oci.image.index.v1+json",{"io.containerd.image.name":"k8shazgpu/controller:$version","org.opencontainers.image.ref.name":"$version"}]
index digest as printed
application/vnd.oci.image.index.v1+json
application/vnd.oci.image.manifest.v1+json linux/amd64 the amd64 manifest
application/vnd.oci.image.manifest.v1+json linux/arm64 the arm64 manifest
EOF
check_output 'the diff-pack index the same' 'idx diff-pack 5 | sed -n "3,5p"' <<'EOF'
application/vnd.oci.image.index.v1+json
application/vnd.oci.image.manifest.v1+json linux/amd64 the amd64 manifest
application/vnd.oci.image.manifest.v1+json linux/arm64 the arm64 manifest
EOF

check_output 'oci-index refuses two images of one platform, a layout of an index, and usage' '
	must_fail 1 oci-index -o bad.tar one/webhook.tar two/webhook.tar 2>&1
	must_fail 1 oci-index -o bad.tar idx/webhook.tar 2>&1
	must_fail 2 oci-index -o bad.tar 2>&1
	test ! -e bad.tar && echo nothing written' <<'EOF'
oci-index: linux/arm64: two images for one platform
oci-index: idx/webhook.tar: index.json: not one image with its platform
usage: oci-index -o OUT [-n name] LAYOUT...
nothing written
EOF

# pushed to a registry of our own: each platform's blobs and manifest by
# digest, then the index by tag
start_registry
eventually 20 curl -sf "http://$REG/v2/"

check_output 'oci-push of an index: both manifests by digest with their blobs, the index by tag' '
	lay webhook idx && lay webhook amd
	oci-push idx/webhook.tar "$REG/k8shazgpu/webhook" 2>push.err
	grep -c " pushed (" push.err
	grep -v " pushed (" push.err | sed -e "s/$(jq -r ".manifests[0].digest" amd/webhook/index.json)/AMD/" \
		-e "s/$(jq -r ".manifests[0].digest" one/webhook/index.json)/ARM/" -e "s/$(sed -n 4p idx.out)/INDEX/"' <<EOF
$(sed -n 4p idx.out)
6
oci-push: $REG/k8shazgpu/webhook: manifest AMD pushed
oci-push: $REG/k8shazgpu/webhook: manifest ARM pushed
oci-push: $REG/k8shazgpu/webhook:$version: index INDEX pushed
EOF

check_output 'the registry serves the index by tag, each platform by digest' '
	curl -sf -D h -o m -H "Accept: application/vnd.oci.image.index.v1+json" "http://$REG/v2/k8shazgpu/webhook/manifests/$version" &&
		tr -d "\r" <h | sed -n "s/^docker-content-digest: //ip" && cmp m "$(blob idx/webhook "$(sed -n 4p idx.out)")" && echo same bytes
	for a in amd one; do
		d=$(jq -r ".manifests[0].digest" $a/webhook/index.json)
		curl -sf -o m -H "Accept: application/vnd.oci.image.manifest.v1+json" "http://$REG/v2/k8shazgpu/webhook/manifests/$d" &&
			cmp m "$(man_ webhook $a)" && echo "$a: same bytes"
	done' <<EOF
$(sed -n 4p idx.out)
same bytes
amd: same bytes
one: same bytes
EOF

done_testing
