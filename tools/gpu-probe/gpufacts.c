/* gpufacts: stable GPU facts and when to read them (see gpufacts.h). */
#include <stdlib.h>
#include <string.h>

#include "err.h"
#include "fnv.h"
#include "gpufacts.h"
#include "nvproc.h"

uint64_t
gf_hash(const char *buf, size_t len)
{
	uint64_t h = fnv_64(FNV64_BASIS, buf, len);

	return h ? h : 1;
}

/* key_driver returns the driver version of inv's first GPU, or NULL. */
static const char *
key_driver(const struct smi_inv *inv)
{
	return inv->ngpus ? json_string_value(inv->gpus[0].val[SMI_DRIVER])
			  : NULL;
}

/* key_uuids returns inv's GPU UUIDs joined by spaces (caller frees). */
static char *
key_uuids(const struct smi_inv *inv)
{
	size_t i, n = 1, at = 0, len;
	const char *u;
	char *s;

	for (i = 0; i < inv->ngpus; i++)
		n += strlen(json_string_value(inv->gpus[i].val[SMI_UUID])) + 1;
	s = emalloc(n);
	for (i = 0; i < inv->ngpus; i++) {
		u = json_string_value(inv->gpus[i].val[SMI_UUID]);
		len = strlen(u);
		memcpy(s + at, u, len);
		s[at + len] = ' ';
		at += len + 1;
	}
	s[at] = '\0';
	return s;
}

static int
same(const char *a, const char *b)
{
	return a == b || (a && b && strcmp(a, b) == 0);
}

int
gf_stale(const struct gf_facts *f, const struct smi_inv *inv,
	uint64_t list_hash)
{
	char *uuids;
	int stale;

	if (!f->have || f->list_hash != list_hash ||
		!same(f->driver, key_driver(inv)))
		return 1;
	uuids = key_uuids(inv);
	stale = strcmp(uuids, f->uuids) != 0;
	free(uuids);
	return stale;
}

int
gf_want_xml(const struct gf_facts *f, const struct smi_inv *inv)
{
	return !f->have || !f->xml_failed || !same(f->driver, key_driver(inv));
}

static char *
dup_or_null(const char *s)
{
	return s ? estrdup(s) : NULL;
}

/* Warnings already given in one gf_build: one per source and kind. */
struct said {
	int numa, root, class, info, missing;
};

/* sys_facts fills the sysfs facts of g, PCI device bus. */
static void
sys_facts(struct gf_gpu *g, const char *bus, const struct gf_roots *r,
	struct said *said)
{
	char why[256];
	int node;

	if (!r->sys || !bus)
		return;
	node = np_numa_node(r->sys, bus, why);
	if (node >= 0)
		g->numa_node = node;
	else if (node == -2 && !said->numa++ && !r->quiet)
		err_warn("%s: numa_node null", why);
	if (np_pcie_root(r->sys, bus, g->pcie_root, why) < 0) {
		g->pcie_root[0] = '\0';
		if (!said->root++ && !r->quiet)
			err_warn("%s: pcie_root null", why);
	}
	if (np_pci_class(r->sys, bus, g->pci_class, why) < 0) {
		g->pci_class[0] = '\0';
		if (!said->class ++&&!r->quiet)
			err_warn("%s: pci_class null", why);
	}
}

/* gpu_facts fills g, the facts of GPU s of the inventory. info is read
 * from r->proc when first needed. */
static void
gpu_facts(struct gf_gpu *g, const struct smi_gpu *s, const struct sx_doc *xml,
	const char *xml_src, const struct gf_roots *r, struct np_info *info,
	int *info_read, struct said *said)
{
	const char *uuid = json_string_value(s->val[SMI_UUID]);
	const char *csv_bus = json_string_value(s->val[SMI_BUS_ID]);
	const struct sx_gpu *x = xml ? sx_find(xml, uuid) : NULL;
	const struct np_gpu *p;
	char bus[NP_BUS_SIZE], why[256];
	int have_bus;

	memset(g, 0, sizeof *g);
	g->uuid = estrdup(uuid);
	g->minor = g->numa_node = -1;
	if (xml && !x && !said->missing++ && !r->quiet)
		err_warn("%s: GPU %s is not in it: its facts are null", xml_src,
			uuid);
	have_bus = (csv_bus && np_bus_id(csv_bus, bus) == 0) ||
		(x && x->pci_bus_id && np_bus_id(x->pci_bus_id, bus) == 0);
	if (x) {
		g->minor = x->minor;
		g->brand = dup_or_null(x->brand);
		g->addressing_mode = dup_or_null(x->addressing_mode);
		if (x->nmig) {
			g->migs = emalloc(x->nmig * sizeof *g->migs);
			memcpy(g->migs, x->migs, x->nmig * sizeof *g->migs);
			g->nmig = x->nmig;
		}
	}
	if (g->minor < 0 && r->proc) {
		if (!*info_read) {
			*info_read = 1;
			if (np_read_info(r->proc, info, why) < 0 &&
				!said->info++ && !r->quiet)
				err_warn("%s: minor numbers null", why);
		}
		if ((p = np_find(info, uuid, have_bus ? bus : NULL)))
			g->minor = p->minor;
	}
	sys_facts(g, have_bus ? bus : NULL, r, said);
}

static void
clear_gpus(struct gf_facts *f)
{
	size_t i;

	for (i = 0; i < f->n; i++) {
		free(f->gpus[i].uuid);
		free(f->gpus[i].brand);
		free(f->gpus[i].addressing_mode);
		free(f->gpus[i].migs);
	}
	free(f->gpus);
	f->gpus = NULL;
	f->n = 0;
}

void
gf_build(struct gf_facts *f, const struct smi_inv *inv, uint64_t list_hash,
	const struct sx_doc *xml, const char *xml_src, int xml_failed,
	const struct gf_roots *r)
{
	struct np_info info = {0};
	struct said said = {0};
	char machine[NP_NAME_SIZE], why[256];
	int info_read = 0;
	size_t i;

	clear_gpus(f);
	free(f->driver);
	free(f->uuids);
	free(f->cuda_version);
	free(f->machine);
	f->have = 1;
	f->driver = dup_or_null(key_driver(inv));
	f->uuids = key_uuids(inv);
	f->list_hash = list_hash;
	f->xml_failed = xml_failed;
	f->cuda_version = dup_or_null(xml ? xml->cuda_version : NULL);
	f->machine = NULL;
	if (!inv->ngpus)
		return; /* no record to complete */
	if (r->sys && np_machine(r->sys, machine, why) == 0)
		f->machine = estrdup(machine);
	else if (r->sys && !r->quiet)
		err_warn("%s: machine null", why);
	f->gpus = ecalloc(inv->ngpus, sizeof *f->gpus);
	for (i = 0; i < inv->ngpus; i++)
		gpu_facts(&f->gpus[i], &inv->gpus[i], xml, xml_src, r, &info,
			&info_read, &said);
	f->n = inv->ngpus;
	np_free(&info);
}

const struct gf_gpu *
gf_at(const struct gf_facts *f, size_t i, const char *uuid)
{
	if (i < f->n && uuid && strcmp(f->gpus[i].uuid, uuid) == 0)
		return &f->gpus[i];
	return NULL;
}

void
gf_free(struct gf_facts *f)
{
	clear_gpus(f);
	free(f->driver);
	free(f->uuids);
	free(f->cuda_version);
	free(f->machine);
	memset(f, 0, sizeof *f);
}
