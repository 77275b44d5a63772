#!/bin/sh
# lib/hf's pool (hf_item.workers > 1) through t/unit/hf, and cache-sync's
# -w, against t/hubserve on 127.0.0.1: the files of a model at once, a
# large file in ranges (asked first, then to the CDN URL the first range
# was answered from), a server that ignores ranges (one stream), a range
# cut short and asked again from where it stopped; and what must leave
# nothing behind: a hub that fails midway, one that lies about a size, a
# stop from the caller, a model over the budget.
. "$(dirname "$0")/lib.sh"

EVENTUALLY_HZ=10
hf() {
	unit hf "$@"
	hf_rc=$?
	[ $hf_rc -ne 99 ] || echo "valgrind found errors: status 99"
	return $hf_rc
}

mkdir -p r1/weights rb
printf '# tiny\n' >r1/README.md
printf '{"model_type":"opt","hidden_size":8}\n' >r1/config.json
cp r1/README.md r1/weights/README.md
seq 1 20000 >r1/weights/model-00001-of-00002.safetensors
seq 5 30000 >r1/weights/model-00002-of-00002.safetensors
seq 1 1000000 >rb/big.bin
BS=90433fcbd9e16297e6a7c1dacb1056394743194776e52f78ebf0a44b80b6b14f
MB=models--org--big

PORT=$(free_port)
E=http://127.0.0.1:$PORT
"$TOP/t/hubserve" -p "$PORT" -l hub.log --lfs-over 1000 org/tiny=r1 org/big=rb >serve.out 2>serve.err 3>&- 4>&- &
serve_pid=$!
trap 'kill $serve_pid 2>/dev/null' EXIT
eventually 30 grep -q '^listening on' serve.out ||
	{ echo "Bail out! hubserve did not start: $(cat serve.err)"; exit 1; }
ctl() { curl -sf --noproxy '*' -o /dev/null --data "$1" "$E/_control"; }
since() { tail -n "+$(($1 + 1))" hub.log; }
lines() { wc -l <hub.log; }
show() { sed "s/$PORT/PORT/g"; }
listing() { (cd "$1" && find . -mindepth 1 -printf '%y %P %l\n' | sort); }
# partials: the partial files left under a cache, one a line
partials() { find "$1" -name '*.incomplete' | sort; }
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

check_output 'eight workers make the same cache as one, each blob checked' '
	hf $E one org/tiny | jq -c "[.reason, .files, .bytes, .fetched]" &&
	hf -w 8 $E eight org/tiny | jq -c "[.reason, .files, .bytes, .fetched]" &&
	listing one >one.ls && listing eight >eight.ls && diff one.ls eight.ls &&
	blob_names eight/models--org--tiny && partials eight' <<EOF
["",5,277824,277824]
["",5,277824,277824]
sha256 ok
sha1 ok
sha1 ok
sha256 ok
EOF

check_output 'a large file in ranges: the first asks (through the redirect), the rest go to the CDN URL it was answered from' '
	n=$(lines) && hf -w 4 -R 1048576 $E h1 org/big | jq -c "[.reason, .fetched]" &&
	since $n | grep -v /api/ | head -n 2 && since $n | grep -v /api/ | tail -n +3 | sort &&
	blob_names h1/$MB && partials h1' <<EOF
["",6888896]
GET 127.0.0.1 /org/big/resolve/9d44fc2cc06629aa633c70338e3c102b71531042/big.bin range=bytes=0-1048575 auth=no
GET localhost /cdn/$BS range=bytes=0-1048575 auth=no
GET localhost /cdn/$BS range=bytes=1048576-2097151 auth=no
GET localhost /cdn/$BS range=bytes=2097152-3145727 auth=no
GET localhost /cdn/$BS range=bytes=3145728-4194303 auth=no
GET localhost /cdn/$BS range=bytes=4194304-5242879 auth=no
GET localhost /cdn/$BS range=bytes=5242880-6291455 auth=no
GET localhost /cdn/$BS range=bytes=6291456-6888895 auth=no
sha256 ok
EOF

check_output 'a server that answers a range with the whole file (200): the first range becomes one stream, no other is asked' '
	ctl "{\"norange\":true}" && n=$(lines) &&
	hf -w 4 -R 1048576 $E h2 org/big | jq -c "[.reason, .fetched]" && since $n | grep -c -v /api/ &&
	blob_names h2/$MB && ctl "{\"reset\":true}"' <<EOF
["",6888896]
2
sha256 ok
EOF

check_output 'a range cut short is asked again from where it stopped, within the call' '
	ctl "{\"truncate\":\"big.bin\",\"after\":500000,\"count\":1}" && n=$(lines) &&
	hf -w 2 -R 1048576 $E h3 org/big | jq -c "[.reason, .fetched]" &&
	since $n | grep -c "range=bytes=500000-1048575" && blob_names h3/$MB && ctl "{\"reset\":true}"' <<EOF
["",6888896]
1
sha256 ok
EOF

