#!/bin/sh
# diff-pack, pack mode: test checkouts of a stand-in vLLM built with the
# git CLI. The checkout is found from a subdirectory; what is not a
# usable checkout exits 3 (no repository, bare, no vLLM, no main ref,
# a shallow clone without the merge-base, unmerged paths); the manifest
# of a work tree holding every kind of change (unpushed commits, staged,
# unstaged, untracked and ignored files, a delete, a rename, chmod +x, a
# symlink, binary bytes, CRLF, an empty file, a new directory) is exact,
# with sizes, hashes and base blobs computed by git and sha256sum, and
# each put's bytes sit at its offset; hidden edits, submodules and
# native paths are warned of; a pack over the cap exits 4 naming the
# biggest files; the ConfigMaps carry the pack exactly; --check asks a
# registry of this script's own (Debian's docker-registry), walking back
# to the ancestor that has an image; the diff narrowed to the paths that
# may have changed gives the same pack as the whole diff
# (K8SHAZGPU_DP_WHOLE=1), also with a directory that replaced a file or
# a symlink that replaced a directory; and the pack applied with -u onto
# a copy of the base gives the work tree. No byte is read through a
# symbolic link: a directory of the base replaced by a link to outside
# the checkout, at any depth, is refused with status 7, nothing written
# and no byte of outside on any output, as is every pack diff-pack -u
# would refuse (a link whose target, followed through the other links of
# the pack and the base, leaves its tree; a directory replaced by a link
# or a file; a name diff-pack keeps); loops and links inside are packed,
# and -u applies them.
. "$(dirname "$0")/lib.sh"

export GIT_AUTHOR_NAME=t GIT_AUTHOR_EMAIL=t@example.com \
	GIT_COMMITTER_NAME=t GIT_COMMITTER_EMAIL=t@example.com \
	GIT_CONFIG_NOSYSTEM=1 HOME=$SCRATCH/home
# the scratch directory is inside this project's own work tree
export GIT_CEILING_DIRECTORIES=$SCRATCH
unset K8SHAZGPU_PACK_CAP K8SHAZGPU_VLLM_IMAGE_REPO
mkdir -p home
git config --global init.defaultBranch main
git config --global protocol.file.allow always
REPO=public.ecr.aws/q9t5s3a7/vllm-ci-postmerge-repo

# ---- the upstream: three commits on main, a bare copy to clone

mkdir up && cd up && git init -q &&
	mkdir vllm && printf 'from .a import x\n' >vllm/__init__.py &&
	printf 'x = 1\n' >vllm/a.py && printf 'b = 2\n' >vllm/b.py &&
	seq -f 'gone line %g' 1 40 >vllm/gone.py &&
	seq -f 'a module that moves, line %g' 1 40 >vllm/old.py &&
	printf 'print("mode")\n' >vllm/mode.py && printf 'hidden\n' >vllm/hid.py &&
	printf 'assumed\n' >vllm/au.py && printf '*.log\n' >.gitignore &&
	printf '# vllm\n' >README.md && git add -A && git commit -qm one &&
	printf 'two\n' >vllm/two.py && git add -A && git commit -qm two &&
	printf 'three\n' >vllm/three.py && git add -A && git commit -qm three &&
	cd .. && git clone -q --bare up up.git || { echo "Bail out! no upstream"; exit 1; }
C1=$(git -C up rev-parse HEAD~2)
C2=$(git -C up rev-parse HEAD~1)
C3=$(git -C up rev-parse HEAD)

# ---- the work tree: every kind of change

git clone -q up.git work && cd work &&
	printf 'local\n' >vllm/local.py && git add vllm/local.py && git commit -qm local &&
	printf 'x = 10\n' >vllm/a.py && git add vllm/a.py &&
	printf 'b = 20\n' >vllm/b.py &&
	printf 'untracked\n' >vllm/u.py && printf 'ignored\n' >vllm/x.log &&
	git rm -q vllm/gone.py && git mv vllm/old.py vllm/new.py &&
	chmod +x vllm/mode.py && ln -s a.py vllm/link.py &&
	head -c 3000 /dev/urandom >vllm/blob.bin && printf 'a\r\nb\r\n' >vllm/crlf.txt &&
	mkdir -p vllm/newpkg/deep && : >vllm/newpkg/__init__.py &&
	printf 'deep\n' >vllm/newpkg/deep/mod.py &&
	git update-index --skip-worktree vllm/hid.py && printf 'hidden edit\n' >vllm/hid.py &&
	git update-index --assume-unchanged vllm/au.py && printf 'assumed edit\n' >vllm/au.py &&
	cd .. || { echo "Bail out! no work tree"; exit 1; }
HEAD=$(git -C work rev-parse HEAD)

