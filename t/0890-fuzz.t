#!/bin/sh
# The libFuzzer targets of t/fuzz, one per reader of outside input
# (NDJSON records, sched-pick's records, AdmissionReviews, YAML,
# nvidia-smi's CSV, -L lines and -q -x XML, the kubelet's protobuf messages,
# the API server's HTTP/1.1 answers), each
# built under ASan and UBSan and run
# for $FUZZ_TIME seconds (default 10) over its seed corpus
# t/fuzz/corpus-NAME. Run them long by hand:
#
#	FUZZ_TIME=3600 t/run t/0890-fuzz.t
#
# The targets warn of every bad record: their stderr is closed while
# fuzzing (-close_fd_mask=2). A finding leaves its input in t/trash/0890-fuzz/NAME-crash-* (or -leak-,
# -timeout-, -oom-), and the
# report of running it again is shown here.
. "$(dirname "$0")/lib.sh"

[ "${VALGRIND:-}" = 1 ] && skip_all 'the fuzz targets run under ASan, not valgrind'
echo 'int LLVMFuzzerTestOneInput(const char *d, long n) { return 0; }' >probe.c
clang -fsanitize=fuzzer probe.c -o probe >/dev/null 2>&1 ||
	skip_all 'clang with libFuzzer is not installed (scripts/deps installs it)'
: "${FUZZ_TIME:=10}"

SAN="-fsanitize=address,undefined -fno-sanitize-recover=all -DHAZ_VERSION=\"fuzz\""
PKGS="jansson yaml-0.1 libcurl libssl libmicrohttpd zlib libnghttp2 libprotobuf-c expat"
mkdir obj gen
# the tools' own engines (tools/NAME/) are fuzzed as lib/ is
PRIV=$(for d in "$TOP"/tools/*/; do printf ' -iquote %s' "${d%/}"; done)
check 'lib/ builds for fuzzing' '
	protoc-c --proto_path="$TOP/proto" --c_out=gen "$TOP"/proto/*.proto &&
	"$TOP/scripts/lua2c" "$TOP"/lib/lua/*.lua >gen/lua_ledger.h &&
	for c in "$TOP"/lib/*.c "$TOP"/tools/*/*.c gen/*.pb-c.c; do
		clang -g -O1 -fsanitize=fuzzer-no-link $SAN -std=c11 -D_GNU_SOURCE \
			-iquote "$TOP/lib" $PRIV -I gen $(pkg-config --cflags $PKGS) \
			-c -o obj/$(basename "$c" .c).o "$c" || exit 1
	done && ar rcs libfuzz.a obj/*.o'

for src in "$TOP"/t/fuzz/*.c; do
	name=$(basename "$src" .c)
	check "fuzz target $name: builds and runs $FUZZ_TIME s without a finding" '
		clang -g -O1 -fsanitize=fuzzer $SAN -std=c11 -D_GNU_SOURCE \
			-iquote "$TOP/lib" $PRIV -iquote "$TOP/t/fuzz" -I gen $(pkg-config --cflags $PKGS) \
			"$src" libfuzz.a $(pkg-config --libs $PKGS) -lm -o "fuzz-$name" &&
		mkdir -p "corpus-$name" &&
		seeds=$TOP/t/fuzz/corpus-$name && { [ -d "$seeds" ] || seeds=; } &&
		if "./fuzz-$name" -max_total_time="$FUZZ_TIME" -close_fd_mask=2 \
			-timeout=10 -rss_limit_mb=2048 -max_len=65536 \
			-artifact_prefix="./$name-" "corpus-$name" $seeds \
			>"fuzz-$name.log" 2>&1; then
			grep -q "^Done [0-9]* runs" "fuzz-$name.log"
		else
			tail -n 5 "fuzz-$name.log"
			for crash in "$name"-*; do
				[ -f "$crash" ] && "./fuzz-$name" "$crash" 2>&1 | head -n 40
			done
			false
		fi'
done

done_testing
