/* smi: nvidia-smi CSV and -L parsing (see smi.h). */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "err.h"
#include "hmap.h"
#include "mig.h"
#include "smi.h"
#include "smi_int.h"

const struct smi_colspec smi_cols[SMI_NCOLS] = {
	[SMI_INDEX] = {"index", "index", 'i'},
	[SMI_UUID] = {"uuid", "uuid", 's'},
	[SMI_NAME] = {"name", "name", 's'},
	[SMI_BUS_ID] = {"pci.bus_id", "pci_bus_id", 's'},
	[SMI_MEM_TOTAL] = {"memory.total", "memory_mib", 'i'},
	[SMI_MEM_USED] = {"memory.used", "memory_used_mib", 'i'},
	[SMI_UTIL] = {"utilization.gpu", "util_pct", 'i'},
	[SMI_TEMP] = {"temperature.gpu", "temp_c", 'i'},
	[SMI_POWER] = {"power.draw", "power_w", 'w'},
	[SMI_POWER_LIMIT] = {"power.limit", "power_limit_w", 'w'},
	[SMI_ECC] = {"ecc.errors.uncorrected.volatile.total", "ecc_errors",
		'i'},
	[SMI_DRIVER] = {"driver_version", "driver_version", 's'},
	[SMI_MIG_MODE] = {"mig.mode.current", "mig_enabled", 'm'},
	[SMI_COMPUTE_CAP] = {"compute_cap", "compute_cap", 's'},
};

const char *
smi_query_arg(void)
{
	static char arg[512];
	size_t i;

	if (arg[0])
		return arg;
	strcpy(arg, "--query-gpu=");
	for (i = 0; i < SMI_NCOLS; i++) {
		if (i)
			strcat(arg, ",");
		strcat(arg, smi_cols[i].field);
	}
	return arg;
}

const char *
smi_not_text(const char *p, size_t n)
{
	const unsigned char *u = (const unsigned char *)p, *end = u + n;
	int len;

	while (u < end) {
		if (*u == '\0')
			return "holds a NUL byte";
		if ((*u < 0x20 && *u != '\t') || *u == 0x7f)
			return "holds a control character";
		if (*u < 0x80) {
			u++;
			continue;
		}
		if (!(len = err_utf8_len(u, end)))
			return "is not valid UTF-8";
		if (u[0] == 0xc2 && u[1] < 0xa0)
			return "holds a control character";
		u += len;
	}
	return NULL;
}

int
smi_next_line(struct smi_src *s, struct smi_line *l)
{
	char *start, *nl;
	size_t n;

	if (s->pos >= s->len)
		return 0;
	start = s->buf + s->pos;
	nl = memchr(start, '\n', s->len - s->pos);
	n = nl ? (size_t)(nl - start) : s->len - s->pos;
	s->pos += n + (nl != NULL);
	start[n] = '\0';
	if (n && start[n - 1] == '\r')
		start[--n] = '\0';
	l->text = start;
	l->no = ++s->no;
	l->complete = nl != NULL;
	l->bad = smi_not_text(start, n);
	return 1;
}

int
smi_refused(const struct smi_src *s, const struct smi_line *l)
{
	char shown[64];

	if (!l->bad)
		return 0;
	err_warn("%s:%ld: line %s: \"%s\"", s->name, l->no, l->bad,
		smi_show(l->text, shown));
	return -1;
}

const char *
smi_show(const char *s, char *buf)
{
	size_t i;

	for (i = 0; s[i] && i < 48; i++)
		buf[i] = (unsigned char)s[i] < 0x20 ||
				(unsigned char)s[i] > 0x7e
			? '?'
			: s[i];
	strcpy(buf + i, s[i] ? "..." : "");
	return buf;
}

char *
smi_trim(char *s)
{
	char *end;

	while (*s == ' ' || *s == '\t')
		s++;
	end = s + strlen(s);
	while (end > s && (end[-1] == ' ' || end[-1] == '\t'))
		*--end = '\0';
	return s;
}

int
smi_blank(const char *s)
{
	return s[strspn(s, " \t")] == '\0';
}

/* ---- values ---- */

enum vclass { V_VALUE, V_UNAVAILABLE, V_ERROR };

static enum vclass
classify(const char *v)
{
	if (strcmp(v, "[N/A]") == 0 || strcmp(v, "N/A") == 0 ||
		strcmp(v, "[Not Supported]") == 0)
		return V_UNAVAILABLE;
	if (strcmp(v, "ERR!") == 0 || v[0] == '[')
		return V_ERROR;
	return V_VALUE;
}

/* number parses a plain non-negative decimal (digits, at most one '.')
 * into *out. Returns 0 or -1. */
