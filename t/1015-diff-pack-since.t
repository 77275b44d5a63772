#!/bin/sh
# diff-pack's delta packs, with no cluster: a full pack of t/vllmrepo's
# developer clone applied with -u -S onto the base's tree and package
# directory keeps a state (the blob and mode of every path it changed);
# --since that state packs nothing when nothing changed, only an edit
# (its base blob the pod's, not the base's) when one file changed, and
# the base's bytes back when an edit is undone; -u of such a delta
# brings the tree to the work tree's files exactly. A file changed
# behind the state's back makes -u refuse the delta (6) with every file
# as it was; a link out of the package directory is refused by --since
# (7) before a pack is made.
. "$(dirname "$0")/lib.sh"
command -v git >/dev/null 2>&1 || skip_all 'no git'
. "$TOP/t/vllmrepo"
vr_upstream "$SCRATCH/r" >/dev/null 2>up.err || { echo "Bail out! vr_upstream: $(tail -n 2 up.err)"; exit 1; }
vr_clone "$SCRATCH/r" "file://$SCRATCH/r/srv/vllm.git" >/dev/null 2>cl.err || { echo "Bail out! vr_clone: $(tail -n 2 cl.err)"; exit 1; }
DEV=$SCRATCH/r/dev
# the image: the base's tree, its vllm/ as the installed package
mkdir tree pkg
git -C r/srv/vllm.git archive "$(cat r/base.sha)" | tar -x -C tree
mv tree/vllm/* pkg/ && rmdir tree/vllm
# files DIR...: every file's mode and sha256 under the dirs, sorted
files() { find "$@" \( -type f -o -type l \) ! -name '.k8shazgpu-*' | LC_ALL=C sort | while IFS= read -r f; do
	if [ -L "$f" ]; then echo "link $(readlink "$f") $f"; else echo "$(stat -c %a "$f") $(sha256sum <"$f" | cut -c1-16) $f"; fi; done; }
since() { (cd "$DEV" && diff-pack --since "$SCRATCH/state.json" -o "$SCRATCH/$1") | jq -c '[.files, .image]'; }
apply() { diff-pack -u -f "$1" -t tree -P pkg -S state.json | jq -c '[.put, .link, .del, .skipped]'; }

check_output 'the full pack applied with -S: its record, and a state of its 16 paths on the base' \
	'(cd "$DEV" && diff-pack -o "$SCRATCH/full" >/dev/null) && apply full &&
	 jq -c "[.kind, .base == \"$(cat r/base.sha)\", (.files | length), .files[\"tests/test_old.py\"], .files[\"tools/check.sh\"].mode]" state.json' <<'EOF'
[11,2,3,0]
["pack-state",true,16,null,"100755"]
EOF
check_output '--since: nothing changed, an empty pack (no image: the base is the state'"'"'s)' 'since d0' <<'EOF'
[{"put":0,"link":0,"del":0},null]
EOF
echo 'EDITED = 1' >>"$DEV/vllm/config.py"
check_output '--since after one edit: that file alone, its base blob what the pod holds' \
	'since d1 && sed -n 2p d1 | jq -c ".entries[] | [.path, .base_blob == \"$(git hash-object --no-filters pkg/config.py)\"]"' <<'EOF'
[{"put":1,"link":0,"del":0},null]
["vllm/config.py",true]
EOF
check_output 'the delta applied: the package file is the work tree'"'"'s' \
	'apply d1 && cmp pkg/config.py "$DEV/vllm/config.py" && echo same' <<'EOF'
[1,0,0,0]
same
EOF
git -C "$DEV" checkout -q -- tools/check.sh
check_output 'an edit undone (a chmod +x) comes back as the base'"'"'s bytes and mode' \
	'since d2 && apply d2 && stat -c %a tree/tools/check.sh && since d3' <<'EOF'
[{"put":1,"link":0,"del":0},null]
[1,0,0,0]
644
[{"put":0,"link":0,"del":0},null]
EOF
echo '# changed in the pod' >>pkg/config.py
files tree pkg >before
echo 'AGAIN = 1' >>"$DEV/vllm/config.py"
echo 'NEW = 1' >"$DEV/vllm/brand_new.py"
check_output 'a file changed behind the state'"'"'s back: -u refuses the delta (6) and writes nothing' \
	'since d4; diff-pack -u -f d4 -t tree -P pkg -S state.json 2>err; echo "status $?"; sed "s/blob [0-9a-f]\{40\}/blob B/g" err;
	 files tree pkg | cmp - before && echo "every file as it was"' <<'EOF'
[{"put":2,"link":0,"del":0},null]
status 6
diff-pack: pkg/config.py: base blob mismatch: expected blob B, found blob B
diff-pack: d4: nothing written
every file as it was
EOF
ln -s ../../../../etc "$DEV/vllm/escape"
check_output 'a link out of the package directory: --since refuses it (7), no pack made' \
	'(cd "$DEV" && diff-pack --since "$SCRATCH/state.json" -o "$SCRATCH/d5") 2>err; echo "status $?"; sed "s|$SCRATCH|SCRATCH|" err; test -e d5 || echo "no pack"' <<'EOF'
status 7
diff-pack: vllm/escape: link target ../../../../etc escapes the tree: a target that leaves the package directory
diff-pack: SCRATCH/r/dev: nothing packed: diff-pack -u would refuse the paths above
no pack
EOF
check_output '--since takes no -b, and a state that is no state is refused (5)' \
	'diff-pack --since state.json -b main 2>&1 | head -n 1; echo "{}" >bad.json; (cd "$DEV" && diff-pack --since "$SCRATCH/bad.json") 2>err; echo "status $?"; sed "s|$SCRATCH|SCRATCH|" err' <<'EOF'
diff-pack: --since takes the base of the pod's state: no -b, --fetch, -i, -r or --check
status 5
diff-pack: SCRATCH/bad.json: not a pack state (kind, base, files)
EOF
done_testing
