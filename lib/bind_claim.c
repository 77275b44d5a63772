/* bind_claim: what sched-bind reads of a ResourceClaim (its requests, as
 * demands) and writes to it (allocation, reservedFor); see bind.h for
 * the requests it supports. */
#include <stdlib.h>
#include <string.h>

#include "bind.h"
#include "bind_int.h"
#include "err.h"

/* ---- demands ---- */

void
bind_demands_free(struct demand *d, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		for (size_t j = 0; j < d[i].nalts; j++) {
			free(d[i].alts[j].req);
			free(d[i].alts[j].prof);
		}
		free(d[i].alts);
	}
	free(d);
}

struct demand *
bind_demand_add(struct demand **v, size_t *n, const json_t *claim)
{
	*v = erealloc(*v, (*n + 1) * sizeof **v);
	memset(&(*v)[*n], 0, sizeof **v);
	(*v)[*n].claim = claim;
	return &(*v)[(*n)++];
}

void
bind_alt_add(struct demand *d, const char *req, const char *prof, int k)
{
	d->alts = erealloc(d->alts, (d->nalts + 1) * sizeof *d->alts);
	d->alts[d->nalts].req = estrdup(req);
	d->alts[d->nalts].prof = estrdup(prof);
	d->alts[d->nalts++].k = k;
}

/* cel_profile returns the profile P of the one selector this tool reads,
 * device.attributes["gpu.canhazgpu.dev"].profile == "P" (malloc'd), or
 * NULL for any other expression. */
static char *
cel_profile(const char *e)
{
	static const char
		lhs[] = "device.attributes[\"gpu.canhazgpu.dev\"].profile";
	const char *p, *q;

	while (*e == ' ')
		e++;
	if (strncmp(e, lhs, sizeof lhs - 1))
		return NULL;
	e += sizeof lhs - 1;
	while (*e == ' ')
		e++;
	if (strncmp(e, "==", 2))
		return NULL;
	for (e += 2; *e == ' '; e++)
		;
	if (*e != '"')
		return NULL;
	p = ++e;
	q = strchr(p, '"');
	if (!q || q == p || memchr(p, '\\', (size_t)(q - p)))
		return NULL;
	for (e = q + 1; *e == ' ' || *e == '\n'; e++)
		;
	if (*e)
		return NULL;
	return easprintf("%.*s", (int)(q - p), p);
}

/* exact reads one ExactCount request (exactly, or a subrequest) into an
 * alternative of d named req. Returns NULL, or why it is unsupported
 * (malloc'd). */
static char *
exact(struct demand *d, const char *req, const json_t *r)
{
	const char *cls = str(r, "deviceClassName", NULL) ?: "";
	const char *mode = str(r, "allocationMode", NULL);
	const json_t *sel = json_object_get(r, "selectors"), *cnt;
	char *prof = NULL;
	long long k = 1;

	if (mode && strcmp(mode, "ExactCount"))
		return easprintf("allocationMode %s is not supported", mode);
	if ((cnt = json_object_get(r, "count")) && !json_is_null(cnt))
		k = json_is_integer(cnt) ? json_integer_value(cnt) : 0;
	if (k < 1 || k > SP_MAX_GPUS)
		return easprintf("count must be from 1 to %d", SP_MAX_GPUS);
	if (json_is_true(json_object_get(r, "adminAccess")))
		return estrdup("adminAccess is not supported");
	if (!strcmp(cls, BIND_CLASS_GPU)) {
		if (json_array_size(sel))
			return easprintf("selectors are not supported for "
					 "device class %s",
				cls);
		bind_alt_add(d, req, "", (int)k);
		return NULL;
	}
	if (!strcmp(cls, BIND_CLASS_MIG)) {
		if (json_array_size(sel) == 1)
			prof = cel_profile(
				json_string_value(at(json_array_get(sel, 0),
					"cel", "expression"))
					?: "");
		if (!prof)
			return easprintf(
				"device class %s needs the one selector "
				"device.attributes[\"gpu.canhazgpu.dev\"]."
				"profile == \"PROFILE\"",
				cls);
		bind_alt_add(d, req, prof, (int)k);
		free(prof);
		return NULL;
	}
	return easprintf("device class \"%s\" is not supported (only %s and "
			 "%s)",
		cls, BIND_CLASS_GPU, BIND_CLASS_MIG);
}

