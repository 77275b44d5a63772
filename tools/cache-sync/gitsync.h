/* gitsync: the node cache's git repositories, checked out with libgit2
 * (1.7 or later: shallow clones and socket timeouts).
 *
 * Layout under the cache directory ROOT, for an item's path name P:
 *	ROOT/P                       a symlink, ".git-slots/P/a" or "/b"
 *	ROOT/.git-slots/P/a, b       two checkouts (slots), each a whole
 *	                             repository with its work tree
 *	ROOT/.git-slots/P/tmp-<pid>  a clone in progress, renamed into a
 *	                             slot when complete
 * A pod mounting ROOT/P (hostPath) gets the slot the link named when it
 * started and keeps it; an update writes the slot NOT linked and then
 * swaps the link with rename(2), so readers see the old checkout or the
 * new one, whole. The slot a pod mounted stays as it was until the NEXT
 * update, which rewrites it: pods are expected to start within one
 * update interval of a sync, or to copy what they need.
 *
 * One sync of an item:
 *   - branch tracking (commit "" or NULL): a first sync clones the branch
 *     alone (depth 1 where the transport allows it, see below) into
 *     tmp-<pid>, renames it to slot a and links it. Later syncs ask the
 *     remote for the branch's commit (ls-remote): equal to the linked
 *     checkout's, nothing is written. Else the unlinked slot, when it
 *     holds a repository of the same URL, fetches the branch (prune) and
 *     is reset hard to it, untracked files removed (the seed's
 *     syncStrategy hardReset); otherwise (or when it holds over 50
 *     packs: libgit2 never repacks) it is cloned afresh. Then the link
 *     is swapped.
 *   - pinned (commit: 7 to 40 hex digits): a linked checkout at that
 *     commit is kept as it is, with no network traffic; an unlinked slot
 *     of the same URL holding the commit is checked out; else a full
 *     clone, checked out at the commit with HEAD detached.
 *   - force: the unlinked slot is cloned afresh, whatever it holds.
 * A failure at any step leaves the link and the linked slot as they
 * were, and no tmp-* directory behind.
 *
 * Depth: libgit2 before 1.9 cannot fetch shallow over the stateful
 * transports (git://, ssh: upload-pack rejects the second want list) nor
 * from file:// (the local transport), so those clone the full history;
 * http(s) clones and fetches at depth 1 (libgit2 1.9 and later: git://
 * and ssh too).
 *
 * Results (struct ck_result, zeroed first): resolved = the 40-hex commit
 * checked out in the linked slot; bytes = the disk use of that slot;
 * fetched = bytes received from the remote by this sync (set on failure
 * too; the ls-remote that finds nothing changed counts none). Git LFS:
 * libgit2 runs no LFS filter, so files the commit's .gitattributes
 * (any directory's) marks filter=lfs that hold an LFS pointer (at most
 * 1024 bytes, first line "version https://git-lfs.github.com/spec/v1")
 * are counted in lfs_pointers and named (up to 3) in message, "N files
 * are Git LFS pointers, not content (libgit2 does not run LFS): a.bin,
 * b.bin, c.bin, …"; the sync still succeeds (CK_OK).
 *
 * Reasons, with messages naming the URL (any user:password part left
 * out) and the branch or commit:
 *	path name not ck_name_ok, a URL scheme other than https, http,
 *	git, ssh or file, a branch name git refuses, a commit that is not
 *	7-40 hex digits or a prefix naming two commits   CK_INVALID
 *	connection refused, DNS, TLS, connect timeout   CK_UNREACHABLE
 *	HTTP 401/403, authentication required   CK_UNAUTHORIZED
 *	HTTP 404, "repository not found", git daemon's "access denied or
 *	repository not exported", missing branch or commit   CK_NOT_FOUND
 *	no data for timeout_s seconds           CK_TIMEOUT
 *	the server hung up mid-transfer         CK_TRUNCATED
 *	HTTP 5xx, other protocol errors         CK_SERVER
 *	local files: ROOT/P that is not our symlink ("... exists and is not
 *	a cache checkout"), disk full, permissions   CK_IO
 *	the progress callback returned nonzero  CK_CANCELLED
 *
 * No-progress watchdog: libgit2's socket timeouts (connect, and every
 * read and write) are set to timeout_s; and since a server can keep a
 * connection alive with progress messages while sending no pack data,
 * the transfer is also stopped when no pack bytes arrived for timeout_s.
 * Both end in CK_TIMEOUT "no data from URL for N s".
 *
 * Threads: syncs of different path names may run at once. libgit2's
 * socket timeouts are process-wide: the latest sync's timeout_s applies
 * to all that run then (cache-sync uses one value). */
#ifndef HAZ_GITSYNC_H
#define HAZ_GITSYNC_H

#include "ck.h"

/* gitsync_init initialises libgit2 for the process (before any other
 * call here, and before threads start) and ignores SIGPIPE, which
 * libgit2 would otherwise die of when a server hangs up while it writes:
 * writers of pipes then see EPIPE instead. Owner validation (git's
 * safe.directory rule) stays on: the cache's checkouts are this
 * process's own. gitsync_shutdown undoes gitsync_init at exit. */
void gitsync_init(void);
void gitsync_shutdown(void);

/* One repository of the plan. url: https://, http://, git://, ssh:// or
 * file://. branch: NULL or "" means "main". Credentials: none yet
 * (public repositories); a token would be answered in gitsync.c's
 * credentials callback, the one place that asks for one. */
struct gitsync_item {
	const char *url, *branch;
	const char *commit;    /* "" or NULL: track branch; else a pin */
	const char *root;      /* the cache directory, which must exist */
	const char *path_name; /* ROOT/path_name is the checkout */
	int timeout_s;         /* no data this long: CK_TIMEOUT; <= 0 none */
	int force;             /* clone afresh instead of fetching */
};

/* gitsync_sync brings the item's checkout to the branch's tip or the
 * pinned commit: 0, or -1 with res->reason and res->message set. fn (may
 * be NULL) gets the bytes received so far by this sync, with total 0
 * while the pack is still arriving (git announces objects, not bytes:
 * no estimate is made) and total = done once all of it has; at most 4
 * calls a second and one at the end of each transfer, from the calling
 * thread. A nonzero return stops the transfer: CK_CANCELLED. */
int gitsync_sync(const struct gitsync_item *it, ck_progress_fn *fn, void *arg,
	struct ck_result *res);

/* gitsync_current writes the 40-hex commit of the checkout ROOT/
 * path_name links to into commit: 0, or -1 when there is none (no link,
 * not our link, no repository behind it). */
int gitsync_current(const char *root, const char *path_name, char commit[41]);

/* gitsync_remove removes the link ROOT/path_name and both slots: 0 (also
 * when there was nothing), or -1 with res set: CK_INVALID for a bad path
 * name, CK_IO when ROOT/path_name is not our symlink (left alone) or a
 * removal failed. Pods still mounting a slot keep its inode until they
 * end. */
int gitsync_remove(const char *root, const char *path_name,
	struct ck_result *res);

#endif