# expect_entries: the manifest's entries for the lines "OP PATH
# [RENAMED_TO]" on stdin, from the work tree ($WT) and the base ($BASE)
# as git and coreutils see them.
expect_entries() {
	off=0
	LC_ALL=C sort -k2,2 | while read -r op path to; do
		f=$WT/$path
		bb=$(git -C "$WT" rev-parse -q --verify "$BASE:$path" 2>/dev/null) && bb="\"$bb\"" || bb=null
		case $op in
		put)
			size=$(stat -c %s "$f")
			if [ -x "$f" ]; then mode=100755; else mode=100644; fi
			printf '{"op":"put","path":"%s","mode":"%s","size":%d,"offset":%d,"sha256":"%s","base_blob":%s}\n' \
				"$path" "$mode" "$size" "$off" "$(sha256sum <"$f" | cut -c1-64)" "$bb"
			off=$((off + size)) ;;
		link) printf '{"op":"link","path":"%s","target":"%s","base_blob":%s}\n' "$path" "$(readlink "$f")" "$bb" ;;
		del)
			if [ -n "$to" ]; then
				printf '{"op":"del","path":"%s","base_blob":%s,"renamed_to":"%s"}\n' "$path" "$bb" "$to"
			else
				printf '{"op":"del","path":"%s","base_blob":%s}\n' "$path" "$bb"
			fi ;;
		esac
	done
}
manifest() { sed -n 2p "$1"; }

WT=work BASE=$C3
check 'a checkout found from a subdirectory packs with status 0' '
	diff-pack -C work/vllm/newpkg/deep -o p1.pack >rec1 2>err1 && [ -s p1.pack ] && [ $(wc -l <rec1) = 1 ]'

check_output 'the manifest lists every change, sorted, exactly' 'manifest p1.pack | jq -c ".entries[]"' <<EOF
$(expect_entries <<'LIST'
put vllm/a.py
put vllm/b.py
put vllm/blob.bin
put vllm/crlf.txt
del vllm/gone.py
link vllm/link.py
put vllm/local.py
put vllm/mode.py
put vllm/new.py
put vllm/newpkg/__init__.py
put vllm/newpkg/deep/mod.py
del vllm/old.py vllm/new.py
put vllm/u.py
LIST
)
EOF

DATA=$(($(head -n 2 p1.pack | wc -c) + 1))
check_output 'the pack starts with its magic line, then the manifest' 'head -n 1 p1.pack; manifest p1.pack | jq -c "[.kind, .version, .base, .head, .data_size]"' <<EOF
K8SHAZGPU-PACK 1
["pack",1,"$C3","$HEAD",$(($(stat -c %s p1.pack) - DATA + 1))]
EOF

check 'each put'"'"'s bytes are the file'"'"'s, raw, at its offset' '
	manifest p1.pack | jq -r ".entries[] | select(.op == \"put\") | \"\(.offset) \(.size) \(.path)\"" >puts &&
	[ $(wc -l <puts) = 10 ] &&
	while read -r off size path; do
		tail -c +$((DATA + off)) p1.pack | head -c "$size" | cmp - "work/$path" || exit 1
	done <puts &&
	[ $(($(stat -c %s p1.pack) - DATA + 1)) = $(awk "{ s += \$2 } END { print s }" puts) ]'

check_output 'the record says what was packed, from where, on what base' 'jq -c "del(.root, .pack)" rec1; jq -r ".root, .pack" rec1' <<EOF
{"kind":"checkout","remote":"origin","remote_url":"$SCRATCH/up.git","branch":"main","head":"$HEAD","base_ref":"refs/remotes/origin/main","merge_base":"$C3","base":"$C3","image":"$REPO:$C3","image_checked":false,"image_digest":null,"files":{"put":10,"link":1,"del":2},"bytes":$(($(stat -c %s p1.pack) - DATA + 1)),"pack_sha256":"$(sha256sum <p1.pack | cut -c1-64)","pack_size":$(stat -c %s p1.pack),"configmaps":[],"native":[],"submodules":[],"hidden":["vllm/au.py","vllm/hid.py"],"warnings":["vllm/au.py: changed in the work tree but marked assume-unchanged, so git and this pack leave it out: git update-index --no-assume-unchanged vllm/au.py","vllm/hid.py: changed in the work tree but marked skip-worktree, so git and this pack leave it out: git update-index --no-skip-worktree vllm/hid.py"]}
$(cd work && pwd -P)
$(pwd -P)/p1.pack
EOF

check_output 'the hidden edits are warned of on stderr' 'cat err1' <<'EOF'
diff-pack: warning: vllm/au.py: changed in the work tree but marked assume-unchanged, so git and this pack leave it out: git update-index --no-assume-unchanged vllm/au.py
diff-pack: warning: vllm/hid.py: changed in the work tree but marked skip-worktree, so git and this pack leave it out: git update-index --no-skip-worktree vllm/hid.py
EOF

check 'the same checkout packs to the same bytes again, without -o' '
	diff-pack -C work >rec2 2>/dev/null &&
	[ "$(jq -r .pack_sha256 rec2)" = "$(sha256sum <p1.pack | cut -c1-64)" ] &&
	[ "$(jq -r .pack rec2)" = null ]'

# an upstream remote takes precedence over origin
git -C work remote add upstream "$SCRATCH/up.git" && git -C work fetch -q upstream
check_output 'upstream/main is the base ref when it exists' 'diff-pack -C work 2>/dev/null | jq -c "[.remote, .remote_url, .base_ref, .merge_base]"' <<EOF
["upstream","$SCRATCH/up.git","refs/remotes/upstream/main","$C3"]
EOF

check_output '-b names the base; -r the image repository' 'diff-pack -C work -b "$C2" -r 127.0.0.1:5/vllm 2>/dev/null | jq -c "[.remote, .base_ref, .merge_base, .base, .image, .files]"' <<EOF
[null,"$C2","$C2","$C2","127.0.0.1:5/vllm:$C2",{"put":11,"link":1,"del":2}]
EOF

