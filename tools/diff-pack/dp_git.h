/* dp_git: diff-pack's pack mode. It finds the vLLM checkout around a
 * directory, its base (the merge-base of HEAD and upstream's or
 * origin's main, or an older first-parent ancestor that has an image),
 * walks the base tree against the work tree with the index (unpushed
 * commits, staged and unstaged edits, untracked files not ignored,
 * deletes, renames, modes, symlinks), refuses what diff-pack -u would
 * refuse of its paths (dp_path), reads each changed file's raw bytes
 * from the work tree, never through a symlink, and writes the pack of
 * diff-pack(1):
 *
 *	"K8SHAZGPU-PACK 1\n" MANIFEST "\n" DATA
 *
 * with MANIFEST one line of compact JSON listing the entries sorted by
 * path, each put's content at its offset in DATA. It warns of what the
 * pack cannot carry (submodules, skip-worktree or assume-unchanged
 * files changed behind git's back) and of changes that need a native
 * build. Output: the pack to a file (by rename), the ConfigMaps that
 * carry it to a pod, one NDJSON per line, and the `checkout` record
 * last.
 *
 * Threads: call from one thread; the pack starts worker threads of its own
 * (reading, hashing, walking) and joins them all before it returns. */
#ifndef HAZ_DP_GIT_H
#define HAZ_DP_GIT_H

#include <stddef.h>
#include <stdint.h>

/* The pack's first line and the size of its ConfigMap chunks. */
#define DP_MAGIC "K8SHAZGPU-PACK 1\n"
#define DP_CHUNK 921600

/* What diff-pack's options asked for; NULL or 0 for what was not. */
struct dp_opts {
	const char *dir;       /* -C: where to look for the checkout */
	const char *base_ref;  /* -b: the base ref or commit */
	int fetch;             /* --fetch main of upstream (else origin) */
	const char *image;     /* -i: the exact image, not probed by walk */
	const char *repo;      /* the image repository (-r, env, default) */
	int check;             /* --check the registry */
	int walk;              /* -w: commits tried with --check (>= 1) */
	const char *out;       /* -o: the pack file */
	uint64_t cap;          /* -x: the most bytes a pack may have */
	const char *cm_prefix; /* -k: ConfigMaps PREFIX-0... */
	const char *cm_ns;     /* -n: their namespace */
	char **labels;         /* -l K=V..., nlabels of them */
	size_t nlabels;
	const char *since; /* --since: a pod's state file (dp_state) */
};

/* dp_pack does all of pack mode, printing on stdout; returns diff-pack's
 * exit status (0, HAZ_FAIL, DP_NOTREE, DP_OVERCAP, DP_ESCAPE when
 * diff-pack -u would refuse the pack's paths, DP_NOIMAGE, HAZ_TEMP),
 * having said why on stderr. It reads no file of the work tree through
 * a symbolic link. It initialises and shuts down libgit2 and libcurl
 * itself. */
int dp_pack(const struct dp_opts *o);

/* dp_parse_cap reads a cap: decimal bytes with an optional K, M or G
 * (1024-based) suffix, from 1 to DP_PACK_MAX: 0, or -1 when s is none
 * of that. */
int dp_parse_cap(const char *s, uint64_t *out);

#endif
