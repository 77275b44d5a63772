/* dra: the kubelet plugin's decisions (see dra.h). */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cdi.h"
#include "ckpt.h"
#include "clock.h"
#include "dra.h"
#include "err.h"
#include "gpuobj.h"
#include "jload.h"
#include "nvdrv.h"

#define WHY 1024

void
dra_init(struct dra *d)
{
	pthread_mutex_init(&d->mu, NULL);
	d->devices = NULL;
	d->driver_version = NULL;
	d->claims = json_object();
	memset(&d->cdi, 0, sizeof d->cdi);
}

void
dra_free(struct dra *d)
{
	json_decref(d->devices);
	json_decref(d->claims);
	free(d->driver_version);
	cdi_conf_free(&d->cdi);
	pthread_mutex_destroy(&d->mu);
}

/* attr returns the value of DRA device attribute name (its one typed
 * member), or NULL. */
static json_t *
attr(const json_t *dev, const char *name)
{
	json_t *a = json_object_get(json_object_get(dev, "attributes"), name);
	const char *k;
	json_t *v;

	json_object_foreach(a, k, v)
		return v;
	return NULL;
}

/* request_entry returns what cdi_spec needs of DRA device name, from
 * its device table entry dev. */
static json_t *
request_entry(const char *name, const json_t *dev)
{
	static const char *const keys[] = {"uuid", "gpu", "minor", "gi", "ci",
		NULL};
	json_t *e = json_pack("{s:s}", "name", name), *v;
	size_t i;

	for (i = 0; keys[i]; i++)
		if ((v = json_object_get(dev, keys[i])))
			json_object_set(e, keys[i], v);
	return e;
}

/* int_or sets key of o to v when it is an integer, else to dflt, or to
 * JSON null when null_dflt. */
static void
int_or(json_t *o, const char *key, const json_t *v, json_int_t dflt,
	int null_dflt)
{
	json_object_set_new(o, key,
		json_is_integer(v)  ? json_integer(json_integer_value(v))
			: null_dflt ? json_null()
				    : json_integer(dflt));
}

/* table_entry returns the device table's entry of DRA device dev, from
 * its gpu record rec (NULL: not found). */
static json_t *
table_entry(const json_t *dev, json_t *gpu, const char *type, const json_t *rec)
{
	json_t *e = json_pack("{s:O, s:O, s:s}", "gpu", gpu, "uuid",
		attr(dev, "uuid"), "type", type);
	const json_t *mig = json_object_get(rec, "mig");

	int_or(e, "minor", json_object_get(rec, "minor"), 0, 1);
	if (strcmp(type, "mig") == 0) {
		int_or(e, "gi", json_object_get(mig, "gi"), -1, 0);
		int_or(e, "ci", json_object_get(mig, "ci"), -1, 0);
	}
	return e;
}

void
dra_set_gpus(struct dra *d, const json_t *gpus)
{
	json_t *plain = json_array(), *devs, *dev, *rec, *table = json_object();
	json_t *gpu, *by_uuid = json_object();
	const char *type, *uuid, *v;
	char *version = NULL;
	size_t i;

	/* every device of the node, held ones too */
	json_array_foreach(gpus, i, rec) {
		rec = json_deep_copy(rec);
		json_object_del(rec, "held");
		if ((uuid = json_string_value(json_object_get(rec, "uuid"))))
			json_object_set(by_uuid, uuid, rec);
		v = json_string_value(json_object_get(rec, "driver_version"));
		if (!version && v && nvd_version_ok(v))
			version = estrdup(v);
		json_array_append_new(plain, rec);
	}
	devs = gobj_devices(plain);
	json_array_foreach(devs, i, dev) {
		uuid = json_string_value(attr(dev, "uuid"));
		rec = uuid ? json_object_get(by_uuid, uuid) : NULL;
		if (rec) { /* the record says, whatever the attributes' names */
			type = json_is_object(json_object_get(rec, "mig"))
				? "mig"
				: "gpu";
			gpu = json_object_get(rec, "index");
		} else {
			type = json_string_value(attr(dev, "type"));
			gpu = attr(dev,
				type && strcmp(type, "mig") == 0 ? "parentIndex"
								 : "index");
		}
		if (!type || !json_is_integer(gpu) || !uuid)
			continue;
		json_object_set_new(table,
			json_string_value(json_object_get(dev, "name")),
			table_entry(dev, gpu, type, rec));
	}
	json_decref(devs);
	json_decref(plain);
	json_decref(by_uuid);
	pthread_mutex_lock(&d->mu);
	json_decref(d->devices);
	d->devices = table;
	free(d->driver_version);
	d->driver_version = version;
	pthread_mutex_unlock(&d->mu);
}

