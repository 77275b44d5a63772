/* ckpt: the kubelet plugin's checkpoint file (see ckpt.h). */
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "ckpt.h"
#include "err.h"
#include "jload.h"
#include "sha1.h"

#define CKPT_VERSION 1
#define CKPT_MAX ((size_t)64 << 20)

/* checksum writes the SHA-1 of claims, compact with sorted keys. */
static void
checksum(const json_t *claims, char out[41])
{
	char *text = json_dumps(claims, JSON_COMPACT | JSON_SORT_KEYS);

	if (!text)
		err_die(HAZ_FAIL, "out of memory");
	sha1_hex(text, strlen(text), out);
	free(text);
}

/* slurp reads the whole of fd (at most CKPT_MAX bytes) into *buf. */
static int
slurp(int fd, char **buf, size_t *len)
{
	size_t cap = 4096, n = 0;
	ssize_t r;
	char *b = emalloc(cap);

	for (;;) {
		if (n == cap) {
			if (cap >= CKPT_MAX) {
				free(b);
				errno = EFBIG;
				return -1;
			}
			cap *= 2;
			b = erealloc(b, cap);
		}
		r = read(fd, b + n, cap - n);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			free(b);
			return -1;
		}
		if (r == 0)
			break;
		n += (size_t)r;
	}
	*buf = b;
	*len = n;
	return 0;
}

int
ckpt_load(const char *path, json_t **claims, char *why, size_t n)
{
	json_error_t jerr;
	json_t *doc, *c, *v;
	const char *sum, *uid;
	char want[41], *buf;
	size_t len;
	int fd;

	*claims = NULL;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0 && errno == ENOENT) {
		*claims = json_object();
		return 0;
	}
	if (fd < 0 || slurp(fd, &buf, &len) < 0) {
		snprintf(why, n, "%s: %s", path, strerror(errno));
		if (fd >= 0)
			close(fd);
		return -1;
	}
	close(fd);
	doc = jl_loadb(buf, len, 0, &jerr);
	free(buf);
	if (!doc) {
		snprintf(why, n, "%s: line %d column %d: %s", path, jerr.line,
			jerr.column, jerr.text);
		return -1;
	}
	c = json_object_get(doc, "claims");
	sum = json_string_value(json_object_get(doc, "checksum"));
	v = json_object_get(doc, "version");
	if (!json_is_object(doc) || !json_is_object(c) || !sum ||
		!json_is_integer(v)) {
		snprintf(why, n,
			"%s: not a checkpoint: version, checksum and "
			"claims missing or of the wrong type",
			path);
		json_decref(doc);
		return -1;
	}
	if (json_integer_value(v) != CKPT_VERSION) {
		snprintf(why, n, "%s: version %lld, not %d", path,
			json_integer_value(v), CKPT_VERSION);
		json_decref(doc);
		return -1;
	}
	checksum(c, want);
	if (strcmp(want, sum) != 0) {
		snprintf(why, n,
			"%s: checksum mismatch: the file was changed "
			"or damaged",
			path);
		json_decref(doc);
		return -1;
	}
	json_object_foreach(c, uid, v) {
		if (!json_is_object(v)) {
			snprintf(why, n, "%s: claim %s: not an object", path,
				uid);
			json_decref(doc);
			return -1;
		}
	}
	*claims = json_incref(c);
	json_decref(doc);
	return 0;
}

/* write_all writes len bytes of p to fd. */
static int
write_all(int fd, const char *p, size_t len)
{
	ssize_t w;

	while (len > 0) {
		w = write(fd, p, len);
		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0)
			return -1;
		p += w;
		len -= (size_t)w;
	}
	return 0;
}

/* sync_dir syncs the directory holding path, so a rename survives a
 * crash. */
static int
sync_dir(const char *path)
{
	char *copy = estrdup(path);
	int fd = open(dirname(copy), O_RDONLY | O_DIRECTORY | O_CLOEXEC), rc;

	free(copy);
	if (fd < 0)
		return -1;
	rc = fsync(fd);
	close(fd);
	return rc;
}

/* write_ckpt writes claims to path through "<path>.tmp", renamed over
 * it; with sync, the file and then its directory are synced too. */
static int
write_ckpt(const char *path, const json_t *claims, int sync, char *why,
	size_t n)
{
	char sum[41], *text, *tmp = easprintf("%s.tmp", path);
	json_t *doc;
	int fd;

	checksum(claims, sum);
	doc = json_pack("{s:i, s:s, s:O}", "version", CKPT_VERSION, "checksum",
		sum, "claims", claims);
	text = json_dumps(doc, JSON_COMPACT | JSON_SORT_KEYS);
	json_decref(doc);
	if (!text)
		err_die(HAZ_FAIL, "out of memory");
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0 || write_all(fd, text, strlen(text)) < 0 ||
		write_all(fd, "\n", 1) < 0 || (sync && fsync(fd) < 0)) {
		snprintf(why, n, "%s: %s", tmp, strerror(errno));
		if (fd >= 0)
			close(fd);
		unlink(tmp);
		goto fail;
	}
	if (close(fd) < 0 || rename(tmp, path) < 0 ||
		(sync && sync_dir(path) < 0)) {
		snprintf(why, n, "%s: %s", path, strerror(errno));
		unlink(tmp);
		goto fail;
	}
	free(text);
	free(tmp);
	return 0;
fail:
	free(text);
	free(tmp);
	return -1;
}

int
ckpt_save(const char *path, const json_t *claims, char *why, size_t n)
{
	return write_ckpt(path, claims, 1, why, n);
}

int
ckpt_stage(const char *path, const json_t *claims, char *why, size_t n)
{
	return write_ckpt(path, claims, 0, why, n);
}

char *
ckpt_set_aside(const char *path, char *why, size_t n)
{
	char *to = easprintf("%s.corrupt-%lld", path, (long long)time(NULL));

	if (rename(path, to) == 0)
		return to;
	snprintf(why, n, "%s: %s", path, strerror(errno));
	free(to);
	return NULL;
}
