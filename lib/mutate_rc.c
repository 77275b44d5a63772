/* mutate_rc: RuntimeClass limits: a default class, resources filled in
 * from the class, and pods asking for more than it allows refused or
 * held (see mutate.h, steps 1 and 2). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "err.h"
#include "mutate_int.h"
#include "podres.h"

static const struct {
	const char *res, *key;
} limits[] = {
	{"nvidia.com/gpu", "limits.k8s.gpu/default"},
	{"cpu", "limits.k8s.gpu/cpu"},
	{"memory", "limits.k8s.gpu/memory"},
};

/* append adds text to the malloc'd *s (NULL at first), sep between. */
static void
append(char **s, const char *sep, const char *text)
{
	char *n = easprintf("%s%s%s", *s ? *s : "", *s ? sep : "", text);

	free(*s);
	*s = n;
}

static void
default_class(const struct mutate_opts *o, struct target *t)
{
	const char *have = json_string_value(json_object_get(t->spec,
		"runtimeClassName"));

	if (o->default_class && (!have || !*have) &&
		podres_mentions(t->spec, "nvidia.com/"))
		json_object_set_new(t->spec, "runtimeClassName",
			json_string(o->default_class));
}

/* unit_of returns the largest power of 1024 (binary form) or 1000
 * (decimal) that divides v, so shares read in the limit's own unit:
 * 32861620Ki splits in Ki, 64Gi in Gi. */
static int64_t
unit_of(int64_t v, enum qty_form form)
{
	int64_t base = form == QTY_BINARY_SI ? 1024 : 1000, unit = 1;
	int k;

	for (k = 0; k < 6 && v % (unit * base) == 0; k++)
		unit *= base;
	return unit;
}

/* fill divides lim over the regular containers of spec (see mutate.h):
 * cpu in millicores, anything else in whole units of unit_of. */
static void
fill(json_t *spec, const char *res, const struct qty *lim)
{
	json_t *list = json_object_get(spec, "containers"), *c;
	int milli = strcmp(res, "cpu") == 0;
	int64_t total, share, unit = 1, n = 0, i = 0;
	char buf[QTY_BUFSIZE];
	struct qty q;
	size_t k;

	json_array_foreach(list, k, c)
		n += json_is_object(c);
	if (!n || (milli ? qty_milli(lim, &total) : qty_value(lim, &total)) ||
		total <= 0)
		return;
	if (!milli)
		unit = unit_of(total, lim->form);
	total /= unit;
	json_array_foreach(list, k, c) {
		if (!json_is_object(c))
			continue;
		share = total / n + (i++ < total % n);
		if (!share)
			continue;
		if (milli)
			qty_from_milli(&q, share, QTY_DECIMAL_SI);
		else
			qty_from_int(&q, share * unit, lim->form);
		qty_format(&q, buf);
		mut_set_resource(c, "requests", res, buf);
		mut_set_resource(c, "limits", res, buf);
	}
}

/* hold adds the scheduling gate and the refusal annotation. */
static void
hold(struct target *t, const char *msg)
{
	json_t *gates = json_object_get(t->spec, "schedulingGates"), *g;
	size_t i;

	if (!json_is_array(gates)) {
		gates = json_array();
		json_object_set_new(t->spec, "schedulingGates", gates);
	}
	json_array_foreach(gates, i, g) {
		if (!strcmp(json_string_value(json_object_get(g, "name")) ?
			json_string_value(json_object_get(g, "name")) : "", MUTATE_GATE))
			break;
	}
	if (i == json_array_size(gates))
		json_array_append_new(gates, json_pack("{s:s}", "name", MUTATE_GATE));
	mut_set_annotation(t->pod, MUTATE_REFUSED_ANNOTATION, msg);
}

/* check_one fills and checks one limit; adds to *filled and *msg. */
static void
check_one(const char *class, size_t i, const char *raw, struct target *t,
	struct adm_verdict *v, char **filled, char **msg, const char **first)
{
	char have[QTY_BUFSIZE], want[QTY_BUFSIZE], *s;
	struct qty lim, tot;

	if (qty_parse(&lim, raw) != QTY_OK || lim.whole < 0) {
		adm_warn(v, "RuntimeClass %s: %s \"%.32s\" is not a quantity; not "
			"enforced", class, limits[i].key, raw);
		return;
	}
	if (podres_total(t->spec, limits[i].res, &tot) == 0) {
		fill(t->spec, limits[i].res, &lim);
		s = easprintf("%s %s", limits[i].res, qty_format(&lim, want));
		append(filled, ", ", s);
		free(s);
		podres_total(t->spec, limits[i].res, &tot);
	}
	if (qty_cmp(&tot, &lim) <= 0)
		return;
	s = easprintf("pod requests %s %s > %s allowed by RuntimeClass %s (%s)",
		limits[i].res, qty_format(&tot, have), raw, class, limits[i].key);
	append(msg, "; ", s);
	free(s);
	if (!*first)
		*first = limits[i].key;
}

int
mutate_rc(const struct mutate_opts *o, struct avail *a, struct target *t,
	struct adm_verdict *v, struct mutate_note *note)
{
	const char *class;
	char raw[256], *filled = NULL, *msg = NULL;
	size_t i;
	int known;

	default_class(o, t);
	class = json_string_value(json_object_get(t->spec, "runtimeClassName"));
	if (!class || !*class)
		return 0;
	for (i = 0; i < sizeof limits / sizeof *limits; i++) {
		known = avail_class_limit(a, class, limits[i].key, raw, sizeof raw);
		if (known < 0)
			break;
		if (known)
			check_one(class, i, raw, t, v, &filled, &msg, &note->limit);
	}
	if (filled)
		adm_warn(v, "resources set from RuntimeClass %s: %s", class, filled);
	free(filled);
	if (!msg)
		return 0;
	if (o->gate) {
		hold(t, msg);
		adm_warn(v, "%s; held by scheduling gate %s", msg, MUTATE_GATE);
		note->gated = 1;
	} else {
		adm_refuse(v, 403, "Forbidden", msg);
	}
	free(msg);
	return 1;
}
