#!/bin/sh
# The state lib/ shares between threads, through t/unit/threads: a
# js_names whose slots several threads build at once on first use, hash
# tables made at once (their seed is drawn by the first), and records
# written by several threads to one stdout. The outcomes are checked
# here; helgrind, where valgrind is installed, checks that no access races.
. "$(dirname "$0")/lib.sh"

check_output 'js_fields through one fresh js_names, 8 threads at once' \
	'unit threads names 8 2000' <<'EOF2'
8 threads, 16000 rounds, 0 wrong
EOF2
check_output 'hash tables made and filled by 8 threads at once' \
	'unit threads hmap 8 200' <<'EOF2'
8 threads, 1600 rounds, 0 wrong
EOF2
check_output 'nd_write from 8 threads: every line one whole record, none lost' \
	'unit threads nd 8 500 | jq -r "[.thread, .round] | @tsv" | sort -u | wc -l' <<'EOF2'
4000
EOF2

if ! command -v valgrind >/dev/null 2>&1; then
	why='no valgrind'
elif ldd "$BUILD/unit/threads" 2>/dev/null | grep -q 'libasan\|libtsan'; then
	why='a sanitized build: valgrind cannot run it'
else
	why=
fi
if [ -z "$why" ]; then
	for m in names hmap nd; do
		check_output "helgrind: no race in $m" \
			"valgrind --tool=helgrind -q --error-exitcode=99 $BUILD/unit/threads $m 4 20 >/dev/null 2>hg.$m; echo exit \$?; grep -m1 -A3 'Possible data race' hg.$m" <<'EOF2'
exit 0
EOF2
	done
else
	for m in names hmap nd; do echo "ok $((t_n += 1)) # SKIP helgrind: no race in $m ($why)"; done
fi
done_testing
