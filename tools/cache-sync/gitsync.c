/* gitsync: the node cache's git repositories with libgit2: two slots per
 * repository and a symlink swapped between them (see gitsync.h). */
#include "clock.h"
#include "gitsync.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <git2.h>

#include "err.h"

#if LIBGIT2_VER_MAJOR == 1 && LIBGIT2_VER_MINOR < 7
#error "libgit2 1.7 or later is needed (shallow clone, timeouts)"
#endif

/* Before 1.9, libgit2 sends its want list a second time after the
 * shallow exchange on stateful transports (git://, ssh), which
 * upload-pack refuses ("expected SHA1 list"): those clone in full. */
#if LIBGIT2_VER_MAJOR == 1 && LIBGIT2_VER_MINOR < 9
#define STATEFUL_SHALLOW 0
#else
#define STATEFUL_SHALLOW 1
#endif

#define SLOTS ".git-slots"
#define LFS_SPEC "version https://git-lfs.github.com/spec/v1"
#define LFS_MAX 1024
#define LFS_NAMED 3
/* Every in-place update adds a pack, and libgit2 never repacks: a slot
 * holding more is cloned afresh instead. */
#define MAX_PACKS 50
#define REPORT_EVERY 0.25 /* seconds between progress calls */

/* One sync in progress: the item, its paths, and the transfer's state
 * that libgit2's callbacks share. */
struct sync {
	const struct gitsync_item *it;
	struct ck_result *res;
	ck_progress_fn *fn;
	void *arg;
	const char *branch;
	char pin[41];  /* the pinned commit, lowercase; "" when tracking */
	char url[512]; /* it->url without user:password, for messages */
	char link[PATH_MAX], slots[PATH_MAX], tmp[PATH_MAX];
	char refspec[620];  /* +refs/heads/B:refs/remotes/origin/B */
	char tracking[300]; /* refs/remotes/origin/B */
	char head[300];     /* refs/heads/B */
	int depth;          /* 1, or 0 where shallow cannot work */
	char cur;           /* the linked slot, 'a' or 'b'; 0 for none */
	char cur_commit[41];
	char next; /* the slot written */
	int keep;  /* the linked checkout is already what was asked */
	uint64_t fetched, xfer, reported, reported_total;
	double last_data, last_report;
	int receiving, done_reported, timed_out, cancelled;
};

static pthread_mutex_t opts_mu = PTHREAD_MUTEX_INITIALIZER;
static int opts_ms = -1;

void
gitsync_init(void)
{
	struct sigaction sa;

	git_libgit2_init();
	if (sigaction(SIGPIPE, NULL, &sa) == 0 && sa.sa_handler == SIG_DFL)
		signal(SIGPIPE, SIG_IGN);
}

void
gitsync_shutdown(void)
{
	git_libgit2_shutdown();
}

/* set_timeouts makes libgit2's socket timeouts timeout_s (0: none). */
static void
set_timeouts(int timeout_s)
{
	int ms = timeout_s > 0 && timeout_s < INT_MAX / 1000 ? timeout_s * 1000
							     : 0;

	pthread_mutex_lock(&opts_mu);
	if (ms != opts_ms) {
		git_libgit2_opts(GIT_OPT_SET_SERVER_CONNECT_TIMEOUT, ms);
		git_libgit2_opts(GIT_OPT_SET_SERVER_TIMEOUT, ms);
		opts_ms = ms;
	}
	pthread_mutex_unlock(&opts_mu);
}

static int __attribute__((format(printf, 3, 4)))
fmt(char *buf, size_t n, const char *f, ...)
{
	va_list ap;
	int w;

	va_start(ap, f);
	w = vsnprintf(buf, n, f, ap);
	va_end(ap);
	return w < 0 || (size_t)w >= n ? -1 : 0;
}

/* ---- libgit2's callbacks: progress, the watchdog, credentials ---- */

/* begin and end bracket one transfer; fetched sums them. */
static void
begin(struct sync *s)
{
	s->xfer = 0;
	s->last_data = clock_mono();
	s->last_report = 0;
	s->receiving = 1;
	s->done_reported = 0;
}

