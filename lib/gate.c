/* gate: the connections a server keeps, and their deadlines (see gate.h).
 *
 * One list under one mutex: a server holds at most `max` connections
 * plus the few shut down and not yet closed, so a scan per connection
 * opened costs less than the accept it follows. */
#include <errno.h>
#include <math.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "clock.h"
#include "err.h"
#include "gate.h"

struct gate_conn {
	struct gate_conn *prev, *next;
	int fd;
	unsigned char addr[17]; /* the family, then the address; 0: unknown */
	double since;           /* when it began to wait */
	double deadline;        /* when it is shut down, unless busy */
	int busy;               /* its handler runs */
	int doomed;             /* shut down, not yet closed */
};

struct gate {
	struct gate_opts o;
	pthread_mutex_t mu;
	pthread_cond_t wake;
	pthread_t thread;
	int stop;
	struct gate_conn *conns;
	unsigned long open, live; /* live: open and not doomed */
	unsigned long expired, evicted, refused;
};

/* address_of writes the family and address of peer into key, an IPv4
 * address mapped into IPv6 as the IPv4 one; key[0] 0 when not known. */
static void
address_of(const struct sockaddr *peer, unsigned char key[17])
{
	const struct sockaddr_in6 *v6 = (const struct sockaddr_in6 *)peer;
	const struct sockaddr_in *v4 = (const struct sockaddr_in *)peer;

	memset(key, 0, 17);
	if (peer && peer->sa_family == AF_INET) {
		key[0] = 4;
		memcpy(key + 1, &v4->sin_addr, 4);
	} else if (peer && peer->sa_family == AF_INET6 &&
		IN6_IS_ADDR_V4MAPPED(&v6->sin6_addr)) {
		key[0] = 4;
		memcpy(key + 1, v6->sin6_addr.s6_addr + 12, 4);
	} else if (peer && peer->sa_family == AF_INET6) {
		key[0] = 6;
		memcpy(key + 1, &v6->sin6_addr, 16);
	}
}

/* doom shuts c down: the server sees its end, and closes it. */
static void
doom(struct gate *g, struct gate_conn *c)
{
	shutdown(c->fd, SHUT_RDWR);
	c->doomed = 1;
	g->live--;
}

/* longest_waiting is the live connection, not busy, that has waited
 * longest, of address key only when key is not NULL; NULL when none. */
static struct gate_conn *
longest_waiting(struct gate *g, const unsigned char *key)
{
	struct gate_conn *c, *best = NULL;

	for (c = g->conns; c; c = c->next)
		if (!c->busy && !c->doomed &&
			(!key || !memcmp(c->addr, key, sizeof c->addr)) &&
			(!best || c->since < best->since))
			best = c;
	return best;
}

static unsigned
of_address(struct gate *g, const unsigned char *key)
{
	struct gate_conn *c;
	unsigned n = 0;

	for (c = g->conns; c; c = c->next)
		n += !c->doomed && !memcmp(c->addr, key, sizeof c->addr);
	return n;
}

/* make_room shuts down the connection that has waited longest of those
 * the rule says must give way to one from key; 0, or -1 when none can. */
static int
make_room(struct gate *g, const unsigned char *key)
{
	struct gate_conn *v;

	if (key[0] && of_address(g, key) >= g->o.per_ip) {
		if (!(v = longest_waiting(g, key)))
			return -1;
		doom(g, v);
		g->evicted++;
	}
	if (g->live >= g->o.max) {
		if (!(v = longest_waiting(g, NULL)))
			return -1;
		doom(g, v);
		g->evicted++;
	}
	return 0;
}

/* keeper shuts down the connections past their deadline, waking at the
 * next deadline or within a second, whichever comes first. */
