/* dp_git: diff-pack's pack mode (see dp_git.h and diff-pack(1)).
 *
 * The order of the work: open the checkout and refuse what cannot be
 * packed (bare, no vLLM, unborn HEAD, an index libgit2 cannot read,
 * unmerged paths); find the base; with --check, find the image, walking
 * back first parents; walk the diff and read the bytes; check the cap;
 * write the pack, the ConfigMaps, the record. Warnings go to stderr as
 * they are found and into the record. */
#include "dp_git.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <git2.h>
#include <jansson.h>

#include "b64.h"
#include "dp_apply.h"
#include "dp_path.h"
#include "dp_state.h"
#include "err.h"
#include "jbuf.h"
#include "nd.h"
#include "registry.h"
#include "sha256.h"

enum { OP_PUT, OP_LINK, OP_DEL };

struct entry {
	char *path;
	int op;
	int exec;            /* put: mode 100755 */
	unsigned char *data; /* put: the content; link: the target */
	size_t size;
	char sha[65];       /* put: of data */
	char base_blob[41]; /* "" when the base has no blob at path */
	char *renamed_to;   /* del: the new side of a rename */
	unsigned base_mode; /* the base's file mode at path, with base_blob */
	int pinned;         /* --since: the pod's state decided its base_blob */
	uint64_t offset;    /* put: into the pack's data */
};

struct ctx {
	const struct dp_opts *o;
	git_repository *repo;
	git_index *index;
	char *root; /* the work tree, absolute, no trailing '/' */
	int rootfd; /* open on it: every read of the work tree starts here */
	git_commit *head, *mb, *base;
	char head_hex[41], mb_hex[41], base_hex[41];
	char *branch, *base_ref, *remote, *remote_url;
	char *image, *image_digest;
	int image_checked;
	struct entry *e;
	size_t n, alloc;
	json_t *native, *submodules, *hidden, *warnings;
	unsigned char *pack;
	size_t pack_len, data_size;
	char pack_sha[65];
	char *pack_path;
	json_t *since; /* --since: the pod's state's files */
};

/* warn says msg on stderr and keeps it for the record. */
static void __attribute__((format(printf, 2, 3)))
warn(struct ctx *c, const char *fmt, ...)
{
	va_list ap;
	char *s;

	va_start(ap, fmt);
	if (vasprintf(&s, fmt, ap) < 0)
		err_die(HAZ_FAIL, "out of memory");
	va_end(ap);
	err_warn("warning: %s", s);
	json_array_append_new(c->warnings, json_string(err_clean(s)));
	free(s);
}

/* gerr: libgit2's last error message, or a placeholder. */
static const char *
gerr(void)
{
	const git_error *e = git_error_last();

	return e && e->message ? e->message : "unknown libgit2 error";
}

static char *
oid_hex(const git_oid *id, char out[41])
{
	return git_oid_tostr(out, 41, id);
}

/* ---- the work tree
 *
 * Every read of the work tree starts from the root's descriptor and
 * opens one directory at a time without following a symbolic link
 * (dp_path_open_dir): git looks at no file through a symlink, and
 * neither does the pack, so a directory replaced by a link to anywhere
 * is the link, its files deleted, and nothing beyond it is read. */

/* wt_dir opens the directory holding path (relative to the root), *name
 * its last component: -1 with errno, ENOENT when a symlink, a
 * non-directory or nothing is on the way (git sees nothing at path). */
static int
wt_dir(struct ctx *c, const char *path, const char **name)
{
	int fd = dp_path_open_parent(c->rootfd, path, name);

	if (fd < 0 && (errno == ELOOP || errno == ENOTDIR))
		errno = ENOENT;
	return fd;
}

/* wt_lstat is lstat(2) of path in the work tree, as wt_dir reaches it. */
static int
wt_lstat(struct ctx *c, const char *path, struct stat *st)
{
	const char *name;
	int dfd = wt_dir(c, path, &name), r, e;

	if (dfd < 0)
		return -1;
	r = fstatat(dfd, name, st, AT_SYMLINK_NOFOLLOW);
	e = errno;
	close(dfd);
	errno = e;
	return r;
}

/* read_regular reads the regular file name in dfd, not a symlink, whole
 * into *out: 0; 1 when it holds over max bytes (nothing kept); -1 with
 * errno, EINVAL when it is not a regular file. */
