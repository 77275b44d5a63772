/* cache-sync: make this node's cache match the plan: container images
 * in the runtime's store, git checkouts and Hugging Face models on disk.
 *
 * usage: cache-sync [-nu] [-d dir] [-s socket] [-b budget] [-f min-free]
 *                   [-j jobs] [-w workers] [-t seconds] [-p seconds]
 *                   [-r retries] [-a authfile] [-l labels] [file ...]
 *
 * Input: plan items, one JSON object per line (a CachePlan's
 * spec.items[]): {name, type image|gitRepo|models|hfModel, image{ref,
 * pullSecret}, gitRepo{url, branch, commit, pathName, syncStrategy},
 * models{repoId, revision}, scope, nodeSelector, update, force}.
 *
 * Output: status records, one per line, flushed each: first one per
 * item with its state as found (so a status built from the stream never
 * lacks an item), then progress ("pulling", at most one per item per -p
 * seconds), then each item's final record ("ready" or "failed", with a
 * reason a user can act on), then "removed" for what left the plan, and
 * last a summary with the disk figures. The shapes are in cache-sync(1).
 *
 * What is held is recorded in DIR/.k8shazgpu/state.json, so a restart
 * knows what it has, what it pulled and what to remove; one cache-sync
 * runs per directory at a time (DIR/.k8shazgpu/lock).
 *
 * Before each download the disk is checked: the budget (-b) against the
 * bytes the cache holds plus what the item needs, the free space left
 * for others (-f) against the file system's; sizes not known in advance
 * (git, images) are checked while the transfer runs and after it. A
 * failed sync leaves what the item held before as it was.
 *
 * Exit: 0 every item ready; 1 an item failed, a bad record, or a state
 * file that could not be written; 2 usage; 75 another cache-sync holds
 * the directory (try again later). */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "ck.h"
#include "cri.h"
#include "err.h"
#include "gitsync.h"
#include "hf.h"
#include "http.h"
#include "nd.h"
#include "quantity.h"

#define USAGE                                                                  \
	"usage: cache-sync [-nu] [-d dir] [-s socket] [-b budget] "            \
	"[-f min-free] [-j jobs]\n"                                            \
	"                  [-w workers] [-t seconds] [-p seconds] "            \
	"[-r retries]\n"                                                       \
	"                  [-a authfile] [-l labels] [file ...]\n"

#define DEFAULT_DIR "/var/lib/canhazgpu-cache"

static void
help(void)
{
	fputs(USAGE, stdout);
	puts("  -d DIR       the cache directory (default " DEFAULT_DIR ")\n"
	     "  -s SOCKET    the container runtime's CRI socket (default\n"
	     "               containerd's, else CRI-O's)\n"
	     "  -b BUDGET    most bytes the cache may hold, a quantity (100Gi);\n"
	     "               default no limit\n"
	     "  -f MIN-FREE  free space to leave on the file system, a quantity\n"
	     "               or a percentage (default 10%)\n"
	     "  -j JOBS      items synced at once (default 2; images one at a "
	     "time)\n"
	     "  -t SECONDS   a transfer with no progress for this long fails\n"
	     "               (default 300)\n"
	     "  -w WORKERS   a model's files and ranges downloaded at once\n"
	     "               (default 8)\n"
	     "  -p SECONDS   progress records per item at most this often "
	     "(default 2)\n"
	     "  -r RETRIES   further attempts after a transient failure "
	     "(default 2)\n"
	     "  -a AUTHFILE  pull secrets: {\"name\": dockerconfigjson, ...}\n"
	     "  -l LABELS    the node's labels, a JSON object, for items with a\n"
	     "               nodeSelector (default: every item is for this "
	     "node)\n"
	     "  -u           refresh moving refs: fetch branches, resolve\n"
	     "               revisions, pull tags again\n"
	     "  -n           report what is held and what would be done; change\n"
	     "               nothing\n"
	     "HF_ENDPOINT and HF_TOKEN are read from the environment.");
}

enum kind { K_IMAGE, K_GIT, K_MODEL };
static const char *const kind_name[] = {"image", "gitRepo", "models"};

struct opts {
	const char *dir, *sock, *authfile;
	int64_t budget;   /* 0: none */
	int64_t min_free; /* bytes; or percent when min_free_pct */
	int min_free_pct;
	int jobs, workers, timeout, period, retries, refresh, dry;
	json_t *labels, *auths;
	char *endpoint, *token;
};

/* One plan item and, while it syncs, its job. */
struct item {
	json_t *spec; /* the plan's record */
	enum kind kind;
	const char *name;
	char *key;   /* what the plan names, canonical: ref, url@branch... */
	char *shown; /* the ref shown in status (no credentials) */
	char *path;  /* git: DIR/pathName; models: the repo dir */
	const char *ref, *url, *branch, *commit, *path_name, *repo, *rev;
	const char *secret;
	const char *update;
	int force, invalid;
	char why[256]; /* why invalid */
	/* the job */
	int todo;
	struct ck_result res;
	int attempts;
	enum ck_reason stop; /* set by the progress callback */
	char stop_msg[512];
	time_t last_progress;
	uint64_t done, total;
	uint64_t base; /* bytes of done already held before this sync */
	int files;
	int pulled;         /* images: this tool pulled it (GC may remove) */
	char pin_note[512]; /* images: why not pinned */
};

static struct opts o = {
	.dir = DEFAULT_DIR,
	.min_free = 10,
	.min_free_pct = 1,
	.jobs = 2,
	.workers = 8,
	.timeout = 300,
	.period = 2,
	.retries = 2,
};
static struct item *items;
static size_t nitems;
static json_t *state; /* {"items": {name: {...}}, "firstSync": ...} */
static char *state_path, *hub;
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t image_mu = PTHREAD_MUTEX_INITIALIZER;
static size_t next_job;
static int state_failed;

