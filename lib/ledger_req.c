/* ledger_req: reserve, release and heartbeat requests: checked, turned
 * into the scripts' parameters, their answers into records and
 * messages. */
#include <ctype.h>
#include <errno.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "err.h"
#include "ledger.h"
#include "nd.h"

const char *
lg_default_user(void)
{
	const char *u = getenv("USER");

	if (!u || !*u)
		u = getenv("USERNAME");
	return u && *u ? u : "unknown";
}

const char *
lg_login_name(void)
{
	const char *u = getenv("USER");
	struct passwd *pw;

	if (u && *u)
		return u;
	pw = getpwuid(getuid());
	return pw ? pw->pw_name : "unknown";
}

/* lg_parse_ids reads "0,2,5" into *ids (malloc'd) and *n. Returns NULL, or
 * what is wrong. */
const char *
lg_parse_ids(const char *s, int **ids, int *n)
{
	const char *p = s;
	char *end;
	long v;
	int i;

	*ids = NULL;
	*n = 0;
	for (;;) {
		if (!isdigit((unsigned char)*p))
			return "not a list of GPU ids";
		errno = 0;
		v = strtol(p, &end, 10);
		if (errno || v > LG_MAX_GPU_ID)
			return "not a list of GPU ids";
		for (i = 0; i < *n; i++)
			if ((*ids)[i] == v)
				return "a GPU id given twice";
		*ids = erealloc(*ids, (size_t)(*n + 1) * sizeof **ids);
		(*ids)[(*n)++] = (int)v;
		if (!*end)
			return NULL;
		if (*end != ',')
			return "not a list of GPU ids";
		p = end + 1;
	}
}

json_t *
lg_ids_json(const int *ids, int n)
{
	json_t *a = json_array();
	int i;

	for (i = 0; i < n; i++)
		json_array_append_new(a, json_integer(ids[i]));
	return a;
}

/* lg_req_check fills in q's defaults and checks it whole; cli says whether
 * it came from options (messages name them) or a record (its fields).
 * Returns NULL, or what is wrong (static or in why). */
const char *
lg_req_check(struct lg_req *q, int cli, char *why, size_t n)
{
	const char *u, *e;
	char t[96];

	if (!q->type)
		q->type = "manual";
	if (strcmp(q->type, "run") && strcmp(q->type, "manual") &&
		strcmp(q->type, "k8s")) {
		snprintf(why, n, "%s: not run, manual or k8s: %s",
			cli ? "-t" : "type", q->type);
		return why;
	}
	if (!q->user)
		q->user = lg_default_user();
	if (!q->actual_user)
		q->actual_user = lg_login_name();
	if (!*q->user)
		return cli ? "-u: empty user" : "user: empty";
	if ((e = lg_text_check(q->user, LG_MAX_NAME, t, sizeof t))) {
		snprintf(why, n, "%s: %s", cli ? "-u" : "user", e);
		return why;
	}
	if ((e = lg_text_check(q->actual_user, LG_MAX_NAME, t, sizeof t))) {
		snprintf(why, n, "%s: %s", cli ? "-U" : "actual_user", e);
		return why;
	}
	if (q->note && (e = lg_text_check(q->note, LG_MAX_NOTE, t, sizeof t))) {
		snprintf(why, n, "%s: %s", cli ? "-n" : "note", t);
		return why;
	}
	if (q->claim_uid &&
		(e = lg_text_check(q->claim_uid, LG_MAX_ID, t, sizeof t))) {
		snprintf(why, n, "%s: %s", cli ? "-c" : "claim_uid", t);
		return why;
	}
	if (q->nids && q->count && q->count != q->nids && q->count != 1) {
		snprintf(why, n,
			"%s %d and %d ids: the count must be 1 or the number "
			"of ids",
			cli ? "-g" : "gpus", q->count, q->nids);
		return why;
	}
	if (q->nids)
		q->count = q->nids;
	if (!q->count)
		q->count = 1;
	if (q->duration && strcmp(q->type, "manual"))
		return cli ? "-d: only manual reservations expire"
			   : "duration: only manual reservations expire";
	if (!q->duration && strcmp(q->type, "manual") == 0)
		q->duration = 1800;
	if (strcmp(q->type, "k8s") == 0) {
		if (!q->claim_uid || !*q->claim_uid)
			return cli ? "k8s reservations need -c claim_uid"
				   : "claim_uid: needed for type k8s";
		u = q->user;
		if (strncmp(u, "k8s:", 4) || !strchr(u + 4, '/') ||
			u[4] == '/' || strchr(u + 4, '/')[1] == '\0')
			return cli ? "k8s reservations need -u "
				     "k8s:<namespace>/<name>"
				   : "user: k8s:<namespace>/<name> needed for "
				     "type k8s";
	} else if (q->claim_uid) {
		return cli ? "-c is for k8s reservations"
			   : "claim_uid: only for type k8s";
	}
	return NULL;
}

