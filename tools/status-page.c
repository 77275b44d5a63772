/* status-page: one self-contained HTML page of GPU nodes, who holds each
 * device and for how long, health, and the queue.
 *
 *   status-page [-r seconds] [file]
 *   status-page -l addr:port [-r seconds] [-T seconds] -- command [arg ...]
 *
 * The first form reads one JSON document, the state (status-page(1)
 * names its members), from file or standard input and writes the page.
 * The second serves it: each GET / runs command (no shell), reads the
 * state it prints and answers the page; GET /healthz answers "ok". A
 * command that fails, prints no JSON or runs past -T seconds gives a
 * page that says so. The server binds 127.0.0.1:8080 unless told, prints
 * "serving http://ADDR:PORT/" once listening, and stops on TERM or INT
 * after the requests in flight.
 *
 * Every string of the state is escaped for HTML (& < > " '), so a name
 * cannot add markup; the page loads nothing else: its style is inline,
 * and it refreshes itself with a meta refresh every -r seconds (10; 0:
 * never).
 *
 * EXIT STATUS: 0 the page written, or stopped by a signal; 1 the state
 * could not be read, or the address not bound; 2 usage. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "err.h"
#include "httpd.h"

extern char **environ;

static const char usage_text[] =
	"usage: status-page [-r seconds] [file]\n"
	"       status-page -l addr:port [-r seconds] [-T seconds] -- command [arg ...]\n";

enum {
	MAX_STATE = 16 << 20, /* bytes of state read from a command */
};

static void
usage(void)
{
	fputs(usage_text, stderr);
	exit(HAZ_USAGE);
}

/* ---- a growing string ---- */

struct buf {
	char *s;
	size_t len, cap;
};

static void
put(struct buf *b, const char *s, size_t n)
{
	if (b->len + n + 1 > b->cap) {
		b->cap = (b->len + n + 1) * 2;
		b->s = erealloc(b->s, b->cap);
	}
	memcpy(b->s + b->len, s, n);
	b->len += n;
	b->s[b->len] = '\0';
}

static void
puts_(struct buf *b, const char *s)
{
	put(b, s, strlen(s));
}

static void __attribute__((format(printf, 2, 3)))
putf(struct buf *b, const char *fmt, ...)
{
	va_list ap;
	char tmp[256];
	int n;

	va_start(ap, fmt);
	n = vsnprintf(tmp, sizeof tmp, fmt, ap);
	va_end(ap);
	put(b, tmp,
		n < 0                             ? 0
			: (size_t)n >= sizeof tmp ? sizeof tmp - 1
						  : (size_t)n);
}

/* esc appends s as HTML text: the five characters that mean markup are
 * entities, control characters (but tab) and bytes of no valid UTF-8
 * become U+FFFD; NULL appends nothing. */
static void
esc(struct buf *b, const char *s)
{
	const unsigned char *p = (const unsigned char *)s, *end;
	int n;

	if (!s)
		return;
	end = p + strlen(s);
	while (p < end) {
		switch (*p) {
		case '&': puts_(b, "&amp;"); break;
		case '<': puts_(b, "&lt;"); break;
		case '>': puts_(b, "&gt;"); break;
		case '"': puts_(b, "&quot;"); break;
		case '\'': puts_(b, "&#39;"); break;
		default:
			if (*p >= 0x80) {
				if ((n = err_utf8_len(p, end)) > 0) {
					put(b, (const char *)p, (size_t)n);
					p += n;
					continue;
				}
				puts_(b, "\xef\xbf\xbd");
			} else if (*p < 0x20 && *p != '\t') {
				puts_(b, *p == '\n' ? " " : "\xef\xbf\xbd");
			} else {
				put(b, (const char *)p, 1);
			}
		}
		p++;
	}
}

/* ---- reading the state ---- */

static const char *
str(const json_t *o, const char *key)
{
	return json_string_value(json_object_get(o, key));
}

/* since returns o's "since" as Unix seconds, or -1 when it has none. */
static long long
since(const json_t *o)
{
	json_t *v = json_object_get(o, "since");

	return json_is_integer(v) ? json_integer_value(v) : -1;
}

