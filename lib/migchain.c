/* migchain: MIG fallback chains (see migchain.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "err.h"
#include "migchain.h"
#include "mig.h"
#include "y2j.h"

#define PENDING_DEFAULT 60.0

struct chain {
	char *product;
	char **profiles; /* canonical names, largest first */
	size_t n;
};

struct migchain {
	struct chain *c;
	size_t n;
	double pending_seconds;
};

static const char *const builtin[][5] = {
	{"A100-40GB", "3g.20gb", "2g.10gb", "1g.5gb", NULL},
	{"A100-80GB", "3g.40gb", "2g.20gb", "1g.10gb", NULL},
	{"H100-80GB", "3g.40gb", "2g.20gb", "1g.10gb", NULL},
	{"H200", "3g.71gb", "2g.35gb", "1g.18gb", NULL},
	{"H200", "2g.20gb", "1g.10gb", NULL, NULL},
};

void
migchain_free(struct migchain *m)
{
	size_t i, j;

	if (!m)
		return;
	for (i = 0; i < m->n; i++) {
		for (j = 0; j < m->c[i].n; j++)
			free(m->c[i].profiles[j]);
		free(m->c[i].profiles);
		free(m->c[i].product);
	}
	free(m->c);
	free(m);
}

static struct chain *
add_chain(struct migchain *m, const char *product)
{
	struct chain *c;

	m->c = erealloc(m->c, (m->n + 1) * sizeof *m->c);
	c = &m->c[m->n++];
	memset(c, 0, sizeof *c);
	c->product = estrdup(product);
	return c;
}

/* add_profile appends name to c after checking it is a profile smaller
 * than the one before. Returns 0 or -1 with err set. */
static int
add_profile(struct chain *c, const char *name, char *err, size_t errlen)
{
	struct mig_profile p, prev;
	char buf[32];

	if (mig_parse(name, &p) < 0) {
		snprintf(err, errlen, "%s: \"%.64s\" is not a MIG profile",
			c->product, name);
		return -1;
	}
	if (c->n && mig_parse(c->profiles[c->n - 1], &prev) == 0 &&
		mig_cmp(&prev, &p) <= 0) {
		snprintf(err, errlen,
			"%s: %s does not come after %s: a chain goes "
			"from larger to smaller",
			c->product, name, c->profiles[c->n - 1]);
		return -1;
	}
	c->profiles = erealloc(c->profiles, (c->n + 1) * sizeof *c->profiles);
	c->profiles[c->n++] = estrdup(mig_format(&p, buf, sizeof buf));
	return 0;
}

struct migchain *
migchain_default(void)
{
	struct migchain *m = ecalloc(1, sizeof *m);
	char err[256];
	struct chain *c;
	size_t i, j;

	m->pending_seconds = PENDING_DEFAULT;
	for (i = 0; i < sizeof builtin / sizeof *builtin; i++) {
		c = add_chain(m, builtin[i][0]);
		for (j = 1; builtin[i][j]; j++)
			if (add_profile(c, builtin[i][j], err, sizeof err) < 0)
				err_die(HAZ_FAIL, "built-in chains: %s", err);
	}
	return m;
}

/* add_list adds one chain (a JSON array of names) of product. */
static int
add_list(struct migchain *m, const char *product, const json_t *list, char *err,
	size_t errlen)
{
	struct chain *c = add_chain(m, product);
	json_t *v;
	size_t i;

	json_array_foreach(list, i, v) {
		if (!json_is_string(v)) {
			snprintf(err, errlen,
				"%s: chain entries must be profile names",
				product);
			return -1;
		}
		if (add_profile(c, json_string_value(v), err, errlen) < 0)
			return -1;
	}
	if (c->n < 2) {
		snprintf(err, errlen, "%s: a chain needs at least two profiles",
			product);
		return -1;
	}
	return 0;
}

