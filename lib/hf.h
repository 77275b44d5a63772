/* hf: the node cache's models, fetched over the Hugging Face hub's HTTP
 * protocol into huggingface_hub's own cache layout, so that a pod with
 * HF_HUB_CACHE=<the cache> and HF_HUB_OFFLINE=1 finds them:
 *
 *	HUB/models--ORG--NAME/blobs/ETAG          the files' contents
 *	HUB/models--ORG--NAME/snapshots/COMMIT/PATH
 *	        a relative symlink ../../blobs/ETAG (one more ../ per
 *	        directory in PATH)
 *	HUB/models--ORG--NAME/trees/COMMIT.json   the commit's file list
 *	        {"format_version":1,"files":{PATH:{"size","blob_id"
 *	        [,"lfs_sha256","lfs_size"]}}}: huggingface_hub refuses a
 *	        snapshot offline when a file it lists is missing
 *	HUB/models--ORG--NAME/refs/REVISION       the commit, no newline
 *
 * ETAG is the sha256 of the content for an LFS file, else the git blob
 * sha1 (of "blob SIZE\0" and the content); every blob is checked against
 * its name before it gets that name. A snapshot is written whole before
 * its trees file, and the ref last, each file through a temporary name
 * and rename(2): a client that reads the ref finds a complete snapshot.
 * A ref is written for every revision held, a commit named by its hash
 * too (huggingface_hub reads none for a hash, and writes none), so that
 * hf_remove can tell which snapshots are still wanted. A revision with
 * slashes ("refs/pr/1") is a ref file in subdirectories of refs/, as
 * huggingface_hub writes it.
 *
 * The protocol (huggingface_hub's file_download.py and hf_api.py):
 *	GET E/api/models/REPO/revision/REV          {"sha":COMMIT,...}
 *	GET E/api/models/REPO/tree/COMMIT?recursive=true
 *	        [{type, path, size, oid, lfs{oid, size}}...], more pages
 *	        named by a Link: <URL>; rel="next" header
 *	GET E/REPO/resolve/COMMIT/PATH              the file, or a redirect
 *	        to a CDN for LFS files, followed here with no Authorization
 *	        header unless it points back to E's own scheme, host and port
 * REV is percent-encoded whole; a partial blob (blobs/ETAG.incomplete)
 * is resumed with Range: bytes=N-, restarted when the server ignores the
 * range (200), kept when the server stops early (CK_TRUNCATED), deleted
 * when its content is wrong (CK_CHECKSUM).
 *
 * Reasons: 401/403 CK_UNAUTHORIZED (the message says "set HF_TOKEN" when
 * no token was given); 404 (or the hub's X-Error-Code RepoNotFound,
 * which it also sends as a 401 for a private repository)
 * CK_NOT_FOUND naming the repository, revision or file; 429 CK_SERVER
 * with the seconds until the limit resets when the hub says; other
 * 4xx/5xx and answers that are not what the protocol says CK_SERVER;
 * connect, DNS and TLS handshake failures CK_UNREACHABLE; a server
 * certificate that fails verification (or a CA file that cannot be
 * read) CK_UNTRUSTED, which is not transient; no byte for timeout_s
 * seconds CK_TIMEOUT; an unusable repository id or revision, or a file
 * path from the listing that could leave the snapshot ("..", a leading
 * "/", a backslash, a NUL, a control character), CK_INVALID before
 * anything is written, and so is a URL whose scheme curl cannot use.
 * Whether a transfer that failed is worth retrying is lib/http's
 * verdict. Messages never hold the token.
 *
 * Threads: each call has its own curl handle, and sets libcurl up
 * through http_global_init (once per process, cleaned up at exit). Two
 * calls may fetch the same repository at once (each blob
 * is downloaded under an flock of .locks/models--ORG--NAME/ETAG.lock, as
 * huggingface_hub locks it), but hf_remove must not run alongside a
 * fetch of the same repository. hf_fetch with workers > 1 starts that
 * many threads, each with its own curl handle, and joins them all
 * before it returns; its progress function is still called from the
 * calling thread only. */
#ifndef HAZ_HF_H
#define HAZ_HF_H

#include <stddef.h>
#include <stdint.h>

#include "ck.h"

/* One model to fetch. endpoint: HF_ENDPOINT or https://huggingface.co
 * (NULL means the latter; trailing '/' ignored); token: HF_TOKEN or NULL;
 * revision NULL means "main"; hub: the HF_HUB_CACHE directory;
 * timeout_s: seconds without progress before CK_TIMEOUT (<= 0: 300);
 * workers: downloads at once (see hf_fetch; <= 1: one); range_bytes:
 * with workers, the size of a large file's ranges (0: 32 MiB). */
struct hf_item {
	const char *endpoint;
	const char *token;
	const char *repo_id, *revision;
	const char *hub;
	int timeout_s;
	int workers;
	uint64_t range_bytes;
};

