#!/bin/sh
# lib/mig through t/unit/mig: profile names parsed into slices, compute
# slices, nominal memory and attribute; ordering by size; what a layout
# takes on one GPU, compute-instance splits sharing GPU instances.
. "$(dirname "$0")/lib.sh"

mig() { unit mig; }

check_output 'the profiles of A100, H100, H200 and Blackwell parts' 'mig <<IN
1g.10gb
2g.20gb
3g.40gb
4g.40gb
7g.80gb
1g.18gb
3g.71gb
7g.141gb
1c.3g.71gb
2c.3g.40gb
1c.7g.80gb
1g.10gb+me
1g.20gb+me.all
1g.24gb+gfx
4g.96gb-me
IN' <<'EOF'
1g.10gb: slices=1 compute=1 mem_mib=10240 attr=none as=1g.10gb
2g.20gb: slices=2 compute=2 mem_mib=20480 attr=none as=2g.20gb
3g.40gb: slices=3 compute=3 mem_mib=40960 attr=none as=3g.40gb
4g.40gb: slices=4 compute=4 mem_mib=40960 attr=none as=4g.40gb
7g.80gb: slices=7 compute=7 mem_mib=81920 attr=none as=7g.80gb
1g.18gb: slices=1 compute=1 mem_mib=18432 attr=none as=1g.18gb
3g.71gb: slices=3 compute=3 mem_mib=72704 attr=none as=3g.71gb
7g.141gb: slices=7 compute=7 mem_mib=144384 attr=none as=7g.141gb
1c.3g.71gb: slices=3 compute=1 mem_mib=72704 attr=none as=1c.3g.71gb
2c.3g.40gb: slices=3 compute=2 mem_mib=40960 attr=none as=2c.3g.40gb
1c.7g.80gb: slices=7 compute=1 mem_mib=81920 attr=none as=1c.7g.80gb
1g.10gb+me: slices=1 compute=1 mem_mib=10240 attr=me as=1g.10gb+me
1g.20gb+me.all: slices=1 compute=1 mem_mib=20480 attr=me.all as=1g.20gb+me.all
1g.24gb+gfx: slices=1 compute=1 mem_mib=24576 attr=gfx as=1g.24gb+gfx
4g.96gb-me: slices=4 compute=4 mem_mib=98304 attr=no-me as=4g.96gb-me
EOF

check_output 'malformed names are refused' 'mig <<IN
0g.10gb
8g.80gb
10g.80gb
4c.3g.40gb
0c.3g.40gb
1g.0gb
01g.10gb
1g.010gb
1g.10
1g.10gb+
1g.10gb+mex
1g.10GB
1G.10gb
g.10gb
1g..10gb
1c.1c.1g.10gb
1g.10gb.
1g.4097gb
mig-1g.10gb
nvidia.com/mig-1g.10gb
IN' <<'EOF'
0g.10gb: invalid
8g.80gb: invalid
10g.80gb: invalid
4c.3g.40gb: invalid
0c.3g.40gb: invalid
1g.0gb: invalid
01g.10gb: invalid
1g.010gb: invalid
1g.10: invalid
1g.10gb+: invalid
1g.10gb+mex: invalid
1g.10GB: invalid
1G.10gb: invalid
g.10gb: invalid
1g..10gb: invalid
1c.1c.1g.10gb: invalid
1g.10gb.: invalid
1g.4097gb: invalid
mig-1g.10gb: invalid
nvidia.com/mig-1g.10gb: invalid
EOF

check_output 'sizes compare by slices, then memory, compute, attribute' 'mig <<IN
cmp 1g.10gb 2g.20gb
cmp 2g.20gb 1g.10gb
cmp 2g.20gb 2g.20gb
cmp 3g.40gb 4g.40gb
cmp 1g.20gb 1g.10gb
cmp 1c.3g.40gb 3g.40gb
cmp 2c.3g.40gb 1c.3g.40gb
cmp 1g.10gb+me 1g.10gb
cmp 7g.80gb 4g.40gb
IN' <<'EOF'
1g.10gb < 2g.20gb
2g.20gb > 1g.10gb
2g.20gb = 2g.20gb
3g.40gb < 4g.40gb
1g.20gb > 1g.10gb
1c.3g.40gb < 3g.40gb
2c.3g.40gb > 1c.3g.40gb
1g.10gb+me > 1g.10gb
7g.80gb > 4g.40gb
EOF

check_output 'what a layout takes; splits of one size share instances' 'mig <<IN
usage 1g.10gb 1g.10gb 1g.10gb 1g.10gb 1g.10gb 1g.10gb 1g.10gb
usage 2g.20gb 2g.20gb 2g.20gb 1g.10gb
usage 3g.40gb 1c.3g.40gb 2c.3g.40gb
usage 1c.3g.40gb 1c.3g.40gb 1c.3g.40gb
usage 1c.3g.40gb 1c.3g.40gb 1c.3g.40gb 1c.3g.40gb
usage 1c.4g.40gb 1c.3g.40gb
usage 4g.40gb 3g.40gb 1g.10gb
IN' <<'EOF'
usage: slices=7 mem_gib=70
usage: slices=7 mem_gib=70
usage: slices=6 mem_gib=80
usage: slices=3 mem_gib=40
usage: slices=6 mem_gib=80
usage: slices=7 mem_gib=80
usage: slices=8 mem_gib=90
EOF

check 'a request naming a bad profile exits 1' \
	'echo "cmp 1g.10gb huge" | mig >out; test $? -eq 1 && grep -qx "huge: invalid" out'

done_testing
