#!/bin/sh
# lib/prom: the exposition escapes help text and label values, spells
# NaN, infinities and reals as the text format 0.0.4 wants, leaves out a
# series whose label set is not valid (told once), and is a valid
# exposition all through (stat-serve -c); prom_sample and prom_escape
# refuse a NUL byte or bytes that are no UTF-8.
. "$(dirname "$0")/lib.sh"

check_output 'the exposition and the samples, exactly' 'unit prom 2>err' <<'X'
# HELP t_total Help with \\ and a\nline feed.
# TYPE t_total counter
t_total{path="/a\"b\\c\nd",bytes="?é",none=""} 3
t_total 0.30000000000000004
# HELP t_gauge Values.
# TYPE t_gauge gauge
t_gauge{v="nan"} NaN
t_gauge{v="inf"} +Inf
t_gauge{v="-inf"} -Inf
t_gauge{v="big"} 1e+300
t_gauge{v="int"} 9007199254740992
# HELP t_seconds Latency.
# TYPE t_seconds histogram
t_seconds_bucket{op="x\"y",le="1e-05"} 0
t_seconds_bucket{op="x\"y",le="0.1"} 0
t_seconds_bucket{op="x\"y",le="0.25"} 1
t_seconds_bucket{op="x\"y",le="+Inf"} 2
t_seconds_sum{op="x\"y"} NaN
t_seconds_count{op="x\"y"} 2
s{node="a\"b\\c\nd",empty=""} -0.5
sample: 0
s 7
sample: 0
nul: -1
bad: -1
q\"escape: 0 -1
X
check_output 'a label set that is not valid: told once, its series left out' 'cat err' <<'X'
prom: t_total{path="a"b"}: no , or } after a label value: series left out
prom: t_total{a="1",a="2"}: label a given twice: series left out
X
check 'every line of the exposition is valid' \
	'unit prom 2>/dev/null | sed "/^s{/,\$d" >expo.prom && test -s expo.prom && stat-serve -c expo.prom'
done_testing
