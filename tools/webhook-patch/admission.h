/* admission (adm_): AdmissionReview (admission.k8s.io/v1) requests read, and
 * responses written.
 *
 * A response always names apiVersion admission.k8s.io/v1 and kind
 * AdmissionReview, and carries response.uid (the request's, or "" when
 * it could not be read) and response.allowed. A patch is a JSON Patch,
 * base64-encoded, with patchType JSONPatch; warnings are strings; a
 * refusal has status {code, reason, message}.
 *
 * A review that cannot be used gets a refusal with code 400 and reason
 * BadRequest, whose message starts "invalid AdmissionReview: " and says
 * what is wrong, checked in this order: not JSON, not a JSON object,
 * apiVersion missing or not admission.k8s.io/v1, kind missing or not
 * AdmissionReview, request missing, request.uid missing or empty,
 * request.operation not CREATE, UPDATE, DELETE or CONNECT, request.kind
 * missing, request.object missing (CREATE and UPDATE). */
#ifndef HAZ_ADMISSION_H
#define HAZ_ADMISSION_H

#include <stddef.h>

#include <jansson.h>

#define ADM_API_VERSION "admission.k8s.io/v1"

/* Borrowed views into the review, valid while it lives. */
struct adm_request {
	const char *uid;         /* "" until known */
	const char *operation;   /* CREATE, UPDATE, DELETE or CONNECT */
	const char *group;       /* request.kind.group: "" core, "apps" */
	const char *kind;        /* request.kind.kind: "Pod" */
	const char *namespace;   /* "" when none */
	const char *name;        /* "" when none (generateName) */
	const char *subresource; /* "" when none */
	json_t *object;          /* request.object, or NULL */
	int dry_run;
};

struct adm_verdict {
	int allowed;
	int code;         /* of a refusal: 403, 400 */
	char reason[32];  /* of a refusal: "Forbidden", "BadRequest" */
	char *message;    /* malloc'd refusal message, or NULL */
	json_t *patch;    /* array of operations, or NULL */
	json_t *warnings; /* array of strings, or NULL */
};

enum adm_outcome {
	ADM_ALLOWED, /* allowed as it came */
	ADM_PATCHED, /* allowed with a patch */
	ADM_DENIED,  /* refused by policy */
	ADM_INVALID, /* the review itself was unusable */
};

/* adm_parse reads review into r. Returns 0, or -1 with the reason in err
 * (without the "invalid AdmissionReview: " prefix); r->uid is set as
 * soon as it could be read. */
int adm_parse(const json_t *review, struct adm_request *r, char *err,
	size_t errlen);

/* adm_warn appends a printf-formatted warning to v->warnings. */
void adm_warn(struct adm_verdict *v, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* adm_refuse makes v a refusal with code, reason and message. */
void adm_refuse(struct adm_verdict *v, int code, const char *reason,
	const char *message);

void adm_verdict_free(struct adm_verdict *v);

/* adm_response returns a new AdmissionReview answering uid with v. An
 * empty patch is left out. */
json_t *adm_response(const char *uid, const struct adm_verdict *v);

/* adm_invalid returns the response for an unusable review. */
json_t *adm_invalid(const char *uid, const char *why);

/* adm_outcome classifies v. */
enum adm_outcome adm_outcome(const struct adm_verdict *v);

typedef void adm_decide_fn(const struct adm_request *r, struct adm_verdict *v,
	void *arg);

/* adm_answer reads the review of len bytes at buf, lets decide fill in a
 * verdict for a usable one (it starts allowed), and returns the response.
 * *outcome says what became of it; for ADM_INVALID, err holds the
 * reason (else ""). Never fails. */
json_t *adm_answer(const char *buf, size_t len, adm_decide_fn *decide,
	void *arg, enum adm_outcome *outcome, char *err, size_t errlen);

/* adm_answer_json is adm_answer for a review already read (borrowed). */
json_t *adm_answer_json(const json_t *review, adm_decide_fn *decide, void *arg,
	enum adm_outcome *outcome, char *err, size_t errlen);

/* adm_json_error puts in err why the len bytes at buf are no JSON:
 * "empty request", or "invalid JSON at line L column C: why". */
void adm_json_error(const char *buf, size_t len, char *err, size_t errlen);

#endif
