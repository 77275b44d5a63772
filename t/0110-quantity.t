#!/bin/sh
# lib/quantity through t/unit/quantity: Kubernetes resource quantities
# parsed exactly, to the value the API server gives them (the expected
# values were checked against apimachinery 0.34's ParseQuantity: binary
# capped at 2^63-1, exponents wrapped to 32 bits, digitless numbers),
# written in canonical form, compared, added and subtracted, 10^38 and
# beyond held as huge; the exact reason for each bad input.
. "$(dirname "$0")/lib.sh"

qty() { unit quantity; }

check_output 'every suffix form, in canonical form' 'qty <<IN
10Gi
500m
1.5
1e3
32861620Ki
8000m
0.5Gi
+1
1E
100k
1M
2Ti
1Ki
1Mi
3Pi
7Ei
100n
250u
5k
2G
4T
6P
1E3
1e-3
12e6
0
-0
0Gi
0.0m
IN' <<'EOF'
10Gi
500m
1500m
1e3
32861620Ki
8
512Mi
1
1E
100k
1M
2Ti
1Ki
1Mi
3Pi
7Ei
100n
250u
5k
2G
4T
6P
1e3
1e-3
12e6
0
0
0
0
EOF

check_output 'canonical form: largest exponent, no fraction' 'qty <<IN
1000
1500
2000m
1000000
1200000
1.5Gi
1.5Ki
0.3Ki
1.1Ki
1024
2048Ki
1536Mi
1e0
1.5e3
123.456e2
0.5
-1.5
-2Gi
-0.5Ki
.5
5.
007
1.000000001k
IN' <<'EOF'
1k
1500
2
1M
1200k
1536Mi
1536
307200m
1126400m
1024
2Mi
1536Mi
1
1500
12345600e-3
500m
-1500m
-2Gi
-512
500m
5
7
1000000001u
EOF

check_output 'precision: nano units, finer digits round up away from zero' 'qty <<IN
0.1n
1.5n
-0.1n
0.0000000001Ei
1e-99999
0e99999
IN' <<'EOF'
1n
2n
-1n
115292150460684698n
1e-9
0
EOF

check_output 'range: decimal without bound, binary capped at 2^63-1, as Kubernetes' 'qty <<IN
9223372036854775807
9223372036854775808
-9223372036854775809
8Ei
9Ei
-8Ei
100000000000000000000Ki
7.99999Ei
9E
10E
9.3E
1000E
1e21
1e30
10000000000000000000m
9223372036854775.807k
99999999999999999999999999999999999999
99999999999999999999999999999999999999.999999999
99999999999999999999999999999999999999.9999999991
1e38
1e39
-1e40
1.5e-2147483648
IN' <<'EOF'
9223372036854775807
9223372036854775808
-9223372036854775809
9223372036854775807
9223372036854775807
-9223372036854775807
9223372036854775807
9223360507639729739530240u
9E
10E
9300P
1000E
1e21
1e30
10P
9223372036854775807
99999999999999999999999999999999999999
99999999999999999999999999999999999999999999999n
100000000000000000000E huge
100e36 huge
100e36 huge
-100e36 huge
100e36 huge
EOF

check_output 'exponents: 64-bit, then taken modulo 2^32, as Kubernetes does' 'qty <<IN
1e4294967296
1e4294967298
1e-4294967260
1e9223372036854775807
1e-9223372036854775808
1e9223372036854775808
1e999999999999999999999
1e2147483647
1e2147483648
1e-2147483648
1e-2147483647
1e2147483657
1.5e-2147483647
IN' <<'EOF'
1
100
1e36
100e-3
1
error: "1e9223372036854775808": invalid exponent
error: "1e999999999999999999999": invalid exponent
100e36 huge
100e36 huge
100e36 huge
1e-9
1e-9
100e36 huge
EOF

check_output 'no digit at all is 0, as in Kubernetes, but for e-10 and below, Pi and Ei' 'qty <<IN
.
+
-
-.
Gi
Ki
-Ki
Ti
m
e3
.e3
e-9
e-10
+e-20
Pi
Ei
0Ei
0.e-20
IN' <<'EOF'
0
0
0
0
0
0
0
0
0
0
0
0
error: "e-10": invalid number
error: "+e-20": invalid number
error: "Pi": invalid number
error: "Ei": invalid number
0
0
EOF

check_output 'bad input: the reason' 'qty <<IN

 1