json_t *
dra_spec(struct dra *d, const char *uid, const char *ns, const char *name,
	const char *request, const json_t *names, char **why)
{
	json_t *list = json_array(), *dev, *requests, *spec = NULL, *n;
	const char *dn;
	size_t i;

	pthread_mutex_lock(&d->mu);
	json_array_foreach(names, i, n) {
		dn = json_string_value(n);
		dev = d->devices ? json_object_get(d->devices, dn) : NULL;
		if (!dev) {
			*why = easprintf("the gpu records have no device %s",
				dn);
			goto out;
		}
		json_array_append_new(list, request_entry(dn, dev));
	}
	requests = json_pack("{s:O}", request, list);
	spec = cdi_spec(uid, ns, name, requests, d->driver_version, &d->cdi);
	json_decref(requests);
out:
	pthread_mutex_unlock(&d->mu);
	json_decref(list);
	return spec;
}

/* ms returns the milliseconds since t0 (clock_mono). */
static double
ms(double t0)
{
	return (clock_mono() - t0) * 1e3;
}

/* save writes the checkpoint durably, stage without a sync (see
 * prepare_one); a failure is the claim's error. */
static int
save(struct dra *d, char *why)
{
	double t0 = clock_mono();
	int rc = ckpt_save(d->ckpt_path, d->claims, why, WHY);

	d->t->ckpt_ms += ms(t0);
	return rc;
}

static int
stage(struct dra *d, char *why)
{
	double t0 = clock_mono();
	int rc = ckpt_stage(d->ckpt_path, d->claims, why, WHY);

	d->t->ckpt_ms += ms(t0);
	return rc;
}

/* drop_unreadable_specs removes the spec of each claim prepared that is
 * not JSON: one a crash of the machine cut short (specs are not synced),
 * for dra_reconcile to write again from the checkpoint. */
static void
drop_unreadable_specs(struct dra *d)
{
	json_error_t jerr;
	const char *uid;
	json_t *c, *spec;
	char *path;

	json_object_foreach(d->claims, uid, c) {
		path = cdi_spec_path(d->cdi_dir, uid);
		spec = access(path, F_OK) == 0
			? json_load_file(path, 0, &jerr)
			: json_true(); /* none: written again anyway */
		if (!spec) {
			err_warn("%s: %s; written again from the checkpoint",
				path, jerr.text);
			unlink(path);
		}
		json_decref(spec);
		free(path);
	}
}

int
dra_load(struct dra *d, char *why, size_t n)
{
	char what[WHY], *aside;
	json_t *claims;

	if (ckpt_load(d->ckpt_path, &claims, what, sizeof what) == 0) {
		json_decref(d->claims);
		d->claims = claims;
		if (d->cdi_dir)
			drop_unreadable_specs(d);
		return 0;
	}
	aside = ckpt_set_aside(d->ckpt_path, why, n);
	if (!aside)
		return -1;
	err_warn("checkpoint %s; set aside as %s, the claims prepared are "
		 "found again from the CDI specs in %s",
		what, aside, d->cdi_dir);
	free(aside);
	return 0;
}