/* end's report makes the last one say done = total = fetched, which
 * the throttled calls during the transfer may have missed. */
static void
end(struct sync *s, int ok)
{
	s->fetched += s->xfer;
	s->xfer = 0;
	if (ok && s->fn &&
		(s->reported != s->fetched ||
			s->reported_total != s->fetched)) {
		s->reported = s->reported_total = s->fetched;
		s->fn(s->arg, s->fetched, s->fetched);
	}
}

/* stalled: no pack bytes for timeout_s while the pack is due. */
static int
stalled(struct sync *s, double t)
{
	if (!s->receiving || s->it->timeout_s <= 0 ||
		t - s->last_data < s->it->timeout_s)
		return 0;
	s->timed_out = 1;
	return 1;
}

static int
on_transfer(const git_indexer_progress *p, void *payload)
{
	struct sync *s = payload;
	double t = clock_mono();
	uint64_t done;
	int last;

	if (p->received_bytes != s->xfer) {
		s->xfer = p->received_bytes;
		s->last_data = t;
	}
	/* the pack is complete once every object announced is in; what
	 * follows (resolving deltas) reads no socket */
	s->receiving = !(p->total_objects > 0 &&
		p->received_objects == p->total_objects);
	if (stalled(s, t))
		return GIT_EUSER;
	last = !s->receiving && !s->done_reported;
	if (!s->fn || (!last && t - s->last_report < REPORT_EVERY))
		return 0;
	s->last_report = t;
	s->done_reported |= last;
	done = s->reported = s->fetched + s->xfer;
	s->reported_total = s->receiving ? 0 : done;
	if (s->fn(s->arg, done, s->reported_total)) {
		s->cancelled = 1;
		return GIT_EUSER;
	}
	return 0;
}

/* on_sideband: a server can keep the connection busy with progress
 * messages and send no pack; the socket timeout never fires then. */
static int
on_sideband(const char *str, int len, void *payload)
{
	struct sync *s = payload;

	(void)str;
	(void)len;
	return stalled(s, clock_mono()) ? GIT_EUSER : 0;
}

/* on_credentials: public repositories only, for now. A token for the
 * item would be handed over here (git_credential_userpass_plaintext_new
 * for https); passing through makes libgit2 fail with GIT_EAUTH, which
 * is CK_UNAUTHORIZED. */
static int
on_credentials(git_credential **out, const char *url, const char *user,
	unsigned int allowed, void *payload)
{
	(void)out;
	(void)url;
	(void)user;
	(void)allowed;
	(void)payload;
	return GIT_PASSTHROUGH;
}

static void
callbacks(struct sync *s, git_remote_callbacks *cb)
{
	git_remote_init_callbacks(cb, GIT_REMOTE_CALLBACKS_VERSION);
	cb->transfer_progress = on_transfer;
	cb->sideband_progress = on_sideband;
	cb->credentials = on_credentials;
	cb->payload = s;
}

/* ---- failures ---- */

static int __attribute__((format(printf, 3, 4)))
fail(struct sync *s, enum ck_reason r, const char *f, ...)
{
	va_list ap;

	s->res->reason = r;
	va_start(ap, f);
	vsnprintf(s->res->message, sizeof s->res->message, f, ap);
	va_end(ap);
	err_clean(s->res->message);
	return -1;
}

static int
has(const char *msg, const char *word)
{
	return strstr(msg, word) != NULL;
}

/* gfail turns libgit2's error gerr, from the step named by what, into a
 * reason and a message. */