/* dur appends how long from then to now reads: 45s, 12m, 3h 05m, 2d 4h. */
static void
dur(struct buf *b, long long then, long long now)
{
	long long d = now > then ? now - then : 0;

	if (d < 60)
		putf(b, "%llds", d);
	else if (d < 3600)
		putf(b, "%lldm", d / 60);
	else if (d < 86400)
		putf(b, "%lldh %02lldm", d / 3600, d / 60 % 60);
	else
		putf(b, "%lldd %lldh", d / 86400, d / 3600 % 24);
}

/* ---- the page ---- */

static const char style[] =
	"body{font:15px/1.4 system-ui,sans-serif;margin:0 auto;max-width:60em;"
	"padding:.5em;color:#111;background:#fff}\n"
	"h1{font-size:1.3em;margin:.3em 0}h2{font-size:1.1em;margin:1.2em 0 "
	".3em}\n"
	"p{margin:.3em 0}.when,.sub,.free{color:#555}\n"
	"table{border-collapse:collapse;width:100%}\n"
	"th,td{text-align:left;padding:.3em .4em;border-bottom:1px solid "
	"#ddd;vertical-align:top;overflow-wrap:break-word}\n"
	"th{font-weight:600;border-bottom:2px solid #999}\n"
	".mig td:first-child{padding-left:1.5em}\n"
	".missing{background:#fde2e1;border:1px solid "
	"#c62828;padding:.5em;margin:.5em 0;font-weight:600}\n"
	".ok{color:#1b6e2c}.warn{color:#8a5a00}.bad{color:#b00020;font-weight:"
	"600}\n";

static const char *
health_class(const char *h)
{
	if (!strcmp(h, "ok"))
		return "ok";
	return strcmp(h, "unhealthy") ? "warn" : "bad";
}

/* holder appends one holder: "pod NS/NAME (DETAIL) for 5m". */
static void
holder(struct buf *b, const json_t *h, long long now)
{
	const char *detail = str(h, "detail");

	esc(b, str(h, "kind"));
	puts_(b, " ");
	esc(b, str(h, "name"));
	if (detail && *detail) {
		puts_(b, " (");
		esc(b, detail);
		puts_(b, ")");
	}
	if (since(h) >= 0) {
		puts_(b, " for ");
		dur(b, since(h), now);
	}
}

static void
device_row(struct buf *b, const json_t *d, long long now)
{
	const char *mig = str(d, "mig"), *health = str(d, "health");
	json_t *holders = json_object_get(d, "holders"),
	       *reasons = json_object_get(d, "reasons"), *v;
	size_t i;

	putf(b, "<tr%s><td>GPU %lld", mig ? " class=\"mig\"" : "",
		(long long)json_integer_value(json_object_get(d, "gpu")));
	if (mig) {
		puts_(b, " MIG ");
		esc(b, mig);
	}
	if (health)
		putf(b, "</td><td class=\"%s\">", health_class(health));
	else
		puts_(b, "</td><td>");
	esc(b, health);
	json_array_foreach(reasons, i, v) {
		puts_(b, i ? "; " : ": ");
		esc(b, json_string_value(v));
	}
	puts_(b, "</td><td>");
	if (!json_array_size(holders))
		puts_(b, "<span class=\"free\">free</span>");
	json_array_foreach(holders, i, v) {
		if (i)
			puts_(b, "; ");
		holder(b, v, now);
	}
	puts_(b, "</td></tr>\n");
}

/* products appends the distinct product names of the node's whole GPUs,
 * in their order, joined by ", ". */
static void
products(struct buf *b, const json_t *devices)
{
	json_t *seen = json_object(), *d;
	const char *name;
	size_t i;
	int n = 0;

	json_array_foreach(devices, i, d) {
		name = str(d, "name");
		if (!name || str(d, "mig") || json_object_get(seen, name))
			continue;
		json_object_set_new(seen, name, json_true());
		puts_(b, n++ ? ", " : "");
		esc(b, name);
	}
	json_decref(seen);
}