check_output '-i names the image exactly; K8SHAZGPU_VLLM_IMAGE_REPO the repository' '
	diff-pack -C work -i reg.example/x:y 2>/dev/null | jq -r .image
	K8SHAZGPU_VLLM_IMAGE_REPO=reg.example/z diff-pack -C work 2>/dev/null | jq -r .image' <<EOF
reg.example/x:y
reg.example/z:$C3
EOF

# ---- what is not a usable checkout

mkdir plain && printf 'x\n' >plain/f
git clone -q --bare up.git bare.git
mkdir novllm && (cd novllm && git init -q && printf 'x\n' >f && git add f && git commit -qm x)
mkdir nomain && (cd nomain && git init -q && mkdir vllm && : >vllm/__init__.py && git add -A && git commit -qm x)
mkdir pyproj && (cd pyproj && git init -q && printf '[project]\nname = "vllm"\n' >pyproject.toml && git add -A && git commit -qm x)
mkdir unborn && (cd unborn && git init -q && mkdir vllm && : >vllm/__init__.py)
check_output 'not a usable checkout: status 3, naming the cause and the fix' '
	must_fail 3 diff-pack -C plain 2>&1
	must_fail 3 diff-pack -C missing-dir 2>&1 | sed "s/missing-dir: .*/missing-dir: .../"
	must_fail 3 diff-pack -C bare.git 2>&1
	must_fail 3 diff-pack -C novllm 2>&1
	must_fail 3 diff-pack -C nomain 2>&1
	must_fail 3 diff-pack -C pyproj 2>&1
	must_fail 3 diff-pack -C unborn 2>&1
	must_fail 3 diff-pack -C work -b no-such-ref 2>&1 | grep -v "^diff-pack: warning" |
		sed "s/-b no-such-ref: .*/-b no-such-ref: .../"' <<EOF
diff-pack: plain: not in a git repository: run diff-pack in a vLLM checkout, or name one with -C
diff-pack: missing-dir: ...
diff-pack: $SCRATCH/bare.git/: a bare repository, with no work tree: run diff-pack in a checkout
diff-pack: $SCRATCH/novllm: not a vLLM checkout (no vllm/__init__.py, no setup.py or pyproject.toml naming vllm)
diff-pack: $SCRATCH/nomain: no refs/remotes/upstream/main or refs/remotes/origin/main: git fetch origin main (or diff-pack --fetch), or name the base with -b
diff-pack: $SCRATCH/pyproj: no refs/remotes/upstream/main or refs/remotes/origin/main: git fetch origin main (or diff-pack --fetch), or name the base with -b
diff-pack: $SCRATCH/unborn: HEAD has no commit yet: commit first
diff-pack: $SCRATCH/work: -b no-such-ref: ...
EOF

# unrelated histories: a main ref from another repository
(cd nomain && git fetch -q "$SCRATCH/novllm" main:refs/remotes/origin/main)
check_output 'no merge-base (unrelated histories): status 3' 'must_fail 3 diff-pack -C nomain 2>&1' <<EOF
diff-pack: $SCRATCH/nomain: HEAD and refs/remotes/origin/main have no common commit (unrelated histories): name the base with -b
EOF

# a shallow clone, whose origin/main then moved past the commit it was
# grafted at
git clone -q --bare up.git up2.git && git clone -q --depth 1 "file://$SCRATCH/up2.git" shallow &&
	(cd shallow && printf 'mine\n' >vllm/mine.py && git add -A && git commit -qm mine) &&
	git clone -q up2.git up2 && (cd up2 && printf 'four\n' >vllm/four.py && git add -A && git commit -qm four && git push -q) &&
	git -C shallow fetch -q --depth 1 origin main ||
	{ echo "Bail out! no shallow clone"; exit 1; }
check_output 'a shallow clone without the merge-base: status 3' 'must_fail 3 diff-pack -C shallow 2>&1' <<EOF
diff-pack: $SCRATCH/shallow: a shallow clone: HEAD and refs/remotes/origin/main have no common commit in the history fetched: git fetch --unshallow (or --deepen=N)
EOF
check 'fetched deeper, the shallow clone packs' 'git -C shallow fetch -q --unshallow && diff-pack -C shallow | jq -e ".files.put == 1"'

git clone -q up.git conflict && (cd conflict &&
	git checkout -q -b theirs && printf 'x = "theirs"\n' >vllm/a.py && git commit -qam theirs &&
	git checkout -q main && printf 'x = "ours"\n' >vllm/a.py && git commit -qam ours &&
	! git merge -q theirs >/dev/null 2>&1) || { echo "Bail out! no conflict"; exit 1; }
check_output 'unmerged paths: status 3, naming them' 'must_fail 3 diff-pack -C conflict 2>&1' <<EOF
diff-pack: $SCRATCH/conflict: unmerged paths: vllm/a.py: resolve them (git add), or git merge --abort
EOF

# ---- submodules and native-build paths

git init -q sub && (cd sub && printf 's\n' >s && git add s && git commit -qm s)
git clone -q up.git native && (cd native &&
	git submodule -q add "$SCRATCH/sub" sub && git commit -qm sub &&
	mkdir csrc && printf '__global__ void k() {}\n' >csrc/k.cu && printf 'setup()\n' >setup.py &&
	mkdir -p vllm/ops && printf 'int f();\n' >vllm/ops/f.cpp)
