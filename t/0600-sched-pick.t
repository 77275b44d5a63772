#!/bin/sh
# sched-pick: every strategy on small crafted inventories with exact
# placements; explicit indexes, preferred node, selectors, MIG fallback
# chains, unhealthy and unready nodes, shared packing, allocations,
# releases and batches, priority order, round-robin state across runs,
# seeded random; bad input and options; the same placements as the
# plain scan of bench/linear-pick.c.
. "$(dirname "$0")/lib.sh"

# gpus NODE MEM UTIL...: whole GPUs NODE-g0, NODE-g1... with these
# utilizations, as gpu-probe writes them.
gpus() {
	node=$1 mem=$2
	shift 2
	i=0
	for u; do
		printf '{"kind":"gpu","node":"%s","index":%d,"uuid":"%s-g%d","product":"NVIDIA-H100-80GB-HBM3","memory_mib":%d,"memory_used_mib":0,"util_pct":%d,"mig_enabled":false,"mig":null,"health":"ok"}\n' \
			"$node" "$i" "$node" "$i" "$mem" "$u"
		i=$((i + 1))
	done
}

# pick ARGS: sched-pick with the records as [id, node, indexes, score] or
# [id, reason], then "exit N" and the messages.
pick() {
	sched-pick "$@" >out 2>err
	st=$?
	jq -c 'if .kind == "placement" then [.id, .node, .indexes, .score]
		else [.id, .reason] end' out
	echo "exit $st"
	cat err
}

# The inventories several checks share are fixtures, copied under the
# short names the checks use; t/fixtures/sched-pick/README says what each
# holds (inv: n1 4 H100s busy, n2 2 A100 40GB idle, n3 3 H100s cheap, n4
# and n5 idle but never usable).
F=$FIXTURES/sched-pick
cp "$F/fleet.ndjson" inv && cp "$F/mig-1g.ndjson" gpuinv && cp "$F/mig-mixed.ndjson" miginv &&
	cp "$F/unhealthy.ndjson" uinv && cp "$F/five-gpus.ndjson" pinv || exit 1

cat >batch <<'EOF'
{"kind":"request","id":"b/1","gpus":2}
{"kind":"request","id":"b/2","gpus":1}
{"kind":"request","id":"b/3","gpus":2}
{"kind":"request","id":"b/4","gpus":3}
{"kind":"request","id":"b/5","gpus":1,"min_memory_mib":50000}
EOF

# ---- strategies ----

check_output 'one request under each strategy, full records' \
	'for s in least_utilized least_loaded best_fit binpack spread binpack_gpu spread_gpu priority round_robin cost_optimized; do echo "{\"kind\":\"request\",\"id\":\"a/1\"}" | cat inv - | sched-pick -S $s; done' <<'EOF'
{"kind":"placement","id":"a/1","node":"n2","devices":["n2-g0"],"indexes":[0],"strategy":"least_utilized","score":15.0}
{"kind":"placement","id":"a/1","node":"n1","devices":["n1-g0"],"indexes":[0],"strategy":"least_loaded","score":4}
{"kind":"placement","id":"a/1","node":"n2","devices":["n2-g0"],"indexes":[0],"strategy":"best_fit","score":81920}
{"kind":"placement","id":"a/1","node":"n2","devices":["n2-g0"],"indexes":[0],"strategy":"binpack","score":2}
{"kind":"placement","id":"a/1","node":"n1","devices":["n1-g0"],"indexes":[0],"strategy":"spread","score":4}
{"kind":"placement","id":"a/1","node":"n2","devices":["n2-g1"],"indexes":[1],"strategy":"binpack_gpu","score":2}
{"kind":"placement","id":"a/1","node":"n1","devices":["n1-g0"],"indexes":[0],"strategy":"spread_gpu","score":4}
{"kind":"placement","id":"a/1","node":"n2","devices":["n2-g0"],"indexes":[0],"strategy":"priority","score":15.0}
{"kind":"placement","id":"a/1","node":"n1","devices":["n1-g0"],"indexes":[0],"strategy":"round_robin","score":0}
{"kind":"placement","id":"a/1","node":"n3","devices":["n3-g0"],"indexes":[0],"strategy":"cost_optimized","score":2.0}
EOF

check_output 'least_utilized: lowest mean utilization, devices least busy first' \
	'pick inv batch' <<'EOF'
["b/1","n2",[0,1],15]
["b/2","n3",[0],30]
["b/3","n3",[1,2],30]
["b/4","n1",[0,1,2],65]
["b/5","n1",[3],80]
exit 0
EOF

check_output 'least_loaded: most free devices, then memory; never double-booked' \
	'pick -S leastLoaded inv batch' <<'EOF'
["b/1","n1",[0,1],4]
["b/2","n3",[0],3]
["b/3","n1",[2,3],2]
["b/4","no node has 3 free healthy GPUs"]
["b/5","n3",[1],2]
exit 0
EOF

