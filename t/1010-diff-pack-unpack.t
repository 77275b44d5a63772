#!/bin/sh
# diff-pack's unpack half (tools/diff-pack/dp_apply) through t/unit/dp_apply: packs
# built here byte by byte as diff-pack(1) describes them, applied onto a
# tree and a package directory found as in an image; then every way a
# pack can be corrupt (5), not match the image (6) or try to leave its
# tree (7), each leaving every file as it was. Link targets are resolved
# where the pack leaves them, through every link on the way (the pack's
# and the image's): a chain that climbs out together is refused, a loop
# or a target that only looks like it climbs is applied. Every read is
# bounded: -f /dev/zero, and an index.json that lies about sizes, are 5.
. "$(dirname "$0")/lib.sh"

# The pack must set the modes itself, whatever the umask.
umask 077
BASE=1111111111111111111111111111111111111111
HEAD=2222222222222222222222222222222222222222
ROOT=$SCRATCH/root
PKG=$ROOT/usr/local/lib/python3.12/dist-packages/vllm
export K8SHAZGPU_PKG_ROOT=$ROOT
unset VIRTUAL_ENV

size() { wc -c <"$1" | tr -d ' '; }
sha() { sha256sum <"$1" | cut -d' ' -f1; }
blob() { git hash-object --no-filters "$1"; }
lblob() { printf %s "$1" | git hash-object --no-filters --stdin; }
q() { if [ "$1" = null ]; then echo null; else echo "\"$1\""; fi; }

# begin; put PATH FILE MODE BASE; link PATH TARGET BASE; del PATH BASE;
# pack OUT: a pack of those entries, in the order given.
begin() { : >data && ents=; }
add() { ents="$ents${ents:+,}$1"; }
put() {
	add "{\"op\":\"put\",\"path\":\"$1\",\"mode\":\"$3\",\"size\":$(size "$2"),\"offset\":$(size data),\"sha256\":\"$(sha "$2")\",\"base_blob\":$(q "$4")}"
	cat "$2" >>data
}
link() { add "{\"op\":\"link\",\"path\":\"$1\",\"target\":\"$2\",\"base_blob\":$(q "$3")}"; }
del() { add "{\"op\":\"del\",\"path\":\"$1\",\"base_blob\":\"$2\"}"; }
pack() {
	{
		printf 'K8SHAZGPU-PACK 1\n'
		printf '{"kind":"pack","version":1,"base":"%s","head":"%s","data_size":%s,"entries":[%s]}\n' \
			$BASE $HEAD "$(size data)" "$ents"
		cat data
	} >"$1"
}

# chunks PACK DIR N: PACK in chunks of N bytes with its index.json, laid
# out as a projected ConfigMap volume mounts them.
chunks() {
	rm -rf "$2" && mkdir -p "$2/..2025_01_01_00_00_00.1" || return 1
	split -b "$3" -d -a 3 "$1" "$2/..2025_01_01_00_00_00.1/pack."
	cj=
	for f in "$2"/..2025_*/pack.*; do
		cj="$cj${cj:+,}{\"key\":\"${f##*/}\",\"size\":$(size "$f"),\"sha256\":\"$(sha "$f")\"}"
	done
	printf '{"kind":"pack-index","version":1,"sha256":"%s","size":%s,"chunks":[%s]}' \
		"$(sha "$1")" "$(size "$1")" "$cj" >"$2/..2025_01_01_00_00_00.1/index.json"
	ln -s ..2025_01_01_00_00_00.1 "$2/..data"
	for f in "$2"/..2025_*/*; do ln -s "..data/${f##*/}" "$2/${f##*/}"; done
}

# state DIR: every path under DIR with its type, mode, size, link target
# and content hash; snap adds the times, to show nothing was touched.
state() {
	(cd "$1" && find . -printf '%p %y %m %s %l\n' | sort &&
		find . -type f -exec sha256sum {} + | sort)
}
snap() { state "$1" && (cd "$1" && find . -printf '%p %T@ %C@\n' | sort); }

