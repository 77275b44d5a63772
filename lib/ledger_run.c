/* ledger_run: a command run on reserved GPUs, supervised as canhazgpu's
 * supervisor does: heartbeats while it runs, the release when it ends. */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"
#include "err.h"
#include "ledger.h"

static volatile sig_atomic_t child_pid;

static void
forward_signal(int sig)
{
	if (child_pid > 0)
		kill(child_pid, sig);
}

static void
note_child(int sig)
{
	(void)sig;
}

/* spawn starts argv with CUDA_VISIBLE_DEVICES=cvd, its signals as they
 * were before (mask: the mask to restore). A command that cannot be
 * started ends with 127 (not found) or 126, as a shell's; with
 * canhazgpu set, with 1 and "command not found", as canhazgpu's run. */
static pid_t
spawn(char **argv, const char *cvd, const sigset_t *mask, int canhazgpu)
{
	pid_t pid;

	fflush(stdout);
	fflush(stderr);
	pid = fork();
	if (pid < 0)
		err_die(HAZ_FAIL, "fork:");
	if (pid > 0)
		return pid;
	signal(SIGINT, SIG_DFL);
	signal(SIGTERM, SIG_DFL);
	signal(SIGCHLD, SIG_DFL);
	signal(SIGHUP, SIG_DFL);
	sigprocmask(SIG_SETMASK, mask, NULL);
	setenv("CUDA_VISIBLE_DEVICES", cvd, 1);
	execvp(argv[0], argv);
	if (!canhazgpu) {
		err_warn("%s:", argv[0]);
		_exit(errno == ENOENT ? 127 : 126);
	}
	if (errno == ENOENT || errno == EACCES || errno == ENOTDIR)
		err_warn("%s: command not found", argv[0]);
	else
		err_warn("%s:", argv[0]);
	_exit(1);
}

char *
lg_hms(double secs, char buf[32])
{
	long long s = secs > 0 ? (long long)secs : 0;

	if (s < 60)
		snprintf(buf, 32, "0h 0m %llds", s);
	else
		snprintf(buf, 32, "%lldh %lldm %llds", s / 3600, s / 60 % 60,
			s % 60);
	return buf;
}

/* A heartbeat or a release, run by guarded. */
struct job {
	struct lg *l;
	const int *ids;
	const long long *since;
	int n;
	const char *user;
	int release;
};

/* say_lost warns of each reservation of the job's that another now has
 * (v: {gpu, holder, since}), once per GPU and process: it is neither
 * kept alive nor released again. */
static void
say_lost(const json_t *lost, const char *doing)
{
	static unsigned char said[LG_MAX_GPU_ID / 8 + 1];
	const json_t *v;
	char h[128], when[32];
	long long g;
	size_t i;

	json_array_foreach(lost, i, v) {
		g = lg_jint(v, "gpu");
		if (g < 0 || g > LG_MAX_GPU_ID || (said[g / 8] & (1 << g % 8)))
			continue;
		said[g / 8] |= (unsigned char)(1 << g % 8);
		snprintf(h, sizeof h, "%s",
			json_is_string(json_object_get(v, "holder"))
				? json_string_value(
					  json_object_get(v, "holder"))
				: "");
		if (*h && json_is_number(json_object_get(v, "since")))
			err_warn("GPU %lld reservation lost (now held by %s "
				 "since %s); %s",
				g, err_clean(h),
				lg_rfc3339(lg_jint(v, "since"), when), doing);
		else
			err_warn("GPU %lld reservation lost (%s%s); %s", g,
				*h ? "now held by " : "now free", err_clean(h),
				doing);
	}
}

/* release_ids releases the job's ids from..from+k-1 still its own,
 * naming those another took since. Returns 0, or -1 when the script
 * refused the call as a whole (*why: why, malloc'd). */
static int
release_ids(const struct job *j, int from, int k, char **why)
{
	json_t *res;
	const char *e;
	int status;

	res = lg_try_run(j->l, LG_RELEASE,
		lg_release_params(j->ids + from, k, j->user, NULL, "run",
			j->since + from),
		&status, why);
	if (!res)
		return -1;
	if (!(e = json_string_value(json_object_get(res, "error")))) {
		say_lost(json_object_get(res, "notheld"), "not released");
		json_decref(res);
		return 0;
	}
	if (strcmp(e, "range") == 0)
		*why = easprintf("GPU %lld is out of range (0-%lld)",
			lg_jint(res, "gpu"), lg_jint(res, "count") - 1);
	else
		*why = easprintf("the release script answered %s", e);
	json_decref(res);
	return -1;
}

/* release frees the job's reservations that are still its own; those
 * another took since are named and left as they are. When the script
 * refuses the call as a whole (a GPU no longer in the pool, say), it is
 * made again GPU by GPU, so that one GPU that cannot be released keeps
 * none of the others held. */
static void
release(const struct job *j)
{
	char *why;
	int i;

	if (release_ids(j, 0, j->n, &why) == 0)
		return;
	free(why);
	for (i = 0; i < j->n; i++)
		if (release_ids(j, i, 1, &why) < 0) {
			err_warn("GPU %d not released: %s; it is free once 5 "
				 "minutes pass without a heartbeat",
				j->ids[i], why);
			free(why);
		}
}

