/* smi_apps: the compute processes nvidia-smi lists (see smi.h). */
#include <stdlib.h>
#include <string.h>

#include "err.h"
#include "smi.h"
#include "smi_int.h"

const char *
smi_apps_arg(void)
{
	return "--query-compute-apps=pid,process_name,gpu_uuid,used_memory";
}

/* fields cuts text into its four fields: pid, name (which may hold
 * commas), uuid, memory, each trimmed. Returns the number of commas
 * when there are fewer than three, else 3. */
static int
fields(char *text, char **f)
{
	char *c1 = strchr(text, ','), *c3 = strrchr(text, ','), *c2;

	if (!c1 || c1 == c3)
		return c1 ? 1 : 0;
	for (c2 = c3 - 1; c2 > c1 && *c2 != ','; c2--)
		;
	if (c2 == c1)
		return 2;
	*c1 = *c2 = *c3 = '\0';
	f[0] = smi_trim(text);
	f[1] = smi_trim(c1 + 1);
	f[2] = smi_trim(c2 + 1);
	f[3] = smi_trim(c3 + 1);
	return 3;
}

/* whole reads v, 1 to 15 digits, into *n. Returns 0 or -1. */
static int
whole(const char *v, long long *n)
{
	size_t k = strspn(v, "0123456789");

	if (k < 1 || k > 15 || v[k])
		return -1;
	*n = strtoll(v, NULL, 10);
	return 0;
}

/* memory turns used_memory v ("6671 MiB", "6671", or unavailable) into
 * a JSON integer or null. Returns NULL for anything else. */
static json_t *
memory(struct smi_inv *inv, const struct smi_src *s, const struct smi_line *l,
	char *v)
{
	size_t n = strlen(v);
	long long mib;
	char shown[64];

	if (v[0] == '[' || strcmp(v, "N/A") == 0) {
		if (!inv->quiet)
			err_warn("%s:%ld: used_memory: \"%s\" read as null",
				s->name, l->no, smi_show(v, shown));
		return json_null();
	}
	if (n > 4 && strcmp(v + n - 4, " MiB") == 0)
		v[n - 4] = '\0';
	return whole(v, &mib) == 0 ? json_integer(mib) : NULL;
}

/* bad_value reports field name's value v on line l; returns -1. */
static int
bad_value(const struct smi_src *s, const struct smi_line *l, const char *name,
	const char *v)
{
	char shown[64];

	err_warn("%s:%ld: %s: \"%s\" is not a valid value", s->name, l->no,
		name, smi_show(v, shown));
	return -1;
}

/* app_line parses one non-blank line into *a. Returns 0, or -1
 * (warned, nothing left in a to free). */
static int
app_line(struct smi_inv *inv, struct smi_src *s, struct smi_line *l,
	struct smi_app *a)
{
	char *f[4], shown[64];
	struct smi_gpu *g;
	long long pid;
	int n;

	memset(a, 0, sizeof *a);
	a->line = l->no;
	smi_show(l->text, shown);
	if (!l->complete) {
		err_warn("%s:%ld: truncated line (no newline at the end): "
			 "\"%s\"",
			s->name, l->no, shown);
		return -1;
	}
	if (smi_refused(s, l) < 0)
		return -1;
	if ((n = fields(l->text, f)) < 3) {
		err_warn("%s:%ld: %d field%s, expected 4 (pid, process_name, "
			 "gpu_uuid, used_memory): \"%s\"",
			s->name, l->no, n + 1, n ? "s" : "", shown);
		return -1;
	}
	if (whole(f[0], &pid) < 0 || pid < 1 || pid > 0x7fffffff)
		return bad_value(s, l, "pid", f[0]);
	if (!(g = smi_find_gpu(inv, f[2]))) {
		err_warn("%s:%ld: GPU %s is not in the --query-gpu output",
			s->name, l->no, smi_show(f[2], shown));
		return -1;
	}
	if (!(a->used_mib = memory(inv, s, l, f[3])))
		return bad_value(s, l, "used_memory", f[3]);
	a->pid = (long)pid;
	a->name = f[1][0] ? estrdup(f[1]) : NULL;
	a->gpu = (size_t)(g - inv->gpus);
	return 0;
}

int
smi_parse_apps(struct smi_inv *inv, const char *src, const char *buf,
	size_t len)
{
	struct smi_src s;
	struct smi_line l;
	struct smi_app a;
	int bad = 0;

	smi_src_open(&s, src, buf, len);
	while (smi_next_line(&s, &l)) {
		if (smi_blank(l.text) ||
			(l.no == 1 && l.complete &&
				strcmp(smi_trim(l.text),
					"No running processes found") == 0))
			continue;
		if (app_line(inv, &s, &l, &a) < 0) {
			bad = 1;
			continue;
		}
		inv->apps = smi_grow(inv->apps, inv->napps, &inv->apps_cap,
			sizeof *inv->apps);
		inv->apps[inv->napps++] = a;
	}
	free(s.buf);
	inv->failed |= bad;
	return bad ? -1 : 0;
}
