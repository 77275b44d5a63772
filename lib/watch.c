/* watch: list + watch with resume, relist on 410, and a uid table to emit
 * exactly the changes a consumer has not seen. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <zlib.h>

#include "clock.h"
#include "err.h"
#include "jbuf.h"
#include "hmap.h"
#include "jload.h"
#include "jscan.h"
#include "kube.h"
#include "watch.h"

#define BACKOFF_MIN 0.5
#define BACKOFF_MAX 16.0

/* seen is what the consumer last got for one object. The object is kept
 * as the compact JSON it was emitted as, squeezed with zlib, a small
 * fraction of its size; it is unpacked only for a DELETED after a
 * relist. The objects of one collection are much alike, so the first
 * one packed is the preset dictionary of all: a pod of 3 KB takes 430
 * bytes (1100 without), and deflating it takes less time too.
 *
 * An object often changes again a few events later (a pod is created,
 * scheduled, started, marked for deletion and deleted), so the last
 * FRESH_MAX objects kept (up to FRESH_BYTES) stay as they are, and only
 * what falls out of that ring is packed: most states are never packed. */
struct seen {
	char *rv;
	unsigned char *z;   /* deflated compact JSON, or NULL while fresh */
	size_t zlen, len;   /* its size, and the size of the JSON */
	char *raw;          /* the JSON while fresh, else NULL */
	unsigned long slot; /* while fresh, its place in the ring */
	char *uid;          /* the table key, in ids */
	char ids[]; /* "namespace/name\0uid\0"; the first for ordering */
};

#define FRESH_MAX 64
#define FRESH_BYTES (256 * 1024)

/* obj is one object on its way to the consumer. */
struct obj {
	const char *js; /* compact JSON, js[0..len) */
	size_t len;
	json_t *dom;                      /* parsed, or NULL */
	const char *uid, *ns, *name, *rv; /* metadata, or NULL */
};

struct watch {
	struct kube *k;
	struct watch_opts o;
	watch_emit_fn *fn; /* one of these two */
	watch_raw_fn *raw;
	void *arg;
	struct hm *known;  /* uid -> struct seen */
	char *rv;          /* resume point; NULL before the first list */
	char *source;      /* "GET URL" of the stream read, or a file name */
	struct js_doc doc; /* the stream line being read */
	z_stream z;        /* packs every seen object, reset for each */
	unsigned char *zbuf;
	size_t zcap;
	int z_ready;
	char *dict; /* the preset dictionary: the first object packed */
	size_t dictlen;
	struct seen *ring[FRESH_MAX]; /* fresh ones, oldest at head; or NULL */
	unsigned long head, tail;     /* ring[head % FRESH_MAX] is the oldest */
	size_t fresh_bytes;
	int stopped;  /* the emit function said stop */
	int got_line; /* the current stream delivered something */
	long bad;
	long lists; /* lists made */
};

static void
seen_free(void *p)
{
	struct seen *s = p;

	if (!s)
		return;
	free(s->rv);
	free(s->z);
	free(s->raw);
	free(s);
}

struct watch *
watch_new(struct kube *k, const struct watch_opts *o, watch_emit_fn *fn,
	void *arg)
{
	struct watch *w = ecalloc(1, sizeof *w);

	w->k = k;
	w->o = *o;
	w->fn = fn;
	w->arg = arg;
	w->known = hm_new(seen_free);
	return w;
}

struct watch *
watch_new_raw(struct kube *k, const struct watch_opts *o, watch_raw_fn *fn,
	void *arg)
{
	struct watch *w = watch_new(k, o, NULL, arg);

	w->raw = fn;
	return w;
}

void
watch_free(struct watch *w)
{
	if (!w)
		return;
	hm_free(w->known);
	free(w->rv);
	free(w->source);
	js_free(&w->doc);
	if (w->z_ready)
		deflateEnd(&w->z);
	free(w->zbuf);
	free(w->dict);
	free(w);
}

long
watch_bad(const struct watch *w)
{
	return w->bad;
}

struct kube *
watch_kube(const struct watch *w)
{
	return w->k;
}

