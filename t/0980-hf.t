#!/bin/sh
# lib/hf (models over the Hugging Face hub protocol) through t/unit/hf,
# against t/hubserve on 127.0.0.1: a repository with a nested directory,
# small git files and LFS files (redirected to a CDN host name of their
# own), file lists paged 2 entries a page; the exact cache tree
# huggingface_hub reads (blobs named by sha256 or git blob sha1,
# relative symlinks, refs without a newline, trees/COMMIT.json); a
# second fetch that downloads nothing; progress and a caller's stop;
# corrupt, truncated and resumed, unauthorized, missing, rate-limited,
# failing and stalled transfers; hostile paths in the file list; a
# revision with slashes; a branch that moves, the old snapshot kept until
# hf_prune or hf_remove; removal down to nothing.
#
# huggingface_hub is not installed here (and PyPI is out of reach), so
# its offline reading of the cache is checked by offline.py below, which
# follows the rules caches.md states for it: refs/REV -> COMMIT (read
# whole, no newline), snapshots/COMMIT exists, trees/COMMIT.json has
# format_version 1 and every file it lists exists in the snapshot.
. "$(dirname "$0")/lib.sh"

EVENTUALLY_HZ=10
# hf: the driver; valgrind's errors (status 99) show in the output, which
# every check compares, even where a pipeline drops the status
hf() {
	unit hf "$@"
	hf_rc=$?
	[ $hf_rc -ne 99 ] || echo "valgrind found errors: status 99"
	return $hf_rc
}

# The repository: commit 1 (r1), the same with config.json and a shard
# changed (r2, where main moves later), a one-file PR (r3); and org/big,
# one file of 6.6 MiB (rb).
mkdir -p r1/weights/shards r3
printf '# tiny\n' >r1/README.md
printf '{"model_type":"opt","hidden_size":8}\n' >r1/config.json
cp r1/README.md r1/weights/README.md
seq 1 20000 >r1/weights/model-00001-of-00002.safetensors
seq 5 30000 >r1/weights/shards/model-00002-of-00002.safetensors
cp -R r1 r2
printf '{"model_type":"opt","hidden_size":16}\n' >r2/config.json
seq 7 30000 >r2/weights/shards/model-00002-of-00002.safetensors
printf 'pr\n' >r3/pr.txt
mkdir rb && seq 1 1000000 >rb/big.bin
C1=ae01128ff9e532f2758c230c64dc6fd94371bc32
C2=b6524bc135a585867acff9eb2ea0ddcc6ccb68b5
C3=614930f569fa41c4c4baf9f16b1dca4cdb98c6c8

PORT=$(free_port)
E=http://127.0.0.1:$PORT
"$TOP/t/hubserve" -p "$PORT" -l hub.log --page 2 --lfs-over 1000 \
	org/tiny=r1 org/tiny@v1=r1 org/tiny@refs/pr/1=r3 org/big=rb >serve.out 2>serve.err 3>&- 4>&- &
serve_pid=$!
trap 'kill $serve_pid 2>/dev/null' EXIT
eventually 30 grep -q '^listening on' serve.out ||
	{ echo "Bail out! hubserve did not start: $(cat serve.err)"; exit 1; }
# ctl: a change to the hub (t/hubserve --ctl does the same, slower)
ctl() { curl -sf --noproxy '*' -o /dev/null --data "$1" "$E/_control"; }
# since: the log lines after the first $1
since() { tail -n "+$(($1 + 1))" hub.log; }
lines() { wc -l <hub.log; }
# show: JSON output with this run's port as PORT
show() { sed "s/$PORT/PORT/g"; }
listing() { (cd "$1" && find . -mindepth 1 -printf '%y %P %l\n' | sort); }
M=models--org--tiny

check_output 'the hub serves r1, r3 and rb at fixed commits' 'cat serve.out' <<EOF
org/tiny@main $C1
org/tiny@v1 $C1
org/tiny@refs/pr/1 $C3
org/big@main 9d44fc2cc06629aa633c70338e3c102b71531042
listening on 127.0.0.1:$PORT
EOF

