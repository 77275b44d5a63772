/* proc: run a command with a timeout, capturing stdout (see proc.h). */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"
#include "err.h"
#include "proc.h"

/* child runs in the forked process: stdout to out_w, stdin from
 * /dev/null, then exec. On failure it writes errno to err_w (close-on-exec,
 * so the parent reads EOF there when exec succeeds). Never returns. */
static void
child(char *const argv[], int out_w, int err_w)
{
	int fd, e;

	setpgid(0, 0);
	fd = open("/dev/null", O_RDONLY);
	if (fd < 0 || dup2(fd, 0) < 0 || dup2(out_w, 1) < 0)
		goto fail;
	execvp(argv[0], argv);
fail:
	e = errno;
	if (write(err_w, &e, sizeof e) < 0)
		_exit(127);
	_exit(127);
}

/* reap waits for pid until deadline (ms on the monotonic clock); past it
 * the group is killed first. Returns the wait status; *late is set when
 * it had to kill. */
static int
reap(pid_t pid, long deadline, int *late)
{
	struct timespec nap = {0, 5 * 1000 * 1000};
	int st = 0;
	pid_t got;

	*late = 0;
	while ((got = waitpid(pid, &st, WNOHANG)) == 0) {
		if (clock_mono_ms() >= deadline) {
			*late = 1;
			kill(-pid, SIGKILL);
			kill(pid, SIGKILL);
			while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
				;
			return st;
		}
		nanosleep(&nap, NULL);
	}
	return got < 0 ? 0 : st;
}

/* slurp reads fd into out until EOF, the deadline or max bytes. Returns
 * PROC_EXITED at EOF, PROC_TIMEOUT, PROC_TOOBIG or PROC_SYSERR (errno in
 * out->code). */
static enum proc_how
slurp(int fd, long deadline, size_t max, struct proc_out *out)
{
	size_t cap = 8192;
	struct pollfd pfd = {fd, POLLIN, 0};
	ssize_t n;
	long left;

	out->buf = emalloc(cap + 1);
	for (;;) {
		left = deadline - clock_mono_ms();
		if (left <= 0)
			return PROC_TIMEOUT;
		if (poll(&pfd, 1, (int)(left > 60000 ? 60000 : left)) < 0) {
			if (errno == EINTR)
				continue;
			out->code = errno;
			return PROC_SYSERR;
		}
		if (!pfd.revents)
			continue;
		if (out->len == cap) {
			cap *= 2;
			out->buf = erealloc(out->buf, cap + 1);
		}
		n = read(fd, out->buf + out->len, cap - out->len);
		if (n == 0)
			return PROC_EXITED;
		if (n < 0 && errno != EINTR && errno != EAGAIN) {
			out->code = errno;
			return PROC_SYSERR;
		}
		out->len += n > 0 ? (size_t)n : 0;
		if (out->len > max)
			return PROC_TOOBIG;
	}
}

/* exec_error reads the errno the child sent on err_r, or 0 when exec
 * succeeded (EOF). */
static int
exec_error(int err_r)
{
	int e = 0;
	ssize_t n;

	while ((n = read(err_r, &e, sizeof e)) < 0 && errno == EINTR)
		;
	return n == (ssize_t)sizeof e ? e : 0;
}

/* finish turns the reading result and the wait status into out->how. */
static void
finish(struct proc_out *out, enum proc_how how, int st, int late)
{
	out->buf[out->len] = '\0';
	if (how != PROC_EXITED || late) {
		out->how = how == PROC_EXITED ? PROC_TIMEOUT : how;
		return;
	}
	if (WIFSIGNALED(st)) {
		out->how = PROC_KILLED;
		out->code = WTERMSIG(st);
	} else {
		out->how = PROC_EXITED;
		out->code = WEXITSTATUS(st);
	}
}

enum proc_how
proc_run(char *const argv[], long timeout_ms, size_t max_out,
	struct proc_out *out)
{
	long deadline = clock_mono_ms() + timeout_ms;
	int po[2], pe[2], st, late, e;
	enum proc_how how;
	pid_t pid;

	memset(out, 0, sizeof *out);
	po[0] = po[1] = pe[0] = pe[1] = -1;
	if (pipe2(po, O_CLOEXEC) < 0 || pipe2(pe, O_CLOEXEC) < 0 ||
		(pid = fork()) < 0) {
		out->code = errno;
		for (e = 0; e < 2; e++) {
			if (po[e] >= 0)
				close(po[e]);
			if (pe[e] >= 0)
				close(pe[e]);
		}
		out->buf = estrdup("");
		return out->how = PROC_SYSERR;
	}
	if (pid == 0)
		child(argv, po[1], pe[1]);
	close(po[1]);
	close(pe[1]);
	e = exec_error(pe[0]);
	close(pe[0]);
	how = e ? PROC_NOEXEC : slurp(po[0], deadline, max_out, out);
	if (e) {
		out->buf = estrdup("");
		out->code = e;
	}
	close(po[0]);
	if (how != PROC_EXITED)
		deadline = clock_mono_ms(); /* already failed: kill at once */
	st = reap(pid, deadline, &late);
	if (e) {
		out->how = PROC_NOEXEC;
		return out->how;
	}
	finish(out, how, st, late);
	return out->how;
}

void
proc_free(struct proc_out *out)
{
	free(out->buf);
	out->buf = NULL;
	out->len = 0;
}