static const char *
str_at(json_t *obj, const char *key)
{
	const char *s = json_string_value(json_object_get(obj, key));
	return s && *s ? s : NULL;
}

/* ---- records ---- */

static void
now_rfc3339(char *buf, size_t n)
{
	time_t t = time(NULL);
	struct tm tm;

	gmtime_r(&t, &tm);
	strftime(buf, n, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

static json_t *
held(const char *name)
{
	return json_object_get(json_object_get(state, "items"), name);
}

static const char *
held_str(const char *name, const char *field)
{
	const char *s = json_string_value(json_object_get(held(name), field));
	return s ? s : "";
}

static uint64_t
held_int(const char *name, const char *field)
{
	return (uint64_t)json_integer_value(json_object_get(held(name), field));
}

/* emit writes it's status record with phase; the figures come from the
 * job while it runs and from the state otherwise. Called under mu. */
static void
emit(struct item *it, const char *phase)
{
	json_t *h = held(it->name), *r;
	const char *type = kind_name[it->kind];

	if (it->invalid) /* as the plan says it, unknown ones included */
		type = str_at(it->spec, "type") ? str_at(it->spec, "type") : "";
	uint64_t bytes = held_int(it->name, "bytes");
	const char *msg = it->res.message;

	r = json_pack("{s:s, s:s, s:s, s:s, s:s, s:b}", "name", it->name,
		"type", type, "phase", phase, "ref", it->shown ? it->shown : "",
		"resolved", held_str(it->name, "resolved"), "present",
		h && json_is_true(json_object_get(h, "present")));
	if (it->path && it->kind == K_GIT)
		json_object_set_new(r, "path", json_string(it->path));
	if (it->kind == K_MODEL && *held_str(it->name, "resolved"))
		json_object_set_new(r, "path",
			json_sprintf("%s/snapshots/%s", it->path,
				held_str(it->name, "resolved")));
	if (!strcmp(phase, "pulling")) {
		json_object_set_new(r, "bytesDone", json_integer(it->done));
		json_object_set_new(r, "bytesTotal", json_integer(it->total));
	} else {
		json_object_set_new(r, "bytesDone", json_integer(bytes));
		json_object_set_new(r, "bytesTotal", json_integer(bytes));
	}
	json_object_set_new(r, "attempts",
		json_integer(it->todo
				? it->attempts
				: (json_int_t)held_int(it->name, "attempts")));
	json_object_set_new(r, "lastSync",
		json_string(held_str(it->name, "lastSync")));
	/* a record of the state as found says what the state says */
	int found = !it->todo && !it->invalid;
	if (!strcmp(phase, "failed")) {
		json_object_set_new(r, "reason",
			json_string(found ? held_str(it->name, "reason")
					  : ck_reason_name(it->res.reason)));
	} else {
		json_object_set_new(r, "reason", json_string(""));
		if (strcmp(phase, "ready"))
			msg = "";
	}
	if (found && strcmp(phase, "pending"))
		msg = held_str(it->name, "message");
	json_object_set_new(r, "message", json_string(msg));
	if (it->kind == K_IMAGE && json_object_get(h, "pinned")) {
		json_object_set(r, "pinned", json_object_get(h, "pinned"));
		if (*held_str(it->name, "pinNote"))
			json_object_set_new(r, "pinNote",
				json_string(held_str(it->name, "pinNote")));
	}
	if (it->kind == K_GIT && held_int(it->name, "lfsPointers"))
		json_object_set_new(r, "lfsPointers",
			json_integer(held_int(it->name, "lfsPointers")));
	if (it->kind == K_MODEL && held_int(it->name, "files"))
		json_object_set_new(r, "files",
			json_integer(held_int(it->name, "files")));
	nd_write(r);
	json_decref(r);
}

/* ---- the state file ---- */

static void
state_load(void)
{
	json_error_t e;
	struct stat st;

	state = NULL;
	if (stat(state_path, &st) == 0) {
		state = json_load_file(state_path, 0, &e);
		if (!state ||
			!json_is_object(json_object_get(state, "items"))) {
			char *bad = easprintf("%s.bad", state_path);
			err_warn(
				"%s:%d: %s; kept as %s, starting from an empty "
				"state",
				state_path, e.line,
				state ? "no items object" : e.text, bad);
			rename(state_path, bad);
			free(bad);
			json_decref(state);
			state = NULL;
		}
	}
	if (!state)
		state = json_pack("{s:{}}", "items");
}

/* state_save writes the state atomically; called under mu. */
static void
state_save(void)
{
	char *s;

	if (o.dry)
		return;
	s = json_dumps(state, JSON_COMPACT | JSON_SORT_KEYS);
	if (!s || ck_write_atomic(state_path, s, strlen(s)) < 0) {
		err_warn("%s: cannot write:", state_path);
		state_failed = 1;
	}
	free(s);
}

/* ---- plan items ---- */

static int invalid(struct item *it, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static int
invalid(struct item *it, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(it->why, sizeof it->why, fmt, ap);
	va_end(ap);
	it->invalid = 1;
	return -1;
}

/* url_shown: url without a user:password@ part. */
static char *
url_shown(const char *url)
{
	const char *s = strstr(url, "://"), *at, *slash;

	if (!s)
		return estrdup(url);
	s += 3;
	slash = strchr(s, '/');
	at = strchr(s, '@');
	if (!at || (slash && at > slash))
		return estrdup(url);
	return easprintf("%.*s%s", (int)(s - url), url, at + 1);
}

static int
is_hex_commit(const char *s)
{
	size_t n = strlen(s);

	if (n != 40)
		return 0;
	return strspn(s, "0123456789abcdef") == n;
}

/* item_parse fills it from rec; an unusable item is marked invalid with
 * the reason (it is reported, never synced, and what it held is kept). */
static int
item_parse(struct item *it, json_t *rec)
{
	const char *type, *why;
	json_t *sub;
	char buf[256];

	it->spec = rec;
	it->name = str_at(rec, "name");
	it->update = str_at(rec, "update");
	it->force = json_is_true(json_object_get(rec, "force"));
	if (!it->name)
		return invalid(it, "the item has no name");
	if (!ck_name_ok(it->name))
		return invalid(it,
			"name \"%s\" is not usable: 1 to 253 of "
			"A-Z a-z 0-9 . _ -, not starting with . or -",
			it->name);
	type = str_at(rec, "type");
	if (!type)
		return invalid(it, "item %s has no type", it->name);
	if (!strcmp(type, "image")) {
		it->kind = K_IMAGE;
		sub = json_object_get(rec, "image");
		if (!(it->ref = str_at(sub, "ref")))
			return invalid(it, "image item %s has no image.ref",
				it->name);
		it->secret = str_at(sub, "pullSecret");
		it->key = estrdup(it->ref);
		it->shown = estrdup(it->ref);
	} else if (!strcmp(type, "gitRepo")) {
		it->kind = K_GIT;
		sub = json_object_get(rec, "gitRepo");
		if (!(it->url = str_at(sub, "url")))
			return invalid(it, "gitRepo item %s has no gitRepo.url",
				it->name);
		if (!(it->path_name = str_at(sub, "pathName")))
			return invalid(it,
				"gitRepo item %s has no gitRepo.pathName",
				it->name);
		if (!ck_name_ok(it->path_name))
			return invalid(it,
				"gitRepo item %s: pathName \"%s\" is not one "
				"directory name of A-Z a-z 0-9 . _ -",
				it->name, it->path_name);
		if ((why = ck_name_reserved(it->path_name)))
			return invalid(it,
				"gitRepo item %s: pathName \"%s\" is reserved: "
				"%s",
				it->name, it->path_name, why);
		if (!(it->branch = str_at(sub, "branch")))
			it->branch = "main";
		it->commit = str_at(sub, "commit");
		if (it->commit &&
			(strlen(it->commit) < 7 || strlen(it->commit) > 40 ||
				strspn(it->commit, "0123456789abcdef") !=
					strlen(it->commit)))
			return invalid(it,
				"gitRepo item %s: commit \"%s\" is not 7 to 40 "
				"lowercase hex digits",
				it->name, it->commit);
		const char *strategy = str_at(sub, "syncStrategy");
		if (strategy && strcmp(strategy, "hardReset") &&
			strcmp(strategy, "merge"))
			return invalid(it,
				"gitRepo item %s: syncStrategy \"%s\" is not "
				"hardReset or merge",
				it->name, strategy);
		char *u = url_shown(it->url);
		it->shown = easprintf("%s@%s", u,
			it->commit ? it->commit : it->branch);
		free(u);
		it->key = easprintf("%s@%s#%s", it->url,
			it->commit ? it->commit : it->branch, it->path_name);
		it->path = easprintf("%s/%s", o.dir, it->path_name);
	} else if (!strcmp(type, "models") || !strcmp(type, "hfModel")) {
		it->kind = K_MODEL;
		sub = json_object_get(rec, "models");
		if (!sub)
			sub = json_object_get(rec, "hfModel");
		if (!(it->repo = str_at(sub, "repoId")))
			return invalid(it,
				"models item %s has no models.repoId",
				it->name);
		if (!(it->rev = str_at(sub, "revision")))
			it->rev = "main";
		if (!hf_repo_dir(it->repo, buf, sizeof buf))
			return invalid(it,
				"models item %s: repoId \"%s\" is not org/name "
				"of A-Z a-z 0-9 . _ -",
				it->name, it->repo);
		if (!hf_revision_ok(it->rev))
			return invalid(it,
				"models item %s: revision \"%s\" is not a "
				"branch, tag or commit name",
				it->name, it->rev);
		it->key = easprintf("%s@%s", it->repo, it->rev);
		it->shown = estrdup(it->key);
		it->path = easprintf("%s/%s", hub, buf);
	} else {
		return invalid(it,
			"item %s: type \"%s\" is not image, gitRepo or models%s",
			it->name, type,
			strcmp(type, "pythonWheels") ? ""
						     : " (pythonWheels is not "
						       "supported)");
	}
	return 0;
}

/* for_node: the item's nodeSelector matches the labels of -l (every item
 * is for this node without -l, or without a nodeSelector). */
static int
for_node(const struct item *it)
{
	json_t *sel = json_object_get(it->spec, "nodeSelector");
	const char *scope = str_at(it->spec, "scope"), *k;
	json_t *v;

	if (scope && !strcmp(scope, "allNodes"))
		return 1;
	if (!o.labels || !json_is_object(sel))
		return 1;
	json_object_foreach(sel, k, v) {
		json_t *l = json_object_get(o.labels, k);
		if (!json_is_string(v) || !json_equal(l, v))
			return 0;
	}
	return 1;
}

/* ---- the disk ---- */

/* used_bytes: what the held items occupy, by the state. Under mu. */
static uint64_t
used_bytes(void)
{
	const char *k;
	json_t *v;
	uint64_t n = 0;

	json_object_foreach(json_object_get(state, "items"), k, v)
		n += (uint64_t)json_integer_value(json_object_get(v, "bytes"));
	return n;
}

static uint64_t
min_free_bytes(uint64_t total)
{
	return o.min_free_pct ? total / 100 * (uint64_t)o.min_free
			      : (uint64_t)o.min_free;
}

/* room checks that need more bytes fit the budget and leave the free
 * space floor, given extra bytes already written by the transfer; else
 * it fails res with the figures. Under mu. */
static int
room(struct item *it, uint64_t need, uint64_t extra, struct ck_result *res)
{
	uint64_t used = used_bytes() + extra, avail, total, floor;
	char a[16], b[16], c[16], d[16];

	if (o.budget > 0 && used + need > (uint64_t)o.budget)
		return ck_fail(res, CK_BUDGET,
			"%s %s needs %s more; the cache holds %s of its %s "
			"budget (-b)",
			kind_name[it->kind], it->name,
			ck_bytes(need ? need : extra, a), ck_bytes(used, b),
			ck_bytes((uint64_t)o.budget, c));
	if (ck_fs_space(o.dir, &avail, &total) < 0)
		return ck_fail(res, CK_IO, "%s: %s", o.dir, strerror(errno));
	floor = min_free_bytes(total);
	if (avail < need || avail - need < floor)
		return ck_fail(res, CK_DISK_FULL,
			"%s %s needs %s; %s is free on the file system of %s, "
			"and %s must stay free (-f)",
			kind_name[it->kind], it->name, ck_bytes(need, a),
			ck_bytes(avail, b), o.dir, ck_bytes(floor, c));
	(void)d;
	return 0;
}

/* progress is the transfers' callback: it records the figures, stops a
 * transfer that would break the budget or the free floor, and emits a
 * record at most every -p seconds. */
static int
progress(void *arg, uint64_t done, uint64_t total)
{
	struct item *it = arg;
	struct ck_result r = {0};
	time_t now = time(NULL);
	int stop = 0;

	pthread_mutex_lock(&mu);
	it->done = done;
	it->total = total;
	if (room(it, 0, done > it->base ? done - it->base : 0, &r) < 0) {
		it->stop = r.reason;
		snprintf(it->stop_msg, sizeof it->stop_msg, "%s", r.message);
		stop = 1;
	} else if (now - it->last_progress >= o.period) {
		it->last_progress = now;
		emit(it, "pulling");
	}
	pthread_mutex_unlock(&mu);
	return stop;
}

/* ---- one sync of each kind ---- */

static int
sync_model(struct item *it, struct ck_result *res)
{
	struct hf_item h = {
		.endpoint = o.endpoint,
		.token = o.token,
		.repo_id = it->repo,
		.revision = it->rev,
		.hub = hub,
		.timeout_s = o.timeout,
		.workers = o.workers,
	};
	struct hf_plan plan = {0};
	int rc;

	if (hf_resolve(&h, &plan, res) < 0)
		return -1;
	pthread_mutex_lock(&mu);
	rc = room(it, plan.missing, 0, res);
	it->total = plan.total;
	it->base = plan.total - plan.missing; /* hf counts held blobs done */
	pthread_mutex_unlock(&mu);
	if (rc == 0)
		rc = hf_fetch(&h, &plan, progress, it, res);
	it->files = (int)plan.nfiles;
	hf_plan_free(&plan);
	return rc;
}

static int
sync_git(struct item *it, struct ck_result *res)
{
	struct gitsync_item g = {
		.url = it->url,
		.branch = it->branch,
		.commit = it->commit,
		.root = o.dir,
		.path_name = it->path_name,
		.timeout_s = o.timeout,
		.force = it->force,
	};
	char commit[41];
	int rc, had = gitsync_current(o.dir, it->path_name, commit) == 0;
	uint64_t used;

	pthread_mutex_lock(&mu);
	rc = room(it, 0, 0, res);
	used = used_bytes() - held_int(it->name, "bytes");
	pthread_mutex_unlock(&mu);
	if (rc < 0 || gitsync_sync(&g, progress, it, res) < 0)
		return -1;
	/* the transfer was checked as it ran; the checkout's files were not,
	 * and a first clone over the budget goes again */
	if (o.budget > 0 && used + res->bytes > (uint64_t)o.budget && !had) {
		char a[16], b[16], c[16];
		struct ck_result r2 = {0};
		gitsync_remove(o.dir, it->path_name, &r2);
		return ck_fail(res, CK_BUDGET,
			"gitRepo %s needs %s more; the cache holds %s of its %s "
			"budget (-b); the checkout was removed again",
			it->name, ck_bytes(res->bytes, a), ck_bytes(used, b),
			ck_bytes((uint64_t)o.budget, c));
	}
	return 0;
}

struct poll_arg {
	struct item *it;
	volatile int done;
};

/* poll_image reports the runtime's ingest progress while a pull runs
 * (containerd only; others report none). */
static void *
poll_image(void *p)
{
	struct poll_arg *pa = p;
	uint64_t done, total;

	while (!pa->done) {
		for (int i = 0; i < o.period * 10 && !pa->done; i++)
			usleep(100000);
		if (!pa->done && cri_progress(o.sock, &done, &total) == 0)
			progress(pa->it, done, total);
	}
	return NULL;
}

static int
sync_image(struct item *it, struct ck_result *res)
{
	struct cri_auth auth, *ap = NULL;
	struct cri_image before = {0};
	struct poll_arg pa = {.it = it};
	pthread_t th;
	int rc, polling;

	if (it->secret) {
		json_t *cfg = json_object_get(o.auths, it->secret);
		if (!cfg)
			return ck_fail(res, CK_INVALID,
				"pull secret %s of image %s is not in the "
				"secrets file (-a)",
				it->secret, it->name);
		rc = cri_auth_for(cfg, it->ref, &auth);
		if (rc < 0)
			return ck_fail(res, CK_INVALID,
				"pull secret %s is not a dockerconfigjson",
				it->secret);
		if (rc == 0)
			ap = &auth;
	}
	pthread_mutex_lock(&mu);
	rc = room(it, 0, 0, res);
	pthread_mutex_unlock(&mu);
	if (rc < 0 || cri_image(o.sock, it->ref, &before, res) < 0) {
		if (ap)
			cri_auth_free(ap);
		return -1;
	}
	polling = pthread_create(&th, NULL, poll_image, &pa) == 0;
	rc = cri_pull(o.sock, it->ref, ap, o.timeout, res);
	if (ap)
		cri_auth_free(ap);
	pa.done = 1;
	if (polling)
		pthread_join(th, NULL);
	if (rc < 0)
		return -1;
	pthread_mutex_lock(&mu);
	json_t *h = held(it->name);
	int pulled = !before.present ||
		json_is_true(json_object_get(h, "pulled"));
	uint64_t had = held_int(it->name, "bytes");
	uint64_t used = used_bytes() - had;
	pthread_mutex_unlock(&mu);
	if (o.budget > 0 && used + res->bytes > (uint64_t)o.budget) {
		char a[16], b[16], c[16];
		struct ck_result r2 = {0};
		if (!before.present)
			cri_remove(o.sock, it->ref, &r2);
		return ck_fail(res, CK_BUDGET,
			"image %s is %s; the cache holds %s of its %s budget "
			"(-b)%s",
			it->name, ck_bytes(res->bytes, a), ck_bytes(used, b),
			ck_bytes((uint64_t)o.budget, c),
			before.present ? "" : "; the image was removed again");
	}
	it->pulled = pulled;
	res->pinned = 0;
	if (cri_pin(o.sock, it->ref, 1, res) < 0) {
		if (res->pinned == -1)
			snprintf(it->pin_note, sizeof it->pin_note, "%s",
				res->message);
		else
			snprintf(it->pin_note, sizeof it->pin_note,
				"pinning failed: %.480s", res->message);
	}
	res->reason = CK_OK;
	res->message[0] = 0;
	return 0;
}

/* ---- removal ---- */

/* drop removes what a state entry holds: the checkout, the model
 * revision, or the image if this tool pulled it (else only its pin). */
static int
drop(const char *name, json_t *h, struct ck_result *res)
{
	const char *type = json_string_value(json_object_get(h, "type"));
	const char *a = json_string_value(json_object_get(h, "a"));
	const char *b = json_string_value(json_object_get(h, "b"));

	if (!type || !a)
		return 0;
	if (!strcmp(type, "gitRepo"))
		return gitsync_remove(o.dir, a, res);
	if (!strcmp(type, "models"))
		return hf_remove(hub, a, b ? b : "main", res);
	if (!strcmp(type, "image")) {
		cri_pin(o.sock, a, 0, res);
		res->reason = CK_OK;
		if (json_is_true(json_object_get(h, "pulled")))
			return cri_remove(o.sock, a, res);
		return 0;
	}
	(void)name;
	return 0;
}

/* shared: another valid plan item for this node holds what the state
 * entry h holds (the same image, checkout directory or model revision). */
static int
shared(const char *name, json_t *h)
{
	const char *type = json_string_value(json_object_get(h, "type"));
	const char *a = json_string_value(json_object_get(h, "a"));
	const char *b = json_string_value(json_object_get(h, "b"));

	for (size_t i = 0; i < nitems; i++) {
		struct item *it = &items[i];
		if (it->invalid || !for_node(it) || !strcmp(it->name, name) ||
			!type || strcmp(kind_name[it->kind], type) || !a)
			continue;
		if ((it->kind == K_IMAGE && !strcmp(it->ref, a)) ||
			(it->kind == K_GIT && !strcmp(it->path_name, a)) ||
			(it->kind == K_MODEL && !strcmp(it->repo, a) && b &&
				!strcmp(it->rev, b)))
			return 1;
	}
	return 0;
}

/* ---- the jobs ---- */

/* record stores a finished sync in the state and emits its final
 * record. Under mu. */
static void
record(struct item *it, int ok)
{
	json_t *items_obj = json_object_get(state, "items");
	json_t *old = held(it->name), *h;
	char ts[32];

	h = old ? json_deep_copy(old) : json_object();
	if (ok) {
		now_rfc3339(ts, sizeof ts);
		/* what the item named before, when that changed, goes now */
		if (old && strcmp(held_str(it->name, "key"), it->key) &&
			!shared(it->name, old)) {
			struct ck_result r = {0};
			int same = 0;
			const char *a = json_string_value(
				json_object_get(old, "a"));
			if (it->kind == K_GIT && a && !strcmp(a, it->path_name))
				same = 1;
			if (!same && drop(it->name, old, &r) < 0)
				err_warn("%s: removing what it held before: %s",
					it->name, r.message);
		}
		json_object_set_new(h, "type",
			json_string(kind_name[it->kind]));
		json_object_set_new(h, "key", json_string(it->key));
		json_object_set_new(h, "a",
			json_string(it->kind == K_IMAGE     ? it->ref
					: it->kind == K_GIT ? it->path_name
							    : it->repo));
		if (it->kind == K_MODEL)
			json_object_set_new(h, "b", json_string(it->rev));
		else
			json_object_del(h, "b");
		json_object_set_new(h, "resolved",
			json_string(it->res.resolved));
		json_object_set_new(h, "bytes", json_integer(it->res.bytes));
		json_object_set_new(h, "present", json_true());
		json_object_set_new(h, "lastSync", json_string(ts));
		json_object_set_new(h, "attempts", json_integer(it->attempts));
		json_object_set_new(h, "message", json_string(it->res.message));
		json_object_del(h, "reason");
		if (it->kind == K_IMAGE) {
			json_object_set_new(h, "pulled",
				json_boolean(it->pulled));
			json_object_set_new(h, "pinned",
				it->res.pinned == 1           ? json_true()
					: it->res.pinned == 0 ? json_false()
							      : json_false());
			json_object_set_new(h, "pinNote",
				json_string(it->pin_note));
		}
		if (it->kind == K_GIT)
			json_object_set_new(h, "lfsPointers",
				json_integer(it->res.lfs_pointers));
		if (it->kind == K_MODEL)
			json_object_set_new(h, "files",
				json_integer(it->files));
	} else {
		if (!old) {
			json_object_set_new(h, "type",
				json_string(kind_name[it->kind]));
			json_object_set_new(h, "present", json_false());
			json_object_set_new(h, "bytes", json_integer(0));
		}
		json_object_set_new(h, "attempts", json_integer(it->attempts));
		json_object_set_new(h, "reason",
			json_string(ck_reason_name(it->res.reason)));
		json_object_set_new(h, "message", json_string(it->res.message));
	}
	if (it->update)
		json_object_set_new(h, "update", json_string(it->update));
	json_object_set_new(items_obj, it->name, h);
	state_save();
	emit(it, ok ? "ready" : "failed");
}

static int
sync_once(struct item *it)
{
	memset(&it->res, 0, sizeof it->res);
	it->res.pinned = -1;
	it->stop = CK_OK;
	it->done = it->total = it->base = 0;
	switch (it->kind) {
	case K_IMAGE: {
		pthread_mutex_lock(&image_mu);
		int rc = sync_image(it, &it->res);
		pthread_mutex_unlock(&image_mu);
		return rc;
	}
	case K_GIT: return sync_git(it, &it->res);
	case K_MODEL: return sync_model(it, &it->res);
	}
	return -1;
}

static void
run_item(struct item *it)
{
	int prior, ok = 0, wait = 1;

	pthread_mutex_lock(&mu);
	prior = *held_str(it->name, "reason")
		? (int)held_int(it->name, "attempts")
		: 0;
	pthread_mutex_unlock(&mu);
	for (int attempt = 0; attempt <= o.retries; attempt++) {
		it->attempts = prior + attempt + 1;
		pthread_mutex_lock(&mu);
		it->last_progress = time(NULL);
		emit(it, "pulling");
		pthread_mutex_unlock(&mu);
		if (sync_once(it) == 0) {
			ok = 1;
			break;
		}
		if (it->res.reason == CK_CANCELLED && it->stop != CK_OK)
			ck_fail(&it->res, it->stop, "%s", it->stop_msg);
		if (!ck_transient(it->res.reason) || attempt == o.retries)
			break;
		sleep((unsigned)wait);
		wait = wait * 2 > 30 ? 30 : wait * 2;
	}
	pthread_mutex_lock(&mu);
	record(it, ok);
	pthread_mutex_unlock(&mu);
}

static void *
worker(void *arg)
{
	(void)arg;
	for (;;) {
		struct item *it = NULL;
		pthread_mutex_lock(&mu);
		while (next_job < nitems && !items[next_job].todo)
			next_job++;
		if (next_job < nitems)
			it = &items[next_job++];
		pthread_mutex_unlock(&mu);
		if (!it)
			return NULL;
		run_item(it);
	}
}

/* ---- what to do ---- */

/* current: whether what the item holds is still there and the one the
 * state names (a check made without the network, but for images, which
 * ask the runtime). */
static int
current(struct item *it)
{
	const char *resolved = held_str(it->name, "resolved");
	char commit[41];
	struct cri_image img = {0};
	struct ck_result r = {0};

	if (!*resolved || strcmp(held_str(it->name, "key"), it->key))
		return 0;
	switch (it->kind) {
	case K_IMAGE:
		return cri_image(o.sock, it->ref, &img, &r) == 0 &&
			img.present && !strcmp(img.digest, resolved);
	case K_GIT:
		return gitsync_current(o.dir, it->path_name, commit) == 0 &&
			!strcmp(commit, resolved);
	case K_MODEL:
		return hf_present(hub, it->repo, it->rev, commit) == 0 &&
			!strcmp(commit, resolved);
	}
	return 0;
}

/* moving: the item names something that can change on the server: a
 * tag, a branch, a revision that is not a commit. */
static int
moving(const struct item *it)
{
	switch (it->kind) {
	case K_IMAGE: return !strstr(it->ref, "@sha256:");
	case K_GIT: return !it->commit;
	case K_MODEL: return !is_hex_commit(it->rev);
	}
	return 0;
}

static void
plan_jobs(void)
{
	for (size_t i = 0; i < nitems; i++) {
		struct item *it = &items[i];
		const char *seen;

		if (it->invalid || !for_node(it))
			continue;
		seen = held_str(it->name, "update");
		/* force acts once, with the update token that came with it */
		it->force = it->force && it->update && strcmp(seen, it->update);
		if (*held_str(it->name, "reason") || !current(it) ||
			it->force || (o.refresh && moving(it)) ||
			(it->update && strcmp(seen, it->update)))
			it->todo = 1;
	}
}

/* ---- main ---- */

static int
parse_size(const char *s, int64_t *out)
{
	struct qty q;

	return qty_parse(&q, s) == QTY_OK && qty_value(&q, out) == QTY_OK &&
			*out >= 0
		? 0
		: -1;
}

static json_t *
load_json(const char *path, const char *what)
{
	json_error_t e;
	json_t *j = json_load_file(path, 0, &e);

	if (!j)
		err_die(HAZ_USAGE, "%s %s:%d:%d: %s", what, path, e.line,
			e.column, e.text);
	if (!json_is_object(j))
		err_die(HAZ_USAGE, "%s %s: not a JSON object", what, path);
	return j;
}

static void
options(int argc, char **argv)
{
	int c;
	long v;
	char *end;

	while ((c = getopt(argc, argv, "a:b:d:f:hj:l:np:r:s:t:uw:")) != -1) {
		switch (c) {
		case 'a': o.authfile = optarg; break;
		case 'b':
			if (parse_size(optarg, &o.budget) < 0)
				err_die(HAZ_USAGE,
					"-b %s: not a quantity of bytes (100Gi, "
					"500M)",
					optarg);
			/* no budget is -b left out; 0 is not a spelling
			 * of it, nor a cache that holds nothing */
			if (o.budget == 0)
				err_die(HAZ_USAGE,
					"-b %s: a budget of 0 bytes; leave -b "
					"out for no limit",
					optarg);
			break;
		case 'd': o.dir = optarg; break;
		case 'f': {
			size_t n = strlen(optarg);
			if (n > 1 && optarg[n - 1] == '%') {
				v = strtol(optarg, &end, 10);
				if (end != optarg + n - 1 || v < 0 || v > 99)
					err_die(HAZ_USAGE,
						"-f %s: a percentage is 0%% to "
						"99%%",
						optarg);
				o.min_free = v;
				o.min_free_pct = 1;
			} else if (parse_size(optarg, &o.min_free) < 0) {
				err_die(HAZ_USAGE,
					"-f %s: not a quantity of bytes or a "
					"percentage",
					optarg);
			} else {
				o.min_free_pct = 0;
			}
			break;
		}
		case 'h': help(); exit(HAZ_OK);
		case 'l':
			o.labels = json_loads(optarg, 0, NULL);
			if (!json_is_object(o.labels))
				err_die(HAZ_USAGE,
					"-l: the labels are not a JSON object");
			break;
		case 'n': o.dry = 1; break;
		case 'j':
		case 'p':
		case 'r':
		case 't':
		case 'w':
			v = strtol(optarg, &end, 10);
			if (*optarg == 0 || *end || v < (c == 'r' ? 0 : 1) ||
				v > 86400)
				err_die(HAZ_USAGE,
					"-%c %s: not a number from %d", c,
					optarg, c == 'r' ? 0 : 1);
			*(c == 'j'                 ? &o.jobs
					: c == 'p' ? &o.period
					: c == 'r' ? &o.retries
					: c == 'w' ? &o.workers
						   : &o.timeout) = (int)v;
			break;
		case 's': o.sock = optarg; break;
		case 'u': o.refresh = 1; break;
		default: fputs(USAGE, stderr); exit(HAZ_USAGE);
		}
	}
	if (o.jobs > 64)
		o.jobs = 64;
	if (o.workers > 64)
		o.workers = 64;
	o.auths = o.authfile ? load_json(o.authfile, "-a") : json_object();
	if (!o.sock)
		o.sock = cri_default_socket();
	const char *e = getenv("HF_ENDPOINT");
	o.endpoint = estrdup(e && *e ? e : "https://huggingface.co");
	for (size_t n = strlen(o.endpoint); n > 0 && o.endpoint[n - 1] == '/';)
		o.endpoint[--n] = 0;
	e = getenv("HF_TOKEN");
	if (!e || !*e)
		e = getenv("HUGGING_FACE_HUB_TOKEN");
	o.token = e && *e ? estrdup(e) : NULL;
}

/* lock takes DIR/.k8shazgpu/lock for this run; exit 75 when another
 * cache-sync has it. The descriptor stays open until exit; nothing of
 * its own is left allocated when it exits. */
static void
lock_dir(void)
{
	char *meta = easprintf("%s/.k8shazgpu", o.dir), *lock;
	int fd;

	if (ck_mkdirs(meta, 0755) < 0 || ck_mkdirs(hub, 0755) < 0) {
		err_warn("%s: cannot make the cache directory:", meta);
		free(meta);
		exit(HAZ_FAIL);
	}
	lock = easprintf("%s/lock", meta);
	state_path = easprintf("%s/state.json", meta);
	free(meta);
	if ((fd = open(lock, O_RDWR | O_CREAT | O_CLOEXEC, 0644)) < 0) {
		err_warn("%s:", lock);
		free(lock);
		exit(HAZ_FAIL);
	}
	free(lock);
	if (flock(fd, LOCK_EX | LOCK_NB) < 0)
		err_die(errno == EWOULDBLOCK ? HAZ_TEMP : HAZ_FAIL,
			"%s: another cache-sync is running here", o.dir);
}

static int
read_plan(int argc, char **argv)
{
	struct nd_reader r;
	size_t cap = 0;
	int bad = 0;

	for (int i = 0; i < (argc ? argc : 1); i++) {
		json_t *rec;
		int rc;
		if (nd_open(&r, argc ? argv[i] : NULL, ND_SKIP_BLANK) < 0) {
			bad = 1;
			continue;
		}
		while ((rc = nd_read(&r, &rec)) != 0) {
			if (rc < 0)
				continue;
			if (!json_is_object(rec)) {
				nd_warn(&r, "a plan item is a JSON object");
				json_decref(rec);
				continue;
			}
			if (nitems == cap)
				items = erealloc(items,
					(cap = cap ? 2 * cap : 16) *
						sizeof *items);
			memset(&items[nitems], 0, sizeof *items);
			if (item_parse(&items[nitems], rec) < 0)
				nd_warn(&r, "%s", items[nitems].why);
			nitems++;
		}
		bad |= r.failed;
		nd_close(&r);
	}
	/* a name or a checkout directory twice: the later item is invalid */
	for (size_t i = 0; i < nitems; i++)
		for (size_t j = 0; j < i && !items[i].invalid; j++) {
			if (items[j].invalid)
				continue;
			if (!strcmp(items[i].name, items[j].name))
				invalid(&items[i],
					"item %s is in the plan twice",
					items[i].name);
			else if (items[i].kind == K_GIT &&
				items[j].kind == K_GIT &&
				!strcmp(items[i].path_name, items[j].path_name))
				invalid(&items[i],
					"gitRepo item %s: pathName %s is item "
					"%s's",
					items[i].name, items[i].path_name,
					items[j].name);
		}
	return bad;
}

/* planned: name is a valid plan item for this node, or an invalid one
 * (whose holdings are kept until the plan says what it wants). */
static int
planned(const char *name)
{
	for (size_t i = 0; i < nitems; i++)
		if (items[i].name && !strcmp(items[i].name, name))
			return items[i].invalid || for_node(&items[i]);
	return 0;
}

static int
collect(void)
{
	json_t *all = json_object_get(state, "items"), *h;
	const char *name;
	void *tmp;
	int failed = 0;

	json_object_foreach_safe(all, tmp, name, h) {
		struct ck_result r = {0};
		uint64_t bytes;
		json_t *rec;

		if (planned(name))
			continue;
		bytes = (uint64_t)json_integer_value(
			json_object_get(h, "bytes"));
		if (!o.dry && !shared(name, h) && drop(name, h, &r) < 0) {
			err_warn("%s: removing: %s", name, r.message);
			failed = 1;
			continue;
		}
		rec = json_pack("{s:s, s:O, s:s, s:I, s:s}", "name", name,
			"type", json_object_get(h, "type"), "phase",
			o.dry ? "pending" : "removed", "bytesDone",
			(json_int_t)bytes, "message",
			o.dry ? "would be removed" : "left the plan; removed");
		nd_write(rec);
		json_decref(rec);
		if (!o.dry) {
			json_object_del(all, name);
			state_save();
		}
	}
	return failed;
}

static void
summary(void)
{
	size_t ready = 0, failed = 0, n = 0;
	uint64_t avail = 0, total = 0;
	json_t *rec;

	for (size_t i = 0; i < nitems; i++) {
		if (!items[i].invalid && !for_node(&items[i]))
			continue;
		n++;
		if (items[i].invalid || *held_str(items[i].name, "reason") ||
			!*held_str(items[i].name, "resolved"))
			failed += items[i].invalid ||
				*held_str(items[i].name, "reason");
		else
			ready++;
	}
	ck_fs_space(o.dir, &avail, &total);
	rec = json_pack("{s:{s:I, s:I, s:I, s:I, s:I, s:I, s:I}}", "summary",
		"items", (json_int_t)n, "ready", (json_int_t)ready, "failed",
		(json_int_t)failed, "usedBytes", (json_int_t)used_bytes(),
		"budgetBytes", (json_int_t)o.budget, "freeBytes",
		(json_int_t)avail, "minFreeBytes",
		(json_int_t)min_free_bytes(total));
	nd_write(rec);
	json_decref(rec);
}

int
main(int argc, char **argv)
{
	pthread_t th[64];
	int bad, nth = 0, status = HAZ_OK;

	err_init(argv[0]);
	/* jansson draws its hash seed here, before any thread starts */
	json_object_seed(0);
	options(argc, argv);
	hub = easprintf("%s/" CK_HUB_DIR, o.dir);
	lock_dir();
	state_load();
	http_global_init();
	gitsync_init();
	bad = read_plan(argc - optind, argv + optind);

	/* what is held, as found */
	plan_jobs();
	for (size_t i = 0; i < nitems; i++) {
		struct item *it = &items[i];
		if (it->invalid) {
			ck_fail(&it->res, CK_INVALID, "%s", it->why);
			if (!it->name)
				continue;
			emit(it, "failed");
		} else if (for_node(it)) {
			emit(it,
				it->todo ? "pending"
					: *held_str(it->name, "reason")
					? "failed"
					: "ready");
		}
	}
	if (!o.dry) {
		for (int i = 0; i < o.jobs; i++)
			if (pthread_create(&th[nth], NULL, worker, NULL) == 0)
				nth++;
		if (nth == 0)
			worker(NULL);
		for (int i = 0; i < nth; i++)
			pthread_join(th[i], NULL);
	}
	if (collect())
		status = HAZ_FAIL;
	if (!o.dry && !json_object_get(state, "firstSync")) {
		char ts[32];
		now_rfc3339(ts, sizeof ts);
		json_object_set_new(state, "firstSync", json_string(ts));
		state_save();
	}
	summary();
	for (size_t i = 0; i < nitems; i++) {
		struct item *it = &items[i];
		if (it->invalid ||
			(for_node(it) && it->todo &&
				*held_str(it->name, "reason")))
			status = HAZ_FAIL;
		json_decref(it->spec);
		free(it->key);
		free(it->shown);
		free(it->path);
	}
	if (bad || state_failed)
		status = HAZ_FAIL;
	free(items);
	json_decref(state);
	json_decref(o.labels);
	json_decref(o.auths);
	free(o.endpoint);
	free(o.token);
	free(state_path);
	free(hub);
	gitsync_shutdown();
	return nd_finish(status);
}