# image TREE: the tree and package of the base, as an image holds them
printf 'old readme\n' >readme.old
printf 'old text\n' >old.txt
printf 'data\n' >data.old
printf '#!/bin/sh\necho run\n' >run.sh
printf 'engine = 1\n' >engine.old
image() {
	rm -rf "$1" "$ROOT" && mkdir -p "$1/docs" "$1/tools" "$PKG" \
		"$ROOT/usr/local/lib/python3.9/dist-packages/vllm" &&
		cp readme.old "$1/README" && cp old.txt "$1/docs/old.txt" &&
		cp data.old "$1/data" && cp run.sh "$1/tools/run.sh" &&
		cp old.txt "$1/keep.txt" && ln -s README "$1/lnk" &&
		ln -s README "$1/conf" && chmod 644 "$1/tools/run.sh" &&
		: >"$PKG/__init__.py" && cp engine.old "$PKG/engine.py" &&
		: >"$ROOT/usr/local/lib/python3.9/dist-packages/vllm/__init__.py"
}

# The pack of the clean apply: every kind of change, to both roots.
printf 'new readme\n' >readme.new
printf 'conf=1\n' >conf.new
printf 'in a new directory\n' >new.txt
printf 'deep\r\nCRLF kept\r\n' >deep.txt
printf 'engine = 2\n' >engine.new
printf 'def op():\n    pass\n' >ops.py
printf 'bin\000ary\377\001\n' >x.bin
begin
put README readme.new 100644 "$(blob readme.old)"
put conf conf.new 100644 "$(lblob README)"
del data "$(blob data.old)"
put data/new.txt new.txt 100644 null
put docs/new/deep.txt deep.txt 100644 null
del docs/old.txt "$(blob old.txt)"
link lnk docs/new/deep.txt "$(lblob README)"
link newlink README null
put tools/run.sh run.sh 100755 "$(blob run.sh)"
put vllm/engine.py engine.new 100644 "$(blob engine.old)"
put vllm/ops/new.py ops.py 100644 null
put vllm/x.bin x.bin 100644 null
pack good.pack
H=$(sha good.pack)
chunks good.pack vol 300

image tree
check_output 'a pack in chunks applies to the tree and the package found' \
	'unit dp_apply -d vol -t tree' <<EOF
{"kind":"unpack","sha256":"$H","tree":"tree","pkgdir":"$PKG","put":8,"link":2,"del":2,"skipped":0,"already":false}
EOF
check 'the files are the pack'"'"'s, byte for byte' '
	cmp tree/README readme.new && cmp tree/conf conf.new &&
	cmp tree/data/new.txt new.txt && cmp tree/docs/new/deep.txt deep.txt &&
	cmp tree/tools/run.sh run.sh && cmp tree/keep.txt old.txt &&
	cmp "$PKG/engine.py" engine.new && cmp "$PKG/ops/new.py" ops.py &&
	cmp "$PKG/x.bin" x.bin && [ -f "$PKG/__init__.py" ]'
check_output 'modes, link targets, deletes, directories and the marker' '
	cd tree && stat -c "%n %A" README conf data data/new.txt docs/new \
		docs/new/deep.txt tools/run.sh "$PKG/ops" "$PKG/ops/new.py" |
		sed "s|$PKG|PKG|" &&
	readlink lnk newlink && ls -A docs && cat .k8shazgpu-pack' <<EOF
README -rw-r--r--
conf -rw-r--r--
data drwxr-xr-x
data/new.txt -rw-r--r--
docs/new drwxr-xr-x
docs/new/deep.txt -rw-r--r--
tools/run.sh -rwxr-xr-x
PKG/ops drwxr-xr-x
PKG/ops/new.py -rw-r--r--
docs/new/deep.txt
README
new
$H
EOF
check 'nothing is left under the temporary name' \
	'[ -z "$(find tree "$ROOT" -name ".k8shazgpu-tmp*")" ]'
state tree >applied.state
state "$PKG" >applied.pkg

snap tree >before && snap "$ROOT" >>before
check_output 'a second run finds the marker and stops at once' \
	'unit dp_apply -d vol -t tree' <<EOF
{"kind":"unpack","sha256":"$H","tree":"tree","pkgdir":"$PKG","put":0,"link":0,"del":0,"skipped":0,"already":true}
EOF
check 'and touches nothing' 'snap tree >after && snap "$ROOT" >>after && cmp before after'
check_output 'the same from the pack file with -s and -q: no record' \
	'unit dp_apply -f good.pack -s "$H" -t tree -q; echo "exit $?"' <<EOF
exit 0
EOF

