#!/bin/sh
# cache-sync: a plan of a model and a git repository made ready from real
# servers on 127.0.0.1 (t/hubserve, t/gitserve), kept, refreshed,
# removed; bad items, the budget and the free floor, failures that keep
# what was held, the lock and the state file. Images need a container
# runtime: t/9740 on the real node; here only its absence is tested.
. "$(dirname "$0")/lib.sh"

hport=$(free_port)
gport=$(free_port)
while [ "$gport" = "$hport" ]; do gport=$(free_port); done
trap 'kill $hpid $gpid 2>/dev/null; wait 2>/dev/null' EXIT

# a model of three files (big.bin and sub/w.bin are LFS files) and a
# repository with one commit
mkdir -p m1/sub m2/sub srv
printf '{"model_type":"opt"}\n' >m1/config.json
head -c 3000 /dev/zero | tr '\0' a >m1/big.bin
head -c 2000 /dev/zero | tr '\0' b >m1/sub/w.bin
cp -R m1/. m2/ && printf 'c' >>m2/big.bin
git init -q -b main work && (cd work && echo one >f && git add f &&
	git -c user.email=t@t -c user.name=t commit -q -m one) &&
	git clone -q --bare work srv/r.git
c1=$(git -C srv/r.git rev-parse main)

"$TOP/t/hubserve" -p "$hport" -l hub.log --lfs-over 1000 org/m=m1 >hub.out 2>hub.err 3>&- 4>&- &
hpid=$!
"$TOP/t/gitserve" http "$gport" "$PWD/srv" >git.out 2>git.err 3>&- 4>&- &
gpid=$!
eventually 10 grep -q listening hub.out
eventually 10 grep -qx ready git.out
m1=$(awk '$1 == "org/m@main" {print $2}' hub.out)
HF_ENDPOINT=http://127.0.0.1:$hport
export HF_ENDPOINT

cat >plan.ndjson <<EOF
{"name":"m","type":"models","models":{"repoId":"org/m"}}
{"name":"r","type":"gitRepo","gitRepo":{"url":"http://127.0.0.1:$gport/r.git","pathName":"r"}}
EOF
# cs ARGS...: cache-sync on ./cache with a 1% free floor, no runtime
cs() { cache-sync -d "$PWD/cache" -f 1% -s "$PWD/no.sock" -r 0 "$@"; }
# final: the last record of each item, the figures that vary left out
final() {
	jq -c -s 'map(select(.name)) | group_by(.name) | map(last | {name, phase, resolved, present, attempts, reason})[]' "$@"
}

check "-h prints the usage" 'cache-sync -h | head -n 1 | grep -qx "usage: cache-sync \[-nu\] \[-d dir\] \[-s socket\] \[-b budget\] \[-f min-free\] \[-j jobs\]"'
check_output "bad options exit 2, naming the option" '
	for a in "-b lots" "-b 0" "-b 0Gi" "-f 120%" "-j 0" "-l [1]" "-t x"; do
		# shellcheck disable=SC2086
		cache-sync $a -d "$PWD/x" </dev/null; echo "$a: $?"
	done 2>&1' <<'EOF'
cache-sync: -b lots: not a quantity of bytes (100Gi, 500M)
-b lots: 2
cache-sync: -b 0: a budget of 0 bytes; leave -b out for no limit
-b 0: 2
cache-sync: -b 0Gi: a budget of 0 bytes; leave -b out for no limit
-b 0Gi: 2
cache-sync: -f 120%: a percentage is 0% to 99%
-f 120%: 2
cache-sync: -j 0: not a number from 1
-j 0: 2
cache-sync: -l: the labels are not a JSON object
-l [1]: 2
cache-sync: -t x: not a number from 1
-t x: 2
EOF

