/* proc: run a command with a time limit and capture its standard output.
 *
 * The command runs in a process group of its own with stdin from
 * /dev/null and stderr shared with the caller, so its complaints reach the
 * user. When the time limit passes, or its output grows past the size
 * limit, the whole group is killed with SIGKILL and reaped. */
#ifndef HAZ_PROC_H
#define HAZ_PROC_H

#include <stddef.h>

enum proc_how {
	PROC_EXITED,  /* ran and exited; code is its exit status */
	PROC_KILLED,  /* ended by a signal it was sent; code is the signal */
	PROC_TIMEOUT, /* still running at the time limit; killed */
	PROC_TOOBIG,  /* wrote more than the size limit; killed */
	PROC_NOEXEC,  /* could not be started; code is errno (ENOENT...) */
	PROC_SYSERR,  /* pipe, fork, poll or read failed; code is errno */
};

struct proc_out {
	char *buf;         /* stdout, NUL-terminated; caller frees */
	size_t len;        /* bytes in buf, not counting the NUL */
	enum proc_how how; /* how the run ended */
	int code;          /* exit status, signal or errno, per how */
};

/* proc_run runs argv (argv[0] looked up on PATH unless it has a '/') for
 * at most timeout_ms milliseconds, keeping at most max_out bytes of its
 * stdout. Fills *out (always with a buf, possibly empty, that the caller
 * frees with proc_free) and returns out->how. */
enum proc_how proc_run(char *const argv[], long timeout_ms, size_t max_out,
	struct proc_out *out);

/* proc_free releases out->buf. */
void proc_free(struct proc_out *out);

#endif
