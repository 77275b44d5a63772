/* mutate_int: what the parts of mutate(3) share; not for tools. */
#ifndef HAZ_MUTATE_INT_H
#define HAZ_MUTATE_INT_H

#include <jansson.h>

#include "mutate.h"

/* The pod (or pod template) a review is about, inside the working copy
 * of its object. */
struct target {
	json_t *pod;   /* holds metadata and spec */
	json_t *spec;  /* pod spec */
	long replicas; /* pods the object makes at once; 1 for a Pod */
	int is_pod;
	const struct adm_request *r;
};

/* mut_child returns o[key], first making it an empty object unless it is
 * one. */
json_t *mut_child(json_t *o, const char *key);

/* mut_annotation returns the pod's annotation key, or NULL. */
const char *mut_annotation(const json_t *pod, const char *key);

void mut_set_annotation(json_t *pod, const char *key, const char *value);

/* mut_set_resource sets resources.<which>[res] = value in container c. */
void mut_set_resource(json_t *c, const char *which, const char *res,
	const char *value);

/* mutate_rc applies the RuntimeClass steps (1 and 2). Returns 1 when the
 * pod is refused or held by the gate (nothing more to do), else 0. */
int mutate_rc(const struct mutate_opts *o, struct avail *a, struct target *t,
	struct adm_verdict *v, struct mutate_note *note);

/* mutate_mig applies MIG fallback and admission (steps 3 and 4). */
void mutate_mig(const struct mutate_opts *o, struct avail *a, struct target *t,
	struct adm_verdict *v, struct mutate_note *note);

/* mutate_sched hands an annotated pod to our scheduler (step 5). */
void mutate_sched(const struct mutate_opts *o, struct target *t,
	struct adm_verdict *v, struct mutate_note *note);

#endif
