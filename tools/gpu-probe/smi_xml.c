/* smi_xml: nvidia-smi -q -x parsing with libexpat (see smi_xml.h). */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <expat.h>

#include "err.h"
#include "smi.h"
#include "smi_int.h"
#include "smi_xml.h"

/* What an element is, for the ones whose children matter. */
enum kind { K_OTHER, K_ROOT, K_GPU, K_PCI, K_MIGS, K_MIG };

/* The leaf elements kept, and where each goes. */
enum leaf {
	L_NONE,
	L_DRIVER,
	L_CUDA,
	L_UUID,
	L_MINOR,
	L_BRAND,
	L_ARCH,
	L_ADDR,
	L_BUS,
	L_MIG_INDEX,
	L_MIG_GI,
	L_MIG_CI,
};

static const struct {
	enum kind parent;
	const char *name;
	enum leaf leaf;
} leaves[] = {
	{K_ROOT, "driver_version", L_DRIVER},
	{K_ROOT, "cuda_version", L_CUDA},
	{K_GPU, "uuid", L_UUID},
	{K_GPU, "minor_number", L_MINOR},
	{K_GPU, "product_brand", L_BRAND},
	{K_GPU, "product_architecture", L_ARCH},
	{K_GPU, "addressing_mode", L_ADDR},
	{K_PCI, "pci_bus_id", L_BUS},
	{K_MIG, "index", L_MIG_INDEX},
	{K_MIG, "gpu_instance_id", L_MIG_GI},
	{K_MIG, "compute_instance_id", L_MIG_CI},
};

enum { MAX_DEPTH = 16, TEXT_BUF = 256 };

struct where {
	unsigned long line, col;
};

struct state {
	XML_Parser p;
	const char *src;
	struct sx_doc *doc;
	int depth;
	enum kind kinds[MAX_DEPTH];
	const char *stop; /* why the document was refused by us */
	struct where stop_at;
	/* the GPU and MIG device being read */
	struct sx_gpu gpu;
	char gpu_id[SX_MAX_TEXT + 1];
	struct where gpu_at;
	int minor_said; /* a bad <minor_number> was warned */
	struct sx_mig mig;
	struct where mig_at;
	size_t mig_cap;
	/* the leaf being read */
	enum leaf leaf;
	int leaf_depth;
	const char *leaf_name;
	struct where leaf_at;
	char text[TEXT_BUF];
	size_t tlen;
	int too_long;
};

static struct where
here(const struct state *s)
{
	struct where w = {(unsigned long)XML_GetCurrentLineNumber(s->p),
		(unsigned long)XML_GetCurrentColumnNumber(s->p) + 1};
	return w;
}

static enum kind
parent_kind(const struct state *s)
{
	int d = s->depth - 1; /* the parent of an element at s->depth */

	return d >= 1 && d < MAX_DEPTH ? s->kinds[d] : K_OTHER;
}

/* refuse stops the parser: the document is not one of nvidia-smi's. */
static void
refuse(struct state *s, const char *why)
{
	if (!s->stop) {
		s->stop = why;
		s->stop_at = here(s);
	}
	XML_StopParser(s->p, XML_FALSE);
}

static void
gpu_clear(struct sx_gpu *g)
{
	free(g->uuid);
	free(g->brand);
	free(g->arch);
	free(g->addressing_mode);
	free(g->pci_bus_id);
	free(g->migs);
	memset(g, 0, sizeof *g);
	g->minor = -1;
}

static void
start_gpu(struct state *s, const char **attrs)
{
	size_t i;

	gpu_clear(&s->gpu);
	s->gpu_at = here(s);
	s->gpu_id[0] = '\0';
	s->minor_said = 0;
	s->mig_cap = 0;
	for (i = 0; attrs[i]; i += 2)
		if (strcmp(attrs[i], "id") == 0)
			snprintf(s->gpu_id, sizeof s->gpu_id, "%s",
				attrs[i + 1]);
}

static void
end_gpu(struct state *s)
{
	struct sx_doc *d = s->doc;
	struct sx_gpu *g = &s->gpu;
	char shown[64];

	if (!g->uuid)
		err_warn("%s:%lu:%lu: <gpu id=\"%s\"> has no <uuid>: left out",
			s->src, s->gpu_at.line, s->gpu_at.col,
			smi_show(s->gpu_id, shown));
	else if (sx_find(d, g->uuid))
		err_warn("%s:%lu:%lu: GPU %s listed twice: left out", s->src,
			s->gpu_at.line, s->gpu_at.col, g->uuid);
	else if (d->ngpus == SX_MAX_GPUS)
		err_warn("%s:%lu:%lu: more than %d GPUs: GPU %s left out",
			s->src, s->gpu_at.line, s->gpu_at.col, SX_MAX_GPUS,
			g->uuid);
	else {
		if (g->minor < 0 && !s->minor_said)
			err_warn("%s:%lu:%lu: GPU %s has no <minor_number>",
				s->src, s->gpu_at.line, s->gpu_at.col, g->uuid);
		if (!d->gpus)
			d->gpus = emalloc(sizeof *d->gpus * SX_MAX_GPUS);
		d->gpus[d->ngpus++] = *g;
		memset(g, 0, sizeof *g);
		g->minor = -1;
		return;
	}
	gpu_clear(g);
}

