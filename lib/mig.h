/* mig: NVIDIA Multi-Instance GPU profile names.
 *
 * A profile name reads [C "c."] G "g." M "gb" [attribute], for example
 * 1g.10gb, 3g.40gb, 7g.80gb, 1c.3g.40gb (one compute slice of a 3-slice
 * GPU instance) or 1g.10gb+me (with a media engine). G is the number of
 * GPU slices (1..7) the instance takes, C the compute slices of a
 * compute-instance split (1..G; G when absent), M the nominal memory in
 * GiB. Attributes: +me, +me.all, +gfx, -me.
 *
 * Memory is the nominal figure of the name: 1g.10gb is 10 GiB = 10240 MiB.
 * The driver reports a little less (1g.10gb on an A100 80GB is 9728 MiB);
 * no table of real sizes is kept, so every consumer agrees on one number. */
#ifndef HAZ_MIG_H
#define HAZ_MIG_H

#include <stddef.h>

enum {
	MIG_MAX_SLICES = 7, /* GPU slices on one GPU (A100, H100, H200, B200) */
};

enum mig_attr {
	MIG_ATTR_NONE = 0,
	MIG_ATTR_ME,     /* +me: one media engine */
	MIG_ATTR_ME_ALL, /* +me.all: every media engine */
	MIG_ATTR_GFX,    /* +gfx: graphics */
	MIG_ATTR_NO_ME,  /* -me: no media engine */
};

struct mig_profile {
	int compute;        /* compute slices (C), == slices without "Nc." */
	int slices;         /* GPU instance slices (G), 1..MIG_MAX_SLICES */
	int mem_gib;        /* nominal memory (M) in GiB */
	enum mig_attr attr; /* suffix after the memory */
	int split;          /* 1 when the name had a "Nc." prefix */
};

/* mig_parse reads a profile name such as "2g.20gb" into *p. Returns 0, or
 * -1 (with *p zeroed) when s is not a well-formed profile name. */
int mig_parse(const char *s, struct mig_profile *p);

/* mig_memory_mib returns the nominal memory of p in MiB (GiB * 1024). */
long mig_memory_mib(const struct mig_profile *p);

/* mig_cmp orders profiles by size: GPU slices, then memory, then compute
 * slices, then attribute. Returns <0, 0 or >0 like strcmp. */
int mig_cmp(const struct mig_profile *a, const struct mig_profile *b);

/* mig_usage sums what the devices p[0..n) take on one GPU into *slices
 * (GPU slices) and *mem_gib (nominal GiB). Compute-instance splits share
 * GPU instances: those of one GPU-instance size (say 1c.3g.40gb and
 * 2c.3g.40gb) are packed into as few instances as their compute slices
 * allow, so three 1c.3g.40gb take one 3g.40gb. */
void mig_usage(const struct mig_profile *p, size_t n, int *slices,
	int *mem_gib);

/* mig_format writes the canonical name of p into buf (size n, at least 32
 * is always enough) and returns buf. */
char *mig_format(const struct mig_profile *p, char *buf, size_t n);

#endif
