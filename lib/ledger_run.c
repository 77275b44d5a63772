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
 * were before (mask: the mask to restore). */
static pid_t
spawn(char **argv, const char *cvd, const sigset_t *mask)
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
	err_warn("%s:", argv[0]);
	_exit(errno == ENOENT ? 127 : 126);
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

static void
do_job(const struct job *j)
{
	json_t *res;

	if (j->release) {
		res = lg_run(j->l, LG_RELEASE,
			lg_release_params(j->ids, j->n, j->user, NULL, "run",
				j->since));
		say_lost(json_object_get(res, "notheld"), "not released");
		json_decref(res);
		return;
	}
	res = lg_run(j->l, LG_HEARTBEAT,
		lg_heartbeat_params(j->ids, j->n, j->user, j->since));
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

int
lg_supervise(struct lg *l, char **argv, const int *ids, const long long *since,
	int n, const char *user, void (*reconnect)(struct lg *))
{
	struct job j = {l, ids, since, n, user, 0};
	sigset_t block, old, during;
	struct sigaction sa, o_int, o_term, o_chld, o_hup;
	struct timespec ts;
	char *cvd = ecalloc((size_t)n * 7 + 1, 1);
	time_t next;
	pid_t pid;
	int i, st;

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
	pid = spawn(argv, cvd, &old);
	child_pid = pid;
	sa.sa_handler = SIG_IGN;
	sigaction(SIGHUP, &sa, &o_hup);
	during = old;
	sigdelset(&during, SIGCHLD);
	sigdelset(&during, SIGINT);
	sigdelset(&during, SIGTERM);
	next = time(NULL) + 60;
	for (;;) {
		if (waitpid(pid, &st, WNOHANG) == pid)
			break;
		ts.tv_sec = next > time(NULL) ? next - time(NULL) : 0;
		ts.tv_nsec = 0;
		ppoll(NULL, 0, &ts, &during);
		if (time(NULL) >= next) {
			if (guarded(&j, reconnect) < 0)
				err_warn(
					"heartbeat failed; trying again in 60 s");
			next = time(NULL) + 60;
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
