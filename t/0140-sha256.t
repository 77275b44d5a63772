#!/bin/sh
# lib/sha256 through t/unit/sha256: the digest of inputs around every
# padding and block boundary (0, 55, 56, 63, 64, 65, 119, 120 bytes) and a
# large random one, fed in pieces of 1, 55, 64, 65 and 4096 bytes, equals
# coreutils' sha256sum, and the one-call form agrees.
. "$(dirname "$0")/lib.sh"

head -c 300000 /dev/urandom >random
for n in 0 1 55 56 63 64 65 119 120 300000; do
	head -c "$n" random >in
	want=$(sha256sum <in | cut -d' ' -f1)
	for c in 1 55 64 65 4096; do
		[ "$n" -le 1000 ] || [ "$c" -ge 64 ] || continue
		check_output "$n bytes in pieces of $c" "unit sha256 $c <in" <<EOF
$want
$want
EOF
	done
done
check_output 'the FIPS 180-4 example "abc"' 'printf abc | unit sha256' <<'EOF'
ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad
ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad
EOF
done_testing