check_output 'submodules and native-build paths are warned of' 'diff-pack -C native 2>err | jq -c ".files, .native, .submodules, .warnings[]"; cat err' <<'EOF'
{"put":4,"link":0,"del":0}
["csrc/k.cu","setup.py","vllm/ops/f.cpp"]
["sub"]
"sub: a submodule changed: its content is not packed"
"native-build paths changed (csrc/k.cu, setup.py, vllm/ops/f.cpp): the image's compiled kernels are the base's; these changes need a build"
diff-pack: warning: sub: a submodule changed: its content is not packed
diff-pack: warning: native-build paths changed (csrc/k.cu, setup.py, vllm/ops/f.cpp): the image's compiled kernels are the base's; these changes need a build
EOF

# ---- the cap

check_output 'a pack over the cap: status 4, naming the 5 biggest files' '
	must_fail 4 diff-pack -C work -x 1K 2>&1 >/dev/null | grep -v "^diff-pack: warning"
	must_fail 4 env K8SHAZGPU_PACK_CAP=2K diff-pack -C work 2>&1 >/dev/null | grep -o "over the cap of [0-9]*"' <<EOF
diff-pack: the pack's files alone are $(($(stat -c %s p1.pack) - DATA + 1)) bytes, over the cap of 1024: the biggest files: vllm/blob.bin (3000 bytes), vllm/new.py ($(stat -c %s work/vllm/new.py) bytes), vllm/mode.py (14 bytes), vllm/u.py (10 bytes), vllm/a.py (7 bytes): leave them out (.gitignore, git rm --cached) or raise the cap (-x, K8SHAZGPU_PACK_CAP)
over the cap of 2048
EOF
check 'the cap counts the whole pack: its size passes, one byte less fails' '
	n=$(stat -c %s p1.pack) &&
	diff-pack -C work -x "$n" >/dev/null 2>&1 &&
	must_fail 4 diff-pack -C work -x $((n - 1)) 2>&1 | grep -q "^diff-pack: the pack is $n bytes, over the cap of $((n - 1)): "'

check_output 'bad options: status 2' '
	must_fail 2 diff-pack -x 0 2>&1 | head -n 1
	must_fail 2 diff-pack -x 1T 2>&1 | head -n 1
	must_fail 2 env K8SHAZGPU_PACK_CAP=lots diff-pack 2>&1 | head -n 1
	must_fail 2 diff-pack -x 268435457 2>&1 | head -n 1
	must_fail 2 diff-pack -k p 2>&1 | head -n 1
	must_fail 2 diff-pack -n ns 2>&1 | head -n 1
	must_fail 2 diff-pack -k p -n ns -l novalue 2>&1 | head -n 1
	must_fail 2 diff-pack -i a:b -r c 2>&1 | head -n 1
	must_fail 2 diff-pack -w 0 --check 2>&1 | head -n 1
	must_fail 2 diff-pack -t tree 2>&1 | head -n 1
	must_fail 2 diff-pack -u -o x -f p 2>&1 | head -n 1
	must_fail 2 diff-pack -u 2>&1 | head -n 1
	must_fail 2 diff-pack --install x -u 2>&1 | head -n 1
	must_fail 2 diff-pack extra 2>&1 | head -n 1' <<'EOF'
diff-pack: -x 0: not a size from 1 to 256M (8M, 512K)
diff-pack: -x 1T: not a size from 1 to 256M (8M, 512K)
diff-pack: K8SHAZGPU_PACK_CAP=lots: not a size from 1 to 256M (8M, 512K)
diff-pack: -x 268435457: not a size from 1 to 256M (8M, 512K)
diff-pack: -k and -n go together
diff-pack: -k and -n go together
diff-pack: -l novalue: not K=V
diff-pack: -i and -r: give one
diff-pack: -w 0: not a number from 1 to 100000
diff-pack: -t: an unpack option, without -u
diff-pack: -o: not an unpack option
diff-pack: -u needs one of -d PACKDIR or -f PACKFILE
diff-pack: --install takes no other option
diff-pack: extra: unexpected argument
EOF
check '-h prints the help on stdout; -V the version' 'diff-pack -h | grep -q "^usage: diff-pack" && [ "$(diff-pack -V)" = "diff-pack 0.1.0" ]'

# ---- ConfigMaps

git clone -q up.git big && head -c 2000000 /dev/urandom >big/vllm/weights.bin
check 'with -k, the ConfigMaps come first, the record last' '
	diff-pack -C big -o big.pack -k run1-pack -n ns1 -l canhazgpu.dev/run=run1 -l a=b >cms 2>/dev/null &&
	[ $(wc -l <cms) = 4 ] && tail -n 1 cms | jq -e ".kind == \"checkout\"" >/dev/null'
