/* informer: list+watch threads feeding an avail table (see informer.h). */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "clock.h"
#include "err.h"
#include "informer.h"
#include "kube.h"
#include "kubeconfig.h"
#include "watch.h"

#define TURN 2.0 /* seconds of one watch turn */

static const struct {
	const char *path, *kind;
	int bit;
} feeds[] = {
	{"/api/v1/nodes", "Node", AVAIL_NODES},
	{"/api/v1/pods", "Pod", AVAIL_PODS},
	{"/apis/node.k8s.io/v1/runtimeclasses", "RuntimeClass", AVAIL_CLASSES},
};
#define NFEEDS (sizeof feeds / sizeof *feeds)

struct feed {
	struct informer *in;
	size_t i;
	struct kc_config kc;
	struct kube *k;
	struct watch *w;
	pthread_t th;
	int started;
};

struct informer {
	struct avail *a;
	int verbose;
	int stop;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	struct feed f[NFEEDS];
};

static int
stopping(struct informer *in)
{
	return __atomic_load_n(&in->stop, __ATOMIC_SEQ_CST);
}

/* nap sleeps s seconds or until informer_stop. */
static void
nap(struct informer *in, double s)
{
	struct timespec ts = clock_after(s);

	pthread_mutex_lock(&in->mu);
	while (!stopping(in) &&
		pthread_cond_timedwait(&in->cv, &in->mu, &ts) != ETIMEDOUT)
		;
	pthread_mutex_unlock(&in->mu);
}

static int
on_event(const char *type, json_t *obj, void *arg)
{
	struct feed *f = arg;

	avail_event(f->in->a, feeds[f->i].kind, type, obj);
	return stopping(f->in);
}

static int
stop(void *arg)
{
	return stopping(((struct feed *)arg)->in);
}

static void
listed(void *arg, int first)
{
	struct feed *f = arg;

	(void)first;
	avail_set_synced(f->in->a, feeds[f->i].bit);
}

static void
nap_for(void *arg, double s)
{
	nap(((struct feed *)arg)->in, s);
}

/* run lists once (retrying), then watches in turns until stopped. */
static void *
run(void *arg)
{
	struct feed *f = arg;
	struct watch_loop l = {.name = feeds[f->i].path,
		.turn = TURN,
		.verbose = f->in->verbose,
		.stop = stop,
		.listed = listed,
		.nap = nap_for,
		.arg = f};
	struct kube_error e;

	watch_loop(f->w, &l, &e);
	return NULL;
}

struct informer *
informer_start(const char *kubeconfig, const char *context, struct avail *a,
	int verbose)
{
	struct informer *in = ecalloc(1, sizeof *in);
	struct watch_opts o = {0};
	size_t i;

	in->a = a;
	in->verbose = verbose;
	pthread_mutex_init(&in->mu, NULL);
	pthread_cond_init(&in->cv, NULL);
	for (i = 0; i < NFEEDS; i++) {
		if (kc_load(&in->f[i].kc, kubeconfig, context) < 0) {
			informer_stop(in);
			return NULL;
		}
		in->f[i].in = in;
		in->f[i].i = i;
		in->f[i].k = kube_new(&in->f[i].kc);
		o.path = feeds[i].path;
		o.page_limit = 500;
		o.give_up = 1e9;
		o.verbose = verbose;
		in->f[i].w = watch_new(in->f[i].k, &o, on_event, &in->f[i]);
	}
	for (i = 0; i < NFEEDS; i++) {
		if (pthread_create(&in->f[i].th, NULL, run, &in->f[i]) != 0)
			err_die(HAZ_FAIL, "pthread_create failed");
		in->f[i].started = 1;
	}
	return in;
}

int
informer_wait(struct informer *in, double seconds)
{
	struct timespec ms20 = {0, 20000000};
	double waited = 0;

	while (avail_synced(in->a) != AVAIL_ALL && waited < seconds) {
		nanosleep(&ms20, NULL);
		waited += 0.02;
	}
	return avail_synced(in->a) == AVAIL_ALL;
}

void
informer_stop(struct informer *in)
{
	size_t i;

	if (!in)
		return;
	pthread_mutex_lock(&in->mu);
	__atomic_store_n(&in->stop, 1, __ATOMIC_SEQ_CST);
	pthread_cond_broadcast(&in->cv);
	pthread_mutex_unlock(&in->mu);
	for (i = 0; i < NFEEDS; i++)
		if (in->f[i].started)
			pthread_join(in->f[i].th, NULL);
	for (i = 0; i < NFEEDS; i++) {
		watch_free(in->f[i].w);
		kube_free(in->f[i].k);
		kc_free(&in->f[i].kc);
	}
	pthread_cond_destroy(&in->cv);
	pthread_mutex_destroy(&in->mu);
	free(in);
}
