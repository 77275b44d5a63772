/* dp_apply: a diff-pack pack (format in diff-pack(1)) read, verified and
 * applied onto a source tree inside a pod, trusting neither the pack nor
 * the image: every checksum and base blob is verified before anything is
 * written, no path leaves its tree, each file lands by rename, and a
 * marker holding the pack's hash makes a second run a no-op. Needs no
 * libgit2, so the unpack-only build links statically.
 *
 * Threads: call from one thread; it starts none. */
#ifndef HAZ_DP_APPLY_H
#define HAZ_DP_APPLY_H

/* Exit statuses of diff-pack beyond err.h's, in its man page. */
enum {
	DP_NOTREE = 3,  /* not a usable checkout / no target tree or package dir
			 */
	DP_OVERCAP = 4, /* the pack is over the cap */
	DP_CORRUPT = 5, /* the pack is corrupt or truncated */
	DP_BASE = 6,    /* a base blob does not match the file found */
	DP_ESCAPE = 7,  /* a path escapes its tree */
	DP_NOIMAGE = 8, /* no image for the base */
};

/* The most bytes a pack may have: the most -u reads, and the highest
 * cap pack mode takes. */
#define DP_PACK_MAX ((size_t)256 << 20)

struct dp_unpack_opts {
	const char *dir;    /* a directory of index.json + pack.NNN, or NULL */
	const char *file;   /* a whole pack file, or NULL (one of dir, file) */
	const char *sha256; /* the pack hash expected, or NULL: index.json's */
	const char *tree;   /* where paths not under vllm/ go */
	const char *pkgdir; /* where vllm/... goes, or NULL: searched for */
	int quiet;          /* no record on stdout */
	int check_only;     /* verify and judge the pack, open no tree,
			       write nothing (-c) */
	const char *state;  /* -S: the state file kept (dp_state), or NULL */
};

/* dp_unpack applies the pack (with check_only: judges it as far as
 * no image is needed, and prints a pack-check record); returns 0 or one of the
 * statuses above (HAZ_FAIL for I/O errors), having said why on stderr. */
int dp_unpack(const struct dp_unpack_opts *o);

/* dp_install copies the running executable to dest (mode 0755, by
 * rename); returns 0 or HAZ_FAIL having said why. */
int dp_install(const char *dest);

#endif
