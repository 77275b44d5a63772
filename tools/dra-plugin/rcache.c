/* rcache: the ResourceClaim watch cache of the kubelet plugin (see
 * rcache.h). */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "err.h"
#include "kube.h"
#include "rcache.h"
#include "watch.h"

#define CLAIMS "/apis/resource.k8s.io/v1/resourceclaims"

struct rcache {
	pthread_mutex_t mu;
	json_t *claims;    /* "ns/name" -> the claim as last seen */
	json_t *forgotten; /* uid -> true: never given again */
	int listed;        /* the table is the server's, kept by the watch */
	int stop;          /* rc_stop asked (__atomic) */
	long hits, misses;
	struct kc_config kc;
	struct kube *k;
	struct watch *w;
	pthread_t th;
	int verbose;
};

/* key returns "ns/name" of claim (malloc'd), or NULL. */
static char *
key(const json_t *claim)
{
	json_t *m = json_object_get(claim, "metadata");
	const char *ns = json_string_value(json_object_get(m, "namespace"));
	const char *name = json_string_value(json_object_get(m, "name"));

	return ns && name ? easprintf("%s/%s", ns, name) : NULL;
}

/* on_event keeps the table as the watch says. */
static int
on_event(const char *type, json_t *obj, void *arg)
{
	struct rcache *c = arg;
	char *k = key(obj);
	const char *uid = json_string_value(
		json_object_get(json_object_get(obj, "metadata"), "uid"));

	if (!k)
		return 0;
	pthread_mutex_lock(&c->mu);
	if (strcmp(type, "DELETED") == 0) {
		json_object_del(c->claims, k);
		if (uid) /* a uid is never used again */
			json_object_del(c->forgotten, uid);
	} else {
		json_object_set(c->claims, k, obj);
	}
	pthread_mutex_unlock(&c->mu);
	free(k);
	return __atomic_load_n(&c->stop, __ATOMIC_SEQ_CST);
}

/* pause_unless_stopped sleeps s seconds, a tenth at a time, while no
 * stop is asked. */
static void
pause_unless_stopped(struct rcache *c, double s)
{
	for (; s > 0 && !__atomic_load_n(&c->stop, __ATOMIC_SEQ_CST); s -= 0.1)
		usleep(100000);
}

/* run lists, then watches in slices of RC_SLICE seconds until stopped;
 * a failure empties nothing but stops the cache giving claims until a
 * list went through again. */
static void *
run(void *arg)
{
	struct rcache *c = arg;
	struct kube_error e;
	double backoff = 0.5;
	int listed = 0, said = 0, rc;

	while (!__atomic_load_n(&c->stop, __ATOMIC_SEQ_CST)) {
		/* a list as long as it takes; a watch in slices, to stop */
		kube_set_deadline(c->k, listed ? RC_SLICE : 0);
		rc = listed ? watch_run(c->w, &e) : watch_list(c->w, &e);
		if (rc == 0 || e.kind == KUBE_EDEADLINE) {
			if (!listed && rc == 0) {
				listed = 1;
				pthread_mutex_lock(&c->mu);
				c->listed = 1;
				pthread_mutex_unlock(&c->mu);
				if (said || c->verbose)
					err_warn("resourceclaims: watched; "
						 "claims read from the cache");
				said = 0;
				backoff = 0.5;
			}
			continue;
		}
		listed = 0;
		pthread_mutex_lock(&c->mu);
		c->listed = 0;
		pthread_mutex_unlock(&c->mu);
		if (e.kind == KUBE_EAPI &&
			(e.status == 401 || e.status == 403)) {
			/* the plugin's role lets it get claims, no more */
			err_warn("resourceclaims: %s; a GET per claim", e.msg);
			break;
		}
		if (!said || c->verbose)
			err_warn(
				"resourceclaims: %s; a GET per claim meanwhile, "
				"retrying in %.1f s",
				e.msg, backoff);
		said = 1;
		pause_unless_stopped(c, backoff);
		backoff = backoff * 2 > 30 ? 30 : backoff * 2;
	}
	return NULL;
}

struct rcache *
rc_start(const char *kubeconfig, const char *context, int verbose)
{
	struct rcache *c = ecalloc(1, sizeof *c);
	/* not verbose: a watch slice connects every RC_SLICE seconds */
	struct watch_opts o = {CLAIMS, NULL, NULL, 500, 1e9, 0, 1};

	if (kc_load(&c->kc, kubeconfig, context) < 0) {
		free(c);
		return NULL;
	}
	pthread_mutex_init(&c->mu, NULL);
	c->claims = json_object();
	c->forgotten = json_object();
	c->verbose = verbose;
	c->k = kube_new(&c->kc);
	c->w = watch_new(c->k, &o, on_event, c);
	if (pthread_create(&c->th, NULL, run, c) != 0)
		err_die(HAZ_FAIL, "resourceclaims: no thread for the watch");
	return c;
}

/* usable says whether claim may be given for uid. */
static int
usable(const json_t *claim, const char *uid)
{
	const char *have = json_string_value(
		json_object_get(json_object_get(claim, "metadata"), "uid"));
	json_t *st = json_object_get(claim, "status");

	return have && strcmp(have, uid) == 0 &&
		json_is_object(json_object_get(st, "allocation")) &&
		json_array_size(json_object_get(st, "reservedFor")) > 0;
}

json_t *
rc_get(struct rcache *c, const char *ns, const char *name, const char *uid)
{
	char *k = easprintf("%s/%s", ns, name);
	json_t *claim = NULL;

	pthread_mutex_lock(&c->mu);
	if (c->listed && !json_object_get(c->forgotten, uid)) {
		claim = json_object_get(c->claims, k);
		claim = claim && usable(claim, uid) ? json_incref(claim) : NULL;
	}
	if (claim)
		c->hits++;
	else
		c->misses++;
	pthread_mutex_unlock(&c->mu);
	free(k);
	return claim;
}

void
rc_forget(struct rcache *c, const char *uid)
{
	pthread_mutex_lock(&c->mu);
	json_object_set_new(c->forgotten, uid, json_true());
	pthread_mutex_unlock(&c->mu);
}

long
rc_hits(struct rcache *c)
{
	long n;

	pthread_mutex_lock(&c->mu);
	n = c->hits;
	pthread_mutex_unlock(&c->mu);
	return n;
}

long
rc_misses(struct rcache *c)
{
	long n;

	pthread_mutex_lock(&c->mu);
	n = c->misses;
	pthread_mutex_unlock(&c->mu);
	return n;
}

void
rc_stop(struct rcache *c)
{
	if (!c)
		return;
	__atomic_store_n(&c->stop, 1, __ATOMIC_SEQ_CST);
	pthread_join(c->th, NULL);
	watch_free(c->w);
	kube_free(c->k);
	kc_free(&c->kc);
	json_decref(c->claims);
	json_decref(c->forgotten);
	pthread_mutex_destroy(&c->mu);
	free(c);
}