long
watch_lists(const struct watch *w)
{
	return __atomic_load_n(&w->lists, __ATOMIC_RELAXED);
}

static void
set_rv(struct watch *w, const char *rv)
{
	if (!rv || !*rv)
		return;
	free(w->rv);
	w->rv = estrdup(rv);
}

/* ---- the table ------------------------------------------------------- */

static const char *
meta(const json_t *obj, const char *key)
{
	return json_string_value(
		json_object_get(json_object_get(obj, "metadata"), key));
}

/* key_of returns the malloc'd table key of an object: its uid, else
 * namespace/name. */
static char *
key_of(const char *uid, const char *ns, const char *name)
{
	if (uid && *uid)
		return estrdup(uid);
	return easprintf("%s/%s", ns ? ns : "", name ? name : "");
}

/* uid_of is key_of for a parsed object. */
static char *
uid_of(const json_t *obj)
{
	return key_of(meta(obj, "uid"), meta(obj, "namespace"),
		meta(obj, "name"));
}

/* DICT_MAX is the window of the deflate stream: 16 KB (a larger
 * dictionary would not be seen whole), with 2^(6+7) hash heads, about
 * 100 KB of state in all. The stream is raw deflate: no header, and no
 * checksum to compute over dictionary and object each time. */
#define DICT_MAX 16384
#define WINDOW_BITS 14
#define MEM_LEVEL 6

/* pack stores the n bytes of JSON at js deflated into s. One stream is
 * reset for every object: setting one up costs more than deflating a
 * few KB at level 1. */
static void
pack(struct watch *w, struct seen *s, const char *js, size_t n)
{
	uLong bound;

	if (!w->z_ready) {
		if (deflateInit2(&w->z, 1, Z_DEFLATED, -WINDOW_BITS, MEM_LEVEL,
			    Z_DEFAULT_STRATEGY) != Z_OK)
			err_die(HAZ_FAIL, "zlib: cannot set up deflate");
		w->z_ready = 1;
		w->dictlen = n < DICT_MAX ? n : DICT_MAX;
		w->dict = emalloc(w->dictlen);
		memcpy(w->dict, js, w->dictlen);
	} else if (deflateReset(&w->z) != Z_OK) {
		err_die(HAZ_FAIL, "zlib: cannot reset deflate");
	}
	if (deflateSetDictionary(&w->z, (const Bytef *)w->dict,
		    (uInt)w->dictlen) != Z_OK)
		err_die(HAZ_FAIL, "zlib: cannot set the dictionary");
	bound = deflateBound(&w->z, n);
	if (bound > w->zcap) {
		w->zcap = bound;
		w->zbuf = erealloc(w->zbuf, bound);
	}
	w->z.next_in = (Bytef *)js;
	w->z.avail_in = (uInt)n;
	w->z.next_out = w->zbuf;
	w->z.avail_out = (uInt)w->zcap;
	if (deflate(&w->z, Z_FINISH) != Z_STREAM_END)
		err_die(HAZ_FAIL, "zlib: cannot compress an object");
	s->zlen = w->z.total_out;
	s->len = n;
	s->z = erealloc(s->z, s->zlen);
	memcpy(s->z, w->zbuf, s->zlen);
}

/* unfresh drops the fresh copy of s (not packing it). */
static void
unfresh(struct watch *w, struct seen *s)
{
	if (!s->raw)
		return;
	w->ring[s->slot % FRESH_MAX] = NULL;
	w->fresh_bytes -= s->len;
	free(s->raw);
	s->raw = NULL;
}

/* settle packs the oldest fresh object, if its slot is not empty. */
static void
settle(struct watch *w)
{
	struct seen *s = w->ring[w->head % FRESH_MAX];

	w->ring[w->head++ % FRESH_MAX] = NULL;
	if (!s)
		return;
	w->fresh_bytes -= s->len;
	pack(w, s, s->raw, s->len);
	free(s->raw);
	s->raw = NULL;
}