check_output 'with -s, the marker alone answers: no pack read' \
	'unit dp_apply -d nowhere -s "$H" -t tree' <<EOF
{"kind":"unpack","sha256":"$H","tree":"tree","pkgdir":"$PKG","put":0,"link":0,"del":0,"skipped":0,"already":true}
EOF
check_output '-s not a sha256: 2' 'unit dp_apply -f good.pack -s abc -t tree 2>&1; echo "exit $?"' <<EOF
dp_apply: -s abc: not a sha256 (64 hex digits)
exit 2
EOF

# A run that died half-way: two entries done, a temporary file left.
image crash
cp readme.new crash/README && chmod 644 crash/README && rm crash/docs/old.txt && : >crash/.k8shazgpu-tmp
check_output 'a run after a crash skips what is done and finishes' \
	'unit dp_apply -f good.pack -t crash' <<EOF
{"kind":"unpack","sha256":"$H","tree":"crash","pkgdir":"$PKG","put":7,"link":2,"del":1,"skipped":2,"already":false}
EOF
check 'to the same files as the clean run' \
	'state crash | cmp - applied.state && state "$PKG" | cmp - applied.pkg'

# Base mismatch: the image's README is not the base's.
image mis
printf 'edited in the image\n' >mis/README
snap mis >before && snap "$ROOT" >>before
check_output 'a file not the base'"'"'s: 6, named with both blob ids' \
	'unit dp_apply -f good.pack -t mis 2>&1; echo "exit $?"' <<EOF
dp_apply: mis/README: base blob mismatch: expected blob $(blob readme.old), found blob $(blob mis/README)
dp_apply: good.pack: nothing written
exit 6
EOF
check 'nothing written' 'snap mis >after && snap "$ROOT" >>after && cmp before after'

image mis && rm "$PKG/engine.py" && mkdir mis/newlink && printf 'x\n' >mis/docs/new
check_output 'every mismatch is named: gone, in the way, a directory' \
	'unit dp_apply -f good.pack -t mis 2>&1; echo "exit $?"' <<EOF
dp_apply: mis/docs/new/deep.txt: base blob mismatch: expected nothing, found a non-directory at mis/docs/new
dp_apply: mis/newlink: base blob mismatch: expected nothing, found a directory
dp_apply: $PKG/engine.py: base blob mismatch: expected blob $(blob engine.old), found nothing
dp_apply: good.pack: nothing written
exit 6
EOF

# A pack that names an already-applied state is not a mismatch: the
# mode alone differing is applied. An image's file over 256 MiB where
# the pack puts one is no base file, and is not read.
image modes
chmod 755 modes/tools/run.sh
begin
put tools/run.sh run.sh 100644 "$(blob run.sh)"
pack mode.pack
check_output 'a mode change alone is applied' \
	'unit dp_apply -f mode.pack -t modes -P "$PKG" && stat -c %A modes/tools/run.sh' <<EOF
{"kind":"unpack","sha256":"$(sha mode.pack)","tree":"modes","pkgdir":"$PKG","put":1,"link":0,"del":0,"skipped":0,"already":false}
-rw-r--r--
EOF
image modes && truncate -s 300M modes/tools/run.sh
check_output 'a file of the image over 256 MiB: 6, not read' \
	'unit dp_apply -f mode.pack -t modes -P "$PKG" 2>&1; echo "exit $?"' <<EOF
dp_apply: modes/tools/run.sh: base blob mismatch: expected blob $(blob run.sh), found a file of over 268435456 bytes
dp_apply: mode.pack: nothing written
exit 6
EOF

