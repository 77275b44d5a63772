/* sched_index (spx_): the search behind sched-pick, without a scan of all
 * nodes.
 *
 * Classes. A query needs devices of one profile, free with at least m
 * MiB, or shared with at least m MiB left. For free devices, m is
 * rounded up to a threshold: the least device size of that profile in
 * the inventory that is >= m, so "at least m" and "at least the
 * threshold" pick the same devices. For shared devices the threshold is
 * m itself: a class is made for each size that shared requests ask for.
 * Each node has a load per class (struct sp_load: its candidate devices
 * for such a query), kept for the classes some request has needed.
 *
 * Buckets. Within a class, nodes are bucketed by their candidate count,
 * 1..max, and each bucket keeps them in the strategy's order (sp_cmp),
 * as a small treap of groups (nodes whose keys agree but for the rank)
 * each holding an ordered set of node ranks (rset.h). A query for k
 * devices merges the buckets k..max by sp_cmp, taking the least head
 * each step, and returns the first node that fits; without a selector
 * or explicit indexes that is the first head: O(max + log n). Round
 * robin and random enter each bucket at their starting rank and wrap.
 *
 * Orders. Strategies that share an order within a bucket share trees:
 * least_utilized/priority (utilization), least_loaded (memory,
 * descending), best_fit (memory), cost_optimized, and name order for
 * binpack, spread, their _gpu forms, round_robin and random; and
 * least_utilized's search for devices under the goal, whose buckets
 * count those devices alone and whose groups are keyed by the mean
 * utilization of all candidates, then their count. An order is
 * made the first time a request uses it, and kept only in the classes
 * requests have used.
 *
 * Updates. A placement or release changes one node: its loads are
 * recomputed and, in each class where its load changed, its entry moves
 * between groups, which is mostly a bit flip. A known node's new labels
 * move it into or out of the views of those label=values alone, and a
 * new cost refiles it in the cost order. New nodes, devices or sizes
 * make a full rebuild at the next search.
 *
 * Selectors. A request with a node selector looks at its rarest
 * label=value: when that label has s nodes with s * s <= 4 * nodes, at
 * those s nodes one by one (a walk of all nodes would pass nodes / s
 * others per match); else in a view, the same index kept for the nodes
 * of that label alone, made when first needed.
 *
 * Threads: an index belongs to the sp_state it serves, so to one thread at
 * a time. */
#ifndef HAZ_SCHED_INDEX_H
#define HAZ_SCHED_INDEX_H

#include "sched.h"

extern const struct sp_ops spx_ops;

#endif
