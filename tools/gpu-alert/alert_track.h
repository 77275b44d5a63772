/* alert_track (at_): which readings of a device are worth an alert.
 *
 * Per device (node + uuid) the tracker remembers its last health,
 * whether its temperature is above the threshold, and its ECC count, and
 * raises:
 *   unhealthy    health ok/warn/unknown -> unhealthy
 *   recovered    health unhealthy -> ok/warn
 *   temperature  temp_c reaching the threshold from below; armed again
 *                only once it fell to threshold - 5
 *   ecc          ecc_errors greater than the last count read
 * The first sight of a device records its state and raises nothing,
 * unless the device is already unhealthy. A reading without a value
 * (null health, temp_c, ecc_errors) changes nothing of that value.
 *
 * Deduplication: an alert of the same node, device and event as one
 * raised within the window (10 minutes in gpu-alert) is suppressed,
 * unless the device was seen to recover in between: health not
 * unhealthy for "unhealthy", unhealthy for "recovered", temp_c at or
 * below threshold - 5 for "temperature", a falling ECC count (a driver
 * reload) for "ecc". What the tracker forgets of a device (its node
 * deleted, the device gone from it) it does not forget of its alerts:
 * a node deleted and added again with the same unhealthy GPU is one
 * alert, not two.
 *
 * Single-threaded: one reader owns a tracker. */
#ifndef HAZ_ALERT_TRACK_H
#define HAZ_ALERT_TRACK_H

#include "alert.h"

struct alert_tracker;

/* at_new returns a tracker raising temperature alerts at threshold
 * degrees C, deduplicating within window seconds. */
struct alert_tracker *at_new(double threshold, double window);
void at_free(struct alert_tracker *t);

/* at_emit_fn gets each alert raised (it owns it); suppressed is 1 when
 * deduplication holds it back, and the alert is then only for the
 * caller to mention. */
typedef void at_emit_fn(struct alert *a, int suppressed, void *arg);

/* at_observe judges reading d at time now (monotonic seconds) against
 * what was known of its device, remembers it as part of generation gen
 * of its node (see at_sweep), and hands the alerts it raises to emit in
 * this order: unhealthy or recovered, temperature, ecc. */
void at_observe(struct alert_tracker *t, const struct alert_dev *d,
	unsigned long gen, double now, at_emit_fn *emit, void *arg);

/* at_sweep forgets the devices of node not observed in generation gen:
 * a node object lists all its devices, so one missing is gone. With
 * gen 0 it forgets every device of node (the node was deleted). */
void at_sweep(struct alert_tracker *t, const char *node, unsigned long gen);

/* at_prior tells t that device node + uuid had health when last
 * alerted, before this tracker (a restart): its first reading is then
 * judged against that health rather than as a first sight, so an
 * unhealthy device told before is not told again, and one that
 * recovered meanwhile is told recovered. */
void at_prior(struct alert_tracker *t, const char *node, const char *uuid,
	int health);

/* at_devices: how many devices are known. */
size_t at_devices(const struct alert_tracker *t);

#endif