static int
gfail(struct sync *s, int gerr, const char *what)
{
	const git_error *e = git_error_last();
	char msg[300];
	int k = e ? e->klass : GIT_ERROR_NONE;

	snprintf(msg, sizeof msg, "%s",
		e && e->message && *e->message ? e->message : "unknown error");
	if (s->cancelled)
		return fail(s, CK_CANCELLED,
			"transfer from %s stopped by the caller", s->url);
	if (s->timed_out || gerr == GIT_TIMEOUT ||
		(has(msg, "timed out") && !has(msg, "connect")))
		return fail(s, CK_TIMEOUT, "no data from %s for %d s", s->url,
			s->it->timeout_s);
	if (gerr == GIT_EAUTH || has(msg, "status code: 401") ||
		has(msg, "status code: 403") ||
		(k == GIT_ERROR_SSH && has(msg, "auth")))
		return fail(s, CK_UNAUTHORIZED,
			"%s wants credentials, and none are configured (%s)",
			s->url, msg);
	if (has(msg, "status code: 404") || has(msg, "not exported") ||
		has(msg, "epository not found") ||
		has(msg, "does not appear to be a git repository") ||
		has(msg, "could not find repository") ||
		has(msg, "failed to resolve path"))
		return fail(s, CK_NOT_FOUND, "repository %s not found (%s)",
			s->url, msg);
	if (gerr == GIT_ECERTIFICATE || k == GIT_ERROR_SSL ||
		has(msg, "connect") || has(msg, "resolve"))
		return fail(s, CK_UNREACHABLE, "%s unreachable: %s", s->url,
			msg);
	if (gerr == GIT_EEOF || has(msg, "early EOF"))
		return fail(s, CK_TRUNCATED, "%s ended the transfer early: %s",
			s->url, msg);
	if (k == GIT_ERROR_NET || k == GIT_ERROR_HTTP || k == GIT_ERROR_SSH)
		return fail(s, CK_SERVER, "%s of %s failed: %s", what, s->url,
			msg);
	return fail(s, CK_IO, "%s of %s failed: %s", what, s->url, msg);
}

static int
branch_missing(struct sync *s)
{
	return fail(s, CK_NOT_FOUND, "branch %s not found at %s", s->branch,
		s->url);
}

/* ---- the item ---- */

/* url_ok: an allowed scheme, no control characters; safe gets the URL
 * with any user:password@ left out. */
static int
url_ok(struct sync *s)
{
	static const char *const schemes[] = {"https", "http", "git", "ssh",
		"file"};
	const char *url = s->it->url, *rest = strstr(url, "://"), *at = NULL;
	size_t i, n;

	if (!rest)
		return 0;
	for (const char *p = url; *p; p++)
		if ((unsigned char)*p < 0x20 || *p == 0x7f)
			return 0;
	n = (size_t)(rest - url);
	for (i = 0; i < sizeof schemes / sizeof *schemes; i++)
		if (strlen(schemes[i]) == n && !strncasecmp(url, schemes[i], n))
			break;
	if (i == sizeof schemes / sizeof *schemes)
		return 0;
	rest += 3;
	for (const char *p = rest; *p && *p != '/'; p++)
		if (*p == '@')
			at = p;
	snprintf(s->url, sizeof s->url, "%.*s%s", (int)(rest - url), url,
		at ? at + 1 : rest);
	if (!strncasecmp(url, "http", 4))
		s->depth = 1;
	else if (!strncasecmp(url, "file", 4))
		s->depth = 0;
	else
		s->depth = STATEFUL_SHALLOW;
	return 1;
}

/* pin_ok: "" or 7 to 40 hex digits, copied lowercase. */
static int
pin_ok(struct sync *s, const char *c)
{
	size_t n = c ? strlen(c) : 0;

	if (n == 0)
		return 1;
	if (n < 7 || n > 40)
		return 0;
	for (size_t i = 0; i < n; i++) {
		char ch = c[i] >= 'A' && c[i] <= 'F' ? (char)(c[i] + 32) : c[i];
		if (!((ch >= '0' && ch <= '9') || (ch >= 'a' && ch <= 'f')))
			return 0;
		s->pin[i] = ch;
	}
	s->pin[n] = 0;
	return 1;
}

/* link_slot: which slot ROOT/P links to: 'a', 'b', 0 when there is no
 * ROOT/P, -1 when ROOT/P is something else. */
static int
link_slot(const char *link, const char *path_name)
{
	char target[PATH_MAX], want[PATH_MAX];
	struct stat st;
	ssize_t n;

	if (lstat(link, &st) < 0)
		return errno == ENOENT ? 0 : -1;
	if (!S_ISLNK(st.st_mode))
		return -1;
	n = readlink(link, target, sizeof target - 1);
	if (n < 0)
		return -1;
	target[n] = 0;
	for (int c = 'a'; c <= 'b'; c++) {
		if (fmt(want, sizeof want, SLOTS "/%s/%c", path_name, c) == 0 &&
			!strcmp(target, want))
			return c;
	}
	return -1;
}