check_output 'best_fit: least free memory that still fits' \
	'pick -S bestFit inv batch' <<'EOF'
["b/1","n2",[0,1],81920]
["b/2","n3",[0],244677]
["b/3","n3",[1,2],163118]
["b/4","n1",[0,1,2],326236]
["b/5","n1",[3],81559]
exit 0
EOF

check_output 'binpack and spread: fewest and most free devices' \
	'pick -S binpack inv batch; pick -S spread inv batch' <<'EOF'
["b/1","n2",[0,1],2]
["b/2","n3",[0],3]
["b/3","n3",[1,2],2]
["b/4","n1",[0,1,2],4]
["b/5","n1",[3],1]
exit 0
["b/1","n1",[0,1],4]
["b/2","n3",[0],3]
["b/3","n1",[2,3],2]
["b/4","no node has 3 free healthy GPUs"]
["b/5","n3",[1],2]
exit 0
EOF

check_output 'binpack_gpu and spread_gpu on whole GPUs: busiest and idlest devices' \
	'pick -S binpack_gpu inv batch; pick -S spread_gpu inv batch' <<'EOF'
["b/1","n2",[0,1],2]
["b/2","n3",[0],3]
["b/3","n3",[1,2],2]
["b/4","n1",[1,2,3],4]
["b/5","n1",[0],1]
exit 0
["b/1","n1",[0,1],4]
["b/2","n3",[0],3]
["b/3","n1",[2,3],2]
["b/4","no node has 3 free healthy GPUs"]
["b/5","n3",[1],2]
exit 0
EOF

cat >migreq <<'EOF'
{"kind":"request","id":"m/1","gpus":3,"mig_profile":"1g.10gb"}
EOF
check_output 'binpack_gpu packs MIG devices onto the fullest GPU; spread_gpu spreads them' \
	'sched-pick -S binpack_gpu gpuinv migreq | jq -c .devices; sched-pick -S spread_gpu gpuinv migreq | jq -c .devices' <<'EOF'
["g1-g1-m5","g1-g1-m6","g1-g2-m1"]
["g1-g0-m0","g1-g1-m5","g1-g2-m1"]
EOF

check_output 'round_robin: rotates in name order, skips what cannot be chosen' \
	'pick -S round_robin inv batch' <<'EOF'
["b/1","n1",[0,1],0]
["b/2","n2",[0],1]
["b/3","n3",[0,1],2]
["b/4","no node has 3 free healthy GPUs"]
["b/5","n1",[2],0]
exit 0
EOF

cat >two <<'EOF'
{"kind":"request","id":"r/1"}
{"kind":"request","id":"r/2"}
EOF
check_output 'round_robin: the position survives a restart through -s' \
	'pick -S round_robin -s rr.state inv two && cat rr.state && pick -S roundRobin -s rr.state inv two && cat rr.state && ls rr.state* && pick -S round_robin inv two' <<'EOF'
["r/1","n1",[0],0]
["r/2","n2",[0],1]
exit 0
{"kind":"sched-state","round_robin_last":"n2"}
["r/1","n3",[0],2]
["r/2","n1",[0],0]
exit 0
{"kind":"sched-state","round_robin_last":"n1"}
rr.state
["r/1","n1",[0],0]
["r/2","n2",[0],1]
exit 0
EOF

check_output 'round_robin: a state naming a node gone wraps; a bad state file exits 1' \
	'echo "{\"kind\":\"sched-state\",\"round_robin_last\":\"n9\"}" >old.state && pick -S round_robin -s old.state inv two; echo junk >bad.state; pick -S round_robin -s bad.state inv two' <<'EOF'
["r/1","n1",[0],0]
["r/2","n2",[0],1]
exit 0
exit 1
sched-pick: bad.state: not a sched-pick state file
EOF

i=0
while [ $i -lt 8 ]; do
	echo "{\"kind\":\"request\",\"id\":\"z/$i\"}"
	i=$((i + 1))
done >eight
check 'random: the same seed gives the same placements, another seed others' '
	sched-pick -S random inv eight >s1a && sched-pick -S random -r 1 inv eight >s1b &&
	sched-pick -S random -r 2 inv eight >s2 && cmp s1a s1b && ! cmp -s s1a s2 &&
	test "$(grep -c "\"strategy\":\"random\"" s2)" = 8 &&
	! grep -q "\"node\":\"n[45]\"" s1a s2'

check_output 'cost_optimized: cheap nodes, then lower cost, then least loaded' \
	'pick -S costOptimized inv batch' <<'EOF'
["b/1","n3",[0,1],2]
["b/2","n3",[2],2]
["b/3","n2",[0,1],1]
["b/4","n1",[0,1,2],3]
["b/5","n1",[3],3]
exit 0
EOF