# which range fails first is a race: the reason is not
check_output 'a hub that fails midway: every partial file is deleted, only whole checked blobs stay' '
	ctl "{\"truncate\":\"big.bin\",\"after\":3000000}" &&
	must_fail 1 hf -w 4 -R 1048576 $E h4 org/big | jq -r .reason && partials h4 && ls h4/$MB/blobs | wc -l &&
	ctl "{\"reset\":true,\"fail\":503,\"match\":\"/cdn/4c2e\"}" &&
	must_fail 1 hf -w 8 $E h5 org/tiny | jq -c "[.reason, .files]" && partials h5 &&
	test ! -e h5/models--org--tiny/blobs/4c2e* && blob_names h5/models--org--tiny | grep -c -v " ok$";
	ctl "{\"reset\":true}"' <<EOF
Truncated
0
["ServerError",5]
0
EOF

check_output 'a hub that lies about a size: nothing past the listed size is written, nothing is left' '
	for lie in 7000000 6000000; do
		ctl "{\"reset\":true,\"lie\":\"big.bin\",\"size\":$lie}" &&
		must_fail 1 hf -w 4 -R 1048576 $E h6 org/big | jq -r "[.reason, .message] | join(\": \")" &&
		must_fail 1 hf -w 4 $E h6 org/big | jq -r "[.reason, .message] | join(\": \")" && partials h6
	done; ctl "{\"reset\":true}"' <<EOF
ServerError: org/big: big.bin: Content-Range "bytes 0-1048575/6888896" for bytes 0-1048575 of 7000000
Truncated: org/big: big.bin: got 6888896 of 7000000 bytes
ServerError: org/big: big.bin: Content-Range "bytes 0-1048575/6888896" for bytes 0-1048575 of 6000000
ChecksumMismatch: org/big: big.bin: the server sent more than the 6000000 bytes the file list names
EOF

check_output 'progress from the calling thread: from 0, never back, to the total; a stop leaves no partial' '
	hf -g -w 4 -R 1048576 $E h7 org/big | jq -s -c "[.[0].done, (map(.done // empty) | . == sort), .[-2].done, .[-1].reason]" &&
	must_fail 1 hf -c 1 -w 4 -R 1048576 $E h8 org/big | jq -r .message && partials h8' <<EOF
[0,true,6888896,""]
org/big: stopped
EOF

# helgrind: the pool's state is read and written under its mutex only.
# libcurl's global-init lock spins on an atomic helgrind cannot see;
# glibc's pthread_cond_timedwait, timing out, wakes other waiters
# itself, which helgrind calls dubious.
cat >hg.supp <<'EOF'
{
   libcurl-global-init-spinlock
   Helgrind:Race
   fun:curl_easy_init
}
{
   glibc-cond-timedwait-timeout
   Helgrind:Misc
   ...
   fun:__pthread_cond_wait_common
}
EOF
if ! command -v valgrind >/dev/null 2>&1; then
	why='no valgrind'
elif ldd "$BUILD/unit/hf" 2>/dev/null | grep -q 'libasan\|libtsan'; then
	why='a sanitized build: valgrind cannot run it'
else
	why=
fi
if [ -z "$why" ]; then
	check_output 'helgrind: no race in the pool (a file in ranges, four workers)' '
		valgrind --tool=helgrind -q --error-exitcode=99 --suppressions=hg.supp \
			"$BUILD/unit/hf" -w 4 -R 1048576 $E hg org/big >/dev/null 2>hg.err; echo exit $?;
		grep -m1 -A12 -e "Possible data race" -e "lock order" -e dubious hg.err' <<'EOF'
exit 0
EOF
else
	echo "ok $((t_n += 1)) # SKIP helgrind: no race in the pool ($why)"
fi

cat >plan.ndjson <<EOF
{"name":"big","type":"models","models":{"repoId":"org/big"}}
EOF
cs() { HF_ENDPOINT=$E cache-sync -d "$PWD/cache" -f 1% -s "$PWD/no.sock" -r 0 "$@"; }
check_output 'cache-sync -w: a number from 1' '
	cache-sync -w 0 -d "$PWD/x" </dev/null 2>&1; echo $?; cache-sync -h | grep -A1 -e "-w WORKERS"' <<'EOF'
cache-sync: -w 0: not a number from 1
2
  -w WORKERS   a model's files and ranges downloaded at once
               (default 8)
EOF

check_output 'a model over the budget: refused before any file is asked for; nothing written' '
	n=$(lines) && must_fail 1 cs -b 5Mi plan.ndjson >b.out 2>/dev/null;
	jq -r "select(.phase == \"failed\") | [.reason, .message] | join(\": \")" b.out &&
	since $n | grep -c -e /resolve/ -e /cdn/; test ! -e cache/hub_cache/$MB/blobs/$BS && partials cache' <<EOF
DiskBudgetExceeded: models big needs 6.6 MiB more; the cache holds 0 B of its 5.0 MiB budget (-b)
0
EOF

check_output 'cache-sync -w 3 fetches it, checked' '
	cs -w 3 plan.ndjson | jq -r "select(.phase == \"ready\") | .name" && blob_names cache/hub_cache/$MB' <<EOF
big
sha256 ok
EOF

done_testing