static int
number(const char *v, double *out)
{
	char *end;

	if (!isdigit((unsigned char)v[0]))
		return -1;
	errno = 0;
	*out = strtod(v, &end);
	if (*end || errno || !isfinite(*out) || strpbrk(v, "xXeE"))
		return -1;
	return 0;
}

/* convert turns the text v of column c into a JSON value. Returns NULL
 * when v is not a value of that column's type. */
static json_t *
convert(enum smi_col c, const char *v)
{
	double d;

	switch (smi_cols[c].type) {
	case 's': return v[0] && !strchr(v, '\t') ? json_string(v) : NULL;
	case 'm':
		if (strcmp(v, "Enabled") == 0)
			return json_true();
		return strcmp(v, "Disabled") == 0 ? json_false() : NULL;
	case 'i':
		if (number(v, &d) < 0 || strchr(v, '.') || d > 1e15)
			return NULL;
		return json_integer((json_int_t)d);
	default: /* 'w' */
		if (number(v, &d) < 0 || d > 1e9)
			return NULL;
		return json_integer((json_int_t)lround(d));
	}
}

/* ---- CSV lines ---- */

/* split cuts text at commas into at most max trimmed fields of f.
 * Returns the number of fields, max + 1 when there were more. */
static int
split(char *text, char **f, int max)
{
	int n = 0;
	char *comma;

	for (;;) {
		if (n == max)
			return max + 1;
		comma = strchr(text, ',');
		if (comma)
			*comma = '\0';
		f[n++] = smi_trim(text);
		if (!comma)
			return n;
		text = comma + 1;
	}
}

static void
gpu_clear(struct smi_gpu *g)
{
	size_t i;

	for (i = 0; i < SMI_NCOLS; i++) {
		json_decref(g->val[i]);
		free(g->fault[i]);
	}
	for (i = 0; i < g->nmig; i++) {
		free(g->migs[i].profile);
		free(g->migs[i].uuid);
	}
	free(g->migs);
	memset(g, 0, sizeof *g);
}

/* field fills column c of g from text v. An unavailable value or an error
 * state becomes null with a warning. Returns 0, or -1 for a bad value
 * (warned). */
static int
field(struct smi_inv *inv, struct smi_src *s, struct smi_line *l,
	struct smi_gpu *g, enum smi_col c, const char *v)
{
	const char *name = smi_cols[c].field;
	enum vclass k = classify(v);
	char shown[64];

	if (strchr(v, '\t')) /* a separator inside: convert refuses it */
		k = V_VALUE;
	if (k == V_UNAVAILABLE && c == SMI_MIG_MODE) {
		g->val[c] = json_false();
		return 0;
	}
	if (k == V_VALUE && (g->val[c] = convert(c, v)))
		return 0;
	if (k == V_VALUE || c == SMI_INDEX || c == SMI_UUID) {
		err_warn("%s:%ld: %s: \"%s\" is not a valid value", s->name,
			l->no, name, smi_show(v, shown));
		return -1;
	}
	g->val[c] = json_null();
	if (k == V_ERROR) {
		g->fault[c] = estrdup(v);
		err_warn("%s:%ld: %s: \"%s\": GPU error state, read as null",
			s->name, l->no, name, smi_show(v, shown));
	} else if (!inv->quiet) {
		err_warn("%s:%ld: %s: \"%s\" read as null", s->name, l->no,
			name, smi_show(v, shown));
	}
	return 0;
}

/* missing fills columns n.. of g with null, warning once for the line. */
static void
missing(struct smi_inv *inv, struct smi_src *s, struct smi_line *l,
	struct smi_gpu *g, int n)
{
	int c;

	for (c = n; c < SMI_NCOLS; c++)
		g->val[c] = c == SMI_MIG_MODE ? json_false() : json_null();
	if (n == SMI_NCOLS || inv->quiet)
		return;
	if (n + 1 == SMI_NCOLS)
		err_warn("%s:%ld: no %s column (older driver?), read as null",
			s->name, l->no, smi_cols[n].field);
	else
		err_warn("%s:%ld: no %s .. %s columns (older driver?), read as "
			 "null",
			s->name, l->no, smi_cols[n].field,
			smi_cols[SMI_NCOLS - 1].field);
}

/* ---- keys seen ---- */

/* seen_get returns the number stored under the key prefix+name (a line
 * number, or a GPU's position + 1), 0 when there is none. */
static size_t
seen_get(const struct smi_inv *inv, const char *prefix, const char *name)
{
	char *key;
	void *v;

	if (!inv->seen)
		return 0;
	key = easprintf("%s%s", prefix, name);
	v = hm_get(inv->seen, key);
	free(key);
	return (size_t)(uintptr_t)v;
}

