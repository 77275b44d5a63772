/* owner: who runs a process, as ps(1) names it. */
#ifndef HAZ_OWNER_H
#define HAZ_OWNER_H

#include <stddef.h>

/* owner_of writes the user of process pid into buf (n bytes): the name
 * of the real UID of /proc/<pid>/status, or the UID in decimal when the
 * user database has no name for it. Returns 0, or -1 with errno set
 * when the process cannot be read (ENOENT: it is gone; EACCES: hidden;
 * EINVAL: its status has no Uid line). */
int owner_of(long pid, char *buf, size_t n);

#endif
