/* watch_loop: list, then watch in turns, for ever (see watch.h). */
#include <errno.h>
#include <time.h>

#include "clock.h"
#include "err.h"
#include "watch.h"

#define BACKOFF_FIRST 0.5
#define BACKOFF_MAX 30.0

static void
sleep_for(double s)
{
	struct timespec ts = {(time_t)s, (long)((s - (double)(time_t)s) * 1e9)};

	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

/* hopeless says whether a first list's failure ends a l->once loop: an
 * unreachable server at once, a refusal (403...) never gets better; a
 * list gone stale or cut short is tried again. */
static int
hopeless(const struct watch_loop *l, int listed, const struct kube_error *e)
{
	return l->once && !listed &&
		(e->kind == KUBE_ETEMP || e->kind == KUBE_EAPI ||
			e->kind == KUBE_EFAIL);
}

int
watch_loop(struct watch *w, const struct watch_loop *l, struct kube_error *e)
{
	struct kube *k = watch_kube(w);
	double backoff = BACKOFF_FIRST, turn = l->turn, t0;
	int listed = 0, failing = 0, first = 1;

	while (!l->stop || !l->stop(l->arg)) {
		kube_set_deadline(k, listed ? turn : 0);
		t0 = clock_mono();
		if (!(listed ? watch_run(w, e) : watch_list(w, e))) {
			if (listed) /* the emit function stopped it */
				return 0;
		} else if (e->kind == KUBE_EDEADLINE) {
			if (l->relist)
				listed = 0;
			continue;
		} else if (l->stop && l->stop(l->arg)) {
			return 0;
		} else if (hopeless(l, listed, e)) {
			return -1;
		} else {
			if (!failing || l->verbose)
				err_warn("%s; retrying in %.1f s", e->msg,
					backoff);
			failing = 1;
			if (l->nap)
				l->nap(l->arg, backoff);
			else
				sleep_for(backoff);
			backoff = backoff * 2 > BACKOFF_MAX ? BACKOFF_MAX
							    : backoff * 2;
			continue;
		}
		if (failing && l->name)
			err_warn("%s: watching again", l->name);
		failing = 0;
		backoff = BACKOFF_FIRST;
		if (!listed) {
			listed = 1;
			if (turn > 0 && 3 * (clock_mono() - t0) > turn)
				turn = 3 * (clock_mono() - t0);
			if (l->listed)
				l->listed(l->arg, first);
			first = 0;
		}
	}
	return 0;
}