check_output 'fetch: 5 files from 4 pages of 2 (dirs listed too), LFS files by the CDN host, a shared blob fetched once' '
	hf $E hub org/tiny && cat hub.log' <<EOF
{"reason":"","message":"","resolved":"$C1","files":5,"bytes":277824,"fetched":277824}
GET 127.0.0.1 /api/models/org/tiny/revision/main range=- auth=no
GET 127.0.0.1 /api/models/org/tiny/tree/$C1?recursive=true range=- auth=no
GET 127.0.0.1 /api/models/org/tiny/tree/$C1?recursive=true&cursor=2 range=- auth=no
GET 127.0.0.1 /api/models/org/tiny/tree/$C1?recursive=true&cursor=4 range=- auth=no
GET 127.0.0.1 /api/models/org/tiny/tree/$C1?recursive=true&cursor=6 range=- auth=no
GET 127.0.0.1 /org/tiny/resolve/$C1/README.md range=- auth=no
GET 127.0.0.1 /org/tiny/resolve/$C1/config.json range=- auth=no
GET 127.0.0.1 /org/tiny/resolve/$C1/weights/model-00001-of-00002.safetensors range=- auth=no
GET localhost /cdn/f6351f5ead9a700e34275480b3856ea738122a7c57bdeb744a631251c069587a range=- auth=no
GET 127.0.0.1 /org/tiny/resolve/$C1/weights/shards/model-00002-of-00002.safetensors range=- auth=no
GET localhost /cdn/4c2e4447e6904658d3cb4f15360150f335a044eaf9283d8dc99396781b38590c range=- auth=no
EOF

check_output 'the cache: blobs, relative links one ../ deeper per directory, trees, refs, the blob locks' '
	listing hub' <<EOF
d .locks 
d .locks/$M 
d $M 
d $M/blobs 
d $M/refs 
d $M/snapshots 
d $M/snapshots/$C1 
d $M/snapshots/$C1/weights 
d $M/snapshots/$C1/weights/shards 
d $M/trees 
f .locks/$M/.snapshots.lock 
f .locks/$M/4c2e4447e6904658d3cb4f15360150f335a044eaf9283d8dc99396781b38590c.lock 
f .locks/$M/8e2e871357bef652084a73f7173adc5eb8859a33.lock 
f .locks/$M/b78351205b66d40fc03b0898d892b28b70e4658c.lock 
f .locks/$M/f6351f5ead9a700e34275480b3856ea738122a7c57bdeb744a631251c069587a.lock 
f $M/blobs/4c2e4447e6904658d3cb4f15360150f335a044eaf9283d8dc99396781b38590c 
f $M/blobs/8e2e871357bef652084a73f7173adc5eb8859a33 
f $M/blobs/b78351205b66d40fc03b0898d892b28b70e4658c 
f $M/blobs/f6351f5ead9a700e34275480b3856ea738122a7c57bdeb744a631251c069587a 
f $M/refs/main 
f $M/trees/$C1.json 
l $M/snapshots/$C1/README.md ../../blobs/8e2e871357bef652084a73f7173adc5eb8859a33
l $M/snapshots/$C1/config.json ../../blobs/b78351205b66d40fc03b0898d892b28b70e4658c
l $M/snapshots/$C1/weights/README.md ../../../blobs/8e2e871357bef652084a73f7173adc5eb8859a33
l $M/snapshots/$C1/weights/model-00001-of-00002.safetensors ../../../blobs/f6351f5ead9a700e34275480b3856ea738122a7c57bdeb744a631251c069587a
l $M/snapshots/$C1/weights/shards/model-00002-of-00002.safetensors ../../../../blobs/4c2e4447e6904658d3cb4f15360150f335a044eaf9283d8dc99396781b38590c
EOF