check_output 'three ConfigMaps, named, labelled, immutable, one chunk each' 'head -n 3 cms | jq -c "[.apiVersion, .kind, .metadata.name, .metadata.namespace, .metadata.labels, .metadata.annotations, .immutable, (.binaryData | keys), (.data // {} | keys)]"; tail -n 1 cms | jq -c .configmaps' <<EOF
["v1","ConfigMap","run1-pack-0","ns1",{"app.kubernetes.io/managed-by":"k8shazgpu","canhazgpu.dev/run":"run1","a":"b"},{"canhazgpu.dev/pack-sha256":"$(sha256sum <big.pack | cut -c1-64)"},true,["pack.000"],["index.json"]]
["v1","ConfigMap","run1-pack-1","ns1",{"app.kubernetes.io/managed-by":"k8shazgpu","canhazgpu.dev/run":"run1","a":"b"},{"canhazgpu.dev/pack-sha256":"$(sha256sum <big.pack | cut -c1-64)"},true,["pack.001"],[]]
["v1","ConfigMap","run1-pack-2","ns1",{"app.kubernetes.io/managed-by":"k8shazgpu","canhazgpu.dev/run":"run1","a":"b"},{"canhazgpu.dev/pack-sha256":"$(sha256sum <big.pack | cut -c1-64)"},true,["pack.002"],[]]
["run1-pack-0","run1-pack-1","run1-pack-2"]
EOF
check 'the chunks, decoded, are 921600 bytes at most and make the pack' '
	for i in 0 1 2; do sed -n "$((i + 1))p" cms | jq -r ".binaryData[\"pack.00$i\"]" | base64 -d >chunk.$i || exit 1; done &&
	[ $(stat -c %s chunk.0) = 921600 ] && [ $(stat -c %s chunk.1) = 921600 ] &&
	[ $(stat -c %s chunk.2) = $(($(stat -c %s big.pack) - 1843200)) ] &&
	cat chunk.0 chunk.1 chunk.2 | cmp - big.pack'
check_output 'index.json names the pack and each chunk with its size and hash' 'head -n 1 cms | jq -r ".data[\"index.json\"]"' <<EOF
{"kind":"pack-index","version":1,"sha256":"$(sha256sum <big.pack | cut -c1-64)","size":$(stat -c %s big.pack),"chunks":[{"key":"pack.000","size":921600,"sha256":"$(sha256sum <chunk.0 | cut -c1-64)"},{"key":"pack.001","size":921600,"sha256":"$(sha256sum <chunk.1 | cut -c1-64)"},{"key":"pack.002","size":$(stat -c %s chunk.2),"sha256":"$(sha256sum <chunk.2 | cut -c1-64)"}]}
EOF

# ---- --check against a registry of this script's own

start_registry() {
	for try in 1 2 3 4 5; do
		RPORT=$(free_port)
		cat >registry.yml <<EOF2
version: 0.1
log: {level: error, accesslog: {disabled: true}}
storage: {filesystem: {rootdirectory: $SCRATCH/registry}}
http: {addr: "127.0.0.1:$RPORT"}
EOF2
		docker-registry serve registry.yml >registry.log 2>&1 3>&- 4>&- &
		RPID=$!
		if eventually 20 curl -sf -o /dev/null "http://127.0.0.1:$RPORT/v2/"; then
			trap 'kill $RPID 2>/dev/null' EXIT
			return 0
		fi
		kill $RPID 2>/dev/null
	done
	echo "Bail out! no docker-registry: $(cat registry.log)"
	exit 1
}
start_registry
REG=127.0.0.1:$RPORT
mkdir -p img/etc && printf 'vllm image stand-in\n' >img/etc/motd
oci-image -o img.oci img >/dev/null && oci-push -q img.oci "$REG/t1000/vllm:$C1" >pushed1 &&
	oci-push -q img.oci "$REG/t1000/vllm:$C3" >pushed3 ||
	{ echo "Bail out! the image was not pushed"; exit 1; }

check_output '--check: the merge-base'"'"'s image is found, with its digest' 'diff-pack -C work --check -r "$REG/t1000/vllm" 2>/dev/null | jq -c "[.merge_base, .base, .image, .image_checked, .image_digest]"' <<EOF
["$C3","$C3","$REG/t1000/vllm:$C3",true,"$(cat pushed3)"]
EOF

# a checkout whose merge-base is C2, which has no image: C1 has one
git clone -q up.git older && git -C older reset -q --hard "$C2" && printf 'older\n' >older/vllm/older.py
BASE=$C1
check_output '--check walks back first parents to the ancestor with an image' 'diff-pack -C older --check -r "$REG/t1000/vllm" -o older.pack 2>err | jq -c "[.merge_base, .base, .image, .image_checked, .image_digest, .warnings]"; cat err' <<EOF
["$C2","$C1","$REG/t1000/vllm:$C1",true,"$(cat pushed1)",["no image for the merge-base $(echo "$C2" | cut -c1-12): the base is its first-parent ancestor $(echo "$C1" | cut -c1-12), 1 commit back, which has one"]]
diff-pack: warning: no image for the merge-base $(echo "$C2" | cut -c1-12): the base is its first-parent ancestor $(echo "$C1" | cut -c1-12), 1 commit back, which has one
EOF
check_output 'the walked-back pack is the diff from that ancestor' 'manifest older.pack | jq -c "[.base, .entries[]]"' <<EOF
["$C1",$(printf 'put vllm/older.py\nput vllm/two.py\n' | WT=older expect_entries | paste -sd,)]
EOF

check_output 'no image within -w commits: status 8, naming the repository and the count' '
	must_fail 8 diff-pack -C older --check -w 1 -r "$REG/t1000/vllm" 2>&1
	must_fail 8 diff-pack -C work --check -r "$REG/t1000/other" 2>&1 | grep -v "^diff-pack: warning"
	must_fail 8 diff-pack -C work --check -i "$REG/t1000/vllm:nope" 2>&1 | grep -v "^diff-pack: warning"' <<EOF