/* get_claim reads claim ns/name from the API server into *out. Returns
 * NULL, or the claim's error (malloc'd), *notfound (when not NULL) set
 * when the server said there is no such claim. With any, the server may
 * answer from its own watch cache (resourceVersion=0: no read of etcd,
 * about half the time of a quorum read, but possibly behind it). */
static char *
get_claim_at(struct dra *d, const char *ns, const char *name, json_t **out,
	int *notfound, int any)
{
	char *ens = kube_escape(ns), *ename = kube_escape(name), *path;
	struct kube_error e;
	double t0;

	path = easprintf(
		"/apis/resource.k8s.io/v1/namespaces/%s/resourceclaims/%s%s",
		ens, ename, any ? "?resourceVersion=0" : "");
	free(ens);
	free(ename);
	t0 = clock_mono();
	if (d->cfg)
		kc_refresh_token(d->cfg);
	*out = kube_get(d->k, path, &e);
	d->t->claim_ms += ms(t0);
	d->t->fetched++;
	free(path);
	if (notfound)
		*notfound = !*out && e.status == 404;
	if (*out)
		return NULL;
	if (e.status == 404)
		return easprintf("resourceclaim %s/%s not found", ns, name);
	return easprintf("resourceclaim %s/%s: %s%s", ns, name, e.msg,
		e.kind == KUBE_ETEMP ? " (will be retried)" : "");
}

static char *
get_claim(struct dra *d, const char *ns, const char *name, json_t **out,
	int *notfound)
{
	return get_claim_at(d, ns, name, out, notfound, 0);
}

/* The plan of one claim: what to hold, the CDI requests and the answer. */
struct plan {
	json_t *gpus;     /* whole GPU indexes, unique */
	json_t *mig;      /* [{gpu, uuid}] */
	json_t *requests; /* {request: [{name, uuid, gpu, minor, gi, ci}]}
			   * for cdi_spec */
	json_t *devices;  /* the answer's devices, keys sorted as the
			   * checkpoint keeps them, so answers repeat exactly */
};

static void
plan_free(struct plan *p)
{
	json_decref(p->gpus);
	json_decref(p->mig);
	json_decref(p->requests);
	json_decref(p->devices);
}

/* has_int says whether array a holds integer v. */
static int
has_int(const json_t *a, json_int_t v)
{
	size_t i;
	json_t *e;

	json_array_foreach(a, i, e) {
		if (json_integer_value(e) == v)
			return 1;
	}
	return 0;
}

/* make_plan checks claim (uid, allocated, our results on this node's
 * devices) and fills p. Returns NULL, or the claim's error (malloc'd). */