# blob_names: each blob's name against its content, computed here
blob_names() {
	for b in "$1"/blobs/*; do
		n=$(basename "$b")
		case ${#n} in
		64) got=$(sha256sum <"$b" | cut -c1-64) kind=sha256 ;;
		40) got=$(git hash-object "$b") kind=sha1 ;;
		*) got=? kind=? ;;
		esac
		[ "$got" = "$n" ] && echo "$kind ok" || echo "$n: $kind $got"
	done
}
check_output 'each blob is named by its sha256 (LFS) or git blob sha1' '
	blob_names hub/$M' <<EOF
sha256 ok
sha1 ok
sha1 ok
sha256 ok
EOF

check_output 'refs/main is the commit with no newline; trees/COMMIT.json as huggingface_hub writes it (json.dump, indent 1)' '
	wc -c <hub/$M/refs/main && cat hub/$M/refs/main && echo &&
	cat hub/$M/trees/$C1.json && echo &&
	python3 -c "import json, sys; t = open(sys.argv[1]).read(); print(json.dumps(json.loads(t), indent=1) == t)" hub/$M/trees/$C1.json' <<EOF
40
$C1
{
 "format_version": 1,
 "files": {
  "README.md": {
   "size": 7,
   "blob_id": "8e2e871357bef652084a73f7173adc5eb8859a33"
  },
  "config.json": {
   "size": 37,
   "blob_id": "b78351205b66d40fc03b0898d892b28b70e4658c"
  },
  "weights/README.md": {
   "size": 7,
   "blob_id": "8e2e871357bef652084a73f7173adc5eb8859a33"
  },
  "weights/model-00001-of-00002.safetensors": {
   "size": 108894,
   "blob_id": "4dcd2b7a76135dee8ac34aed76e4e708691bab67",
   "lfs_sha256": "f6351f5ead9a700e34275480b3856ea738122a7c57bdeb744a631251c069587a",
   "lfs_size": 108894
  },
  "weights/shards/model-00002-of-00002.safetensors": {
   "size": 168886,
   "blob_id": "48f81a04a6910d7efabef9bbc2c2d346d4a0b9c1",
   "lfs_sha256": "4c2e4447e6904658d3cb4f15360150f335a044eaf9283d8dc99396781b38590c",
   "lfs_size": 168886
  }
 }
}
True
EOF

# offline.py HUB REPO REV: what huggingface_hub's snapshot_download does
# with HF_HUB_OFFLINE=1 and HF_HUB_CACHE=HUB, by the rules caches.md
# states, plus what makes the symlinks usable from a pod that mounts the
# models-- directory alone: each one relative, inside the directory, at
# a blob of the listed size. Prints the snapshot folder and its files.
cat >offline.py <<'PY'
import json, os, re, sys
hub, repo, rev = sys.argv[1:4]
folder = os.path.join(hub, "models--" + repo.replace("/", "--"))
if re.fullmatch(r"[0-9a-f]{40}", rev):
    commit = rev
else:
    with open(os.path.join(folder, "refs", rev)) as f:
        commit = f.read()
snap = os.path.join(folder, "snapshots", commit)
if not os.path.isdir(snap):
    sys.exit("LocalEntryNotFoundError: no snapshot " + commit)
with open(os.path.join(folder, "trees", commit + ".json")) as f:
    tree = json.load(f)
assert tree["format_version"] == 1, tree["format_version"]
missing = [p for p in tree["files"] if not os.path.exists(os.path.join(snap, p))]
if missing:
    sys.exit("IncompleteSnapshotError: " + ", ".join(missing[:3]))
real = os.path.realpath(folder)
for p, info in sorted(tree["files"].items()):
    link = os.path.join(snap, p)
    target = os.readlink(link)
    blob = os.path.realpath(link)
    assert not target.startswith("/"), target
    assert blob.startswith(os.path.join(real, "blobs") + "/"), blob
    assert os.path.getsize(blob) == info["size"], p
    print(p, info["size"])
print(os.path.relpath(snap, hub))
PY
check_output 'huggingface_hub'\''s offline rules find the snapshot complete; hf_present agrees' '
	python3 offline.py hub org/tiny main && hf -p hub org/tiny' <<EOF
README.md 7
config.json 37
weights/README.md 7
weights/model-00001-of-00002.safetensors 108894
weights/shards/model-00002-of-00002.safetensors 168886
$M/snapshots/$C1
{"present":true,"commit":"$C1"}
EOF

check_output 'a second fetch asks for the revision and the list, downloads nothing' '
	n=$(lines) && hf $E hub org/tiny && since $n | cut -d" " -f1-3 | sed "s/$C1/C1/"' <<EOF
{"reason":"","message":"","resolved":"$C1","files":5,"bytes":277824,"fetched":0}
GET 127.0.0.1 /api/models/org/tiny/revision/main
GET 127.0.0.1 /api/models/org/tiny/tree/C1?recursive=true
GET 127.0.0.1 /api/models/org/tiny/tree/C1?recursive=true&cursor=2
GET 127.0.0.1 /api/models/org/tiny/tree/C1?recursive=true&cursor=4
GET 127.0.0.1 /api/models/org/tiny/tree/C1?recursive=true&cursor=6
EOF

check_output 'not present: no ref, a snapshot file gone, a trees file gone' '
	hf -p hub org/tiny v9; echo $?
	mkdir -p h1 && cp -a hub/$M h1/ && rm h1/$M/snapshots/$C1/config.json &&
	hf -p h1 org/tiny; echo $?
	rm -r h1 && mkdir h1 && cp -a hub/$M h1/ && rm h1/$M/trees/$C1.json &&
	hf -p h1 org/tiny; echo $?' <<EOF
{"present":false}
1
{"present":false}
1
{"present":false}
1
EOF

check_output 'progress: from 0 to the total, per blob; a stop from the callback leaves no partial blob' '
	hf -g $E hp org/tiny | sed "s/\"resolved\":\"$C1\"/\"resolved\":C1/" &&
	must_fail 1 hf -c 10 $E hc org/tiny && listing hc/$M/blobs' <<EOF
{"done":0,"total":277824}
{"done":7,"total":277824}
{"done":44,"total":277824}
{"done":108938,"total":277824}
{"done":277824,"total":277824}
{"reason":"","message":"","resolved":C1,"files":5,"bytes":277824,"fetched":277824}
{"reason":"Cancelled","message":"org/tiny: stopped","resolved":"","files":5,"bytes":0,"fetched":44}
f 8e2e871357bef652084a73f7173adc5eb8859a33 
f b78351205b66d40fc03b0898d892b28b70e4658c 
EOF

check_output 'corrupt content: ChecksumMismatch naming the file, expected and got; no blob, no partial, no ref' '
	ctl "{\"corrupt\":\"weights/model-00001-of-00002.safetensors\"}" &&
	must_fail 1 hf $E h2 org/tiny && listing h2' <<EOF
{"reason":"ChecksumMismatch","message":"org/tiny: weights/model-00001-of-00002.safetensors: checksum mismatch: expected sha256 f6351f5ead9a700e34275480b3856ea738122a7c57bdeb744a631251c069587a, got 24b17b989dc68f4797cd3d6057520a1506ee00d507f2359f56587b0e2033a231","resolved":"","files":5,"bytes":0,"fetched":108938}
d .locks 
d .locks/$M 
d $M 
d $M/blobs 
f .locks/$M/8e2e871357bef652084a73f7173adc5eb8859a33.lock 
f .locks/$M/b78351205b66d40fc03b0898d892b28b70e4658c.lock 
f .locks/$M/f6351f5ead9a700e34275480b3856ea738122a7c57bdeb744a631251c069587a.lock 
f $M/blobs/8e2e871357bef652084a73f7173adc5eb8859a33 
f $M/blobs/b78351205b66d40fc03b0898d892b28b70e4658c 
EOF

SH=4c2e4447e6904658d3cb4f15360150f335a044eaf9283d8dc99396781b38590c
check_output 'a transfer cut short: Truncated, the partial kept; the next fetch resumes it with Range and completes' '
	ctl "{\"reset\":true,\"truncate\":\"weights/shards/model-00002-of-00002.safetensors\",\"after\":50000,\"count\":1}" &&
	must_fail 1 hf $E h2 org/tiny && wc -c <h2/$M/blobs/$SH.incomplete &&
	n=$(lines) && hf $E h2 org/tiny &&
	since $n | grep /cdn/ && test ! -e h2/$M/blobs/$SH.incomplete &&
	python3 offline.py h2 org/tiny main | tail -n 1' <<EOF
{"reason":"Truncated","message":"org/tiny: weights/shards/model-00002-of-00002.safetensors: got 50000 of 168886 bytes","resolved":"","files":5,"bytes":0,"fetched":158894}
50000
{"reason":"","message":"","resolved":"$C1","files":5,"bytes":277824,"fetched":118886}
GET localhost /cdn/$SH range=bytes=50000- auth=no
$M/snapshots/$C1
EOF

check_output 'a partial the server will not resume (200 to a Range): restarted from 0' '
	mkdir -p h7/$M/blobs && head -c 1000 r1/weights/shards/model-00002-of-00002.safetensors >h7/$M/blobs/$SH.incomplete &&
	ctl "{\"norange\":true}" &&
	n=$(lines) && hf $E h7 org/tiny | show && since $n | grep "range=bytes" &&
	ctl "{\"reset\":true}"' <<EOF
{"reason":"","message":"","resolved":"$C1","files":5,"bytes":277824,"fetched":277824}
GET 127.0.0.1 /org/tiny/resolve/$C1/weights/shards/model-00002-of-00002.safetensors range=bytes=1000- auth=no
GET localhost /cdn/$SH range=bytes=1000- auth=no
EOF

BS=90433fcbd9e16297e6a7c1dacb1056394743194776e52f78ebf0a44b80b6b14f
check_output 'a blob over 4 MiB is hashed on a thread of its own: cut short and resumed, sent whole to a Range, corrupt' '
	ctl "{\"reset\":true,\"truncate\":\"big.bin\",\"after\":1000000,\"count\":1}" &&
	must_fail 1 hf $E hb org/big | jq -r .message && wc -c <hb/models--org--big/blobs/$BS.incomplete &&
	hf $E hb org/big | jq -c "[.reason, .fetched]" && blob_names hb/models--org--big &&
	rm -r hb && ctl "{\"truncate\":\"big.bin\",\"after\":3000000,\"count\":1}" &&
	must_fail 1 hf $E hb org/big | jq -r .reason &&
	ctl "{\"norange\":true}" && hf $E hb org/big | jq -c "[.reason, .fetched]" && blob_names hb/models--org--big &&
	rm -r hb && ctl "{\"reset\":true,\"corrupt\":\"big.bin\"}" &&
	must_fail 1 hf $E hb org/big | jq -r .message && ls hb/models--org--big/blobs &&
	ctl "{\"reset\":true}"' <<EOF
org/big: big.bin: got 1000000 of 6888896 bytes
1000000
["",5888896]
sha256 ok
Truncated
["",6888896]
sha256 ok
org/big: big.bin: checksum mismatch: expected sha256 $BS, got 6d142c60a14e46f8bf7414937af75fdf1af1bfb84874959ffd6ebb09ef310637
EOF

check_output 'a token asked for: without, Unauthorized "set HF_TOKEN"; a wrong one, refused; the right one, sent to the hub but not to the CDN host' '
	ctl "{\"reset\":true,\"token\":\"hf_s3cret\"}" &&
	HF_TOKEN= must_fail 1 hf $E h3 org/tiny | show &&
	HF_TOKEN=hf_wrong must_fail 1 hf $E h3 org/tiny | show &&
	n=$(lines) && HF_TOKEN=hf_s3cret hf $E h3 org/tiny | show &&
	since $n | cut -d" " -f1,2,5 | sort | uniq -c | sed "s/^ *//"' <<EOF
{"reason":"Unauthorized","message":"org/tiny@main: HTTP 401 from http://127.0.0.1:PORT/api/models/org/tiny/revision/main: Access to this model is restricted. You must be authenticated to access it.: set HF_TOKEN","resolved":"","files":0,"bytes":0,"fetched":0}
{"reason":"Unauthorized","message":"org/tiny@main: HTTP 401 from http://127.0.0.1:PORT/api/models/org/tiny/revision/main: Invalid credentials in Authorization header: the token (HF_TOKEN) was refused","resolved":"","files":0,"bytes":0,"fetched":0}
{"reason":"","message":"","resolved":"$C1","files":5,"bytes":277824,"fetched":277824}
9 GET 127.0.0.1 auth=yes
2 GET localhost auth=no
EOF
ctl '{"token":null}'

check_output 'not found: the repository (maybe private: say so), the revision, a listed file the hub does not serve' '
	must_fail 1 hf $E h4 org/nope | show &&
	must_fail 1 hf $E h4 org/tiny nope | show &&
	ctl "{\"inject\":\"extra.bin\"}" &&
	must_fail 1 hf $E h4 org/tiny | show' <<EOF
{"reason":"NotFound","message":"org/nope: repository not found at http://127.0.0.1:PORT (if it is private or gated: set HF_TOKEN)","resolved":"","files":0,"bytes":0,"fetched":0}
{"reason":"NotFound","message":"org/tiny: revision \"nope\" not found at http://127.0.0.1:PORT","resolved":"","files":0,"bytes":0,"fetched":0}
{"reason":"NotFound","message":"org/tiny: file \"extra.bin\" not found at commit $C1","resolved":"","files":6,"bytes":0,"fetched":44}
EOF

check_output 'unsafe paths in the file list: InvalidItem before anything is written' '
	for p in ../escape.txt weights/../../escape.txt /etc/escape "a\\\\b" "a\\u0000b" "a\\nb" "a//b" "./a"; do
		ctl "{\"reset\":true,\"inject\":\"$p\"}" &&
		must_fail 1 hf $E h5 org/tiny | jq -r "[.reason, .message] | join(\": \")"
	done && test ! -e h5 && test ! -e escape.txt && test ! -e ../escape.txt' <<EOF
InvalidItem: org/tiny@main: unsafe path "../escape.txt" in the file list (a . or .. component)
InvalidItem: org/tiny@main: unsafe path "weights/../../escape.txt" in the file list (a . or .. component)
InvalidItem: org/tiny@main: unsafe path "/etc/escape" in the file list (a leading /)
InvalidItem: org/tiny@main: unsafe path "a\b" in the file list (a backslash)
InvalidItem: org/tiny@main: unsafe path "a" in the file list (a NUL)
InvalidItem: org/tiny@main: unsafe path "a?b" in the file list (a control character)
InvalidItem: org/tiny@main: unsafe path "a//b" in the file list (an empty component)
InvalidItem: org/tiny@main: unsafe path "./a" in the file list (a . or .. component)
EOF
ctl '{"reset":true}'

check_output 'rate limited: ServerError with the seconds to the reset; a 503 from the CDN' '
	ctl "{\"fail\":429,\"match\":\"/revision/\",\"reset\":42,\"count\":1}" &&
	must_fail 1 hf $E h6 org/tiny | show &&
	ctl "{\"fail\":503,\"match\":\"/cdn/\",\"count\":1}" &&
	must_fail 1 hf $E h6 org/tiny | show' <<EOF
{"reason":"ServerError","message":"org/tiny@main: rate limited (HTTP 429); the limit resets in 42 s; HF_TOKEN raises it","resolved":"","files":0,"bytes":0,"fetched":0}
{"reason":"ServerError","message":"org/tiny: weights/model-00001-of-00002.safetensors: HTTP 503 from http://localhost:PORT/cdn/f6351f5ead9a700e34275480b3856ea738122a7c57bdeb744a631251c069587a: fault: HTTP 503","resolved":"","files":5,"bytes":0,"fetched":44}
EOF

check_output 'answers judged as every client judges them: 408 ServerError, 410 NotFound, 400 InvalidItem' '
	for c in 408 410 400; do
		ctl "{\"fail\":$c,\"match\":\"/cdn/\",\"count\":1}" &&
		must_fail 1 hf $E h6 org/tiny | jq -c "[.reason, .files, .fetched]"
	done' <<EOF
["ServerError",5,0]
["NotFound",5,0]
["InvalidItem",5,0]
EOF

ms_since() { echo $(($(date +%s%3N) - $1)); }
# The hub would stall for 10 minutes: 20 s is -t 1 plus valgrind's start.
check_output 'a hub that accepts and says nothing: Timeout after -t seconds, the listing and a file body alike' '
	ctl "{\"stall\":true,\"match\":\"/tree/\"}" && t0=$(date +%s%3N) &&
	must_fail 1 hf -t 1 $E h6 org/tiny | show && { test "$(ms_since $t0)" -lt 20000 || echo "over 20 s"; }
	ctl "{\"stall\":false}" &&
	ctl "{\"stall\":true,\"match\":\"/cdn/$SH\"}" && t0=$(date +%s%3N) &&
	must_fail 1 hf -t 1 $E h6 org/tiny | show && { test "$(ms_since $t0)" -lt 20000 || echo "over 20 s"; }
	ctl "{\"stall\":false}"' <<EOF
{"reason":"Timeout","message":"org/tiny@main: no progress for 1 s (http://127.0.0.1:PORT/api/models/org/tiny/tree/$C1)","resolved":"","files":0,"bytes":0,"fetched":0}
{"reason":"Timeout","message":"org/tiny: weights/shards/model-00002-of-00002.safetensors: no progress for 1 s (http://localhost:PORT/cdn/$SH)","resolved":"","files":5,"bytes":0,"fetched":108894}
EOF

check_output 'nothing listening: Unreachable' '
	must_fail 1 hf http://127.0.0.1:$(free_port) h6 org/tiny | jq -r .reason' <<EOF
Unreachable
EOF

check_output 'repo ids and revisions: the hub'\''s rules; a bad one is InvalidItem before any request' '
	for r in org/name gpt2 a/b/c org/../x ../x org/na--me -org/x org/x. org/ /x "org/a b" \
		$(printf "%097d" 0); do hf -n -- "$r"; done &&
	for v in refs/pr/1 v1.0 ../x /x a//b a/. "a\\b" ""; do hf -n -- org/x "$v"; done &&
	n=$(lines) && must_fail 1 hf $E h6 org/na--me && must_fail 1 hf $E h6 org/tiny ../main &&
	test "$(lines)" = $n' <<EOF
{"dir":"models--org--name","revision_ok":true}
{"dir":"models--gpt2","revision_ok":true}
{"dir":null,"revision_ok":true}
{"dir":null,"revision_ok":true}
{"dir":null,"revision_ok":true}
{"dir":null,"revision_ok":true}
{"dir":null,"revision_ok":true}
{"dir":null,"revision_ok":true}
{"dir":null,"revision_ok":true}
{"dir":null,"revision_ok":true}
{"dir":null,"revision_ok":true}
{"dir":null,"revision_ok":true}
{"dir":"models--org--x","revision_ok":true}
{"dir":"models--org--x","revision_ok":true}
{"dir":"models--org--x","revision_ok":false}
{"dir":"models--org--x","revision_ok":false}
{"dir":"models--org--x","revision_ok":false}
{"dir":"models--org--x","revision_ok":false}
{"dir":"models--org--x","revision_ok":false}
{"dir":"models--org--x","revision_ok":false}
{"reason":"InvalidItem","message":"repo id \"org/na--me\" is not ORG/NAME or NAME (1 to 96 of A-Z a-z 0-9 . _ -, no -- or ..)","resolved":"","files":0,"bytes":0,"fetched":0}
{"reason":"InvalidItem","message":"org/tiny: revision \"../main\" cannot name a ref file (empty, leading /, . or .. component, backslash or control character)","resolved":"","files":0,"bytes":0,"fetched":0}
EOF

check_output 'a revision with slashes: percent-encoded in the URL, refs/refs/pr/1 in the cache (as huggingface_hub writes it)' '
	n=$(lines) && hf $E hub org/tiny refs/pr/1 && since $n | head -n 1 &&
	cat hub/$M/refs/refs/pr/1 && echo && python3 offline.py hub org/tiny refs/pr/1' <<EOF
{"reason":"","message":"","resolved":"$C3","files":1,"bytes":3,"fetched":3}
GET 127.0.0.1 /api/models/org/tiny/revision/refs%2Fpr%2F1 range=- auth=no
$C3
pr.txt 3
$M/snapshots/$C3
EOF

check_output 'main moves to commit 2; a corrupt file there leaves refs/main at commit 1' '
	"$TOP/t/hubserve" --ctl $PORT "{\"move\":\"org/tiny\",\"dir\":\"r2\"}" &&
	ctl "{\"corrupt\":\"config.json\",\"count\":1}" &&
	must_fail 1 hf $E hub org/tiny | jq -r .reason && cat hub/$M/refs/main && echo &&
	hf -p hub org/tiny' <<EOF
{"ok": true, "commit": "$C2"}
ChecksumMismatch
$C1
{"present":true,"commit":"$C1"}
EOF

check_output 'the update: only the new blobs; the new snapshot beside the old one, which a pod that resolved it earlier still reads' '
	hf $E hub org/tiny && hf -p hub org/tiny && ls hub/$M/snapshots &&
	python3 offline.py hub org/tiny $C1 | tail -n 1' <<EOF
{"reason":"","message":"","resolved":"$C2","files":5,"bytes":277821,"fetched":168920}
{"present":true,"commit":"$C2"}
$C3
$C1
$C2
$M/snapshots/$C1
EOF

check_output 'hf_prune drops the snapshot no ref names, its trees file and the blobs only it used' '
	hf -P hub org/tiny && ls hub/$M/snapshots hub/$M/trees hub/$M/blobs' <<EOF
{"reason":"","message":""}
hub/$M/blobs:
1be11a8c542aa6c211e80e0ddddf9ec5c8328138
3b74bd85a7260bfb57ca4966395b3c31d94a115bdb9dd9295e7939131213e9df
8e2e871357bef652084a73f7173adc5eb8859a33
c074f66b02b4ec6e048889af22180ddfb7aa72c3
f6351f5ead9a700e34275480b3856ea738122a7c57bdeb744a631251c069587a

hub/$M/snapshots:
$C3
$C2

hub/$M/trees:
$C3.json
$C2.json
EOF

check_output 'a commit named by two refs (a tag and its hash) stays until the last goes' '
	hf $E h8 org/tiny v1 && hf $E h8 org/tiny $C1 && ls h8/$M/refs &&
	hf -r h8 org/tiny v1 && hf -p h8 org/tiny $C1 &&
	hf -r h8 org/tiny $C1 && ls -A h8' <<EOF
{"reason":"","message":"","resolved":"$C1","files":5,"bytes":277824,"fetched":277824}
{"reason":"","message":"","resolved":"$C1","files":5,"bytes":277824,"fetched":0}
$C1
v1
{"reason":"","message":""}
{"present":true,"commit":"$C1"}
{"reason":"","message":""}
EOF

check_output 'two fetches of one repository at once (a tag and its commit): each blob downloaded once, under its lock; both complete' '
	hf $E h9 org/tiny v1 >a.out & hf $E h9 org/tiny $C1 >b.out; wait $! &&
	jq -sc "[.[0].reason, .[1].reason, .[0].fetched + .[1].fetched]" a.out b.out &&
	python3 offline.py h9 org/tiny v1 | tail -n 1 && blob_names h9/$M' <<EOF
["","",277824]
$M/snapshots/$C1
sha256 ok
sha1 ok
sha1 ok
sha256 ok
EOF

check_output 'hf_remove: main, its snapshot and blobs go, refs/pr/1'\''s stay; then the whole repository, locks too; again is no error' '
	hf -r hub org/tiny main && listing hub &&
	hf -r hub org/tiny refs/pr/1 && ls -A hub && hf -r hub org/tiny main &&
	must_fail 1 hf -p hub org/tiny' <<EOF
{"reason":"","message":""}
d .locks 
d .locks/$M 
d $M 
d $M/blobs 
d $M/refs 
d $M/refs/refs 
d $M/refs/refs/pr 
d $M/snapshots 
d $M/snapshots/$C3 
d $M/trees 
f .locks/$M/.snapshots.lock 
f .locks/$M/1be11a8c542aa6c211e80e0ddddf9ec5c8328138.lock 
f $M/blobs/1be11a8c542aa6c211e80e0ddddf9ec5c8328138 
f $M/refs/refs/pr/1 
f $M/trees/$C3.json 
l $M/snapshots/$C3/pr.txt ../../blobs/1be11a8c542aa6c211e80e0ddddf9ec5c8328138
{"reason":"","message":""}
{"reason":"","message":""}
{"present":false}
EOF

done_testing
