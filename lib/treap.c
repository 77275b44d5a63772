/* treap: rotations keep heap order on random priorities. */
#include <stddef.h>

#include "treap.h"

void
tp_init(struct tp_tree *t, tp_cmp *cmp, const void *ctx)
{
	t->root = NULL;
	t->n = 0;
	t->cmp = cmp;
	t->ctx = ctx;
	t->seed = 0x9e3779b9u;
}

/* next_prio steps the tree's xorshift32 generator. */
static uint32_t
next_prio(struct tp_tree *t)
{
	uint32_t x = t->seed;

	x ^= x << 13;
	x ^= x >> 17;
	x ^= x << 5;
	return t->seed = x;
}

/* link makes c (may be NULL) take the place of old under parent p. */
static void
link(struct tp_tree *t, struct tp_node *p, struct tp_node *old,
	struct tp_node *c)
{
	if (c)
		c->up = p;
	if (!p)
		t->root = c;
	else if (p->l == old)
		p->l = c;
	else
		p->r = c;
}

/* rotate_up lifts x above its parent. */
static void
rotate_up(struct tp_tree *t, struct tp_node *x)
{
	struct tp_node *p = x->up, *g = p->up;

	if (p->l == x) {
		p->l = x->r;
		if (x->r)
			x->r->up = p;
		x->r = p;
	} else {
		p->r = x->l;
		if (x->l)
			x->l->up = p;
		x->l = p;
	}
	p->up = x;
	link(t, g, p, x);
}

void
tp_insert(struct tp_tree *t, struct tp_node *x)
{
	struct tp_node *p = NULL, **at = &t->root;

	while (*at) {
		p = *at;
		at = t->cmp(x, p, t->ctx) < 0 ? &p->l : &p->r;
	}
	x->l = x->r = NULL;
	x->up = p;
	x->prio = next_prio(t);
	*at = x;
	while (x->up && x->up->prio < x->prio)
		rotate_up(t, x);
	t->n++;
}

void
tp_remove(struct tp_tree *t, struct tp_node *x)
{
	struct tp_node *c;

	while (x->l && x->r) {
		c = x->l->prio > x->r->prio ? x->l : x->r;
		rotate_up(t, c);
	}
	link(t, x->up, x, x->l ? x->l : x->r);
	x->l = x->r = x->up = NULL;
	t->n--;
}

struct tp_node *
tp_first(const struct tp_tree *t)
{
	struct tp_node *x = t->root;

	while (x && x->l)
		x = x->l;
	return x;
}

struct tp_node *
tp_next(const struct tp_node *x)
{
	const struct tp_node *p;

	if (x->r) {
		for (x = x->r; x->l; x = x->l)
			;
		return (struct tp_node *)x;
	}
	for (p = x->up; p && p->r == x; p = p->up)
		x = p;
	return (struct tp_node *)p;
}

struct tp_node *
tp_find(const struct tp_tree *t, const struct tp_node *probe)
{
	struct tp_node *x = t->root;
	int c;

	while (x && (c = t->cmp(probe, x, t->ctx)) != 0)
		x = c < 0 ? x->l : x->r;
	return x;
}

struct tp_node *
tp_lower(const struct tp_tree *t,
	int (*below)(const struct tp_node *x, const void *arg), const void *arg)
{
	struct tp_node *x = t->root, *best = NULL;

	while (x) {
		if (below(x, arg)) {
			x = x->r;
		} else {
			best = x;
			x = x->l;
		}
	}
	return best;
}
