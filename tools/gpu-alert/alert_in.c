/* alert_in: Node watch events and gpu records to device readings (see
 * alert_in.h). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alert_in.h"
#include "err.h"
#include "health.h"
#include "hmap.h"

#define DEVICES_ANNOTATION "agentaflow.gpu/devices"

/* health_of reads v as a health level into *h; -1 for a bad value. */
static int
health_of(const json_t *v, int *h)
{
	const char *s = json_string_value(v);

	*h = -1;
	if (!v || json_is_null(v))
		return 0;
	if (!s)
		return -1;
	if (strcmp(s, "ok") == 0)
		*h = HEALTH_OK;
	else if (strcmp(s, "warn") == 0)
		*h = HEALTH_WARN;
	else if (strcmp(s, "unhealthy") == 0)
		*h = HEALTH_UNHEALTHY;
	else
		return -1;
	return 0;
}

/* device fills d from the device object v; node is borrowed. Returns 0,
 * or -1 with why (n bytes) naming the field at fault. */
static int
device(const json_t *v, const char *node, struct alert_dev *d, char *why,
	size_t n)
{
	const json_t *x, *mig;

	*d = (struct alert_dev){.node = node,
		.index = -1,
		.temp_c = NAN,
		.ecc = -1};
	if (!json_is_object(v))
		return snprintf(why, n, "not an object"), -1;
	d->uuid = json_string_value(json_object_get(v, "uuid"));
	if (!d->uuid || !*d->uuid)
		return snprintf(why, n, "uuid: not a non-empty string"), -1;
	if ((x = json_object_get(v, "index")) && !json_is_null(x)) {
		if (!json_is_integer(x) || json_integer_value(x) < 0)
			return snprintf(why, n, "index: not a whole number"),
			       -1;
		d->index = json_integer_value(x);
	}
	d->product = json_string_value(json_object_get(v, "product"));
	mig = json_object_get(v, "mig");
	d->mig = json_is_object(mig)
		? json_string_value(json_object_get(mig, "profile"))
		: json_string_value(mig);
	if (health_of(json_object_get(v, "health"), &d->health) < 0)
		return snprintf(why, n, "health: not ok, warn or unhealthy"),
		       -1;
	if ((x = json_object_get(v, "temp_c")) && !json_is_null(x)) {
		if (!json_is_number(x))
			return snprintf(why, n, "temp_c: not a number"), -1;
		d->temp_c = json_number_value(x);
	}
	if ((x = json_object_get(v, "ecc_errors")) && !json_is_null(x)) {
		if (!json_is_integer(x) || json_integer_value(x) < 0)
			return snprintf(why, n,
				       "ecc_errors: not a whole number"),
			       -1;
		d->ecc = json_integer_value(x);
	}
	x = json_object_get(v, "health_reasons");
	if (!x || json_is_null(x))
		x = json_object_get(v, "reasons");
	if (x && !json_is_null(x) && !json_is_array(x))
		return snprintf(why, n, "health_reasons: not an array"), -1;
	d->reasons = x;
	return 0;
}

static int
gpu_record(struct alert_in *in, struct nd_reader *r, const json_t *rec,
	double now)
{
	const char *node = json_string_value(json_object_get(rec, "node"));
	struct alert_dev d;
	char why[128];

	if (!node || !*node) {
		nd_warn(r, "gpu record: node: not a non-empty string");
		return -1;
	}
	if (device(rec, node, &d, why, sizeof why) < 0) {
		nd_warn(r, "gpu record: %s", why);
		return -1;
	}
	at_observe(in->t, &d, 0, now, in->emit, in->arg);
	if (in->last) /* the node's next annotation is a reading anew */
		hm_del(in->last, node);
	return 0;
}

/* node_devices reads the annotation of node: NULL when it has none (a
 * node without GPUs), else an array (owned), or -1 through *bad. */