check_output 'cost_optimized: a node of unknown cost comes last' \
	'{ gpus c1 81559 0; gpus c2 81559 0; echo "{\"kind\":\"node\",\"name\":\"c2\",\"cost\":9.5}"; } >costinv && pick -S cost_optimized costinv two' <<'EOF'
["r/1","c2",[0],9.5]
["r/2","c1",[0],null]
exit 0
EOF

cat >prio <<'EOF'
{"kind":"request","id":"q/1","priority":1}
{"kind":"request","id":"q/2","priority":5,"created":"2025-03-01T10:00:00Z"}
{"kind":"request","id":"q/3","priority":5,"created":"2025-03-01T11:00:00+02:00"}
{"kind":"request","id":"q/4","priority":5}
{"kind":"request","id":"q/5","priority":9,"strategy":"binpack_gpu"}
{"kind":"request","id":"q/6","priority":"high"}
EOF
check_output 'priority: higher first, then earlier created, then input order' \
	'pick -S priority pinv prio' <<'EOF'
["q/5","p1",[4],5]
["q/3","p1",[0],25]
["q/2","p1",[1],30]
["q/4","p1",[2],35]
["q/1","p1",[3],40]
["q/6","priority must be a whole number, got \"high\""]
exit 0
EOF

check_output 'priority: other strategies keep input order' \
	'pick pinv prio' <<'EOF'
["q/1","p1",[0],30]
["q/2","p1",[1],35]
["q/3","p1",[2],40]
["q/4","p1",[3],45]
["q/5","p1",[4],1]
["q/6","priority must be a whole number, got \"high\""]
exit 0
EOF

# ---- constraints ----

check_output 'explicit GPU indexes' 'pick inv - <<IN
{"kind":"request","id":"i/1","gpu_ids":[1,3]}
{"kind":"request","id":"i/2","gpu_ids":[1]}
{"kind":"request","id":"i/3","gpu_ids":[1,1]}
{"kind":"request","id":"i/4","gpu_ids":[5]}
{"kind":"request","id":"i/5","gpus":3,"gpu_ids":[0,1]}
{"kind":"request","id":"i/6","gpus":2,"gpu_ids":[2,0]}
IN' <<'EOF'
["i/1","n1",[1,3],65]
["i/2","n2",[1],15]
["i/3","gpu_ids names GPU 1 twice"]
["i/4","no node has 1 free healthy GPU at index 5"]
["i/5","gpu_ids names 2 GPUs but gpus is 3"]
["i/6","n3",[0,2],30]
exit 0
EOF

check_output 'preferred node: taken when it fits, else the strategy decides' 'pick inv - <<IN
{"kind":"request","id":"p/1","prefer_node":"n1"}
{"kind":"request","id":"p/2","prefer_node":"n4"}
{"kind":"request","id":"p/3","prefer_node":"n2","min_memory_mib":50000}
{"kind":"request","id":"p/4","prefer_node":"nx"}
IN' <<'EOF'
["p/1","n1",[0],65]
["p/2","n2",[0],15]
["p/3","n3",[0],30]
["p/4","n2",[1],20]
exit 0
EOF

check_output 'node selector: every label must match' 'pick inv - <<IN
{"kind":"request","id":"s/1","node_selector":{"gpu":"h100"}}
{"kind":"request","id":"s/2","node_selector":{"gpu":"v100"}}
{"kind":"request","id":"s/3","node_selector":{"zone":"a","gpu":"h100"}}
{"kind":"request","id":"s/4","gpus":4,"node_selector":{"gpu":"a100"}}
{"kind":"request","id":"s/5","node_selector":{"gpu":"h100","zone":"c"}}
IN' <<'EOF'
["s/1","n3",[0],30]
["s/2","no ready node matches node selector gpu=v100"]
["s/3","n1",[0],65]
["s/4","no node matching node selector gpu=a100 has 4 free healthy GPUs"]
["s/5","no ready node matches node selector gpu=h100,zone=c"]
exit 0
EOF

check_output 'unhealthy devices and unready nodes are never chosen; warn is' 'pick uinv - <<IN
{"kind":"request","id":"u/1"}
{"kind":"request","id":"u/2"}
{"kind":"flush"}
{"kind":"node","name":"u2","ready":true}
{"kind":"request","id":"u/3"}
IN' <<'EOF'
["u/1","u1",[1],90]
["u/2","no node has 1 free healthy GPU"]
["u/3","u2",[0],5]
exit 0
EOF