static char *
make_plan(struct dra *d, const json_t *claim, const char *ns, const char *name,
	const char *uid, struct plan *p)
{
	json_t *meta = json_object_get(claim, "metadata"), *results, *r, *dev;
	json_t *alloc = json_object_get(json_object_get(claim, "status"),
		"allocation");
	const char *have = json_string_value(json_object_get(meta, "uid"));
	const char *req, *pool, *device;
	char *base, *slash;
	size_t i;

	memset(p, 0, sizeof *p);
	if (!have || strcmp(have, uid) != 0)
		return easprintf("resourceclaim %s/%s was replaced: its uid is "
				 "%s, not %s",
			ns, name, have ? have : "missing", uid);
	if (!json_is_object(alloc))
		return easprintf("resourceclaim %s/%s is not allocated", ns,
			name);
	if (!d->devices)
		return easprintf("the devices of node %s are not known yet "
				 "(no gpu records read)",
			d->node);
	results = json_object_get(json_object_get(alloc, "devices"), "results");
	p->gpus = json_array();
	p->mig = json_array();
	p->requests = json_object();
	p->devices = json_array();
	json_array_foreach(results, i, r) {
		if (!json_is_string(json_object_get(r, "driver")) ||
			strcmp(json_string_value(json_object_get(r, "driver")),
				d->driver) != 0)
			continue;
		req = json_string_value(json_object_get(r, "request"));
		pool = json_string_value(json_object_get(r, "pool"));
		device = json_string_value(json_object_get(r, "device"));
		if (!req || !pool || !device)
			return easprintf(
				"resourceclaim %s/%s: result %zu lacks "
				"request, pool or device",
				ns, name, i);
		if (strcmp(pool, d->node) != 0)
			return easprintf("resourceclaim %s/%s: device %s is of "
					 "pool %s, not of this node %s",
				ns, name, device, pool, d->node);
		dev = json_object_get(d->devices, device);
		if (!dev)
			return easprintf("resourceclaim %s/%s: node %s has no "
					 "device %s",
				ns, name, d->node, device);
		/* a firstAvailable subrequest answers for its request */
		base = estrdup(req);
		if ((slash = strchr(base, '/')))
			*slash = '\0';
		if (!json_object_get(p->requests, base)) {
			char *id = cdi_device_id(uid, base);

			json_object_set_new(p->requests, base, json_array());
			json_array_append_new(p->devices,
				json_pack("{s:[s], s:s, s:s, s:[s]}",
					"cdiDeviceIDs", id, "deviceName",
					device, "poolName", pool,
					"requestNames", base));
			free(id);
		} else {
			json_array_append_new(p->devices,
				json_pack("{s:[], s:s, s:s, s:[s]}",
					"cdiDeviceIDs", "deviceName", device,
					"poolName", pool, "requestNames",
					base));
		}
		json_array_append_new(json_object_get(p->requests, base),
			request_entry(device, dev));
		if (strcmp(json_string_value(json_object_get(dev, "type")),
			    "mig") == 0)
			json_array_append_new(p->mig,
				json_pack("{s:O, s:O}", "gpu",
					json_object_get(dev, "gpu"), "uuid",
					json_object_get(dev, "uuid")));
		else if (!has_int(p->gpus,
				 json_integer_value(
					 json_object_get(dev, "gpu"))))
			json_array_append(p->gpus, json_object_get(dev, "gpu"));
		free(base);
	}
	return NULL;
}

/* hold takes the plan's holds for the claim. Returns NULL, or the
 * claim's error (malloc'd): who holds what, or why the ledger could not
 * be asked. */
static char *
hold(struct dra *d, const char *ns, const char *name, const char *uid,
	const struct plan *p)
{
	json_t *q, *res, *c;
	char *why = NULL, *msg = NULL, *t, *user;
	double t0;
	int status;
	size_t i;

	if (!d->lg ||
		(json_array_size(p->gpus) == 0 && json_array_size(p->mig) == 0))
		return NULL;
	user = easprintf("k8s:%s/%s", ns, name);
	q = json_pack("{s:s, s:s, s:s, s:s, s:n, s:O, s:O}", "claim_uid", uid,
		"namespace", ns, "name", name, "user", user, "pod", "gpus",
		p->gpus, "mig", p->mig);
	free(user);
	t0 = clock_mono();
	res = lg_claim_prepare(d->lg, q, &status, &why);
	d->t->ledger_ms += ms(t0);
	json_decref(q);
	if (!res) {
		msg = easprintf("%s; nothing was held (will be retried)",
			why ? why : "the ledger did not answer");
		free(why);
		return msg;
	}
	json_array_foreach(json_object_get(res, "conflicts"), i, c) {
		t = lg_conflict_text(c);
		if (msg) {
			char *m = easprintf("%s; %s", msg, t);

			free(msg);
			msg = m;
		} else {
			msg = t;
			t = NULL;
		}
		free(t);
	}
	json_decref(res);
	return msg;
}

