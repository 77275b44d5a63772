#!/bin/sh
# lib/nd's input loops through t/unit/nd: every input is read in turn
# (stdin when none), one that cannot be opened is handed to the callback
# as NULL and the loop goes on, and the status is 1 for an unopened
# input, a bad record or a callback that refused, else 0. claim-make,
# webhook-patch, sched-pick and gpu-alert read their inputs this way.
. "$(dirname "$0")/lib.sh"

printf '{"a":1}\n\n{"refuse":true}\nnot json\n' >a.in
printf '"x"\n' >b.in
printf '{"ok":1}\n' >good.in
printf 'fine\nrefuse\n' >refuse.in

check_output 'nd_each_record: every record, bad ones as NULL, unopened as NULL' \
	'unit nd each a.in nosuch b.in 2>err && cat err' <<'EOF'
rec a.in:1 {"a":1}
bad a.in:2
rec a.in:3 {"refuse":true}
bad a.in:4
unopened
rec b.in:1 "x"
status 1
nd: a.in:2: blank line
nd: a.in:4: invalid JSON at column 3: invalid token near 'not'
nd: nosuch: No such file or directory
EOF

check_output 'nd_loop_files: the good records only, the same status' \
	'unit nd loop a.in nosuch b.in 2>/dev/null' <<'EOF'
rec a.in:1 {"a":1}
rec a.in:3 {"refuse":true}
rec b.in:1 "x"
status 1
EOF

check_output 'nd_each_input: each input open in turn, unopened as NULL' \
	'unit nd input a.in nosuch b.in 2>/dev/null' <<'EOF'
input a.in
line a.in:1 {"a":1}
line a.in:3 {"refuse":true}
line a.in:4 not json
unopened
input b.in
line b.in:1 "x"
status 1
EOF

check_output 'no file is stdin; good records give status 0' \
	'unit nd each <good.in && unit nd input - <good.in' <<'EOF'
rec <stdin>:1 {"ok":1}
status 0
input <stdin>
line <stdin>:1 {"ok":1}
status 0
EOF

check_output 'a callback that refuses, alone, makes the status 1' \
	'unit nd each good.in b.in && printf "{\"refuse\":true}\n" | unit nd loop &&
	 unit nd input refuse.in' <<'EOF'
rec good.in:1 {"ok":1}
rec b.in:1 "x"
status 0
rec <stdin>:1 {"refuse":true}
status 1
input refuse.in
line refuse.in:1 fine
line refuse.in:2 refuse
status 1
EOF

check_output 'an input that cannot be opened, alone, makes the status 1' \
	'unit nd each good.in nosuch 2>/dev/null' <<'EOF'
rec good.in:1 {"ok":1}
unopened
status 1
EOF

check_output '-f (ND_SKIP_BLANK): a blank line is no bad record' \
	'unit nd each -f a.in 2>/dev/null' <<'EOF'
rec a.in:1 {"a":1}
rec a.in:3 {"refuse":true}
bad a.in:4
status 1
EOF

done_testing