static void
end_mig(struct state *s)
{
	struct sx_gpu *g = &s->gpu;
	const struct sx_mig *m = &s->mig;

	if (m->index < 0)
		err_warn("%s:%lu:%lu: <mig_device> has no <index>: left out",
			s->src, s->mig_at.line, s->mig_at.col);
	else if (sx_find_mig(g, m->index))
		err_warn("%s:%lu:%lu: MIG device %d listed twice: left out",
			s->src, s->mig_at.line, s->mig_at.col, m->index);
	else if (g->nmig == SX_MAX_MIGS)
		err_warn("%s:%lu:%lu: more than %d MIG devices on a GPU: "
			 "device %d left out",
			s->src, s->mig_at.line, s->mig_at.col, SX_MAX_MIGS,
			m->index);
	else {
		g->migs = smi_grow(g->migs, g->nmig, &s->mig_cap,
			sizeof *g->migs);
		g->migs[g->nmig++] = *m;
	}
}

/* unavailable: nvidia-smi's ways of saying it has no value. */
static int
unavailable(const char *v)
{
	return !*v || !strcmp(v, "N/A") || !strcmp(v, "[N/A]") ||
		!strcmp(v, "Not Supported") || !strcmp(v, "[Not Supported]");
}

/* number parses v, a decimal from 0 to INT_MAX; -1 when it is not one. */
static int
number(const char *v)
{
	long n;

	if (!*v || strspn(v, "0123456789") != strlen(v) || strlen(v) > 10)
		return -1;
	n = strtol(v, NULL, 10);
	return n > INT_MAX ? -1 : (int)n;
}

/* keep_string replaces *slot with a copy of v. */
static void
keep_string(char **slot, const char *v)
{
	free(*slot);
	*slot = estrdup(v);
}

/* end_leaf keeps the text of the leaf just ended where it goes. */
static void
end_leaf(struct state *s)
{
	char *v, shown[64], too_long[32];
	const char *bad;
	int n = -1;

	s->text[s->tlen] = '\0';
	v = smi_trim(s->text);
	if (s->too_long || strlen(v) > SX_MAX_TEXT) {
		snprintf(too_long, sizeof too_long, "longer than %d bytes",
			SX_MAX_TEXT);
		bad = too_long;
	} else if (unavailable(v)) {
		return;
	} else if ((bad = smi_not_text(v, strlen(v))) || strchr(v, '\t')) {
		bad = bad ? bad : "holds a tab";
	} else if (s->leaf >= L_MIG_INDEX || s->leaf == L_MINOR) {
		if ((n = number(v)) < 0)
			bad = "is not a whole number from 0 to 2147483647";
	}
	if (bad) {
		err_warn("%s:%lu:%lu: <%s>: \"%s\" %s: left out", s->src,
			s->leaf_at.line, s->leaf_at.col, s->leaf_name,
			smi_show(v, shown), bad);
		if (s->leaf == L_MINOR)
			s->minor_said = 1;
		return;
	}
	switch (s->leaf) {
	case L_DRIVER: keep_string(&s->doc->driver_version, v); break;
	case L_CUDA: keep_string(&s->doc->cuda_version, v); break;
	case L_UUID: keep_string(&s->gpu.uuid, v); break;
	case L_BRAND: keep_string(&s->gpu.brand, v); break;
	case L_ARCH: keep_string(&s->gpu.arch, v); break;
	case L_ADDR: keep_string(&s->gpu.addressing_mode, v); break;
	case L_BUS: keep_string(&s->gpu.pci_bus_id, v); break;
	case L_MINOR: s->gpu.minor = n; break;
	case L_MIG_INDEX: s->mig.index = n; break;
	case L_MIG_GI: s->mig.gi = n; break;
	case L_MIG_CI: s->mig.ci = n; break;
	case L_NONE: break;
	}
}