diff-pack: $REG/t1000/vllm: no image for the merge-base $C2 or its first parents: 1 commit tried: push one, raise -w, or name an image with -i
diff-pack: $REG/t1000/other: no image for the merge-base $C3 or its first parents: 3 commits tried: push one, raise -w, or name an image with -i
diff-pack: $REG/t1000/vllm:nope: not found
EOF

check_output '--check -i asks for that image alone' 'diff-pack -C work --check -i "$REG/t1000/vllm:$C1" 2>/dev/null | jq -c "[.base, .image, .image_checked, .image_digest]"' <<EOF
["$C3","$REG/t1000/vllm:$C1",true,"$(cat pushed1)"]
EOF

DEAD=$(free_port)
check 'a registry that cannot be reached: status 75' '
	must_fail 75 diff-pack -C work --check -r "127.0.0.1:$DEAD/t1000/vllm" 2>&1 | grep -q "^diff-pack: http://127.0.0.1:$DEAD: .*onnect"'

# a registry that wants an anonymous Bearer token (ECR Public, Docker Hub)
for try in 1 2 3 4 5; do
	TPORT=$(free_port)
	"$FIXTURES/diff-pack/tokenreg" "$TPORT" "$SCRATCH/token.log" "$C1" "$C3" >tokenreg.out 2>&1 3>&- 4>&- &
	TPID=$!
	eventually 20 grep -qx listening tokenreg.out && break
	kill $TPID 2>/dev/null
done
trap 'kill $RPID $TPID 2>/dev/null' EXIT
first() { printf "%.1s" "$1"; }
check_output '--check answers a Bearer challenge with an anonymous token, kept for the walk' '
	: >token.log && diff-pack -C older --check -r "127.0.0.1:$TPORT/t/vllm" 2>/dev/null | jq -c "[.base, .image_digest]"
	diff-pack -C work --check -r "127.0.0.1:$TPORT/t/vllm" 2>/dev/null | jq -c "[.base, .image_digest]"
	cat token.log' <<EOF
["$C1","sha256:$(printf "%064d" 0 | tr 0 "$(first "$C1")")"]
["$C3","sha256:$(printf "%064d" 0 | tr 0 "$(first "$C3")")"]
HEAD /v2/t/vllm/manifests/$C2 -
GET /token -
HEAD /v2/t/vllm/manifests/$C2 Bearer tok-t/vllm
HEAD /v2/t/vllm/manifests/$C1 Bearer tok-t/vllm
HEAD /v2/t/vllm/manifests/$C3 -
GET /token -
HEAD /v2/t/vllm/manifests/$C3 Bearer tok-t/vllm
EOF
check_output 'a registry answering 503: status 75' 'must_fail 75 diff-pack -C work --check -r "127.0.0.1:$TPORT/busy/vllm" 2>&1 | grep -v "^diff-pack: warning"' <<EOF
diff-pack: http://127.0.0.1:$TPORT: HTTP 503
EOF

# --fetch brings origin's main up to date first
git clone -q up2.git fetchme && (cd up2 && printf 'five\n' >vllm/five.py && git add -A && git commit -qm five && git push -q)
check_output '--fetch fetches main of origin (no upstream) first' '
	diff-pack -C fetchme --fetch 2>&1 | jq -c "[.base_ref, .merge_base]"; git -C fetchme rev-parse origin/main' <<EOF
["refs/remotes/origin/main","$(git -C up2 rev-parse HEAD~1)"]
$(git -C up2 rev-parse HEAD)
EOF

# ---- the narrowed diff: diff-pack hands libgit2 only the paths that
# may have changed; K8SHAZGPU_DP_WHOLE=1 hands it the whole work tree.
# Both must give the same pack, on checkouts with the changes that the
# narrowing must not miss.

git clone -q up.git edges && cd edges &&
	mkdir -p vllm/d build && printf 'dx\n' >vllm/d/x.py && printf 'dy\n' >vllm/d/y.py &&
	printf 'build/\n' >>.gitignore && printf 'keep\n' >build/keep.py &&
	git add -A && git add -f build/keep.py && git commit -qm edges &&
	rm -r vllm/d && ln -s newpkg vllm/d &&
	rm vllm/b.py && mkdir vllm/b.py && printf 'z\n' >vllm/b.py/z.py &&
	printf 'kept\n' >build/keep.py && printf 'junk\n' >build/junk.py &&
	printf 'ita\n' >vllm/ita.py && git add -N vllm/ita.py &&
	git rm -q --cached vllm/two.py &&
	printf 'x = 9\n' >vllm/a.py &&
	mkdir -p vllm/newpkg/sub && printf 'n\n' >vllm/newpkg/sub/n.py &&
	mkdir -p vllm/__pycache__ && printf 'pyc\n' >vllm/__pycache__/a.pyc &&
	printf '__pycache__/\n' >>.git/info/exclude &&
	cd .. || { echo "Bail out! no edges checkout"; exit 1; }
check_output 'the narrowed diff finds every kind of change' '
	diff-pack -C edges -o e1.pack 2>/dev/null >/dev/null && manifest e1.pack | jq -r ".entries[] | [.op, .path] | join(\" \")"' <<EOF