/* claim_demands adds the demands of claim c's requests. Returns NULL, or
 * why c cannot be allocated here (malloc'd, naming c and the request). */
char *
bind_claim_demands(struct demand **v, size_t *n, const json_t *c,
	const char *ck)
{
	const json_t *r, *s;
	const char *rn, *sn;
	struct demand *d;
	char *why = NULL, *sub;
	size_t i, j;

	if (json_array_size(at(c, "spec", "devices")
			    ? json_object_get(at(c, "spec", "devices"),
				      "constraints")
			    : NULL))
		return easprintf("ResourceClaim %s: constraints are not "
				 "supported",
			ck);
	json_array_foreach(at(at(c, "spec", "devices"), "requests", NULL), i,
		r) {
		rn = str(r, "name", NULL) ?: "";
		d = bind_demand_add(v, n, c);
		if (json_object_get(r, "exactly")) {
			why = exact(d, rn, json_object_get(r, "exactly"));
		} else if (json_array_size(
				   json_object_get(r, "firstAvailable"))) {
			json_array_foreach(json_object_get(r, "firstAvailable"),
				j, s) {
				sn = str(s, "name", NULL) ?: "";
				sub = easprintf("%s/%s", rn, sn);
				why = exact(d, sub, s);
				free(sub);
				if (why)
					break;
			}
		} else {
			why = estrdup("neither exactly nor firstAvailable");
		}
		if (why) {
			char *m = easprintf(
				"ResourceClaim %s: request \"%s\": %s", ck, rn,
				why);

			free(why);
			return m;
		}
	}
	return NULL;
}

int
bind_reserved_for(const json_t *c, const char *uid)
{
	const json_t *r;
	size_t i;

	json_array_foreach(at(c, "status", "reservedFor"), i, r)
		if (!strcmp(str(r, "uid", NULL) ?: "", uid))
			return 1;
	return 0;
}

/* claim_write returns claim c with pod reserved and, when it is not
 * allocated yet, allocated on node the devices of its demands. */
json_t *
bind_claim_write(const json_t *c, const json_t *pod, const char *node,
	const struct demand *d, size_t nd)
{
	json_t *w = json_deep_copy(c), *st, *res, *rf, *al;
	size_t i;
	int j;

	json_object_del(w, "apiVersion");
	json_object_del(w, "kind");
	json_object_set_new(w, "apiVersion", json_string("resource.k8s.io/v1"));
	json_object_set_new(w, "kind", json_string("ResourceClaim"));
	st = json_object_get(w, "status");
	if (!json_is_object(st)) {
		st = json_object();
		json_object_set_new(w, "status", st);
	}
	if (!json_object_get(st, "allocation")) {
		res = json_array();
		for (i = 0; i < nd; i++) {
			if (d[i].claim != c)
				continue;
			for (j = 0; j < d[i].ngot; j++)
				json_array_append_new(res,
					json_pack("{s:s,s:s,s:s,s:s}",
						"request",
						d[i].alts[d[i].chosen].req,
						"driver", BIND_DRIVER, "pool",
						d[i].got[j]->pool, "device",
						d[i].got[j]->dra));
		}
		al = json_pack("{s:{s:o},s:{s:[{s:[{s:s,s:s,s:[s]}]}]}}",
			"devices", "results", res, "nodeSelector",
			"nodeSelectorTerms", "matchFields", "key",
			"metadata.name", "operator", "In", "values", node);
		json_object_set_new(st, "allocation", al);
	}
	rf = json_object_get(st, "reservedFor");
	if (!json_is_array(rf)) {
		rf = json_array();
		json_object_set_new(st, "reservedFor", rf);
	}
	json_array_append_new(rf,
		json_pack("{s:s,s:s,s:s}", "resource", "pods", "name",
			str(pod, "metadata", "name") ?: "", "uid",
			str(pod, "metadata", "uid") ?: ""));
	return w;
}