static void *
keeper(void *arg)
{
	struct gate *g = arg;
	struct gate_conn *c;
	struct timespec ts;
	double now, next;

	pthread_mutex_lock(&g->mu);
	while (!g->stop) {
		now = clock_mono();
		next = now + 1;
		for (c = g->conns; c; c = c->next) {
			if (c->busy || c->doomed)
				continue;
			if (c->deadline <= now) {
				doom(g, c);
				g->expired++;
			} else if (c->deadline < next) {
				next = c->deadline;
			}
		}
		ts.tv_sec = (time_t)floor(next);
		ts.tv_nsec = (long)((next - floor(next)) * 1e9);
		pthread_cond_timedwait(&g->wake, &g->mu, &ts);
	}
	pthread_mutex_unlock(&g->mu);
	return NULL;
}

struct gate *
gate_new(const struct gate_opts *o)
{
	struct gate *g = ecalloc(1, sizeof *g);
	pthread_condattr_t ca;
	int rc;

	g->o = *o;
	pthread_mutex_init(&g->mu, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&g->wake, &ca);
	pthread_condattr_destroy(&ca);
	if ((rc = pthread_create(&g->thread, NULL, keeper, g)) != 0) {
		pthread_cond_destroy(&g->wake);
		pthread_mutex_destroy(&g->mu);
		free(g);
		errno = rc;
		return NULL;
	}
	return g;
}

void
gate_free(struct gate *g)
{
	if (!g)
		return;
	pthread_mutex_lock(&g->mu);
	g->stop = 1;
	pthread_cond_signal(&g->wake);
	pthread_mutex_unlock(&g->mu);
	pthread_join(g->thread, NULL);
	pthread_cond_destroy(&g->wake);
	pthread_mutex_destroy(&g->mu);
	free(g);
}

struct gate_conn *
gate_open(struct gate *g, int fd, const struct sockaddr *peer)
{
	struct gate_conn *c = ecalloc(1, sizeof *c);
	int refused;

	c->fd = fd;
	address_of(peer, c->addr);
	c->since = clock_mono();
	c->deadline = c->since + g->o.request;
	pthread_mutex_lock(&g->mu);
	refused = make_room(g, c->addr) < 0;
	c->next = g->conns;
	if (g->conns)
		g->conns->prev = c;
	g->conns = c;
	g->open++;
	g->live++;
	if (refused) {
		doom(g, c);
		g->refused++;
	}
	pthread_mutex_unlock(&g->mu);
	return c;
}

void
gate_busy(struct gate *g, struct gate_conn *c)
{
	if (!c)
		return;
	pthread_mutex_lock(&g->mu);
	c->busy = 1;
	pthread_mutex_unlock(&g->mu);
}

/* wait_again: c waits from now, until its deadline after. */
static void
wait_again(struct gate *g, struct gate_conn *c, double after)
{
	if (!c)
		return;
	pthread_mutex_lock(&g->mu);
	c->busy = 0;
	c->since = clock_mono();
	c->deadline = c->since + after;
	pthread_mutex_unlock(&g->mu);
}

void
gate_replied(struct gate *g, struct gate_conn *c)
{
	wait_again(g, c, g->o.request);
}

void
gate_done(struct gate *g, struct gate_conn *c)
{
	wait_again(g, c, g->o.idle + g->o.request);
}

void
gate_close(struct gate *g, struct gate_conn *c)
{
	if (!c)
		return;
	pthread_mutex_lock(&g->mu);
	if (c->prev)
		c->prev->next = c->next;
	else
		g->conns = c->next;
	if (c->next)
		c->next->prev = c->prev;
	g->open--;
	if (!c->doomed)
		g->live--;
	pthread_mutex_unlock(&g->mu);
	free(c);
}

void
gate_stats(struct gate *g, struct gate_stats *s)
{
	pthread_mutex_lock(&g->mu);
	s->open = g->open;
	s->expired = g->expired;
	s->evicted = g->evicted;
	s->refused = g->refused;
	pthread_mutex_unlock(&g->mu);
}
