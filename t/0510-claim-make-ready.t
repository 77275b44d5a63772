#!/bin/sh
# claim-make -R: the ready file is made (0644) and its time set to now
# after each batch in which nothing failed, and only then: a bad record
# or a failed write leaves it as it was, the next good batch touches it.
. "$(dirname "$0")/lib.sh"
F=$FIXTURES/claim-make

gpu='{"kind":"gpu","node":"n1","index":0,"uuid":"GPU-0","memory_mib":81920,"health":"ok"}'
badgpu='{"kind":"gpu","node":"n1","index":-1,"health":"ok"}'
flush='{"kind":"flush"}'
# age: set the ready file's time back to 2000-01-01; touched: say whether
# it was set later than that since.
age() { touch -d '2000-01-01 00:00:00 UTC' ready; }
touched() { if [ "$(stat -c %Y ready)" -gt 946684800 ]; then echo touched; else echo untouched; fi; }

check_output 'a clean input makes the file, mode 0644' \
	'claim-make -R ready "$F/small.ndjson" >/dev/null; echo "status $?"; stat -c "%a %s" ready' <<'EOF'
status 0
644 0
EOF

check_output 'a batch with a bad record leaves it as it was' \
	'age; printf "%s\n" "$gpu" "not json" "$flush" | claim-make -R ready >/dev/null 2>err; echo "status $?"; touched; cat err' <<'EOF'
status 1
untouched
claim-make: <stdin>:2: invalid JSON at column 3: invalid token near 'not'
EOF

check_output 'so does one with a refused gpu record' \
	'age; printf "%s\n" "$badgpu" "$gpu" | claim-make -R ready >/dev/null 2>/dev/null; echo "status $?"; touched' <<'EOF'
status 1
untouched
EOF

check_output 'the next batch without error touches it' \
	'age; printf "%s\n" "$badgpu" "$flush" "$gpu" "$flush" | claim-make -R ready >/dev/null 2>/dev/null; echo "status $?"; touched' <<'EOF'
status 1
touched
EOF

check_output 'a good batch touches it even when a later one fails' \
	'age; printf "%s\n" "$gpu" "$flush" "$badgpu" | claim-make -R ready >/dev/null 2>/dev/null; echo "status $?"; touched' <<'EOF'
status 1
touched
EOF

cp "$FIXTURES/unreachable.kubeconfig" unreachable.yaml
check_output 'a write that failed (API server unreachable) leaves it as it was' \
	'age; must_fail 75 claim-make -a --kubeconfig unreachable.yaml -R ready "$F/small.ndjson" >/dev/null 2>&1; touched' <<'EOF'
untouched
EOF

check_output 'a file that cannot be made is named; status 1, the records still written' \
	'claim-make -R nodir/ready "$F/small.ndjson" >out 2>err; echo "status $?"; wc -l <out; cat err' <<'EOF'
status 1
4
claim-make: -R nodir/ready: No such file or directory
EOF
done_testing