/* keep makes the n bytes of JSON at js what s holds, fresh. */
static void
keep(struct watch *w, struct seen *s, const char *js, size_t n)
{
	unfresh(w, s);
	free(s->z);
	s->z = NULL;
	s->zlen = 0;
	while (w->head != w->tail &&
		(w->tail - w->head >= FRESH_MAX ||
			w->fresh_bytes + n > FRESH_BYTES))
		settle(w);
	s->raw = emalloc(n);
	memcpy(s->raw, js, n);
	s->len = n;
	s->slot = w->tail++;
	w->ring[s->slot % FRESH_MAX] = s;
	w->fresh_bytes += n;
}

/* unpack returns the malloc'd JSON s holds. */
static char *
unpack(const struct watch *w, const struct seen *s)
{
	char *js = emalloc(s->len + 1);
	z_stream z = {0};
	int rc;

	if (s->raw) {
		memcpy(js, s->raw, s->len);
		js[s->len] = '\0';
		return js;
	}
	if (inflateInit2(&z, -WINDOW_BITS) != Z_OK ||
		inflateSetDictionary(&z, (const Bytef *)w->dict,
			(uInt)w->dictlen) != Z_OK)
		err_die(HAZ_FAIL, "zlib: cannot set up inflate");
	z.next_in = s->z;
	z.avail_in = (uInt)s->zlen;
	z.next_out = (Bytef *)js;
	z.avail_out = (uInt)s->len;
	rc = inflate(&z, Z_FINISH);
	if (rc != Z_STREAM_END || z.total_out != s->len)
		err_die(HAZ_FAIL, "zlib: cannot expand an object");
	inflateEnd(&z);
	js[s->len] = '\0';
	return js;
}

/* deliver hands one event to the consumer, parsing o for one that wants
 * jansson objects if it is not parsed yet. */
static void
deliver(struct watch *w, const char *type, const struct obj *o)
{
	json_error_t jerr;
	json_t *dom = o->dom;

	if (w->stopped)
		return;
	if (w->raw) {
		w->stopped = w->raw(type, o->js, o->len, w->arg);
		return;
	}
	if (!dom && !(dom = jl_loadb(o->js, o->len, 0, &jerr)))
		err_die(HAZ_FAIL, "json_loadb: %s", jerr.text);
	w->stopped = w->fn(type, dom, w->arg);
	if (dom != o->dom)
		json_decref(dom);
}

/* emit records o as the consumer's latest view and hands the event on,
 * unless it repeats what the consumer already has. */
static void
emit(struct watch *w, const char *type, const struct obj *o)
{
	char *uid = key_of(o->uid, o->ns, o->name);
	struct seen *s = hm_get(w->known, uid);
	size_t nslen;

	if (strcmp(type, "DELETED") == 0) {
		if (s) {
			unfresh(w, s);
			hm_del(w->known, uid);
			deliver(w, type, o);
		}
	} else if (!s || !o->rv || strcmp(s->rv, o->rv) != 0) {
		if (!s) {
			nslen = strlen(o->ns ? o->ns : "") +
				strlen(o->name ? o->name : "") + 2;
			s = ecalloc(1, sizeof *s + nslen + strlen(uid) + 1);
			snprintf(s->ids, nslen, "%s/%s", o->ns ? o->ns : "",
				o->name ? o->name : "");
			s->uid = strcpy(s->ids + nslen, uid);
			hm_put(w->known, uid, s);
		}
		free(s->rv);
		s->rv = estrdup(o->rv ? o->rv : "");
		if (!w->o.no_last)
			keep(w, s, o->js, o->len);
		deliver(w, type, o);
	}
	free(uid);
}

static int
by_key(const void *a, const void *b)
{
	const struct seen *x = *(struct seen *const *)a;
	const struct seen *y = *(struct seen *const *)b;

	return strcmp(x->ids, y->ids);
}

/* stub returns the malloc'd JSON of what is known of s without its
 * last state: {"metadata":{"namespace","name","uid","resourceVersion"}}. */
