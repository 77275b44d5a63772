#!/bin/sh
# Every man page is mandoc -Tlint clean at warning level; every tool and
# wrapper has one, answers -h on stdout with status 0 and a bad option with 2.
. "$(dirname "$0")/lib.sh"

for m in "$TOP"/man/*.[178]; do
	check "lint $(basename "$m")" "mandoc -Tlint -Wwarning '$m' 2>&1 | grep -v 'mandoc.db' | grep . && exit 1; true"
done
for c in "$TOP"/tools/*.c; do
	[ -e "$c" ] || continue
	n=$(basename "$c" .c)
	check "$n has man/$n.1" "test -f '$TOP/man/$n.1'"
	check "$n -h prints usage on stdout" "$n -h >h.out 2>h.err && grep -q '^usage: $n' h.out && ! test -s h.err"
	check "$n rejects a bad option with 2" "must_fail 2 $n -Z >/dev/null 2>bad.err && grep -q '^usage: $n\|^$n:' bad.err"
done
for s in "$TOP"/scripts/k8shazgpu*; do
	[ -e "$s" ] || continue
	n=$(basename "$s")
	check "$n has a man page" "test -f '$TOP/man/$n.1' || test -f '$TOP/man/$n.8'"
	check "$n -h prints usage on stdout" "$s -h >h.out 2>h.err && grep -q '^usage: $n' h.out"
done
done_testing