put .gitignore
put build/keep.py
put vllm/a.py
del vllm/b.py
put vllm/b.py/z.py
link vllm/d
put vllm/ita.py
put vllm/newpkg/sub/n.py
EOF
check 'that pack applied onto the base gives the work tree' '
	mkdir -p et && git -C up.git archive "$C3" | tar -x -C et &&
	diff-pack -u -f e1.pack -t et -P et/vllm -q &&
	(cd edges && git ls-files -co --exclude-standard | grep -v -e "^vllm/d/" -e "^vllm/b.py\$" | LC_ALL=C sort) >want &&
	(cd et && find . \( -type f -o -type l \) ! -name .k8shazgpu-pack | sed "s|^\./||" | LC_ALL=C sort) >got &&
	diff -u want got && cmp edges/vllm/b.py/z.py et/vllm/b.py/z.py'
check 'the narrowed diff and the whole one give the same packs' '
	for d in work edges native big; do
		diff-pack -C $d -x 256M -o n.pack >/dev/null 2>&1 &&
		K8SHAZGPU_DP_WHOLE=1 diff-pack -C $d -x 256M -o w.pack >/dev/null 2>&1 &&
		cmp n.pack w.pack || exit 1
	done'
cp -a edges nested && git init -q nested/extra/inner
check 'a repository nested in an untracked directory: the same pack' '
	diff-pack -C nested -o n.pack >/dev/null 2>&1 &&
	K8SHAZGPU_DP_WHOLE=1 diff-pack -C nested -o w.pack >/dev/null 2>&1 &&
	cmp n.pack w.pack'

# ---- no byte through a symlink; nothing the pod would refuse
#
# A base with directories at several depths, a link of its own
# (docs/up -> ..) and a setup.py naming vllm; a directory outside every
# checkout, each of its files holding a marker.

mkdir up3 && (cd up3 && git init -q && mkdir -p vllm/sub vllm/a/b docs sub/deep &&
	printf 'from .x import y\n' >vllm/__init__.py && printf 'y = 1\n' >vllm/x.py &&
	printf 'a\n' >vllm/sub/a.py && printf 'x\n' >vllm/a/b/x.py &&
	printf 'c\n' >sub/c.txt && printf 'b\n' >sub/deep/b.txt &&
	printf 'guide\n' >docs/guide.md && ln -s .. docs/up &&
	printf 'setup(name="vllm")\n' >setup.py && git add -A && git commit -qm base) &&
	git clone -q --bare up3 up3.git && mkdir -p outside/deep &&
	for f in a.py c.txt x.py deep/b.txt secret.py; do echo "OUTSIDE-MARKER $f" >outside/$f; done ||
	{ echo "Bail out! no up3"; exit 1; }
checkout() { rm -rf "$1" && git clone -q up3.git "$1" && cd "$1"; }
# refused DIR [VAR=VALUE]: diff-pack's status and stderr, then whatever
# else it wrote: a pack file, anything on stdout, an outside byte
refused() {
	rm -f r.pack
	env ${2:+"$2"} diff-pack -C "$1" -o r.pack -k r -n ns >r.out 2>r.err
	echo "exit $?"
	cat r.err
	[ ! -e r.pack ] || echo "a pack was written"
	[ ! -s r.out ] || echo "something on stdout"
	! grep -q OUTSIDE-MARKER r.out r.err || echo "an outside byte"
}

(checkout w-dirs && rm -rf sub vllm/sub vllm/a/b && ln -s ../outside sub &&
	ln -s ../../outside vllm/sub && ln -s ../../../outside vllm/a/b) ||
	{ echo "Bail out! no w-dirs"; exit 1; }
for whole in '' K8SHAZGPU_DP_WHOLE=1; do
	check_output "directories of the base replaced by links to outside, at any depth: 7, nothing written${whole:+ ($whole)}" \
		"refused w-dirs $whole" <<EOF
exit 7
diff-pack: sub: a directory in the base, a symbolic link in the work tree: diff-pack -u replaces no directory
diff-pack: vllm/a/b: a directory in the base, a symbolic link in the work tree: diff-pack -u replaces no directory
diff-pack: vllm/sub: a directory in the base, a symbolic link in the work tree: diff-pack -u replaces no directory
diff-pack: sub: link target ../outside escapes the tree: a target that leaves the tree
diff-pack: vllm/a/b: link target ../../../outside escapes the tree: a target that leaves the package directory
diff-pack: vllm/sub: link target ../../outside escapes the tree: a target that leaves the package directory
diff-pack: $SCRATCH/w-dirs: nothing packed: diff-pack -u would refuse the paths above
EOF
done

(checkout w-files && rm vllm/x.py && ln -s ../../outside/x.py vllm/x.py &&
	ln -s "$SCRATCH/outside/secret.py" vllm/abs.py && ln -s ../outside/a.py top.py &&
	ln -s ../README.md vllm/readme) || { echo "Bail out! no w-files"; exit 1; }
check_output 'links to files outside the tree, or outside vllm/ into the checkout: 7' 'refused w-files' <<EOF
exit 7
diff-pack: top.py: link target ../outside/a.py escapes the tree: a target that leaves the tree
diff-pack: vllm/abs.py: link target $SCRATCH/outside/secret.py escapes the tree: an absolute target
diff-pack: vllm/readme: link target ../README.md escapes the tree: a target that leaves the package directory
diff-pack: vllm/x.py: link target ../../outside/x.py escapes the tree: a target that leaves the package directory
diff-pack: $SCRATCH/w-files: nothing packed: diff-pack -u would refuse the paths above
EOF

