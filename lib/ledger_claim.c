/* ledger_claim: a Kubernetes claim's holds, taken and released whole, for
 * the kubelet plugin and gpu-reserve prepare (lib/ledger.h has the MIG
 * model). Nothing here ends the tool on a soft connection. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "err.h"
#include "ledger.h"

static const char *
str_member(const json_t *o, const char *k)
{
	return json_string_value(json_object_get(o, k));
}

/* nonempty says whether member k of o is a string that is not empty. */
static int
nonempty(const json_t *o, const char *k)
{
	const char *s = str_member(o, k);

	return s && *s;
}

/* check_gpus checks claim's gpus (absent: none): GPU ids, each once.
 * Returns NULL or what is wrong (static). */
static const char *
check_gpus(const json_t *gpus)
{
	const json_t *v, *w;
	size_t i, j;

	if (!gpus)
		return NULL;
	if (!json_is_array(gpus))
		return "gpus: not an array of GPU ids";
	json_array_foreach(gpus, i, v) {
		if (!json_is_integer(v) || json_integer_value(v) < 0 ||
			json_integer_value(v) > LG_MAX_GPU_ID)
			return "gpus: not an array of GPU ids";
		for (j = 0; j < i; j++) {
			w = json_array_get(gpus, j);
			if (json_integer_value(w) == json_integer_value(v))
				return "gpus: a GPU id given twice";
		}
	}
	return NULL;
}

/* check_mig checks claim's mig (absent: none): {gpu, uuid} objects, each
 * uuid once. Returns NULL or what is wrong (static). */
static const char *
check_mig(const json_t *mig)
{
	const json_t *v, *g;
	size_t i, j;

	if (!mig)
		return NULL;
	if (!json_is_array(mig))
		return "mig: not an array of {gpu, uuid}";
	json_array_foreach(mig, i, v) {
		g = json_object_get(v, "gpu");
		if (!json_is_integer(g) || json_integer_value(g) < 0 ||
			json_integer_value(g) > LG_MAX_GPU_ID ||
			!nonempty(v, "uuid"))
			return "mig: not an array of {gpu, uuid}";
		for (j = 0; j < i; j++)
			if (strcmp(str_member(json_array_get(mig, j), "uuid"),
				    str_member(v, "uuid")) == 0)
				return "mig: a MIG device given twice";
	}
	return NULL;
}

/* check_texts checks claim's texts by the ledger's bounds. Returns NULL
 * or what is wrong (in why, n bytes). */
static const char *
check_texts(const json_t *claim, char *why, size_t n)
{
	static const struct {
		const char *k;
		size_t max;
	} texts[] = {{"claim_uid", LG_MAX_ID}, {"namespace", LG_MAX_NAME},
		{"name", LG_MAX_NAME}, {"user", LG_MAX_NAME},
		{"pod", LG_MAX_NAME}};
	const json_t *v;
	char e[96];
	size_t i;

	for (i = 0; i < sizeof texts / sizeof texts[0]; i++) {
		v = json_object_get(claim, texts[i].k);
		if (json_is_string(v) &&
			lg_text_check(json_string_value(v), texts[i].max, e,
				sizeof e)) {
			snprintf(why, n, "%s: %s", texts[i].k, e);
			return why;
		}
	}
	json_array_foreach(json_object_get(claim, "mig"), i, v) {
		if (lg_text_check(str_member(v, "uuid"), LG_MAX_ID, e,
			    sizeof e)) {
			snprintf(why, n, "mig: uuid: %s", e);
			return why;
		}
	}
	return NULL;
}

/* check_claim returns what is wrong with claim (static), or NULL. */
static const char *
check_claim(const json_t *claim)
{
	static __thread char why[160];
	const json_t *v;
	const char *e;

	if (!json_is_object(claim))
		return "not a JSON object";
	if (!nonempty(claim, "claim_uid"))
		return "claim_uid: not a string";
	if (!nonempty(claim, "namespace"))
		return "namespace: not a string";
	if (!nonempty(claim, "name"))
		return "name: not a string";
	v = json_object_get(claim, "user");
	if (v && !json_is_null(v) && !nonempty(claim, "user"))
		return "user: not a string";
	v = json_object_get(claim, "pod");
	if (v && !json_is_null(v) && !json_is_string(v))
		return "pod: not a string";
	if ((e = check_gpus(json_object_get(claim, "gpus"))))
		return e;
	if ((e = check_mig(json_object_get(claim, "mig"))))
		return e;
	return check_texts(claim, why, sizeof why);
}

