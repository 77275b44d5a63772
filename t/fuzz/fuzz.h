/* fuzz.h: what the libFuzzer targets of t/fuzz share. Header-only, so
 * each target stays one file to build. */
#ifndef HAZ_FUZZ_H
#define HAZ_FUZZ_H

#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include "err.h"

/* fuzz_memfd returns a descriptor of an anonymous file holding data,
 * positioned at its start. */
static inline int
fuzz_memfd(const uint8_t *data, size_t size)
{
	int fd = memfd_create("fuzz", 0);

	if (fd < 0 || (size && write(fd, data, size) != (ssize_t)size))
		abort();
	lseek(fd, 0, SEEK_SET);
	return fd;
}

/* fuzz_check aborts, which libFuzzer reports with the input, unless ok;
 * what says which invariant broke, file which target. */
static inline void
fuzz_check(int ok, const char *what, const char *file)
{
	if (!ok) {
		fprintf(stderr, "%s: %s\n", file, what);
		abort();
	}
}
#define check(ok, what) fuzz_check((ok), (what), __FILE__)

/* fuzz_quiet sends stderr to /dev/null when $FUZZ_QUIET is set, for a
 * run by hand; t/0890-fuzz.t closes the targets' stderr with libFuzzer's
 * -close_fd_mask=2 instead, which keeps libFuzzer's own reports. */
static inline void
fuzz_quiet(void)
{
	int fd;

	if (!getenv("FUZZ_QUIET") || (fd = open("/dev/null", O_WRONLY)) < 0)
		return;
	dup2(fd, 2);
	close(fd);
}

#endif
