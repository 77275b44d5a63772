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
	const char *have = json_string_value(
		json_object_get(t->spec, "runtimeClassName"));

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
 * cpu in millicores, anything else in whole units of unit_of. A limit
 * of 2^63 units or more (cpu: millicores) is not divided. Returns 1 when
 * some container got a share. */
static int
fill(json_t *spec, const char *res, const struct qty *lim)
{
	json_t *list = json_object_get(spec, "containers"), *c;
	int milli = strcmp(res, "cpu") == 0, set = 0;
	int64_t total, share, unit = 1, n = 0, i = 0;
	char buf[QTY_BUFSIZE];
	struct qty q;
	size_t k;

	json_array_foreach(list, k, c)
		n += json_is_object(c);
	if (!n || (milli ? qty_milli(lim, &total) : qty_value(lim, &total)) ||
		total <= 0)
		return 0;
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
		set = 1;
	}
	return set;
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
		if (!strcmp(json_string_value(json_object_get(g, "name"))
				    ? json_string_value(
					      json_object_get(g, "name"))
				    : "",
			    MUTATE_GATE))
			break;
	}
	if (i == json_array_size(gates))
		json_array_append_new(gates,
			json_pack("{s:s}", "name", MUTATE_GATE));
	mut_set_annotation(t->pod, MUTATE_REFUSED_ANNOTATION, msg);
}

/* One limit being checked. */
struct check {
	const char *class, *res, *key;
	const char *raw; /* the limit as the class writes it */
	struct qty lim;
	int bad; /* a value could not be summed (said once; no total) */
	char **msg;
};

/* say adds a sentence, "... RuntimeClass <class> (<key>)" and then end,
 * to the refusal. */
static void
say(struct check *ck, const char *head, const char *end)
{
	char *s = easprintf("%s RuntimeClass %s (%s)%s", head, ck->class,
		ck->key, end);

	append(ck->msg, "; ", s);
	free(s);
}

/* value_text writes the JSON text of v into buf (n bytes, at least 48),
 * a text longer than 32 bytes cut there and marked "...". */
static void
value_text(const json_t *v, char *buf, size_t n)
{
	const char *str = json_string_value(v);
	char *s = str ? NULL : json_dumps(v, JSON_ENCODE_ANY | JSON_COMPACT);
	const char *t = str ? str : s ? s : "?";

	snprintf(buf, n, "%s%.32s%s%s", str ? "\"" : "", t,
		strlen(t) > 32 ? "..." : "", str ? "\"" : "");
	free(s);
}

/* check_value looks at one request or limit (which) of a container
 * (who): a value that is no quantity, is negative, or is huge cannot be
 * summed; the first such value of the limit refuses the pod. */
static void
check_value(struct check *ck, const char *who, const char *which,
	const json_t *v)
{
	char text[48], *head;
	const char *why;
	struct qty q;

	if (!v || ck->bad)
		return;
	if (podres_qty(v, &q) != QTY_OK)
		why = "is not a quantity";
	else if (q.neg)
		why = "is negative";
	else if (qty_huge(&q))
		why = "is 1e38 or more";
	else
		return;
	ck->bad = 1;
	value_text(v, text, sizeof text);
	if (qty_huge(&q) && !qty_huge(&ck->lim)) {
		head = easprintf("%s: %s.%s %s > %s allowed by", who, which,
			ck->res, text, ck->raw);
		say(ck, head, "");
	} else {
		head = easprintf("%s: %s.%s %s %s, so", who, which, ck->res,
			text, why);
		say(ck, head, " cannot be checked");
	}
	free(head);
}

/* check_container runs check_value over the requests and limits of
 * container c, the index-th of list. */
static void
check_container(struct check *ck, const json_t *c, const char *list,
	size_t index)
{
	const char *name = json_string_value(json_object_get(c, "name"));
	json_t *res = json_object_get(c, "resources");
	char who[96];

	if (name)
		snprintf(who, sizeof who, "%scontainer %.64s",
			strcmp(list, "containers") ? "init " : "", name);
	else
		snprintf(who, sizeof who, "%s[%zu]", list, index);
	check_value(ck, who, "requests",
		json_object_get(json_object_get(res, "requests"), ck->res));
	check_value(ck, who, "limits",
		json_object_get(json_object_get(res, "limits"), ck->res));
}