check_output 'MIG: profiles, a fallback chain tried profile by profile, reasons' \
	'sched-pick miginv - <<IN | jq -c "[.id, .node, .devices, .mig_profile, .fallback_from, .reason]"
{"kind":"request","id":"w/1","gpus":1}
{"kind":"request","id":"w/2","gpus":1}
{"kind":"request","id":"g/1","gpus":2,"mig_profile":"3g.40gb","mig_fallback":["2g.20gb","1g.10gb"]}
{"kind":"request","id":"g/2","gpus":2,"mig_profile":"2g.20gb"}
{"kind":"request","id":"g/3","gpus":2,"mig_profile":"2g.20gb","mig_fallback":["1g.10gb"],"prefer_node":"m2"}
{"kind":"request","id":"g/4","gpus":1,"mig_profile":"2g.20gb","mig_fallback":["1g.10gb"],"prefer_node":"m2"}
{"kind":"request","id":"g/5","gpus":8,"mig_profile":"1g.10gb","mig_fallback":["3g.40gb","7g.80gb"]}
{"kind":"request","id":"g/6","mig_profile":"2g.20"}
{"kind":"request","id":"g/7","mig_fallback":["1g.10gb"]}
{"kind":"request","id":"g/8","mig_profile":"1g.10gb","gpu_ids":[0,0]}
IN' <<'EOF'
["w/1","m1",["m1-g1"],null,null,null]
["w/2",null,null,null,null,"no node has 1 free healthy GPU"]
["g/1","m1",["m1-g0-m0","m1-g0-m1"],"2g.20gb","3g.40gb",null]
["g/2",null,null,null,null,"no node has 2 free 2g.20gb devices"]
["g/3","m2",["m2-g0-m0","m2-g0-m1"],"1g.10gb","2g.20gb",null]
["g/4","m1",["m1-g0-m2"],"2g.20gb",null,null]
["g/5",null,null,null,null,"no node has 8 free 1g.10gb, 3g.40gb or 7g.80gb devices"]
["g/6",null,null,null,null,"mig_profile \"2g.20\" is not a MIG profile name"]
["g/7",null,null,null,null,"mig_fallback needs a mig_profile"]
["g/8","m2",["m2-g0-m2","m2-g0-m3"],"1g.10gb",null,null]
EOF

# ---- shared use, allocations, releases, batches ----

check_output 'shared: packed onto a shared device while its memory lasts' \
	'gpus s1 81559 0 0 >sinv && sched-pick sinv - <<IN | jq -c "[.id, .devices, .reason]"
{"kind":"request","id":"h/1","exclusive":false,"min_memory_mib":30000}
{"kind":"request","id":"h/2","exclusive":false,"min_memory_mib":30000}
{"kind":"request","id":"h/3","exclusive":false,"min_memory_mib":30000}
{"kind":"request","id":"h/4","exclusive":true}
{"kind":"request","id":"h/5","exclusive":false,"min_memory_mib":20000}
{"kind":"request","id":"h/6","exclusive":false,"min_memory_mib":60000}
{"kind":"flush"}
{"kind":"release","id":"h/1"}
{"kind":"release","id":"h/2"}
{"kind":"release","id":"h/5"}
{"kind":"request","id":"h/7","exclusive":true}
{"kind":"request","id":"h/8","exclusive":false,"min_memory_mib":60000}
IN' <<'EOF'
["h/1",["s1-g0"],null]
["h/2",["s1-g0"],null]
["h/3",["s1-g1"],null]
["h/4",null,"no node has 1 free healthy GPU"]
["h/5",["s1-g0"],null]
["h/6",null,"no node has 1 GPU with 60000 MiB free to share"]
["h/7",["s1-g0"],null]
["h/8",null,"no node has 1 GPU with 60000 MiB free to share"]
EOF

check_output 'allocations, releases, withdrawn and repeated requests' 'pick -S binpack inv - <<IN
{"kind":"allocation","id":"x/a","node":"n2","devices":["n2-g0","n2-g1"],"exclusive":true}
{"kind":"allocation","id":"x/b","node":"n2","devices":["n2-g1"]}
{"kind":"allocation","id":"x/c","devices":["n3-g0"],"exclusive":false,"memory_mib":70000}
{"kind":"request","id":"a/1","gpus":1}
{"kind":"request","id":"a/2","gpus":1}
{"kind":"release","id":"a/2"}
{"kind":"request","id":"a/3","gpus":1,"exclusive":false,"min_memory_mib":10000}
{"kind":"flush"}
{"kind":"request","id":"a/1","gpus":1}
{"kind":"release","id":"x/a"}
{"kind":"release","id":"nobody"}
{"kind":"request","id":"a/4","gpus":2}
IN' <<'EOF'
["a/1","n3",[1],2]
["a/3","n3",[0],1]
["a/1","a/1 already holds devices on n3"]
["a/4","n2",[0,1],2]
exit 1
sched-pick: <stdin>:2: allocation x/b: device n2-g1 is already in use
EOF

check_output 'batches: records before a flush count, requests wait for it' 'pick - <<IN
{"kind":"request","id":"f/1"}
{"kind":"gpu","node":"late","index":0,"uuid":"late-g0","memory_mib":1024,"util_pct":0}
{"kind":"flush"}
{"kind":"request","id":"f/2"}
{"kind":"flush"}
{"kind":"release","id":"f/1"}
{"kind":"request","id":"f/3"}
IN' <<'EOF'
["f/1","late",[0],0]
["f/2","no node has 1 free healthy GPU"]
["f/3","late",[0],0]
exit 0
EOF

