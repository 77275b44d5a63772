/* ck: reasons, results and the file-system steps of the node cache (see
 * ck.h). */
#include "ck.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

static const char *const reason_names[CK_NREASONS] = {
	[CK_OK] = "",
	[CK_INVALID] = "InvalidItem",
	[CK_UNREACHABLE] = "Unreachable",
	[CK_UNAUTHORIZED] = "Unauthorized",
	[CK_NOT_FOUND] = "NotFound",
	[CK_CHECKSUM] = "ChecksumMismatch",
	[CK_TRUNCATED] = "Truncated",
	[CK_BUDGET] = "DiskBudgetExceeded",
	[CK_DISK_FULL] = "InsufficientDiskSpace",
	[CK_TIMEOUT] = "Timeout",
	[CK_RUNTIME] = "RuntimeError",
	[CK_IO] = "IOError",
	[CK_CANCELLED] = "Cancelled",
	[CK_SERVER] = "ServerError",
	[CK_UNTRUSTED] = "Untrusted",
};

const char *
ck_reason_name(enum ck_reason r)
{
	return r >= 0 && r < CK_NREASONS ? reason_names[r] : "Unknown";
}

int
ck_transient(enum ck_reason r)
{
	return r == CK_UNREACHABLE || r == CK_TIMEOUT || r == CK_TRUNCATED ||
		r == CK_SERVER;
}

int
ck_vfail(struct ck_result *r, enum ck_reason reason, const char *fmt,
	va_list ap)
{
	r->reason = reason;
	vsnprintf(r->message, sizeof r->message, fmt, ap);
	return -1;
}

int
ck_fail(struct ck_result *r, enum ck_reason reason, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	ck_vfail(r, reason, fmt, ap);
	va_end(ap);
	return -1;
}

int
ck_name_ok(const char *s)
{
	size_t n = strlen(s);

	if (n == 0 || n > 253 || s[0] == '.' || s[0] == '-')
		return 0;
	for (; *s; s++)
		if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') ||
			    (*s >= '0' && *s <= '9') || *s == '.' ||
			    *s == '_' || *s == '-'))
			return 0;
	return 1;
}

/* pid_tid: s is digits, then maybe "-" and digits, to its end. */
static int
pid_tid(const char *s)
{
	size_t n = strspn(s, "0123456789");

	if (!n || !s[n])
		return n > 0;
	if (s[n] != '-')
		return 0;
	s += n + 1;
	n = strspn(s, "0123456789");
	return n && !s[n];
}

/* tmp_name: s is some NAME.tmp-PID or NAME.tmp-PID-TID. */
static int
tmp_name(const char *s)
{
	const char *t;

	for (t = strstr(s, ".tmp-"); t; t = strstr(t + 1, ".tmp-"))
		if (pid_tid(t + 5))
			return 1;
	return 0;
}

const char *
ck_name_reserved(const char *name)
{
	if (!strcmp(name, CK_HUB_DIR))
		return "the models' directory";
	if (tmp_name(name))
		return "a temporary name (NAME.tmp-N) of the cache's";
	return NULL;
}

int
ck_mkdirs(const char *path, unsigned mode)
{
	char buf[PATH_MAX];
	size_t n = strlen(path);

	if (n == 0 || n >= sizeof buf) {
		errno = ENAMETOOLONG;
		return -1;
	}
	memcpy(buf, path, n + 1);
	for (char *p = buf + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = 0;
		if (mkdir(buf, mode) < 0 && errno != EEXIST)
			return -1;
		*p = '/';
	}
	if (mkdir(buf, mode) < 0 && errno != EEXIST)
		return -1;
	return 0;
}

/* dir_of copies path's directory ("." when none) into buf. */
static void
dir_of(const char *path, char *buf, size_t n)
{
	const char *slash = strrchr(path, '/');

	if (!slash)
		snprintf(buf, n, ".");
	else if (slash == path)
		snprintf(buf, n, "/");
	else
		snprintf(buf, n, "%.*s", (int)(slash - path), path);
}

