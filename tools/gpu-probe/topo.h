/* topo: simulated cluster topologies (the files in manifests/sim/).
 *
 * A topology is a YAML (or JSON) object:
 *
 *   defaults:             merged into every node entry (the entry wins)
 *     product: NVIDIA-H200          GFD-style product name
 *     memoryMiB: 71680              memory of one GPU
 *     driverVersion, cudaVersion, computeCapability, family: strings
 *     cpu, memory, pods ...         anything else is kept for node objects
 *   nodes:
 *   - name: small
 *     count: 2             optional: nodes small-0 and small-1
 *     gpus: 4              GPUs per node (default 0)
 *     mig: [1g.10gb, ...]  MIG devices of every GPU (default none)
 *     migByGPU: {"0": [7g.80gb]}   per-GPU override of mig
 *     minors: [2, 3, 0, 1] optional: GPU i's minor number (/dev/nvidiaN);
 *                          default: its index
 *
 * Whole numbers (count, gpus, memoryMiB) may also be written as strings
 * of digits. Defaults merge recursively, so node labels add to default
 * labels. Loading checks the whole file before anything is used and
 * reports every problem, one line each: node names are lowercase DNS
 * labels, unique after expansion; types are right, and strings hold no
 * control character; migByGPU names only
 * existing GPUs; profile names parse (see mig.h); and each GPU's MIG
 * devices take at most 7 slices and at most its memory, in whole GiB
 * rounded up since profile names give nominal sizes (checked only when
 * memoryMiB is given). A topology may have at most TOPO_MAX_NODES nodes
 * and TOPO_MAX_GPUS GPUs in all, after expansion, so that a few lines
 * cannot ask for millions of records. */
#ifndef HAZ_TOPO_H
#define HAZ_TOPO_H

#include <stddef.h>

#include <jansson.h>

#define TOPO_MAX_NODES 10000
#define TOPO_MAX_GPUS 65536

struct topo_gpu {
	int index;
	int minor;   /* minors[index], else the index */
	json_t *mig; /* borrowed: array of profile names, or NULL for none */
};

struct topo_node {
	char *name;          /* expanded: "small", "h100-3" */
	json_t *spec;        /* owned ref: defaults merged with entry */
	const char *product; /* borrowed from spec; NULL when absent */
	const char *family;  /* the same, for each of these */
	const char *driver_version;
	const char *cuda_version;
	const char *compute_cap;
	long memory_mib; /* 0 when absent */
	int ngpus;
	struct topo_gpu *gpus; /* owned */
};

struct hm;

struct topo {
	char *src;               /* path, for messages */
	struct topo_node *nodes; /* owned, in file order, count expanded */
	size_t nnodes, cap;
	size_t ngpus;       /* of all the nodes */
	struct hm *by_name; /* owned: name -> position in nodes + 1 */
};

/* topo_load reads and validates the topology at path into *t. Returns 0,
 * or -1 with a message printed (`FILE: node "x" gpu 0: MIG slices 9 > 7`)
 * and *t empty. */
int topo_load(const char *path, struct topo *t);

/* topo_from_json is topo_load for a document already parsed (borrowed);
 * src names it in messages. */
int topo_from_json(const json_t *doc, const char *src, struct topo *t);

/* topo_find returns the node called name, or NULL. */
const struct topo_node *topo_find(const struct topo *t, const char *name);

/* topo_free releases everything t holds. */
void topo_free(struct topo *t);

/* topo_uuid writes a deterministic UUID for a simulated device into buf
 * (at least 48 bytes): prefix ("GPU" or "MIG") + "-" + a 8-4-4-4-12 hex
 * hash of node, GPU index and MIG device (-1 for the whole GPU). */
char *topo_uuid(char *buf, const char *prefix, const char *node, int index,
	int device);

#endif
