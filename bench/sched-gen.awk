# bench/sched-gen.awk: a synthetic cluster and a request stream for
# bench/sched, as sched-pick input on stdout.
#
#   awk -v nodes=10000 -v requests=100000 [-v seed=7] [-v batch=100] \
#       [-v churn=N] [-v grow=0] -f bench/sched-gen.awk
#
# Inventory: `nodes` nodes of 8 GPUs, named node-00000...: three in four
# H100 80GB, one in four A100 40GB (two sizes, so min_memory_mib splits
# them); one in eight in MIG mode (GPUs 0-3 cut into 7 x 1g.10gb, GPUs
# 4-7 into 3 x 2g.20gb + 1g.10gb); labels zone (4 values), gpu, pool (50
# values) and the cheap-node label on one in five; costs from 1.0 to
# 1.9; about 1% of nodes not ready, 1% unschedulable, 1% of GPUs
# unhealthy; utilization spread over 0-100.
#
# Requests, answered in batches of `batch`: 1, 2, 4 or 8 GPUs (1 the most
# often), 30% with min_memory_mib 40000, 10% MIG 2g.20gb falling back to
# 1g.10gb, 5% shared with 20000 MiB, 12% with a node selector (a pool,
# or zone and gpu), 5% preferring a node, 1% with explicit GPU ids, half
# naming their own strategy (every strategy, in both spellings).
#
# Churn: once the stream is deep enough to fill about 80% of the GPUs,
# each request is followed by the release of the one that far back, so
# the cluster stays busy but never freezes. With churn=N, every N
# requests the inventory changes too, as probes and node watches would
# tell: a GPU's utilization and health, a node's readiness and labels,
# and a new node. With grow=0 no node is added: a node's cost changes
# instead, so every change is to a node the indexes already hold.
BEGIN {
	if (!nodes) nodes = 1000
	if (!requests) requests = 100000
	if (!batch) batch = 100
	if (grow == "") grow = 1
	srand(seed ? seed : 7)
	split("least_utilized leastUtilized least_loaded leastLoaded best_fit bestFit " \
		"binpack spread binpack_gpu spread_gpu priority round_robin roundRobin " \
		"random cost_optimized costOptimized", strat, " ")
	nstrat = 16
	inventory()
	window = int(nodes * 8 * 0.8 / 2.4)
	for (j = 0; j < requests; j++) {
		if (churn && j && j % churn == 0)
			change(j / churn)
		request(j)
		if (j >= window)
			printf "{\"kind\":\"release\",\"id\":\"ns/job-%06d\"}\n", j - window
		if ((j + 1) % batch == 0)
			print "{\"kind\":\"flush\"}"
	}
	print "{\"kind\":\"flush\"}"
}

function inventory(    i) {
	for (i = 0; i < nodes; i++)
		node(i, i % 4, i % 97 != 5, 1)
}

# node prints node i, in zone z, ready or not, with its GPUs when all.
function node(i, z, ready, all, cost,    g, name, a100, mig, cheap, labels) {
	name = sprintf("node-%05d", i)
	a100 = i % 4 == 3
	mig = i % 8 == 1
	cheap = i % 5 == 0
	labels = sprintf("{\"zone\":\"z%d\",\"gpu\":\"%s\",\"pool\":\"pool-%d\"%s}",
		z, a100 ? "a100" : "h100", i % 50,
		cheap ? ",\"gpu-orchestrator/cheap-node\":\"true\"" : "")
	printf "{\"kind\":\"node\",\"name\":\"%s\",\"labels\":%s,\"ready\":%s,\"cost\":%.1f,\"cheap\":%s,\"unschedulable\":%s}\n",
		name, labels, ready ? "true" : "false", cost != "" ? cost : 1 + (i * 7 % 10) / 10,
		cheap ? "true" : "false", i % 101 == 7 ? "true" : "false"
	for (g = 0; all && g < 8; g++)
		gpu(name, i, g, a100, mig)
}