/* lg_reserve_params is the reserve script's parameters for q. */
json_t *
lg_reserve_params(const struct lg_req *q, json_t *unreserved)
{
	json_t *p = json_object();
	const char *u = q->user;

	if (q->nids)
		json_object_set_new(p, "ids", lg_ids_json(q->ids, q->nids));
	json_object_set_new(p, "count", json_integer(q->count));
	json_object_set_new(p, "user", json_string(q->user));
	json_object_set_new(p, "actual_user", json_string(q->actual_user));
	json_object_set_new(p, "type", json_string(q->type));
	if (q->duration)
		json_object_set_new(p, "duration", json_real(q->duration));
	json_object_set_new(p, "note", lg_str_or_null(q->note));
	if (q->claim_uid) {
		json_object_set_new(p, "claim_uid", json_string(q->claim_uid));
		json_object_set_new(p, "namespace",
			json_stringn(u + 4,
				(size_t)(strchr(u + 4, '/') - u - 4)));
	}
	json_object_set_new(p, "unreserved", unreserved);
	return p;
}

long long
lg_jint(const json_t *o, const char *k)
{
	return (long long)json_number_value(json_object_get(o, k));
}

/* lg_reserve_refusal says why the reserve script refused (res), in *msg
 * (malloc'd). Returns 1 when waiting in the queue may help. */
int
lg_reserve_refusal(const json_t *res, const struct lg_req *q, char **msg)
{
	const char *e = json_string_value(json_object_get(res, "error"));
	long long un = lg_jint(res, "unreserved");

	if (strcmp(e, "range") == 0) {
		*msg = easprintf("GPU %lld is out of range (0-%lld)",
			lg_jint(res, "gpu"), lg_jint(res, "count") - 1);
		return 0;
	}
	if (strcmp(e, "bad") == 0) {
		*msg = easprintf(
			"GPU %lld: " LG_PREFIX
			"gpu:%lld: %s (treated as held; left as it is)",
			lg_jint(res, "gpu"), lg_jint(res, "gpu"),
			json_string_value(json_object_get(res, "why")));
		return 0;
	}
	if (strcmp(e, "taken") == 0)
		*msg = easprintf("GPU %lld is already reserved by user '%s'",
			lg_jint(res, "gpu"),
			json_string_value(json_object_get(res, "user")));
	else if (strcmp(e, "unreserved") == 0)
		*msg = easprintf("GPU %lld is in use without reservation",
			lg_jint(res, "gpu"));
	else if (un > 0)
		*msg = easprintf("not enough GPUs available: requested %d, "
				 "available %lld (%lld in use without "
				 "reservation)",
			q->count, lg_jint(res, "available"), un);
	else
		*msg = easprintf("not enough GPUs available: requested %d, "
				 "available %lld",
			q->count, lg_jint(res, "available"));
	return 1;
}

void
lg_write_reservations(const char *op, const json_t *infos)
{
	const json_t *v;
	size_t i;
	json_t *r;

	json_array_foreach(infos, i, v) {
		r = lg_reservation(op, v);
		nd_write(r);
		json_decref(r);
	}
}

/* since_json is a JSON array of the n times of since. */
static json_t *
since_json(const long long *since, int n)
{
	json_t *a = json_array();
	int i;

	for (i = 0; i < n; i++)
		json_array_append_new(a, json_integer(since[i]));
	return a;
}

/* lg_release_params is the release script's parameters. */
json_t *
lg_release_params(const int *ids, int nids, const char *user, const char *claim,
	const char *type, const long long *since)
{
	json_t *p = json_object(), *types = json_array();

	if (claim)
		json_object_set_new(p, "claim_uid", json_string(claim));
	if (nids)
		json_object_set_new(p, "ids", lg_ids_json(ids, nids));
	if (nids && since)
		json_object_set_new(p, "since", since_json(since, nids));
	json_object_set_new(p, "user", json_string(user));
	if (type) {
		json_array_append_new(types, json_string(type));
	} else {
		json_array_append_new(types, json_string("manual"));
		if (nids)
			json_array_append_new(types, json_string("run"));
	}
	json_object_set_new(p, "types", types);
	return p;
}

/* lg_release_report writes the records of a release answer and says what
 * was not released. Returns HAZ_OK or HAZ_FAIL. */
int
lg_release_report(const json_t *res, const char *op, const char *user,
	const char *claim, const char *type, int nids)
{
	const json_t *rel = json_object_get(res, "released"), *v;
	const json_t *notheld = json_object_get(res, "notheld");
	const char *e = json_string_value(json_object_get(res, "error"));
	const char *holder, *bad;
	size_t i;
	int status = HAZ_OK;

	if (e && strcmp(e, "range") == 0) {
		err_warn("GPU %lld is out of range (0-%lld)",
			lg_jint(res, "gpu"), lg_jint(res, "count") - 1);
		return HAZ_FAIL;
	}
	json_array_foreach(notheld, i, v) {
		holder = json_string_value(json_object_get(v, "holder"));
		bad = json_string_value(json_object_get(v, "bad"));
		if (bad)
			err_warn("GPU %lld is not reserved by %s (" LG_PREFIX
				 "gpu:%lld: %s; left as it is)",
				lg_jint(v, "gpu"), user, lg_jint(v, "gpu"),
				bad);
		else if (holder && strcmp(holder, user) == 0)
			err_warn("GPU %lld is reserved by %s as %s, not %s",
				lg_jint(v, "gpu"), user,
				json_string_value(json_object_get(v, "type")),
				type ? type : "manual or run");
		else if (holder)
			err_warn("GPU %lld is not reserved by %s (held by %s)",
				lg_jint(v, "gpu"), user, holder);
		else
			err_warn("GPU %lld is not reserved by %s (it is free)",
				lg_jint(v, "gpu"), user);
		if (bad)
			status = HAZ_FAIL;
	}
	lg_write_reservations(op, rel);
	if (json_array_size(rel))
		return status;
	if (nids) {
		err_warn("nothing released");
		return status;
	}
	if (claim)
		err_warn("no GPUs held for claim %s", claim);
	else if (!type || strcmp(type, "manual") == 0)
		err_warn("no manually reserved GPUs found for %s", user);
	else
		err_warn("no %s reservations found for %s", type, user);
	return status;
}

