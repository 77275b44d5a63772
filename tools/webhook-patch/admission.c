/* admission: AdmissionReview v1 in and out (see admission.h). */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "admission.h"
#include "b64.h"
#include "err.h"
#include "jload.h"

static const char *
str(const json_t *o, const char *key)
{
	return json_string_value(json_object_get(o, key));
}

static int bad(char *err, size_t errlen, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int
bad(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
	err_clean(err);
	return -1;
}

/* check_envelope checks apiVersion and kind. */
static int
check_envelope(const json_t *review, char *err, size_t errlen)
{
	const char *v = str(review, "apiVersion"), *k = str(review, "kind");

	if (!v)
		return bad(err, errlen, "apiVersion is missing");
	if (strcmp(v, ADM_API_VERSION) != 0)
		return bad(err, errlen,
			"unsupported apiVersion \"%.64s\" (want " ADM_API_VERSION
			")",
			v);
	if (!k)
		return bad(err, errlen, "kind is missing");
	if (strcmp(k, "AdmissionReview") != 0)
		return bad(err, errlen, "kind \"%.64s\" is not AdmissionReview",
			k);
	return 0;
}

static int
known_operation(const char *op)
{
	return op &&
		(!strcmp(op, "CREATE") || !strcmp(op, "UPDATE") ||
			!strcmp(op, "DELETE") || !strcmp(op, "CONNECT"));
}

int
adm_parse(const json_t *review, struct adm_request *r, char *err, size_t errlen)
{
	const json_t *req = json_object_get(review, "request"), *kind;
	const char *s;

	memset(r, 0, sizeof *r);
	r->uid = r->operation = r->group = r->kind = "";
	r->namespace = r->name = r->subresource = "";
	if (!json_is_object(review))
		return bad(err, errlen, "not a JSON object");
	if ((s = str(req, "uid")))
		r->uid = s;
	if (check_envelope(review, err, errlen) < 0)
		return -1;
	if (!json_is_object(req))
		return bad(err, errlen, "request is missing");
	if (!*r->uid)
		return bad(err, errlen, "request.uid is missing");
	s = str(req, "operation");
	if (!known_operation(s))
		return bad(err, errlen,
			"request.operation \"%.32s\" is not CREATE, "
			"UPDATE, DELETE or CONNECT",
			s ? s : "");
	r->operation = s;
	kind = json_object_get(req, "kind");
	if (!str(kind, "kind"))
		return bad(err, errlen, "request.kind is missing");
	r->kind = str(kind, "kind");
	r->group = str(kind, "group") ? str(kind, "group") : "";
	r->namespace = str(req, "namespace") ? str(req, "namespace") : "";
	r->name = str(req, "name") ? str(req, "name") : "";
	r->subresource = str(req, "subResource") ? str(req, "subResource") : "";
	r->object = json_object_get(req, "object");
	if (!json_is_object(r->object))
		r->object = NULL;
	r->dry_run = json_is_true(json_object_get(req, "dryRun"));
	if (!r->object && (!strcmp(s, "CREATE") || !strcmp(s, "UPDATE")))
		return bad(err, errlen, "request.object is missing");
	return 0;
}

void
adm_warn(struct adm_verdict *v, const char *fmt, ...)
{
	va_list ap;
	char *s;

	va_start(ap, fmt);
	if (vasprintf(&s, fmt, ap) < 0)
		err_die(HAZ_FAIL, "vasprintf:");
	va_end(ap);
	if (!v->warnings)
		v->warnings = json_array();
	json_array_append_new(v->warnings, json_string(err_clean(s)));
	free(s);
}

void
adm_refuse(struct adm_verdict *v, int code, const char *reason,
	const char *message)
{
	v->allowed = 0;
	v->code = code;
	snprintf(v->reason, sizeof v->reason, "%s", reason);
	err_clean(v->reason);
	free(v->message);
	v->message = err_clean(estrdup(message));
}

void
adm_verdict_free(struct adm_verdict *v)
{
	free(v->message);
	json_decref(v->patch);
	json_decref(v->warnings);
	memset(v, 0, sizeof *v);
}

json_t *
adm_response(const char *uid, const struct adm_verdict *v)
{
	json_t *resp = json_pack("{s:s,s:b}", "uid", uid, "allowed",
		v->allowed);
	char *text, *b64;

	if (v->allowed && json_array_size(v->patch)) {
		text = json_dumps(v->patch, JSON_COMPACT);
		b64 = b64_encode(text, strlen(text));
		json_object_set_new(resp, "patchType",
			json_string("JSONPatch"));
		json_object_set_new(resp, "patch", json_string(b64));
		free(text);
		free(b64);
	}
	if (json_array_size(v->warnings))
		json_object_set(resp, "warnings", v->warnings);
	if (!v->allowed)
		json_object_set_new(resp, "status",
			json_pack("{s:i,s:s,s:s}", "code",
				v->code ? v->code : 403, "reason",
				v->reason[0] ? v->reason : "Forbidden",
				"message",
				v->message ? v->message : "refused"));
	return json_pack("{s:s,s:s,s:o}", "apiVersion", ADM_API_VERSION, "kind",
		"AdmissionReview", "response", resp);
}

json_t *
adm_invalid(const char *uid, const char *why)
{
	struct adm_verdict v = {0};
	char *msg = easprintf("invalid AdmissionReview: %s", why);
	json_t *out;

	adm_refuse(&v, 400, "BadRequest", msg);
	out = adm_response(uid, &v);
	adm_verdict_free(&v);
	free(msg);
	return out;
}

enum adm_outcome
adm_outcome(const struct adm_verdict *v)
{
	if (!v->allowed)
		return ADM_DENIED;
	return json_array_size(v->patch) ? ADM_PATCHED : ADM_ALLOWED;
}

json_t *
adm_answer_json(const json_t *review, adm_decide_fn *decide, void *arg,
	enum adm_outcome *outcome, char *err, size_t errlen)
{
	struct adm_verdict v = {.allowed = 1};
	struct adm_request r;
	json_t *out;

	err[0] = '\0';
	*outcome = ADM_INVALID;
	if (adm_parse(review, &r, err, errlen) < 0)
		return adm_invalid(r.uid, err);
	decide(&r, &v, arg);
	*outcome = adm_outcome(&v);
	out = adm_response(r.uid, &v);
	adm_verdict_free(&v);
	return out;
}

/* What the policy reads of a review, all else being left out as it is
 * read: the envelope; of the request, what adm_parse takes; of the
 * object (and of any template in it), metadata's names, annotations and
 * owners; of any spec, the members that lead to a pod spec or count its
 * replicas, and those the policy reads or edits in a pod spec; of each
 * container, its name, resources and restartPolicy. mutate(3) reads
 * nothing else (the fuzz target checks that every answer is the one the
 * whole review gets). */
static const char *const top_read[] = {"apiVersion", "kind", "request", NULL};
static const char *const request_read[] = {"uid", "kind", "operation",
	"namespace", "name", "subResource", "object", "dryRun", NULL};
static const char *const object_read[] = {"metadata", "spec", NULL};
static const char *const metadata_read[] = {"name", "generateName", "namespace",
	"annotations", "ownerReferences", NULL};
static const char *const spec_read[] = {"containers", "initContainers",
	"runtimeClassName", "schedulerName", "schedulingGates", "template",
	"jobTemplate", "replicas", "parallelism", NULL};
static const char *const container_read[] = {"name", "resources",
	"restartPolicy", NULL};

static const char *const *
unread(const char *const *path, int depth, int *keep, void *arg)
{
	const char *parent = path[depth], *list;

	(void)arg;
	*keep = 1;
	if (depth == 0)
		return top_read;
	if (!path[1] || strcmp(path[1], "request"))
		return NULL;
	if (depth == 1)
		return request_read;
	if (!path[2] || strcmp(path[2], "object"))
		return NULL;
	if (depth == 2 ||
		(parent &&
			(!strcmp(parent, "template") ||
				!strcmp(parent, "jobTemplate"))))
		return object_read;
	if (parent && !strcmp(parent, "metadata"))
		return metadata_read;
	if (parent && !strcmp(parent, "spec"))
		return spec_read;
	list = parent ? NULL : path[depth - 1];
	if (list &&
		(!strcmp(list, "containers") ||
			!strcmp(list, "initContainers")))
		return container_read;
	return NULL;
}

json_t *
adm_answer(const char *buf, size_t len, adm_decide_fn *decide, void *arg,
	enum adm_outcome *outcome, char *err, size_t errlen)
{
	json_error_t jerr;
	json_t *review = jl_loadb_skip(buf, len, JSON_DECODE_ANY, &jerr, unread,
		       NULL),
	       *out;

	if (!review) {
		*outcome = ADM_INVALID;
		adm_json_error(buf, len, err, errlen);
		return adm_invalid("", err);
	}
	out = adm_answer_json(review, decide, arg, outcome, err, errlen);
	json_decref(review);
	return out;
}

void
adm_json_error(const char *buf, size_t len, char *err, size_t errlen)
{
	json_error_t jerr;
	json_t *j;
	size_t i;

	for (i = 0; i < len && strchr(" \t\r\n", buf[i]) && buf[i]; i++)
		;
	if (i == len) {
		snprintf(err, errlen, "empty request");
		return;
	}
	if ((j = json_loadb(buf, len, JSON_DECODE_ANY, &jerr))) {
		json_decref(j);
		snprintf(err, errlen, "no error");
		return;
	}
	snprintf(err, errlen, "invalid JSON at line %d column %d: %s",
		jerr.line, jerr.column, jerr.text);
	err_clean(err);
}
