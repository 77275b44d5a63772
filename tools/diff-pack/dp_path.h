/* dp_path: the paths of a diff-pack pack (diff-pack(1)), the one
 * judge of them for the packer (dp_git), the unpacker (dp_apply) and
 * their fuzz target, so that a pack the pod would refuse is refused
 * where it is made: which entry paths and link targets a pack may hold,
 * which entry would have to lie under a file, and where each symbolic
 * link leads in the tree the pack leaves behind, followed through every
 * other link there. And one way to open a path of a tree without
 * following a symbolic link anywhere on it. Needs libc alone.
 *
 * Threads: no state of its own: any thread. */
#ifndef HAZ_DP_PATH_H
#define HAZ_DP_PATH_H

#include <stddef.h>

/* Entries under this prefix go to the package directory, the prefix
 * taken off; the others to the tree. */
#define DP_PATH_PKG "vllm/"
#define DP_PATH_PKG_LEN 5
/* The names diff-pack keeps for itself in a tree. */
#define DP_PATH_MARKER ".k8shazgpu-pack"
#define DP_PATH_TMP ".k8shazgpu-tmp"
/* The longest link target symlink(2) takes. */
#define DP_PATH_TARGET_MAX 4095
/* Links followed in one resolution before it is a loop, as Linux's
 * MAXSYMLINKS: a path needing more resolves nowhere. */
#define DP_PATH_MAXLINKS 40
/* The most components one resolution walks, and the longest directory
 * it may reach: beyond either a target is refused as too deep. */
#define DP_PATH_MAXSTEPS 4096
#define DP_PATH_MAXDIR 4096

enum dp_path_op { DP_PATH_PUT, DP_PATH_LINK, DP_PATH_DEL };

/* One entry of a pack, as its manifest lists it. */
struct dp_path_ent {
	const char *path;   /* the pack's path, vllm/ included */
	int op;             /* enum dp_path_op */
	const char *target; /* a link's target, NUL-terminated */
	size_t target_len;  /* its bytes (a NUL inside is refused) */
};

/* dp_path_bad says why path (len bytes) may not be an entry's path, or
 * NULL: empty, a NUL byte, absolute, an empty, '.' or '..' component,
 * or a name diff-pack keeps for itself. */
const char *dp_path_bad(const char *path, size_t len);

/* dp_path_target_bad says why target (len bytes) may not be a link's
 * target before it is resolved, or NULL: empty, a NUL byte, absolute,
 * or over DP_PATH_TARGET_MAX bytes. */
const char *dp_path_target_bad(const char *target, size_t len);

/* dp_path_blocker: the entry of e (n of them, sorted bytewise by path,
 * each path once and good) that entry i lies under and that is no del,
 * so would have to be a directory and is not; or NULL. */
const struct dp_path_ent *dp_path_blocker(const struct dp_path_ent *e, size_t n,
	size_t i);

/* What a root holds at a path. */
enum dp_path_kind {
	DP_PATH_ABSENT,
	DP_PATH_FILE,
	DP_PATH_DIR,
	DP_PATH_SYMLINK
};

/* What the image (the tree before the pack) holds where the pack
 * decides nothing: at(arg, rel, &target) answers for rel, relative to
 * the root, whose directories are all directories once the pack is
 * applied: a walk from the root that meets anything but a directory on
 * the way finds DP_PATH_ABSENT. A DP_PATH_SYMLINK sets *target to its
 * target, malloc'd. -1: an error, said. at NULL: the image is empty. */
struct dp_path_image {
	int (*at)(void *arg, const char *rel, char **target);
	void *arg;
};

/* How a link's target resolved. */
enum dp_path_verdict {
	DP_PATH_INSIDE,   /* inside its root, or nowhere (missing) */
	DP_PATH_LOOP,     /* more than DP_PATH_MAXLINKS links: nowhere */
	DP_PATH_BAD,      /* dp_path_target_bad refuses the target */
	DP_PATH_CLIMBS,   /* a '..' above the root, on the way or at the end */
	DP_PATH_ABSOLUTE, /* a link on the way has an absolute target */
	DP_PATH_DEEP,     /* over DP_PATH_MAXSTEPS or DP_PATH_MAXDIR */
};

/* dp_path_check_links resolves the target of every link of e (n
 * entries, sorted bytewise by path, each once, every path passing
 * dp_path_bad) in the tree the pack leaves: its root's entries over
 * image[0] (the tree) or image[1] (the package directory). Each
 * component is looked up there: a link is followed (relative to its
 * directory), '..' goes up, and past anything that is not a directory
 * the rest is read lexically, as what a later mkdir could make of it.
 * Every link whose verdict is neither DP_PATH_INSIDE nor DP_PATH_LOOP
 * is handed to refuse(arg, i, verdict, why), why naming its root and
 * the last link followed. Returns how many were, or -1 when an image
 * lookup failed. */
int dp_path_check_links(const struct dp_path_ent *e, size_t n,
	const struct dp_path_image image[2],
	void (*refuse)(void *arg, size_t i, int verdict, const char *why),
	void *arg);

/* dp_path_open_dir opens the directory dir[0..len) ("" the root itself)
 * under rootfd, one component at a time with O_NOFOLLOW | O_DIRECTORY,
 * so no symbolic link anywhere on it is followed: one on the way fails
 * with ELOOP, a non-directory with ENOTDIR, a missing one with ENOENT;
 * an empty, '.' or '..' component with EINVAL. Returns the descriptor
 * (O_RDONLY, close-on-exec) or -1 with errno. */
int dp_path_open_dir(int rootfd, const char *dir, size_t len);

/* dp_path_open_parent is dp_path_open_dir of the directory holding
 * path's last component, which *name is set to point at. */
int dp_path_open_parent(int rootfd, const char *path, const char **name);

#endif
