/* mig: MIG profile names (see mig.h). */
#include <stdio.h>
#include <string.h>

#include "mig.h"

static const char *const attr_names[] = {
	[MIG_ATTR_NONE] = "",
	[MIG_ATTR_ME] = "+me",
	[MIG_ATTR_ME_ALL] = "+me.all",
	[MIG_ATTR_GFX] = "+gfx",
	[MIG_ATTR_NO_ME] = "-me",
};

/* number reads 1..max decimal digits at *s into *out, without a leading
 * zero, advancing *s. Returns 0, or -1 when there is no such number. */
static int
number(const char **s, int max, int *out)
{
	const char *p = *s;
	long v = 0;

	if (*p < '1' || *p > '9')
		return -1;
	while (*p >= '0' && *p <= '9') {
		v = v * 10 + (*p++ - '0');
		if (v > max)
			return -1;
	}
	*out = (int)v;
	*s = p;
	return 0;
}

/* literal advances *s past lit when it starts there. Returns 0 or -1. */
static int
literal(const char **s, const char *lit)
{
	size_t n = strlen(lit);

	if (strncmp(*s, lit, n) != 0)
		return -1;
	*s += n;
	return 0;
}

/* attribute maps the rest of a name (after "gb") to its attribute. */
static int
attribute(const char *s, enum mig_attr *out)
{
	size_t i;

	for (i = 0; i < sizeof attr_names / sizeof *attr_names; i++) {
		if (strcmp(s, attr_names[i]) == 0) {
			*out = (enum mig_attr)i;
			return 0;
		}
	}
	return -1;
}

int
mig_parse(const char *s, struct mig_profile *p)
{
	struct mig_profile q = {0};
	const char *rest = s;
	int first;

	memset(p, 0, sizeof *p);
	if (!s || number(&rest, 4096, &first) < 0)
		return -1;
	if (literal(&rest, "c.") == 0) {
		q.split = 1;
		q.compute = first;
		if (number(&rest, MIG_MAX_SLICES, &q.slices) < 0 ||
			literal(&rest, "g.") < 0)
			return -1;
	} else if (literal(&rest, "g.") == 0) {
		q.slices = first;
		q.compute = first;
	} else {
		return -1;
	}
	if (q.slices > MIG_MAX_SLICES || q.compute > q.slices ||
		number(&rest, 4096, &q.mem_gib) < 0 ||
		literal(&rest, "gb") < 0 || attribute(rest, &q.attr) < 0)
		return -1;
	*p = q;
	return 0;
}

long
mig_memory_mib(const struct mig_profile *p)
{
	return (long)p->mem_gib * 1024;
}

int
mig_cmp(const struct mig_profile *a, const struct mig_profile *b)
{
	if (a->slices != b->slices)
		return a->slices < b->slices ? -1 : 1;
	if (a->mem_gib != b->mem_gib)
		return a->mem_gib < b->mem_gib ? -1 : 1;
	if (a->compute != b->compute)
		return a->compute < b->compute ? -1 : 1;
	if (a->attr != b->attr)
		return a->attr < b->attr ? -1 : 1;
	return 0;
}

/* same_instance tells whether a and b are splits of one GPU-instance
 * size. */
static int
same_instance(const struct mig_profile *a, const struct mig_profile *b)
{
	return a->split && b->split && a->slices == b->slices &&
		a->mem_gib == b->mem_gib && a->attr == b->attr;
}

void
mig_usage(const struct mig_profile *p, size_t n, int *slices, int *mem_gib)
{
	size_t i, j;
	int compute, k, instances;

	*slices = *mem_gib = 0;
	for (i = 0; i < n; i++) {
		for (k = 0, j = 0; j < i && !k; j++)
			k = same_instance(&p[i], &p[j]);
		if (k)
			continue; /* counted with the first of its size */
		compute = p[i].compute;
		for (j = i + 1; p[i].split && j < n; j++)
			compute += same_instance(&p[i], &p[j]) ? p[j].compute
							       : 0;
		instances = p[i].split
			? (compute + p[i].slices - 1) / p[i].slices
			: 1;
		*slices += instances * p[i].slices;
		*mem_gib += instances * p[i].mem_gib;
	}
}

char *
mig_format(const struct mig_profile *p, char *buf, size_t n)
{
	const char *attr = "";

	if ((size_t)p->attr < sizeof attr_names / sizeof *attr_names)
		attr = attr_names[p->attr];
	if (p->split)
		snprintf(buf, n, "%dc.%dg.%dgb%s", p->compute, p->slices,
			p->mem_gib, attr);
	else
		snprintf(buf, n, "%dg.%dgb%s", p->slices, p->mem_gib, attr);
	return buf;
}
