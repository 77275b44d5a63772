/* sched_index: the search behind sched-pick, without a scan of all nodes.
 *
 * Classes. A query needs devices of one profile p with at least m MiB,
 * exclusively or shared. m is rounded up to a threshold: the least
 * device size of profile p in the inventory that is >= m (so "at least
 * m" and "at least the threshold" pick the same devices). One class per
 * (profile, threshold, exclusive/shared); each node has a load per
 * class (struct sp_load: its candidate devices for such a query).
 *
 * Buckets. Within a class, nodes are bucketed by their candidate count
 * 1..max, and each bucket is a treap in the strategy's order (sp_cmp);
 * count is constant within a bucket. A query for k devices merges the
 * buckets k..max by sp_cmp, taking the smallest head each step, and
 * returns the first node that fits (sp_fits: selector, explicit indexes,
 * shared free memory). Exclusive queries without those extra checks take
 * the first head: O(max + log n). Round-robin and random rotate: each
 * bucket is entered at the first rank >= start and wraps around.
 *
 * Orders. Strategies that share a within-bucket order share trees: one
 * for least_utilized/priority (utilization sum), least_loaded (memory,
 * descending), best_fit (memory), cost_optimized, and name order for
 * binpack, spread, their _gpu forms, round_robin and random. Each is
 * built the first time a request uses it.
 *
 * Updates. A placement or release changes one node: its loads are
 * recomputed (devices x thresholds) and only the entries whose load
 * changed move between trees. New nodes, devices, sizes or labels make
 * a full rebuild at the next search.
 *
 * Selectors. A request with a node selector whose rarest label=value
 * has s nodes, with s * s <= 4 * nodes, looks at those s nodes directly
 * (sorted by sp_cmp) instead of walking the buckets. */
#ifndef HAZ_SCHED_INDEX_H
#define HAZ_SCHED_INDEX_H

#include "sched.h"

extern const struct sp_ops spx_ops;

#endif