static void
node_section(struct buf *b, const json_t *n, long long now)
{
	const char *ready = str(n, "ready");
	json_t *devices = json_object_get(n, "devices"), *d;
	json_t *updated = json_object_get(n, "updated");
	struct buf sub = {0};
	size_t i;

	puts_(b, "<section>\n<h2>node ");
	esc(b, str(n, "name"));
	if (ready)
		putf(b, " <span class=\"%s\">%s</span>",
			!strcmp(ready, "True") ? "ok" : "bad",
			!strcmp(ready, "True") ? "Ready"
				: !strcmp(ready, "False")
				? "NotReady"
				: "readiness unknown");
	puts_(b, "</h2>\n");
	products(&sub, devices);
	if (json_is_integer(updated)) {
		puts_(&sub, sub.len ? "; published " : "published ");
		dur(&sub, json_integer_value(updated), now);
		puts_(&sub, " ago");
	}
	if (sub.len) {
		puts_(b, "<p class=\"sub\">");
		puts_(b, sub.s);
		puts_(b, "</p>\n");
	}
	free(sub.s);
	if (!json_array_size(devices)) {
		puts_(b, "<p>no GPUs</p>\n</section>\n");
		return;
	}
	puts_(b,
		"<table>\n<thead><tr><th>Device</th><th>Health</th>"
		"<th>Held by, for how long</th></tr></thead>\n<tbody>\n");
	json_array_foreach(devices, i, d)
		device_row(b, d, now);
	puts_(b, "</tbody>\n</table>\n</section>\n");
}

static void
queue_section(struct buf *b, const json_t *queue, long long now)
{
	json_t *q;
	size_t i;

	puts_(b, "<section>\n<h2>Queue</h2>\n");
	if (!json_array_size(queue)) {
		puts_(b, "<p>nothing waits</p>\n</section>\n");
		return;
	}
	puts_(b,
		"<table>\n<thead><tr><th>Waiting</th><th>Wants</th>"
		"<th>For</th></tr></thead>\n<tbody>\n");
	json_array_foreach(queue, i, q) {
		puts_(b, "<tr><td>");
		esc(b, str(q, "kind"));
		puts_(b, " ");
		esc(b, str(q, "name"));
		puts_(b, "</td><td>");
		esc(b, str(q, "wants"));
		puts_(b, "</td><td>");
		if (since(q) >= 0)
			dur(b, since(q), now);
		puts_(b, "</td></tr>\n");
	}
	puts_(b, "</tbody>\n</table>\n</section>\n");
}

/* summary appends "N nodes, G GPUs and M MIG devices: F free, H held,
 * U unhealthy". */
static void
summary(struct buf *b, const json_t *nodes)
{
	long long gpus = 0, migs = 0, free_ = 0, held = 0, bad = 0;
	json_t *n, *d;
	const char *h;
	size_t i, j;

	json_array_foreach(nodes, i, n) {
		json_array_foreach(json_object_get(n, "devices"), j, d) {
			h = str(d, "health");
			*(str(d, "mig") ? &migs : &gpus) += 1;
			if (h && !strcmp(h, "unhealthy"))
				bad++;
			if (json_array_size(json_object_get(d, "holders")))
				held++;
			else if (!h || strcmp(h, "unhealthy"))
				free_++;
		}
	}
	putf(b, "<p class=\"sum\">%zu node%s, %lld GPU%s",
		json_array_size(nodes), json_array_size(nodes) == 1 ? "" : "s",
		gpus, gpus == 1 ? "" : "s");
	if (migs)
		putf(b, " and %lld MIG device%s", migs, migs == 1 ? "" : "s");
	putf(b, ": %lld free, %lld held, %lld unhealthy</p>\n", free_, held,
		bad);
}

/* render appends the page of state to b; now is its "now" when it has
 * one (so a page of a fixture is always the same), else the clock. */
static void
render(struct buf *b, const json_t *state, int refresh)
{
	const char *title = str(state, "title");
	json_t *now_v = json_object_get(state, "now"), *v;
	json_t *nodes = json_object_get(state, "nodes");
	long long now = json_is_integer(now_v) ? json_integer_value(now_v)
					       : (long long)time(NULL);
	char stamp[32];
	time_t t = (time_t)now;
	struct tm tm;
	size_t i;

	if (!title)
		title = "k8shazgpu status";
	gmtime_r(&t, &tm);
	strftime(stamp, sizeof stamp, "%Y-%m-%d %H:%M:%S UTC", &tm);
	puts_(b,
		"<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n"
		"<meta charset=\"utf-8\">\n<meta name=\"viewport\" "
		"content=\"width=device-width, initial-scale=1\">\n");
	if (refresh > 0)
		putf(b, "<meta http-equiv=\"refresh\" content=\"%d\">\n",
			refresh);
	puts_(b, "<title>");
	esc(b, title);
	puts_(b, "</title>\n<style>\n");
	puts_(b, style);
	puts_(b, "</style>\n</head>\n<body>\n<h1>");
	esc(b, title);
	putf(b, "</h1>\n<p class=\"when\">as of %s", stamp);
	if (refresh > 0)
		putf(b, ", refreshed every %d s", refresh);
	puts_(b, "</p>\n");
	json_array_foreach(json_object_get(state, "missing"), i, v) {
		puts_(b, "<p class=\"missing\">Missing: ");
		esc(b, json_string_value(v));
		puts_(b, "</p>\n");
	}
	summary(b, nodes);
	if (!json_array_size(nodes))
		puts_(b, "<p>no GPU nodes</p>\n");
	json_array_foreach(nodes, i, v)
		node_section(b, v, now);
	queue_section(b, json_object_get(state, "queue"), now);
	puts_(b, "</body>\n</html>\n");
}

