/* redis (rd_): one connection to a Redis server through hiredis, with the
 * failures of k8shazgpu(7): a server that cannot be reached, or that
 * stops answering, ends the tool with status 75 naming the address; a
 * refused password ends it with status 1. The password is never part of
 * any message.
 *
 * A server (the kubelet plugin) must outlive an outage instead: a soft
 * connection (rd_try_connect) never ends the tool. A failed command
 * returns NULL with the reason in r->why, the dead connection is freed,
 * and the next command connects again first, with the saved address,
 * database and password.
 *
 * Addresses: "host:port", "[v6addr]:port", "host" (port 6379), or a unix
 * socket path starting with '/' or "unix:". */
#ifndef HAZ_REDIS_H
#define HAZ_REDIS_H

#include <setjmp.h>
#include <stddef.h>

#include <hiredis/hiredis.h>

struct rd {
	redisContext *c;
	char *addr;     /* the address as given, for messages */
	char *password; /* NULL for none; owned, wiped on close */
	int db;
	double timeout_s; /* per command; 0 for none */
	int soft;         /* failures answered, never fatal (rd_try_connect) */
	char *why;        /* soft: the last failure, "redis ADDR: why"; owned */
};

/* A Lua script run by rd_eval: src is the whole text; sha is its SHA-1,
 * filled in on first use. */
struct rd_script {
	const char *name; /* for messages */
	const char *src;
	char sha[41];
};

/* rd_connect connects r to addr, authenticates with password (NULL for
 * none) and selects db. On failure it ends the tool: status 75 when the
 * server cannot be reached, 1 when the password is refused or needed,
 * with `redis ADDR: why`. addr and password are copied. */
void rd_connect(struct rd *r, const char *addr, int db, const char *password,
	double timeout_s);

/* rd_try_connect sets r up as a soft connection to addr (as rd_connect
 * takes it) and connects. Returns 0 (*why NULL); HAZ_TEMP when the
 * server cannot be reached; HAZ_FAIL when the password is refused or
 * needed, or the address or database is unusable; with the reason in
 * *why (malloc'd; "redis ADDR: why", as r->why). Whatever it returns, r
 * is set up: close it with rd_close, and a later command tries to
 * connect again. */
int rd_try_connect(struct rd *r, const char *addr, int db, const char *password,
	double timeout_s, char **why);

/* rd_close frees the connection and wipes the password copy. */
void rd_close(struct rd *r);

/* rd_recover, when set, makes rd_dead warn and jump there instead of
 * ending the tool: for a supervisor that must outlive an outage. */
extern sigjmp_buf *rd_recover;

/* rd_dead ends the tool with status 75 and `redis ADDR: why` from the
 * connection's error (or why when the connection has none). */
void rd_dead(struct rd *r, const char *why) __attribute__((noreturn));

/* rd_fail ends the tool with status and `redis ADDR: what: why`, why
 * the error reply y's text (or "unexpected reply"); frees y first. */
void rd_fail(struct rd *r, redisReply *y, int status, const char *what)
	__attribute__((noreturn));

/* rd_cmd runs one command (hiredis format). The reply may be an error
 * reply; the caller frees it. An I/O failure ends the tool (rd_dead); on
 * a soft connection it returns NULL instead (r->why says why), as when
 * no connection can be made first. */
redisReply *rd_cmd(struct rd *r, const char *fmt, ...);

/* rd_cmdv runs one command given as argc strings of lens bytes (lens NULL:
 * NUL-terminated). As rd_cmd. */
redisReply *rd_cmdv(struct rd *r, int argc, const char **argv,
	const size_t *lens);

/* rd_eval runs script s with no keys and the given arguments, by EVALSHA,
 * then by EVAL when the server does not have it (NOSCRIPT). Returns the
 * reply (maybe an error reply; caller frees); NULL as rd_cmd. s->sha is
 * filled in when empty: fill it first (rd_script_sha) where threads
 * share s. A script's answer is waited for RD_SCRIPT_WAIT seconds
 * whatever the per-command timeout: a script's writes are made or not
 * as one, so a client that gave up earlier could call a write that
 * happened a failure. Past that, the message says it may have been
 * carried out. */
#define RD_SCRIPT_WAIT 60
redisReply *rd_eval(struct rd *r, struct rd_script *s, int argc,
	const char **argv);

/* rd_script_sha fills in s->sha from s->src. */
void rd_script_sha(struct rd_script *s);

/* rd_is_error says whether reply is an error reply. */
int rd_is_error(const redisReply *reply);

/* rd_subscribe sends PSUBSCRIBE pattern on r, whose connection is then
 * for notifications only (read with rd_next_message), and reads its
 * confirmation. Returns 0, or -1 with the error reply's text in *why
 * (malloc'd). */
int rd_psubscribe(struct rd *r, const char *pattern, char **why);

/* rd_read_input reads what r's socket has ready into its buffer: call it
 * after poll() says the descriptor is readable, then rd_pop_message until
 * it returns NULL. A closed connection ends the tool (rd_dead). */
void rd_read_input(struct rd *r);

/* rd_pop_message returns the channel of the next published message
 * already read (malloc'd; "" for a reply that is not a message), or NULL
 * when no whole reply is buffered. */
char *rd_pop_message(struct rd *r);

/* rd_fd returns the connection's descriptor, for poll(); -1 when a
 * soft connection has none now. */
int rd_fd(const struct rd *r);

#endif