static int
slot_path(const struct sync *s, char slot, char *buf)
{
	return fmt(buf, PATH_MAX, "%s/%c", s->slots, slot);
}

static git_repository *
open_repo(const char *path)
{
	git_repository *repo = NULL;

	if (git_repository_open_ext(&repo, path, GIT_REPOSITORY_OPEN_NO_SEARCH,
		    NULL) < 0)
		return NULL;
	return repo;
}

/* head_of writes the 40-hex commit HEAD names in the repository at path:
 * 0 or -1. */
static int
head_of(const char *path, char hex[41])
{
	git_repository *repo = open_repo(path);
	git_oid oid;
	int rc = -1;

	if (repo && git_reference_name_to_id(&oid, repo, "HEAD") == 0) {
		git_oid_tostr(hex, 41, &oid);
		rc = 0;
	}
	git_repository_free(repo);
	return rc;
}

static int
paths(struct sync *s, const char *root, const char *path_name)
{
	if (fmt(s->link, sizeof s->link, "%s/%s", root, path_name) < 0 ||
		fmt(s->slots, sizeof s->slots, "%s/" SLOTS "/%s", root,
			path_name) < 0 ||
		fmt(s->tmp, sizeof s->tmp, "%s/tmp-%ld", s->slots,
			(long)getpid()) < 0)
		return fail(s, CK_INVALID, "%s/%s: path too long", root,
			path_name);
	return 0;
}

/* prepare checks the item and reads the linked checkout's state. */
static int
prepare(struct sync *s)
{
	const struct gitsync_item *it = s->it;
	char slot[PATH_MAX];
	int valid = 0, c;

	s->branch = it->branch && *it->branch ? it->branch : "main";
	if (!it->path_name || !ck_name_ok(it->path_name))
		return fail(s, CK_INVALID,
			"path name \"%s\" is not one path component of [A-Za-z0-9._-]",
			it->path_name ? it->path_name : "");
	if (!it->url || !url_ok(s))
		return fail(s, CK_INVALID,
			"URL \"%s\" is not an https, http, git, ssh or file URL",
			it->url ? it->url : "");
	if (fmt(s->head, sizeof s->head, "refs/heads/%s", s->branch) < 0 ||
		git_reference_name_is_valid(&valid, s->head) < 0 || !valid)
		return fail(s, CK_INVALID, "branch name \"%s\" is not valid",
			s->branch);
	if (fmt(s->tracking, sizeof s->tracking, "refs/remotes/origin/%s",
		    s->branch) < 0 ||
		fmt(s->refspec, sizeof s->refspec, "+%s:%s", s->head,
			s->tracking) < 0)
		return fail(s, CK_INVALID, "branch name \"%.64s…\" is too long",
			s->branch);
	if (!pin_ok(s, it->commit))
		return fail(s, CK_INVALID,
			"commit \"%s\" is not 7 to 40 hex digits", it->commit);
	if (!it->root || paths(s, it->root, it->path_name) < 0)
		return it->root ? -1
				: fail(s, CK_INVALID, "no cache directory");
	if ((c = link_slot(s->link, it->path_name)) < 0)
		return fail(s, CK_IO, "%s exists and is not a cache checkout",
			s->link);
	s->cur = (char)c;
	if (s->cur &&
		(slot_path(s, s->cur, slot) < 0 ||
			head_of(slot, s->cur_commit) < 0))
		s->cur_commit[0] = 0;
	s->next = s->cur == 'a' ? 'b' : 'a';
	return 0;
}

/* dirname_of cuts path at its last '/', in place, and returns it. */
static char *
dirname_of(char *path)
{
	char *slash = strrchr(path, '/');

	if (slash)
		*slash = 0;
	return path;
}