static char *
stub(const struct seen *s)
{
	const char *slash = strchr(s->ids, '/');
	json_t *md = json_object(), *o;
	char *js;

	if (slash > s->ids)
		json_object_set_new(md, "namespace",
			json_stringn(s->ids, (size_t)(slash - s->ids)));
	json_object_set_new(md, "name", json_string(slash ? slash + 1 : ""));
	if (strchr(s->uid, '/') == NULL)
		json_object_set_new(md, "uid", json_string(s->uid));
	json_object_set_new(md, "resourceVersion", json_string(s->rv));
	o = json_pack("{s:o}", "metadata", md);
	js = jb_dumps(o);
	json_decref(o);
	return js;
}

/* emit_gone emits DELETED, in namespace/name order, for every known
 * object whose uid is not in present, with the last state emitted. */
static void
emit_gone(struct watch *w, struct hm *present)
{
	struct seen **gone = ecalloc(hm_len(w->known), sizeof *gone);
	const char *uid;
	void *val;
	size_t pos = 0, n = 0, i;
	struct obj o = {0};
	char *js;

	while (hm_next(w->known, &pos, &uid, &val))
		if (!hm_get(present, uid))
			gone[n++] = val;
	if (n > 1)
		qsort(gone, n, sizeof *gone, by_key);
	for (i = 0; i < n && !w->stopped; i++) {
		o.js = js = w->o.no_last ? stub(gone[i]) : unpack(w, gone[i]);
		o.len = w->o.no_last ? strlen(js) : gone[i]->len;
		hm_take(w->known, gone[i]->uid);
		unfresh(w, gone[i]);
		deliver(w, "DELETED", &o);
		seen_free(gone[i]);
		free(js);
	}
	free(gone);
}

/* ---- listing --------------------------------------------------------- */

/* listing is the state of one list: the uids it has met. */
struct listing {
	struct watch *w;
	struct hm *present;
};

/* list_item records and emits one listed object. */
static int
list_item(json_t *item, void *arg)
{
	struct listing *l = arg;
	struct watch *w = l->w;
	struct obj o = {NULL, 0, item, meta(item, "uid"),
		meta(item, "namespace"), meta(item, "name"),
		meta(item, "resourceVersion")};
	char *uid = uid_of(item), *js;
	const struct seen *s = hm_get(w->known, uid);

	hm_put(l->present, uid, l);
	free(uid);
	/* the version known: emit would pass it over, so it is not written
	 * out (most of what a relist of a large collection costs) */
	if (s && o.rv && !strcmp(s->rv, o.rv))
		return w->stopped;
	js = jb_dumps(item);
	o.js = js;
	o.len = strlen(js);
	emit(w, s ? "MODIFIED" : "ADDED", &o);
	free(js);
	return w->stopped;
}

/* list_restart forgets what a list met before it started over. */
static void
list_restart(void *arg)
{
	struct listing *l = arg;

	hm_free(l->present);
	l->present = hm_new(NULL);
}

/* with_selectors returns the malloc'd path plus the selectors. */
static char *
with_selectors(const struct watch *w)
{
	char *p = estrdup(w->o.path);

	if (w->o.label_selector)
		kube_query(&p, "labelSelector", w->o.label_selector);
	if (w->o.field_selector)
		kube_query(&p, "fieldSelector", w->o.field_selector);
	return p;
}

int
watch_list(struct watch *w, struct kube_error *e)
{
	char *path = with_selectors(w), *rv;
	struct listing l = {w, hm_new(NULL)};
	int rc;

	rc = kube_list_each(w->k, path, w->o.page_limit, list_item,
		list_restart, &l, &rv, e);
	free(path);
	if (rc < 0 && !w->stopped) {
		hm_free(l.present);
		return -1;
	}
	__atomic_add_fetch(&w->lists, 1, __ATOMIC_RELAXED);
	if (!w->stopped)
		emit_gone(w, l.present);
	hm_free(l.present);
	if (rc == 0) {
		set_rv(w, rv);
		free(rv);
	}
	return 0;
}

/* ---- watching -------------------------------------------------------- */