# Escapes: each pack below tries to leave esc/in/tree; esc/out must
# stay empty and the tree as it was.
# The image there holds two links of its own: lnk, absolute, out of it,
# and a/up -> .., which stays inside alone (a is also the package).
escape() { # DESC PACK EXPECTED-STDERR-LINE...
	desc=$1 p=$2
	shift 2
	rm -rf esc && mkdir -p esc/in/tree/a esc/out &&
		ln -s "$SCRATCH/esc/out" esc/in/tree/lnk &&
		ln -s .. esc/in/tree/a/up && snap esc >before
	for l; do printf '%s\n' "$l"; done >expect.esc
	echo "exit 7" >>expect.esc
	check_output "$desc" "unit dp_apply -f $p -t esc/in/tree -P esc/in/tree/a 2>&1; echo \"exit \$?\"" <expect.esc
	check "$desc: nothing written" 'snap esc >after && cmp before after && [ -z "$(ls -A esc/out)" ]'
}
printf 'pwned\n' >pwn
for p in ../../etc/passwd /etc/passwd a/../../x a//b ./a a/ .k8shazgpu-pack \
	'vllm/..' 'a\u0000b'; do
	begin
	put "$p" pwn 100644 null
	pack esc.pack
	case $p in
	*'\u0000'*) why="a NUL byte" shown=a ;;
	/*) why="an absolute path" shown=$p ;;
	*..*) why="a '..' component" shown=$p ;;
	*//* | */) why="an empty component" shown=$p ;;
	./*) why="a '.' component" shown=$p ;;
	*) why="a name diff-pack keeps for itself" shown=$p ;;
	esac
	escape "path $p: 7" esc.pack \
		"dp_apply: esc.pack: entry 1 ($shown): path escapes the tree: $why"
done
begin && put lnk/x pwn 100644 null && pack esc.pack
escape 'a symlink in the tree on the way: 7' esc.pack \
	'dp_apply: esc/in/tree/lnk: a symbolic link in the way of entry 1 (lnk/x)' \
	'dp_apply: esc.pack: nothing written'
# an absolute target is refused as the manifest is read; the others
# once resolved, every link that escapes named
for t in ../../.. /etc ../a ..; do
	begin && link a/b/l "$t" null && link vllm/l "$t" null && pack esc.pack
	tree="dp_apply: esc.pack: entry 1 (a/b/l): link target $t escapes the tree"
	pkg="dp_apply: esc.pack: entry 2 (vllm/l): link target $t escapes the tree"
	case $t in
	/*) set -- "$tree: an absolute target" ;;
	../../..) set -- "$tree: a target that leaves the tree" \
		"$pkg: a target that leaves the package directory" ;;
	*) set -- "$pkg: a target that leaves the package directory" ;;
	esac
	case $t in /*) ;; *) set -- "$@" 'dp_apply: esc.pack: nothing written' ;; esac
	escape "link target $t: 7" esc.pack "$@"
done

# Each link of a pair stays inside alone; followed one through the
# other, they climb out.
begin && link a/l1 .. null && link a/y/l2 ../l1/.. null &&
	link vllm/a/l1 .. null && link vllm/a/y/l2 ../l1/.. null && pack esc.pack
escape 'a chain of links that climbs out together, in both roots: 7' esc.pack \
	'dp_apply: esc.pack: entry 2 (a/y/l2): link target ../l1/.. escapes the tree: a target that leaves the tree through the link a/l1' \
	'dp_apply: esc.pack: entry 4 (vllm/a/y/l2): link target ../l1/.. escapes the tree: a target that leaves the package directory through the link vllm/a/l1' \
	'dp_apply: esc.pack: nothing written'
begin && link a/l1 ../.. null && link a/y/l2 ../l1/../.. null && pack esc.pack
escape 'the pair a/l1 -> ../.., a/y/l2 -> ../l1/../..: 7' esc.pack \
	'dp_apply: esc.pack: entry 1 (a/l1): link target ../.. escapes the tree: a target that leaves the tree' \
	'dp_apply: esc.pack: entry 2 (a/y/l2): link target ../l1/../.. escapes the tree: a target that leaves the tree through the link a/l1' \
	'dp_apply: esc.pack: nothing written'
# through the image's own links: a/up -> .. climbs from the package
begin && link a/z/l ../up/.. null && link vllm/z/l ../up/.. null &&
	link x lnk/f null && pack esc.pack
escape 'a target through a link of the image: 7' esc.pack \
	'dp_apply: esc.pack: entry 1 (a/z/l): link target ../up/.. escapes the tree: a target that leaves the tree through the link a/up' \
	'dp_apply: esc.pack: entry 2 (vllm/z/l): link target ../up/.. escapes the tree: a target that leaves the package directory through the link vllm/up' \
	'dp_apply: esc.pack: entry 3 (x): link target lnk/f escapes the tree: a target through the link lnk, whose target is absolute' \
	'dp_apply: esc.pack: nothing written'
begin && link a/l1 './/..//b/' null && link a/l2 './..//.././x/' null &&
	link a/l3 'missing/../../..' null && pack esc.pack
escape "targets with //, '.', a trailing / or a missing directory, read as the kernel would: 7" esc.pack \
	'dp_apply: esc.pack: entry 2 (a/l2): link target ./..//.././x/ escapes the tree: a target that leaves the tree' \
	'dp_apply: esc.pack: entry 3 (a/l3): link target missing/../../.. escapes the tree: a target that leaves the tree' \
	'dp_apply: esc.pack: nothing written'

# What stays inside, resolved, is applied: loops (they lead nowhere),
# and a target that climbs only lexically (p/.. is d, p being d/sub).
printf 'x\n' >x.py
begin && link d/loop ../d/loop null && put d/sub/x.py x.py 100644 null &&
	link l1 l2 null && link l2 l1 null && link p d/sub null &&
	link q p/../.. null && link self self null && link vllm/q q null && pack ok.pack
rm -rf acc && mkdir -p acc/tree acc/pkg
check_output 'loops and a target inside through a link are applied' '
	unit dp_apply -f ok.pack -t acc/tree -P acc/pkg | jq -c "[.put, .link, .del]" &&
	for l in d/loop l1 l2 p q self; do printf "%s %s\n" $l "$(readlink acc/tree/$l)"; done &&
	readlink acc/pkg/q && cat acc/tree/p/x.py' <<'EOF'
[1,7,0]
d/loop ../d/loop
l1 l2
l2 l1
p d/sub
q p/../..
self self
q
x
EOF

# Corrupt packs: 5, the input and the place named.
corrupt() { # DESC ARGS EXPECTED-STDERR-LINE
	image cor && snap cor >before
	printf '%s\nexit 5\n' "$3" >expect.cor
	check_output "$1" "unit dp_apply $2 -t cor 2>&1; echo \"exit \$?\"" <expect.cor
	check "$1: nothing written" 'snap cor >after && cmp before after'
}
good=$(size good.pack)
head -c $((good - 5)) good.pack >bad.pack
hdr=$(($(head -n 2 good.pack | wc -c)))
corrupt 'a truncated pack' '-f bad.pack' \
	"dp_apply: bad.pack: truncated: data_size $((good - hdr)), but $((good - hdr - 5)) bytes of data"
cp good.pack bad.pack && printf 'X' | dd of=bad.pack bs=1 seek=$((hdr + 3)) conv=notrunc 2>/dev/null
corrupt 'a byte changed in the data' '-f bad.pack' \
	"dp_apply: bad.pack: byte $hdr: entry 1 (README): content sha256 $(printf 'newXreadme\n' | sha256sum | cut -d' ' -f1), the manifest says $(sha readme.new)"
corrupt 'the same with -s: the pack'"'"'s hash' "-f bad.pack -s $H" \
	"dp_apply: bad.pack: sha256 $(sha bad.pack), expected $H (-s)"
{ printf 'K8SHAZGPU-PACK 2\n' && tail -n +2 good.pack; } >bad.pack
corrupt 'another version' '-f bad.pack' 'dp_apply: bad.pack: not a version 1 pack'
{ printf 'PK\003\004' && cat good.pack; } >bad.pack
corrupt 'no magic line' '-f bad.pack' \
	'dp_apply: bad.pack: not a diff-pack pack (no "K8SHAZGPU-PACK 1" line)'
printf 'K8SHAZGPU-PACK 1\n{"kind":"pack","version":1,"base":"%s",,}\n' $BASE >bad.pack
corrupt 'bad JSON: its byte named' '-f bad.pack' \
	"dp_apply: bad.pack: byte 94: manifest: invalid JSON: string or '}' expected near ','"
printf 'K8SHAZGPU-PACK 1\n{"kind":"pack","version":1,"base":"%s","head":"%s","data_size":0,"entries":[],"x":1}\n' $BASE $HEAD >bad.pack
corrupt 'an unknown field' '-f bad.pack' 'dp_apply: bad.pack: manifest: unknown field "x"'
begin && link b README null && link a README null && pack bad.pack
corrupt 'paths out of order' '-f bad.pack' \
	'dp_apply: bad.pack: entry 2 (a): not sorted after entry 1 (b)'
begin && link a README null && link a README null && pack bad.pack
corrupt 'a path twice' '-f bad.pack' \
	'dp_apply: bad.pack: entry 2 (a): the same path as entry 1 (a)'
begin && put a pwn 100644 null && put a/b pwn 100644 null && pack bad.pack
corrupt 'a file under a file' '-f bad.pack' \
	'dp_apply: bad.pack: entry 2 (a/b): under entry 1 (a), which is no directory'
begin && put a pwn 100664 null && pack bad.pack
corrupt 'a mode git has no file of' '-f bad.pack' \
	'dp_apply: bad.pack: entry 1 (a): "mode": not "100644" or "100755"'
begin && put a pwn 100644 0123 && pack bad.pack
corrupt 'a short base blob' '-f bad.pack' \
	'dp_apply: bad.pack: entry 1 (a): "base_blob": not 40 lowercase hex digits or null'
begin && put a pwn 100644 null && pack bad.pack && sed -i 's/"offset":0/"offset":100/' bad.pack
corrupt 'an offset past the data' '-f bad.pack' \
	'dp_apply: bad.pack: entry 1 (a): offset 100 + size 6 past the data'"'"'s 6 bytes'
begin && put a pwn 100644 null && put b pwn 100644 null && pack bad.pack &&
	sed -i 's/"offset":6/"offset":0/; s/"data_size":12/"data_size":6/' bad.pack && head -c -6 bad.pack >bad2.pack && mv bad2.pack bad.pack
corrupt 'data used twice' '-f bad.pack' \
	'dp_apply: bad.pack: entry 2 (b): offset 0, expected 6 (the data is contiguous, in manifest order)'
begin && put a pwn 100644 null && pack bad.pack && printf 'more' >>bad.pack
corrupt 'bytes past the data' '-f bad.pack' \
	"dp_apply: bad.pack: byte $(($(size bad.pack) - 4)): 4 bytes past the data's end"

chunks good.pack badvol 300 && rm badvol/..data/pack.001
corrupt 'a chunk missing' '-d badvol' 'dp_apply: badvol/pack.001: missing: the pack is incomplete'
chunks good.pack badvol 300 && printf 'X' | dd of=badvol/..data/pack.002 bs=1 seek=7 conv=notrunc 2>/dev/null
corrupt 'a chunk changed' '-d badvol' \
	"dp_apply: badvol/pack.002: sha256 $(sha badvol/pack.002), index.json says $(sha vol/pack.002)"
chunks good.pack badvol 300 && head -c 10 vol/pack.001 >badvol/..data/pack.001
corrupt 'a chunk cut short' '-d badvol' \
	'dp_apply: badvol/pack.001: fewer than the 300 bytes index.json says'
chunks good.pack badvol 300 && sed -i "s/\"sha256\":\"$H\"/\"sha256\":\"$(sha readme.new)\"/" badvol/..data/index.json
corrupt 'index.json'"'"'s hash not the pack'"'"'s' '-d badvol' \
	"dp_apply: badvol/index.json: \"sha256\": $(sha readme.new), but the chunks hold a pack of sha256 $H"
corrupt 'the pack'"'"'s hash not -s'"'"'s' "-d vol -s $(sha readme.new)" \
	"dp_apply: vol: sha256 $H, expected $(sha readme.new) (-s)"
chunks good.pack badvol 300 && sed -i 's/"key":"pack.001"/"key":"pack.009"/' badvol/..data/index.json
corrupt 'a chunk key out of place' '-d badvol' \
	'dp_apply: badvol/index.json: chunks[1]: "key": not "pack.001"'
rm -rf badvol && mkdir badvol
corrupt 'no index.json' '-d badvol' 'dp_apply: badvol/index.json: missing: the pack is incomplete'

# Every read is bounded: no pack is over 256 MiB, and the sizes
# index.json gives are checked against the chunks before any memory is
# given to them.
corrupt '-f /dev/zero: read no further than 256 MiB' '-f /dev/zero' \
	'dp_apply: /dev/zero: over 268435456 bytes, the most a pack may have'
truncate -s 300M huge.pack
corrupt 'a pack file over 256 MiB: not read' '-f huge.pack' \
	'dp_apply: huge.pack: over 268435456 bytes, the most a pack may have'
chunks good.pack badvol 300 &&
	sed -i 's/"size":[0-9]*,"chunks"/"size":1152921504606846976,"chunks"/' badvol/..data/index.json
corrupt 'index.json'"'"'s size a lie past 256 MiB' '-d badvol' \
	'dp_apply: badvol/index.json: "size": 1152921504606846976, over the 268435456 bytes a pack may have'
chunks good.pack badvol 300 &&
	printf '{"kind":"pack-index","version":1,"sha256":"%s","size":200000000,"chunks":[{"key":"pack.000","size":200000000,"sha256":"%s"}]}' \
		"$H" "$H" >badvol/..data/index.json
corrupt 'a chunk'"'"'s size a lie under 256 MiB' '-d badvol' \
	'dp_apply: badvol/pack.000: fewer than the 200000000 bytes index.json says'
chunks good.pack badvol 300 && sed -i 's/"key":"pack.001","size":[0-9]*/"key":"pack.001","size":5000/' badvol/..data/index.json
corrupt 'chunks holding more than index.json'"'"'s size' '-d badvol' \
	'dp_apply: badvol/index.json: chunks[1]: "size": the chunks hold more than the '"$(size good.pack)"' bytes "size" says'