/* clear_tmp removes what crashed syncs left in the slots directory. */
static void
clear_tmp(struct sync *s)
{
	char path[PATH_MAX];
	struct dirent *de;
	DIR *d = opendir(s->slots);

	if (!d)
		return;
	while ((de = readdir(d)))
		if (!strncmp(de->d_name, "tmp-", 4) &&
			fmt(path, sizeof path, "%s/%s", s->slots, de->d_name) ==
				0)
			ck_rmtree(path);
	closedir(d);
}

/* ---- talking to the remote ---- */

/* remote_tip writes the commit the remote's branch names (ls-remote). */
static int
remote_tip(struct sync *s, char hex[41])
{
	git_remote_connect_options co;
	const git_remote_head **heads;
	git_remote *r = NULL;
	size_t n = 0, i;
	int rc;

	git_remote_connect_options_init(&co,
		GIT_REMOTE_CONNECT_OPTIONS_VERSION);
	callbacks(s, &co.callbacks);
	begin(s);
	if ((rc = git_remote_create_detached(&r, s->it->url)) < 0 ||
		(rc = git_remote_connect_ext(r, GIT_DIRECTION_FETCH, &co)) <
			0 ||
		(rc = git_remote_ls(&heads, &n, r)) < 0) {
		rc = gfail(s, rc, "ls-remote");
		git_remote_free(r);
		return rc;
	}
	for (i = 0; i < n && strcmp(heads[i]->name, s->head); i++)
		;
	if (i < n)
		git_oid_tostr(hex, 41, &heads[i]->oid);
	git_remote_disconnect(r);
	git_remote_free(r);
	end(s, 1);
	return i < n ? 0 : branch_missing(s);
}

/* advertised: the remote, after a fetch, named the branch. */
static int
advertised(struct sync *s, git_remote *r)
{
	const git_remote_head **heads;
	size_t n = 0;

	if (git_remote_ls(&heads, &n, r) < 0)
		return 0;
	for (size_t i = 0; i < n; i++)
		if (!strcmp(heads[i]->name, s->head))
			return 1;
	return 0;
}

static int
single_branch(git_remote **out, git_repository *repo, const char *name,
	const char *url, void *payload)
{
	struct sync *s = payload;

	return git_remote_create_with_fetchspec(out, repo, name, url,
		s->refspec);
}

/* clone_tmp clones into tmp: the branch alone at s->depth, or (pinned)
 * everything, with no checkout. */
static int
clone_tmp(struct sync *s, git_repository **repo)
{
	git_clone_options co;
	const git_error *e;
	int rc;

	git_clone_options_init(&co, GIT_CLONE_OPTIONS_VERSION);
	ck_rmtree(s->tmp);
	callbacks(s, &co.fetch_opts.callbacks);
	if (*s->pin) {
		co.checkout_opts.checkout_strategy = GIT_CHECKOUT_NONE;
	} else {
		co.fetch_opts.depth = s->depth;
		co.checkout_branch = s->branch;
		co.remote_cb = single_branch;
		co.remote_cb_payload = s;
	}
	begin(s);
	rc = git_clone(repo, s->it->url, s->tmp, &co);
	end(s, rc == 0);
	if (rc == 0)
		return 0;
	e = git_error_last();
	if (rc == GIT_ENOTFOUND && e && e->klass == GIT_ERROR_REFERENCE &&
		e->message && has(e->message, s->tracking))
		return branch_missing(s);
	return gfail(s, rc, "clone");
}

/* ---- checkouts ---- */

/* checkout_pin checks out the pinned commit with HEAD detached; 1 when
 * the repository does not hold it. */
static int
checkout_pin(struct sync *s, git_repository *repo)
{
	git_checkout_options co;
	git_object *obj = NULL;
	git_oid oid;
	size_t n = strlen(s->pin);
	int rc;

	git_checkout_options_init(&co, GIT_CHECKOUT_OPTIONS_VERSION);
	co.checkout_strategy = GIT_CHECKOUT_FORCE |
		GIT_CHECKOUT_REMOVE_UNTRACKED;
	git_oid_fromstrn(&oid, s->pin, n);
	rc = git_object_lookup_prefix(&obj, repo, &oid, n, GIT_OBJECT_COMMIT);
	if (rc == GIT_ENOTFOUND)
		return 1;
	if (rc == GIT_EAMBIGUOUS)
		return fail(s, CK_INVALID, "commit %s is ambiguous at %s",
			s->pin, s->url);
	if (rc < 0 || (rc = git_checkout_tree(repo, obj, &co)) < 0 ||
		(rc = git_repository_set_head_detached(repo,
			 git_object_id(obj))) < 0)
		rc = gfail(s, rc, "checkout");
	git_object_free(obj);
	return rc;
}