static void
do_job(const struct job *j)
{
	char *why;
	json_t *res;
	int status;

	if (j->release) {
		release(j);
		return;
	}
	res = lg_try_run(j->l, LG_HEARTBEAT,
		lg_heartbeat_params(j->ids, j->n, j->user, j->since), &status,
		&why);
	if (!res) {
		err_warn("heartbeat: %s", why);
		free(why);
		return;
	}
	say_lost(json_object_get(res, "lost"), "no longer kept alive");
	json_decref(res);
}

/* guarded runs j so that a lost Redis connection is a warning, not the
 * end of the supervisor: the next call connects again first. Returns 0,
 * or -1 when Redis failed. */
static int
guarded(const struct job *j, void (*reconnect)(struct lg *))
{
	static int broken;
	sigjmp_buf jb;

	if (sigsetjmp(jb, 1)) {
		rd_recover = NULL;
		broken = 1;
		return -1;
	}
	rd_recover = &jb;
	if (broken) {
		reconnect(j->l);
		broken = 0;
	}
	do_job(j);
	rd_recover = NULL;
	return 0;
}

/* ppoll_until waits until the monotonic time t, or a signal of those
 * during leaves unblocked. */
static void
ppoll_until(double t, const sigset_t *during)
{
	double left = t - clock_mono();
	struct timespec ts;

	if (left < 0)
		left = 0;
	ts.tv_sec = (time_t)left;
	ts.tv_nsec = (long)((left - (double)ts.tv_sec) * 1e9);
	ppoll(NULL, 0, &ts, during);
}

/* limit ends the command once its time is up, as canhazgpu's supervisor
 * does: SIGINT at the limit (*at), SIGKILL 30 s later if it is still
 * there; *at is then the next time to act, or -1 for none. */
static void
limit(pid_t pid, double secs, double *at, int *stage)
{
	char d[32];

	if (*at < 0 || clock_mono() < *at)
		return;
	if (*stage == 0) {
		kill(pid, SIGINT);
		err_warn("timeout of %s reached; SIGINT sent to the command "
			 "(SIGKILL in 30 s if it is still there)",
			lg_hms(secs, d));
		*at = clock_mono() + 30;
		*stage = 1;
	} else {
		kill(pid, SIGKILL);
		err_warn("the command is still there 30 s after SIGINT; "
			 "SIGKILL sent");
		*at = -1;
	}
}

int
lg_supervise(struct lg *l, char **argv, const int *ids, const long long *since,
	int n, const char *user, const struct lg_run_opts *o,
	void (*reconnect)(struct lg *))
{
	struct job j = {l, ids, since, n, user, 0};
	sigset_t block, old, during;
	struct sigaction sa, o_int, o_term, o_chld, o_hup;
	char *cvd = ecalloc((size_t)n * 7 + 1, 1);
	double next, at, wake;
	pid_t pid;
	int i, st, stage = 0;

	for (i = 0; i < n; i++)
		sprintf(cvd + strlen(cvd), "%s%d", i ? "," : "", ids[i]);
	sigemptyset(&block);
	sigaddset(&block, SIGCHLD);
	sigaddset(&block, SIGINT);
	sigaddset(&block, SIGTERM);
	sigprocmask(SIG_BLOCK, &block, &old);
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = forward_signal;
	sigaction(SIGINT, &sa, &o_int);
	sigaction(SIGTERM, &sa, &o_term);
	sa.sa_handler = note_child;
	sigaction(SIGCHLD, &sa, &o_chld);
	pid = spawn(argv, cvd, &old, o->canhazgpu);
	child_pid = pid;
	sa.sa_handler = SIG_IGN;
	sigaction(SIGHUP, &sa, &o_hup);
	during = old;
	sigdelset(&during, SIGCHLD);
	sigdelset(&during, SIGINT);
	sigdelset(&during, SIGTERM);
	next = clock_mono() + 60;
	at = o->limit_s >= 0 ? clock_mono() + o->limit_s : -1;
	for (;;) {
		if (waitpid(pid, &st, WNOHANG) == pid)
			break;
		limit(pid, o->limit_s, &at, &stage);
		wake = at >= 0 && at < next ? at : next;
		ppoll_until(wake, &during);
		if (clock_mono() >= next) {
			if (guarded(&j, reconnect) < 0)
				err_warn(
					"heartbeat failed; trying again in 60 s");
			next = clock_mono() + 60;
		}
	}
	child_pid = 0;
	j.release = 1;
	for (i = 0; i < 3 && guarded(&j, reconnect) < 0; i++)
		sleep(1);
	if (i == 3)
		err_warn("could not release GPUs %s; they are free once 5 "
			 "minutes pass without a heartbeat",
			cvd);
	sigaction(SIGINT, &o_int, NULL);
	sigaction(SIGTERM, &o_term, NULL);
	sigaction(SIGCHLD, &o_chld, NULL);
	sigaction(SIGHUP, &o_hup, NULL);
	sigprocmask(SIG_SETMASK, &old, NULL);
	free(cvd);
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}