static json_t *
node_devices(struct nd_reader *r, const json_t *meta, const char *node,
	int *bad)
{
	const json_t *v = json_object_get(json_object_get(meta, "annotations"),
		DEVICES_ANNOTATION);
	json_error_t jerr;
	json_t *list;

	*bad = 0;
	if (!v)
		return NULL;
	if (!json_is_string(v)) {
		nd_warn(r,
			"node %s: annotation " DEVICES_ANNOTATION
			": not a string",
			node);
		*bad = 1;
		return NULL;
	}
	list = json_loadb(json_string_value(v), json_string_length(v), 0,
		&jerr);
	if (!json_is_array(list)) {
		nd_warn(r,
			"node %s: annotation " DEVICES_ANNOTATION
			": not a JSON array",
			node);
		json_decref(list);
		*bad = 1;
		return NULL;
	}
	return list;
}

static int
node_event(struct alert_in *in, struct nd_reader *r, const char *type,
	const json_t *obj, double now)
{
	const json_t *meta = json_object_get(obj, "metadata"), *v;
	const char *node = json_string_value(json_object_get(meta, "name"));
	const char *text, *seen;
	struct alert_dev d;
	json_t *list;
	char why[128];
	int bad;
	size_t i;

	if (!node || !*node) {
		nd_warn(r, "%s event: object: no metadata.name", type);
		return -1;
	}
	if (strcmp(type, "DELETED") == 0) {
		at_sweep(in->t, node, 0);
		if (in->last)
			hm_del(in->last, node);
		return 0;
	}
	v = json_object_get(json_object_get(meta, "annotations"),
		DEVICES_ANNOTATION);
	text = json_is_string(v) ? json_string_value(v) : v ? NULL : "";
	if (text && in->last && (seen = hm_get(in->last, node)) &&
		!strcmp(seen, text))
		return 0;
	list = node_devices(r, meta, node, &bad);
	if (bad)
		return -1;
	in->gen = in->gen + 1 ? in->gen + 1 : 1; /* 0 means "all" */
	json_array_foreach(list, i, v) {
		if (device(v, node, &d, why, sizeof why) < 0) {
			nd_warn(r,
				"node %s: annotation " DEVICES_ANNOTATION
				"[%zu]: %s",
				node, i, why);
			bad = 1;
			continue;
		}
		at_observe(in->t, &d, in->gen, now, in->emit, in->arg);
	}
	/* a device of a bad entry is not known to be gone */
	if (!bad)
		at_sweep(in->t, node, in->gen);
	json_decref(list);
	if (!in->last)
		in->last = hm_new(free);
	if (bad)
		hm_del(in->last, node);
	else
		hm_put(in->last, node, estrdup(text));
	return bad ? -1 : 0;
}

int
ai_record(struct alert_in *in, struct nd_reader *r, const json_t *rec,
	double now)
{
	const char *kind = json_string_value(json_object_get(rec, "kind"));
	const char *type = json_string_value(json_object_get(rec, "type"));
	const json_t *obj = json_object_get(rec, "object");

	if (kind && strcmp(kind, "gpu") == 0)
		return gpu_record(in, r, rec, now);
	if (kind && strcmp(kind, "flush") == 0)
		return 0;
	if (!kind && type &&
		(strcmp(type, "SYNCED") == 0 || strcmp(type, "BOOKMARK") == 0))
		return 0;
	if (!kind && type &&
		(strcmp(type, "ADDED") == 0 || strcmp(type, "MODIFIED") == 0 ||
			strcmp(type, "DELETED") == 0) &&
		json_is_object(obj))
		return node_event(in, r, type, obj, now);
	nd_warn(r, "not a Node watch event or a gpu record");
	return -1;
}

const char *const *
ai_skip(const char *const *path, int depth, int *keep, void *arg)
{
	static const char *const object[] = {"metadata", NULL};
	static const char *const meta[] = {"name", "annotations", NULL};
	static const char *const ann[] = {DEVICES_ANNOTATION, NULL};

	(void)arg;
	*keep = 1;
	if (depth < 1 || !path[1] || strcmp(path[1], "object"))
		return NULL; /* the event, a gpu record: all of it */
	if (depth == 1)
		return object;
	if (depth == 2 && path[2] && !strcmp(path[2], "metadata"))
		return meta;
	if (depth == 3 && path[2] && !strcmp(path[2], "metadata") && path[3] &&
		!strcmp(path[3], "annotations"))
		return ann;
	return NULL;
}

void
ai_free(struct alert_in *in)
{
	hm_free(in->last);
	in->last = NULL;
}
