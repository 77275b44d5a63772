/* gate: which connections a server keeps, and for how long.
 *
 * A server that waits for whole requests can be held by clients that
 * send them a byte at a time: each byte resets an idle timeout, and a
 * few dozen such connections fill every slot, so that a liveness probe
 * finds none and the process is restarted by whoever wishes it. The gate
 * bounds both what such a client holds and for how long:
 *
 * - time: a connection's request must arrive whole within `request`
 *   seconds of its start (a TLS handshake included), its reply be taken
 *   within `request` seconds once the handler gave it, and the next
 *   request of a kept-alive connection be whole within `idle + request`
 *   seconds of the previous reply. Bytes arriving do not extend this, as
 *   they do an idle timeout; a connection past its deadline is shut
 *   down (shutdown(2): the server sees it end and closes it). While the
 *   handler runs, there is no deadline.
 * - room: at most `per_ip` connections of one client address and `max`
 *   in all. A new connection is never refused for another's sake:
 *   when its address has per_ip connections, the one of that address
 *   that has waited longest (for its request, or to take its reply, or
 *   idle) is shut down for it; when the server has max, the one that
 *   has waited longest of all. So a flood of slow connections, from one
 *   address or many, holds the oldest slots only until the next client
 *   comes: a probe that sends its request at once is answered, however
 *   many wait. Only a connection whose handler runs is never chosen;
 *   when every one of them is, the new one is shut down instead.
 *
 * The gate knows sockets and addresses, not HTTP: the server tells it
 * of each connection's start, handler, reply, completion and end. Any
 * thread may call it; a thread of its own keeps the deadlines. */
#ifndef HAZ_GATE_H
#define HAZ_GATE_H

#include <sys/socket.h>

struct gate_opts {
	unsigned max;    /* connections at once */
	unsigned per_ip; /* connections of one client address at once */
	double request;  /* seconds a request may take to arrive whole */
	double idle;     /* seconds a kept-alive connection may wait */
};

struct gate;
struct gate_conn;

/* The counts of what the gate did, since it was made. */
struct gate_stats {
	unsigned long open;    /* connections open now */
	unsigned long expired; /* shut down past their deadline */
	unsigned long evicted; /* shut down to make room for a new one */
	unsigned long refused; /* new ones shut down: no room to make */
};

/* gate_new returns a gate (its thread started), or NULL with errno. */
struct gate *gate_new(const struct gate_opts *o);

/* gate_free stops the gate's thread and frees it; every connection must
 * have been closed (gate_close) before. */
void gate_free(struct gate *g);

/* gate_open records fd, a connection just accepted from peer (NULL when
 * not known), making room for it as above, and returns its entry: keep
 * it and give it to the calls below. fd stays the caller's: the gate
 * only ever shuts it down, and only until gate_close. */
struct gate_conn *gate_open(struct gate *g, int fd,
	const struct sockaddr *peer);

/* gate_busy: c's handler starts (no deadline until gate_replied). */
void gate_busy(struct gate *g, struct gate_conn *c);

/* gate_replied: c's handler gave its reply, to be taken within request
 * seconds. */
void gate_replied(struct gate *g, struct gate_conn *c);

/* gate_done: c's request and reply are over; it may wait for another. */
void gate_done(struct gate *g, struct gate_conn *c);

/* gate_close forgets c (its socket is about to be closed) and frees it;
 * NULL is nothing. */
void gate_close(struct gate *g, struct gate_conn *c);

void gate_stats(struct gate *g, struct gate_stats *s);

#endif