check 'batches: each answer is written as soon as it is decided' '
	mkfifo fifo && { sched-pick <fifo >streamed & } &&
	exec 3>fifo && gpus n 1024 0 >&3 &&
	echo "{\"kind\":\"request\",\"id\":\"s/1\"}" >&3 && echo "{\"kind\":\"flush\"}" >&3 &&
	n=0 && while [ ! -s streamed ] && [ $n -lt 300 ]; do sleep 0.1; n=$((n + 1)); done &&
	grep -q "\"id\":\"s/1\"" streamed && exec 3>&- && wait'

# ---- the utilization goal ----

# a: idle and busy side by side (mean 47.5); b: two moderate (55); c: two
# quiet and one busy (48.333). GPU_UTILIZATION_GOAL=100 lets every device
# count as under the goal, which is the order alone.
{ gpus a 81559 10 85; gpus b 81559 50 60; gpus c 81559 20 30 95; } >goalinv
cat >goalreq <<'EOF'
{"kind":"request","id":"q/1","gpus":2}
{"kind":"request","id":"q/2","gpus":2}
{"kind":"request","id":"q/3","gpus":2}
EOF
check_output 'goal: a node with enough devices under it wins over a less busy one' \
	'pick goalinv goalreq; GPU_UTILIZATION_GOAL=100 pick goalinv goalreq' <<'EOF'
["q/1","c",[0,1],48.333]
["q/2","b",[0,1],55]
["q/3","a",[0,1],47.5]
exit 0
["q/1","a",[0,1],47.5]
["q/2","c",[0,1],48.333]
["q/3","b",[0,1],55]
exit 0
EOF
check_output 'goal: one device, under the goal as set, else on the least busy node' \
	'{ gpus a 81559 10 85; gpus d 81559 40 40; } >goal1 &&
	echo "{\"kind\":\"request\",\"id\":\"q/4\"}" >one &&
	pick goal1 one; GPU_UTILIZATION_GOAL=30 pick goal1 one; GPU_UTILIZATION_GOAL=10 pick goal1 one' <<'EOF'
["q/4","d",[0],40]
exit 0
["q/4","a",[0],47.5]
exit 0
["q/4","d",[0],40]
exit 0
EOF
check_output 'goal: devices at or over it when nothing else fits; priority keeps it too' \
	'{ gpus h 81559 80 95; gpus i 81559 79; } >hot &&
	pick hot - <<IN
{"kind":"request","id":"h/1","gpus":2}
{"kind":"request","id":"h/2"}
{"kind":"request","id":"h/3"}
IN
	echo "{\"kind\":\"request\",\"id\":\"h/4\"}" | pick -S priority hot -;
	echo "{\"kind\":\"request\",\"id\":\"h/5\",\"strategy\":\"spread\"}" | pick hot -' <<'EOF'
["h/1","h",[0,1],87.5]
["h/2","i",[0],79]
["h/3","no node has 1 free healthy GPU"]
exit 0
["h/4","i",[0],79]
exit 0
["h/5","h",[0],2]
exit 0
EOF
check_output 'goal: a shared request takes a free device under it before sharing one over it' \
	'{ gpus s1 81559 90; gpus s2 81559 10; } >sinv &&
	cat >sreq <<IN &&
{"kind":"allocation","id":"old","devices":["s1-g0"],"exclusive":false,"memory_mib":1000}
{"kind":"request","id":"s/1","exclusive":false,"min_memory_mib":1000}
IN
	pick sinv sreq; GPU_UTILIZATION_GOAL=100 pick sinv sreq' <<'EOF'
["s/1","s2",[0],10]
exit 0
["s/1","s1",[0],90]
exit 0
EOF
check_output 'goal: a bad value exits 2 naming it, before any record' \
	'for g in high 0 101 "" 8O " 80" 80%; do
		GPU_UTILIZATION_GOAL=$g sched-pick goalinv goalreq; echo "exit $?"
	done 2>&1 | sed "s|^/.*/sched-pick:|sched-pick:|"' <<'EOF'
sched-pick: $GPU_UTILIZATION_GOAL: not a whole percentage from 1 to 100: "high"
exit 2
sched-pick: $GPU_UTILIZATION_GOAL: not a whole percentage from 1 to 100: "0"
exit 2
sched-pick: $GPU_UTILIZATION_GOAL: not a whole percentage from 1 to 100: "101"
exit 2
sched-pick: $GPU_UTILIZATION_GOAL: not a whole percentage from 1 to 100: ""
exit 2
sched-pick: $GPU_UTILIZATION_GOAL: not a whole percentage from 1 to 100: "8O"
exit 2
sched-pick: $GPU_UTILIZATION_GOAL: not a whole percentage from 1 to 100: " 80"
exit 2
sched-pick: $GPU_UTILIZATION_GOAL: not a whole percentage from 1 to 100: "80%"
exit 2
EOF
check '-h names the goal, and works with a bad one' \
	'GPU_UTILIZATION_GOAL=x sched-pick -h >h.out && grep -q "^  GPU_UTILIZATION_GOAL  percent, 1 to 100 (default 80):" h.out'

