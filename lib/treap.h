/* treap (tp_): an ordered set of intrusive nodes (a randomized binary search
 * tree), for indexes updated on every change.
 *
 * Embed a struct tp_node in each element. The tree never allocates; an
 * element is in at most one tree per embedded node. The comparison must
 * be a total order and must not change while an element is in the tree:
 * take it out, change it, put it back. */
#ifndef HAZ_TREAP_H
#define HAZ_TREAP_H

#include <stddef.h>
#include <stdint.h>

struct tp_node {
	struct tp_node *l, *r, *up;
	uint32_t prio;
};

/* cmp returns <0, 0 or >0 as a sorts before, with or after b; ctx is the
 * tree's. */
typedef int tp_cmp(const struct tp_node *a, const struct tp_node *b,
	const void *ctx);

struct tp_tree {
	struct tp_node *root;
	size_t n;
	tp_cmp *cmp;
	const void *ctx;
	uint32_t seed; /* for priorities; any value */
};

void tp_init(struct tp_tree *t, tp_cmp *cmp, const void *ctx);

/* tp_insert adds x (not in any tree through this node). */
void tp_insert(struct tp_tree *t, struct tp_node *x);

/* tp_remove takes x out of t, which must hold it. */
void tp_remove(struct tp_tree *t, struct tp_node *x);

/* tp_first returns the least element, NULL when empty; tp_next the one
 * after x, NULL at the end. */
struct tp_node *tp_first(const struct tp_tree *t);
struct tp_node *tp_next(const struct tp_node *x);

/* tp_find returns the element that compares equal to probe (which need
 * not be in the tree), or NULL. */
struct tp_node *tp_find(const struct tp_tree *t, const struct tp_node *probe);

/* tp_lower returns the least element x with below(x, arg) false, where
 * below is true for a prefix of the order; NULL when there is none. */
struct tp_node *tp_lower(const struct tp_tree *t,
	int (*below)(const struct tp_node *x, const void *arg),
	const void *arg);

#endif