1 
10Gix
1K
1k8
1Gb
1e
1e+
1e3x
1EE
1.2.3
1.5.
1,5
0x10
5 m
1me3
IN' <<'EOF'
error: "": empty quantity
error: " 1": trailing garbage
error: "1 ": trailing garbage
error: "10Gix": trailing garbage
error: "1K": unknown suffix
error: "1k8": unknown suffix
error: "1Gb": trailing garbage
error: "1e": invalid exponent
error: "1e+": invalid exponent
error: "1e3x": trailing garbage
error: "1EE": invalid exponent
error: "1.2.3": trailing garbage
error: "1.5.": trailing garbage
error: "1,5": trailing garbage
error: "0x10": trailing garbage
error: "5 m": trailing garbage
error: "1me3": unknown suffix
EOF

check_output 'comparisons' 'qty <<IN
cmp 8000m 8
cmp 8 8000m
cmp 32861620Ki 32Gi
cmp 32Gi 32861620Ki
cmp 1Gi 1G
cmp 1k 1000
cmp 1e3 1k
cmp 1Ki 1024
cmp 500m 0.5
cmp -1 -2
cmp -1.5 -1
cmp 1n 0
cmp 9223372036854775807 9223372036854775806
cmp 9223372036854775808 9223372036854775807
cmp 8Ei 9223372036854775807
cmp 1e19 32Gi
cmp 10000000000000000000m 8
cmp 1e30 1e29
cmp 99999999999999999999999999999999999999 1e38
cmp 1e38 1e40
cmp -1e40 -1
cmp -1e40 1e40
cmp 1 1x
IN' <<'EOF'
0
0
-1
1
1
0
0
0
0
1
-1
1
1
1
0
1
1
1
-1
0
-1
-1
error: "1x": trailing garbage
EOF

check_output 'sums and differences keep the left form' 'qty <<IN
add 16Gi 16Gi
add 1 500m
add 500m 1
add 1Gi 1
add 1Gi 512Mi
add 0 1Gi
add 8 8000m
add 1.5 -1.5
add 32861620Ki 1Ki
add 1E 1E
add 9223372036854775807 1
add 8Ei 8Ei
add -9223372036854775807 -1
sub 1Gi 512Mi
sub 0 1Gi
sub 8 8000m
sub 1 1n
sub 2Ti 1Ti
sub 100m 1
sub -9223372036854775807 2
add 60000000000000000000000000000000000000 40000000000000000000000000000000000000
add 60000000000000000000000000000000000000 39999999999999999999999999999999999999.999999999
add 1e40 -1
add -1 1e40
add 1e40 -1e40
add -1e40 -1e40
sub 1e38 1e40
sub 0 1e40
add 1 bad
IN' <<'EOF'
32Gi
1500m
1500m
1073741825
1536Mi
1Gi
16
0
32861621Ki
2E
9223372036854775808
18446744073709551614
-9223372036854775808
512Mi
-1Gi
0
999999999n
1Ti
-900m
-9223372036854775809
100000000000000000000E huge
99999999999999999999999999999999999999999999999n
100e36 huge
100000000000000000000E huge
100e36 huge
-100e36 huge
100e36 huge
-100e36 huge
error: "bad": trailing garbage
EOF

check_output 'value and milli-value round away from zero' 'qty <<IN
value 1.5
value 1.4
value -1.5
value 100m
value 1n
value 10Gi
value 1E
value 9223372036854775807
value 9223372036854775808
value -9223372036854775808
value 8Ei
value 1e40
milli 1.5
milli 0.1m
milli 1n
milli -0.0001
milli 8
milli 9223372036854775807
milli 9223372036854775
milli 9223372036854775.807
milli 9223372036854775.8071
milli 10000000000000000000m
IN' <<'EOF'
2
2
-2
1
1
10737418240
1000000000000000000
9223372036854775807
error: out of range
-9223372036854775808
9223372036854775807
error: out of range
1500
1
1
-1
8000
error: out of range
9223372036854775000
9223372036854775807
error: out of range
error: out of range
EOF

check_output 'built from integers: bytes and thousandths' 'qty <<IN
bytes 85520809984
bytes 1073741824
bytes 1000
bytes 1023
bytes 1536
bytes 0
bytes -1024
millis 1500
millis 8000
millis -1500
millis 1
IN' <<'EOF'
81559Mi
1Gi
1k
1023
1536
0
-1Ki
1500m
8
-1500m
1m
EOF

done_testing