static int
fsync_dir(const char *path)
{
	char dir[PATH_MAX];
	int fd, rc;

	dir_of(path, dir, sizeof dir);
	if ((fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0)
		return -1;
	rc = fsync(fd);
	close(fd);
	return rc;
}

int
ck_write_atomic(const char *path, const void *data, size_t len)
{
	char tmp[PATH_MAX];
	const char *p = data;
	int fd, e;

	if (snprintf(tmp, sizeof tmp, "%s.tmp-%ld", path, (long)getpid()) >=
		(int)sizeof tmp) {
		errno = ENAMETOOLONG;
		return -1;
	}
	if ((fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644)) <
		0)
		return -1;
	while (len > 0) {
		ssize_t w = write(fd, p, len);
		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0)
			goto fail;
		p += w;
		len -= (size_t)w;
	}
	if (fsync(fd) < 0 || close(fd) < 0) {
		fd = -1;
		goto fail;
	}
	fd = -1;
	if (rename(tmp, path) < 0)
		goto fail;
	fsync_dir(path);
	return 0;
fail:
	e = errno;
	if (fd >= 0)
		close(fd);
	unlink(tmp);
	errno = e;
	return -1;
}

int
ck_swap_symlink(const char *path, const char *target)
{
	char tmp[PATH_MAX];
	struct stat st;

	if (lstat(path, &st) == 0 && !S_ISLNK(st.st_mode)) {
		errno = EEXIST;
		return -1;
	}
	/* the thread in the name too: two threads of one process may swap
	 * the same link (hf's snapshots) */
	if (snprintf(tmp, sizeof tmp, "%s.tmp-%ld-%ld", path, (long)getpid(),
		    (long)gettid()) >= (int)sizeof tmp) {
		errno = ENAMETOOLONG;
		return -1;
	}
	unlink(tmp);
	if (symlink(target, tmp) < 0)
		return -1;
	if (rename(tmp, path) < 0) {
		int e = errno;
		unlink(tmp);
		errno = e;
		return -1;
	}
	fsync_dir(path);
	return 0;
}

/* rm_at removes name in the directory dfd, recursing into directories
 * through file descriptors so that no symlink is ever followed. */
static int
rm_at(int dfd, const char *name)
{
	struct stat st;
	struct dirent *de;
	DIR *d;
	int fd, rc = 0;

	if (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return errno == ENOENT ? 0 : -1;
	if (!S_ISDIR(st.st_mode))
		return unlinkat(dfd, name, 0) < 0 && errno != ENOENT ? -1 : 0;
	fd = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return -1;
	if (!(d = fdopendir(fd))) {
		close(fd);
		return -1;
	}
	while ((de = readdir(d))) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		if (rm_at(dirfd(d), de->d_name) < 0)
			rc = -1;
	}
	closedir(d);
	if (rc == 0 && unlinkat(dfd, name, AT_REMOVEDIR) < 0 && errno != ENOENT)
		rc = -1;
	return rc;
}

int
ck_rmtree(const char *path)
{
	return rm_at(AT_FDCWD, path);
}

/* du_at adds the blocks of name in dfd and, for a directory, of what it
 * holds. Hard links are counted at each name: the cache makes none. */
static uint64_t
du_at(int dfd, const char *name)
{
	struct stat st;
	struct dirent *de;
	uint64_t n;
	DIR *d;
	int fd;

	if (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return 0;
	n = (uint64_t)st.st_blocks * 512;
	if (!S_ISDIR(st.st_mode))
		return n;
	fd = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return n;
	if (!(d = fdopendir(fd))) {
		close(fd);
		return n;
	}
	while ((de = readdir(d)))
		if (strcmp(de->d_name, ".") && strcmp(de->d_name, ".."))
			n += du_at(dirfd(d), de->d_name);
	closedir(d);
	return n;
}

uint64_t
ck_du(const char *path)
{
	return du_at(AT_FDCWD, path);
}

int
ck_fs_space(const char *path, uint64_t *avail, uint64_t *total)
{
	struct statvfs sv;

	if (statvfs(path, &sv) < 0)
		return -1;
	*avail = (uint64_t)sv.f_bavail * sv.f_frsize;
	*total = (uint64_t)sv.f_blocks * sv.f_frsize;
	return 0;
}

char *
ck_bytes(uint64_t n, char *buf)
{
	static const char *const unit[] = {"B", "KiB", "MiB", "GiB", "TiB",
		"PiB"};
	double v = (double)n;
	int u = 0;

	while (v >= 1024 && u < 5) {
		v /= 1024;
		u++;
	}
	if (u == 0)
		snprintf(buf, 16, "%llu B", (unsigned long long)n);
	else
		snprintf(buf, 16, "%.1f %s", v, unit[u]);
	return buf;
}