/* lg_heartbeat_report writes a heartbeat answer's records and says which
 * reservations are lost. */
int
lg_heartbeat_report(const json_t *res)
{
	const json_t *v;
	const char *holder, *bad;
	int status = HAZ_OK;
	size_t i;

	if (json_object_get(res, "error")) {
		err_warn("GPU %lld is out of range (0-%lld)",
			lg_jint(res, "gpu"), lg_jint(res, "count") - 1);
		return HAZ_FAIL;
	}
	lg_write_reservations("heartbeat", json_object_get(res, "ok"));
	json_array_foreach(json_object_get(res, "lost"), i, v) {
		holder = json_string_value(json_object_get(v, "holder"));
		bad = json_string_value(json_object_get(v, "bad"));
		if (bad)
			err_warn("GPU %lld reservation lost (" LG_PREFIX
				 "gpu:%lld: %s)",
				lg_jint(v, "gpu"), lg_jint(v, "gpu"), bad);
		else if (holder)
			err_warn("GPU %lld reservation lost (now held by %s)",
				lg_jint(v, "gpu"), holder);
		else
			err_warn("GPU %lld reservation lost (now free)",
				lg_jint(v, "gpu"));
		status = HAZ_FAIL;
	}
	return status;
}

json_t *
lg_heartbeat_params(const int *ids, int nids, const char *user,
	const long long *since)
{
	json_t *p = json_object();

	json_object_set_new(p, "ids", lg_ids_json(ids, nids));
	if (since)
		json_object_set_new(p, "since", since_json(since, nids));
	json_object_set_new(p, "user", json_string(user));
	return p;
}

json_t *
lg_queue_entry(const struct lg_req *q)
{
	json_t *entry = json_object();

	json_object_set_new(entry, "user", json_string(q->user));
	json_object_set_new(entry, "actual_user", json_string(q->actual_user));
	json_object_set_new(entry, "requested_count", json_integer(q->count));
	if (q->nids)
		json_object_set_new(entry, "requested_ids",
			lg_ids_json(q->ids, q->nids));
	json_object_set_new(entry, "reservation_type", json_string(q->type));
	if (q->duration)
		json_object_set_new(entry, "expiry_duration",
			json_integer((json_int_t)(q->duration * 1e9)));
	if (q->note && *q->note)
		json_object_set_new(entry, "note", json_string(q->note));
	/* canhazgpu's wait_timeout is a time (the queue script writes it
	 * from the clock it runs on), not a duration */
	if (q->wait >= 0)
		json_object_set_new(entry, "wait_s", json_real(q->wait));
	return entry;
}

/* field_ids reads member k of rec, an array of GPU ids, into *ids.
 * Returns NULL or what is wrong. */
const char *
lg_field_ids(const json_t *rec, const char *k, int **ids, int *n)
{
	const json_t *a = json_object_get(rec, k), *v;
	size_t i;
	int j;

	*ids = NULL;
	*n = 0;
	if (!a || json_is_null(a))
		return NULL;
	if (!json_is_array(a))
		return "not an array of GPU ids";
	*ids = emalloc((json_array_size(a) + 1) * sizeof **ids);
	if (!json_array_size(a))
		return "an empty list (leave it out, or null, for none)";
	if (json_array_size(a) > LG_MAX_GPUS)
		return "more GPU ids than a pool has";
	json_array_foreach(a, i, v) {
		if (!json_is_integer(v) || json_integer_value(v) < 0 ||
			json_integer_value(v) > LG_MAX_GPU_ID)
			return "not an array of GPU ids";
		for (j = 0; j < *n; j++)
			if ((*ids)[j] == json_integer_value(v))
				return "a GPU id given twice";
		(*ids)[(*n)++] = (int)json_integer_value(v);
	}
	return NULL;
}

/* field_str reads member k of rec, a string or null, into *s. Returns
 * 0, or -1 when it is something else. */
int
lg_field_str(const json_t *rec, const char *k, const char **s)
{
	const json_t *v = json_object_get(rec, k);

	*s = NULL;
	if (!v || json_is_null(v))
		return 0;
	if (!json_is_string(v))
		return -1;
	*s = json_string_value(v);
	return 0;
}