# ---- bad input ----

printf '%s\n' '{"kind":"gpu","node":"b1","index":0,"uuid":"b1-g0","memory_mib":1000}' \
	'not json' '{"id":"x"}' '[1,2]' '{"kind":"pod"}' '' \
	'{"kind":"request","gpus":1}' \
	'{"kind":"request","id":"e/1","gpus":0}' \
	'{"kind":"request","id":"e/2","gpus":-1}' \
	'{"kind":"request","id":"e/3","gpus":"2"}' \
	'{"kind":"request","id":"e/4","gpus":65}' \
	'{"kind":"request","id":"e/5","strategy":"bad"}' \
	'{"kind":"request","id":"e/6","gpus":1.5}' \
	'{"kind":"request","id":"e/7","min_memory_mib":-5}' \
	'{"kind":"request","id":"e/8","exclusive":"yes"}' \
	'{"kind":"request","id":"e/9","node_selector":{"a":1}}' \
	'{"kind":"request","id":"e/10","created":"yesterday"}' \
	'{"kind":"request","id":"e/11","gpu_ids":[-1]}' \
	'{"kind":"gpu","node":"b1","uuid":"b1-g1"}' \
	'{"kind":"node"}' \
	'{"kind":"node","name":"b2","ready":"yes"}' \
	'{"kind":"release"}' \
	'{"kind":"request","id":"e/12","mig_profile":"1g.10gb","mig_fallback":"1g.10gb"}' \
	'{"kind":"request","id":"e/13","strategy":"LeastUtilized"}' \
	'{"kind":"allocation","id":"x/1","devices":[]}' \
	'{"kind":"gpu","node":"b1","index":1,"uuid":"b1-g1","mig":{"profile":"9g.1gb"}}' \
	'{"kind":"request","id":"e/14","gpus":1} x' >bad.in
check_output 'bad records are named by source and number, skipped, and exit 1' \
	'sched-pick bad.in; echo "exit $?"' <<'EOF'
{"kind":"unschedulable","id":"e/1","reason":"gpus must be a whole number from 1 to 64, got 0"}
{"kind":"unschedulable","id":"e/2","reason":"gpus must be a whole number from 1 to 64, got -1"}
{"kind":"unschedulable","id":"e/3","reason":"gpus must be a whole number from 1 to 64, got \"2\""}
{"kind":"unschedulable","id":"e/4","reason":"gpus must be a whole number from 1 to 64, got 65"}
{"kind":"unschedulable","id":"e/5","reason":"unknown strategy \"bad\""}
{"kind":"unschedulable","id":"e/6","reason":"gpus must be a whole number from 1 to 64, got 1.5"}
{"kind":"unschedulable","id":"e/7","reason":"min_memory_mib must be a whole number of MiB, got -5"}
{"kind":"unschedulable","id":"e/8","reason":"exclusive must be true or false, got \"yes\""}
{"kind":"unschedulable","id":"e/9","reason":"node_selector values must be strings"}
{"kind":"unschedulable","id":"e/10","reason":"created must be an RFC3339 time, got \"yesterday\""}
{"kind":"unschedulable","id":"e/11","reason":"gpu_ids must hold GPU indexes, got -1"}
{"kind":"unschedulable","id":"e/12","reason":"mig_fallback must be an array of MIG profile names, got \"1g.10gb\""}
{"kind":"placement","id":"e/13","node":"b1","devices":["b1-g0"],"indexes":[0],"strategy":"least_utilized","score":0.0}
exit 1
EOF

check_output 'bad records: the messages' 'sched-pick bad.in 2>&1 >/dev/null' <<'EOF'
sched-pick: bad.in:2: invalid JSON at column 1: invalid literal
sched-pick: bad.in:3: record has no kind
sched-pick: bad.in:4: record is not a JSON object
sched-pick: bad.in:5: unknown kind "pod"
sched-pick: bad.in:6: blank line
sched-pick: bad.in:7: request record has no id
sched-pick: bad.in:19: gpu b1-g1: index must be a whole number >= 0
sched-pick: bad.in:20: node record needs a name, a non-empty string
sched-pick: bad.in:21: node b2: ready, unschedulable and cheap must be true or false, cost a number
sched-pick: bad.in:22: release record needs an id, a non-empty string
sched-pick: bad.in:25: allocation x/1: devices must be a non-empty array of UUIDs
sched-pick: bad.in:26: gpu b1-g1: mig must be null or an object with a MIG profile name
sched-pick: bad.in:27: invalid JSON at column 41: end of input expected
EOF