# ---- the first sync ----
check "the first sync exits 0" 'cs plan.ndjson >s1.out 2>s1.err'
check_output "both items are ready with the model's and the repository's commits" 'final s1.out' <<EOF
{"name":"m","phase":"ready","resolved":"$m1","present":true,"attempts":1,"reason":""}
{"name":"r","phase":"ready","resolved":"$c1","present":true,"attempts":1,"reason":""}
EOF
check_output "each item is reported pending first, pulling, then ready" 'jq -r "select(.name == \"r\") | .phase" s1.out | uniq' <<'EOF'
pending
pulling
ready
EOF
check_output "the summary counts two ready items" 'tail -n 1 s1.out | jq -c ".summary | {items, ready, failed, budgetBytes}"' <<'EOF'
{"items":2,"ready":2,"failed":0,"budgetBytes":0}
EOF
check_output "the checkout is a link to slot a, with the file" 'readlink cache/r; cat cache/r/f' <<'EOF'
.git-slots/r/a
one
EOF
check_output "the model is in the hub's layout, the ref without a newline" '
	cd cache/hub_cache/models--org--m && cat refs/main && echo && find snapshots -type l | sort' <<EOF
$m1
snapshots/$m1/big.bin
snapshots/$m1/config.json
snapshots/$m1/sub/w.bin
EOF
check "each LFS blob is named by its content's sha256" '
	cd cache/hub_cache/models--org--m/snapshots/'"$m1"' &&
	for f in big.bin sub/w.bin; do
		[ "$(basename "$(readlink "$f")")" = "$(sha256sum <"$f" | cut -d" " -f1)" ] || exit 1
	done && cmp big.bin "$SCRATCH/m1/big.bin"'
check_output "the model's record points at its snapshot and counts its files" 'jq -r "select(.name == \"m\" and .phase == \"ready\") | .path, .files" s1.out' <<EOF
$PWD/cache/hub_cache/models--org--m/snapshots/$m1
3
EOF

# ---- a second run holds what it has, with no transfer ----
cp hub.log hub.before
check "a second run exits 0" 'cs plan.ndjson >s2.out 2>s2.err'
check_output "it reports both ready from its state" 'jq -c "select(.name) | {name, phase, resolved}" s2.out' <<EOF
{"name":"m","phase":"ready","resolved":"$m1"}
{"name":"r","phase":"ready","resolved":"$c1"}
EOF
check "it asked the hub nothing" 'cmp hub.before hub.log'

# ---- -u refreshes what moves ----
(cd work && echo two >f && git commit -q -a -m two -c user.email=t@t 2>/dev/null ||
	git -c user.email=t@t -c user.name=t commit -q -a -m two) && git -C work push -q "$PWD/srv/r.git" main
c2=$(git -C srv/r.git rev-parse main)
m2=$("$TOP/t/hubserve" --ctl "$hport" "{\"move\": \"org/m\", \"dir\": \"$PWD/m2\"}" | jq -r .commit)
check "a refresh (-u) exits 0" 'cs -u plan.ndjson >s3.out 2>s3.err'
check_output "it took the branch's and the revision's new commits" 'final s3.out' <<EOF
{"name":"m","phase":"ready","resolved":"$m2","present":true,"attempts":1,"reason":""}
{"name":"r","phase":"ready","resolved":"$c2","present":true,"attempts":1,"reason":""}
EOF
check_output "the checkout moved to slot b, the ref to the new commit" '
	readlink cache/r; cat cache/r/f; cat cache/hub_cache/models--org--m/refs/main; echo' <<EOF
.git-slots/r/b
two
$m2
EOF

# ---- an update that fails keeps what the item held ----
"$TOP/t/hubserve" --ctl "$hport" '{"corrupt": "big.bin"}' >/dev/null
(cd work && echo three >f && git -c user.email=t@t -c user.name=t commit -q -a -m three) &&
	git -C work push -q "$PWD/srv/r.git" main
mkdir -p m3 && cp -R m2/. m3/ && printf 'd' >>m3/big.bin
m3=$("$TOP/t/hubserve" --ctl "$hport" "{\"move\": \"org/m\", \"dir\": \"$PWD/m3\"}" | jq -r .commit)
c3=$(git -C srv/r.git rev-parse main)
check "a refresh with a corrupt file exits 1" 'must_fail 1 cs -u plan.ndjson >s4.out 2>s4.err'
check_output "the model failed ChecksumMismatch, still present at its earlier commit" '
	jq -c "select(.name == \"m\" and .phase == \"failed\") | {resolved, present, reason}" s4.out' <<EOF
{"resolved":"$m2","present":true,"reason":"ChecksumMismatch"}
EOF
check_output "the ref still names the earlier commit, and no partial blob is left" '
	cat cache/hub_cache/models--org--m/refs/main; echo; ls cache/hub_cache/models--org--m/blobs | grep -c incomplete' <<EOF