/* release lets go of the claim's holds. Returns NULL or the error. */
static char *
release(struct dra *d, const char *uid)
{
	char *why = NULL, *msg;
	double t0;
	int status;
	json_t *res;

	if (!d->lg)
		return NULL;
	t0 = clock_mono();
	res = lg_claim_release(d->lg, uid, &status, &why);
	d->t->ledger_ms += ms(t0);
	if (res) {
		json_decref(res);
		return NULL;
	}
	msg = easprintf("%s (will be retried)",
		why ? why : "the ledger did not answer");
	free(why);
	return msg;
}

/* write_spec writes entry's CDI spec. Returns NULL or the error. */
static char *
write_spec(struct dra *d, const char *uid, const json_t *entry)
{
	double t0 = clock_mono();
	char why[WHY], *path = cdi_spec_path(d->cdi_dir, uid);
	json_t *spec = cdi_spec(uid,
		json_string_value(json_object_get(entry, "namespace")),
		json_string_value(json_object_get(entry, "name")),
		json_object_get(entry, "requests"), d->driver_version, &d->cdi);
	int rc = cdi_write(path, spec, why, sizeof why);

	json_decref(spec);
	free(path);
	d->t->cdi_ms += ms(t0);
	return rc < 0 ? estrdup(why) : NULL;
}

/* forget drops uid from the checkpoint, saved. */
static char *
forget(struct dra *d, const char *uid)
{
	char why[WHY];

	if (!json_object_get(d->claims, uid))
		return NULL;
	json_object_del(d->claims, uid);
	return save(d, why) < 0 ? estrdup(why) : NULL;
}

/* remove_spec removes uid's CDI spec. Returns NULL or the error. */
static char *
remove_spec(struct dra *d, const char *uid)
{
	double t0 = clock_mono();
	char why[WHY], *path = cdi_spec_path(d->cdi_dir, uid), *msg;

	msg = cdi_remove(path, why, sizeof why) < 0 ? estrdup(why) : NULL;
	free(path);
	d->t->cdi_ms += ms(t0);
	return msg;
}

/* unprepare_one undoes a claim, known to the checkpoint or not: holds,
 * spec, checkpoint entry, in that order, stopping at the first failure. The
 * watch cache is told: a claim once unprepared may be allocated again under the
 * same uid, and is read from the API server if it is prepared again. */
static char *
unprepare_one(struct dra *d, const char *uid)
{
	char *msg;

	if (d->cache)
		rc_forget(d->cache, uid);
	/* a claim the checkpoint does not know may still hold GPUs: those a
	 * prepare took before a crash of the machine lost its staged entry */
	if ((msg = release(d, uid)) || (msg = remove_spec(d, uid)))
		return msg;
	return forget(d, uid);
}

/* read_claim reads claim ns/name: from the watch cache when it holds it
 * as uid, allocated and reserved (*cached set), else from the API server,
 * which may answer from its watch cache (*cached set too: a claim that
 * will not do is read again by a quorum GET, so a stale answer costs a
 * second read, never a wrong prepare). Returns NULL, or the claim's error
 * (malloc'd). */
static char *
read_claim(struct dra *d, const char *ns, const char *name, const char *uid,
	json_t **claim, int *cached)
{
	double t0 = clock_mono();
	char *msg;

	*cached = 0;
	if (d->cache && (*claim = rc_get(d->cache, ns, name, uid))) {
		d->t->claim_ms += ms(t0);
		d->t->cached++;
		*cached = 1;
		return NULL;
	}
	if (!(msg = get_claim_at(d, ns, name, claim, NULL, 1))) {
		*cached = 1;
		return NULL;
	}
	free(msg); /* not in the server's cache yet, say: a quorum read */
	return get_claim(d, ns, name, claim, NULL);
}