check_output 'unschedulable requests alone exit 0; a missing file exits 1' \
	'echo "{\"kind\":\"request\",\"id\":\"a\"}" | sched-pick; echo "exit $?"; sched-pick nofile; echo "exit $?"' <<'EOF'
{"kind":"unschedulable","id":"a","reason":"no node has 1 free healthy GPU"}
exit 0
exit 1
EOF

printf '%s\n' '{"kind":"request","id":"x"' '{"kind":"request","id":"x",}' \
	'{"kind":"request","id":01}' '{"kind":"request","id":"\ud800"}' \
	'{"kind":"request","id":"\x"}' "$(printf '{"kind":"request","id":"\377"}')" \
	'{"kind":"request","id":"tab	in"}' '{"kind":"request","id":"x"} {}' \
	'{"kind":"request","id":1e400}' \
	'{"kind":"request","id":"\ud83d\ude00","gpus":-0}' \
	'{"kind":"request","id":"ok","gpus":1.0e0}' '[' '"just a string"' 'nul' \
	'  {"kind" : "request" , "id" : "spaced"}  ' >json.in
check_output 'JSON: strict, with the column of each error' 'pick json.in' <<'EOF'
["😀","gpus must be a whole number from 1 to 64, got 0"]
["ok","gpus must be a whole number from 1 to 64, got 1.0"]
["spaced","no node has 1 free healthy GPU"]
exit 1
sched-pick: json.in:1: invalid JSON at column 27: unexpected end of input
sched-pick: json.in:2: invalid JSON at column 28: object key expected
sched-pick: json.in:3: invalid JSON at column 25: ',' or '}' expected
sched-pick: json.in:4: invalid JSON at column 25: invalid Unicode surrogate
sched-pick: json.in:5: invalid JSON at column 25: invalid escape
sched-pick: json.in:6: invalid JSON at column 25: invalid UTF-8
sched-pick: json.in:7: invalid JSON at column 28: control character in string
sched-pick: json.in:8: invalid JSON at column 29: end of input expected
sched-pick: json.in:9: a number out of range (integers fit in 64 bits, reals are finite doubles)
sched-pick: json.in:12: invalid JSON at column 2: unexpected end of input
sched-pick: json.in:13: record is not a JSON object
sched-pick: json.in:14: invalid JSON at column 1: invalid literal
EOF

i=0
while [ $i -lt 30 ]; do
	echo "{\"kind\":\"request\",\"id\":\"d/$i\",\"gpus\":$((i % 3 + 1)),\"strategy\":\"$(echo spread binpack least_utilized best_fit random | cut -d" " -f$((i % 5 + 1)))\"}"
	i=$((i + 1))
done >thirty
check 'never double-booked within a batch, whatever the strategies' '
	sched-pick inv thirty >placed &&
	test "$(jq -r "select(.kind == \"placement\") | .devices[]" placed | wc -l)" -eq 9 &&
	test "$(jq -r "select(.kind == \"placement\") | .devices[]" placed | sort -u | wc -l)" -eq 9 &&
	test "$(wc -l <placed)" -eq 30'

# ---- options ----

check 'usage: -h on stdout, -V' '
	sched-pick -h >h.out && head -n 1 h.out | grep -q "^usage: sched-pick" &&
	grep -q round_robin h.out && sched-pick -V | grep -qx "sched-pick [0-9.]*"'
check_output 'usage: bad options exit 2' \
	'for o in -Z "-S bad" "-r x" "-r -1"; do sched-pick $o </dev/null; echo "exit $?"; done 2>&1 | sed "s|^/.*/sched-pick:|sched-pick:|"' <<'EOF'
sched-pick: invalid option -- 'Z'
usage: sched-pick [-v] [-r seed] [-S strategy] [-s statefile] [file ...]
exit 2
sched-pick: -S bad: unknown strategy
usage: sched-pick [-v] [-r seed] [-S strategy] [-s statefile] [file ...]
exit 2
sched-pick: -r x: expected a whole number
usage: sched-pick [-v] [-r seed] [-S strategy] [-s statefile] [file ...]
exit 2
sched-pick: -r -1: expected a whole number
usage: sched-pick [-v] [-r seed] [-S strategy] [-s statefile] [file ...]
exit 2
EOF
check '-v: statistics on stderr' \
	'sched-pick -v inv two >/dev/null 2>v.err && grep -q "^sched-pick: stats: decisions=2 placed=2 unschedulable=0 " v.err'
check 'a write error ends with 1' \
	'must_fail 1 sched-pick inv batch >/dev/full 2>err && grep -q "write error" err'

