/* nodefit (nf_): which nodes a pod may use, and what sched-pick reads of one.
 *
 * nf_eligible applies the two node rules of kube-scheduler that labels
 * alone cannot express: taints (NoSchedule and NoExecute must be
 * tolerated) and required node affinity. nf_records turns a Node into
 * the inventory records of sched-pick(1); nf_digest hashes exactly what
 * those two read, so that a Node event that changed none of it (a
 * heartbeat, a lease, another annotation) can be told at once.
 *
 * Every function takes borrowed JSON (a Node object as the API server
 * serves it), keeps no reference to it and never fails on malformed
 * input: a member of the wrong type counts as described at each.
 *
 * Threads: no state of its own: any thread, on records of its own. */
#ifndef HAZ_NODEFIT_H
#define HAZ_NODEFIT_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "jbuf.h"

/* nf_tolerated says whether the array tolerations tolerates taint (an
 * item of a Node's spec.taints), by Kubernetes' rules: a toleration with
 * a non-empty effect needs the taint's, one with a non-empty key the
 * taint's key; then operator Exists tolerates (value ignored; an empty
 * or absent key matches every key) and Equal (the default, also when
 * the operator is "") needs the values equal, absent counting as "".
 * Equal with an empty or absent key tolerates nothing (the API server
 * refuses such a toleration), nor does any other operator. A member
 * that is JSON null counts as absent; a toleration or taint that is no
 * object or has a key, operator, value or effect of another type than
 * string tolerates (or is tolerated by) nothing. tolerations that is
 * NULL or no array tolerates nothing. */
int nf_tolerated(const json_t *tolerations, const json_t *taint);

enum { NF_OK = 0, NF_TAINT, NF_AFFINITY };

/* nf_eligible checks Node node against a pod's tolerations and required
 * node affinity. Every taint of spec.taints with effect NoSchedule or
 * NoExecute must be tolerated (nf_tolerated; PreferNoSchedule and other
 * effects are ignored). When terms (an array of NodeSelectorTerm) is a
 * non-empty array, at least one term must match: all of its
 * matchExpressions over the node's labels and its matchFields over
 * metadata.name hold, and it has at least one of them (a term with none
 * matches nothing, as in Kubernetes). Expressions: In and NotIn need a
 * non-empty values list (NotIn also holds when the label is absent);
 * Exists and DoesNotExist an empty one; Gt and Lt exactly one value,
 * compared as a 64-bit integer with the label's, an optional sign then
 * digits (a value or label that is no such integer, or an absent label:
 * no match); the key must be a label key and every value a label value,
 * as kube-scheduler parses them (so a Gt or Lt value has no sign).
 * Fields: key metadata.name, operator In or NotIn with exactly one value.
 * An unknown operator, a requirement breaking these rules or with members
 * of the wrong type, a term that is no object or whose lists are no
 * arrays count as not matching. terms NULL, no array
 * or empty: no constraint.
 *
 * Returns NF_OK; NF_TAINT with why set to the first taint not tolerated,
 * as "key=value:Effect" ("key:Effect" with an empty value); or
 * NF_AFFINITY with why set to "node affinity". why (n bytes) may be
 * NULL; it is cut to fit, as valid UTF-8 with no control characters. */
int nf_eligible(const json_t *node, const json_t *tolerations,
	const json_t *terms, char *why, size_t n);

/* nf_records appends to out the sched-pick inventory records of Node
 * node, one a line, each ending in "\n" (the fields and their order are
 * those the controller's jq PLAN wrote):
 *
 *   {"kind":"node","name","labels","ready","unschedulable","cheap","cost"}
 *
 * labels: the node's string-valued labels plus every string member of
 * extra_labels (an object, may be NULL; it wins over a node label of the
 * same key); ready: a condition Ready has status "True"; unschedulable:
 * spec.unschedulable is true (taints are not folded in: see nf_eligible);
 * cheap: label gpu-orchestrator/cheap-node is "true"; cost: annotation
 * canhazgpu.dev/cost read as a JSON number text, 1 when absent, no
 * number or not finite (a whole number within 2^53 is written as an
 * integer). Then, for each device of the annotation
 * agentaflow.gpu/devices (a JSON array, as claim-make writes it) that is
 * an object with a non-empty uuid string:
 *
 *   {"kind":"gpu","node","index","uuid","product","memory_mib",
 *    "memory_used_mib","util_pct","mig_enabled","health","mig"}
 *
 * each copied as it is (null when absent), mig_enabled false and health
 * "ok" when absent or null, mig {"profile":<mig>,"parent_uuid":...} when
 * the device's mig is neither absent, null nor false, else null. Values
 * of the wrong type are copied, not mended, for sched-pick to refuse.
 * A device whose "held" is neither absent, null nor false (claim-make
 * writes true while the host holds its GPU, see gpu-reserve(1) mark) has
 * health "unhealthy", whatever its own, so that sched-pick places
 * nothing on it while the hold lasts.
 *
 * Returns the number of gpu records written: 0 without the annotation;
 * -1, after the node record alone, when the annotation is there but no
 * string holding a JSON array (the caller says so, once). */
int nf_records(const json_t *node, const json_t *extra_labels, struct jb *out);

/* nf_digest returns a 64-bit FNV-1a hash of exactly the parts of node
 * that nf_records and nf_eligible read: metadata.name and labels, whether
 * it is Ready, spec.unschedulable and spec.taints, and the annotations
 * agentaflow.gpu/devices (so also whether a device is held) and
 * canhazgpu.dev/cost (JSON dumped with sorted keys, absent told from
 * empty). Equal for nodes that differ elsewhere only (heartbeat times,
 * resourceVersion, other annotations such as canhazgpu.dev/host-holds),
 * the same in every run of the same binary; a different digest may still
 * give the same records. */
uint64_t nf_digest(const json_t *node);

struct js_doc;

/* nf_digest_raw hashes the same parts of a Node scanned by js_scan
 * (jscan.h) but never built, each as its raw text: the same text gives
 * the same hash, so a watch's thread can drop an event that changes none
 * of them before building anything. Not comparable with nf_digest. */
uint64_t nf_digest_raw(const struct js_doc *d);

#endif
