/* dp_apply: unpack a diff-pack pack (diff-pack(1), version 1) onto the
 * source tree and the installed vllm package of an image, inside a pod.
 *
 * The pack comes whole from a file, or as index.json + pack.NNN chunks
 * from a directory (a projected ConfigMap volume, its entries symlinks
 * into ..data/). Nothing in it is trusted: index.json, every chunk's
 * size and sha256, the pack's sha256, the magic line, every field of the
 * manifest, the order and uniqueness of the paths, the layout of the
 * data and each file's sha256 are checked (else DP_CORRUPT), every path
 * must stay inside its tree and every link's target too, resolved
 * through every link on its way, the pack's and the image's (dp_path;
 * else DP_ESCAPE), and every file the pack changes must be the base's
 * (git blob id) or already the pack's (else DP_BASE), all before the
 * first write. No read is unbounded: a pack is at most DP_PACK_MAX
 * bytes, and the sizes index.json gives are held against the chunks'
 * before memory is taken for them. Then deletes, files
 * (temporary name, fchmod, rename) and symlinks land, every directory
 * reached from the tree's fd one O_NOFOLLOW step at a time, and the
 * marker .k8shazgpu-pack, holding the pack's hash, is written last: a
 * second run stops at once, a run after a crash finishes the work.
 *
 * Paths under vllm/ go to the package directory (-P, or searched for),
 * the others to the tree. Only libc, jansson and lib/ code that needs
 * nothing more: this links into the static unpack-only diff-pack. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <jansson.h>

#include "dp_apply.h"
#include "dp_path.h"
#include "dp_state.h"
#include "err.h"
#include "sha1.h"
#include "sha256.h"

#define MAGIC "K8SHAZGPU-PACK 1\n"
#define MAGIC_LEN (sizeof MAGIC - 1)
#define MARKER DP_PATH_MARKER
/* One temporary name per directory: files land one at a time, and a run
 * after a crash removes what the crashed one left under it. */
#define TMPNAME DP_PATH_TMP
#define INDEX_MAX (1u << 20)
#define DEFAULT_TREE "/vllm-workspace"

enum op { OP_PUT, OP_LINK, OP_DEL };

struct ent {
	enum op op;
	size_t n;           /* 1-based, as messages count entries */
	const char *path;   /* as in the pack */
	const char *rel;    /* path under its root (vllm/ taken off) */
	const char *target; /* link */
	size_t target_len;
	const char *sha256; /* put */
	const char *base;   /* blob id, NULL: new */
	int exec, pkg, skip;
	size_t size, off;
};

struct chunk {
	char key[32];
	size_t off, len;
};

struct pack {
	const char *name; /* the -f file or the -d directory */
	int isdir;
	unsigned char *buf;
	size_t len, data; /* data: where the data starts */
	struct chunk *chunks;
	size_t nchunks;
	char sha[65];
	int dirfd;     /* the -d directory */
	json_t *index; /* its index.json */
	json_t *manifest;
	struct ent *ents;
	struct dp_path_ent *pents; /* the same, as dp_path judges them */
	size_t nents;
};

/* ------------------------------------------------------------------ */
/* small helpers */

static int
is_hex(const char *s, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (!((s[i] >= '0' && s[i] <= '9') ||
			    (s[i] >= 'a' && s[i] <= 'f')))
			return 0;
	return s[n] == '\0';
}

/* where names byte off of the pack: in its chunk when it came in
 * chunks, so a user can tell which ConfigMap is bad. */
static const char *
where(const struct pack *p, size_t off, char *out, size_t cap)
{
	size_t i;

	if (p->isdir)
		for (i = 0; i < p->nchunks; i++)
			if (off < p->chunks[i].off + p->chunks[i].len ||
				i + 1 == p->nchunks) {
				snprintf(out, cap, "%s/%s: byte %zu", p->name,
					p->chunks[i].key,
					off - p->chunks[i].off);
				return out;
			}
	snprintf(out, cap, "%s: byte %zu", p->name, off);
	return out;
}

/* read_fd reads fd to its end into a new buffer of at most max + 1
 * bytes: at most max bytes, *over set when there were more (a regular
 * file longer than max is not read at all). 0, or -1 with errno. */
static int
read_fd(int fd, size_t max, unsigned char **out, size_t *len, int *over)
{
	struct stat st;
	size_t cap, n = 0;
	unsigned char *buf;
	ssize_t got;
	int e;

	*over = 0;
	if (fstat(fd, &st) < 0)
		return -1;
	if (S_ISREG(st.st_mode) && (uintmax_t)st.st_size > max) {
		*over = 1;
		*out = emalloc(1);
		*len = 0;
		return 0;
	}
	cap = (st.st_size > 0 && (uintmax_t)st.st_size < max
			      ? (size_t)st.st_size
			      : 4096) +
		1;
	if (cap > max + 1)
		cap = max + 1;
	buf = emalloc(cap);
	for (;;) {
		if (n == cap) {
			cap = cap > (max + 1) / 2 ? max + 1 : cap * 2;
			buf = erealloc(buf, cap);
		}
		got = read(fd, buf + n, cap - n);
		if (got < 0 && errno == EINTR)
			continue;
		if (got < 0) {
			e = errno;
			free(buf);
			errno = e;
			return -1;
		}
		if (got == 0)
			break;
		n += (size_t)got;
		if (n > max) {
			*over = 1;
			n = max;
			break;
		}
	}
	*out = buf;
	*len = n;
	return 0;
}

/* read_at is read_fd of the file name under dirfd, symlinks followed,
 * as a projected volume's entries are. */
static int
read_at(int dirfd, const char *name, size_t max, unsigned char **out,
	size_t *len, int *over)
{
	int fd, r, e;

	if ((fd = openat(dirfd, name, O_RDONLY | O_CLOEXEC)) < 0)
		return -1;
	r = read_fd(fd, max, out, len, over);
	e = errno;
	close(fd);
	errno = e;
	return r;
}

