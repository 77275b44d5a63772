/* nvdrv (nvd_): the files of NVIDIA's driver a container needs, found on a node
 * as NVIDIA's container toolkit finds them, for the CDI specs of the
 * kubelet plugin (tools/dra-plugin/cdi.c).
 *
 * Under a driver root (a path the plugin sees; "/" on a plain node):
 *   libraries  lib<name>.so.<driver version> of the toolkit's compute and
 *              utility lists (libcuda, libnvidia-ml, ...), each the first
 *              found in its library directories (/usr/lib64,
 *              /usr/lib/x86_64-linux-gnu, /usr/lib/aarch64-linux-gnu,
 *              /lib64, /lib/x86_64-linux-gnu, /usr/lib, /lib,
 *              /usr/local/nvidia/lib64);
 *   binaries   nvidia-smi, nvidia-debugdump, nvidia-persistenced,
 *              nvidia-cuda-mps-control, nvidia-cuda-mps-server from its bin
 *              directories;
 *   the persistenced socket /run/nvidia-persistenced/socket and the MPS
 *   pipe directory /tmp/nvidia-mps, where present;
 *   firmware   /lib/firmware/nvidia/<version>/gsp*.bin.
 * Each is a read-only bind mount at its path below the root. With the
 * toolkit's hook binary nvidia-cdi-hook, createContainer hooks make the
 * libraries' symlinks (libcuda.so.1, libcuda.so...), run
 * enable-cuda-compat and update the container's ld cache.
 *
 * Nothing is ever named that is not there: a dangling symlink is skipped,
 * and said so in the scan's notes. */
#ifndef HAZ_NVDRV_H
#define HAZ_NVDRV_H

#include <stddef.h>

#include <jansson.h>

/* nvd_join returns root and path (absolute) joined, "/" taken as no root
 * (malloc'd). */
char *nvd_join(const char *root, const char *path);

/* nvd_version_ok says whether v looks like a driver version (digits and
 * dots, a digit first): only such a version is put into a path. */
int nvd_version_ok(const char *v);

/* nvd_version returns the driver version that <procroot>/driver/nvidia/
 * version names ("NVRM version: ... 580.159.04 ..."), malloc'd, or NULL
 * with why in n bytes. */
char *nvd_version(const char *procroot, char *why, size_t n);

/* nvd_cap_minor reads a MIG capability's access file (lines
 * "DeviceFileMinor: <N>" and "DeviceFileMode: <mode>") and sets *minor to
 * N. Returns 0, or -1 with why ("<path>: ..." or "<path>:<line>: ...") in
 * n bytes. */
int nvd_cap_minor(const char *path, long *minor, char *why, size_t n);

/* nvd_scan finds the files of driver version under root. hook is the
 * path of nvidia-cdi-hook as the plugin sees it, or NULL to look for it
 * in the root's bin directories. Returns
 *   {"version", "root", "libraries": N, "mounts": [CDI mounts],
 *    "hooks": [CDI hooks], "notes": ["..."]}
 * notes saying what was skipped and why, each also warned about. */
json_t *nvd_scan(const char *root, const char *version, const char *hook);

#endif