/* reset_branch resets the work tree hard to the fetched branch and
 * leaves HEAD on a local branch of that name. */
static int
reset_branch(struct sync *s, git_repository *repo)
{
	git_checkout_options co;
	git_reference *head = NULL, *br = NULL;
	git_object *obj = NULL;
	int rc;

	git_checkout_options_init(&co, GIT_CHECKOUT_OPTIONS_VERSION);
	co.checkout_strategy = GIT_CHECKOUT_FORCE |
		GIT_CHECKOUT_REMOVE_UNTRACKED;
	rc = git_revparse_single(&obj, repo, s->tracking);
	if (rc == GIT_ENOTFOUND)
		return branch_missing(s);
	/* git_reset checks out with GIT_CHECKOUT_FORCE alone: untracked
	 * files go in a second checkout */
	if (rc < 0 || (rc = git_reset(repo, obj, GIT_RESET_HARD, &co)) < 0 ||
		(rc = git_checkout_head(repo, &co)) < 0)
		goto out;
	if (git_repository_head(&head, repo) == 0 &&
		!strcmp(git_reference_name(head), s->head))
		goto out;
	if ((rc = git_branch_create(&br, repo, s->branch, (git_commit *)obj,
		     1)) < 0)
		goto out;
	rc = git_repository_set_head(repo, s->head);
out:
	if (rc < 0)
		rc = gfail(s, rc, "reset");
	git_reference_free(head);
	git_reference_free(br);
	git_object_free(obj);
	return rc;
}

static int
count_packs(const char *slot)
{
	char path[PATH_MAX];
	struct dirent *de;
	DIR *d;
	int n = 0;

	if (fmt(path, sizeof path, "%s/.git/objects/pack", slot) < 0 ||
		!(d = opendir(path)))
		return 0;
	while ((de = readdir(d))) {
		size_t len = strlen(de->d_name);
		n += len > 5 && !strcmp(de->d_name + len - 5, ".pack");
	}
	closedir(d);
	return n;
}

/* in_place updates the unlinked slot where it holds a repository of the
 * same URL: 0 done, -1 failed (res set), 1 when it cannot be used. */
static int
in_place(struct sync *s)
{
	git_fetch_options fo;
	char slot[PATH_MAX], *spec = s->refspec;
	git_strarray specs = {&spec, 1};
	git_repository *repo;
	git_remote *r = NULL;
	int rc = 1;

	git_fetch_options_init(&fo, GIT_FETCH_OPTIONS_VERSION);
	if (slot_path(s, s->next, slot) < 0 || !(repo = open_repo(slot)))
		return 1;
	if (git_remote_lookup(&r, repo, "origin") < 0 ||
		strcmp(git_remote_url(r), s->it->url) ||
		count_packs(slot) > MAX_PACKS)
		goto out;
	if (*s->pin) {
		rc = checkout_pin(s, repo);
		goto out;
	}
	callbacks(s, &fo.callbacks);
	fo.prune = GIT_FETCH_PRUNE;
	fo.depth = s->depth;
	begin(s);
	rc = git_remote_fetch(r, &specs, &fo, "k8shazgpu: update");
	end(s, rc == 0);
	if (rc < 0)
		rc = gfail(s, rc, "fetch");
	else if (!advertised(s, r))
		rc = branch_missing(s);
	else
		rc = reset_branch(s, repo);
out:
	git_remote_free(r);
	git_repository_free(repo);
	return rc;
}