/* prepare_one prepares one claim; returns its answer entry.
 *
 * Crash safety. Only the last checkpoint write is synced; what a crash
 * leaves at each point, and what makes it consistent again:
 *   - before the staged "preparing" entry: nothing was done;
 *   - after it, before or after the holds, before the synced "prepared":
 *     a crash of the plugin leaves the staged entry (the page cache
 *     keeps it): the next start's reconcile, and a prepare of the claim
 *     first, unprepare a claim left "preparing": holds released, spec
 *     removed, entry forgotten. A crash of the machine may lose the
 *     staged entry, and with it the only record of holds taken after it:
 *     those holds are the claim's own (claim_uid), so the kubelet's
 *     retried prepare takes them again as its own (the ledger's script
 *     lets a claim hold again what it holds), and its unprepare of a
 *     claim gone releases them (an unknown claim still goes through
 *     reconcile's adoption of its spec, when the spec survived);
 *   - after the synced "prepared": the claim is prepared; its spec, not
 *     synced, may be missing or cut short after a crash of the machine:
 *     dra_load removes a spec that is not JSON and reconcile writes every
 *     missing spec of a prepared claim again from the checkpoint, before
 *     the plugin registers.
 * The checkpoint itself is always whole (renamed over the old one), so it
 * never says less than the last synced write said. */
static json_t *
prepare_one(struct dra *d, const char *ns, const char *uid, const char *name)
{
	json_t *entry = json_object_get(d->claims, uid), *claim, *ans;
	const char *state = json_string_value(json_object_get(entry, "state"));
	char why[WHY], *msg, *path;
	struct plan p;
	int cached;

	if (state && strcmp(state, "prepared") == 0) {
		path = cdi_spec_path(d->cdi_dir, uid);
		msg = access(path, F_OK) == 0 ? NULL
					      : write_spec(d, uid, entry);
		free(path);
		if (msg)
			goto fail_msg;
		return json_pack("{s:O}", "devices",
			json_object_get(entry, "devices"));
	}
	if (entry && (msg = unprepare_one(d, uid))) /* left half done */
		goto fail_msg;
	if ((msg = read_claim(d, ns, name, uid, &claim, &cached)))
		goto fail_msg;
	msg = make_plan(d, claim, ns, name, uid, &p);
	json_decref(claim);
	if (msg && cached) { /* the cache may be behind: ask the server */
		free(msg);
		plan_free(&p);
		if ((msg = get_claim(d, ns, name, &claim, NULL)))
			goto fail_msg;
		msg = make_plan(d, claim, ns, name, uid, &p);
		json_decref(claim);
	}
	if (msg) {
		plan_free(&p);
		goto fail_msg;
	}
	entry = json_pack("{s:s, s:s, s:s, s:O, s:O, s:O, s:O}", "namespace",
		ns, "name", name, "state", "preparing", "devices", p.devices,
		"requests", p.requests, "gpus", p.gpus, "mig", p.mig);
	json_object_set_new(d->claims, uid, entry);
	if (stage(d, why) < 0) {
		json_object_del(d->claims, uid);
		msg = estrdup(why);
	} else if ((msg = hold(d, ns, name, uid, &p))) {
		free(forget(d, uid));
	} else if ((msg = write_spec(d, uid, entry))) {
		/* no spec was written: the holds go, then the entry */
		free(release(d, uid));
		free(forget(d, uid));
	} else {
		json_object_set_new(entry, "state", json_string("prepared"));
		if (save(d, why) < 0)
			msg = estrdup(why);
	}
	if (msg) {
		plan_free(&p);
		goto fail_msg;
	}
	ans = json_pack("{s:O}", "devices", p.devices);
	plan_free(&p);
	return ans;
fail_msg:
	err_warn("prepare %s/%s (%s): %s", ns, name, uid, msg);
	ans = json_pack("{s:s}", "error", msg);
	free(msg);
	return ans;
}

/* each_claim runs fn over the claims of req under the mutex and gathers
 * the answers by uid. */