$m2
0
EOF
"$TOP/t/hubserve" --ctl "$hport" '{"reset": true}' >/dev/null
check "the next refresh succeeds" 'cs -u plan.ndjson >s5.out 2>s5.err'
check_output "with the model's attempts counted since its last success" 'final s5.out' <<EOF
{"name":"m","phase":"ready","resolved":"$m3","present":true,"attempts":2,"reason":""}
{"name":"r","phase":"ready","resolved":"$c3","present":true,"attempts":1,"reason":""}
EOF

# ---- bad items ----
cat >bad.ndjson <<EOF
{"type":"image","image":{"ref":"x"}}
{"name":"-x","type":"image","image":{"ref":"x"}}
{"name":"w","type":"pythonWheels"}
{"name":"i","type":"image"}
{"name":"g","type":"gitRepo","gitRepo":{"url":"http://127.0.0.1:$gport/r.git"}}
{"name":"g2","type":"gitRepo","gitRepo":{"url":"http://127.0.0.1:$gport/r.git","pathName":"../etc"}}
{"name":"g3","type":"gitRepo","gitRepo":{"url":"http://127.0.0.1:$gport/r.git","pathName":"r","commit":"XYZ"}}
{"name":"md","type":"models","models":{"repoId":"../../etc"}}
not json
{"name":"r","type":"gitRepo","gitRepo":{"url":"http://127.0.0.1:$gport/r.git","pathName":"r"}}
{"name":"r","type":"image","image":{"ref":"x"}}
{"name":"r2","type":"gitRepo","gitRepo":{"url":"http://127.0.0.1:$gport/r.git","pathName":"r"}}
EOF
check "a plan with bad items exits 1" 'must_fail 1 cs -n bad.ndjson >bad.out 2>bad.err'
check_output "each bad item is failed InvalidItem with why" 'jq -r "select(.reason == \"InvalidItem\") | \"\\(.name) \\(.type): \\(.message)\"" bad.out' <<'EOF'
-x image: name "-x" is not usable: 1 to 253 of A-Z a-z 0-9 . _ -, not starting with . or -
w pythonWheels: item w: type "pythonWheels" is not image, gitRepo or models (pythonWheels is not supported)
i image: image item i has no image.ref
g gitRepo: gitRepo item g has no gitRepo.pathName
g2 gitRepo: gitRepo item g2: pathName "../etc" is not one directory name of A-Z a-z 0-9 . _ -
g3 gitRepo: gitRepo item g3: commit "XYZ" is not 7 to 40 lowercase hex digits
md models: models item md: repoId "../../etc" is not org/name of A-Z a-z 0-9 . _ -
r image: item r is in the plan twice
r2 gitRepo: gitRepo item r2: pathName r is item r's
EOF
check_output "the warnings name the file and the record" 'cat bad.err' <<'EOF'
cache-sync: bad.ndjson:1: the item has no name
cache-sync: bad.ndjson:2: name "-x" is not usable: 1 to 253 of A-Z a-z 0-9 . _ -, not starting with . or -
cache-sync: bad.ndjson:3: item w: type "pythonWheels" is not image, gitRepo or models (pythonWheels is not supported)
cache-sync: bad.ndjson:4: image item i has no image.ref
cache-sync: bad.ndjson:5: gitRepo item g has no gitRepo.pathName
cache-sync: bad.ndjson:6: gitRepo item g2: pathName "../etc" is not one directory name of A-Z a-z 0-9 . _ -
cache-sync: bad.ndjson:7: gitRepo item g3: commit "XYZ" is not 7 to 40 lowercase hex digits
cache-sync: bad.ndjson:8: models item md: repoId "../../etc" is not org/name of A-Z a-z 0-9 . _ -
cache-sync: bad.ndjson:9: invalid JSON at column 3: invalid token near 'not'
EOF
check "a dry run (-n) changed nothing: the model is still held" 'test -L cache/r && test -d cache/hub_cache/models--org--m'

