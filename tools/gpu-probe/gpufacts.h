/* gpufacts (gf_): the stable facts of a node's GPUs, read once and again only
 * when they can have changed.
 *
 * The readings nvidia-smi --query-gpu gives change every second; these do
 * not without a driver reload or a MIG re-partition: minor numbers, the
 * CUDA version, brand, addressing mode (`nvidia-smi -q -x`, smi_xml.h),
 * MIG GPU and compute instance ids (the same), the PCIe root and NUMA
 * node (sysfs) and the machine's name (DMI), with
 * /proc/driver/nvidia/gpus/<bus>/information as the source of minor
 * numbers when -q -x fails (nvproc.h).
 *
 * Facts are read for a key: the driver version of the --query-gpu
 * output, its set of GPU UUIDs, and the `nvidia-smi -L` output (the MIG
 * layout; a hash of its bytes). gf_stale says when the key has changed;
 * gf_want_xml says whether -q -x is worth calling: not again after it
 * failed, until the driver version changes. */
#ifndef HAZ_GPUFACTS_H
#define HAZ_GPUFACTS_H

#include <stddef.h>
#include <stdint.h>

#include "nvproc.h"
#include "smi.h"
#include "smi_xml.h"

struct gf_gpu {
	char *uuid;                    /* owned */
	int minor;                     /* -1 when unknown */
	char *brand, *addressing_mode; /* owned, NULL when unknown */
	char pcie_root[32];            /* "" when unknown */
	char pci_class[NP_CLASS_SIZE]; /* "" when unknown */
	int numa_node;                 /* -1 when unknown or none */
	struct sx_mig *migs;           /* owned: MIG devices of -q -x */
	size_t nmig;
};

struct gf_facts {
	int have;            /* read at least once */
	char *driver;        /* owned: the key's driver version (NULL none) */
	char *uuids;         /* owned: the key's UUIDs, joined */
	uint64_t list_hash;  /* the key's -L output (0 when none) */
	int xml_failed;      /* -q -x failed for the key's driver version */
	char *cuda_version;  /* owned, NULL when unknown */
	char *machine;       /* owned, NULL when unknown */
	struct gf_gpu *gpus; /* owned, in the order of the inventory */
	size_t n;
};

/* Where the kernel's files are: NULL roots are not read; quiet mutes the
 * warnings for facts that are missing. */
struct gf_roots {
	const char *proc, *sys;
	int quiet;
};

/* gf_hash returns a hash of the len bytes at buf (FNV-1a, never 0). */
uint64_t gf_hash(const char *buf, size_t len);

/* gf_stale: f was never read, or was read for another key than inv's
 * and list_hash's. */
int gf_stale(const struct gf_facts *f, const struct smi_inv *inv,
	uint64_t list_hash);

/* gf_want_xml: -q -x should be called for inv's key: it did not fail
 * before for the same driver version. */
int gf_want_xml(const struct gf_facts *f, const struct smi_inv *inv);

/* gf_build reads the facts of inv's GPUs anew into f, for the key of inv
 * and list_hash: from xml (borrowed; NULL when -q -x was not read, named
 * xml_src in messages; xml_failed when it was tried and failed) and
 * the roots r. What is missing is warned (unless r->quiet) once per
 * source and kind, and stays unknown. */
void gf_build(struct gf_facts *f, const struct smi_inv *inv, uint64_t list_hash,
	const struct sx_doc *xml, const char *xml_src, int xml_failed,
	const struct gf_roots *r);

/* gf_at returns the facts of GPU i of the inventory they were built for,
 * when its UUID is uuid (they are kept in the inventory's order), or
 * NULL. */
const struct gf_gpu *gf_at(const struct gf_facts *f, size_t i,
	const char *uuid);

/* gf_free releases everything f holds and zeroes it. */
void gf_free(struct gf_facts *f);

#endif
