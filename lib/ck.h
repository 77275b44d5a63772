/* ck: what the node cache's three kinds of item (images, git
 * repositories, models) share: the reasons an item fails, the result of
 * one sync, progress callbacks, and the file-system steps that keep a
 * ready item's path whole (atomic writes, symlink swaps, tree removal,
 * disk usage and free space).
 *
 * Nothing here keeps state between calls; every function is safe to call
 * from several threads at once on different paths. */
#ifndef HAZ_CK_H
#define HAZ_CK_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

/* Why an item is not ready, as NodeCacheStatus shows it (ck_reason_name
 * gives the CamelCase word). CK_CANCELLED is the progress callback's
 * doing: the caller knows why it stopped the transfer and says so. */
enum ck_reason {
	CK_OK = 0,
	CK_INVALID,      /* InvalidItem: a plan item the tool cannot use */
	CK_UNREACHABLE,  /* Unreachable: connect, DNS or TLS handshake failed */
	CK_UNAUTHORIZED, /* Unauthorized: 401/403, or the runtime said so */
	CK_NOT_FOUND,    /* NotFound: tag, branch, commit, repo or file */
	CK_CHECKSUM,     /* ChecksumMismatch: content is not what was named */
	CK_TRUNCATED,    /* Truncated: the server ended a transfer early */
	CK_BUDGET,       /* DiskBudgetExceeded: over the cache's budget */
	CK_DISK_FULL,    /* InsufficientDiskSpace: under the free floor */
	CK_TIMEOUT,      /* Timeout: no progress for the watchdog's time */
	CK_RUNTIME,      /* RuntimeError: the container runtime failed */
	CK_IO,           /* IOError: a local file operation failed */
	CK_CANCELLED,    /* Cancelled: the progress callback said stop */
	CK_SERVER,       /* ServerError: 5xx, a bad answer from the server */
	CK_UNTRUSTED,    /* Untrusted: the server's certificate refused */
	CK_NREASONS
};

const char *ck_reason_name(enum ck_reason r);

/* ck_transient: worth another attempt in the same run (unreachable,
 * timeout, truncated, server error); an untrusted certificate is not:
 * the same server presents it again. */
int ck_transient(enum ck_reason r);

/* The outcome of one sync of one item. The functions that sync an item
 * fill it; ck_fail sets reason and message together. */
struct ck_result {
	enum ck_reason reason;
	char message[512];  /* a sentence a user can act on; "" when ok */
	char resolved[160]; /* image digest, git commit, model commit */
	uint64_t bytes;     /* bytes the item holds now (on disk) */
	uint64_t fetched;   /* bytes transferred by this sync */
	int lfs_pointers;   /* git: files that are Git LFS pointers */
	int pinned;         /* images: 1 pinned, 0 not, -1 runtime can't */
};

/* ck_fail sets r's reason and formats its message (printf); it returns
 * -1, so that `return ck_fail(res, ...)` ends a failing sync. */
int ck_fail(struct ck_result *r, enum ck_reason reason, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* ck_vfail is ck_fail with a va_list, for callers that wrap it. */
int ck_vfail(struct ck_result *r, enum ck_reason reason, const char *fmt,
	va_list ap) __attribute__((format(printf, 3, 0)));

/* Progress: done and total bytes so far (total 0 when not known yet).
 * Returning nonzero stops the transfer, which then fails CK_CANCELLED
 * and leaves nothing half-written behind. Called from the thread doing
 * the transfer, at most a few times a second. */
typedef int ck_progress_fn(void *arg, uint64_t done, uint64_t total);

/* ck_name_ok: s is usable as one path component of the cache: 1 to 253
 * bytes of [A-Za-z0-9._-], not starting with '.' or '-'. */
int ck_name_ok(const char *s);

/* The models' directory in the cache, in the hub's own layout. */
#define CK_HUB_DIR "hub_cache"

/* ck_name_reserved says why name, one that ck_name_ok takes, cannot name
 * an item's entry at the top of the cache, or returns NULL when it can.
 * The cache keeps there CK_HUB_DIR and, starting with '.' (which
 * ck_name_ok refuses), its state and git slots; and beside an entry
 * NAME the temporary NAME.tmp-PID and NAME.tmp-PID-TID while it is
 * written or its link swapped (ck_write_atomic, ck_swap_symlink). */
const char *ck_name_reserved(const char *name);

/* ck_mkdirs makes path and its missing parents (mode for the new ones);
 * 0 or -1 with errno. */
int ck_mkdirs(const char *path, unsigned mode);

/* ck_write_atomic writes len bytes to path through a temporary file in
 * the same directory: write, fsync, rename(2), fsync of the directory;
 * readers see the old file or the new one, never a part. 0 or -1 with
 * errno (the temporary file removed). */
int ck_write_atomic(const char *path, const void *data, size_t len);

/* ck_swap_symlink points the symlink at path to target (created beside
 * it under a temporary name, then renamed over path): 0 or -1 with
 * errno. path may not exist yet; if it exists it must be a symlink. */
int ck_swap_symlink(const char *path, const char *target);

/* ck_rmtree removes path and, if it is a directory, everything in it,
 * never following a symlink (a symlink is removed, not its target). A
 * path that does not exist is no error. 0 or -1 with errno. */
int ck_rmtree(const char *path);

/* ck_du: the bytes path occupies on disk (st_blocks, symlinks not
 * followed, each inode once per call); 0 when it does not exist. */
uint64_t ck_du(const char *path);

/* ck_fs_space: free bytes for an unprivileged writer and total bytes of
 * the file system holding path: 0 or -1 with errno. */
int ck_fs_space(const char *path, uint64_t *avail, uint64_t *total);

/* ck_bytes formats n as "1.5 GiB" / "512 B" into buf (at least 16
 * bytes) and returns buf. */
char *ck_bytes(uint64_t n, char *buf);

#endif