static void
bad_line(struct kube_error *e, const struct watch *w, long lineno,
	long long offset, const char *why)
{
	e->kind = KUBE_EBADDATA;
	e->status = 0;
	e->reason[0] = '\0';
	snprintf(e->msg, sizeof e->msg, "%s: line %ld at byte %lld: %s",
		w->source, lineno, offset, why);
}

/* error_event fills e from the Status st of a watch ERROR event. */
static void
error_event(struct kube_error *e, const struct watch *w, long lineno,
	long long offset, int st)
{
	const struct js_doc *d = &w->doc;
	char *msg = js_raw_str(d, js_raw_get(d, st, "message"));
	char *reason = js_raw_str(d, js_raw_get(d, st, "reason"));
	int c = js_raw_get(d, st, "code");
	long code = c >= 0 && d->t[c].type == JS_INT ? (long)d->t[c].i : 0;

	e->kind = code == 410                ? KUBE_EGONE
		: code == 429 || code >= 500 ? KUBE_ETEMP
					     : KUBE_EAPI;
	e->status = code;
	snprintf(e->reason, sizeof e->reason, "%s", reason ? reason : "");
	snprintf(e->msg, sizeof e->msg,
		"%s: line %ld at byte %lld: watch error %ld: %s", w->source,
		lineno, offset, code, msg ? msg : "(no message)");
	free(msg);
	free(reason);
}

/* bad_json fills e for a line js_scan did not take for an object (scanned
 * says whether it took it at all): jansson's words say best what is
 * wrong, and a top-level array is JSON but no event. Returns 1. */
static int
bad_json(struct watch *w, char *line, size_t len, long long offset, long lineno,
	int scanned, struct kube_error *e)
{
	json_error_t jerr;
	json_t *ev = json_loadb(line, len, 0, &jerr);
	char why[256];

	if (!ev)
		snprintf(why, sizeof why, "invalid JSON: %s", jerr.text);
	else if (!scanned)
		snprintf(why, sizeof why, "invalid JSON: %s at column %d",
			w->doc.err, w->doc.errcol);
	else
		snprintf(why, sizeof why, "not a watch event");
	w->got_line = ev != NULL;
	json_decref(ev);
	bad_line(e, w, lineno, offset, why);
	return 1;
}

/* stream_event emits the ADDED, MODIFIED or DELETED event whose object
 * is token ob of w->doc, passing on its bytes (compacted, if the line
 * was not), and follows its resourceVersion. Returns 0, or 1 with e
 * filled when a consumer of jansson objects cannot have this one. */
static int
stream_event(struct watch *w, const char *type, int ob, long long offset,
	long lineno, struct kube_error *e)
{
	const struct js_doc *d = &w->doc;
	int m = js_raw_get(d, ob, "metadata");
	char *uid = js_raw_str(d, js_raw_get(d, m, "uid"));
	char *ns = js_raw_str(d, js_raw_get(d, m, "namespace"));
	char *name = js_raw_str(d, js_raw_get(d, m, "name"));
	char *rv = js_raw_str(d, js_raw_get(d, m, "resourceVersion"));
	struct obj o = {d->t[ob].s, d->t[ob].len, NULL, uid, ns, name, rv};
	char *compact = NULL, why[256];
	json_error_t jerr;
	int ret = 0;

	if (d->spaced) {
		o.js = compact = emalloc(o.len);
		o.len = js_compact(d->t[ob].s, d->t[ob].len, compact);
	}
	if (!w->raw && !(o.dom = jl_loadb(o.js, o.len, 0, &jerr))) {
		snprintf(why, sizeof why, "invalid JSON: %s", jerr.text);
		bad_line(e, w, lineno, offset, why);
		ret = 1;
	} else {
		emit(w, type, &o);
		set_rv(w, rv);
	}
	json_decref(o.dom);
	free(compact);
	free(uid);
	free(ns);
	free(name);
	free(rv);
	return ret;
}

/* on_line handles one line of a watch stream, live or replayed: it emits
 * the event, follows its resourceVersion, or returns nonzero with e
 * filled for a line that is no event (KUBE_EBADDATA) or an ERROR event.
 * The line is checked by js_scan, and not parsed further than the
 * members named here. */
