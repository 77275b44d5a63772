#!/bin/sh
# lib/jload through t/unit/jload: jl_loadb reads JSON into jansson values
# from jscan's tokens, and its result is json_loadb's, value for value
# (key order and repeated keys too) and error for error; what jansson
# reads otherwise is handed to jansson.
. "$(dirname "$0")/lib.sh"

cat >values.in <<'EOF'
{"a":1}
{"b":[1,2.5,-0,1e2,true,false,null],"a":{}}
{"x":1,"y":2,"x":3}
"top"
 [ ] 
  {"a" : [ 1 , { } ] }   
{"a":"é😀\ud83d\ude00","q":"\"\\\/"}
9223372036854775807
-9223372036854775808
0.1
1.7976931348623157e308
{"r":1e-400}
EOF
check_output 'values are built from tokens, as jansson reads them' 'unit jload any <values.in' <<'EOF'
built {"a":1}
built {"b":[1,2.5,0,100.0,true,false,null],"a":{}}
built {"x":3,"y":2}
built "top"
built []
built {"a":[1,{}]}
built {"a":"é😀😀","q":"\"\\/"}
built 9223372036854775807
built -9223372036854775808
built 0.10000000000000001
built 1.7976931348623157e308
built {"r":0.0}
EOF

cat >odd.in <<'EOF'
"a\u0000b"
{"k\u0000":1}
{"a":"\u0000"}
{"n":99999999999999999999}
{"n":-9223372036854775809}
{"r":1e400}
{"r":-1e400}
{"a":"\ud800"}
[1,

{"a":01}
{"a":1}x
"\xff"
EOF
printf '[%.0s' $(seq 600) >deep.in
printf ']%.0s' $(seq 600) >>deep.in
echo >>deep.in
check_output 'what jansson reads otherwise, or refuses, is jansson'"'"'s' 'unit jload any <odd.in' <<'EOF'
error 1:10@10 \u0000 is not allowed without JSON_ALLOW_NUL near '"a\u0000b"'
error 1:10@10 NUL byte in object key not supported near '"k\u0000"'
error 1:13@13 \u0000 is not allowed without JSON_ALLOW_NUL near '"\u0000"'
error 1:25@25 too big integer near '99999999999999999999'
error 1:25@25 too big negative integer near '-9223372036854775809'
error 1:10@10 real number overflow near '1e400'
error 1:11@11 real number overflow near '-1e400'
error 1:13@13 invalid Unicode '\uD800' near '"\ud800"'
error 1:3@3 ']' expected near end of file
error 1:0@0 unexpected token near end of file
error 1:6@6 invalid token near '0'
error 1:8@8 end of file expected near 'x'
error 1:3@3 invalid escape near '"\x'
EOF
check_output 'NULs in strings with JSON_ALLOW_NUL; top-level scalars without JSON_DECODE_ANY' 'unit jload nul <odd.in | head -3' <<'EOF'
error 1:10@10 '[' or '{' expected near '"a\u0000b"'
error 1:10@10 NUL byte in object key not supported near '"k\u0000"'
built {"a":"\u0000"}
EOF
check_output 'nesting past jscan'"'"'s depth is read by jansson' 'unit jload <deep.in | cut -c1-12' <<'EOF'
jansson [[[[
EOF
check 'every line of the claim-watch capture is built, the same as jansson' '
	unit jload <"$FIXTURES/claim-watch/configmaps.watch" >out &&
	[ "$(cut -d" " -f1 out | sort | uniq -c | tr -s " ")" = " 6 built" ]'

# A thread keeps its text and token buffers from read to read while they
# are small (lib/jload.c KEEP_MAX, 256 KiB) and frees larger ones: lines
# that grow and shrink past it, and one whose tokens outgrow the first
# array, read the same as each does alone in a fresh process.
awk 'BEGIN {
	print "{\"a\":1}"
	s = "["; for (i = 0; i < 60000; i++) s = s (i ? "," : "") "1"; print s "]"
	print "{\"b\":[true,false]}"
	s = "{\"big\":\""; for (i = 0; i < 40000; i++) s = s "0123456789"; print s "\"}"
	print "[1,2]"
	s = "["; for (i = 0; i < 3000; i++) s = s (i ? "," : "") "[]"; print s "]"
	print "\"last\""
}' >sizes.in
check 'buffers kept from line to line, and freed past 256 KiB, read each line as a fresh process does' '
	unit jload any <sizes.in >out &&
	[ "$(cut -d" " -f1 out | tr "\n" " ")" = "built built built built built built built " ] &&
	while IFS= read -r line; do printf "%s\n" "$line" | unit jload any; done <sizes.in >one &&
	cmp out one'
check 'a skip function that reads JSON itself gets buffers of its own: each read comes out as alone' '
	unit jload any nested <values.in >nested &&
	unit jload any <values.in >plain &&
	cmp nested plain &&
	unit jload any nested <sizes.in >nested &&
	cmp nested out'

done_testing