# change alters the inventory: a GPU re-probed (new utilization, maybe
# unhealthy or healthy again), a node not ready or ready again, a node
# moved to another zone, and a node added (grow=0: a node's new cost).
function change(k,    i) {
	i = int(rand() * nodes)
	gpu(sprintf("node-%05d", i), i, int(rand() * 8), i % 4 == 3, i % 8 == 1)
	i = int(rand() * nodes)
	node(i, i % 4, rand() < 0.5, 0)
	i = int(rand() * nodes)
	node(i, int(rand() * 4), i % 97 != 5, 0)
	if (grow) {
		node(nodes++, int(rand() * 4), 1, 1)
		return
	}
	i = int(rand() * nodes)
	node(i, i % 4, i % 97 != 5, 0, 1 + int(rand() * 10) / 10)
}

function gpu(name, i, g, a100, mig,    uuid, mem, product, health, d, n) {
	uuid = sprintf("GPU-%05d-%d", i, g)
	mem = a100 ? 40960 : 81559
	product = a100 ? "NVIDIA-A100-SXM4-40GB" : "NVIDIA-H100-80GB-HBM3"
	health = rand() < 0.01 ? "unhealthy" : "ok"
	printf "{\"kind\":\"gpu\",\"node\":\"%s\",\"index\":%d,\"uuid\":\"%s\",\"product\":\"%s\",\"memory_mib\":%d,\"memory_used_mib\":0,\"util_pct\":%d,\"mig_enabled\":%s,\"mig\":null,\"health\":\"%s\"}\n",
		name, g, uuid, product, mem, int(rand() * 101), mig ? "true" : "false", health
	if (!mig)
		return
	n = g < 4 ? 7 : 4
	for (d = 0; d < n; d++)
		printf "{\"kind\":\"gpu\",\"node\":\"%s\",\"index\":%d,\"uuid\":\"MIG-%05d-%d-%d\",\"product\":\"%s\",\"memory_mib\":%d,\"memory_used_mib\":null,\"util_pct\":null,\"mig_enabled\":true,\"mig\":{\"profile\":\"%s\",\"parent_uuid\":\"%s\",\"device\":%d},\"health\":\"%s\"}\n",
			name, g, i, g, d, product, g < 4 || d == 3 ? 10240 : 20480,
			g < 4 || d == 3 ? "1g.10gb" : "2g.20gb", uuid, d, health
}

function request(j,    r, s, k, extra) {
	extra = ""
	r = rand()
	if (r < 0.10) {
		k = rand() < 0.7 ? 1 : 2
		extra = ",\"mig_profile\":\"2g.20gb\",\"mig_fallback\":[\"1g.10gb\"]"
	} else if (r < 0.15) {
		k = 1
		extra = ",\"exclusive\":false,\"min_memory_mib\":20000"
	} else {
		s = rand()
		k = s < 0.5 ? 1 : s < 0.75 ? 2 : s < 0.92 ? 4 : 8
		if (rand() < 0.3)
			extra = ",\"min_memory_mib\":40000"
	}
	s = rand()
	if (s < 0.08)
		extra = extra sprintf(",\"node_selector\":{\"pool\":\"pool-%d\"}", int(rand() * 50))
	else if (s < 0.12)
		extra = extra ",\"node_selector\":{\"zone\":\"z1\",\"gpu\":\"h100\"}"
	if (rand() < 0.05)
		extra = extra sprintf(",\"prefer_node\":\"node-%05d\"", int(rand() * nodes))
	if (rand() < 0.01 && r >= 0.15) {
		k = rand() < 0.5 ? 1 : 2
		extra = extra (k == 1 ? ",\"gpu_ids\":[0]" : ",\"gpu_ids\":[0,1]")
	}
	if (rand() < 0.5)
		extra = extra sprintf(",\"strategy\":\"%s\"", strat[1 + int(rand() * nstrat)])
	printf "{\"kind\":\"request\",\"id\":\"ns/job-%06d\",\"gpus\":%d,\"priority\":%d%s}\n",
		j, k, int(rand() * 10), extra
}
