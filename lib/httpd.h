/* httpd: an HTTPS (or plain HTTP) server on libmicrohttpd, for small
 * JSON and text services.
 *
 * One listening socket, served by a pool of threads. Each request's body
 * is gathered in full (up to max_body bytes) before the handler sees it;
 * the handler answers with a status, a content type and a body.
 *
 * What a client may hold is bounded (see gate.h): its request must
 * arrive whole within request_timeout seconds of the connection's start
 * (a TLS handshake included) and its reply be taken within as many, a
 * kept-alive connection's next request come whole within idle_timeout +
 * request_timeout seconds of the previous reply, however slowly the
 * bytes trickle; one client address holds at most per_ip connections
 * and all together max_connections, a new connection taking the place
 * of the one that has waited longest rather than being refused. So slow
 * clients, from one address or many, cannot keep a probe of /healthz
 * from an answer.
 *
 * Certificates are reloaded without dropping a request: httpd_tick
 * notices a change of the certificate or key file (modification time,
 * size or inode, so a Kubernetes secret volume's symlink swap counts),
 * starts a second daemon with the new pair on the same socket, and stops
 * the old one from accepting; the old one finishes what it has and is
 * stopped once it holds no connection (or after drain seconds). A pair
 * that does not load is reported and the old one kept.
 *
 * httpd_stop stops accepting, lets requests in flight finish (up to a
 * grace period), then closes everything.
 *
 * Key material is read into memory, handed to GnuTLS, wiped when freed,
 * and never printed. */
#ifndef HAZ_HTTPD_H
#define HAZ_HTTPD_H

#include <stddef.h>

struct httpd_req {
	const char *method;
	const char *path; /* without the query */
	const char *body; /* NUL-terminated; "" when none */
	size_t len;
	int too_large; /* the body was over max_body and was dropped */
};

struct httpd_reply {
	int status;               /* 200 when left 0 */
	const char *content_type; /* "application/json" when NULL */
	char *body;               /* malloc'd; httpd frees it */
	size_t len;
};

/* The handler runs on a pool thread, any number at once. */
typedef void httpd_handler_fn(const struct httpd_req *q, struct httpd_reply *p,
	void *arg);

struct httpd_opts {
	const char *listen;       /* "127.0.0.1:8443", ":8443", "[::1]:8443";
				     port 0 picks a free one */
	const char *cert_file;    /* PEM certificate chain; NULL: plain HTTP */
	const char *key_file;     /* PEM private key */
	unsigned threads;         /* pool size; 0: 4 */
	size_t max_body;          /* 0: 8 MiB */
	unsigned idle_timeout;    /* seconds a quiet connection is kept; 0: 120,
				     longer than clients keep theirs (Go: 90),
				     so it is the client that closes */
	unsigned request_timeout; /* seconds a request may take to arrive
				     whole, and its reply to be taken; 0: 10 */
	unsigned max_connections; /* at once; 0: 1024 */
	unsigned per_ip;          /* at once from one address; 0: a quarter
				     of max_connections */
	double drain;             /* seconds an old daemon may keep connections
				     after a reload; 0: 30 */
	int verbose;              /* libmicrohttpd's own messages on stderr */
	httpd_handler_fn *handler;
	void *arg;
};

struct httpd;

/* httpd_start binds, loads the pair and starts serving. Returns NULL
 * with a one-line reason in err. */
struct httpd *httpd_start(const struct httpd_opts *o, char *err, size_t errlen);

/* httpd_port returns the port listened on. */
int httpd_port(const struct httpd *h);

/* httpd_connections returns how many connections were accepted so far
 * (clients keeping theirs alive open few). Any thread may call it. */
unsigned long httpd_connections(const struct httpd *h);

/* httpd_tick reloads the pair when its files changed (always when
 * force), and stops old daemons that are done. Returns 1 after a
 * reload, 0 when nothing changed, -1 with err set when the new pair
 * could not be used. Call it from one thread only. */
int httpd_tick(struct httpd *h, int force, char *err, size_t errlen);

/* httpd_stop stops accepting, waits up to grace seconds for requests in
 * flight, then stops every daemon, closes the socket and frees h. */
void httpd_stop(struct httpd *h, double grace);

#endif