# pathNames the cache keeps for itself: refused when the plan is read,
# naming the field, not failed later on the disk (IOError); names that
# merely look alike are the items'.
cat >reserved.ndjson <<EOF
{"name":"hc","type":"gitRepo","gitRepo":{"url":"http://127.0.0.1:$gport/r.git","pathName":"hub_cache"}}
{"name":"t1","type":"gitRepo","gitRepo":{"url":"http://127.0.0.1:$gport/r.git","pathName":"r.tmp-42"}}
{"name":"t2","type":"gitRepo","gitRepo":{"url":"http://127.0.0.1:$gport/r.git","pathName":"r.tmp-42-7"}}
{"name":"ok1","type":"gitRepo","gitRepo":{"url":"http://127.0.0.1:$gport/r.git","pathName":"r.tmp-x"}}
{"name":"ok2","type":"gitRepo","gitRepo":{"url":"http://127.0.0.1:$gport/r.git","pathName":"hub_cache2"}}
EOF
check_output "reserved pathNames are invalid items, named with the field; the others are planned" '
	cs -n reserved.ndjson >res.out 2>res.err; echo "exit $?"
	jq -r "select(.name | IN(\"hc\", \"t1\", \"t2\", \"ok1\", \"ok2\")) | [.name, .phase, .message // \"\"] | join(\" \")" res.out | sort -u
	cat res.err' <<'EOF'
exit 1
hc failed gitRepo item hc: pathName "hub_cache" is reserved: the models' directory
ok1 pending 
ok2 pending 
t1 failed gitRepo item t1: pathName "r.tmp-42" is reserved: a temporary name (NAME.tmp-N) of the cache's
t2 failed gitRepo item t2: pathName "r.tmp-42-7" is reserved: a temporary name (NAME.tmp-N) of the cache's
cache-sync: reserved.ndjson:1: gitRepo item hc: pathName "hub_cache" is reserved: the models' directory
cache-sync: reserved.ndjson:2: gitRepo item t1: pathName "r.tmp-42" is reserved: a temporary name (NAME.tmp-N) of the cache's
cache-sync: reserved.ndjson:3: gitRepo item t2: pathName "r.tmp-42-7" is reserved: a temporary name (NAME.tmp-N) of the cache's
EOF
check "the models' directory is as it was" 'test -d cache/hub_cache/models--org--m && ! test -L cache/hub_cache'

# ---- failures, each leaving nothing behind ----
cat >fail.ndjson <<EOF
{"name":"nb","type":"gitRepo","gitRepo":{"url":"http://127.0.0.1:$gport/r.git","branch":"nope","pathName":"nb"}}
{"name":"nr","type":"gitRepo","gitRepo":{"url":"http://127.0.0.1:$gport/none.git","pathName":"nr"}}
{"name":"nm","type":"models","models":{"repoId":"org/none"}}
{"name":"img","type":"image","image":{"ref":"127.0.0.1:1/x:1"}}
EOF
check "a plan of failing items exits 1" 'must_fail 1 cs fail.ndjson >f.out 2>f.err'
check_output "each failed with its reason" 'jq -c "select(.phase == \"failed\") | {name, reason, present}" f.out | sort' <<'EOF'
{"name":"img","reason":"RuntimeError","present":false}
{"name":"nb","reason":"NotFound","present":false}
{"name":"nm","reason":"NotFound","present":false}
{"name":"nr","reason":"NotFound","present":false}
EOF
check_output "the image's message names the missing runtime" 'jq -r "select(.name == \"img\" and .phase == \"failed\") | .message" f.out' <<EOF
image 127.0.0.1:1/x:1: no container runtime at $PWD/no.sock (No such file or directory)
EOF
check_output "no checkout, slot or model is left: theirs never were, m and r left the plan" 'ls -A cache cache/hub_cache' <<'EOF'
cache:
.k8shazgpu
hub_cache

