#!/bin/sh
# The ledger's Lua scripts as Lua: each of lib/lua/ (the shared lib.lua
# and mig.lua, then a script's body, as lib/ledger_lua.c joins them) is
# compiled by a real redis-server (SCRIPT LOAD), and scripts/lua2c turns
# them into the C header byte for byte, refusing what it cannot.
. "$(dirname "$0")/lib.sh"

start_redis
L=$TOP/lib/lua
for f in "$L"/*.lua; do
	n=$(basename "$f" .lua)
	case $n in lib | mig) continue ;; esac
	check_output "$n.lua compiles in redis, joined to lib.lua and mig.lua" \
		"cat '$L/lib.lua' '$L/mig.lua' '$f' >s.lua && rcli script load \"\$(cat s.lua)\" | grep -c '^[0-9a-f]\{40\}\$'" <<'EOF2'
1
EOF2
done
check_output 'a script that does not parse is refused by the same check' \
	"printf 'local x = \n' >bad.lua && rcli script load \"\$(cat bad.lua)\" | sed -n '1s/user_script:[0-9]*: //; 1s/ near.*//p'" <<'EOF2'
ERR Error compiling script (new function): unexpected symbol
EOF2

# lua2c: the generated strings are the files' bytes (a driver prints them)
check_output 'lua2c: quotes, backslashes and Lua escapes kept byte for byte' \
	"printf '%s\n' 'local s = \"a\\\\\"b\" .. '\"'\"'\\\\1\\\\%z'\"'\"'' >q.lua && lua2c q.lua >q.h &&
	printf '#include <stdio.h>\n#include \"q.h\"\nint main(void) { fputs(lua_q, stdout); return 0; }\n' >q.c &&
	cc -std=c11 -Wall -Werror -o q q.c && ./q | cmp - q.lua && echo same" <<'EOF2'
same
EOF2
check_output 'lua2c: a file without its last newline is refused, named' \
	'printf "return 1" >nonl.lua; out lua2c nonl.lua' <<EOF2
exit 1
lua2c: nonl.lua: no newline at the end
EOF2
check_output 'lua2c: a name that is no C identifier is refused, named' \
	'printf "return 1\n" >a-b.lua; out lua2c a-b.lua' <<EOF2
exit 1
lua2c: a-b.lua: a script's name is [a-z0-9_]
EOF2
done_testing
