/* dp_path: the paths of a diff-pack pack (see dp_path.h).
 *
 * A link's target is resolved the way the kernel would resolve it in
 * the tree the pack leaves behind, component by component: the pack's
 * own entries decide what they name (a put a file, a link a link, a del
 * nothing, and every directory above a put or a link a directory), the
 * image's lookup the rest. Checking each link alone, lexically, misses a
 * target that climbs through another link (l2 -> ../l1/.. with l1 -> ..);
 * following every link on the way, with the kernel's bound on how many,
 * does not. */
#include "dp_path.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "err.h"

const char *
dp_path_bad(const char *path, size_t len)
{
	const char *c, *end = path + len, *slash;
	size_t n;

	if (len == 0)
		return "an empty path";
	if (memchr(path, '\0', len))
		return "a NUL byte";
	if (*path == '/')
		return "an absolute path";
	for (c = path;; c = slash + 1) {
		slash = memchr(c, '/', (size_t)(end - c));
		if (!slash)
			slash = end;
		n = (size_t)(slash - c);
		if (n == 0)
			return "an empty component";
		if (n == 1 && c[0] == '.')
			return "a '.' component";
		if (n == 2 && c[0] == '.' && c[1] == '.')
			return "a '..' component";
		if ((n == sizeof DP_PATH_MARKER - 1 &&
			    !memcmp(c, DP_PATH_MARKER, n)) ||
			(n == sizeof DP_PATH_TMP - 1 &&
				!memcmp(c, DP_PATH_TMP, n)))
			return "a name diff-pack keeps for itself";
		if (slash == end)
			return NULL;
	}
}

const char *
dp_path_target_bad(const char *target, size_t len)
{
	if (len == 0)
		return "an empty target";
	if (memchr(target, '\0', len))
		return "a NUL byte";
	if (*target == '/')
		return "an absolute target";
	if (len > DP_PATH_TARGET_MAX)
		return "a target over 4095 bytes";
	return NULL;
}