cache/hub_cache:
EOF
check_output "the earlier items left the plan and were removed" 'jq -c "select(.phase == \"removed\") | {name, type, message}" f.out' <<'EOF'
{"name":"m","type":"models","message":"left the plan; removed"}
{"name":"r","type":"gitRepo","message":"left the plan; removed"}
EOF

# ---- the disk ----
check "a budget of 1Ki refuses the model" 'must_fail 1 cs -b 1Ki plan.ndjson >b.out 2>b.err'
check_output "DiskBudgetExceeded, naming the budget" '
	jq -r "select(.phase == \"failed\") | \"\\(.name) \\(.reason) \\(.message | test(\"needs .* more; the cache holds .* of its 1.0 KiB budget \\\\(-b\\\\)\"))\"" b.out | sort' <<'EOF'
m DiskBudgetExceeded true
r DiskBudgetExceeded true
EOF
check "a free floor of 99% refuses both" 'must_fail 1 cs -f 99% plan.ndjson >d.out 2>d.err'
check_output "InsufficientDiskSpace, naming the floor" '
	jq -r "select(.phase == \"failed\") | \"\\(.name) \\(.reason) \\(.message | test(\"is free on the file system of .* must stay free \\\\(-f\\\\)\"))\"" d.out | sort' <<'EOF'
m InsufficientDiskSpace true
r InsufficientDiskSpace true
EOF
check "nothing was written for them" '! test -e cache/r && ! test -e cache/hub_cache/models--org--m'

# ---- node selectors ----
cat >sel.ndjson <<EOF
{"name":"r","type":"gitRepo","scope":"nodeSelector","nodeSelector":{"gpu":"a100"},"gitRepo":{"url":"http://127.0.0.1:$gport/r.git","pathName":"r"}}
EOF
check_output "an item for other nodes is neither reported nor synced" 'cs -l "{\"gpu\":\"h100\"}" sel.ndjson | tail -n 1 | jq -c ".summary | {items, ready}"' <<'EOF'
{"items":0,"ready":0}
EOF
check "an item for this node is synced" 'cs -l "{\"gpu\":\"a100\"}" sel.ndjson >sel.out && test -L cache/r'

# ---- the lock and the state ----
check "a second cache-sync on the directory exits 75" '
	flock cache/.k8shazgpu/lock sleep 5 &
	n=0; while flock -n cache/.k8shazgpu/lock true && [ $n -lt 50 ]; do sleep 0.1; n=$((n + 1)); done
	must_fail 75 cs sel.ndjson </dev/null >lock.out 2>lock.err; rc=$?; wait; exit $rc'
check_output "naming the directory" 'cat lock.err' <<EOF
cache-sync: $PWD/cache: another cache-sync is running here
EOF
printf '{"items": [' >cache/.k8shazgpu/state.json
check "a broken state file is kept aside and the plan synced again" '
	cs -l "{\"gpu\":\"a100\"}" sel.ndjson >st.out 2>st.err && test -f cache/.k8shazgpu/state.json.bad'
check_output "with a warning naming it" 'sed "s/:[0-9]*: .*; kept/: ...; kept/" st.err' <<EOF
cache-sync: $PWD/cache/.k8shazgpu/state.json: ...; kept as $PWD/cache/.k8shazgpu/state.json.bad, starting from an empty state
EOF
check_output "the checkout was found whole and kept" 'jq -c "select(.name == \"r\" and .phase == \"ready\") | {resolved}" st.out' <<EOF
{"resolved":"$c3"}
EOF

# ---- an unreachable server ----
dead=$(free_port)
check_output "a git server that is not there: Unreachable after 1 + retries attempts" '
	echo "{\"name\":\"u\",\"type\":\"gitRepo\",\"gitRepo\":{\"url\":\"http://127.0.0.1:'"$dead"'/r.git\",\"pathName\":\"u\"}}" |
		cache-sync -d "$PWD/c2" -f 1% -r 1 | jq -c "select(.phase == \"failed\") | {name, reason, attempts}"' <<'EOF'
{"name":"u","reason":"Unreachable","attempts":2}
EOF

done_testing
