/* pack-paths: libFuzzer target for dp_path, the judge of a diff-pack
 * pack's paths that the packer and the unpacker share.
 *
 * Each input is a set of entries, one a line: an op byte, a path, and
 * for a link a tab and its target. 'p' put, 'l' link, 'd' del are the
 * pack's; 'F' file, 'D' directory, 'L' link are the image's, beneath
 * them (a path under vllm/ belongs to the package directory, the others
 * to the tree, as in a pack). At most 64 lines of 256 bytes are read,
 * so that every input runs quickly. Checked, or abort:
 *   - dp_path_bad refuses exactly the paths an independent reading
 *     refuses (empty, a NUL, absolute, an empty, '.' or '..' component,
 *     a name diff-pack keeps), and dp_path_target_bad exactly the
 *     empty, absolute and NUL-holding targets;
 *   - dp_path_blocker finds an entry under a file or link of the pack
 *     exactly when one is there;
 *   - over the entries left (good paths, sorted, each once, none under a
 *     file or link, no target holding NUL), dp_path_check_links refuses
 *     a link exactly when an independent resolver, written otherwise
 *     (it starts again from the root with the link's target put in
 *     place of the link, and keeps the directories reached as a stack of
 *     flags), finds that its target climbs above the root or meets an
 *     absolute target: nothing accepted leads outside its root, and
 *     refused for the same reason. Only a link dp_path finds too deep to
 *     resolve is not compared.
 * Leaks are found by libFuzzer's leak check. Run by t/0890-fuzz.t. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dp_path.h"
#include "err.h"

#include "fuzz.h"

#define MAXLINES 64
#define MAXLINE 256

struct rec {
	char op;
	char *path; /* NUL-terminated; len bytes, a NUL among them maybe */
	size_t len;
	char *target;
	size_t tlen;
};

struct model {
	struct rec *r;
	size_t n;
	struct dp_path_ent *pe; /* the pack's entries kept, sorted */
	size_t npe;
	int verdict[MAXLINES]; /* dp_path's, by index into pe */
};

/* ---- independent readings of paths */

static int
reserved(const char *c, size_t n)
{
	return (n == 15 && !memcmp(c, ".k8shazgpu-pack", 15)) ||
		(n == 14 && !memcmp(c, ".k8shazgpu-tmp", 14));
}

/* path_ok reads a path component by component, counting them. */
static int
path_ok(const char *p, size_t len)
{
	size_t i, start = 0;

	if (!len || p[0] == '/')
		return 0;
	for (i = 0; i < len; i++)
		if (!p[i])
			return 0;
	for (i = 0; i <= len; i++) {
		if (i < len && p[i] != '/')
			continue;
		if (i == start || (i - start == 1 && p[start] == '.') ||
			(i - start == 2 && p[start] == '.' &&
				p[start + 1] == '.') ||
			reserved(p + start, i - start))
			return 0;
		start = i + 1;
	}
	return 1;
}

static int
pkg_of(const char *path)
{
	return strncmp(path, "vllm/", 5) == 0;
}

static const char *
rel_of(const char *path)
{
	return path + (pkg_of(path) ? 5 : 0);
}

/* under: a is a proper ancestor directory of b. */
static int
under(const char *a, const char *b)
{
	size_t n = strlen(a);

	return strncmp(a, b, n) == 0 && b[n] == '/';
}

/* ---- the tree the pack leaves, read independently: linear scans */

/* image_kind: what the image records say is at rel in root pkg,
 * nothing when a file or link of the image lies on the way. */
static int
image_kind(const struct model *m, int pkg, const char *rel, const char **t)
{
	size_t i;
	int below = 0;

	for (i = 0; i < m->n; i++) {
		const struct rec *r = &m->r[i];
		if (r->op < 'A' || r->op > 'Z' || pkg_of(r->path) != pkg)
			continue;
		if ((r->op == 'F' || r->op == 'L') &&
			under(rel_of(r->path), rel))
			return DP_PATH_ABSENT;
	}
	for (i = 0; i < m->n; i++) {
		const struct rec *r = &m->r[i];
		if (r->op < 'A' || r->op > 'Z' || pkg_of(r->path) != pkg)
			continue;
		if (!strcmp(rel_of(r->path), rel)) {
			*t = r->target;
			return r->op == 'F'    ? DP_PATH_FILE
				: r->op == 'D' ? DP_PATH_DIR
					       : DP_PATH_SYMLINK;
		}
		below |= under(rel, rel_of(r->path));
	}
	return below ? DP_PATH_DIR : DP_PATH_ABSENT;
}