/* find: the entry of e whose path is p[0..len), or NULL. */
static const struct dp_path_ent *
find(const struct dp_path_ent *e, size_t n, const char *p, size_t len)
{
	size_t lo = 0, hi = n, mid;
	int r;

	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		r = strncmp(e[mid].path, p, len);
		if (!r)
			r = e[mid].path[len] != '\0';
		if (!r)
			return &e[mid];
		if (r < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

const struct dp_path_ent *
dp_path_blocker(const struct dp_path_ent *e, size_t n, size_t i)
{
	const char *p = e[i].path, *s;
	const struct dp_path_ent *d;

	for (s = p; (s = strchr(s, '/')); s++)
		if ((d = find(e, n, p, (size_t)(s - p))) &&
			d->op != DP_PATH_DEL)
			return d;
	return NULL;
}

/* ------------------------------------------------------------------ */
/* the tree the pack leaves */

/* One root: its entries (paths relative to it, sorted, as the pack's
 * are) and the image beneath them. */
struct root {
	const char *prefix; /* put back before a path in a message */
	const char *name;
	struct dp_path_ent *e; /* path relative to the root */
	size_t n;
	const char **made; /* the paths of its puts and links, sorted */
	size_t nmade;
	const struct dp_path_image *image;
};

static int
in_pkg(const char *path)
{
	return !strncmp(path, DP_PATH_PKG, DP_PATH_PKG_LEN);
}

static void
root_init(struct root *r, int pkg, const struct dp_path_ent *all, size_t n,
	const struct dp_path_image *image)
{
	size_t i;

	memset(r, 0, sizeof *r);
	r->prefix = pkg ? DP_PATH_PKG : "";
	r->name = pkg ? "the package directory" : "the tree";
	r->image = image;
	r->e = emalloc((n ? n : 1) * sizeof *r->e);
	r->made = emalloc((n ? n : 1) * sizeof *r->made);
	for (i = 0; i < n; i++) {
		if (in_pkg(all[i].path) != pkg)
			continue;
		r->e[r->n] = all[i];
		r->e[r->n].path += pkg ? DP_PATH_PKG_LEN : 0;
		if (all[i].op != DP_PATH_DEL)
			r->made[r->nmade++] = r->e[r->n].path;
		r->n++;
	}
}

/* made_below: a put or link of r lies under cur[0..len) (cur has room
 * for two more bytes), so the pack makes it a directory. */
static int
made_below(const struct root *r, char *cur, size_t len)
{
	size_t lo = 0, hi = r->nmade, mid;
	int yes;

	cur[len] = '/';
	cur[len + 1] = '\0';
	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if (strcmp(r->made[mid], cur) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	yes = lo < r->nmade && !strncmp(r->made[lo], cur, len + 1);
	cur[len] = '\0';
	return yes;
}

/* lookup: what the tree the pack leaves holds at cur (len bytes, its
 * directory one there); *target, malloc'd, for a link. -1: an error. */
static int
lookup(const struct root *r, char *cur, size_t len, char **target)
{
	const struct dp_path_ent *e = find(r->e, r->n, cur, len);
	int kind;

	*target = NULL;
	if (e && e->op == DP_PATH_LINK) {
		*target = estrdup(e->target);
		return DP_PATH_SYMLINK;
	}
	if (e && e->op == DP_PATH_PUT)
		return DP_PATH_FILE;
	if (made_below(r, cur, len))
		return DP_PATH_DIR;
	if (e || !r->image->at)
		return DP_PATH_ABSENT; /* deleted, or no image */
	kind = r->image->at(r->image->arg, cur, target);
	if (kind == DP_PATH_SYMLINK && !*target)
		kind = DP_PATH_ABSENT;
	return kind;
}

/* resolve follows target from the directory of the link at rel, in r;
 * a verdict, or -1 on an image's error. *via: the last link followed
 * (relative to r), malloc'd, or NULL. */
static int
resolve(const struct root *r, const char *rel, const char *target, char **via)
{
	const char *slash = strrchr(rel, '/'), *c;
	size_t len = slash ? (size_t)(slash - rel) : 0, at = 0, n, back;
	size_t phantom = 0, steps = 0; /* phantom: cur's last components
					* that are no directory */
	char *cur, *todo, *lt, *s;
	int follows = 1, v = DP_PATH_INSIDE, kind;

	*via = NULL;
	if (len > DP_PATH_MAXDIR)
		return DP_PATH_DEEP;
	cur = emalloc(DP_PATH_MAXDIR + 2);
	memcpy(cur, rel, len);
	cur[len] = '\0';
	todo = estrdup(target);
	while (todo[at]) {
		c = todo + at;
		n = strcspn(c, "/");
		at += n + (c[n] == '/');
		if (++steps > DP_PATH_MAXSTEPS) {
			v = DP_PATH_DEEP;
			break;
		}
		if (n == 0 || (n == 1 && c[0] == '.'))
			continue;
		if (n == 2 && c[0] == '.' && c[1] == '.') {
			if (len == 0) {
				v = DP_PATH_CLIMBS;
				break;
			}
			s = memrchr(cur, '/', len);
			len = s ? (size_t)(s - cur) : 0;
			cur[len] = '\0';
			phantom -= phantom > 0;
			continue;
		}
		if ((len ? len + 1 : 0) + n > DP_PATH_MAXDIR) {
			v = DP_PATH_DEEP;
			break;
		}
		back = len;
		if (len)
			cur[len++] = '/';
		memcpy(cur + len, c, n);
		len += n;
		cur[len] = '\0';
		if (phantom) {
			phantom++; /* below no directory: nothing to find */
			continue;
		}
		if ((kind = lookup(r, cur, len, &lt)) < 0) {
			v = -1;
			break;
		}
		if (kind != DP_PATH_SYMLINK) {
			phantom = kind != DP_PATH_DIR;
			continue;
		}
		if (!*lt) { /* an empty target leads nowhere */
			free(lt);
			phantom = 1;
			continue;
		}
		free(*via);
		*via = estrdup(cur);
		len = back;
		cur[len] = '\0';
		v = ++follows > DP_PATH_MAXLINKS          ? DP_PATH_LOOP
			: *lt == '/'                      ? DP_PATH_ABSOLUTE
			: strlen(lt) > DP_PATH_TARGET_MAX ? DP_PATH_DEEP
							  : DP_PATH_INSIDE;
		if (v != DP_PATH_INSIDE) {
			free(lt);
			break;
		}
		s = easprintf("%s/%s", lt, todo + at);
		free(lt);
		free(todo);
		todo = s;
		at = 0;
	}
	free(cur);
	free(todo);
	return v;
}

/* why: the words for a link refused with verdict v, malloc'd. */
static char *
why(const struct root *r, int v, const char *via)
{
	switch (v) {
	case DP_PATH_CLIMBS:
		return via ? easprintf("a target that leaves %s through the "
				       "link %s%s",
				     r->name, r->prefix, via)
			   : easprintf("a target that leaves %s", r->name);
	case DP_PATH_ABSOLUTE:
		return easprintf("a target through the link %s%s, whose "
				 "target is absolute",
			r->prefix, via);
	default:
		return easprintf("a target too deep to resolve (over %d "
				 "components or %d bytes)",
			DP_PATH_MAXSTEPS, DP_PATH_MAXDIR);
	}
}

int
dp_path_check_links(const struct dp_path_ent *e, size_t n,
	const struct dp_path_image image[2],
	void (*refuse)(void *arg, size_t i, int verdict, const char *why),
	void *arg)
{
	struct root r[2];
	const struct root *in;
	const char *bad;
	char *via, *words;
	size_t i;
	int v, count = 0;

	root_init(&r[0], 0, e, n, &image[0]);
	root_init(&r[1], 1, e, n, &image[1]);
	for (i = 0; i < n; i++) {
		if (e[i].op != DP_PATH_LINK)
			continue;
		if ((bad = dp_path_target_bad(e[i].target, e[i].target_len))) {
			refuse(arg, i, DP_PATH_BAD, bad);
			count++;
			continue;
		}
		in = &r[in_pkg(e[i].path)];
		v = resolve(in, e[i].path + strlen(in->prefix), e[i].target,
			&via);
		if (v < 0) {
			free(via);
			count = -1;
			break;
		}
		if (v != DP_PATH_INSIDE && v != DP_PATH_LOOP) {
			words = why(in, v, via);
			refuse(arg, i, v, words);
			free(words);
			count++;
		}
		free(via);
	}
	for (i = 0; i < 2; i++) {
		free(r[i].e);
		free(r[i].made);
	}
	return count;
}

/* ------------------------------------------------------------------ */
/* opening a tree's paths */

int
dp_path_open_dir(int rootfd, const char *dir, size_t len)
{
	char comp[NAME_MAX + 1];
	const char *c = dir, *end = dir + len, *slash;
	size_t n;
	int cur, next, e;

	if ((cur = fcntl(rootfd, F_DUPFD_CLOEXEC, 0)) < 0)
		return -1;
	while (c < end) {
		slash = memchr(c, '/', (size_t)(end - c));
		if (!slash)
			slash = end;
		n = (size_t)(slash - c);
		errno = n > NAME_MAX ? ENAMETOOLONG : EINVAL;
		if (n == 0 || n > NAME_MAX || (n == 1 && c[0] == '.') ||
			(n == 2 && c[0] == '.' && c[1] == '.'))
			goto fail;
		memcpy(comp, c, n);
		comp[n] = '\0';
		next = openat(cur, comp,
			O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (next < 0)
			goto fail;
		close(cur);
		cur = next;
		if (slash == end)
			break;
		c = slash + 1;
	}
	return cur;
fail:
	e = errno;
	close(cur);
	errno = e;
	return -1;
}

int
dp_path_open_parent(int rootfd, const char *path, const char **name)
{
	const char *slash = strrchr(path, '/');

	*name = slash ? slash + 1 : path;
	return dp_path_open_dir(rootfd, path,
		slash ? (size_t)(slash - path) : 0);
}
