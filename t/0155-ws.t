#!/bin/sh
# lib/ws through t/unit/ws: the WebSocket framing kexec speaks to the
# API server, checked against RFC 6455's own examples (section 1.3's
# handshake, section 5.7's frames) and frames cut short or malformed.
. "$(dirname "$0")/lib.sh"

check_output "the handshake's answer is RFC 6455's" 'unit ws accept dGhlIHNhbXBsZSBub25jZQ==' <<'EOF2'
s3pPLMBiTxaQ9kYGzzhZRbK+xOo=
EOF2

check_output 'a client frame is masked, as section 5.7 shows' 'printf Hello | unit ws frame 1' <<'EOF2'
81 85 37 fa 21 3d 7f 9f 4d 51 58
EOF2

check_output 'payloads of 126 and 65536 bytes take the 16- and 64-bit lengths' \
	'head -c 126 /dev/zero | unit ws frame 2 | cut -c1-17; head -c 65536 /dev/zero | unit ws frame 2 | cut -c1-41' <<'EOF2'
82 fe 00 7e 37 fa
82 ff 00 00 00 00 00 01 00 00 37 fa 21 3d
EOF2

check_output 'server frames: unmasked, masked (unmasked on reading), then a partial one' \
	"printf '\\201\\005Hello\\201\\205\\067\\372\\041\\075\\177\\237\\115\\121\\130\\202\\003ab' | unit ws parse" <<'EOF2'
1 1 5 Hello
1 1 5 Hello
rest 4
EOF2

check_output 'a 16-bit length is read, and a frame over the limit is none' \
	"{ printf '\\202\\176\\000\\200'; head -c 128 /dev/zero | tr '\\000' x; } | unit ws parse | cut -c1-12;
	 { printf '\\202\\176\\000\\200'; head -c 128 /dev/zero; } | unit ws parse 100" <<'EOF2'
1 2 128 xxxx
bad
EOF2

check_output 'reserved bits, an unknown opcode, a long or fragmented control frame: no frame' \
	"printf '\\301\\000' | unit ws parse; printf '\\203\\000' | unit ws parse;
	 printf '\\210\\176\\000\\200' | unit ws parse; printf '\\011\\000' | unit ws parse" <<'EOF2'
bad
bad
bad
bad
EOF2
done_testing