static int
final_kind(const struct model *m, int pkg, const char *rel, const char **t)
{
	const struct dp_path_ent *exact = NULL;
	size_t i;
	int below = 0;

	for (i = 0; i < m->npe; i++) {
		const struct dp_path_ent *e = &m->pe[i];
		if (pkg_of(e->path) != pkg)
			continue;
		if (!strcmp(rel_of(e->path), rel))
			exact = e;
		else if (e->op != DP_PATH_DEL && under(rel, rel_of(e->path)))
			below = 1;
	}
	if (exact && exact->op == DP_PATH_LINK) {
		*t = exact->target;
		return DP_PATH_SYMLINK;
	}
	if (exact && exact->op == DP_PATH_PUT)
		return DP_PATH_FILE;
	if (below)
		return DP_PATH_DIR;
	if (exact)
		return DP_PATH_ABSENT;
	return image_kind(m, pkg, rel, t);
}

/* resolve_again: where the link at rel with target leads, walking
 * from the root each time a link is met, with it replaced by its
 * directory and target. */
static int
resolve_again(const struct model *m, int pkg, const char *rel,
	const char *target)
{
	const char *slash = strrchr(rel, '/');
	char *path, *cur, *next;
	unsigned char real[8192]; /* per component of cur: a directory */
	size_t depth, i, len, clen, follows = 1;
	const char *t;
	int k, v = -1;

	path = slash ? easprintf("%.*s/%s", (int)(slash - rel), rel, target)
		     : estrdup(target);
	cur = emalloc(strlen(path) + 2);
	while (v < 0) {
		len = strlen(path);
		cur = erealloc(cur, len + 2);
		cur[0] = 0;
		clen = 0;
		depth = 0;
		next = NULL;
		for (i = 0; i < len && !next && v < 0;) {
			size_t n = strcspn(path + i, "/");
			const char *c = path + i;
			i += n + 1;
			if (n == 0 || (n == 1 && c[0] == '.'))
				continue;
			if (n == 2 && c[0] == '.' && c[1] == '.') {
				if (!depth) {
					v = DP_PATH_CLIMBS;
					break;
				}
				depth--;
				while (clen && cur[clen - 1] != '/')
					clen--;
				clen -= clen > 0;
				cur[clen] = 0;
				continue;
			}
			if (depth && !real[depth - 1]) {
				real[depth++] = 0;
				sprintf(cur + clen, "%s%.*s", clen ? "/" : "",
					(int)n, c);
				clen = strlen(cur);
				continue;
			}
			sprintf(cur + clen, "%s%.*s", clen ? "/" : "", (int)n,
				c);
			t = NULL;
			k = final_kind(m, pkg, cur, &t);
			if (k == DP_PATH_SYMLINK && t && *t) {
				if (++follows > DP_PATH_MAXLINKS)
					v = DP_PATH_LOOP;
				else if (*t == '/')
					v = DP_PATH_ABSOLUTE;
				else
					next = easprintf("%.*s%s%s/%s",
						(int)clen, cur, clen ? "/" : "",
						t, i < len ? path + i : "");
				/* cur[0..clen) is the link's directory */
				continue;
			}
			real[depth++] = k == DP_PATH_DIR;
			clen = strlen(cur);
		}
		if (v < 0 && !next)
			v = DP_PATH_INSIDE;
		if (next) {
			free(path);
			path = next;
		}
	}
	free(path);
	free(cur);
	return v;
}

/* ---- dp_path's answers */

static int
image_at(void *arg, const char *rel, char **target)
{
	const struct model *m = ((void **)arg)[0];
	int pkg = ((void **)arg)[1] != NULL, k;
	const char *t = NULL;

	k = image_kind(m, pkg, rel, &t);
	if (k == DP_PATH_SYMLINK)
		*target = estrdup(t);
	return k;
}

static void
refused(void *arg, size_t i, int verdict, const char *why)
{
	struct model *m = arg;

	check(i < m->npe && m->pe[i].op == DP_PATH_LINK,
		"a refusal of no link");
	check(why && *why, "a refusal without words");
	m->verdict[i] = verdict;
}

static int
by_path(const void *a, const void *b)
{
	return strcmp(((const struct dp_path_ent *)a)->path,
		((const struct dp_path_ent *)b)->path);
}

/* ---- the input */