static int
write_all(int fd, const void *data, size_t len)
{
	const char *p = data;
	ssize_t n;

	while (len) {
		n = write(fd, p, len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -1;
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

/* jstr: the string value of key in o, or NULL when absent, not a
 * string or holding a NUL byte. */
static const char *
jstr(const json_t *o, const char *key)
{
	json_t *v = json_object_get(o, key);
	const char *s;

	if (!json_is_string(v))
		return NULL;
	s = json_string_value(v);
	return strlen(s) == json_string_length(v) ? s : NULL;
}

/* juint: key's value in o as a non-negative integer, or -1. */
static int
juint(const json_t *o, const char *key, size_t *out)
{
	json_t *v = json_object_get(o, key);

	if (!json_is_integer(v) || json_integer_value(v) < 0 ||
		(uintmax_t)json_integer_value(v) > SIZE_MAX / 2)
		return -1;
	*out = (size_t)json_integer_value(v);
	return 0;
}

/* extra_key names the first key of o not in keys (NULL-ended), or NULL. */
static const char *
extra_key(json_t *o, const char *const *keys)
{
	const char *k, *const *w;
	json_t *v;

	json_object_foreach(o, k, v) {
		for (w = keys; *w && strcmp(*w, k); w++)
			;
		if (!*w)
			return k;
	}
	return NULL;
}

/* ------------------------------------------------------------------ */
/* reading the pack */

static int
load_file(struct pack *p, const char *file)
{
	int over;

	p->name = file;
	if (read_at(AT_FDCWD, file, DP_PACK_MAX, &p->buf, &p->len, &over) < 0) {
		err_warn("%s: read:", file);
		return HAZ_FAIL;
	}
	if (over) {
		err_warn("%s: over %zu bytes, the most a pack may have", file,
			DP_PACK_MAX);
		return DP_CORRUPT;
	}
	sha256_buf(p->buf, p->len, p->sha);
	return 0;
}

/* parse_index checks index.json's every field and fills p->chunks;
 * *want is its pack hash (in idx). */
static int
parse_index(struct pack *p, json_t *idx, const char *at, const char **want)
{
	static const char *const top[] = {"kind", "version", "sha256", "size",
		"chunks", NULL};
	static const char *const ck[] = {"key", "size", "sha256", NULL};
	json_t *chunks, *c, *ver;
	const char *k, *s;
	size_t i, size, sum = 0;
	char key[32];

	if (!json_is_object(idx)) {
		err_warn("%s: not a JSON object", at);
		return DP_CORRUPT;
	}
	if ((k = extra_key(idx, top))) {
		err_warn("%s: unknown field \"%s\"", at, k);
		return DP_CORRUPT;
	}
	ver = json_object_get(idx, "version");
	if (!(s = jstr(idx, "kind")) || strcmp(s, "pack-index")) {
		err_warn("%s: \"kind\": not \"pack-index\"", at);
		return DP_CORRUPT;
	}
	if (!json_is_integer(ver) || json_integer_value(ver) != 1) {
		err_warn("%s: \"version\": not 1", at);
		return DP_CORRUPT;
	}
	if (!(s = jstr(idx, "sha256")) || !is_hex(s, 64)) {
		err_warn("%s: \"sha256\": not 64 lowercase hex digits", at);
		return DP_CORRUPT;
	}
	*want = s;
	if (juint(idx, "size", &size) < 0) {
		err_warn("%s: \"size\": not a byte count", at);
		return DP_CORRUPT;
	}
	if (size > DP_PACK_MAX) {
		err_warn("%s: \"size\": %zu, over the %zu bytes a pack may "
			 "have",
			at, size, DP_PACK_MAX);
		return DP_CORRUPT;
	}
	chunks = json_object_get(idx, "chunks");
	if (!json_is_array(chunks) || json_array_size(chunks) == 0) {
		err_warn("%s: \"chunks\": not a non-empty array", at);
		return DP_CORRUPT;
	}
	p->nchunks = json_array_size(chunks);
	p->chunks = ecalloc(p->nchunks, sizeof *p->chunks);
	json_array_foreach(chunks, i, c) {
		snprintf(key, sizeof key, "pack.%03zu", i);
		if (!json_is_object(c)) {
			err_warn("%s: chunks[%zu]: not an object", at, i);
			return DP_CORRUPT;
		}
		if ((k = extra_key(c, ck))) {
			err_warn("%s: chunks[%zu]: unknown field \"%s\"", at, i,
				k);
			return DP_CORRUPT;
		}
		if (!(s = jstr(c, "key")) || strcmp(s, key)) {
			err_warn("%s: chunks[%zu]: \"key\": not \"%s\"", at, i,
				key);
			return DP_CORRUPT;
		}
		if (juint(c, "size", &p->chunks[i].len) < 0 ||
			p->chunks[i].len == 0) {
			err_warn("%s: chunks[%zu]: \"size\": not a positive "
				 "byte count",
				at, i);
			return DP_CORRUPT;
		}
		if (!(s = jstr(c, "sha256")) || !is_hex(s, 64)) {
			err_warn("%s: chunks[%zu]: \"sha256\": not 64 "
				 "lowercase hex digits",
				at, i);
			return DP_CORRUPT;
		}
		memcpy(p->chunks[i].key, key, sizeof key);
		p->chunks[i].off = sum;
		if (p->chunks[i].len > size - sum) {
			err_warn("%s: chunks[%zu]: \"size\": the chunks hold "
				 "more than the %zu bytes \"size\" says",
				at, i, size);
			return DP_CORRUPT;
		}
		sum += p->chunks[i].len;
	}
	if (sum != size) {
		err_warn("%s: \"size\" %zu, but the chunks hold %zu bytes", at,
			size, sum);
		return DP_CORRUPT;
	}
	return 0;
}

/* load_index reads and checks dir's index.json; want gets its pack
 * hash. p->dirfd stays open for load_chunks. */
static int
load_index(struct pack *p, const char *dir, char want[65])
{
	unsigned char *raw = NULL;
	const char *w;
	char at[PATH_MAX + 64];
	json_error_t jerr;
	size_t len;
	int over, st = 0;

	p->name = dir;
	p->isdir = 1;
	if ((p->dirfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0) {
		err_warn("%s: open:", dir);
		return HAZ_FAIL;
	}
	snprintf(at, sizeof at, "%s/index.json", dir);
	if (read_at(p->dirfd, "index.json", INDEX_MAX, &raw, &len, &over) < 0) {
		st = errno == ENOENT ? DP_CORRUPT : HAZ_FAIL;
		err_warn(st == DP_CORRUPT
				? "%s: missing: the pack is incomplete"
				: "%s: read:",
			at);
		return st;
	}
	if (over) {
		err_warn("%s: over %u bytes", at, INDEX_MAX);
		st = DP_CORRUPT;
	} else if (!(p->index = json_loadb((char *)raw, len,
			     JSON_REJECT_DUPLICATES, &jerr))) {
		/* jansson counts the bytes read; the bad one is the last */
		err_warn("%s: byte %d: invalid JSON: %s", at,
			jerr.position - !!jerr.position, jerr.text);
		st = DP_CORRUPT;
	} else if (!(st = parse_index(p, p->index, at, &w))) {
		memcpy(want, w, 65);
	}
	free(raw);
	return st;
}

/* load_chunks reads the chunks index.json names into one buffer, each
 * chunk's size and sha256 checked, then hashes the whole pack. Every
 * chunk must be a regular file of the size index.json says before the
 * buffer is allocated, so that no size it lies about costs memory. */
static int
load_chunks(struct pack *p)
{
	unsigned char *part;
	char at[PATH_MAX + 64], sha[65];
	const char *want;
	struct stat st;
	size_t i, len;
	int over;

	for (i = 0; i < p->nchunks; i++) {
		snprintf(at, sizeof at, "%s/%s", p->name, p->chunks[i].key);
		if (fstatat(p->dirfd, p->chunks[i].key, &st, 0) < 0) {
			if (errno != ENOENT) {
				err_warn("%s: stat:", at);
				return HAZ_FAIL;
			}
			err_warn("%s: missing: the pack is incomplete", at);
			return DP_CORRUPT;
		}
		if (!S_ISREG(st.st_mode)) {
			err_warn("%s: not a regular file", at);
			return DP_CORRUPT;
		}
		if ((uintmax_t)st.st_size != p->chunks[i].len) {
			err_warn("%s: %s than the %zu bytes index.json says",
				at,
				(uintmax_t)st.st_size > p->chunks[i].len
					? "more"
					: "fewer",
				p->chunks[i].len);
			return DP_CORRUPT;
		}
	}
	p->len = p->chunks[p->nchunks - 1].off + p->chunks[p->nchunks - 1].len;
	p->buf = emalloc(p->len + 1);
	for (i = 0; i < p->nchunks; i++) {
		snprintf(at, sizeof at, "%s/%s", p->name, p->chunks[i].key);
		if (read_at(p->dirfd, p->chunks[i].key, p->chunks[i].len, &part,
			    &len, &over) < 0) {
			if (errno != ENOENT) {
				err_warn("%s: read:", at);
				return HAZ_FAIL;
			}
			err_warn("%s: missing: the pack is incomplete", at);
			return DP_CORRUPT;
		}
		memcpy(p->buf + p->chunks[i].off, part, len);
		free(part);
		if (over || len != p->chunks[i].len) {
			err_warn("%s: %s than the %zu bytes index.json says",
				at, over ? "more" : "fewer", p->chunks[i].len);
			return DP_CORRUPT;
		}
		sha256_buf(p->buf + p->chunks[i].off, len, sha);
		want = jstr(json_array_get(json_object_get(p->index, "chunks"),
				    i),
			"sha256");
		if (strcmp(sha, want)) {
			err_warn("%s: sha256 %s, index.json says %s", at, sha,
				want);
			return DP_CORRUPT;
		}
	}
	sha256_buf(p->buf, p->len, p->sha);
	return 0;
}

/* ------------------------------------------------------------------ */
/* the manifest */

static int
ent_cmp(const void *a, const void *b)
{
	return strcmp(((const struct ent *)a)->path,
		((const struct ent *)b)->path);
}

static const struct ent *
find_ent(const struct pack *p, const char *path)
{
	struct ent key = {.path = path};

	return bsearch(&key, p->ents, p->nents, sizeof key, ent_cmp);
}

/* parse_entry checks entry x of the manifest (object e) field by field;
 * *next is where the next put's data must start. */
static int
parse_entry(struct pack *p, json_t *e, struct ent *x, size_t *next,
	size_t data_size)
{
	static const char *const put_keys[] = {"op", "path", "mode", "size",
		"offset", "sha256", "base_blob", NULL};
	static const char *const link_keys[] = {"op", "path", "target",
		"base_blob", NULL};
	static const char *const del_keys[] = {"op", "path", "base_blob",
		"renamed_to", NULL};
	const char *op, *k, *why, *mode;
	char at[PATH_MAX + 512], pos[PATH_MAX + 64], sha[65];
	json_t *v, *bb;

	if (!json_is_object(e)) {
		err_warn("%s: manifest: entry %zu: not an object", p->name,
			x->n);
		return DP_CORRUPT;
	}
	v = json_object_get(e, "path");
	if (!json_is_string(v)) {
		err_warn("%s: manifest: entry %zu: \"path\": not a string",
			p->name, x->n);
		return DP_CORRUPT;
	}
	x->path = json_string_value(v);
	snprintf(at, sizeof at, "%s: entry %zu (%s)", p->name, x->n, x->path);
	if ((why = dp_path_bad(x->path, json_string_length(v)))) {
		err_warn("%s: path escapes the tree: %s", at, why);
		return DP_ESCAPE;
	}
	x->pkg = !strncmp(x->path, "vllm/", 5);
	x->rel = x->path + (x->pkg ? 5 : 0);
	op = jstr(e, "op");
	x->op = !op                   ? -1
		: !strcmp(op, "put")  ? OP_PUT
		: !strcmp(op, "link") ? OP_LINK
		: !strcmp(op, "del")  ? OP_DEL
				      : -1;
	if ((int)x->op < 0) {
		err_warn("%s: \"op\": not put, link or del", at);
		return DP_CORRUPT;
	}
	if ((k = extra_key(e,
		     x->op == OP_PUT            ? put_keys
			     : x->op == OP_LINK ? link_keys
						: del_keys))) {
		err_warn("%s: unknown field \"%s\"", at, k);
		return DP_CORRUPT;
	}
	bb = json_object_get(e, "base_blob");
	x->base = jstr(e, "base_blob");
	if (!(json_is_null(bb) && x->op != OP_DEL) &&
		!(x->base && is_hex(x->base, 40))) {
		err_warn("%s: \"base_blob\": not 40 lowercase hex digits%s", at,
			x->op != OP_DEL ? " or null" : "");
		return DP_CORRUPT;
	}
	if (x->op == OP_DEL) {
		v = json_object_get(e, "renamed_to");
		if (v &&
			!(json_is_string(v) &&
				!dp_path_bad(json_string_value(v),
					json_string_length(v)))) {
			err_warn("%s: \"renamed_to\": not a path", at);
			return DP_CORRUPT;
		}
		return 0;
	}
	if (x->op == OP_LINK) {
		v = json_object_get(e, "target");
		if (!json_is_string(v)) {
			err_warn("%s: \"target\": not a string", at);
			return DP_CORRUPT;
		}
		x->target = json_string_value(v);
		x->target_len = json_string_length(v);
		if ((why = dp_path_target_bad(x->target, x->target_len))) {
			err_warn("%s: link target %s escapes the tree: %s", at,
				x->target, why);
			return DP_ESCAPE;
		}
		return 0;
	}
	mode = jstr(e, "mode");
	if (!mode || (strcmp(mode, "100644") && strcmp(mode, "100755"))) {
		err_warn("%s: \"mode\": not \"100644\" or \"100755\"", at);
		return DP_CORRUPT;
	}
	x->exec = !strcmp(mode, "100755");
	if (!(x->sha256 = jstr(e, "sha256")) || !is_hex(x->sha256, 64)) {
		err_warn("%s: \"sha256\": not 64 lowercase hex digits", at);
		return DP_CORRUPT;
	}
	if (juint(e, "size", &x->size) < 0) {
		err_warn("%s: \"size\": not a byte count", at);
		return DP_CORRUPT;
	}
	if (juint(e, "offset", &x->off) < 0) {
		err_warn("%s: \"offset\": not a byte count", at);
		return DP_CORRUPT;
	}
	if (x->off > data_size || x->size > data_size - x->off) {
		err_warn("%s: offset %zu + size %zu past the data's %zu bytes",
			at, x->off, x->size, data_size);
		return DP_CORRUPT;
	}
	if (x->off != *next) {
		err_warn("%s: offset %zu, expected %zu (the data is "
			 "contiguous, in manifest order)",
			at, x->off, *next);
		return DP_CORRUPT;
	}
	*next = x->off + x->size;
	sha256_buf(p->buf + p->data + x->off, x->size, sha);
	if (strcmp(sha, x->sha256)) {
		err_warn("%s: entry %zu (%s): content sha256 %s, the "
			 "manifest says %s",
			where(p, p->data + x->off, pos, sizeof pos), x->n,
			x->path, sha, x->sha256);
		return DP_CORRUPT;
	}
	return 0;
}

/* parse_pack checks the magic line, the manifest and the data. */
static int
parse_pack(struct pack *p)
{
	static const char *const top[] = {"kind", "version", "base", "head",
		"data_size", "entries", NULL};
	unsigned char *nl;
	const char *k, *s;
	char pos[PATH_MAX + 64];
	json_error_t jerr;
	json_t *entries, *e, *ver;
	size_t i, data_size, next = 0;
	const struct dp_path_ent *b;
	const struct ent *d;
	int st;

	if (p->len < MAGIC_LEN || memcmp(p->buf, MAGIC, MAGIC_LEN)) {
		if (p->len >= 15 && !memcmp(p->buf, MAGIC, 15))
			err_warn("%s: not a version 1 pack", p->name);
		else
			err_warn("%s: not a diff-pack pack (no \"%.*s\" line)",
				p->name, (int)MAGIC_LEN - 1, MAGIC);
		return DP_CORRUPT;
	}
	nl = memchr(p->buf + MAGIC_LEN, '\n', p->len - MAGIC_LEN);
	if (!nl) {
		err_warn("%s: truncated: the manifest line has no end",
			where(p, p->len, pos, sizeof pos));
		return DP_CORRUPT;
	}
	p->data = (size_t)(nl - p->buf) + 1;
	p->manifest = json_loadb((char *)p->buf + MAGIC_LEN,
		(size_t)(nl - p->buf) - MAGIC_LEN,
		JSON_REJECT_DUPLICATES | JSON_ALLOW_NUL, &jerr);
	if (!p->manifest) {
		/* byte offsets count from 0, as "offset" does */
		err_warn("%s: manifest: invalid JSON: %s",
			where(p,
				MAGIC_LEN + (size_t)jerr.position -
					!!jerr.position,
				pos, sizeof pos),
			jerr.text);
		return DP_CORRUPT;
	}
	if (!json_is_object(p->manifest)) {
		err_warn("%s: manifest: not a JSON object", p->name);
		return DP_CORRUPT;
	}
	if ((k = extra_key(p->manifest, top))) {
		err_warn("%s: manifest: unknown field \"%s\"", p->name, k);
		return DP_CORRUPT;
	}
	ver = json_object_get(p->manifest, "version");
	if (!(s = jstr(p->manifest, "kind")) || strcmp(s, "pack")) {
		err_warn("%s: manifest: \"kind\": not \"pack\"", p->name);
		return DP_CORRUPT;
	}
	if (!json_is_integer(ver) || json_integer_value(ver) != 1) {
		err_warn("%s: manifest: \"version\": not 1", p->name);
		return DP_CORRUPT;
	}
	if (!(s = jstr(p->manifest, "base")) || !is_hex(s, 40) ||
		!(s = jstr(p->manifest, "head")) || !is_hex(s, 40)) {
		err_warn("%s: manifest: \"base\" and \"head\": not 40 "
			 "lowercase hex digits",
			p->name);
		return DP_CORRUPT;
	}
	if (juint(p->manifest, "data_size", &data_size) < 0) {
		err_warn("%s: manifest: \"data_size\": not a byte count",
			p->name);
		return DP_CORRUPT;
	}
	if (data_size > p->len - p->data) {
		err_warn("%s: truncated: data_size %zu, but %zu bytes of data",
			p->name, data_size, p->len - p->data);
		return DP_CORRUPT;
	}
	if (data_size < p->len - p->data) {
		err_warn("%s: %zu bytes past the data's end",
			where(p, p->data + data_size, pos, sizeof pos),
			p->len - p->data - data_size);
		return DP_CORRUPT;
	}
	entries = json_object_get(p->manifest, "entries");
	if (!json_is_array(entries)) {
		err_warn("%s: manifest: \"entries\": not an array", p->name);
		return DP_CORRUPT;
	}
	p->nents = json_array_size(entries);
	p->ents = ecalloc(p->nents, sizeof *p->ents);
	json_array_foreach(entries, i, e) {
		p->ents[i].n = i + 1;
		if ((st = parse_entry(p, e, &p->ents[i], &next, data_size)))
			return st;
		if (i > 0 &&
			strcmp(p->ents[i - 1].path, p->ents[i].path) >= 0) {
			err_warn("%s: entry %zu (%s): %s entry %zu (%s)",
				p->name, i + 1, p->ents[i].path,
				strcmp(p->ents[i - 1].path, p->ents[i].path)
					? "not sorted after"
					: "the same path as",
				i, p->ents[i - 1].path);
			return DP_CORRUPT;
		}
	}
	if (next != data_size) {
		err_warn("%s: manifest: data_size %zu, but the files hold %zu "
			 "bytes",
			p->name, data_size, next);
		return DP_CORRUPT;
	}
	/* A file (or link) cannot also be a directory of another entry;
	 * only a deleted one can (a file that became a directory). */
	p->pents = ecalloc(p->nents ? p->nents : 1, sizeof *p->pents);
	for (i = 0; i < p->nents; i++) {
		p->pents[i].path = p->ents[i].path;
		p->pents[i].op = p->ents[i].op == OP_PUT ? DP_PATH_PUT
			: p->ents[i].op == OP_LINK       ? DP_PATH_LINK
							 : DP_PATH_DEL;
		p->pents[i].target = p->ents[i].target;
		p->pents[i].target_len = p->ents[i].target_len;
	}
	for (i = 0; i < p->nents; i++)
		if ((b = dp_path_blocker(p->pents, p->nents, i))) {
			d = &p->ents[b - p->pents];
			err_warn("%s: entry %zu (%s): under entry %zu (%s), "
				 "which is no directory",
				p->name, i + 1, p->ents[i].path, d->n, d->path);
			return DP_CORRUPT;
		}
	return 0;
}

/* ------------------------------------------------------------------ */
/* the package directory */

/* The places an image keeps vllm, in the order searched; '*' stands
 * for the python3* directories there, newest version first. */
static const char *const pkg_places[] = {
	"/opt/venv/lib/python3*/site-packages/vllm",
	"/usr/local/lib/python3*/dist-packages/vllm",
	"/usr/local/lib/python3*/site-packages/vllm",
	"/usr/lib/python3*/dist-packages/vllm",
	"/usr/lib/python3/dist-packages/vllm",
};

static int
vers_desc(const void *a, const void *b)
{
	return strverscmp(*(char *const *)b, *(char *const *)a);
}

static int
has_init(const char *dir)
{
	struct stat st;
	char *f = easprintf("%s/__init__.py", dir);
	int ok = stat(f, &st) == 0 && S_ISREG(st.st_mode);

	free(f);
	return ok;
}

/* search_place: the first directory that place (with root in front)
 * names holding an __init__.py, malloc'd, or NULL. */
static char *
search_place(const char *root, const char *place)
{
	const char *star = strchr(place, '*');
	char *dir, *found = NULL, **names = NULL;
	size_t n = 0, i;
	struct dirent *de;
	DIR *d;

	if (!star) {
		found = easprintf("%s%s", root, place);
		if (has_init(found))
			return found;
		free(found);
		return NULL;
	}
	/* the '*' ends "python3*", a component of its own */
	dir = easprintf("%s%.*s", root, (int)(star - place - 8), place);
	if (!(d = opendir(dir))) {
		free(dir);
		return NULL;
	}
	while ((de = readdir(d)))
		if (!strncmp(de->d_name, "python3", 7)) {
			names = erealloc(names, (n + 1) * sizeof *names);
			names[n++] = estrdup(de->d_name);
		}
	closedir(d);
	qsort(names, n, sizeof *names, vers_desc);
	for (i = 0; i < n; i++) {
		if (!found) {
			found = easprintf("%s/%s%s", dir, names[i], star + 1);
			if (!has_init(found)) {
				free(found);
				found = NULL;
			}
		}
		free(names[i]);
	}
	free(names);
	free(dir);
	return found;
}

/* find_pkgdir searches the places vllm is installed in, each with
 * $K8SHAZGPU_PKG_ROOT in front (for tests); *searched lists them. */
static char *
find_pkgdir(char **searched)
{
	const char *root = getenv("K8SHAZGPU_PKG_ROOT"),
		   *venv = getenv("VIRTUAL_ENV");
	char *place, *found = NULL, *list;
	size_t i;

	if (!root)
		root = "";
	*searched = estrdup("");
	for (i = 0; i <= sizeof pkg_places / sizeof *pkg_places; i++) {
		if (i == 0 && !(venv && *venv))
			continue;
		place = i == 0
			? easprintf("%s/lib/python3*/site-packages/vllm", venv)
			: estrdup(pkg_places[i - 1]);
		if (!found)
			found = search_place(root, place);
		list = easprintf("%s%s%s%s", *searched, **searched ? ", " : "",
			root, place);
		free(*searched);
		*searched = list;
		free(place);
	}
	return found;
}

/* ------------------------------------------------------------------ */
/* walking a tree */

enum walk { WK_OK, WK_ABSENT, WK_NOTDIR, WK_LINK, WK_ERR };

/* walk opens, one O_NOFOLLOW step at a time from rootfd, the directory
 * that holds rel's last component, into *dfd, making missing ones (0755)
 * when create. Else it says what stopped it at rel[0..*at): WK_ABSENT a
 * missing directory, WK_NOTDIR a non-directory, WK_LINK a symlink, WK_ERR
 * an error (errno). */
static enum walk
walk(int rootfd, const char *rel, int create, int *dfd, size_t *at)
{
	char comp[NAME_MAX + 1];
	const char *c = rel, *slash;
	struct stat st;
	int cur, next, e, made;

	if ((cur = fcntl(rootfd, F_DUPFD_CLOEXEC, 0)) < 0)
		return WK_ERR;
	for (; (slash = strchr(c, '/')); c = slash + 1) {
		*at = (size_t)(slash - rel);
		if ((size_t)(slash - c) > NAME_MAX) {
			close(cur);
			errno = ENAMETOOLONG;
			return WK_ERR;
		}
		memcpy(comp, c, (size_t)(slash - c));
		comp[slash - c] = '\0';
		made = 0;
		next = openat(cur, comp,
			O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (next < 0 && errno == ENOENT && create) {
			if (mkdirat(cur, comp, 0755) < 0 && errno != EEXIST) {
				e = errno;
				close(cur);
				errno = e;
				return WK_ERR;
			}
			made = 1;
			next = openat(cur, comp,
				O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
					O_CLOEXEC);
		}
		if (next < 0) {
			e = errno;
			if (fstatat(cur, comp, &st, AT_SYMLINK_NOFOLLOW) < 0) {
				e = errno;
				close(cur);
				errno = e;
				return e == ENOENT ? WK_ABSENT : WK_ERR;
			}
			close(cur);
			errno = e;
			return S_ISLNK(st.st_mode)     ? WK_LINK
				: !S_ISDIR(st.st_mode) ? WK_NOTDIR
						       : WK_ERR;
		}
		/* the umask is the image's; the pack says 0755 */
		if (made && fchmod(next, 0755) < 0) {
			e = errno;
			close(next);
			close(cur);
			errno = e;
			return WK_ERR;
		}
		close(cur);
		cur = next;
	}
	*dfd = cur;
	return WK_OK;
}

static const char *
last(const char *rel)
{
	const char *s = strrchr(rel, '/');

	return s ? s + 1 : rel;
}

/* ------------------------------------------------------------------ */
/* verifying against the image */

struct ctx {
	const struct dp_unpack_opts *o;
	const char *tree, *pkgdir;
	int treefd, pkgfd;
	struct pack p;
	int escapes, mismatches;
};

/* What is at an entry's path: C_BLOCKED a non-directory on the way,
 * C_ESCAPE a symlink on the way (said already). */
enum cur {
	C_ABSENT,
	C_FILE,
	C_LINK,
	C_DIR,
	C_OTHER,
	C_BIG, /* a file over DP_PACK_MAX, not read */
	C_BLOCKED,
	C_ESCAPE
};

struct found {
	enum cur kind;
	char blob[41], sha[65];
	int exec;
	char *target;
	size_t at; /* C_BLOCKED: rel[0..at) is no directory */
};

static const char *
root_of(const struct ctx *c, const struct ent *x)
{
	return x->pkg ? c->pkgdir : c->tree;
}

/* deleted_dir: rel[0..at) of x's root is a path the pack deletes, so
 * what is there now will not be in the way. */
static int
deleted_dir(const struct pack *p, const struct ent *x, size_t at)
{
	char *path = easprintf("%s%.*s", x->pkg ? "vllm/" : "", (int)at,
		x->rel);
	const struct ent *d = find_ent(p, path);

	free(path);
	return d && d->op == OP_DEL;
}

/* blob_of: the git blob id and sha256 of data[hdr..hdr+len), the first
 * hdr bytes being room for git's "blob N\0". */
static void
blob_of(unsigned char *data, size_t hdr, size_t len, struct found *f)
{
	char h[32];
	int n = snprintf(h, sizeof h, "blob %zu", len) + 1;

	memcpy(data + hdr - (size_t)n, h, (size_t)n);
	sha1_hex(data + hdr - (size_t)n, len + (size_t)n, f->blob);
	sha256_buf(data + hdr, len, f->sha);
}

/* probe finds what is at x's path now; 0, or a status having said why. */
static int
probe(struct ctx *c, const struct ent *x, struct found *f)
{
	int rootfd = x->pkg ? c->pkgfd : c->treefd, dfd, fd, over, e;
	const char *name = last(x->rel);
	enum walk w;
	unsigned char *buf, *data;
	char link[32 + PATH_MAX];
	struct stat st;
	size_t len;
	ssize_t n;

	memset(f, 0, sizeof *f);
	switch ((w = walk(rootfd, x->rel, 0, &dfd, &f->at))) {
	case WK_OK: break;
	case WK_ABSENT: f->kind = C_ABSENT; return 0;
	case WK_NOTDIR:
	case WK_LINK:
		/* a file or symlink the pack deletes first is in no way */
		f->kind = deleted_dir(&c->p, x, f->at) ? C_ABSENT
			: w == WK_LINK                 ? C_ESCAPE
						       : C_BLOCKED;
		if (f->kind == C_ESCAPE) {
			err_warn("%s/%.*s: a symbolic link in the way of entry "
				 "%zu (%s)",
				root_of(c, x), (int)f->at, x->rel, x->n,
				x->path);
			c->escapes++;
		}
		return 0;
	case WK_ERR:
		err_warn("%s/%.*s: open:", root_of(c, x), (int)f->at, x->rel);
		return HAZ_FAIL;
	}
	if (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0) {
		e = errno;
		close(dfd);
		if (e == ENOENT) {
			f->kind = C_ABSENT;
			return 0;
		}
		errno = e;
		err_warn("%s/%s: stat:", root_of(c, x), x->rel);
		return HAZ_FAIL;
	}
	if (S_ISLNK(st.st_mode)) {
		n = readlinkat(dfd, name, link + 32, PATH_MAX);
		if (n < 0)
			goto fail;
		f->kind = C_LINK;
		f->target = strndup(link + 32, (size_t)n);
		if (!f->target)
			err_die(HAZ_FAIL, "strndup:");
		blob_of((unsigned char *)link, 32, (size_t)n, f);
	} else if (S_ISREG(st.st_mode)) {
		fd = openat(dfd, name,
			O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
		if (fd < 0)
			goto fail;
		if (read_fd(fd, DP_PACK_MAX, &buf, &len, &over) < 0) {
			e = errno;
			close(fd);
			errno = e;
			goto fail;
		}
		close(fd);
		if (over) {
			free(buf);
			f->kind = C_BIG;
			close(dfd);
			return 0;
		}
		data = emalloc(len + 32);
		memcpy(data + 32, buf, len);
		free(buf);
		blob_of(data, 32, len, f);
		free(data);
		f->kind = C_FILE;
		f->exec = (st.st_mode & S_IXUSR) != 0;
	} else {
		f->kind = S_ISDIR(st.st_mode) ? C_DIR : C_OTHER;
	}
	close(dfd);
	return 0;
fail:
	err_warn("%s/%s: read:", root_of(c, x), x->rel);
	close(dfd);
	return HAZ_FAIL;
}

/* check sets x->skip when what is there already is the pack's, passes
 * x when it is the base's, and else says why (one mismatch counted). */
static void
check(struct ctx *c, struct ent *x, const struct found *f)
{
	char found[PATH_MAX + 64], expected[64];

	switch (x->op) {
	case OP_PUT:
		x->skip = f->kind == C_FILE && !strcmp(f->sha, x->sha256) &&
			f->exec == x->exec;
		break;
	case OP_LINK:
		x->skip = f->kind == C_LINK && !strcmp(f->target, x->target);
		break;
	case OP_DEL:
		x->skip = f->kind == C_ABSENT || f->kind == C_BLOCKED;
		break;
	}
	if (x->skip || f->kind == C_ESCAPE)
		return;
	if (x->base ? (f->kind == C_FILE || f->kind == C_LINK) &&
				!strcmp(f->blob, x->base)
		    : f->kind == C_ABSENT)
		return;
	switch (f->kind) {
	case C_ABSENT: snprintf(found, sizeof found, "nothing"); break;
	case C_FILE:
	case C_LINK: snprintf(found, sizeof found, "blob %s", f->blob); break;
	case C_DIR: snprintf(found, sizeof found, "a directory"); break;
	case C_OTHER: snprintf(found, sizeof found, "a special file"); break;
	case C_BIG:
		snprintf(found, sizeof found, "a file of over %zu bytes",
			DP_PACK_MAX);
		break;
	case C_ESCAPE: break;
	case C_BLOCKED:
		snprintf(found, sizeof found, "a non-directory at %s/%.*s",
			root_of(c, x), (int)f->at, x->rel);
		break;
	}
	if (x->base)
		snprintf(expected, sizeof expected, "blob %s", x->base);
	else
		snprintf(expected, sizeof expected, "nothing");
	err_warn("%s/%s: base blob mismatch: expected %s, found %s",
		root_of(c, x), x->rel, expected, found);
	c->mismatches++;
}

/* The image as dp_path sees it: one root of the pod's, pkg or not. */
struct image_root {
	struct ctx *c;
	int pkg;
};

/* image_at tells dp_path what the image holds at rel under a root, no
 * symlink on the way followed (such a one, or a non-directory, and
 * nothing is there once the pack is applied). */
static int
image_at(void *arg, const char *rel, char **target)
{
	const struct image_root *r = arg;
	const char *root = r->pkg ? r->c->pkgdir : r->c->tree;
	int rootfd = r->pkg ? r->c->pkgfd : r->c->treefd, dfd, kind;
	char buf[PATH_MAX];
	struct stat st;
	size_t at = 0;
	ssize_t n;

	if (rootfd < 0)
		return DP_PATH_ABSENT;
	switch (walk(rootfd, rel, 0, &dfd, &at)) {
	case WK_OK: break;
	case WK_ERR:
		if (errno == ENAMETOOLONG)
			return DP_PATH_ABSENT;
		err_warn("%s/%.*s: open:", root, (int)at, rel);
		return -1;
	default: return DP_PATH_ABSENT;
	}
	if (fstatat(dfd, last(rel), &st, AT_SYMLINK_NOFOLLOW) < 0) {
		kind = errno == ENOENT || errno == ENAMETOOLONG ? DP_PATH_ABSENT
								: -1;
	} else if (S_ISLNK(st.st_mode)) {
		n = readlinkat(dfd, last(rel), buf, sizeof buf);
		kind = n < 0 ? -1 : DP_PATH_SYMLINK;
		if (n >= 0 && !(*target = strndup(buf, (size_t)n)))
			err_die(HAZ_FAIL, "strndup:");
	} else {
		kind = S_ISDIR(st.st_mode) ? DP_PATH_DIR : DP_PATH_FILE;
	}
	if (kind < 0)
		err_warn("%s/%s: stat:", root, rel);
	close(dfd);
	return kind;
}

/* link_refused names a link whose target leads out of its root. */
static void
link_refused(void *arg, size_t i, int verdict, const char *why)
{
	struct ctx *c = arg;
	const struct ent *x = &c->p.ents[i];

	(void)verdict;
	err_warn("%s: entry %zu (%s): link target %s escapes the tree: %s",
		c->p.name, x->n, x->path, x->target, why);
	c->escapes++;
}

/* check_links resolves every link's target where the pack leaves it:
 * its entries over the image, every link on the way followed. */
static int
check_links(struct ctx *c)
{
	struct image_root roots[2] = {{c, 0}, {c, 1}};
	const struct dp_path_image image[2] = {{image_at, &roots[0]},
		{image_at, &roots[1]}};

	return dp_path_check_links(c->p.pents, c->p.nents, image, link_refused,
		       c) < 0
		? HAZ_FAIL
		: 0;
}

/* ------------------------------------------------------------------ */
/* writing */

/* land writes x (a put or a link) under the temporary name in dfd, then
 * renames it over x's name. */
static int
land(struct ctx *c, const struct ent *x, int dfd)
{
	const unsigned char *data = c->p.buf + c->p.data + x->off;
	int fd, e;

	if (unlinkat(dfd, TMPNAME, 0) < 0 && errno != ENOENT)
		return -1;
	if (x->op == OP_LINK) {
		if (symlinkat(x->target, dfd, TMPNAME) < 0)
			return -1;
	} else {
		fd = openat(dfd, TMPNAME,
			O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
			0600);
		if (fd < 0)
			return -1;
		if (write_all(fd, data, x->size) < 0 ||
			fchmod(fd, x->exec ? 0755 : 0644) < 0) {
			e = errno;
			close(fd);
			unlinkat(dfd, TMPNAME, 0);
			errno = e;
			return -1;
		}
		if (close(fd) < 0) {
			e = errno;
			unlinkat(dfd, TMPNAME, 0);
			errno = e;
			return -1;
		}
	}
	if (renameat(dfd, TMPNAME, dfd, last(x->rel)) < 0) {
		e = errno;
		unlinkat(dfd, TMPNAME, 0);
		errno = e;
		return -1;
	}
	return 0;
}

/* apply makes x so; 0 or a status having said why. */
static int
apply(struct ctx *c, const struct ent *x)
{
	int rootfd = x->pkg ? c->pkgfd : c->treefd, dfd, r;
	size_t at = 0;

	switch (walk(rootfd, x->rel, x->op != OP_DEL, &dfd, &at)) {
	case WK_OK: break;
	case WK_ABSENT:
	case WK_NOTDIR:
		if (x->op == OP_DEL)
			return 0;
		errno = ENOTDIR;
		err_warn("%s/%.*s: mkdir:", root_of(c, x), (int)at, x->rel);
		return HAZ_FAIL;
	case WK_LINK:
		err_warn("%s/%.*s: a symbolic link in the way of entry %zu "
			 "(%s)",
			root_of(c, x), (int)at, x->rel, x->n, x->path);
		return DP_ESCAPE;
	case WK_ERR:
		err_warn("%s/%.*s: open:", root_of(c, x), (int)at, x->rel);
		return HAZ_FAIL;
	}
	if (x->op == OP_DEL)
		r = unlinkat(dfd, last(x->rel), 0) < 0 && errno != ENOENT ? -1
									  : 0;
	else
		r = land(c, x, dfd);
	if (r < 0)
		err_warn("%s/%s: %s:", root_of(c, x), x->rel,
			x->op == OP_DEL ? "unlink" : "write");
	close(dfd);
	return r < 0 ? HAZ_FAIL : 0;
}

/* mark writes the marker, the pack's hash and a newline, by rename. */
static int
mark(struct ctx *c)
{
	char line[66];
	int fd, e;

	snprintf(line, sizeof line, "%s\n", c->p.sha);
	if (syncfs(c->treefd) < 0 || (c->pkgfd >= 0 && syncfs(c->pkgfd) < 0))
		goto fail;
	if (unlinkat(c->treefd, TMPNAME, 0) < 0 && errno != ENOENT)
		goto fail;
	fd = openat(c->treefd, TMPNAME,
		O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
	if (fd < 0)
		goto fail;
	if (write_all(fd, line, 65) < 0 || fchmod(fd, 0644) < 0 ||
		fsync(fd) < 0) {
		e = errno;
		close(fd);
		unlinkat(c->treefd, TMPNAME, 0);
		errno = e;
		goto fail;
	}
	if (close(fd) < 0 ||
		renameat(c->treefd, TMPNAME, c->treefd, MARKER) < 0) {
		e = errno;
		unlinkat(c->treefd, TMPNAME, 0);
		errno = e;
		goto fail;
	}
	return 0;
fail:
	err_warn("%s/%s: write:", c->tree, MARKER);
	return HAZ_FAIL;
}

/* marked: the tree's marker holds sha (a symlink there is no marker). */
static int
marked(struct ctx *c, const char *sha, int *yes)
{
	unsigned char *buf;
	size_t len;
	int fd, over;

	*yes = 0;
	fd = openat(c->treefd, MARKER,
		O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0) {
		if (errno == ENOENT || errno == ELOOP)
			return 0;
		err_warn("%s/%s: open:", c->tree, MARKER);
		return HAZ_FAIL;
	}
	if (read_fd(fd, 128, &buf, &len, &over) < 0) {
		err_warn("%s/%s: read:", c->tree, MARKER);
		close(fd);
		return HAZ_FAIL;
	}
	close(fd);
	*yes = !over && len == 65 && !memcmp(buf, sha, 64) && buf[64] == '\n';
	free(buf);
	return 0;
}

/* put_record prints record r (taken) on stdout, one compact line. */
static int
put_record(json_t *r)
{
	int bad = json_dumpf(r, stdout, JSON_COMPACT) < 0 ||
		putchar('\n') == EOF || fflush(stdout) == EOF;

	json_decref(r);
	if (bad) {
		err_warn("stdout: write:");
		return HAZ_FAIL;
	}
	return 0;
}

/* ------------------------------------------------------------------ */
/* the whole unpack */

static int
record(struct ctx *c, int already)
{
	size_t i, n[3] = {0, 0, 0}, skipped = 0;
	json_t *r;

	for (i = 0; i < c->p.nents; i++)
		if (c->p.ents[i].skip)
			skipped++;
		else
			n[c->p.ents[i].op]++;
	if (c->o->quiet)
		return 0;
	r = json_pack("{s:s, s:s, s:s?, s:s?, s:I, s:I, s:I, s:I, s:b}", "kind",
		"unpack", "sha256", c->p.sha, "tree", c->tree, "pkgdir",
		c->pkgdir, "put", (json_int_t)n[OP_PUT], "link",
		(json_int_t)n[OP_LINK], "del", (json_int_t)n[OP_DEL], "skipped",
		(json_int_t)skipped, "already", already);
	if (!r) {
		err_warn("record: a path is not UTF-8");
		return HAZ_FAIL;
	}
	return put_record(r);
}

static int
open_root(const char *path, const char *what, int *fd)
{
	if ((*fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) >= 0)
		return 0;
	if (errno == ENOENT || errno == ENOTDIR) {
		err_warn("%s: no such directory (the %s)", path, what);
		return DP_NOTREE;
	}
	err_warn("%s: open:", path);
	return HAZ_FAIL;
}

/* settle finds the package directory when the pack needs one. */
static int
settle_pkgdir(struct ctx *c, char **found)
{
	char *searched;
	size_t i;

	for (i = 0; i < c->p.nents && !c->p.ents[i].pkg; i++)
		;
	if (i == c->p.nents)
		return 0;
	if (!c->pkgdir) {
		*found = find_pkgdir(&searched);
		if (!*found) {
			err_warn("no vllm package directory for the pack's "
				 "vllm/ entries: none of %s holds an "
				 "__init__.py; name it with -P",
				searched);
			free(searched);
			return DP_NOTREE;
		}
		free(searched);
		c->pkgdir = *found;
	}
	return open_root(c->pkgdir, "package directory", &c->pkgfd);
}

/* verify_sha: the pack loaded is the one expected: want (-s, else
 * index.json's, else the file's own) and, from a directory, idx (-s's
 * index.json when -s was given, else "") name its hash. */
static int
verify_sha(const struct ctx *c, const char *want, const char *idx)
{
	if (c->o->dir && strcmp(*idx ? idx : want, c->p.sha)) {
		err_warn("%s/index.json: \"sha256\": %s, but the chunks hold "
			 "a pack of sha256 %s",
			c->o->dir, *idx ? idx : want, c->p.sha);
		return DP_CORRUPT;
	}
	if (strcmp(want, c->p.sha)) {
		err_warn("%s: sha256 %s, expected %s (-s)", c->p.name, c->p.sha,
			want);
		return DP_CORRUPT;
	}
	return 0;
}

/* check_record: the pack -c judged, its hash, base and head, and its
 * entries by kind. */
static int
check_record(struct ctx *c)
{
	size_t i, n[3] = {0, 0, 0};
	json_t *r;

	for (i = 0; i < c->p.nents; i++)
		n[c->p.ents[i].op]++;
	if (c->o->quiet)
		return 0;
	r = json_pack("{s:s, s:s, s:O, s:O, s:I, s:I, s:I}", "kind",
		"pack-check", "sha256", c->p.sha, "base",
		json_object_get(c->p.manifest, "base"), "head",
		json_object_get(c->p.manifest, "head"), "put",
		(json_int_t)n[OP_PUT], "link", (json_int_t)n[OP_LINK], "del",
		(json_int_t)n[OP_DEL]);
	return put_record(r);
}

/* check_only (-c) judges the pack as unpack does where no image is
 * needed: its hashes, its manifest, its paths, and where its links lead
 * over an empty tree and package directory; it opens neither, and
 * writes nothing. */
static int
check_only(struct ctx *c, char want[65])
{
	const struct dp_unpack_opts *o = c->o;
	char idx[65] = "";
	int st;

	if (o->dir && (st = load_index(&c->p, o->dir, *want ? idx : want)))
		return st;
	if (o->file && (st = load_file(&c->p, o->file)))
		return st;
	if (o->file && !*want)
		memcpy(want, c->p.sha, 65);
	if (o->dir && (st = load_chunks(&c->p)))
		return st;
	if ((st = verify_sha(c, want, idx)) || (st = parse_pack(&c->p)) ||
		(st = check_links(c)))
		return st;
	if (c->escapes) {
		err_warn("%s: refused, as diff-pack -u would refuse it",
			c->p.name);
		return DP_ESCAPE;
	}
	return check_record(c);
}

/* keep_state records in -S's state what each entry made its path: a
 * pack of the state's base updates it, another starts it anew. */
static int
keep_state(struct ctx *c)
{
	const char *base = json_string_value(
		json_object_get(c->p.manifest, "base"));
	char *was = NULL, blob[41];
	json_t *files;
	size_t i;
	int st;

	if (!c->o->state)
		return 0;
	if (!(files = dp_state_load(c->o->state, &was)))
		return HAZ_FAIL;
	if (!was || !base || strcmp(was, base))
		json_object_clear(files);
	for (i = 0; i < c->p.nents; i++) {
		const struct ent *x = &c->p.ents[i];
		if (x->op == OP_DEL) {
			json_object_set_new(files, x->path, json_null());
			continue;
		}
		if (x->op == OP_PUT)
			dp_state_blob(c->p.buf + c->p.data + x->off, x->size,
				blob);
		else
			dp_state_blob(x->target, x->target_len, blob);
		json_object_set_new(files, x->path,
			json_pack("{s:s, s:s}", "mode",
				x->op == OP_LINK  ? "120000"
					: x->exec ? "100755"
						  : "100644",
				"blob", blob));
	}
	st = dp_state_save(c->o->state, base ? base : "", files) ? HAZ_FAIL : 0;
	json_decref(files);
	free(was);
	return st;
}

/* The order files land in: deletes first (a file may become a
 * directory), symlinks last (none is in place while files are written). */
static const enum op land_order[] = {OP_DEL, OP_PUT, OP_LINK};

static int
unpack(struct ctx *c, char **found)
{
	const struct dp_unpack_opts *o = c->o;
	char want[65] = "", idx[65] = "", *searched;
	struct found f;
	size_t i, k;
	int st, yes;

	if (o->sha256) {
		for (i = 0; i < 64 && o->sha256[i]; i++)
			want[i] = (char)(o->sha256[i] >= 'A' &&
						o->sha256[i] <= 'F'
					? o->sha256[i] - 'A' + 'a'
					: o->sha256[i]);
		want[i] = '\0';
		if (strlen(o->sha256) != 64 || !is_hex(want, 64)) {
			err_warn("-s %s: not a sha256 (64 hex digits)",
				o->sha256);
			return HAZ_USAGE;
		}
	}
	if (o->check_only)
		return check_only(c, want);
	if ((st = open_root(c->tree, "tree", &c->treefd)))
		return st;
	/* once the hash is known (-s, index.json, or the file's), a marker
	 * holding it ends the run at once */
	if (*want && (st = marked(c, want, &yes)))
		return st;
	if (*want && yes)
		goto already;
	if (o->dir && (st = load_index(&c->p, o->dir, *want ? idx : want)))
		return st;
	if (o->file && !*want) {
		if ((st = load_file(&c->p, o->file)))
			return st;
		memcpy(want, c->p.sha, 65);
	}
	if (!o->sha256 && (st = marked(c, want, &yes)))
		return st;
	if (!o->sha256 && yes)
		goto already;
	if (o->file && !c->p.buf && (st = load_file(&c->p, o->file)))
		return st;
	if (o->dir && (st = load_chunks(&c->p)))
		return st;
	if ((st = verify_sha(c, want, idx)))
		return st;
	if ((st = parse_pack(&c->p)) || (st = settle_pkgdir(c, found)))
		return st;
	for (i = 0; i < c->p.nents; i++) {
		if ((st = probe(c, &c->p.ents[i], &f)))
			return st;
		check(c, &c->p.ents[i], &f);
		free(f.target);
	}
	if ((st = check_links(c)))
		return st;
	if (c->escapes || c->mismatches) {
		err_warn("%s: nothing written", c->p.name);
		return c->escapes ? DP_ESCAPE : DP_BASE;
	}
	for (k = 0; k < sizeof land_order / sizeof *land_order; k++)
		for (i = 0; i < c->p.nents; i++)
			if (c->p.ents[i].op == land_order[k] &&
				!c->p.ents[i].skip &&
				(st = apply(c, &c->p.ents[i])))
				return st;
	if ((st = mark(c)) || (st = keep_state(c)))
		return st;
	return record(c, 0);
already:
	memcpy(c->p.sha, want, 65);
	if (!c->pkgdir) {
		c->pkgdir = *found = find_pkgdir(&searched);
		free(searched);
	}
	return record(c, 1);
}

int
dp_unpack(const struct dp_unpack_opts *o)
{
	struct ctx c = {.o = o, .treefd = -1, .pkgfd = -1};
	char *found = NULL;
	int st;

	if (!o->dir == !o->file) {
		err_warn("unpack: one of a pack directory and a pack file");
		return HAZ_USAGE;
	}
	c.tree = o->tree ? o->tree : DEFAULT_TREE;
	c.pkgdir = o->pkgdir;
	c.p.dirfd = -1;
	st = unpack(&c, &found);
	if (c.treefd >= 0)
		close(c.treefd);
	if (c.pkgfd >= 0)
		close(c.pkgfd);
	if (c.p.dirfd >= 0)
		close(c.p.dirfd);
	json_decref(c.p.index);
	json_decref(c.p.manifest);
	free(c.p.buf);
	free(c.p.chunks);
	free(c.p.ents);
	free(c.p.pents);
	free(found);
	return st;
}

/* dp_install copies what runs (the static diff-pack, in an init
 * container) beside dest under a temporary name, then renames it: a
 * container that starts on dest sees the whole program or none. */
int
dp_install(const char *dest)
{
	char *tmp = easprintf("%s.k8shazgpu-tmp", dest), buf[65536];
	const char *file = "/proc/self/exe", *op = "open";
	int in, out = -1;
	ssize_t n;

	if ((in = open(file, O_RDONLY | O_CLOEXEC)) < 0) {
		err_warn("%s: open:", file);
		free(tmp);
		return HAZ_FAIL;
	}
	unlink(tmp);
	out = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
		0700);
	file = dest;
	if (out < 0)
		goto fail;
	op = "write";
	while ((n = read(in, buf, sizeof buf)) != 0) {
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			file = "/proc/self/exe";
			op = "read";
			goto fail;
		}
		if (write_all(out, buf, (size_t)n) < 0)
			goto fail;
	}
	if (fchmod(out, 0755) < 0 || fsync(out) < 0)
		goto fail;
	n = close(out);
	out = -1;
	if (n < 0 || rename(tmp, dest) < 0)
		goto fail;
	close(in);
	free(tmp);
	return 0;
fail:
	err_warn("%s: %s:", file, op);
	if (out >= 0)
		close(out);
	unlink(tmp);
	close(in);
	free(tmp);
	return HAZ_FAIL;
}