static json_t *
each_claim(struct dra *d, const json_t *req, struct dra_times *t,
	json_t *(*fn)(struct dra *, const char *, const char *, const char *))
{
	json_t *out = json_object(), *c;
	const char *ns, *uid, *name;
	struct dra_times scratch;
	size_t i;

	pthread_mutex_lock(&d->mu);
	d->t = t ? t : &scratch;
	memset(d->t, 0, sizeof *d->t);
	json_array_foreach(json_object_get(req, "claims"), i, c) {
		ns = json_string_value(json_object_get(c, "namespace"));
		uid = json_string_value(json_object_get(c, "uid"));
		name = json_string_value(json_object_get(c, "name"));
		if (!uid || !*uid)
			continue; /* no key to answer it under */
		if (!ns || !*ns || !name || !*name)
			json_object_set_new(out, uid,
				json_pack("{s:s}", "error",
					"the claim's namespace or name is empty"));
		else
			json_object_set_new(out, uid, fn(d, ns, uid, name));
	}
	pthread_mutex_unlock(&d->mu);
	return json_pack("{s:o}", "claims", out);
}

json_t *
dra_prepare(struct dra *d, const json_t *req, struct dra_times *t)
{
	return each_claim(d, req, t, prepare_one);
}

static json_t *
unprepare_answer(struct dra *d, const char *ns, const char *uid,
	const char *name)
{
	char *msg = unprepare_one(d, uid);
	json_t *ans;

	if (!msg)
		return json_object();
	err_warn("unprepare %s/%s (%s): %s", ns, name, uid, msg);
	ans = json_pack("{s:s}", "error", msg);
	free(msg);
	return ans;
}

json_t *
dra_unprepare(struct dra *d, const json_t *req, struct dra_times *t)
{
	return each_claim(d, req, t, unprepare_answer);
}

/* ---------------------------------------------------------------- reconcile */

/* still_ours says whether claim (read from the API) is uid, allocated,
 * with a result of our driver on this node. */
static int
still_ours(struct dra *d, const json_t *claim, const char *uid)
{
	const char *have = json_string_value(
		json_object_get(json_object_get(claim, "metadata"), "uid"));
	json_t *alloc = json_object_get(json_object_get(claim, "status"),
		"allocation");
	json_t *r;
	size_t i;

	if (!have || strcmp(have, uid) != 0 || !json_is_object(alloc))
		return 0;
	json_array_foreach(json_object_get(json_object_get(alloc, "devices"),
				   "results"),
		i, r) {
		if (json_is_string(json_object_get(r, "driver")) &&
			strcmp(json_string_value(json_object_get(r, "driver")),
				d->driver) == 0 &&
			json_is_string(json_object_get(r, "pool")) &&
			strcmp(json_string_value(json_object_get(r, "pool")),
				d->node) == 0)
			return 1;
	}
	return 0;
}

/* check_one looks at one claim known by ns/name/uid and does what
 * dra_reconcile says; adds its uid (or error) to the report. */