/* seen_put stores n (not 0) under the key prefix+name. */
static void
seen_put(struct smi_inv *inv, const char *prefix, const char *name, size_t n)
{
	char *key = easprintf("%s%s", prefix, name);

	if (!inv->seen)
		inv->seen = hm_new(NULL);
	hm_put(inv->seen, key, (void *)(uintptr_t)n);
	free(key);
}

/* index_key writes g's index as a key into buf (32 bytes). */
static const char *
index_key(const struct smi_gpu *g, char *buf)
{
	snprintf(buf, 32, "%lld",
		(long long)json_integer_value(g->val[SMI_INDEX]));
	return buf;
}

/* duplicate reports, naming line l, a GPU whose index or uuid is that of
 * a GPU of inv; returns 1 for one, 0 otherwise. */
static int
duplicate(const struct smi_inv *inv, const struct smi_src *s,
	const struct smi_line *l, const struct smi_gpu *g)
{
	const char *uuid = json_string_value(g->val[SMI_UUID]);
	char key[32];
	size_t at;

	if ((at = seen_get(inv, "u:", uuid))) {
		err_warn("%s:%ld: GPU %s listed twice (first on line %ld)",
			s->name, l->no, uuid, inv->gpus[at - 1].line);
		return 1;
	}
	if ((at = seen_get(inv, "i:", index_key(g, key)))) {
		err_warn("%s:%ld: GPU index %s listed twice (first on line "
			 "%ld)",
			s->name, l->no, key, inv->gpus[at - 1].line);
		return 1;
	}
	return 0;
}

/* csv_line parses one non-blank line into *g. Returns 0, or -1 (warned,
 * g cleared). */
static int
csv_line(struct smi_inv *inv, struct smi_src *s, struct smi_line *l,
	struct smi_gpu *g)
{
	char *f[SMI_NCOLS + 1], shown[64];
	int n, c;

	memset(g, 0, sizeof *g);
	g->line = l->no;
	if (!l->complete) {
		err_warn("%s:%ld: truncated line (no newline at the end): "
			 "\"%s\"",
			s->name, l->no, smi_show(l->text, shown));
		return -1;
	}
	if (smi_refused(s, l) < 0)
		return -1;
	smi_show(l->text, shown);
	n = split(l->text, f, SMI_NCOLS);
	if (n < SMI_MIN_COLS || n > SMI_NCOLS) {
		err_warn("%s:%ld: %s%d field%s, expected %d: \"%s\"", s->name,
			l->no, n > SMI_NCOLS ? "more than " : "",
			n > SMI_NCOLS ? SMI_NCOLS : n, n == 1 ? "" : "s",
			SMI_NCOLS, shown);
		return -1;
	}
	for (c = 0; c < n; c++) {
		if (field(inv, s, l, g, (enum smi_col)c, f[c]) < 0) {
			gpu_clear(g);
			return -1;
		}
	}
	missing(inv, s, l, g, n);
	if (duplicate(inv, s, l, g)) {
		gpu_clear(g);
		return -1;
	}
	return 0;
}

void *
smi_grow(void *v, size_t n, size_t *cap, size_t size)
{
	if (n < *cap)
		return v;
	*cap = *cap ? *cap * 2 : 8;
	return erealloc(v, *cap * size);
}

/* push_gpu appends g to inv and remembers its keys. */
static void
push_gpu(struct smi_inv *inv, struct smi_gpu *g)
{
	char key[32];

	inv->gpus = smi_grow(inv->gpus, inv->ngpus, &inv->cap,
		sizeof *inv->gpus);
	inv->gpus[inv->ngpus++] = *g;
	seen_put(inv, "u:", json_string_value(g->val[SMI_UUID]), inv->ngpus);
	seen_put(inv, "i:", index_key(g, key), inv->ngpus);
}

void
smi_src_open(struct smi_src *s, const char *name, const char *buf, size_t len)
{
	memset(s, 0, sizeof *s);
	s->name = name;
	s->buf = emalloc(len + 1);
	memcpy(s->buf, buf, len);
	s->buf[len] = '\0';
	s->len = len;
}

int
smi_parse_csv(struct smi_inv *inv, const char *src, const char *buf, size_t len)
{
	struct smi_gpu g;
	struct smi_src s;
	struct smi_line l;
	int bad = 0;

	smi_src_open(&s, src, buf, len);
	while (smi_next_line(&s, &l)) {
		if (smi_blank(l.text) ||
			(l.no == 1 && l.complete &&
				strcmp(smi_trim(l.text),
					"No devices were found") == 0))
			continue;
		if (csv_line(inv, &s, &l, &g) < 0)
			bad = 1;
		else
			push_gpu(inv, &g);
	}
	free(s.buf);
	inv->failed |= bad;
	return bad ? -1 : 0;
}

