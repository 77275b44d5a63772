/* alert_state (ast_): what gpu-alert has told of each device, kept in a
 * ConfigMap so that a restart does not tell it again.
 *
 * Only health is kept: temperature and ECC alerts need a reading before
 * them, which a restarted tracker does not have, so they cannot repeat.
 * The ConfigMap's data holds one key per device last alerted as
 * unhealthy, "NODE_UUID" (neither holds a "_"), whose value is
 *   {"state":"unhealthy","since":"2026-11-24T01:02:03Z"}
 * (since: when the alert's fate was known, for people). A recovered
 * alert removes the key: a device not listed is one whose first reading
 * after a restart alerts only if it is unhealthy, exactly as a device
 * last told as recovered should. No URL and nothing secret is kept.
 *
 * Read once at start; then one merge patch per change, carrying the
 * resourceVersion last seen, so a write that crossed another is refused
 * (409) and made again after reading the ConfigMap anew; created on the
 * first change when missing. A ConfigMap that cannot be read, or holds
 * anything else, is said on stderr naming it and the first bad key, and
 * the state starts empty: every unhealthy device alerts once more,
 * rather than one going untold. A write that fails is said and the
 * alerts go on. */
#ifndef HAZ_ALERT_STATE_H
#define HAZ_ALERT_STATE_H

#include "alert.h"
#include "alert_track.h"
#include "kube.h"

struct alert_state;

/* ast_open reads ConfigMap ns/name through k (borrowed; used by one
 * thread at a time: the caller's until ast_note is first called, then
 * that of ast_note). Never fails: see above. */
struct alert_state *ast_open(struct kube *k, const char *ns, const char *name);
void ast_free(struct alert_state *s);

/* ast_seed tells t the health each device had when last alerted. */
void ast_seed(const struct alert_state *s, struct alert_tracker *t);

/* ast_note records the fate of a (sent, or dropped after its tries): an
 * unhealthy alert stores its device, a recovered one removes it; other
 * events change nothing. */
void ast_note(struct alert_state *s, const struct alert *a);

#endif