static int
on_line(char *line, size_t len, long long offset, long lineno, void *arg,
	struct kube_error *e)
{
	static const char *const kinds[] = {"ADDED", "MODIFIED", "DELETED"};
	struct watch *w = arg;
	const struct js_doc *d = &w->doc;
	int scanned = js_scan(&w->doc, line, len) == 0, ty, ob, m;
	char why[256], *s;
	size_t i;

	if (!scanned || d->t[0].type != JS_OBJECT)
		return bad_json(w, line, len, offset, lineno, scanned, e);
	w->got_line = 1;
	if (d->nul || d->bignum) {
		/* names that C strings would cut, numbers no reader keeps */
		bad_line(e, w, lineno, offset,
			d->nul ? "a string holds \\u0000, which no object may carry"
			       : "a number out of range");
		return 1;
	}
	ty = js_raw_get(d, 0, "type");
	ob = js_raw_get(d, 0, "object");
	if (ty < 0 || d->t[ty].type != JS_STRING || ob < 0 ||
		d->t[ob].type != JS_OBJECT) {
		bad_line(e, w, lineno, offset, "not a watch event");
		return 1;
	}
	for (i = 0; i < sizeof kinds / sizeof *kinds; i++)
		if (js_raw_eq(d, ty, kinds[i]))
			return stream_event(w, kinds[i], ob, offset, lineno,
				       e) ||
				w->stopped;
	if (js_raw_eq(d, ty, "ERROR")) {
		error_event(e, w, lineno, offset, ob);
		return 1;
	}
	if (js_raw_eq(d, ty, "BOOKMARK")) {
		m = js_raw_get(d, ob, "metadata");
		s = js_raw_str(d, js_raw_get(d, m, "resourceVersion"));
		set_rv(w, s);
		free(s);
		return 0;
	}
	s = js_raw_str(d, ty);
	snprintf(why, sizeof why, "unknown event type \"%.64s\"", s);
	free(s);
	bad_line(e, w, lineno, offset, why);
	return 1;
}

/* stream_once opens one watch from w->rv and reads it to its end. */
static int
stream_once(struct watch *w, struct kube_error *e)
{
	char *path = with_selectors(w), *url, secs[16];
	int ret;

	kube_query(&path, "watch", "1");
	kube_query(&path, "allowWatchBookmarks", "true");
	if (w->rv)
		kube_query(&path, "resourceVersion", w->rv);
	snprintf(secs, sizeof secs, "%d", 300 + rand() % 300);
	kube_query(&path, "timeoutSeconds", secs);
	url = kube_url(w->k, path);
	free(w->source);
	w->source = easprintf("GET %s", url);
	if (w->o.verbose)
		err_warn("watching %s", url);
	free(url);
	w->got_line = 0;
	ret = kube_stream(w->k, path, on_line, w, e);
	free(path);
	return ret;
}

/* pause sleeps s seconds, or until the deadline; returns -1 at the
 * deadline. */
static int
pause_for(struct watch *w, double s)
{
	double left = kube_seconds_left(w->k);
	struct timespec ts;

	if (left <= 0)
		return -1;
	if (s > left)
		s = left;
	ts.tv_sec = (time_t)s;
	ts.tv_nsec = (long)((s - (double)ts.tv_sec) * 1e9);
	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
	return kube_seconds_left(w->k) <= 0 ? -1 : 0;
}

struct retry {
	double backoff;       /* next pause */
	double failing_since; /* 0 while things work */
};

/* retry_after handles a failed list or stream: waits and returns 0 to try
 * again, or -1 to give up with e as it is. */
static int
retry_after(struct watch *w, struct retry *r, struct kube_error *e)
{
	double wait;

	if (e->kind != KUBE_ETEMP && e->kind != KUBE_EBADDATA)
		return -1;
	if (e->kind == KUBE_EBADDATA)
		w->bad++;
	if (!r->failing_since)
		r->failing_since = clock_mono();
	else if (clock_mono() - r->failing_since > w->o.give_up)
		return -1;
	wait = r->backoff * (0.75 + (rand() % 1000) / 2000.0);
	err_warn("%s: retrying in %.1f s", e->msg, wait);
	r->backoff = r->backoff * 2 > BACKOFF_MAX ? BACKOFF_MAX
						  : r->backoff * 2;
	if (pause_for(w, wait) < 0) {
		e->kind = KUBE_EDEADLINE;
		return -1;
	}
	return 0;
}