/* ---- -L lines ---- */

/* skip advances *p past spaces and tabs; returns how many it skipped. */
static int
skip(char **p)
{
	int n = (int)strspn(*p, " \t");

	*p += n;
	return n;
}

/* eat advances *p past lit when it starts there. Returns 0 or -1. */
static int
eat(char **p, const char *lit)
{
	size_t n = strlen(lit);

	if (strncmp(*p, lit, n) != 0)
		return -1;
	*p += n;
	return 0;
}

/* count reads a decimal number at *p into *out (at most 9 digits). */
static int
count(char **p, int *out)
{
	int n = (int)strspn(*p, "0123456789");

	if (n < 1 || n > 9)
		return -1;
	*out = atoi(*p);
	*p += n;
	return 0;
}

/* uuid_tail cuts "(UUID: X)" at the end of p and returns X, or NULL. */
static char *
uuid_tail(char *p)
{
	char *u = strstr(p, "(UUID: ");
	char *end;

	if (!u)
		return NULL;
	u += 7;
	end = strchr(u, ')');
	if (!end || end == u || !smi_blank(end + 1) ||
		strcspn(u, " \t") < (size_t)(end - u))
		return NULL;
	*end = '\0';
	return u;
}

/* gi_ci reads GI and CI from an old-style "MIG-GPU-<uuid>/GI/CI". */
static void
gi_ci(const char *uuid, int *gi, int *ci)
{
	const char *slash = strchr(uuid, '/');

	*gi = *ci = -1;
	if (!slash || sscanf(slash, "/%d/%d", gi, ci) != 2 || *gi < 0 ||
		*ci < 0)
		*gi = *ci = -1;
}

/* mig_line parses "  MIG 1g.10gb  Device  0: (UUID: MIG-...)" into *m
 * (strings owned by m). Returns 0 or -1. */
static int
mig_line(char *p, struct smi_mig *m)
{
	struct mig_profile prof;
	char *profile, *uuid;

	skip(&p);
	if (eat(&p, "MIG") < 0 || !skip(&p))
		return -1;
	profile = p;
	p += strcspn(p, " \t");
	if (!*p)
		return -1;
	*p++ = '\0';
	skip(&p);
	if (mig_parse(profile, &prof) < 0 || eat(&p, "Device") < 0 ||
		!skip(&p) || count(&p, &m->device) < 0 || eat(&p, ":") < 0 ||
		!skip(&p) || strncmp(p, "(UUID: ", 7) != 0 ||
		!(uuid = uuid_tail(p)))
		return -1;
	gi_ci(uuid, &m->gi, &m->ci);
	m->profile = estrdup(profile);
	m->uuid = estrdup(uuid);
	return 0;
}

/* gpu_line parses "GPU 0: NAME (UUID: GPU-...)" and returns the UUID (a
 * pointer into p), or NULL. */
static char *
gpu_line(char *p)
{
	int index;

	if (eat(&p, "GPU ") < 0 || count(&p, &index) < 0 || eat(&p, ": ") < 0)
		return NULL;
	p = strstr(p, " (UUID: ");
	return p ? uuid_tail(p + 1) : NULL;
}

struct smi_gpu *
smi_find_gpu(struct smi_inv *inv, const char *uuid)
{
	size_t at = seen_get(inv, "u:", uuid);

	return at ? &inv->gpus[at - 1] : NULL;
}

/* push_mig adds the MIG device m of GPU g (of inv), read on line l of s,
 * unless its device number or its UUID was read before: that is
 * reported, m freed, and -1 returned. */
static int
push_mig(struct smi_inv *inv, const struct smi_src *s, const struct smi_line *l,
	struct smi_gpu *g, struct smi_mig *m)
{
	char dev[64];
	size_t at;