static void XMLCALL
on_start(void *arg, const XML_Char *name, const XML_Char **attrs)
{
	struct state *s = arg;
	enum kind parent, k = K_OTHER;
	size_t i;

	s->depth++;
	s->leaf = L_NONE; /* a leaf with elements inside is none */
	parent = parent_kind(s);
	if (s->depth == 1) {
		if (strcmp(name, "nvidia_smi_log") != 0)
			refuse(s, "the root element is not <nvidia_smi_log>");
		k = K_ROOT;
	} else if (parent == K_ROOT && !strcmp(name, "gpu")) {
		k = K_GPU;
		start_gpu(s, attrs);
	} else if (parent == K_GPU && !strcmp(name, "pci")) {
		k = K_PCI;
	} else if (parent == K_GPU && !strcmp(name, "mig_devices")) {
		k = K_MIGS;
	} else if (parent == K_MIGS && !strcmp(name, "mig_device")) {
		k = K_MIG;
		s->mig = (struct sx_mig){-1, -1, -1};
		s->mig_at = here(s);
	} else {
		for (i = 0; i < sizeof leaves / sizeof *leaves; i++) {
			if (leaves[i].parent == parent &&
				!strcmp(leaves[i].name, name)) {
				s->leaf = leaves[i].leaf;
				s->leaf_name = leaves[i].name;
				s->leaf_depth = s->depth;
				s->leaf_at = here(s);
				s->tlen = 0;
				s->too_long = 0;
			}
		}
	}
	if (s->depth < MAX_DEPTH)
		s->kinds[s->depth] = k;
}

static void XMLCALL
on_end(void *arg, const XML_Char *name)
{
	struct state *s = arg;
	enum kind k = s->depth < MAX_DEPTH ? s->kinds[s->depth] : K_OTHER;

	(void)name;
	if (s->leaf != L_NONE && s->depth == s->leaf_depth) {
		end_leaf(s);
		s->leaf = L_NONE;
	}
	if (k == K_MIG)
		end_mig(s);
	else if (k == K_GPU)
		end_gpu(s);
	s->depth--;
}

static void XMLCALL
on_text(void *arg, const XML_Char *text, int len)
{
	struct state *s = arg;
	size_t n = (size_t)len;

	if (s->leaf == L_NONE || s->too_long)
		return;
	if (n > TEXT_BUF - 1 - s->tlen) {
		s->too_long = 1;
		return;
	}
	memcpy(s->text + s->tlen, text, n);
	s->tlen += n;
}

static void XMLCALL
on_entity(void *arg, const XML_Char *name, int is_param, const XML_Char *value,
	int value_len, const XML_Char *base, const XML_Char *system_id,
	const XML_Char *public_id, const XML_Char *notation)
{
	(void)name, (void)is_param, (void)value, (void)value_len, (void)base;
	(void)system_id, (void)public_id, (void)notation;
	refuse(arg, "it declares an entity");
}

int
sx_parse(struct sx_doc *doc, const char *src, const char *buf, size_t len)
{
	struct state s;
	enum XML_Status st;
	struct where w;

	memset(doc, 0, sizeof *doc);
	memset(&s, 0, sizeof s);
	s.src = src;
	s.doc = doc;
	s.gpu.minor = -1;
	if (len > INT_MAX)
		len = INT_MAX; /* the caller caps it far below */
	if (!(s.p = XML_ParserCreate("UTF-8")))
		err_die(HAZ_FAIL, "XML_ParserCreate: out of memory");
	XML_SetUserData(s.p, &s);
	XML_SetElementHandler(s.p, on_start, on_end);
	XML_SetCharacterDataHandler(s.p, on_text);
	XML_SetEntityDeclHandler(s.p, on_entity);
	st = XML_Parse(s.p, buf, (int)len, 1);
	w = s.stop ? s.stop_at : here(&s);
	if (st != XML_STATUS_OK)
		err_warn("%s:%lu:%lu: not nvidia-smi -q -x output: %s", src,
			w.line, w.col,
			s.stop ? s.stop
			       : XML_ErrorString(XML_GetErrorCode(s.p)));
	XML_ParserFree(s.p);
	gpu_clear(&s.gpu);
	if (st != XML_STATUS_OK) {
		sx_free(doc);
		return -1;
	}
	return 0;
}

const struct sx_gpu *
sx_find(const struct sx_doc *doc, const char *uuid)
{
	size_t i;

	for (i = 0; uuid && i < doc->ngpus; i++)
		if (strcmp(doc->gpus[i].uuid, uuid) == 0)
			return &doc->gpus[i];
	return NULL;
}

const struct sx_mig *
sx_find_mig(const struct sx_gpu *g, int index)
{
	size_t i;

	for (i = 0; i < g->nmig; i++)
		if (g->migs[i].index == index)
			return &g->migs[i];
	return NULL;
}

void
sx_free(struct sx_doc *doc)
{
	size_t i;

	for (i = 0; i < doc->ngpus; i++)
		gpu_clear(&doc->gpus[i]);
	free(doc->gpus);
	free(doc->driver_version);
	free(doc->cuda_version);
	memset(doc, 0, sizeof *doc);
}