/* prepare_params is the k8s-prepare script's parameters for claim. */
static json_t *
prepare_params(const json_t *claim)
{
	const json_t *gpus = json_object_get(claim, "gpus");
	const json_t *mig = json_object_get(claim, "mig");
	const char *user = str_member(claim, "user");
	json_t *p = json_object();

	json_object_set_new(p, "claim_uid",
		json_string(str_member(claim, "claim_uid")));
	json_object_set_new(p, "namespace",
		json_string(str_member(claim, "namespace")));
	json_object_set_new(p, "user",
		user ? json_string(user)
		     : json_sprintf("k8s:%s/%s", str_member(claim, "namespace"),
			       str_member(claim, "name")));
	json_object_set_new(p, "pod", lg_str_or_null(str_member(claim, "pod")));
	json_object_set_new(p, "gpus",
		gpus ? json_deep_copy(gpus) : json_array());
	json_object_set_new(p, "mig", mig ? json_deep_copy(mig) : json_array());
	return p;
}

/* run_twice runs script s with the parameters make(arg) gives, and once
 * more, with new ones, when a connection that was there failed: the
 * server may have restarted since it was made. Only for scripts that
 * may run twice (idempotent). */
static json_t *
run_twice(struct lg *l, enum lg_script s, json_t *(*make)(const void *),
	const void *arg, int *status, char **why)
{
	int had = l->rd->c != NULL;
	json_t *res = lg_try_run(l, s, make(arg), status, why);

	if (res || *status != HAZ_TEMP || !had || l->rd->c || !l->rd->soft)
		return res;
	free(*why);
	return lg_try_run(l, s, make(arg), status, why);
}

static json_t *
make_prepare(const void *claim)
{
	return prepare_params(claim);
}

json_t *
lg_claim_prepare(struct lg *l, const json_t *claim, int *status, char **why)
{
	const char *e = check_claim(claim);
	json_t *res;

	*why = NULL;
	if (e) {
		*status = HAZ_FAIL;
		*why = easprintf("claim: %s", e);
		return NULL;
	}
	res = run_twice(l, LG_K8S_PREPARE, make_prepare, claim, status, why);
	if (!res)
		return NULL;
	e = str_member(res, "error");
	if (!e)
		return res;
	*status = HAZ_FAIL;
	if (strcmp(e, "range") == 0)
		*why = easprintf("GPU %lld is out of range (0-%lld)",
			lg_jint(res, "gpu"), lg_jint(res, "count") - 1);
	else if (strcmp(e, "mixed") == 0)
		*why = easprintf("GPU %lld is asked for whole and for its MIG "
				 "devices at once",
			lg_jint(res, "gpu"));
	else
		*why = easprintf("k8s-prepare: unknown answer %s", e);
	err_clean(*why);
	json_decref(res);
	return NULL;
}

static json_t *
make_release(const void *uid)
{
	return json_pack("{s:s}", "claim_uid", (const char *)uid);
}

json_t *
lg_claim_release(struct lg *l, const char *uid, int *status, char **why)
{
	json_t *res;

	*why = NULL;
	if (!uid || !*uid) {
		*status = HAZ_FAIL;
		*why = estrdup("claim: claim_uid: not a string");
		return NULL;
	}
	res = run_twice(l, LG_RELEASE, make_release, uid, status, why);
	if (res)
		json_object_del(res, "notheld");
	return res;
}

char *
lg_conflict_text(const json_t *c)
{
	const char *mig = str_member(c, "mig"),
		   *holder = str_member(c, "holder");
	const char *type = str_member(c, "holder_type");
	const char *uid = str_member(c, "claim_uid"),
		   *bad = str_member(c, "bad");
	const json_t *since = json_object_get(c, "since");
	long long g = lg_jint(c, "gpu");
	char when[48] = "", t[32], *subject, *s;

	if (json_is_number(since))
		snprintf(when, sizeof when, " since %s",
			lg_rfc3339((long long)json_number_value(since), t));
	subject = mig ? easprintf("MIG device %s on GPU %lld", mig, g)
		      : easprintf("GPU %lld", g);
	if (!type)
		type = "unknown";
	if (bad)
		s = easprintf("%s is held: " LG_PREFIX
			      "gpu:%lld cannot be read (%s; left as it is)",
			subject, g, bad);
	else if (strcmp(type, "k8s") == 0 && uid && holder &&
		strncmp(holder, "k8s:", 4) == 0)
		s = easprintf("%s is held by claim %s (uid %s%s%s)", subject,
			holder + 4, uid, *when ? "," : "", when);
	else if (strcmp(type, "k8s") == 0 && uid)
		s = easprintf("%s is held by claim %s%s", subject, uid, when);
	else if (strcmp(type, "k8s") == 0 && holder &&
		strcmp(holder, "k8s:mig") == 0)
		s = easprintf("%s is held for the MIG devices of other claims "
			      "(k8s:mig%s)",
			subject, when);
	else if (strcmp(type, "run") == 0 || strcmp(type, "manual") == 0)
		s = easprintf("%s is held by %s (%s reservation%s)", subject,
			holder ? holder : "unknown", type, when);
	else
		s = easprintf("%s is held by %s (%s hold%s)", subject,
			holder ? holder : "unknown", type, when);
	free(subject);
	return err_clean(s);
}