	snprintf(dev, sizeof dev, "%zu/%d", (size_t)(g - inv->gpus), m->device);
	if ((at = seen_get(inv, "d:", dev)))
		err_warn("%s:%ld: MIG device %d of GPU %s listed twice (first "
			 "on line %zu)",
			s->name, l->no, m->device,
			json_string_value(g->val[SMI_UUID]), at);
	else if ((at = seen_get(inv, "m:", m->uuid)))
		err_warn("%s:%ld: MIG device %s listed twice (first on line "
			 "%zu)",
			s->name, l->no, m->uuid, at);
	else if ((at = seen_get(inv, "u:", m->uuid)))
		err_warn("%s:%ld: MIG device %s has the UUID of the GPU on "
			 "line %ld",
			s->name, l->no, m->uuid, inv->gpus[at - 1].line);
	if (at) {
		free(m->profile);
		free(m->uuid);
		return -1;
	}
	seen_put(inv, "d:", dev, (size_t)l->no);
	seen_put(inv, "m:", m->uuid, (size_t)l->no);
	g->migs = smi_grow(g->migs, g->nmig, &g->mig_cap, sizeof *g->migs);
	g->migs[g->nmig++] = *m;
	return 0;
}

/* list_line handles one non-blank -L line; *cur is the GPU of the last
 * GPU line (NULL when unknown), *seen is set once any GPU line was read.
 * Returns 0 or -1 (warned). */
static int
list_line(struct smi_inv *inv, struct smi_src *s, struct smi_line *l,
	struct smi_gpu **cur, int *seen)
{
	struct smi_mig m = {0};
	char *uuid, shown[64];

	smi_show(l->text, shown);
	if (!l->complete) {
		err_warn("%s:%ld: truncated line (no newline at the end): "
			 "\"%s\"",
			s->name, l->no, shown);
		return -1;
	}
	if (smi_refused(s, l) < 0) {
		if (strncmp(l->text, "GPU ", 4) == 0) {
			*cur = NULL; /* its MIG lines are skipped */
			*seen = 1;
		}
		return -1;
	}
	if ((uuid = gpu_line(l->text))) {
		*seen = 1;
		*cur = smi_find_gpu(inv, uuid);
		if (!*cur)
			err_warn("%s:%ld: GPU %s is not in the --query-gpu "
				 "output",
				s->name, l->no, uuid);
		else if ((*cur)->listed)
			err_warn("%s:%ld: GPU %s listed twice", s->name, l->no,
				uuid);
		if (!*cur || (*cur)->listed) {
			*cur = NULL; /* its MIG lines are skipped */
			return -1;
		}
		(*cur)->listed = 1;
		return 0;
	}
	if (mig_line(l->text, &m) < 0) {
		err_warn("%s:%ld: not a GPU or MIG device line: \"%s\"",
			s->name, l->no, shown);
		return -1;
	}
	if (*cur)
		return push_mig(inv, s, l, *cur, &m);
	if (!*seen)
		err_warn("%s:%ld: MIG device before any GPU line", s->name,
			l->no);
	free(m.profile);
	free(m.uuid);
	return *seen ? 0 : -1;
}

int
smi_parse_list(struct smi_inv *inv, const char *src, const char *buf,
	size_t len)
{
	struct smi_gpu *cur = NULL;
	struct smi_src s;
	struct smi_line l;
	int bad = 0, seen = 0;

	inv->listed = 1;
	smi_src_open(&s, src, buf, len);
	while (smi_next_line(&s, &l)) {
		if (!smi_blank(l.text) &&
			list_line(inv, &s, &l, &cur, &seen) < 0)
			bad = 1;
	}
	free(s.buf);
	inv->failed |= bad;
	return bad ? -1 : 0;
}

/* ---- the inventory ---- */

int
smi_mig_enabled(const struct smi_gpu *g)
{
	return json_is_true(g->val[SMI_MIG_MODE]);
}

int
smi_any_mig(const struct smi_inv *inv)
{
	size_t i;

	for (i = 0; i < inv->ngpus; i++) {
		if (smi_mig_enabled(&inv->gpus[i]))
			return 1;
	}
	return 0;
}

json_t *
smi_faults(const struct smi_inv *inv, const struct smi_gpu *g)
{
	json_t *reasons = json_array();
	size_t c;

	for (c = 0; c < SMI_NCOLS; c++) {
		if (g->fault[c])
			json_array_append_new(reasons,
				json_sprintf("nvidia-smi reports %s as %s",
					smi_cols[c].field, g->fault[c]));
	}
	if (inv->listed && smi_mig_enabled(g) && !g->listed)
		json_array_append_new(reasons,
			json_string(
				"MIG enabled but missing from nvidia-smi -L"));
	return reasons;
}

void
smi_free(struct smi_inv *inv)
{
	size_t i;

	for (i = 0; i < inv->ngpus; i++)
		gpu_clear(&inv->gpus[i]);
	free(inv->gpus);
	for (i = 0; i < inv->napps; i++) {
		free(inv->apps[i].name);
		json_decref(inv->apps[i].used_mib);
	}
	free(inv->apps);
	hm_free(inv->seen);
	memset(inv, 0, sizeof *inv);
}
