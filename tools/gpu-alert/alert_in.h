/* alert_in (ai_): what gpu-alert reads, turned into device readings.
 *
 * Two kinds of record:
 *   - Node watch events, as claim-watch nodes writes them:
 *     {"type": "ADDED"|"MODIFIED"|"DELETED", "object": Node}. The node's
 *     annotation agentaflow.gpu/devices (a JSON array in a string, as
 *     claim-make writes it) lists its devices, each with uuid, index,
 *     product, mig (a profile or null), health, temp_c, ecc_errors and
 *     health_reasons (or reasons); a device no longer listed, and every
 *     device of a DELETED node, is forgotten. {"type": "SYNCED"} and
 *     BOOKMARK events are passed over.
 *   - gpu records, as gpu-probe writes them ({"kind": "gpu", "node",
 *     "uuid", ...}: the same fields, mig an object with a profile);
 *     {"kind": "flush"} is passed over.
 * Fields may be null or absent except uuid (and a gpu record's node); a
 * value of the wrong type is a bad record: warned with its record number
 * and skipped, its other devices read, no device of its node forgotten. */
#ifndef HAZ_ALERT_IN_H
#define HAZ_ALERT_IN_H

#include <jansson.h>

#include "alert_track.h"
#include "nd.h"

struct alert_in {
	struct alert_tracker *t;
	at_emit_fn *emit;
	void *arg;
	unsigned long gen; /* of the last node object read */
	/* node -> the text of its devices annotation last read whole and
	 * good ("" when it had none), made by ai_record: a node event whose
	 * annotation is the same holds the same readings, which raise
	 * nothing and forget nothing, so it is passed over unread */
	struct hm *last;
};

/* ai_skip is the jl_skip_fn for reading ai_record's records: of a Node
 * event's object it keeps the metadata's name and devices annotation
 * alone (a Node's labels, conditions and images are most of its text). */
const char *const *ai_skip(const char *const *path, int depth, int *keep,
	void *arg);

/* ai_record hands the readings of rec (record r->recno of r) to the
 * tracker at time now. Returns 0, or -1 when rec, or a device of it, was
 * bad (warned through nd_warn). */
int ai_record(struct alert_in *in, struct nd_reader *r, const json_t *rec,
	double now);

/* ai_free frees what ai_record kept (not the tracker). */
void ai_free(struct alert_in *in);

#endif