chunks good.pack badvol 300 && rm badvol/..data/pack.001 && mkdir badvol/..data/pack.001
corrupt 'a chunk that is no regular file' '-d badvol' 'dp_apply: badvol/pack.001: not a regular file'

# Where the pack goes.
image t3 && rm -rf "$ROOT"
check_output 'no package directory for vllm/ entries: 3, the places named' \
	'unit dp_apply -f good.pack -t t3 2>&1; echo "exit $?"' <<EOF
dp_apply: no vllm package directory for the pack's vllm/ entries: none of $ROOT/opt/venv/lib/python3*/site-packages/vllm, $ROOT/usr/local/lib/python3*/dist-packages/vllm, $ROOT/usr/local/lib/python3*/site-packages/vllm, $ROOT/usr/lib/python3*/dist-packages/vllm, $ROOT/usr/lib/python3/dist-packages/vllm holds an __init__.py; name it with -P
exit 3
EOF
check_output 'no tree: 3' 'unit dp_apply -f good.pack -t nowhere 2>&1; echo "exit $?"' <<EOF
dp_apply: nowhere: no such directory (the tree)
exit 3
EOF
image t3 && mkdir -p "$ROOT/venv/lib/python3.11/site-packages/vllm" &&
	cp -R "$PKG/." "$ROOT/venv/lib/python3.11/site-packages/vllm/"