/* ---- gathering the state ---- */

/* run_gather runs argv with stdout into a pipe, for at most timeout
 * seconds, and returns what it printed parsed; NULL with why (malloc'd)
 * when it could not be run, failed, timed out or printed no JSON. */
static json_t *
run_gather(char *const *argv, int timeout, char **why)
{
	posix_spawn_file_actions_t fa;
	posix_spawnattr_t attr;
	struct buf out = {0};
	struct timespec t0, t1;
	json_error_t jerr;
	int fd[2], st, r, left, killed = 0;
	char chunk[65536];
	json_t *state = NULL;
	ssize_t got;
	pid_t pid;

	*why = NULL;
	if (pipe2(fd, O_CLOEXEC) < 0) {
		*why = easprintf("pipe: %s", strerror(errno));
		return NULL;
	}
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_adddup2(&fa, fd[1], 1);
	/* a group of its own, so that a gather past its time is killed with
	 * every process it started */
	posix_spawnattr_init(&attr);
	posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP);
	posix_spawnattr_setpgroup(&attr, 0);
	r = posix_spawnp(&pid, argv[0], &fa, &attr, argv, environ);
	posix_spawnattr_destroy(&attr);
	posix_spawn_file_actions_destroy(&fa);
	close(fd[1]);
	if (r) {
		close(fd[0]);
		*why = easprintf("%s: %s", argv[0], strerror(r));
		return NULL;
	}
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (;;) {
		struct pollfd p = {fd[0], POLLIN, 0};

		clock_gettime(CLOCK_MONOTONIC, &t1);
		left = timeout * 1000 -
			(int)((t1.tv_sec - t0.tv_sec) * 1000 +
				(t1.tv_nsec - t0.tv_nsec) / 1000000);
		if (left <= 0 || out.len > MAX_STATE) {
			kill(-pid, SIGKILL);
			killed = 1;
			break;
		}
		if (poll(&p, 1, left) < 0 && errno != EINTR)
			break;
		if (!p.revents)
			continue;
		got = read(fd[0], chunk, sizeof chunk);
		if (got < 0 && errno == EINTR)
			continue;
		if (got <= 0)
			break;
		put(&out, chunk, (size_t)got);
	}
	close(fd[0]);
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	if (killed)
		*why = easprintf(out.len > MAX_STATE
				? "%s: printed over %d bytes"
				: "%s: still running after %d s",
			argv[0], out.len > MAX_STATE ? MAX_STATE : timeout);
	else if (!WIFEXITED(st) || WEXITSTATUS(st))
		*why = easprintf("%s: exit status %d", argv[0],
			WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st));
	else if (!(state = json_loadb(out.s ? out.s : "", out.len, 0, &jerr)))
		*why = easprintf("%s: no state: %s", argv[0],
			err_clean(jerr.text));
	else if (!json_is_object(state)) {
		*why = easprintf("%s: no state: no JSON object", argv[0]);
		json_decref(state);
		state = NULL;
	}
	free(out.s);
	return state;
}

/* ---- serving ---- */

struct conf {
	char *const *argv;
	int refresh, timeout;
};

static void
handle(const struct httpd_req *q, struct httpd_reply *p, void *arg)
{
	const struct conf *cf = arg;
	struct buf b = {0};
	json_t *state;
	char *why;

	p->content_type = "text/plain; charset=utf-8";
	if (strcmp(q->method, "GET") && strcmp(q->method, "HEAD")) {
		p->status = 405;
		p->body = estrdup("method not allowed\n");
	} else if (!strcmp(q->path, "/healthz")) {
		p->body = estrdup("ok\n");
	} else if (strcmp(q->path, "/")) {
		p->status = 404;
		p->body = estrdup("not found\n");
	} else {
		if (!(state = run_gather(cf->argv, cf->timeout, &why))) {
			err_warn("%s", why);
			state = json_pack("{s:[s+]}", "missing",
				"the state: ", why);
			free(why);
		}
		render(&b, state, cf->refresh);
		json_decref(state);
		p->content_type = "text/html; charset=utf-8";
		p->body = b.s;
	}
	p->len = strlen(p->body);
}