# each link stays inside alone; through one another, or through the
# base's docs/up -> .., they climb out
(checkout w-chain && ln -s .. vllm/sub/l1 && mkdir vllm/sub/y && ln -s ../l1/.. vllm/sub/y/l2 &&
	mkdir docs/x && ln -s ../up/.. docs/x/l) || { echo "Bail out! no w-chain"; exit 1; }
check_output 'chains of links that climb out together, through the pack'"'"'s and the base'"'"'s links: 7' 'refused w-chain' <<EOF
exit 7
diff-pack: docs/x/l: link target ../up/.. escapes the tree: a target that leaves the tree through the link docs/up
diff-pack: vllm/sub/y/l2: link target ../l1/.. escapes the tree: a target that leaves the package directory through the link vllm/sub/l1
diff-pack: $SCRATCH/w-chain: nothing packed: diff-pack -u would refuse the paths above
EOF

(checkout w-pkg && mv vllm pkg && ln -s pkg vllm && rm -rf docs && printf 'now a file\n' >docs &&
	printf 'x\n' >.k8shazgpu-pack) || { echo "Bail out! no w-pkg"; exit 1; }
check_output 'vllm/ itself replaced by a link, a directory by a file, a name diff-pack keeps: 7' 'refused w-pkg' <<EOF
exit 7
diff-pack: .k8shazgpu-pack: path escapes the tree: a name diff-pack keeps for itself
diff-pack: docs: a directory in the base, a file in the work tree: diff-pack -u replaces no directory
diff-pack: vllm: a directory in the base, a symbolic link in the work tree: diff-pack -u replaces no directory
diff-pack: $SCRATCH/w-pkg: nothing packed: diff-pack -u would refuse the paths above
EOF

# Packed: a directory that only HEAD had, replaced by a link to an
# ignored directory inside (its marker read by nothing); loops; links
# whose targets climb only lexically.
(checkout w-ok && mkdir vllm/loc && printf 'loc\n' >vllm/loc/a.py && git add -A && git commit -qm loc &&
	printf 'private/\n' >>.git/info/exclude && mkdir vllm/private &&
	echo "OUTSIDE-MARKER private" >vllm/private/a.py && rm -r vllm/loc && ln -s private vllm/loc &&
	ln -s l2 vllm/l1 && ln -s l1 vllm/l2 && ln -s sub/../sub/a.py vllm/same &&
	ln -s vllm/sub top && ln -s top/../.. docs/through && ln -s up/docs/guide.md docs/g) ||
	{ echo "Bail out! no w-ok"; exit 1; }
check_output 'links inside, loops, and a directory of HEAD now a link: packed, nothing beneath read' '
	diff-pack -C w-ok -o ok.pack -k ok -n ns >ok.out 2>ok.err; echo "exit $?"; cat ok.err
	manifest ok.pack | jq -r ".entries[] | [.op, .path, .target] | join(\" \")"
	grep -c OUTSIDE-MARKER ok.pack
	head -n 1 ok.out | jq -r ".binaryData[\"pack.000\"]" | base64 -d | grep -c OUTSIDE-MARKER' <<'EOF'
exit 0
link docs/g up/docs/guide.md
link docs/through top/../..
link top vllm/sub
link vllm/l1 l2
link vllm/l2 l1
link vllm/loc private
link vllm/same sub/../sub/a.py
0
0
EOF
mkdir -p ok3/tree && git -C up3.git archive HEAD | tar -x -C ok3/tree && mv ok3/tree/vllm ok3/pkg
check_output 'and diff-pack -u applies what pack mode let through' '
	diff-pack -u -f ok.pack -t ok3/tree -P ok3/pkg | jq -c "[.link, .put, .del]" &&
	readlink ok3/tree/docs/through ok3/pkg/loc' <<'EOF'
[7,0,0]
top/../..
private
EOF

# ---- round trip: the pack applied onto a copy of the base

BASE=$C3
mkdir -p rt/tree && git -C up.git archive "$C3" | tar -x -C rt/tree &&
	mv rt/tree/vllm rt/pkg
check 'the pack applied with -u onto the base gives the work tree' '
	diff-pack -u -f p1.pack -t rt/tree -P rt/pkg -q &&
	mv rt/pkg rt/tree/vllm &&
	(cd work && git ls-files -co --exclude-standard | grep -v -e "^vllm/hid.py\$" -e "^vllm/au.py\$" | LC_ALL=C sort) >want &&
	(cd rt/tree && find . \( -type f -o -type l \) ! -name .k8shazgpu-pack | sed "s|^\./||" | grep -v -e "^vllm/hid.py\$" -e "^vllm/au.py\$" | LC_ALL=C sort) >got &&
	diff -u want got &&
	while read -r p; do
		if [ -L "work/$p" ]; then [ "$(readlink "work/$p")" = "$(readlink "rt/tree/$p")" ] || exit 1
		else cmp "work/$p" "rt/tree/$p" && [ "$(find "work/$p" -perm -u+x)" = "$(cd rt/tree && find "./$p" -perm -u+x | sed "s|^\./|work/|")" ] || exit 1; fi
	done <want'

done_testing