static size_t
parse(const uint8_t *data, size_t size, struct rec *r)
{
	const uint8_t *p = data, *end = data + size, *nl, *tab;
	size_t n = 0;

	while (p < end && n < MAXLINES) {
		nl = memchr(p, '\n', (size_t)(end - p));
		if (!nl)
			nl = end;
		if (nl - p >= 2 && nl - p <= MAXLINE &&
			strchr("pldFDL", p[0])) {
			tab = memchr(p + 1, '\t', (size_t)(nl - p - 1));
			r[n].op = (char)p[0];
			r[n].len = (size_t)((tab ? tab : nl) - (p + 1));
			r[n].path = emalloc(r[n].len + 1);
			memcpy(r[n].path, p + 1, r[n].len);
			r[n].path[r[n].len] = 0;
			r[n].tlen = tab ? (size_t)(nl - tab - 1) : 0;
			r[n].target = emalloc(r[n].tlen + 1);
			memcpy(r[n].target, tab ? tab + 1 : p, r[n].tlen);
			r[n].target[r[n].tlen] = 0;
			n++;
		}
		p = nl + 1;
	}
	return n;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct rec r[MAXLINES];
	static struct dp_path_ent all[MAXLINES], kept[MAXLINES];
	struct model m = {.r = r, .pe = kept};
	void *args[2][2] = {{&m, NULL}, {&m, &m}};
	const struct dp_path_image image[2] = {{image_at, args[0]},
		{image_at, args[1]}};
	size_t i, j, n, nall = 0;
	int ok, blocked, refusals, v;
	const char *bad;

	fuzz_quiet();
	m.n = n = parse(data, size, r);
	for (i = 0; i < n; i++) {
		ok = path_ok(r[i].path, r[i].len);
		check(ok == !dp_path_bad(r[i].path, r[i].len),
			"dp_path_bad disagrees on a path");
		bad = dp_path_target_bad(r[i].target, r[i].tlen);
		check(!bad ==
				(r[i].tlen > 0 && r[i].target[0] != '/' &&
					strlen(r[i].target) == r[i].tlen),
			"dp_path_target_bad disagrees on a target");
		if (!ok || strlen(r[i].target) != r[i].tlen) {
			r[i].op = 'x'; /* as the unpacker, never looked at */
			continue;
		}
		if (r[i].op >= 'a') {
			all[nall].path = r[i].path;
			all[nall].op = r[i].op == 'p' ? DP_PATH_PUT
				: r[i].op == 'l'      ? DP_PATH_LINK
						      : DP_PATH_DEL;
			all[nall].target = r[i].target;
			all[nall++].target_len = r[i].tlen;
		}
	}
	/* sorted, each path once (the first), as a manifest must be */
	qsort(all, nall, sizeof *all, by_path);
	for (i = 0, j = 0; i < nall; i++)
		if (!j || strcmp(all[j - 1].path, all[i].path))
			all[j++] = all[i];
	nall = j;
	for (i = 0; i < nall; i++) {
		blocked = 0;
		for (j = 0; j < nall; j++)
			blocked |= all[j].op != DP_PATH_DEL &&
				under(all[j].path, all[i].path);
		check(blocked == (dp_path_blocker(all, nall, i) != NULL),
			"dp_path_blocker disagrees");
		if (!blocked)
			kept[m.npe++] = all[i];
	}
	for (i = 0; i < m.npe; i++)
		m.verdict[i] = DP_PATH_INSIDE;
	refusals = dp_path_check_links(m.pe, m.npe, image, refused, &m);
	for (i = 0, j = 0; i < m.npe; i++)
		j += m.verdict[i] != DP_PATH_INSIDE;
	check(refusals >= 0 && (size_t)refusals == j,
		"the count is not the refusals");
	for (i = 0; i < m.npe; i++) {
		if (m.pe[i].op != DP_PATH_LINK || m.verdict[i] == DP_PATH_DEEP)
			continue;
		if (dp_path_target_bad(m.pe[i].target, m.pe[i].target_len)) {
			check(m.verdict[i] == DP_PATH_BAD,
				"a bad target not refused as one");
			continue;
		}
		v = resolve_again(&m, pkg_of(m.pe[i].path),
			rel_of(m.pe[i].path), m.pe[i].target);
		if (v == DP_PATH_LOOP)
			v = DP_PATH_INSIDE;
		check(m.verdict[i] != DP_PATH_INSIDE || v == DP_PATH_INSIDE,
			"a link accepted that leads outside its root");
		check(m.verdict[i] == v,
			"a link refused that stays inside, "
			"or for another reason");
	}
	for (i = 0; i < n; i++) {
		free(r[i].path);
		free(r[i].target);
	}
	return 0;
}