/* fresh clones into tmp and renames it over the unlinked slot. */
static int
fresh(struct sync *s)
{
	char slot[PATH_MAX];
	git_repository *repo = NULL;
	int rc;

	if ((rc = clone_tmp(s, &repo)) == 0 && *s->pin &&
		(rc = checkout_pin(s, repo)) > 0)
		rc = fail(s, CK_NOT_FOUND, "commit %s not found at %s", s->pin,
			s->url);
	git_repository_free(repo);
	if (rc < 0)
		return -1;
	if (slot_path(s, s->next, slot) < 0 || ck_rmtree(slot) < 0 ||
		rename(s->tmp, slot) < 0)
		return fail(s, CK_IO, "move the clone of %s into %s: %s",
			s->url, slot, strerror(errno));
	return 0;
}

/* remote_side: a reason the remote gave, which a fresh clone would meet
 * again. */
static int
remote_side(enum ck_reason r)
{
	return r != CK_IO && r != CK_OK;
}

static int
update(struct sync *s)
{
	char tip[41];
	int rc;

	if (!s->it->force && s->cur && *s->cur_commit) {
		if (*s->pin ? !strncmp(s->cur_commit, s->pin, strlen(s->pin))
			    : remote_tip(s, tip) == 0 &&
					!strcmp(tip, s->cur_commit)) {
			s->keep = 1;
			return 0;
		}
		if (s->res->reason)
			return -1;
	}
	if (!s->it->force && (rc = in_place(s)) <= 0) {
		if (rc == 0 || remote_side(s->res->reason))
			return rc;
		/* a damaged slot: clone it afresh */
		*s->res = (struct ck_result){0};
	}
	return fresh(s);
}

/* ---- the result ---- */

static int
lfs_pointer(git_repository *repo, const git_oid *id)
{
	static const size_t n = sizeof LFS_SPEC - 1;
	git_blob *b = NULL;
	const char *p;
	size_t len;
	int yes = 0;

	if (git_blob_lookup(&b, repo, id) < 0)
		return 0;
	p = git_blob_rawcontent(b);
	len = (size_t)git_blob_rawsize(b);
	if (len > n && len <= LFS_MAX && !memcmp(p, LFS_SPEC, n))
		yes = p[n] == '\n' ||
			(p[n] == '\r' && len > n + 1 && p[n + 1] == '\n');
	git_blob_free(b);
	return yes;
}

static int
mentions_lfs(git_repository *repo, const git_index_entry *e)
{
	const char *base = strrchr(e->path, '/');
	git_blob *b = NULL;
	int yes;

	if (strcmp(base ? base + 1 : e->path, ".gitattributes") ||
		git_blob_lookup(&b, repo, &e->id) < 0)
		return 0;
	yes = memmem(git_blob_rawcontent(b), (size_t)git_blob_rawsize(b),
		      "filter=lfs", 10) != NULL;
	git_blob_free(b);
	return yes;
}

/* lfs_scan counts the regular files marked filter=lfs that hold an LFS
 * pointer, names the first few in res->message. */
static void
lfs_scan(git_repository *repo, struct ck_result *res)
{
	char names[300] = "";
	git_index *idx = NULL;
	const git_index_entry *e;
	const char *v;
	size_t i, n;
	int count = 0, any = 0;

	if (git_repository_index(&idx, repo) < 0)
		return;
	n = git_index_entrycount(idx);
	for (i = 0; i < n && !any; i++)
		any = mentions_lfs(repo, git_index_get_byindex(idx, i));
	for (i = 0; any && i < n; i++) {
		e = git_index_get_byindex(idx, i);
		if ((e->mode & 0170000) != 0100000 || e->file_size > LFS_MAX ||
			git_attr_get(&v, repo, GIT_ATTR_CHECK_INDEX_ONLY,
				e->path, "filter") < 0 ||
			git_attr_value(v) != GIT_ATTR_VALUE_STRING ||
			strcmp(v, "lfs") || !lfs_pointer(repo, &e->id))
			continue;
		if (++count <= LFS_NAMED) {
			size_t used = strlen(names);
			snprintf(names + used, sizeof names - used, "%s%s",
				count > 1 ? ", " : "", e->path);
		}
	}
	git_index_free(idx);
	if (!count)
		return;
	res->lfs_pointers = count;
	snprintf(res->message, sizeof res->message,
		"%d %s Git LFS pointer%s, not content (libgit2 does not run LFS): %s%s",
		count, count == 1 ? "file is a" : "files are",
		count == 1 ? "" : "s", names, count > LFS_NAMED ? ", …" : "");
	err_clean(res->message);
}