static int
serve(const char *addr, struct conf *cf)
{
	struct httpd_opts o = {.listen = addr,
		.threads = 2,
		.max_body = 4096,
		.idle_timeout = 30,
		.request_timeout = 10,
		.max_connections = 64,
		.per_ip = 16,
		.handler = handle,
		.arg = cf};
	struct httpd *h;
	char err[512];
	sigset_t sigs;
	int sig;

	sigemptyset(&sigs);
	sigaddset(&sigs, SIGTERM);
	sigaddset(&sigs, SIGINT);
	pthread_sigmask(SIG_BLOCK, &sigs, NULL);
	if (!(h = httpd_start(&o, err, sizeof err)))
		err_die(HAZ_FAIL, "%s", err);
	if (printf("serving http://%.*s:%d/\n",
		    (int)(strrchr(addr, ':') - addr), addr,
		    httpd_port(h)) < 0 ||
		fflush(stdout) == EOF)
		err_die(HAZ_FAIL, "stdout:");
	sigwait(&sigs, &sig);
	httpd_stop(h, 5);
	return HAZ_OK;
}

/* ---- main ---- */

static int
number(const char *opt, const char *s, int min)
{
	char *end;
	long v = strtol(s, &end, 10);

	if (*s == '\0' || *end || v < min || v > 86400)
		err_die(HAZ_USAGE, "-%s: not a number of seconds: %s", opt, s);
	return (int)v;
}

/* page writes the page of the state in file ("-": standard input). */
static int
page(const char *file, int refresh)
{
	json_error_t jerr;
	struct buf b = {0};
	json_t *state;
	int ok, saved;

	state = strcmp(file, "-") ? json_load_file(file, 0, &jerr)
				  : json_loadf(stdin, 0, &jerr);
	if (!state && jerr.line < 1) /* no text was read */
		err_die(HAZ_FAIL, "%s", err_clean(jerr.text));
	if (!state)
		err_die(HAZ_FAIL, "%s:%d: invalid JSON: %s",
			strcmp(file, "-") ? file : "<stdin>", jerr.line,
			err_clean(jerr.text));
	if (!json_is_object(state)) {
		json_decref(state);
		err_die(HAZ_FAIL, "%s: the state is no JSON object",
			strcmp(file, "-") ? file : "<stdin>");
	}
	render(&b, state, refresh);
	json_decref(state);
	ok = fwrite(b.s, 1, b.len, stdout) == b.len && fclose(stdout) != EOF;
	saved = errno;
	free(b.s);
	errno = saved;
	if (!ok)
		err_die(HAZ_FAIL, "stdout:");
	return HAZ_OK;
}

int
main(int argc, char **argv)
{
	struct conf cf = {NULL, 10, 20};
	const char *addr = NULL;
	int ch;

	err_init(argv[0]);
	while ((ch = getopt(argc, argv, "+l:r:T:hV")) != -1) {
		switch (ch) {
		case 'l': addr = optarg; break;
		case 'r': cf.refresh = number("r", optarg, 0); break;
		case 'T': cf.timeout = number("T", optarg, 1); break;
		case 'h':
			fputs(usage_text, stdout);
			puts("Write the HTML page of a GPU state (JSON; status-page(1)), or\n"
			     "with -l serve it, running the command for each request.\n"
			     "  -l ADDR:PORT  serve there (127.0.0.1:0 picks a port)\n"
			     "  -r SECONDS    the page refreshes itself so often (default 10,\n"
			     "                0 never)\n"
			     "  -T SECONDS    the command's time to print the state (default 20)");
			return HAZ_OK;
		case 'V': puts("status-page " HAZ_VERSION); return HAZ_OK;
		default: usage();
		}
	}
	if (addr) {
		if (optind >= argc || !strrchr(addr, ':'))
			usage();
		cf.argv = argv + optind;
		return serve(addr, &cf);
	}
	if (argc - optind > 1)
		usage();
	return page(optind < argc ? argv[optind] : "-", cf.refresh);
}
