/* podres: what a pod spec asks for, counted as the scheduler counts. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "err.h"
#include "podres.h"

int
podres_qty(const json_t *v, struct qty *q)
{
	char buf[64];
	double d;

	memset(q, 0, sizeof *q);
	if (json_is_string(v))
		return qty_parse(q, json_string_value(v));
	if (json_is_integer(v)) {
		qty_from_int(q, json_integer_value(v), QTY_DECIMAL_SI);
		return QTY_OK;
	}
	if (json_is_real(v)) {
		d = json_real_value(v);
		if (!isfinite(d))
			return QTY_ENUMBER;
		snprintf(buf, sizeof buf, "%.17g", d);
		return qty_parse(q, buf);
	}
	return QTY_EEMPTY;
}

int
podres_entry(const json_t *holder, const char *which, const char *res,
	struct qty *q)
{
	const json_t *v = json_object_get(json_object_get(holder, which), res);

	memset(q, 0, sizeof *q);
	if (!v)
		return 0;
	if (podres_qty(v, q) != QTY_OK) {
		memset(q, 0, sizeof *q);
		return -1;
	}
	return 1;
}

/* field reads resources.<which>[res] of c into *q, as podres_entry */
static int
field(const json_t *c, const char *which, const char *res, struct qty *q)
{
	return podres_entry(json_object_get(c, "resources"), which, res, q);
}

int
podres_container(const json_t *c, const char *res, struct qty *q)
{
	struct qty req, lim;
	int r = field(c, "requests", res, &req);
	int l = field(c, "limits", res, &lim);

	*q = qty_cmp(&req, &lim) >= 0 ? req : lim;
	if (r < 0 || l < 0) {
		memset(q, 0, sizeof *q);
		return -1;
	}
	if (!r)
		*q = lim;
	return r || l;
}

static int
is_sidecar(const json_t *c)
{
	const char *p = json_string_value(json_object_get(c, "restartPolicy"));

	return p && strcmp(p, "Always") == 0;
}

int
podres_combine(const json_t *spec, const char *res, podres_amount_fn *amount,
	void *arg, struct qty *q)
{
	json_t *list = json_object_get(spec, "containers"), *c;
	struct qty sum = {0}, one, sidecars = {0}, init_max = {0};
	int named = 0, r;
	size_t i;

	json_array_foreach(list, i, c) {
		if ((r = amount(c, res, &one, arg)) < 0)
			named = -1;
		else if (r && named >= 0)
			named = 1;
		qty_add(&sum, &sum, &one);
	}
	list = json_object_get(spec, "initContainers");
	json_array_foreach(list, i, c) {
		if ((r = amount(c, res, &one, arg)) < 0)
			named = -1;
		else if (r && named >= 0)
			named = 1;
		/* a plain init container runs beside the sidecars started
		 * before it; a sidecar's own start needs them all */
		if (is_sidecar(c)) {
			qty_add(&sidecars, &sidecars, &one);
			one = sidecars;
		} else {
			qty_add(&one, &one, &sidecars);
		}
		if (qty_cmp(&one, &init_max) > 0)
			init_max = one;
	}
	qty_add(&sum, &sum, &sidecars);
	*q = qty_cmp(&sum, &init_max) >= 0 ? sum : init_max;
	return named;
}

static int
container_amount(const json_t *c, const char *res, struct qty *q, void *arg)
{
	(void)arg;
	return podres_container(c, res, q);
}

int
podres_total(const json_t *spec, const char *res, struct qty *q)
{
	return podres_combine(spec, res, container_amount, NULL, q);
}

/* add_names sets key -> null in names for every resource of c's
 * requests and limits beginning with prefix. */
static void
add_names(json_t *names, const json_t *c, const char *prefix)
{
	static const char *const which[] = {"requests", "limits"};
	size_t len = strlen(prefix), i;
	const char *key;
	json_t *v;

	for (i = 0; i < 2; i++) {
		json_object_foreach(json_object_get(json_object_get(c,
							    "resources"),
					    which[i]),
			key, v) {
			if (strncmp(key, prefix, len) == 0)
				json_object_set_new(names, key, json_null());
		}
	}
}

static json_t *
names_of(const json_t *spec, const char *prefix)
{
	static const char *const lists[] = {"containers", "initContainers"};
	json_t *names = json_object(), *c;
	size_t i, j;

	for (j = 0; j < 2; j++)
		json_array_foreach(json_object_get(spec, lists[j]), i, c)
			add_names(names, c, prefix);
	return names;
}

json_t *
podres_demand(const json_t *spec, const char *prefix)
{
	json_t *names = names_of(spec, prefix), *out = json_object(), *v;
	const char *key;
	struct qty q;
	int64_t n;

	json_object_foreach(names, key, v) {
		if (podres_total(spec, key, &q) == 1 &&
			qty_value(&q, &n) == QTY_OK && n > 0)
			json_object_set_new(out, key, json_integer(n));
	}
	json_decref(names);
	return out;
}

int
podres_mentions(const json_t *spec, const char *prefix)
{
	json_t *names = names_of(spec, prefix);
	int any = json_object_size(names) > 0;

	json_decref(names);
	return any;
}

void
podres_foreach(json_t *spec, void (*fn)(json_t *c, void *arg), void *arg)
{
	json_t *c;
	size_t i;

	json_array_foreach(json_object_get(spec, "containers"), i, c)
		if (json_is_object(c))
			fn(c, arg);
	json_array_foreach(json_object_get(spec, "initContainers"), i, c)
		if (json_is_object(c))
			fn(c, arg);
}