static void
check_one(struct dra *d, const char *ns, const char *name, const char *uid,
	json_t *report, int adopted)
{
	json_t *claim = NULL, *ans;
	int gone;
	char *msg = get_claim(d, ns, name, &claim, &gone), *e;
	const char *state = json_string_value(
		json_object_get(json_object_get(d->claims, uid), "state"));

	if (msg && !gone) {
		json_array_append_new(json_object_get(report, "errors"),
			json_string(msg));
		free(msg);
		return;
	}
	free(msg);
	if (gone || !still_ours(d, claim, uid) ||
		(state && strcmp(state, "prepared") != 0)) {
		if (adopted && !json_object_get(d->claims, uid))
			/* an orphaned spec: its holds too, if any */
			json_object_set_new(d->claims, uid,
				json_pack("{s:s, s:s, s:s}", "namespace", ns,
					"name", name, "state", "orphan"));
		if ((e = unprepare_one(d, uid))) {
			json_array_append_new(json_object_get(report, "errors"),
				json_string(e));
			free(e);
		} else {
			json_array_append_new(json_object_get(report,
						      "unprepared"),
				json_string(uid));
		}
		json_decref(claim);
		return;
	}
	json_decref(claim);
	if (adopted && !json_object_get(d->claims, uid)) {
		ans = prepare_one(d, ns, uid, name);
		json_array_append_new(json_object_get(report, "adopted"),
			json_string(uid));
	} else {
		/* holds back where the ledger lost them, spec rewritten */
		struct plan p = {
			.gpus = json_object_get(json_object_get(d->claims, uid),
				"gpus"),
			.mig = json_object_get(json_object_get(d->claims, uid),
				"mig"),
		};
		char *h = hold(d, ns, name, uid, &p);

		ans = h ? json_pack("{s:s}", "error", h)
			: prepare_one(d, ns, uid, name);
		free(h);
		json_array_append_new(json_object_get(report, "kept"),
			json_string(uid));
	}
	if (json_object_get(ans, "error"))
		json_array_append_new(json_object_get(report, "errors"),
			json_sprintf("%s/%s (%s): %s", ns, name, uid,
				json_string_value(
					json_object_get(ans, "error"))));
	json_decref(ans);
}

/* spec_claim reads ns, name and uid from a spec file's annotations. */
static json_t *
spec_claim(const char *path)
{
	json_error_t jerr;
	json_t *spec = json_load_file(path, 0, &jerr), *a, *out = NULL;
	const char *nn, *uid, *slash;

	a = json_object_get(spec, "annotations");
	nn = json_string_value(json_object_get(a, "canhazgpu.dev/claim"));
	uid = json_string_value(json_object_get(a, "canhazgpu.dev/claim-uid"));
	if (nn && uid && (slash = strchr(nn, '/')))
		out = json_pack("{s:s%, s:s, s:s}", "namespace", nn,
			(size_t)(slash - nn), "name", slash + 1, "uid", uid);
	json_decref(spec);
	return out;
}

json_t *
dra_reconcile(struct dra *d)
{
	json_t *report = json_pack("{s:s, s:[], s:[], s:[], s:[]}", "kind",
		"reconcile", "kept", "unprepared", "adopted", "errors");
	json_t *uids = json_array(), *v, *c;
	const char *uid;
	struct dirent *de;
	char *path, *u;
	size_t i;
	DIR *dir;
	struct dra_times scratch = {0};

	pthread_mutex_lock(&d->mu);
	d->t = &scratch;
	json_object_foreach(d->claims, uid, v)
		json_array_append_new(uids, json_string(uid));
	json_array_foreach(uids, i, v) {
		uid = json_string_value(v);
		c = json_incref(json_object_get(d->claims, uid));
		check_one(d, json_string_value(json_object_get(c, "namespace")),
			json_string_value(json_object_get(c, "name")), uid,
			report, 0);
		json_decref(c);
	}
	json_decref(uids);
	if ((dir = opendir(d->cdi_dir))) {
		uids = json_array();
		while ((de = readdir(dir))) {
			u = cdi_claim_of(de->d_name);
			if (u && !json_object_get(d->claims, u)) {
				path = easprintf("%s/%s", d->cdi_dir,
					de->d_name);
				c = spec_claim(path);
				if (!c)
					c = json_pack("{s:s, s:s, s:s}",
						"namespace", "?", "name", "?",
						"uid", u);
				json_array_append_new(uids, c);
				free(path);
			}
			free(u);
		}
		closedir(dir);
		json_array_foreach(uids, i, c)
			check_one(d,
				json_string_value(
					json_object_get(c, "namespace")),
				json_string_value(json_object_get(c, "name")),
				json_string_value(json_object_get(c, "uid")),
				report, 1);
		json_decref(uids);
	}
	pthread_mutex_unlock(&d->mu);
	return report;
}