/* quiet_pause backs off before reopening a stream that ended cleanly
 * without a single line, so an empty answer cannot make a busy loop. */
static int
quiet_pause(struct watch *w, struct retry *r, struct kube_error *e)
{
	double wait = r->backoff * (0.75 + (rand() % 1000) / 2000.0);

	r->backoff = r->backoff * 2 > BACKOFF_MAX ? BACKOFF_MAX
						  : r->backoff * 2;
	if (pause_for(w, wait) < 0) {
		e->kind = KUBE_EDEADLINE;
		return -1;
	}
	return 0;
}

int
watch_run(struct watch *w, struct kube_error *e)
{
	struct retry r = {BACKOFF_MIN, 0};
	int relist = !w->rv, listed, ret;

	srand((unsigned)time(NULL) ^ (unsigned)getpid());
	while (!w->stopped) {
		listed = relist;
		w->got_line = 0;
		ret = listed ? watch_list(w, e) : stream_once(w, e);
		if (w->stopped)
			break;
		if ((listed && ret == 0) || w->got_line)
			r = (struct retry){BACKOFF_MIN, 0};
		if (listed && ret == 0)
			relist = 0;
		if (ret == 0 && !listed && !w->got_line &&
			quiet_pause(w, &r, e) < 0)
			return -1;
		if (ret == 0)
			continue;
		if (e->kind == KUBE_EGONE) {
			if (w->o.verbose)
				err_warn("%s: listing again", e->msg);
			relist = 1;
			continue;
		}
		if (retry_after(w, &r, e) < 0)
			return -1;
	}
	memset(e, 0, sizeof *e);
	return 0;
}

/* ---- replaying ------------------------------------------------------- */

/* replay_line runs on_line, then does for a bad line or an ERROR event
 * what a live watch would do if it could not reconnect or list again:
 * warns, counts it, and goes on. */
static int
replay_line(char *line, size_t len, long long offset, long lineno, void *arg,
	struct kube_error *e)
{
	struct watch *w = arg;

	if (on_line(line, len, offset, lineno, w, e) == 0 || w->stopped)
		return w->stopped;
	err_warn("%s", e->msg);
	w->bad++;
	memset(e, 0, sizeof *e);
	return 0;
}

int
watch_replay(struct watch *w, int fd, const char *name, struct kube_error *e)
{
	struct kube_lines *lines = kube_lines_new(name, replay_line, w);
	char buf[65536], *p;
	size_t left, used;
	ssize_t n;
	int ret = 0;

	memset(e, 0, sizeof *e);
	free(w->source);
	w->source = estrdup(name);
	while (!w->stopped && (n = read(fd, buf, sizeof buf)) != 0) {
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			e->kind = KUBE_EFAIL;
			snprintf(e->msg, sizeof e->msg, "%s: read error: %s",
				name, strerror(errno));
			ret = -1;
			break;
		}
		for (p = buf, left = (size_t)n; left && !w->stopped;
			p += used, left -= used)
			if (kube_lines_feed(lines, p, left, &used, e) < 0 &&
				e->kind == KUBE_EBADDATA) {
				err_warn("%s", e->msg);
				w->bad++;
				memset(e, 0, sizeof *e);
			}
	}
	if (ret == 0 && !w->stopped && kube_lines_end(lines, e) < 0) {
		err_warn("%s", e->msg);
		w->bad++;
	}
	if (ret == 0) {
		memset(e, 0, sizeof *e);
		if (w->o.verbose)
			err_warn("%s: a watch would resume from "
				 "resourceVersion %s",
				name, w->rv ? w->rv : "(none)");
	}
	kube_lines_free(lines);
	return ret;
}