/* finish swaps the link to the slot written and fills res from the
 * linked checkout. */
static int
finish(struct sync *s)
{
	char slot[PATH_MAX], target[PATH_MAX];
	char linked = s->keep ? s->cur : s->next;
	git_repository *repo;
	git_oid oid;

	if (!s->keep &&
		(fmt(target, sizeof target, SLOTS "/%s/%c", s->it->path_name,
			 s->next) < 0 ||
			ck_swap_symlink(s->link, target) < 0))
		return fail(s, CK_IO, "link %s to %s: %s", s->link, target,
			strerror(errno));
	if (slot_path(s, linked, slot) < 0 || !(repo = open_repo(slot)))
		return fail(s, CK_IO, "open the checkout %s", slot);
	if (git_reference_name_to_id(&oid, repo, "HEAD") == 0)
		git_oid_tostr(s->res->resolved, 41, &oid);
	lfs_scan(repo, s->res);
	git_repository_free(repo);
	s->res->bytes = ck_du(slot);
	return 0;
}

int
gitsync_sync(const struct gitsync_item *it, ck_progress_fn *fn, void *arg,
	struct ck_result *res)
{
	struct sync *s = calloc(1, sizeof *s);
	int rc;

	*res = (struct ck_result){0};
	if (!s)
		return ck_fail(res, CK_IO, "sync: %s", strerror(errno));
	s->it = it;
	s->res = res;
	s->fn = fn;
	s->arg = arg;
	if ((rc = prepare(s)) == 0) {
		set_timeouts(it->timeout_s);
		if (ck_mkdirs(s->slots, 0755) < 0)
			rc = fail(s, CK_IO, "create %s: %s", s->slots,
				strerror(errno));
	}
	if (rc == 0) {
		clear_tmp(s);
		rc = update(s);
		ck_rmtree(s->tmp);
	}
	if (rc == 0)
		rc = finish(s);
	res->fetched = s->fetched;
	if (rc < 0 && !s->cur && *s->slots) {
		/* a first sync that failed leaves no empty directories */
		rmdir(s->slots);
		rmdir(dirname_of(s->slots));
	}
	free(s);
	return rc;
}

int
gitsync_current(const char *root, const char *path_name, char commit[41])
{
	char link[PATH_MAX], slot[PATH_MAX];
	int c;

	if (!ck_name_ok(path_name) ||
		fmt(link, sizeof link, "%s/%s", root, path_name) < 0 ||
		(c = link_slot(link, path_name)) <= 0 ||
		fmt(slot, sizeof slot, "%s/" SLOTS "/%s/%c", root, path_name,
			c) < 0)
		return -1;
	return head_of(slot, commit);
}

int
gitsync_remove(const char *root, const char *path_name, struct ck_result *res)
{
	struct gitsync_item it = {.root = root, .path_name = path_name};
	struct sync s = {.it = &it, .res = res};
	char slots[PATH_MAX];

	*res = (struct ck_result){0};
	if (!ck_name_ok(path_name))
		return fail(&s, CK_INVALID,
			"path name \"%s\" is not one path component of [A-Za-z0-9._-]",
			path_name);
	if (paths(&s, root, path_name) < 0)
		return -1;
	if (link_slot(s.link, path_name) < 0)
		return fail(&s, CK_IO, "%s exists and is not a cache checkout",
			s.link);
	if ((unlink(s.link) < 0 && errno != ENOENT) || ck_rmtree(s.slots) < 0)
		return fail(&s, CK_IO, "remove %s: %s", s.link,
			strerror(errno));
	/* the directory of all slots goes with the last repository */
	if (fmt(slots, sizeof slots, "%s/" SLOTS, root) == 0)
		rmdir(slots);
	return 0;
}