/* One file of a commit, as the tree listing names it. */
struct hf_file {
	char *path;       /* relative, checked safe; malloc'd */
	uint64_t size;    /* bytes of the content */
	char blob_id[41]; /* git blob sha1 (of the LFS pointer for LFS) */
	char etag[65];    /* the blob's name: lfs sha256, else blob_id */
	int lfs;          /* 1: stored in LFS, etag is the sha256 */
};

/* A resolved revision: the commit and its files, sorted by path. total:
 * bytes of the commit's blobs, each blob once (what the model holds when
 * fetched); missing: bytes of those not yet in blobs/. */
struct hf_plan {
	char commit[41];
	size_t nfiles;
	struct hf_file *files;
	uint64_t total, missing;
};

/* hf_resolve asks the hub for the item's commit and file list: 0, or -1
 * with res filled. Writes nothing. plan is filled on success only; free
 * it with hf_plan_free either way. */
int hf_resolve(const struct hf_item *it, struct hf_plan *plan,
	struct ck_result *res);

/* hf_fetch downloads the plan's missing blobs and writes the snapshot,
 * the trees file and refs/REVISION, in that order. progress (may be
 * NULL) gets done = bytes of the plan's blobs on disk, counting the
 * blob being downloaded, and total = plan->total: once at the start,
 * after each blob, and at most every 250 ms between; nonzero from it
 * stops at once with CK_CANCELLED, the partial blob deleted. On success
 * res->resolved is the commit, res->bytes plan->total and res->fetched
 * the bytes received now. 0, or -1 with res filled: the ref then still
 * names what it named before.
 *
 * With it->workers <= 1 the blobs come one after another, each in one
 * stream, and a partial blob stays for the next call to resume as the
 * header says. With more, a pool of that many threads, each with its
 * own connection, fetches the blobs at once, and a file over twice
 * range_bytes in ranges of range_bytes (Range: bytes=A-B), written with
 * pwrite into one partial file preallocated to the listed size: its
 * first range asks whether the server honours ranges (a 206 whose
 * Content-Range is the one asked, with the listed size), and the others
 * go out only then, to the URL the first one was answered from (the
 * redirect followed once); a 200 makes the first range the whole file
 * in one stream. The SHA-256 (or git sha1) runs as the file arrives:
 * whichever worker extends the part written without a gap from byte 0
 * feeds that part to the file's one hash, in order, read back from the
 * page cache. A range cut short is asked again from where it stopped,
 * twice at most. Each file is fsynced once, when whole and checked,
 * then renamed. Before anything is fetched the missing bytes are
 * checked against the file system's free space (CK_DISK_FULL); never
 * more than a file's listed size is written for it. On any failure or
 * stop the other transfers stop and every partial file of the call is
 * deleted (none is left to resume). A worker holds a curl handle, its
 * 512 KiB receive buffer and a 256 KiB read buffer; progress is called
 * from the calling thread only, as with one worker. */
int hf_fetch(const struct hf_item *it, const struct hf_plan *plan,
	ck_progress_fn *progress, void *arg, struct ck_result *res);

/* hf_present says, offline, whether refs/REVISION names a commit whose
 * snapshot holds every file its trees file lists, with the listed sizes:
 * 0 with the commit copied to commit, else -1. */
int hf_present(const char *hub, const char *repo_id, const char *revision,
	char commit[41]);

/* hf_remove drops refs/REVISION, then every snapshot (and its trees
 * file) that no ref left names: the revision's own, unless another ref
 * names its commit, and those an earlier move of a branch left behind;
 * then the blobs that no snapshot left links to; then the whole
 * models--ORG--NAME directory when no ref and no snapshot remain. A
 * revision that is not held is no error. 0, or -1 with res filled. */
int hf_remove(const char *hub, const char *repo_id, const char *revision,
	struct ck_result *res);

/* hf_prune is hf_remove without dropping a ref: the snapshots no ref
 * names (left by a branch that moved on) and the blobs only they used.
 * A pod that resolved the old commit before the move still reads it, so
 * the caller prunes when no pod uses the model, or never. */
int hf_prune(const char *hub, const char *repo_id, struct ck_result *res);

void hf_plan_free(struct hf_plan *plan);

/* hf_repo_dir writes "models--ORG--NAME" ("models--NAME" for a repo id
 * without an org) to buf and returns buf, or returns NULL when repo_id
 * is not a hub repo id (ORG/NAME or NAME; each part 1 to 96 characters
 * of [A-Za-z0-9._-], starting and ending with a letter, digit or '_',
 * without "--" or "..") or buf is too small. */
const char *hf_repo_dir(const char *repo_id, char *buf, size_t n);

/* hf_revision_ok: revision can name a ref file: 1 to 255 bytes, no
 * leading '/', no empty, "." or ".." component, no backslash or control
 * character. */
int hf_revision_ok(const char *revision);

#endif
