/* watch: list + watch with resume, relist on 410, and a uid table to emit
 * exactly the changes a consumer has not seen. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <zlib.h>

#include "err.h"
#include "hmap.h"
#include "kube.h"
#include "watch.h"

#define BACKOFF_MIN 0.5
#define BACKOFF_MAX 16.0

/* seen is what the consumer last got for one object. The object is kept
 * as compact JSON squeezed with zlib, a small fraction of the memory of
 * its parsed form; it is unpacked only for a DELETED after a relist. */
struct seen {
	char *key;  /* namespace/name, for ordering DELETED */
	char *rv;
	unsigned char *z; /* deflated compact JSON */
	size_t zlen, len; /* its size, and the size of the JSON */
};

struct watch {
	struct kube *k;
	struct watch_opts o;
	watch_emit_fn *fn;
	void *arg;
	struct hm *known;  /* uid -> struct seen */
	char *rv;          /* resume point; NULL before the first list */
	char *source;      /* "GET URL" of the stream read, or a file name */
	const char *json;  /* the event's object as compact JSON, while fn runs */
	int stopped;       /* the emit function said stop */
	int got_line;      /* the current stream delivered something */
	long bad;
};

static void
seen_free(void *p)
{
	struct seen *s = p;

	if (!s)
		return;
	free(s->key);
	free(s->rv);
	free(s->z);
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

void
watch_free(struct watch *w)
{
	if (!w)
		return;
	hm_free(w->known);
	free(w->rv);
	free(w->source);
	free(w);
}

long
watch_bad(const struct watch *w)
{
	return w->bad;
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
	return json_string_value(json_object_get(json_object_get(obj,
		"metadata"), key));
}

/* uid_of returns the table key of obj: its uid, else namespace/name. */
static char *
uid_of(const json_t *obj)
{
	const char *uid = meta(obj, "uid"), *ns = meta(obj, "namespace");
	const char *name = meta(obj, "name");

	if (uid && *uid)
		return estrdup(uid);
	return easprintf("%s/%s", ns ? ns : "", name ? name : "");
}

/* emit records obj as the consumer's latest view and hands the event on,
 * unless it repeats what the consumer already has. */
/* pack stores js, the compact JSON of an object, deflated into s. */
static void
pack(struct seen *s, const char *js)
{
	uLongf n;

	s->len = strlen(js);
	n = compressBound(s->len);
	free(s->z);
	s->z = emalloc(n);
	if (compress2(s->z, &n, (const Bytef *)js, s->len, 1) != Z_OK)
		err_die(HAZ_FAIL, "zlib: cannot compress an object");
	s->z = erealloc(s->z, n);
	s->zlen = n;
}

/* unpack returns the object s holds, parsed. */
static json_t *
unpack(const struct seen *s)
{
	char *js = emalloc(s->len + 1);
	uLongf n = s->len;
	json_t *obj;

	if (uncompress((Bytef *)js, &n, s->z, s->zlen) != Z_OK || n != s->len)
		err_die(HAZ_FAIL, "zlib: cannot expand an object");
	js[n] = '\0';
	if (!(obj = json_loadb(js, n, 0, NULL)))
		err_die(HAZ_FAIL, "json_loads: out of memory");
	free(js);
	return obj;
}

const char *
watch_json(const struct watch *w)
{
	return w->json;
}

/* deliver hands one event to the consumer, with its object's compact
 * JSON js available through watch_json meanwhile. */
static void
deliver(struct watch *w, const char *type, json_t *obj, const char *js)
{
	w->json = js;
	w->stopped = w->stopped || w->fn(type, obj, w->arg);
	w->json = NULL;
}

static void
emit(struct watch *w, const char *type, json_t *obj)
{
	char *uid = uid_of(obj);
	const char *rv = meta(obj, "resourceVersion"), *ns, *name;
	struct seen *s = hm_get(w->known, uid);

	char *js;

	if (strcmp(type, "DELETED") == 0) {
		if (s) {
			hm_del(w->known, uid);
			w->stopped = w->stopped || w->fn(type, obj, w->arg);
		}
	} else if (!s || !rv || !s->rv || strcmp(s->rv, rv) != 0) {
		if (!s) {
			s = ecalloc(1, sizeof *s);
			ns = meta(obj, "namespace");
			name = meta(obj, "name");
			s->key = easprintf("%s/%s", ns ? ns : "", name ? name : "");
			hm_put(w->known, uid, s);
		}
		free(s->rv);
		s->rv = estrdup(rv ? rv : "");
		if (!(js = json_dumps(obj, JSON_COMPACT)))
			err_die(HAZ_FAIL, "json_dumps: out of memory");
		pack(s, js);
		deliver(w, type, obj, js);
		free(js);
	}
	free(uid);
}

static int
by_key(const void *a, const void *b)
{
	const struct seen *x = *(struct seen *const *)a;
	const struct seen *y = *(struct seen *const *)b;

	return strcmp(x->key, y->key);
}

/* emit_gone emits DELETED, in namespace/name order, for every known
 * object whose uid is not in present. */
static void
emit_gone(struct watch *w, struct hm *present)
{
	struct seen **gone = ecalloc(hm_len(w->known), sizeof *gone);
	const char *uid;
	void *val;
	size_t pos = 0, n = 0, i;

	while (hm_next(w->known, &pos, &uid, &val))
		if (!hm_get(present, uid))
			gone[n++] = val;
	qsort(gone, n, sizeof *gone, by_key);
	for (i = 0; i < n && !w->stopped; i++) {
		json_t *obj = unpack(gone[i]);

		emit(w, "DELETED", obj);
		json_decref(obj);
	}
	free(gone);
}

/* ---- listing --------------------------------------------------------- */

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
	char *path = with_selectors(w), *rv, *uid;
	json_t *items, *item;
	struct hm *present;
	size_t i;
	int known;

	if (kube_list(w->k, path, w->o.page_limit, &items, &rv, e) < 0) {
		free(path);
		return -1;
	}
	free(path);
	present = hm_new(NULL);
	json_array_foreach(items, i, item) {
		uid = uid_of(item);
		known = hm_get(w->known, uid) != NULL;
		hm_put(present, uid, item);
		free(uid);
		if (!w->stopped)
			emit(w, known ? "MODIFIED" : "ADDED", item);
	}
	if (!w->stopped)
		emit_gone(w, present);
	hm_free(present);
	json_decref(items);
	set_rv(w, rv);
	free(rv);
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

/* error_event fills e from the Status of a watch ERROR event. */
static void
error_event(struct kube_error *e, const struct watch *w, long lineno,
	long long offset, const json_t *st)
{
	const char *msg = json_string_value(json_object_get(st, "message"));
	const char *reason = json_string_value(json_object_get(st, "reason"));
	long code = (long)json_integer_value(json_object_get(st, "code"));

	e->kind = code == 410 ? KUBE_EGONE
		: code == 429 || code >= 500 ? KUBE_ETEMP : KUBE_EAPI;
	e->status = code;
	snprintf(e->reason, sizeof e->reason, "%s", reason ? reason : "");
	snprintf(e->msg, sizeof e->msg,
		"%s: line %ld at byte %lld: watch error %ld: %s", w->source,
		lineno, offset, code, msg ? msg : "(no message)");
}

/* on_line handles one line of a watch stream, live or replayed: it emits
 * the event, follows its resourceVersion, or returns nonzero with e
 * filled for a line that is no event (KUBE_EBADDATA) or an ERROR event. */
static int
on_line(char *line, size_t len, long long offset, long lineno, void *arg,
	struct kube_error *e)
{
	struct watch *w = arg;
	json_error_t jerr;
	json_t *ev = json_loadb(line, len, 0, &jerr), *obj;
	const char *type = json_string_value(json_object_get(ev, "type"));
	char why[256];
	int stop = 0;

	obj = json_object_get(ev, "object");
	if (!ev) {
		snprintf(why, sizeof why, "invalid JSON: %s", jerr.text);
		bad_line(e, w, lineno, offset, why);
		return 1;
	}
	w->got_line = 1;
	if (!type || !json_is_object(obj)) {
		bad_line(e, w, lineno, offset, "not a watch event");
		stop = 1;
	} else if (strcmp(type, "ERROR") == 0) {
		error_event(e, w, lineno, offset, obj);
		stop = 1;
	} else if (strcmp(type, "BOOKMARK") == 0) {
		set_rv(w, meta(obj, "resourceVersion"));
	} else if (!strcmp(type, "ADDED") || !strcmp(type, "MODIFIED") ||
		!strcmp(type, "DELETED")) {
		emit(w, type, obj);
		set_rv(w, meta(obj, "resourceVersion"));
		stop = w->stopped;
	} else {
		snprintf(why, sizeof why, "unknown event type \"%.64s\"", type);
		bad_line(e, w, lineno, offset, why);
		stop = 1;
	}
	json_decref(ev);
	return stop;
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

static double
now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
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
	double backoff;      /* next pause */
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
		r->failing_since = now();
	else if (now() - r->failing_since > w->o.give_up)
		return -1;
	wait = r->backoff * (0.75 + (rand() % 1000) / 2000.0);
	err_warn("%s: retrying in %.1f s", e->msg, wait);
	r->backoff = r->backoff * 2 > BACKOFF_MAX ? BACKOFF_MAX : r->backoff * 2;
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

	r->backoff = r->backoff * 2 > BACKOFF_MAX ? BACKOFF_MAX : r->backoff * 2;
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
replay_line(char *line, size_t len, long long offset, long lineno,
	void *arg, struct kube_error *e)
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