/* check_total compares the pod's total with the limit: exact, but for a
 * total of 10^38 or more, which no smaller limit allows. */
static void
check_total(struct check *ck, const struct qty *tot)
{
	char have[QTY_BUFSIZE], *head;

	if (!qty_huge(tot) && qty_cmp(tot, &ck->lim) <= 0)
		return;
	if (qty_huge(tot) && qty_huge(&ck->lim)) {
		head = easprintf("pod requests %s 1e38 or more, so", ck->res);
		say(ck, head, " cannot be checked");
	} else {
		head = easprintf("pod requests %s %s > %s allowed by", ck->res,
			qty_huge(tot) ? "1e38 or more" : qty_format(tot, have),
			ck->raw);
		say(ck, head, "");
	}
	free(head);
}

/* check_one fills and checks one limit, adding to *filled and
 * ck->msg. Every value is looked at first: one that cannot be summed
 * refuses the pod (the API server takes none of them but values of
 * 10^38 or more, which no smaller limit allows). Then the total. */
static void
check_one(struct check *ck, struct target *t, struct adm_verdict *v,
	char **filled)
{
	static const char *const lists[] = {"containers", "initContainers"};
	char want[QTY_BUFSIZE], *s;
	struct qty tot;
	json_t *c;
	size_t i, k;

	if (qty_parse(&ck->lim, ck->raw) != QTY_OK || ck->lim.neg) {
		adm_warn(v,
			"RuntimeClass %s: %s \"%.32s\" is not a quantity; "
			"not enforced",
			ck->class, ck->key, ck->raw);
		return;
	}
	for (k = 0; k < 2; k++)
		json_array_foreach(json_object_get(t->spec, lists[k]), i, c)
			if (json_is_object(c))
				check_container(ck, c, lists[k], i);
	if (ck->bad)
		return;
	if (podres_total(t->spec, ck->res, &tot) == 0 &&
		fill(t->spec, ck->res, &ck->lim)) {
		s = easprintf("%s %s", ck->res, qty_format(&ck->lim, want));
		append(filled, ", ", s);
		free(s);
		podres_total(t->spec, ck->res, &tot);
	}
	check_total(ck, &tot);
}

int
mutate_rc(const struct mutate_opts *o, struct avail *a, struct target *t,
	struct adm_verdict *v, struct mutate_note *note)
{
	struct check ck;
	const char *class;
	char *raw, *filled = NULL, *msg = NULL, *before;
	size_t i;
	int known;

	default_class(o, t);
	class = json_string_value(json_object_get(t->spec, "runtimeClassName"));
	if (!class || !*class)
		return 0;
	for (i = 0; i < sizeof limits / sizeof *limits; i++) {
		known = avail_class_limit(a, class, limits[i].key, &raw);
		if (known < 0)
			break;
		if (!known)
			continue;
		ck = (struct check){.class = class,
			.res = limits[i].res,
			.key = limits[i].key,
			.raw = raw,
			.msg = &msg};
		before = msg;
		check_one(&ck, t, v, &filled);
		if (msg != before && !note->limit)
			note->limit = limits[i].key;
		free(raw);
	}
	if (filled)
		adm_warn(v, "resources set from RuntimeClass %s: %s", class,
			filled);
	free(filled);
	if (!msg)
		return 0;
	err_clean(msg); /* values are cut at a byte count; the annotation */
	if (o->gate) {  /* must be UTF-8 all the same */
		hold(t, msg);
		adm_warn(v, "%s; held by scheduling gate %s", msg, MUTATE_GATE);
		note->gated = 1;
	} else {
		adm_refuse(v, 403, "Forbidden", msg);
	}
	free(msg);
	return 1;
}
