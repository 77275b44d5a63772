/* migchain: ordered MIG fallback chains, per GPU product.
 *
 * A chain lists MIG profiles from the largest to the smallest; a request
 * for a profile the chain names may fall back to the profiles after it,
 * in order. Chains are grouped by product only to keep a configuration
 * readable: resource names (nvidia.com/mig-2g.20gb) carry no product, so
 * a profile follows the first chain, in file order, that names it.
 *
 * Built-in table (migchain_default):
 *   A100-40GB  3g.20gb -> 2g.10gb -> 1g.5gb
 *   A100-80GB  3g.40gb -> 2g.20gb -> 1g.10gb
 *   H100-80GB  3g.40gb -> 2g.20gb -> 1g.10gb
 *   H200       3g.71gb -> 2g.35gb -> 1g.18gb
 *   H200       2g.20gb -> 1g.10gb   (the simulated H200 of the MIG seed)
 *
 * A configuration file (YAML or JSON) replaces the whole table:
 *
 *   chains:
 *     A100-40GB: [3g.20gb, 2g.10gb, 1g.5gb]       # one chain
 *     H200:                                        # or several
 *     - [3g.71gb, 2g.35gb, 1g.18gb]
 *     - [2g.20gb, 1g.10gb]
 *   pendingSeconds: 60
 *
 * Every profile must be a MIG profile name, and each chain must go
 * strictly from larger to smaller (as mig_cmp orders them) with at least
 * two profiles. pendingSeconds (default 60, 1..3600) is how long an
 * admitted pod that never shows up in the watch keeps counting as
 * demand.
 *
 * Threads: no state of its own: a chain set is read by any number of threads
 * once built, and built by one. */
#ifndef HAZ_MIGCHAIN_H
#define HAZ_MIGCHAIN_H

#include <stddef.h>

#include <jansson.h>

struct migchain;

/* migchain_default returns the built-in table. */
struct migchain *migchain_default(void);

/* migchain_from_json builds a table from a configuration document; name
 * is used in messages. Returns NULL with a one-line reason in err. */
struct migchain *migchain_from_json(const json_t *doc, const char *name,
	char *err, size_t errlen);

/* migchain_load reads a configuration file. NULL with err set on error. */
struct migchain *migchain_load(const char *path, char *err, size_t errlen);

void migchain_free(struct migchain *m);

/* migchain_after returns how many profiles follow profile (a canonical
 * name) in the first chain naming it, and points *next at them (owned by
 * m); 0 when no chain names it. */
size_t migchain_after(const struct migchain *m, const char *profile,
	const char *const **next);

/* migchain_pending_seconds returns the pendingSeconds setting. */
double migchain_pending_seconds(const struct migchain *m);

/* migchain_json returns the table as {"chains":{product:[[...]]},
 * "pendingSeconds":n}, for -D and tests. */
json_t *migchain_json(const struct migchain *m);

#endif