static int
read_regular(int dfd, const char *name, size_t max, unsigned char **out,
	size_t *len)
{
	int fd = openat(dfd, name,
		O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
	unsigned char *buf = NULL;
	size_t cap, n = 0;
	struct stat st;
	ssize_t got;
	int e, r = -1;

	if (fd < 0) {
		if (errno == ELOOP)
			errno = EINVAL;
		return -1;
	}
	if (fstat(fd, &st) < 0)
		goto out;
	if (!S_ISREG(st.st_mode)) {
		errno = EINVAL;
		goto out;
	}
	r = 1;
	if ((uintmax_t)st.st_size > max)
		goto out;
	cap = (size_t)st.st_size + 1;
	buf = emalloc(cap);
	for (;;) {
		if (n == cap) {
			cap = cap > (max + 1) / 2 ? max + 1 : 2 * cap;
			buf = erealloc(buf, cap);
		}
		got = read(fd, buf + n, cap - n);
		if (got < 0 && errno == EINTR)
			continue;
		if (got <= 0) {
			r = got < 0 ? -1 : 0;
			break;
		}
		if ((n += (size_t)got) > max) {
			r = 1;
			break;
		}
	}
out:
	e = errno;
	close(fd);
	if (r == 0) {
		*out = buf;
		*len = n;
	} else {
		free(buf);
	}
	errno = e;
	return r;
}

/* ---- the checkout */

/* file_names_vllm: the root's file name is a regular file whose first
 * MiB says "vllm". */
static int
file_names_vllm(struct ctx *c, const char *name)
{
	char buf[1 << 20];
	ssize_t n;
	int fd = openat(c->rootfd, name,
		O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
	struct stat st;

	if (fd < 0)
		return 0;
	n = fstat(fd, &st) == 0 && S_ISREG(st.st_mode)
		? read(fd, buf, sizeof buf)
		: -1;
	close(fd);
	return n > 0 && memmem(buf, (size_t)n, "vllm", 4) != NULL;
}

static int
is_vllm(struct ctx *c)
{
	struct stat st;

	return (wt_lstat(c, "vllm/__init__.py", &st) == 0 &&
		       S_ISREG(st.st_mode)) ||
		file_names_vllm(c, "setup.py") ||
		file_names_vllm(c, "pyproject.toml");
}

static int
open_checkout(struct ctx *c)
{
	const char *start = c->o->dir ? c->o->dir : ".";
	git_reference *head = NULL;
	const char *wd;
	char *real;
	int rc;

	/* git's own bound on the search upward, for a checkout inside
	 * another repository's work tree */
	rc = git_repository_open_ext(&c->repo, start, 0,
		getenv("GIT_CEILING_DIRECTORIES"));
	if (rc == GIT_ENOTFOUND) {
		err_warn("%s: not in a git repository: run diff-pack in a "
			 "vLLM checkout, or name one with -C",
			start);
		return DP_NOTREE;
	}
	if (rc < 0) {
		err_warn("%s: %s", start, gerr());
		return DP_NOTREE;
	}
	if (git_repository_is_bare(c->repo) ||
		!(wd = git_repository_workdir(c->repo))) {
		err_warn("%s: a bare repository, with no work tree: run "
			 "diff-pack in a checkout",
			git_repository_path(c->repo));
		return DP_NOTREE;
	}
	real = realpath(wd, NULL);
	c->root = estrdup(real ? real : wd);
	free(real);
	if (strlen(c->root) > 1 && c->root[strlen(c->root) - 1] == '/')
		c->root[strlen(c->root) - 1] = 0;
	if ((c->rootfd = open(c->root, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) <
		0) {
		err_warn("%s: open:", c->root);
		return HAZ_FAIL;
	}
	if (!is_vllm(c)) {
		err_warn("%s: not a vLLM checkout (no vllm/__init__.py, no "
			 "setup.py or pyproject.toml naming vllm)",
			c->root);
		return DP_NOTREE;
	}
	if (git_repository_head_unborn(c->repo) == 1) {
		err_warn("%s: HEAD has no commit yet: commit first", c->root);
		return DP_NOTREE;
	}
	if (git_repository_head(&head, c->repo) < 0 ||
		git_reference_peel((git_object **)&c->head, head,
			GIT_OBJECT_COMMIT) < 0) {
		err_warn("%s: HEAD: %s", c->root, gerr());
		git_reference_free(head);
		return DP_NOTREE;
	}
	if (git_reference_is_branch(head))
		c->branch = estrdup(git_reference_shorthand(head));
	git_reference_free(head);
	oid_hex(git_commit_id(c->head), c->head_hex);
	return 0;
}

/* blob_is: the regular file name in dfd, filtered as git would store it
 * at path, is the blob id. A file over DP_PACK_MAX bytes is not. */
static int
blob_is(struct ctx *c, int dfd, const char *name, const char *path,
	const git_oid *id)
{
	git_filter_list *fl = NULL;
	git_buf out = {0};
	unsigned char *data;
	size_t len;
	git_oid got;
	int same = 0;

	if (read_regular(dfd, name, DP_PACK_MAX, &data, &len))
		return 0;
	if (git_filter_list_load(&fl, c->repo, NULL, path, GIT_FILTER_TO_ODB,
		    GIT_FILTER_ALLOW_UNSAFE) == 0) {
		if (!fl)
			same = git_odb_hash(&got, data, len, GIT_OBJECT_BLOB) ==
				0;
		else if (git_filter_list_apply_to_buffer(&out, fl,
				 (const char *)data, len) == 0)
			same = git_odb_hash(&got, out.ptr, out.size,
				       GIT_OBJECT_BLOB) == 0;
		same = same && git_oid_equal(&got, id);
	}
	git_buf_dispose(&out);
	git_filter_list_free(fl);
	free(data);
	return same;
}

/* hidden_changed: the work-tree file of an index entry git was told not
 * to look at differs from the entry (a skip-worktree entry with no file
 * is the sparse state itself, not a change). */
static int
hidden_changed(struct ctx *c, const git_index_entry *ie, int skip)
{
	const char *name;
	struct stat st;
	git_oid id;
	int dfd = wt_dir(c, ie->path, &name), changed = 1;

	if (dfd < 0 || fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0) {
		changed = !skip;
	} else if (S_ISLNK(st.st_mode)) {
		char buf[PATH_MAX];
		ssize_t n = readlinkat(dfd, name, buf, sizeof buf);
		changed = ie->mode != GIT_FILEMODE_LINK || n < 0 ||
			git_odb_hash(&id, buf, (size_t)n, GIT_OBJECT_BLOB) <
				0 ||
			!git_oid_equal(&id, &ie->id);
	} else if (S_ISREG(st.st_mode)) {
		unsigned mode = st.st_mode & S_IXUSR
			? GIT_FILEMODE_BLOB_EXECUTABLE
			: GIT_FILEMODE_BLOB;
		changed = ie->mode != mode ||
			!blob_is(c, dfd, name, ie->path, &ie->id);
	}
	if (dfd >= 0)
		close(dfd);
	return changed;
}

/* check_index refuses an index libgit2 cannot read (split, sparse) or
 * with unmerged paths, and warns of hidden changes. */
static int
check_index(struct ctx *c)
{
	const git_index_entry *ie, *anc, *ours, *theirs;
	git_index_conflict_iterator *it = NULL;
	char *names = NULL;
	size_t i, n = 0;

	if (git_repository_index(&c->index, c->repo) < 0) {
		err_warn("%s: the index: %s: an index libgit2 cannot read "
			 "(split or sparse?): git update-index "
			 "--no-split-index; git sparse-checkout disable",
			c->root, gerr());
		return DP_NOTREE;
	}
	for (i = 0; (ie = git_index_get_byindex(c->index, i)); i++) {
		int skip = (ie->flags_extended &
				   GIT_INDEX_ENTRY_SKIP_WORKTREE) != 0;
		int valid = (ie->flags & GIT_INDEX_ENTRY_VALID) != 0;
		if (ie->mode == GIT_FILEMODE_TREE) {
			err_warn("%s: a sparse index (%s/ is one entry): git "
				 "sparse-checkout disable, or git config "
				 "index.sparse false",
				c->root, ie->path);
			return DP_NOTREE;
		}
		if ((skip || valid) && hidden_changed(c, ie, skip)) {
			json_array_append_new(c->hidden, json_string(ie->path));
			warn(c,
				"%s: changed in the work tree but marked %s, "
				"so git and this pack leave it out: git "
				"update-index --no-%s %s",
				ie->path,
				skip ? "skip-worktree" : "assume-unchanged",
				skip ? "skip-worktree" : "assume-unchanged",
				ie->path);
		}
	}
	if (!git_index_has_conflicts(c->index))
		return 0;
	if (git_index_conflict_iterator_new(&it, c->index) < 0)
		err_die(HAZ_FAIL, "%s: the index: %s", c->root, gerr());
	while (git_index_conflict_next(&anc, &ours, &theirs, it) == 0) {
		const git_index_entry *any = ours ? ours
			: theirs                  ? theirs
						  : anc;
		char *more;
		if (n++ >= 5)
			continue;
		more = easprintf("%s%s%s", names ? names : "",
			names ? ", " : "", any->path);
		free(names);
		names = more;
	}
	git_index_conflict_iterator_free(it);
	err_warn("%s: unmerged paths: %s%s: resolve them (git add), or git "
		 "merge --abort",
		c->root, names, n > 5 ? ", ..." : "");
	free(names);
	return DP_NOTREE;
}

/* ---- the base */

/* net_error: libgit2's last error came from the network. */
static int
net_error(void)
{
	const git_error *e = git_error_last();

	return e &&
		(e->klass == GIT_ERROR_NET || e->klass == GIT_ERROR_HTTP ||
			e->klass == GIT_ERROR_SSL ||
			e->klass == GIT_ERROR_SSH || e->klass == GIT_ERROR_OS);
}

/* fetch_main fetches main of upstream, else origin, into
 * refs/remotes/NAME/main. */
static int
fetch_main(struct ctx *c)
{
	static const char *names[] = {"upstream", "origin"};
	char *spec;
	git_strarray specs;
	git_fetch_options fo;
	git_remote *r = NULL;
	size_t i;
	int rc;

	for (i = 0; i < 2 && !r; i++)
		if (git_remote_lookup(&r, c->repo, names[i]) < 0)
			r = NULL;
	if (!r) {
		err_warn("%s: --fetch: no remote named upstream or origin: git "
			 "remote add upstream URL",
			c->root);
		return DP_NOTREE;
	}
	spec = easprintf("+refs/heads/main:refs/remotes/%s/main",
		git_remote_name(r));
	specs.strings = &spec;
	specs.count = 1;
	git_fetch_options_init(&fo, GIT_FETCH_OPTIONS_VERSION);
	rc = git_remote_fetch(r, &specs, &fo, NULL);
	free(spec);
	if (rc < 0) {
		int temp = net_error();
		err_warn("%s: fetch main of %s (%s): %s", c->root,
			git_remote_name(r), git_remote_url(r), gerr());
		git_remote_free(r);
		return temp ? HAZ_TEMP : DP_NOTREE;
	}
	git_remote_free(r);
	return 0;
}

/* base_commit resolves -b, or the first of upstream's and origin's main
 * that exists, into *out, setting c->base_ref. */
static int
base_commit(struct ctx *c, git_commit **out)
{
	static const char *refs[] = {"refs/remotes/upstream/main",
		"refs/remotes/origin/main"};
	git_object *obj = NULL;
	git_reference *ref = NULL;
	size_t i;

	if (c->o->base_ref) {
		if (git_revparse_ext(&obj, &ref, c->repo, c->o->base_ref) < 0) {
			err_warn("%s: -b %s: %s", c->root, c->o->base_ref,
				gerr());
			return DP_NOTREE;
		}
		c->base_ref = estrdup(
			ref ? git_reference_name(ref) : c->o->base_ref);
		git_reference_free(ref);
	} else {
		for (i = 0; i < 2 && !obj; i++)
			if (git_revparse_single(&obj, c->repo, refs[i]) == 0)
				c->base_ref = estrdup(refs[i]);
		if (!obj) {
			err_warn("%s: no refs/remotes/upstream/main or "
				 "refs/remotes/origin/main: git fetch origin "
				 "main (or diff-pack --fetch), or name the "
				 "base with -b",
				c->root);
			return DP_NOTREE;
		}
	}
	if (git_object_peel((git_object **)out, obj, GIT_OBJECT_COMMIT) < 0) {
		err_warn("%s: %s: not a commit: %s", c->root, c->base_ref,
			gerr());
		git_object_free(obj);
		return DP_NOTREE;
	}
	git_object_free(obj);
	return 0;
}

/* find_base sets the merge-base of HEAD and the base ref, and the
 * remote the base ref belongs to. */
static int
find_base(struct ctx *c)
{
	git_commit *upstream = NULL;
	git_remote *r = NULL;
	git_oid mb;
	int st, rc;

	if (c->o->fetch && (st = fetch_main(c)))
		return st;
	if ((st = base_commit(c, &upstream)))
		return st;
	if (!strncmp(c->base_ref, "refs/remotes/", 13)) {
		const char *name = c->base_ref + 13;
		c->remote = easprintf("%.*s", (int)strcspn(name, "/"), name);
		if (git_remote_lookup(&r, c->repo, c->remote) == 0 &&
			git_remote_url(r))
			c->remote_url = estrdup(git_remote_url(r));
		git_remote_free(r);
	}
	rc = git_merge_base(&mb, c->repo, git_commit_id(c->head),
		git_commit_id(upstream));
	git_commit_free(upstream);
	if (rc < 0 && git_repository_is_shallow(c->repo)) {
		err_warn("%s: a shallow clone: HEAD and %s have no common "
			 "commit in the history fetched: git fetch "
			 "--unshallow (or --deepen=N)",
			c->root, c->base_ref);
		return DP_NOTREE;
	}
	if (rc == GIT_ENOTFOUND) {
		err_warn("%s: HEAD and %s have no common commit (unrelated "
			 "histories): name the base with -b",
			c->root, c->base_ref);
		return DP_NOTREE;
	}
	if (rc < 0 || git_commit_lookup(&c->mb, c->repo, &mb) < 0) {
		err_warn("%s: the merge-base of HEAD and %s: %s", c->root,
			c->base_ref, gerr());
		return DP_NOTREE;
	}
	oid_hex(&mb, c->mb_hex);
	return 0;
}

/* ---- the image */

/* split_image cuts IMAGE into its repository and its tag or digest
 * (default "latest"), both malloc'd. */
static void
split_image(const char *image, char **repo, char **tag)
{
	const char *at = strchr(image, '@');
	const char *slash = strrchr(image, '/');
	const char *colon = strrchr(image, ':');

	if (at) {
		*repo = easprintf("%.*s", (int)(at - image), image);
		*tag = estrdup(at + 1);
	} else if (colon && (!slash || colon > slash)) {
		*repo = easprintf("%.*s", (int)(colon - image), image);
		*tag = estrdup(colon + 1);
	} else {
		*repo = estrdup(image);
		*tag = estrdup("latest");
	}
}

/* probe_status turns a failed probe into diff-pack's exit status. */
static int
probe_status(int ret, const char *why)
{
	err_warn("%s", why);
	return ret == REG_UNREACHABLE ? HAZ_TEMP
		: ret == REG_ABSENT   ? DP_NOIMAGE
				      : HAZ_FAIL;
}

/* choose_image names the image; with --check it asks the registry,
 * walking back first parents of the merge-base (unless -i) until one
 * has an image, which becomes the base. */
static int
choose_image(struct ctx *c)
{
	struct registry *reg;
	git_commit *at, *parent;
	char *repo, *tag, *why = NULL, *digest = NULL;
	int i, ret, st = 0;

	git_object_dup((git_object **)&c->base, (git_object *)c->mb);
	memcpy(c->base_hex, c->mb_hex, 41);
	if (c->o->image)
		c->image = estrdup(c->o->image);
	else
		c->image = easprintf("%s:%s", c->o->repo, c->base_hex);
	if (!c->o->check)
		return 0;
	split_image(c->image, &repo, &tag);
	if (!(reg = registry_open(repo, &why))) {
		err_warn("%s", why);
		free(why);
		free(repo);
		free(tag);
		return HAZ_USAGE;
	}
	if (c->o->image) {
		ret = registry_probe(reg, tag, &digest, &why);
		if (ret != REG_PRESENT)
			st = probe_status(ret, why);
		goto out;
	}
	git_object_dup((git_object **)&at, (git_object *)c->mb);
	for (i = 0;; i++) {
		char hex[41];
		oid_hex(git_commit_id(at), hex);
		ret = registry_probe(reg, hex, &digest, &why);
		if (ret == REG_PRESENT) {
			git_commit_free(c->base);
			c->base = at;
			memcpy(c->base_hex, hex, 41);
			free(c->image);
			c->image = easprintf("%s:%s", repo, hex);
			break;
		}
		if (ret != REG_ABSENT) {
			git_commit_free(at);
			st = probe_status(ret, why);
			goto out;
		}
		free(why);
		why = NULL;
		if (i + 1 >= c->o->walk ||
			git_commit_parent(&parent, at, 0) < 0) {
			git_commit_free(at);
			err_warn("%s: no image for the merge-base %s or its "
				 "first parents: %d commit%s tried: push one, "
				 "raise -w, or name an image with -i",
				repo, c->mb_hex, i + 1, i ? "s" : "");
			st = DP_NOIMAGE;
			goto out;
		}
		git_commit_free(at);
		at = parent;
	}
	if (i > 0)
		warn(c,
			"no image for the merge-base %.12s: the base is its "
			"first-parent ancestor %.12s, %d commit%s back, which "
			"has one",
			c->mb_hex, c->base_hex, i, i > 1 ? "s" : "");
out:
	if (st == 0) {
		c->image_checked = 1;
		c->image_digest = digest;
	}
	free(why);
	free(repo);
	free(tag);
	registry_close(reg);
	return st;
}

/* ---- the diff */

static struct entry *
add_entry(struct ctx *c, const char *path, int op)
{
	struct entry *e;

	if (c->n == c->alloc) {
		c->alloc = c->alloc ? 2 * c->alloc : 64;
		c->e = erealloc(c->e, c->alloc * sizeof *c->e);
	}
	e = &c->e[c->n++];
	memset(e, 0, sizeof *e);
	e->path = estrdup(path);
	e->op = op;
	return e;
}

/* read_file reads e's path raw from the work tree, no symlink anywhere
 * on it followed, at most the cap; 0, or a status having said why. */
static int
read_file(struct ctx *c, struct entry *e)
{
	const char *name;
	size_t len;
	int dfd = wt_dir(c, e->path, &name), r;

	if (dfd < 0) {
		err_warn("%s/%s:", c->root, e->path);
		return HAZ_FAIL;
	}
	r = read_regular(dfd, name, c->o->cap, &e->data, &len);
	close(dfd);
	if (r < 0 && errno == EINVAL) {
		err_warn("%s/%s: no longer a regular file", c->root, e->path);
		return HAZ_FAIL;
	}
	if (r < 0) {
		err_warn("%s/%s:", c->root, e->path);
		return HAZ_FAIL;
	}
	if (r > 0) {
		err_warn("%s/%s: over the cap of %llu bytes when read", c->root,
			e->path, (unsigned long long)c->o->cap);
		return DP_OVERCAP;
	}
	e->size = len;
	sha256_buf(e->data, len, e->sha);
	return 0;
}

/* sync_path adds the entry that makes path in the pod what it is in
 * the work tree now: a put (its size; read later), a link, or a del
 * when nothing is there (dropped later if the base has nothing there
 * either). libgit2's delta is only the hint of where to look: it calls
 * a tracked file removed from the index but still in the work tree
 * deleted. mode: libgit2's, which honours core.fileMode (0: none). 0, 1
 * when nothing can be packed there (warned), -1 on an I/O error. */
static int
sync_path(struct ctx *c, const char *path, unsigned mode, struct entry **out)
{
	const char *name;
	struct stat st;
	struct entry *e = NULL;
	int ret = 0, dfd = wt_dir(c, path, &name);

	if (dfd < 0 || fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0) {
		if (errno == ENOENT || errno == ENOTDIR) {
			e = add_entry(c, path, OP_DEL);
		} else {
			err_warn("%s/%s:", c->root, path);
			ret = -1;
		}
	} else if (S_ISLNK(st.st_mode)) {
		char *buf = emalloc(PATH_MAX + 1);
		ssize_t n = readlinkat(dfd, name, buf, PATH_MAX + 1);
		if (n <= 0 || n > PATH_MAX) {
			err_warn("%s/%s: readlink: %s", c->root, path,
				n < 0 ? strerror(errno) : "bad length");
			free(buf);
			ret = -1;
		} else {
			buf[n] = 0;
			e = add_entry(c, path, OP_LINK);
			e->data = (unsigned char *)buf;
			e->size = (size_t)n;
		}
	} else if (S_ISREG(st.st_mode)) {
		e = add_entry(c, path, OP_PUT);
		e->size = (size_t)st.st_size;
		if (mode == GIT_FILEMODE_BLOB ||
			mode == GIT_FILEMODE_BLOB_EXECUTABLE)
			e->exec = mode == GIT_FILEMODE_BLOB_EXECUTABLE;
		else
			e->exec = (st.st_mode & S_IXUSR) != 0;
	} else if (S_ISDIR(st.st_mode)) {
		/* a file of the base became a directory: the file goes,
		 * the directory's files come as entries of their own */
		e = add_entry(c, path, OP_DEL);
	} else {
		warn(c, "%s: not a file or a symlink: not packed", path);
		ret = 1;
	}
	if (dfd >= 0)
		close(dfd);
	if (out)
		*out = e;
	return ret;
}

/* is_native: a change at path needs vLLM's compiled code rebuilt. */
static int
is_native(const char *path)
{
	static const char *const exact[] = {"CMakeLists.txt", "setup.py",
		"requirements/common.txt", "docker/Dockerfile"};
	size_t i, n = strlen(path);

	for (i = 0; i < sizeof exact / sizeof *exact; i++)
		if (!strcmp(path, exact[i]))
			return 1;
	return !strncmp(path, "csrc/", 5) || !strncmp(path, "cmake/", 6) ||
		(n > 3 && !strcmp(path + n - 3, ".cu")) ||
		(n > 4 && !strcmp(path + n - 4, ".cpp"));
}

static int
cmp_entry(const void *a, const void *b)
{
	return strcmp(((const struct entry *)a)->path,
		((const struct entry *)b)->path);
}

/* one_delta turns a delta into entries; 0, or an exit status. */
static int
one_delta(struct ctx *c, const git_diff_delta *d)
{
	const char *np = d->new_file.path, *op = d->old_file.path;
	struct entry *e;

	if (d->old_file.mode == GIT_FILEMODE_COMMIT ||
		d->new_file.mode == GIT_FILEMODE_COMMIT) {
		const char *p = d->status == GIT_DELTA_DELETED ? op : np;
		json_array_append_new(c->submodules, json_string(p));
		warn(c, "%s: a submodule changed: its content is not packed",
			p);
		return 0;
	}
	switch (d->status) {
	case GIT_DELTA_DELETED:
		return sync_path(c, op, 0, NULL) < 0 ? HAZ_FAIL : 0;
	case GIT_DELTA_RENAMED:
		if (sync_path(c, op, 0, &e) < 0)
			return HAZ_FAIL;
		if (e && e->op == OP_DEL)
			e->renamed_to = estrdup(np);
		break;
	case GIT_DELTA_ADDED:
	case GIT_DELTA_MODIFIED:
	case GIT_DELTA_TYPECHANGE:
	case GIT_DELTA_COPIED: break;
	case GIT_DELTA_UNTRACKED:
		if (np[0] && np[strlen(np) - 1] == '/') {
			/* git stops at a directory holding a repository */
			json_array_append_new(c->submodules, json_string(np));
			warn(c,
				"%s: a git repository inside the checkout: "
				"not packed",
				np);
			return 0;
		}
		break;
	case GIT_DELTA_UNREADABLE:
		err_warn("%s/%s: unreadable", c->root, np);
		return HAZ_FAIL;
	case GIT_DELTA_CONFLICTED:
		err_warn("%s: %s: unmerged: resolve it (git add)", c->root, np);
		return DP_NOTREE;
	default: return 0;
	}
	return sync_path(c, np, d->new_file.mode, NULL) < 0 ? HAZ_FAIL : 0;
}

static void
entry_free(struct entry *e)
{
	free(e->path);
	free(e->data);
	free(e->renamed_to);
}

/* native_warning names the paths that need a native build, the first
 * five of them in the message. */
static void
native_warning(struct ctx *c)
{
	size_t i, n = json_array_size(c->native);
	char *list, *more;

	if (!n)
		return;
	list = estrdup("");
	for (i = 0; i < n && i < 5; i++) {
		more = easprintf("%s%s%s", list, i ? ", " : "",
			json_string_value(json_array_get(c->native, i)));
		free(list);
		list = more;
	}
	warn(c,
		"native-build paths changed (%s%s): the image's compiled "
		"kernels are the base's; these changes need a build",
		list, n > 5 ? ", ..." : "");
	free(list);
}

/* ---- the paths worth diffing
 *
 * libgit2's diff of the base tree against the work tree stats every
 * index entry (one at a time, by absolute path) and reads every
 * directory: most of diff-pack's time on a big checkout with a few
 * changes. The same diff restricted to the paths that can differ gives
 * the same deltas, so these functions find a superset of those paths
 * faster: the index entries whose work-tree stat data no longer match
 * (stat'ed by several threads, each relative to the directory it has
 * open), the entries git would call racy, the names found in the work
 * tree that the index does not have (an ignored directory not entered;
 * ignored files are left to libgit2), and the paths that differ between
 * the base tree and the index (trees whose id the index's cache-tree
 * already says is the base's are not read). Entries libgit2 treats in
 * its own way (submodules, skip-worktree, assume-unchanged,
 * intent-to-add) are always among the paths. What this cannot vouch
 * for (a case-insensitive index, unmerged entries, a repository nested
 * in the work tree, a name too long) sends walk_diff to the whole diff,
 * as does the environment variable K8SHAZGPU_DP_WHOLE (for tests). */

struct cands {
	char **v;
	size_t n, alloc;
	int whole; /* give up: diff everything */
};

static void
cand_add(struct cands *s, const char *path)
{
	if (s->n == s->alloc) {
		s->alloc = s->alloc ? 2 * s->alloc : 256;
		s->v = erealloc(s->v, s->alloc * sizeof *s->v);
	}
	s->v[s->n++] = estrdup(path);
}

static void
cands_free(struct cands *s)
{
	size_t i;

	for (i = 0; i < s->n; i++)
		free(s->v[i]);
	free(s->v);
}

struct statjob {
	pthread_t tid;
	int root;
	const git_index_entry **ie;
	unsigned char *dirty;
	size_t from, to;
	time_t racy; /* an entry changed in this second or later is racy */
};

/* same_stat: the work tree's file has the stat data the index recorded
 * for it, and the index was written after that (not racy). */
static int
same_stat(const git_index_entry *ie, const struct stat *st, time_t racy)
{
	unsigned mode;

	if (S_ISLNK(st->st_mode))
		mode = GIT_FILEMODE_LINK;
	else if (S_ISREG(st->st_mode))
		mode = st->st_mode & S_IXUSR ? GIT_FILEMODE_BLOB_EXECUTABLE
					     : GIT_FILEMODE_BLOB;
	else
		return 0;
	return ie->mode == mode && ie->file_size == (uint32_t)st->st_size &&
		ie->mtime.seconds == (int32_t)st->st_mtim.tv_sec &&
		ie->mtime.nanoseconds == (uint32_t)st->st_mtim.tv_nsec &&
		ie->ctime.seconds == (int32_t)st->st_ctim.tv_sec &&
		ie->ctime.nanoseconds == (uint32_t)st->st_ctim.tv_nsec &&
		ie->ino == (uint32_t)st->st_ino &&
		(time_t)ie->mtime.seconds < racy;
}

static void *
stat_worker(void *arg)
{
	struct statjob *j = arg;
	const char *dir = NULL; /* the entry whose directory dfd is */
	size_t i, dlen = 0;
	int dfd = -1;
	struct stat st;

	for (i = j->from; i < j->to; i++) {
		const char *p = j->ie[i]->path, *slash = strrchr(p, '/');
		size_t len = slash ? (size_t)(slash - p) : 0;
		if (!dir || len != dlen || memcmp(dir, p, len)) {
			if (dfd >= 0 && dfd != j->root)
				close(dfd);
			dir = p;
			dlen = len;
			/* a symlink on the way: dirty, for libgit2 */
			dfd = len ? dp_path_open_dir(j->root, p, len) : j->root;
		}
		j->dirty[i] = dfd < 0 ||
			fstatat(dfd, slash ? slash + 1 : p, &st,
				AT_SYMLINK_NOFOLLOW) < 0 ||
			!same_stat(j->ie[i], &st, j->racy);
	}
	if (dfd >= 0 && dfd != j->root)
		close(dfd);
	return NULL;
}

struct walk {
	pthread_t tid;
	struct ctx *c;
	struct cands *s;
	struct cands *udirs; /* untracked directories, not entered yet */
	const git_index_entry **ie;
	size_t nie;
	unsigned char *forced; /* entries under a replaced directory */
	int root;
	char path[PATH_MAX];
};

/* index_lower: the first index entry not before path. */
static size_t
index_lower(const struct walk *w, const char *path)
{
	size_t lo = 0, hi = w->nie;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (strcmp(w->ie[mid]->path, path) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* under_index: how many index entries lie under path/ (path holding
 * room for one more byte), from *at. */
static size_t
under_index(const struct walk *w, char *path, size_t len, size_t *at)
{
	size_t i;

	path[len] = '/';
	path[len + 1] = 0;
	*at = index_lower(w, path);
	for (i = *at; i < w->nie && !strncmp(w->ie[i]->path, path, len + 1);
		i++)
		;
	path[len] = 0;
	return i - *at;
}

/* walk_dir lists what the work tree has under path (len bytes, "" for
 * the root) that the index does not. */
static void
walk_dir(struct walk *w, int dfd, char *path, size_t len)
{
	DIR *d = fdopendir(dfd);
	struct dirent *de;

	if (!d) {
		close(dfd);
		w->s->whole = 1;
		return;
	}
	while (!w->s->whole && (de = readdir(d))) {
		const char *name = de->d_name;
		size_t nl = strlen(name), at, k, under;
		int isdir, ign, sub;
		struct stat st;

		if (!strcmp(name, ".") || !strcmp(name, ".."))
			continue;
		if (!strcmp(name, ".git")) {
			if (len)
				w->s->whole = 1; /* a nested repository */
			continue;
		}
		if (len + nl + 3 > PATH_MAX) {
			w->s->whole = 1;
			break;
		}
		memcpy(path + len + (len ? 1 : 0), name, nl + 1);
		if (len)
			path[len] = '/';
		k = len + (len ? 1 : 0) + nl;
		if (de->d_type == DT_UNKNOWN) {
			if (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
				continue;
			isdir = S_ISDIR(st.st_mode);
		} else {
			isdir = de->d_type == DT_DIR;
		}
		if (!isdir) {
			at = index_lower(w, path);
			if (at < w->nie && !strcmp(w->ie[at]->path, path))
				continue; /* tracked: the stat threads' */
			cand_add(w->s, path);
			/* a directory of tracked files became this */
			under = under_index(w, path, k, &at);
			memset(w->forced + at, 1, under);
			continue;
		}
		at = index_lower(w, path);
		if (at < w->nie && !strcmp(w->ie[at]->path, path) &&
			w->ie[at]->mode == GIT_FILEMODE_COMMIT)
			continue; /* a submodule: libgit2's to look at */
		under = under_index(w, path, k, &at);
		if (!under && w->udirs) {
			/* libgit2 is not called from this thread: the
			 * main one asks whether it is ignored */
			cand_add(w->udirs, path);
			continue;
		}
		if (!under) {
			if (git_ignore_path_is_ignored(&ign, w->c->repo, path) <
				0) {
				w->s->whole = 1;
				break;
			}
			if (ign)
				continue;
		}
		sub = openat(dfd, name,
			O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (sub < 0) {
			w->s->whole = 1;
			break;
		}
		walk_dir(w, sub, path, k);
	}
	path[len] = 0;
	closedir(d);
}

/* The index's cache-tree extension (TREE) gives the tree id of every
 * directory whose entries have not changed since a tree was written
 * from them: a directory whose id is the base's own holds no change
 * between the base and the index, and its trees need not be read. */
struct ctree {
	char *name;
	int valid;
	git_oid id;
	struct ctree *kids;
	size_t nkids;
};

static void
ctree_free(struct ctree *t)
{
	size_t i;

	for (i = 0; i < t->nkids; i++)
		ctree_free(&t->kids[i]);
	free(t->kids);
	free(t->name);
}

static int
ctree_parse(const unsigned char *b, size_t *at, size_t end, struct ctree *t,
	int depth)
{
	const unsigned char *nul = memchr(b + *at, 0, end - *at);
	long cnt, kids;
	char *e;
	size_t i;

	if (!nul || depth > 256)
		return -1;
	t->name = estrdup((const char *)b + *at);
	*at = (size_t)(nul - b) + 1;
	if (!memchr(b + *at, '\n', end - *at))
		return -1;
	cnt = strtol((const char *)b + *at, &e, 10);
	if (*e != ' ')
		return -1;
	kids = strtol(e + 1, &e, 10);
	if (*e != '\n' || kids < 0 || (size_t)kids > end)
		return -1;
	*at = (size_t)((unsigned char *)e - b) + 1;
	if (cnt >= 0) {
		if (end - *at < GIT_OID_SHA1_SIZE)
			return -1;
		git_oid_fromraw(&t->id, b + *at);
		t->valid = 1;
		*at += GIT_OID_SHA1_SIZE;
	}
	if (!kids)
		return 0;
	t->kids = ecalloc((size_t)kids, sizeof *t->kids);
	t->nkids = (size_t)kids;
	for (i = 0; i < t->nkids; i++)
		if (ctree_parse(b, at, end, &t->kids[i], depth + 1) < 0)
			return -1;
	return 0;
}

static uint32_t
be32(const unsigned char *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 |
		(uint32_t)p[2] << 8 | p[3];
}

/* ctree_read reads the cache-tree of the index file libgit2 read (its
 * checksum the same), versions 2 and 3; 0, or -1 when there is none to
 * trust. */
static int
ctree_read(struct ctx *c, struct ctree *t)
{
	const git_oid *sum = git_index_checksum(c->index);
	const char *ipath = git_index_path(c->index);
	const unsigned char *b;
	size_t len, at, i, n, end;
	uint32_t ver;
	int fd, ok = -1;
	struct stat st;
	void *m;

	memset(t, 0, sizeof *t);
	if (!sum || !ipath || (fd = open(ipath, O_RDONLY | O_CLOEXEC)) < 0)
		return -1;
	/* git and libgit2 replace the index by rename, never in place */
	if (fstat(fd, &st) < 0 || st.st_size < 12 + GIT_OID_SHA1_SIZE ||
		(m = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd,
			 0)) == MAP_FAILED) {
		close(fd);
		return -1;
	}
	close(fd);
	b = m;
	len = (size_t)st.st_size;
	if (memcmp(b, "DIRC", 4) ||
		memcmp(b + len - GIT_OID_SHA1_SIZE, sum->id, GIT_OID_SHA1_SIZE))
		goto out;
	ver = be32(b + 4);
	n = be32(b + 8);
	if (ver != 2 && ver != 3)
		goto out;
	end = len - GIT_OID_SHA1_SIZE;
	for (at = 12, i = 0; i < n; i++) {
		size_t fix = 62;
		const unsigned char *nul;
		if (end - at < fix + 1)
			goto out;
		if (ver == 3 && (b[at + 60] & 0x40))
			fix += 2;
		if (!(nul = memchr(b + at + fix, 0, end - at - fix)))
			goto out;
		at += ((size_t)(nul - (b + at)) + 8) & ~(size_t)7;
		if (at > end)
			goto out;
	}
	while (end - at >= 8) {
		uint32_t sz = be32(b + at + 4);
		if (sz > end - at - 8)
			goto out;
		if (!memcmp(b + at, "TREE", 4)) {
			size_t p = at + 8;
			if (sz && ctree_parse(b, &p, at + 8 + sz, t, 0) == 0)
				ok = 0;
			break;
		}
		at += 8 + sz;
	}
out:
	munmap(m, len);
	if (ok < 0)
		ctree_free(t), memset(t, 0, sizeof *t);
	return ok;
}

/* tree_vs_index adds the paths under path (plen bytes: "" or ending in
 * '/') where the base tree bt and the index differ. */
static int
tree_vs_index(struct walk *w, const git_tree *bt, const struct ctree *ct,
	char *path, size_t plen)
{
	size_t i, n = git_tree_entrycount(bt), at;
	const git_tree_entry *te;
	const git_index_entry *ie;

	if (ct && ct->valid && git_oid_equal(&ct->id, git_tree_id(bt)))
		return 0;
	for (i = 0; i < n; i++) {
		const char *name;
		size_t nl;
		te = git_tree_entry_byindex(bt, i);
		name = git_tree_entry_name(te);
		nl = strlen(name);
		if (plen + nl + 2 >= PATH_MAX)
			return -1;
		memcpy(path + plen, name, nl + 1);
		if (git_tree_entry_type(te) == GIT_OBJECT_TREE) {
			const struct ctree *kid = NULL;
			git_tree *sub;
			size_t k;
			int st;
			for (k = 0; ct && k < ct->nkids; k++)
				if (!strcmp(ct->kids[k].name, name))
					kid = &ct->kids[k];
			if (kid && kid->valid &&
				git_oid_equal(&kid->id, git_tree_entry_id(te)))
				continue; /* not read: the same */
			if (git_tree_lookup(&sub, w->c->repo,
				    git_tree_entry_id(te)) < 0)
				return -1;
			path[plen + nl] = '/';
			path[plen + nl + 1] = 0;
			st = tree_vs_index(w, sub, kid, path, plen + nl + 1);
			git_tree_free(sub);
			if (st < 0)
				return -1;
			continue;
		}
		at = index_lower(w, path);
		ie = at < w->nie ? w->ie[at] : NULL;
		if (!ie || strcmp(ie->path, path) ||
			ie->mode != (uint32_t)git_tree_entry_filemode(te) ||
			!git_oid_equal(&ie->id, git_tree_entry_id(te)))
			cand_add(w->s, path);
	}
	/* the index's entries the base has not */
	path[plen] = 0;
	at = index_lower(w, path);
	while (at < w->nie && !strncmp(w->ie[at]->path, path, plen)) {
		const char *p = w->ie[at]->path, *rest = p + plen;
		const char *slash = strchr(rest, '/');
		size_t cl = slash ? (size_t)(slash - rest) : strlen(rest);
		int has;
		if (plen + cl + 2 >= PATH_MAX)
			return -1;
		memcpy(path + plen, rest, cl);
		path[plen + cl] = 0;
		te = git_tree_entry_byname(bt, path + plen);
		if (!slash) {
			if (!te || git_tree_entry_type(te) == GIT_OBJECT_TREE)
				cand_add(w->s, p);
			at++;
			continue;
		}
		has = te && git_tree_entry_type(te) == GIT_OBJECT_TREE;
		path[plen + cl] = '0'; /* just after "name/" */
		path[plen + cl + 1] = 0;
		n = index_lower(w, path);
		for (; !has && at < n; at++)
			cand_add(w->s, w->ie[at]->path);
		at = n;
	}
	path[plen] = 0;
	return 0;
}

static void *
walk_worker(void *arg)
{
	struct walk *w = arg;

	w->path[0] = 0;
	walk_dir(w, dup(w->root), w->path, 0);
	return NULL;
}

/* find_cands fills s with the paths where the base tree, the index and
 * the work tree may differ, or sets s->whole. */
static void
find_cands(struct ctx *c, git_tree *tree, struct cands *s)
{
	struct statjob job[8];
	struct walk w;
	struct cands found, udirs;
	const git_index_entry *e;
	char *ipath;
	struct stat st;
	size_t i, n = git_index_entrycount(c->index), nt;
	long np = sysconf(_SC_NPROCESSORS_ONLN);
	int root, walked = 0, have;
	unsigned char *dirty;
	struct walk tw;
	struct ctree ct;

	if (git_index_caps(c->index) & GIT_INDEX_CAPABILITY_IGNORE_CASE) {
		s->whole = 1;
		return;
	}
	ipath = easprintf("%s/index", git_repository_path(c->repo));
	i = stat(ipath, &st);
	free(ipath);
	if (i ||
		(root = open(c->root, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) <
			0) {
		s->whole = 1;
		return;
	}
	memset(&found, 0, sizeof found);
	memset(&udirs, 0, sizeof udirs);
	memset(&w, 0, sizeof w);
	w.c = c;
	w.s = &found;
	w.udirs = &udirs;
	w.root = root;
	w.nie = n;
	w.ie = emalloc((n ? n : 1) * sizeof *w.ie);
	w.forced = ecalloc(n ? n : 1, 1);
	dirty = ecalloc(n ? n : 1, 1);
	for (i = 0; i < n; i++) {
		e = w.ie[i] = git_index_get_byindex(c->index, i);
		if (e->flags & GIT_INDEX_ENTRY_STAGEMASK)
			s->whole = 1;
		/* what libgit2 looks at in its own way, it looks at */
		if (e->mode == GIT_FILEMODE_COMMIT ||
			(e->flags & GIT_INDEX_ENTRY_VALID) ||
			(e->flags_extended & GIT_INDEX_ENTRY_EXTENDED_FLAGS))
			w.forced[i] = 1;
	}
	if (s->whole)
		goto out;
	nt = np < 2 ? 2 : np > 8 ? 8 : (size_t)np;
	for (i = 0; i < nt; i++) {
		job[i].root = root;
		job[i].ie = w.ie;
		job[i].dirty = dirty;
		job[i].from = n * i / nt;
		job[i].to = n * (i + 1) / nt;
		job[i].racy = st.st_mtim.tv_sec;
		if (pthread_create(&job[i].tid, NULL, stat_worker, &job[i])) {
			/* the threads made so far finish; the rest here */
			stat_worker(&job[i]);
			job[i].tid = pthread_self();
		}
	}
	if (pthread_create(&w.tid, NULL, walk_worker, &w))
		walk_worker(&w);
	else
		walked = 1;
	memset(&tw, 0, sizeof tw);
	tw.c = c;
	tw.s = s;
	tw.ie = w.ie;
	tw.nie = n;
	have = ctree_read(c, &ct) == 0;
	tw.path[0] = 0;
	if (tree_vs_index(&tw, tree, have ? &ct : NULL, tw.path, 0) < 0)
		s->whole = 1;
	if (have)
		ctree_free(&ct);
	if (walked)
		pthread_join(w.tid, NULL);
	if (found.whole)
		s->whole = 1;
	for (i = 0; i < found.n; i++)
		cand_add(s, found.v[i]);
	/* the untracked directories not ignored, walked here */
	w.udirs = NULL;
	w.s = s;
	for (i = 0; i < udirs.n && !s->whole; i++) {
		int ign, sub;
		size_t len = strlen(udirs.v[i]);
		if (git_ignore_path_is_ignored(&ign, c->repo, udirs.v[i]) < 0) {
			s->whole = 1;
			break;
		}
		if (ign)
			continue;
		sub = dp_path_open_dir(root, udirs.v[i], len);
		if (sub < 0) {
			s->whole = 1;
			break;
		}
		memcpy(w.path, udirs.v[i], len + 1);
		walk_dir(&w, sub, w.path, len);
	}
	for (i = 0; i < nt; i++)
		if (!pthread_equal(job[i].tid, pthread_self()))
			pthread_join(job[i].tid, NULL);
	for (i = 0; i < n; i++)
		if (dirty[i] || w.forced[i])
			cand_add(s, w.ie[i]->path);
out:
	close(root);
	cands_free(&found);
	cands_free(&udirs);
	free(dirty);
	free(w.ie);
	free(w.forced);
}

/* walk_diff lists the entries of the base tree → work tree diff, sorted
 * by path, each with its base blob. */
static int
walk_diff(struct ctx *c)
{
	git_diff_options dopt;
	git_diff_find_options fopt;
	git_diff *diff = NULL;
	git_tree *tree = NULL;
	git_tree_entry *te;
	struct cands cs;
	size_t i, k, n;
	int st = 0;

	memset(&cs, 0, sizeof cs);
	git_diff_options_init(&dopt, GIT_DIFF_OPTIONS_VERSION);
	dopt.flags = GIT_DIFF_INCLUDE_UNTRACKED |
		GIT_DIFF_RECURSE_UNTRACKED_DIRS | GIT_DIFF_INCLUDE_TYPECHANGE;
	git_diff_find_options_init(&fopt, GIT_DIFF_FIND_OPTIONS_VERSION);
	fopt.flags = GIT_DIFF_FIND_RENAMES | GIT_DIFF_FIND_FOR_UNTRACKED;
	if (git_commit_tree(&tree, c->base) < 0)
		goto fail;
	if (!getenv("K8SHAZGPU_DP_WHOLE"))
		find_cands(c, tree, &cs);
	else
		cs.whole = 1;
	if (!cs.whole) {
		dopt.flags |= GIT_DIFF_DISABLE_PATHSPEC_MATCH;
		dopt.pathspec.strings = cs.v;
		dopt.pathspec.count = cs.n;
	}
	if ((cs.whole || cs.n) &&
		(git_diff_tree_to_workdir_with_index(&diff, c->repo, tree,
			 &dopt) < 0 ||
			git_diff_find_similar(diff, &fopt) < 0)) {
	fail:
		err_warn("%s: the diff from %s: %s", c->root, c->base_hex,
			gerr());
		st = HAZ_FAIL;
		goto out;
	}
	n = diff ? git_diff_num_deltas(diff) : 0;
	for (i = 0; i < n && !st; i++)
		st = one_delta(c, git_diff_get_delta(diff, i));
	if (st)
		goto out;
	if (c->n)
		qsort(c->e, c->n, sizeof *c->e, cmp_entry);
	for (i = 0, k = 0; i < c->n; i++) {
		struct entry *e = &c->e[i];
		/* a path seen twice (a rename's side and a delta of its
		 * own) was looked at twice in the work tree: keep one */
		if (k && !strcmp(e->path, c->e[k - 1].path)) {
			if (e->renamed_to && !c->e[k - 1].renamed_to &&
				c->e[k - 1].op == OP_DEL) {
				c->e[k - 1].renamed_to = e->renamed_to;
				e->renamed_to = NULL;
			}
			entry_free(e);
			continue;
		}
		if (git_tree_entry_bypath(&te, tree, e->path) == 0) {
			if (git_tree_entry_type(te) == GIT_OBJECT_BLOB) {
				oid_hex(git_tree_entry_id(te), e->base_blob);
				e->base_mode = git_tree_entry_filemode(te);
			}
			git_tree_entry_free(te);
		}
		if (e->op == OP_DEL && !e->base_blob[0]) {
			entry_free(e);
			continue;
		}
		c->e[k++] = *e;
	}
	c->n = k;
	for (i = 0; i < c->n; i++)
		if (is_native(c->e[i].path))
			json_array_append_new(c->native,
				json_string(c->e[i].path));
	native_warning(c);
out:
	git_diff_free(diff);
	git_tree_free(tree);
	cands_free(&cs);
	return st;
}

/* ---- a pack since what a pod applied (--since)
 *
 * The pod's state (dp_state) says what its tree holds at every path a
 * pack changed. The pack made is then the difference between that tree
 * and the work tree: each entry of the base → work tree diff whose path
 * the state holds as the work tree has it is left out; the others carry
 * as base_blob what the pod holds (the state's blob, or null), which
 * diff-pack -u checks as it checks a base blob. A path the state holds
 * that the diff no longer has (an edit undone) is sent as the work tree
 * has it, which is the base's. */

/* since_base takes the state's base as the base, and no image. */
static int
since_base(struct ctx *c)
{
	char *base = NULL;
	git_oid id;

	if (!(c->since = dp_state_load(c->o->since, &base)))
		return DP_CORRUPT;
	if (!base || git_oid_fromstr(&id, base) < 0 ||
		git_commit_lookup(&c->mb, c->repo, &id) < 0) {
		err_warn("%s: the pod's base %s is not a commit of %s",
			c->o->since, base ? base : "(none)", c->root);
		free(base);
		return DP_NOTREE;
	}
	free(base);
	oid_hex(&id, c->mb_hex);
	git_object_dup((git_object **)&c->base, (git_object *)c->mb);
	memcpy(c->base_hex, c->mb_hex, 41);
	return 0;
}

static int
has_entry(struct ctx *c, const char *path)
{
	struct entry key = {.path = (char *)path};

	return c->n && bsearch(&key, c->e, c->n, sizeof *c->e, cmp_entry);
}

/* since_reverts adds an entry for each path of the state that the diff
 * does not have: the work tree holds the base's there. */
static int
since_reverts(struct ctx *c)
{
	const char *path, *why;
	size_t n = c->n;
	json_t *v;

	json_object_foreach(c->since, path, v) {
		(void)v;
		if ((why = dp_path_bad(path, strlen(path)))) {
			err_warn("%s: %s: %s", c->o->since, path, why);
			return DP_CORRUPT;
		}
		if (!has_entry(c, path) && sync_path(c, path, 0, NULL) < 0)
			return HAZ_FAIL;
	}
	if (c->n > n)
		qsort(c->e, c->n, sizeof *c->e, cmp_entry);
	return 0;
}

/* since_filter leaves out what the pod holds already and pins the
 * others' base_blob to what it holds. */
static int
since_filter(struct ctx *c)
{
	const char *mode, *blob;
	char hex[41];
	size_t i, k;
	int r;

	for (i = 0, k = 0; i < c->n; i++) {
		struct entry *e = &c->e[i];
		const char *want = e->op == OP_DEL ? NULL
			: e->op == OP_LINK         ? "120000"
			: e->exec                  ? "100755"
						   : "100644";
		if ((r = dp_state_entry(c->since, e->path, &mode, &blob)) < 0) {
			err_warn("%s: %s: not a state entry", c->o->since,
				e->path);
			return DP_CORRUPT;
		}
		if (r == 0) {
			c->e[k++] = *e;
			continue;
		}
		if (want)
			dp_state_blob(e->data ? e->data : (unsigned char *)"",
				e->size, hex);
		if (want ? mode && !strcmp(mode, want) && !strcmp(blob, hex)
			 : !mode) {
			entry_free(e);
			continue;
		}
		snprintf(e->base_blob, sizeof e->base_blob, "%s",
			blob ? blob : "");
		e->pinned = 1;
		c->e[k++] = *e;
	}
	c->n = k;
	return 0;
}

/* ---- the pack */

static int
cmp_size_desc(const void *a, const void *b)
{
	const struct entry *x = *(struct entry *const *)a;
	const struct entry *y = *(struct entry *const *)b;

	return x->size < y->size    ? 1
		: x->size > y->size ? -1
				    : strcmp(x->path, y->path);
}

/* over_cap says the pack (what: "is", or "files alone are" when the
 * files' sizes alone tell, before reading them) of size bytes is over
 * the cap, naming the 5 biggest files. */
static int
over_cap(struct ctx *c, uint64_t size, const char *what)
{
	struct entry **by = emalloc((c->n + 1) * sizeof *by);
	char *list = estrdup(""), *more;
	size_t i, k = 0;

	for (i = 0; i < c->n; i++)
		if (c->e[i].op == OP_PUT)
			by[k++] = &c->e[i];
	qsort(by, k, sizeof *by, cmp_size_desc);
	for (i = 0; i < k && i < 5; i++) {
		more = easprintf("%s%s%s (%zu bytes)", list, i ? ", " : "",
			by[i]->path, by[i]->size);
		free(list);
		list = more;
	}
	err_warn("%s %llu bytes, over the cap of %llu: the biggest "
		 "files: %s: leave them out (.gitignore, git rm --cached) or "
		 "raise the cap (-x, K8SHAZGPU_PACK_CAP)",
		what, (unsigned long long)size, (unsigned long long)c->o->cap,
		list);
	free(list);
	free(by);
	return DP_OVERCAP;
}

static json_t *
entry_json(const struct entry *e)
{
	json_t *j = json_object();
	json_t *base = e->base_blob[0] ? json_string(e->base_blob)
				       : json_null();

	json_object_set_new(j, "op",
		json_string(e->op == OP_PUT        ? "put"
				: e->op == OP_LINK ? "link"
						   : "del"));
	json_object_set_new(j, "path", json_string(e->path));
	if (e->op == OP_PUT) {
		json_object_set_new(j, "mode",
			json_string(e->exec ? "100755" : "100644"));
		json_object_set_new(j, "size",
			json_integer((json_int_t)e->size));
		json_object_set_new(j, "offset",
			json_integer((json_int_t)e->offset));
		json_object_set_new(j, "sha256", json_string(e->sha));
	} else if (e->op == OP_LINK) {
		json_object_set_new(j, "target",
			json_stringn((const char *)e->data, e->size));
	}
	json_object_set_new(j, "base_blob", base);
	if (e->renamed_to)
		json_object_set_new(j, "renamed_to",
			json_string(e->renamed_to));
	return j;
}

/* same_as_base: a put or link whose raw bytes and mode are the base's
 * own (a delta libgit2 reported for a file it could not match without
 * reading, such as one taken out of the index and left in the work
 * tree as it was). */
static int
same_as_base(const struct entry *e)
{
	git_oid id;
	char hex[41];
	unsigned mode = e->op == OP_LINK ? GIT_FILEMODE_LINK
		: e->exec                ? GIT_FILEMODE_BLOB_EXECUTABLE
					 : GIT_FILEMODE_BLOB;

	if (e->op == OP_DEL || !e->base_blob[0] || e->base_mode != mode ||
		git_odb_hash(&id, e->data ? e->data : (unsigned char *)"",
			e->size, GIT_OBJECT_BLOB) < 0)
		return 0;
	return strcmp(oid_hex(&id, hex), e->base_blob) == 0;
}

/* ---- what the pod would refuse
 *
 * diff-pack -u judges a pack's paths with dp_path; the same judgement
 * here, before the files' bytes are read, keeps a pack the pod would
 * refuse from being made, sent and a GPU claimed for it. */

/* The base's tree stands for the image: what it holds where the pack
 * decides nothing (the pod checks the same against its image). */
struct base_root {
	struct ctx *c;
	git_tree *tree;
	const char *prefix; /* "" for the tree, "vllm/" for the package */
};

static int
base_at(void *arg, const char *rel, char **target)
{
	const struct base_root *b = arg;
	char *p = easprintf("%s%s", b->prefix, rel);
	git_tree_entry *te = NULL;
	git_blob *blob = NULL;
	int rc = git_tree_entry_bypath(&te, b->tree, p), kind = DP_PATH_FILE;
	size_t n;

	if (rc < 0 && rc != GIT_ENOTFOUND)
		err_warn("%s: %s in the base: %s", b->c->root, p, gerr());
	free(p);
	if (rc < 0)
		return rc == GIT_ENOTFOUND ? DP_PATH_ABSENT : -1;
	switch (git_tree_entry_filemode(te)) {
	case GIT_FILEMODE_TREE:
	case GIT_FILEMODE_COMMIT: kind = DP_PATH_DIR; break;
	case GIT_FILEMODE_LINK:
		if (git_blob_lookup(&blob, b->c->repo, git_tree_entry_id(te)) <
			0) {
			err_warn("%s: a link's blob in the base: %s",
				b->c->root, gerr());
			kind = -1;
			break;
		}
		n = (size_t)git_blob_rawsize(blob);
		*target = emalloc(n + 1);
		memcpy(*target, git_blob_rawcontent(blob), n);
		(*target)[n] = 0;
		git_blob_free(blob);
		kind = DP_PATH_SYMLINK;
		break;
	default: break;
	}
	git_tree_entry_free(te);
	return kind;
}

static void
link_refused(void *arg, size_t i, int verdict, const char *why)
{
	const struct dp_path_ent *pe = arg;

	(void)verdict;
	err_warn("%s: link target %s escapes the tree: %s", pe[i].path,
		pe[i].target, why);
}

/* check_pack refuses (DP_ESCAPE, each path named) what diff-pack -u
 * would: a path holding a name diff-pack keeps for itself; a directory
 * of the base that the work tree replaced by a file or a symlink (its
 * files deleted under it, which the pod cannot do); a symlink whose
 * target, resolved where the pack leaves it (the base's tree with the
 * pack's entries, vllm/ the package directory), leads out of its root.
 * A link that is the base's own is the base's, not the pack's. */
static int
check_pack(struct ctx *c)
{
	struct dp_path_ent *pe = ecalloc(c->n ? c->n : 1, sizeof *pe);
	const struct dp_path_ent *b, *last = NULL;
	struct base_root roots[2] = {{c, NULL, ""}, {c, NULL, DP_PATH_PKG}};
	struct dp_path_image image[2] = {{base_at, &roots[0]},
		{base_at, &roots[1]}};
	const char *why;
	size_t i, n = 0;
	int bad = 0, links, st = 0;

	for (i = 0; i < c->n; i++) {
		const struct entry *e = &c->e[i];
		if (e->op == OP_LINK && same_as_base(e))
			continue;
		pe[n].path = e->path;
		pe[n].op = e->op == OP_PUT ? DP_PATH_PUT
			: e->op == OP_LINK ? DP_PATH_LINK
					   : DP_PATH_DEL;
		pe[n].target = (const char *)e->data;
		pe[n++].target_len = e->size;
		if ((why = dp_path_bad(e->path, strlen(e->path)))) {
			err_warn("%s: path escapes the tree: %s", e->path, why);
			bad++;
		}
	}
	for (i = 0; i < n; i++)
		if ((b = dp_path_blocker(pe, n, i)) && b != last) {
			err_warn(
				"%s: a directory in the base, a %s in the work "
				"tree: diff-pack -u replaces no directory",
				b->path,
				b->op == DP_PATH_LINK ? "symbolic link"
						      : "file");
			last = b;
			bad++;
		}
	if (git_commit_tree(&roots[0].tree, c->base) < 0) {
		err_warn("%s: the base's tree: %s", c->root, gerr());
		st = HAZ_FAIL;
		goto out;
	}
	roots[1].tree = roots[0].tree;
	if ((links = dp_path_check_links(pe, n, image, link_refused, pe)) < 0) {
		st = HAZ_FAIL;
		goto out;
	}
	if (bad + links) {
		err_warn("%s: nothing packed: diff-pack -u would refuse the "
			 "paths above",
			c->root);
		st = DP_ESCAPE;
	}
out:
	git_tree_free(roots[0].tree);
	free(pe);
	return st;
}

struct readjob {
	pthread_t tid;
	struct ctx *c;
	size_t *next; /* the next entry to read, shared */
	pthread_mutex_t *mu;
	int failed;
};

static void *
read_worker(void *arg)
{
	struct readjob *j = arg;
	size_t i;
	int st;

	for (;;) {
		pthread_mutex_lock(j->mu);
		i = (*j->next)++;
		pthread_mutex_unlock(j->mu);
		if (i >= j->c->n)
			break;
		if (j->c->e[i].op == OP_PUT &&
			(st = read_file(j->c, &j->c->e[i])))
			j->failed = st;
	}
	return NULL;
}

/* read_all reads every put's bytes and their sha256s, a few files at a
 * time; 0, or a status having said why (the cap's before an I/O error's). */
static int
read_all(struct ctx *c)
{
	struct readjob job[8];
	pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
	size_t next = 0, i, nt;
	long np = sysconf(_SC_NPROCESSORS_ONLN);
	int failed = 0;

	nt = np < 2 ? 2 : np > 8 ? 8 : (size_t)np;
	for (i = 0; i < nt; i++) {
		job[i].c = c;
		job[i].next = &next;
		job[i].mu = &mu;
		job[i].failed = 0;
		if (pthread_create(&job[i].tid, NULL, read_worker, &job[i])) {
			read_worker(&job[i]);
			job[i].tid = pthread_self();
		}
	}
	for (i = 0; i < nt; i++) {
		if (!pthread_equal(job[i].tid, pthread_self()))
			pthread_join(job[i].tid, NULL);
		if (job[i].failed && failed != DP_OVERCAP)
			failed = job[i].failed;
	}
	return failed;
}

/* build_pack reads every put's bytes and lays out the pack in memory. */
static int
build_pack(struct ctx *c)
{
	uint64_t data = 0;
	json_t *m, *entries;
	char *line;
	size_t i, k, mlen, hlen = strlen(DP_MAGIC), at;
	int st;

	for (i = 0; i < c->n; i++)
		if (c->e[i].op == OP_PUT)
			data += c->e[i].size;
	if (data > c->o->cap)
		return over_cap(c, data, "the pack's files alone are");
	if ((st = read_all(c)))
		return st;
	if (c->since && (st = since_filter(c)))
		return st;
	for (i = 0, k = 0; i < c->n; i++) {
		if (!c->e[i].pinned && same_as_base(&c->e[i]))
			entry_free(&c->e[i]);
		else
			c->e[k++] = c->e[i];
	}
	c->n = k;
	entries = json_array();
	data = 0;
	for (i = 0; i < c->n; i++) {
		struct entry *e = &c->e[i];
		json_t *j;
		if (e->op == OP_PUT) {
			e->offset = data;
			data += e->size;
		}
		if (!(j = entry_json(e)) || !json_object_get(j, "path") ||
			(e->op == OP_LINK && !json_object_get(j, "target")) ||
			(e->renamed_to && !json_object_get(j, "renamed_to"))) {
			err_warn("%s: %s: a name that is not UTF-8 cannot be "
				 "packed: rename it",
				c->root, e->path);
			json_decref(j);
			json_decref(entries);
			return HAZ_FAIL;
		}
		json_array_append_new(entries, j);
	}
	m = json_object();
	json_object_set_new(m, "kind", json_string("pack"));
	json_object_set_new(m, "version", json_integer(1));
	json_object_set_new(m, "base", json_string(c->base_hex));
	json_object_set_new(m, "head", json_string(c->head_hex));
	json_object_set_new(m, "data_size", json_integer((json_int_t)data));
	json_object_set_new(m, "entries", entries);
	line = jb_dumps(m);
	json_decref(m);
	mlen = strlen(line);
	c->data_size = data;
	c->pack_len = hlen + mlen + 1 + data;
	if (c->pack_len > c->o->cap) {
		free(line);
		return over_cap(c, c->pack_len, "the pack is");
	}
	c->pack = emalloc(c->pack_len ? c->pack_len : 1);
	memcpy(c->pack, DP_MAGIC, hlen);
	memcpy(c->pack + hlen, line, mlen);
	c->pack[hlen + mlen] = '\n';
	free(line);
	at = hlen + mlen + 1;
	for (i = 0; i < c->n; i++)
		if (c->e[i].op == OP_PUT) {
			if (c->e[i].size)
				memcpy(c->pack + at, c->e[i].data,
					c->e[i].size);
			at += c->e[i].size;
		}
	sha256_buf(c->pack, c->pack_len, c->pack_sha);
	return 0;
}

/* write_pack writes the pack to -o through a temporary name in the same
 * directory and rename(2), so a reader finds the old file or the whole
 * new one. */
static int
write_pack(struct ctx *c)
{
	const char *out = c->o->out;
	char *tmp = easprintf("%s.tmp-%ld", out, (long)getpid());
	size_t off = 0;
	int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	ssize_t n;

	if (fd < 0) {
		err_warn("%s:", tmp);
		free(tmp);
		return HAZ_FAIL;
	}
	while (off < c->pack_len) {
		n = write(fd, c->pack + off, c->pack_len - off);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			break;
		off += (size_t)n;
	}
	if (off < c->pack_len || fsync(fd) < 0 || close(fd) < 0 ||
		rename(tmp, out) < 0) {
		err_warn("%s:", out);
		if (off < c->pack_len)
			close(fd);
		unlink(tmp);
		free(tmp);
		return HAZ_FAIL;
	}
	free(tmp);
	if (out[0] == '/') {
		c->pack_path = estrdup(out);
	} else {
		char *cwd = getcwd(NULL, 0);
		c->pack_path = cwd ? easprintf("%s/%s", cwd, out)
				   : estrdup(out);
		free(cwd);
	}
	return 0;
}

/* ---- output */

/* print_configmaps prints the ConfigMaps carrying the pack in chunks
 * and returns their names. */
static json_t *
print_configmaps(struct ctx *c)
{
	const struct dp_opts *o = c->o;
	size_t nchunks = (c->pack_len + DP_CHUNK - 1) / DP_CHUNK, i, j;
	json_t *names = json_array(), *labels = json_object();
	json_t *index = json_object(), *chunks = json_array();
	char *index_text;

	json_object_set_new(labels, "app.kubernetes.io/managed-by",
		json_string("k8shazgpu"));
	for (j = 0; j < o->nlabels; j++) {
		const char *eq = strchr(o->labels[j], '=');
		char *k = easprintf("%.*s", (int)(eq - o->labels[j]),
			o->labels[j]);
		json_object_set_new(labels, k, json_string(eq + 1));
		free(k);
	}
	for (i = 0; i < nchunks; i++) {
		size_t len = c->pack_len - i * DP_CHUNK;
		json_t *ch = json_object();
		char key[32], sha[65];
		if (len > DP_CHUNK)
			len = DP_CHUNK;
		snprintf(key, sizeof key, "pack.%03zu", i);
		sha256_buf(c->pack + i * DP_CHUNK, len, sha);
		json_object_set_new(ch, "key", json_string(key));
		json_object_set_new(ch, "size", json_integer((json_int_t)len));
		json_object_set_new(ch, "sha256", json_string(sha));
		json_array_append_new(chunks, ch);
	}
	json_object_set_new(index, "kind", json_string("pack-index"));
	json_object_set_new(index, "version", json_integer(1));
	json_object_set_new(index, "sha256", json_string(c->pack_sha));
	json_object_set_new(index, "size",
		json_integer((json_int_t)c->pack_len));
	json_object_set_new(index, "chunks", chunks);
	index_text = jb_dumps(index);
	json_decref(index);
	for (i = 0; i < nchunks; i++) {
		size_t len = c->pack_len - i * DP_CHUNK;
		json_t *cm = json_object(), *meta = json_object();
		json_t *ann = json_object(), *bin = json_object();
		char *name = easprintf("%s-%zu", o->cm_prefix, i);
		char key[32], *b64;
		if (len > DP_CHUNK)
			len = DP_CHUNK;
		snprintf(key, sizeof key, "pack.%03zu", i);
		b64 = b64_encode(c->pack + i * DP_CHUNK, len);
		json_object_set_new(meta, "name", json_string(name));
		json_object_set_new(meta, "namespace", json_string(o->cm_ns));
		json_object_set(meta, "labels", labels);
		json_object_set_new(ann, "canhazgpu.dev/pack-sha256",
			json_string(c->pack_sha));
		json_object_set_new(meta, "annotations", ann);
		json_object_set_new(cm, "apiVersion", json_string("v1"));
		json_object_set_new(cm, "kind", json_string("ConfigMap"));
		json_object_set_new(cm, "metadata", meta);
		json_object_set_new(cm, "immutable", json_true());
		json_object_set_new(bin, key, json_string(b64));
		json_object_set_new(cm, "binaryData", bin);
		if (i == 0) {
			json_t *data = json_object();
			json_object_set_new(data, "index.json",
				json_string(index_text));
			json_object_set_new(cm, "data", data);
		}
		nd_write(cm);
		json_decref(cm);
		json_array_append_new(names, json_string(name));
		free(name);
		free(b64);
	}
	free(index_text);
	json_decref(labels);
	return names;
}

static json_t *
str_or_null(const char *s)
{
	return s ? json_string(s) : json_null();
}

static void
print_record(struct ctx *c, json_t *configmaps)
{
	json_t *r = json_object(), *files = json_object();
	int counts[3] = {0, 0, 0};
	size_t i;

	for (i = 0; i < c->n; i++)
		counts[c->e[i].op]++;
	json_object_set_new(files, "put", json_integer(counts[OP_PUT]));
	json_object_set_new(files, "link", json_integer(counts[OP_LINK]));
	json_object_set_new(files, "del", json_integer(counts[OP_DEL]));
	json_object_set_new(r, "kind", json_string("checkout"));
	json_object_set_new(r, "root", json_string(c->root));
	json_object_set_new(r, "remote", str_or_null(c->remote));
	json_object_set_new(r, "remote_url", str_or_null(c->remote_url));
	json_object_set_new(r, "branch", str_or_null(c->branch));
	json_object_set_new(r, "head", json_string(c->head_hex));
	json_object_set_new(r, "base_ref", str_or_null(c->base_ref));
	json_object_set_new(r, "merge_base", json_string(c->mb_hex));
	json_object_set_new(r, "base", json_string(c->base_hex));
	json_object_set_new(r, "image", str_or_null(c->image));
	json_object_set_new(r, "image_checked", json_boolean(c->image_checked));
	json_object_set_new(r, "image_digest", str_or_null(c->image_digest));
	json_object_set_new(r, "files", files);
	json_object_set_new(r, "bytes", json_integer((json_int_t)c->data_size));
	json_object_set_new(r, "pack_sha256", json_string(c->pack_sha));
	json_object_set_new(r, "pack_size",
		json_integer((json_int_t)c->pack_len));
	json_object_set_new(r, "pack", str_or_null(c->pack_path));
	json_object_set_new(r, "configmaps",
		configmaps ? configmaps : json_array());
	json_object_set(r, "native", c->native);
	json_object_set(r, "submodules", c->submodules);
	json_object_set(r, "hidden", c->hidden);
	json_object_set(r, "warnings", c->warnings);
	nd_write(r);
	json_decref(r);
}

static void
ctx_free(struct ctx *c)
{
	size_t i;

	for (i = 0; i < c->n; i++)
		entry_free(&c->e[i]);
	free(c->e);
	git_commit_free(c->head);
	git_commit_free(c->mb);
	git_commit_free(c->base);
	git_index_free(c->index);
	git_repository_free(c->repo);
	if (c->rootfd >= 0)
		close(c->rootfd);
	free(c->root);
	free(c->branch);
	free(c->base_ref);
	free(c->remote);
	free(c->remote_url);
	free(c->image);
	free(c->image_digest);
	free(c->pack);
	free(c->pack_path);
	json_decref(c->native);
	json_decref(c->submodules);
	json_decref(c->hidden);
	json_decref(c->warnings);
	json_decref(c->since);
}

int
dp_pack(const struct dp_opts *o)
{
	struct ctx c;
	int st;

	memset(&c, 0, sizeof c);
	c.o = o;
	c.rootfd = -1;
	c.native = json_array();
	c.submodules = json_array();
	c.hidden = json_array();
	c.warnings = json_array();
	git_libgit2_init(); /* libcurl is set up by registry_open (lib/http) */
	if (!(st = open_checkout(&c)) && !(st = check_index(&c)) &&
		!(st = o->since                        ? since_base(&c)
				: (st = find_base(&c)) ? st
						       : choose_image(&c)) &&
		!(st = walk_diff(&c)) &&
		!(st = o->since ? since_reverts(&c) : 0) &&
		!(st = check_pack(&c)) && !(st = build_pack(&c)) &&
		!(st = o->out ? write_pack(&c) : 0))
		print_record(&c, o->cm_prefix ? print_configmaps(&c) : NULL);
	ctx_free(&c);
	git_libgit2_shutdown();
	return st;
}

int
dp_parse_cap(const char *s, uint64_t *out)
{
	unsigned long long v;
	char *end;
	int shift = 0;

	if (!*s || *s < '0' || *s > '9')
		return -1;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno)
		return -1;
	switch (*end) {
	case 'K':
	case 'k': shift = 10, end++; break;
	case 'M':
	case 'm': shift = 20, end++; break;
	case 'G':
	case 'g': shift = 30, end++; break;
	}
	if (*end || v == 0 || v > DP_PACK_MAX >> shift)
		return -1;
	*out = (uint64_t)v << shift;
	return 0;
}
