/* bind_res: resource lists for sched-bind's node filter (see bind_int.h). */
#include <stdlib.h>
#include <string.h>

#include "bind_int.h"
#include "err.h"

void
bind_rl_free(struct brl *r)
{
	for (size_t i = 0; i < r->n; i++)
		free(r->name[i]);
	free(r->name);
	free(r->q);
	memset(r, 0, sizeof *r);
}

static struct qty *
slot(struct brl *r, const char *name)
{
	for (size_t i = 0; i < r->n; i++)
		if (!strcmp(r->name[i], name))
			return &r->q[i];
	if (r->n == r->cap) {
		r->cap = r->cap ? 2 * r->cap : 8;
		r->name = erealloc(r->name, r->cap * sizeof *r->name);
		r->q = erealloc(r->q, r->cap * sizeof *r->q);
	}
	r->name[r->n] = estrdup(name);
	qty_from_int(&r->q[r->n], 0, QTY_DECIMAL_SI);
	return &r->q[r->n++];
}

const struct qty *
bind_rl_get(const struct brl *r, const char *name)
{
	for (size_t i = 0; i < r->n; i++)
		if (!strcmp(r->name[i], name))
			return &r->q[i];
	return NULL;
}

void
bind_rl_add(struct brl *r, const char *name, const struct qty *q, int sub)
{
	struct qty *s = slot(r, name);

	if (sub)
		qty_sub(s, s, q);
	else
		qty_add(s, s, q);
}

/* each parses every quantity of a resource map and hands it to fn */
static void
each(const json_t *obj,
	void (*fn)(struct brl *, const char *, const struct qty *),
	struct brl *r)
{
	const char *k;
	json_t *v;
	struct qty q;

	json_object_foreach((json_t *)obj, k, v) {
		if (json_is_string(v) &&
			qty_parse(&q, json_string_value(v)) == QTY_OK)
			fn(r, k, &q);
		else if (json_is_integer(v)) {
			qty_from_int(&q, json_integer_value(v), QTY_DECIMAL_SI);
			fn(r, k, &q);
		}
	}
}

static void
add_fn(struct brl *r, const char *k, const struct qty *q)
{
	bind_rl_add(r, k, q, 0);
}

static void
max_fn(struct brl *r, const char *k, const struct qty *q)
{
	struct qty *s = slot(r, k);

	if (qty_cmp(q, s) > 0)
		*s = *q;
}

void
bind_rl_read(struct brl *r, const json_t *obj)
{
	each(obj, add_fn, r);
}

static const json_t *
requests_of(const json_t *c)
{
	return json_object_get(json_object_get(c, "resources"), "requests");
}

static int
is_sidecar(const json_t *c)
{
	const char *p = json_string_value(json_object_get(c, "restartPolicy"));

	return p && !strcmp(p, "Always");
}

/* add_all and max_all fold list b into a, by sum or by maximum. */
static void
add_all(struct brl *a, const struct brl *b)
{
	size_t i;

	for (i = 0; i < b->n; i++)
		add_fn(a, b->name[i], &b->q[i]);
}

static void
max_all(struct brl *a, const struct brl *b)
{
	size_t i;

	for (i = 0; i < b->n; i++)
		max_fn(a, b->name[i], &b->q[i]);
}

/* bind_rl_pod counts as the scheduler does (and podres.c): the containers
 * and the sidecars (init containers that restart: Always) together; a
 * plain init container beside the sidecars started before it; the larger
 * of the two, resource by resource, plus the overhead. */
void
bind_rl_pod(struct brl *r, const json_t *pod)
{
	const json_t *spec = json_object_get(pod, "spec"), *c;
	struct brl side = {0}, init = {0}, one;
	struct qty q;
	size_t i;

	json_array_foreach(json_object_get(spec, "containers"), i, c)
		each(requests_of(c), add_fn, r);
	json_array_foreach(json_object_get(spec, "initContainers"), i, c) {
		if (is_sidecar(c)) {
			each(requests_of(c), add_fn, &side);
			max_all(&init, &side);
			continue;
		}
		one = (struct brl){0};
		each(requests_of(c), add_fn, &one);
		add_all(&one, &side);
		max_all(&init, &one);
		bind_rl_free(&one);
	}
	add_all(r, &side);
	max_all(r, &init);
	bind_rl_free(&side);
	bind_rl_free(&init);
	each(json_object_get(spec, "overhead"), add_fn, r);
	qty_from_int(&q, 1, QTY_DECIMAL_SI);
	bind_rl_add(r, "pods", &q, 0);
}

const char *
bind_rl_short(const struct brl *avail, const struct brl *req)
{
	struct qty zero;
	const struct qty *a;

	qty_from_int(&zero, 0, QTY_DECIMAL_SI);
	for (size_t i = 0; i < req->n; i++) {
		if (qty_cmp(&req->q[i], &zero) <= 0)
			continue;
		a = bind_rl_get(avail, req->name[i]);
		if (!a || qty_cmp(a, &req->q[i]) < 0)
			return req->name[i];
	}
	return NULL;
}

long
bind_rl_count(const struct brl *r, const char *name)
{
	const struct qty *q = bind_rl_get(r, name);
	int64_t v;

	if (!q || q->neg || q->nano || qty_value(q, &v) != QTY_OK ||
		v > 1L << 30)
		return 0;
	return (long)v;
}