/* add_product adds a product's value: one chain, or an array of them. */
static int
add_product(struct migchain *m, const char *product, const json_t *v, char *err,
	size_t errlen)
{
	json_t *item;
	size_t i;

	if (!json_is_array(v) || !json_array_size(v)) {
		snprintf(err, errlen,
			"%s: expected a list of profiles or of chains",
			product);
		return -1;
	}
	if (!json_is_array(json_array_get(v, 0)))
		return add_list(m, product, v, err, errlen);
	json_array_foreach(v, i, item) {
		if (!json_is_array(item)) {
			snprintf(err, errlen, "%s: mixed chains and profiles",
				product);
			return -1;
		}
		if (add_list(m, product, item, err, errlen) < 0)
			return -1;
	}
	return 0;
}

static int
set_pending(struct migchain *m, const json_t *v, char *err, size_t errlen)
{
	double s = json_number_value(v);

	if (!v)
		return 0;
	if (!json_is_number(v) || s < 1 || s > 3600) {
		snprintf(err, errlen,
			"pendingSeconds: expected a number of seconds "
			"from 1 to 3600");
		return -1;
	}
	m->pending_seconds = s;
	return 0;
}

struct migchain *
migchain_from_json(const json_t *doc, const char *name, char *err,
	size_t errlen)
{
	struct migchain *m = ecalloc(1, sizeof *m);
	json_t *chains = json_object_get(doc, "chains"), *v;
	char why[384];
	const char *key;

	m->pending_seconds = PENDING_DEFAULT;
	why[0] = '\0';
	if (!json_is_object(doc))
		snprintf(why, sizeof why, "not a mapping");
	else if (!json_is_object(chains))
		snprintf(why, sizeof why,
			"chains: expected a mapping of products");
	json_object_foreach((json_t *)doc, key, v) {
		if (!why[0] && strcmp(key, "chains") &&
			strcmp(key, "pendingSeconds"))
			snprintf(why, sizeof why, "%.64s: unknown setting",
				key);
	}
	if (!why[0])
		set_pending(m, json_object_get(doc, "pendingSeconds"), why,
			sizeof why);
	json_object_foreach(chains, key, v) {
		if (!why[0])
			add_product(m, key, v, why, sizeof why);
	}
	if (why[0]) {
		snprintf(err, errlen, "%s: %s", name, why);
		migchain_free(m);
		return NULL;
	}
	return m;
}

struct migchain *
migchain_load(const char *path, char *err, size_t errlen)
{
	struct y2j_error yerr;
	struct migchain *m;
	json_t *doc = y2j_load(path, Y2J_SKIP_NULL, &yerr);

	if (!doc) {
		snprintf(err, errlen, "%s", yerr.text);
		return NULL;
	}
	m = migchain_from_json(doc, path, err, errlen);
	json_decref(doc);
	return m;
}

size_t
migchain_after(const struct migchain *m, const char *profile,
	const char *const **next)
{
	size_t i, j;

	for (i = 0; i < m->n; i++) {
		for (j = 0; j < m->c[i].n; j++) {
			if (strcmp(m->c[i].profiles[j], profile) == 0) {
				*next = (const char *const *)m->c[i].profiles +
					j + 1;
				return m->c[i].n - j - 1;
			}
		}
	}
	*next = NULL;
	return 0;
}

double
migchain_pending_seconds(const struct migchain *m)
{
	return m->pending_seconds;
}

json_t *
migchain_json(const struct migchain *m)
{
	json_t *chains = json_object(), *list, *one;
	size_t i, j;

	for (i = 0; i < m->n; i++) {
		if (!(list = json_object_get(chains, m->c[i].product))) {
			list = json_array();
			json_object_set_new(chains, m->c[i].product, list);
		}
		one = json_array();
		for (j = 0; j < m->c[i].n; j++)
			json_array_append_new(one,
				json_string(m->c[i].profiles[j]));
		json_array_append_new(list, one);
	}
	return json_pack("{s:o,s:f}", "chains", chains, "pendingSeconds",
		m->pending_seconds);
}