check_output '$VIRTUAL_ENV is searched first' \
	'VIRTUAL_ENV=/venv unit dp_apply -f good.pack -t t3 -q &&
	cat "$ROOT/venv/lib/python3.11/site-packages/vllm/engine.py" "$PKG/engine.py"' <<EOF
engine = 2
engine = 1
EOF

# -c: the pack judged as -u judges it where no image is needed (the
# client's check before a run is made): no tree is opened, nothing is
# written; the record names the pack and its base and head.
check_output '-c: a good pack, no tree: its record, 0' \
	'unit dp_apply -c -f good.pack -t nowhere | jq -c "[.kind, .sha256 == \"$H\", .base, .head]"; echo "exit $?"' <<EOF
["pack-check",true,"$BASE","$HEAD"]
exit 0
EOF
check_output '-c: chunks checked against -s' \
	'unit dp_apply -c -d vol -s "$(printf %064d 0)" 2>&1; echo "exit $?"' <<EOF
dp_apply: vol: sha256 $H, expected $(printf %064d 0) (-s)
exit 5
EOF
begin && link a/l1 .. null && link a/y/l2 ../l1/.. null && pack esc.pack
check_output "-c: links that climb out together, refused as -u refuses them: 7" \
	'unit dp_apply -c -f esc.pack 2>&1; echo "exit $?"' <<'EOF'
dp_apply: esc.pack: entry 2 (a/y/l2): link target ../l1/.. escapes the tree: a target that leaves the tree through the link a/l1
dp_apply: esc.pack: refused, as diff-pack -u would refuse it
exit 7
EOF
begin && put ../x pwn 100644 null && pack esc.pack
check_output "-c: a path out of the tree: 7" 'unit dp_apply -c -f esc.pack 2>&1; echo "exit $?"' <<'EOF'
dp_apply: esc.pack: entry 1 (../x): path escapes the tree: a '..' component
exit 7
EOF
begin && link a/z/l ../up/.. null && pack esc.pack
check_output "-c: a target that climbs only through the image's links is the pod's to judge: 0" \
	'unit dp_apply -c -q -f esc.pack 2>&1; echo "exit $?"' <<'EOF'
exit 0
EOF

mkdir bin
check_output '--install copies the running program, mode 0755' \
	'unit dp_apply -I bin/diff-pack && cmp bin/diff-pack "$BUILD/unit/dp_apply" && stat -c %a bin/diff-pack' <<EOF
755
EOF
done_testing
