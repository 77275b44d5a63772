/* owner: who runs a process (see owner.h). */
#include <errno.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>

#include "err.h"
#include "owner.h"

/* real_uid reads the real UID from the Uid line of /proc/<pid>/status.
 * Returns 0, or -1 with errno set. */
static int
real_uid(long pid, unsigned long *uid)
{
	char path[64], line[256];
	FILE *f;
	int found = 0;

	snprintf(path, sizeof path, "/proc/%ld/status", pid);
	if (!(f = fopen(path, "r")))
		return -1;
	while (!found && fgets(line, sizeof line, f))
		found = sscanf(line, "Uid: %lu", uid) == 1;
	fclose(f);
	if (!found)
		errno = EINVAL;
	return found ? 0 : -1;
}

int
owner_of(long pid, char *buf, size_t n)
{
	struct passwd pw, *got = NULL;
	unsigned long uid;
	char *scratch;
	size_t size = 16384;

	if (real_uid(pid, &uid) < 0)
		return -1;
	scratch = emalloc(size);
	if (getpwuid_r((uid_t)uid, &pw, scratch, size, &got) == 0 && got)
		snprintf(buf, n, "%s", got->pw_name);
	else
		snprintf(buf, n, "%lu", uid);
	free(scratch);
	return 0;
}