check_output 'man EXAMPLES: two requests on a node of two GPUs' 'sched-pick <<IN
{"kind":"gpu","node":"n1","index":0,"uuid":"G0","memory_mib":81559,"util_pct":70}
{"kind":"gpu","node":"n1","index":1,"uuid":"G1","memory_mib":81559,"util_pct":20}
{"kind":"request","id":"ns/a","gpus":1}
{"kind":"request","id":"ns/b","gpus":2}
IN' <<'EOF'
{"kind":"placement","id":"ns/a","node":"n1","devices":["G1"],"indexes":[1],"strategy":"least_utilized","score":45.0}
{"kind":"unschedulable","id":"ns/b","reason":"no node has 2 free healthy GPUs"}
EOF

cat >mig-example <<'EOF'
{"kind":"request","id":"ns/a","gpus":2,"mig_profile":"3g.40gb","mig_fallback":["2g.20gb"]}
{"kind":"request","id":"ns/b","gpus":3,"mig_profile":"2g.20gb"}
EOF
check_output 'man EXAMPLES: MIG fallback on the simulated cluster, spread over GPUs' \
	'{ gpu-probe -t "$TOP/manifests/sim/seed-mig.yaml"; cat mig-example; } | sched-pick -S spread_gpu | jq -c "[.id, .node, .indexes, .mig_profile, .fallback_from]"' <<'EOF'
["ns/a","medium",[0,1],"2g.20gb","3g.40gb"]
["ns/b","medium",[0,2,3],"2g.20gb",null]
EOF

cat >odd-names <<'EOF'
{"kind":"gpu","node":"n\u0001\"\\\n\t/\u00e9","index":0,"uuid":"u","memory_mib":1}
{"kind":"request","id":"a\u001fb"}
EOF
check_output 'names needing escapes come out as valid JSON, the same names' \
	'sched-pick odd-names | jq -c "[.id, .node]"' <<'EOF'
["a\u001fb","n\u0001\"\\\n\t/é"]
EOF

# ---- the indexes against a plain scan ----

# bench/linear-pick.c: the same engine, searching by scanning every node;
# built with the sanitizers when the build has them.
lp() {
	cc -O2 -std=c11 -D_GNU_SOURCE -iquote "$TOP/lib" "$@" -o linear-pick \
		"$TOP/bench/linear-pick.c" "$BUILD/libhaz.a" \
		$(pkg-config --cflags --libs jansson) -lm 2>cc.err
}
lp || lp -fsanitize=address,undefined || cat cc.err
# 200 nodes and 800 requests, a third of them released, the inventory
# changing every 40 (GPUs re-probed, nodes unready and back, moved to
# another zone, added): a zone has 50 nodes (walked in a view of its
# own), a pool 4 (looked at one by one).
awk -v nodes=200 -v requests=800 -v batch=25 -v churn=40 \
	-f "$TOP/bench/sched-gen.awk" >gen.in
check 'indexes and a plain scan make the same placements, under every strategy and another goal' '
	test -x linear-pick &&
	for s in "" least_utilized least_loaded best_fit binpack spread binpack_gpu spread_gpu priority round_robin random cost_optimized; do
		sched-pick ${s:+-S $s} -r 5 gen.in >idx.out &&
		./linear-pick ${s:+-S $s} -r 5 gen.in >scan.out &&
		cmp idx.out scan.out && test "$(wc -l <idx.out)" -eq 800 || exit 1
	done &&
	for s in least_utilized priority; do
		sched-pick -S $s -r 5 gen.in >idx80.out &&
		GPU_UTILIZATION_GOAL=30 sched-pick -S $s -r 5 gen.in >idx.out &&
		GPU_UTILIZATION_GOAL=30 ./linear-pick -S $s -r 5 gen.in >scan.out &&
		cmp idx.out scan.out && ! cmp -s idx.out idx80.out || exit 1
	done &&
	test "$(grep -c "\"kind\":\"placement\"" idx.out)" -gt 600'

# The same without new nodes, and a change every 3 requests: a node's
# zone, readiness and cost change in place, so the label sets, the zone
# views and the cost order are kept by moving that node alone (a new
# node lays everything out again, hiding a stale entry).
awk -v nodes=200 -v requests=800 -v batch=25 -v churn=3 -v grow=0 \
	-f "$TOP/bench/sched-gen.awk" >move.in
check 'nodes relabelled and re-costed in place: indexes and a plain scan make the same placements' '
	test -x linear-pick &&
	test "$(grep -c "\"kind\":\"node\"" move.in)" -eq 998 &&
	for s in "" least_utilized least_loaded best_fit binpack spread binpack_gpu spread_gpu priority round_robin random cost_optimized; do
		sched-pick ${s:+-S $s} -r 5 move.in >idx.out &&
		./linear-pick ${s:+-S $s} -r 5 move.in >scan.out &&
		cmp idx.out scan.out && test "$(wc -l <idx.out)" -eq 800 || exit 1
	done'

done_testing
