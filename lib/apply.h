/* apply: put Kubernetes objects given as JSON onto the API server.
 *
 * An object is applied with server-side apply (force, one field manager),
 * at the path its apiVersion and kind resolve to by discovery (resolutions
 * are cached). A Node that carries a status also gets that status
 * merge-patched into its status subresource, with every nvidia.com/
 * extended resource it does not name removed, so a re-partitioned GPU
 * leaves nothing stale. Any other object with a status has it applied to
 * its status subresource by server-side apply too; an object that holds
 * only names and a status writes the status alone (op "status").
 * Each call returns a `result` record:
 *   {"kind":"result","op":"apply","ref":"v1/Node/small",
 *    "resourceVersion":"123"} */
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
