/* apply (ap_): put Kubernetes objects given as JSON onto the API server.
 *
 * An object is applied with server-side apply (force, one field manager),
 * at the path its apiVersion and kind resolve to by discovery (resolutions
 * are cached). An object with a status has it applied to its status
 * subresource by server-side apply too; an object that holds only names
 * and a status writes the status alone (op "status").
 *
 * What the field manager owns is what the server's managedFields say it
 * applied, never a prefix: ap_release removes the labels, annotations
 * and Node resources it applied before and applies no longer, whoever
 * else also set them, and leaves every key only others set alone.
 * Each call returns a `result` record:
 *   {"kind":"result","op":"apply","ref":"v1/Node/small",
 *    "resourceVersion":"123"}
 *
 * Threads: an applier is used by one thread at a time, as the kube client
 * it was made with is (kube.h). */
#ifndef HAZ_APPLY_H
#define HAZ_APPLY_H

#include <jansson.h>

#include "kube.h"

struct applier;

/* ap_new borrows k; manager names the field manager; ns is the namespace
 * given to namespaced objects that name none. */
struct applier *ap_new(struct kube *k, const char *manager, const char *ns);
void ap_free(struct applier *a);

/* ap_apply applies obj. Returns the result record (caller owns), or NULL
 * with e filled. */
json_t *ap_apply(struct applier *a, const json_t *obj, struct kube_error *e);

/* ap_release makes current (the object as the server last answered,
 * managedFields included) lose every key of metadata.labels and
 * metadata.annotations, and for a Node of status.capacity and
 * status.allocatable, that this field manager applied (operation Apply)
 * and obj, about to be applied, no longer has: by merge patch, so a key
 * another manager shares goes too (server-side apply would keep it).
 * Call it before ap_apply, which makes the server forget what was ours.
 * Returns an array of result records (op "unlabel" for metadata,
 * "unresource" for status; empty when nothing was stale; caller owns),
 * or NULL with e filled. */
json_t *ap_release(struct applier *a, const json_t *current, const json_t *obj,
	struct kube_error *e);

/* ap_owns says whether this field manager, by what it applied to current
 * (managedFields), already owns every label and annotation of obj and
 * every capacity and allocatable entry of its status: when not, obj must
 * be applied even if current carries all of it, so that it becomes ours. */
int ap_owns(const struct applier *a, const json_t *current, const json_t *obj);

/* ap_delete deletes the object obj names (apiVersion, kind, metadata).
 * A missing object counts as deleted. */
json_t *ap_delete(struct applier *a, const json_t *obj, struct kube_error *e);

/* ap_path returns the malloc'd object path of obj ("/api/v1/nodes/x"), or
 * with name NULL its collection path; NULL with e filled. */
char *ap_path(struct applier *a, const json_t *obj, int with_name,
	struct kube_error *e);

/* ap_ref returns "apiVersion/Kind/[namespace/]name" of obj, malloc'd. */
char *ap_ref(const json_t *obj);

#endif
