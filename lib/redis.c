/* redis: a hiredis connection with k8shazgpu's failure rules. */
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>

#include "err.h"
#include "redis.h"
#include "sha1.h"

static struct timeval
tv_of(double s)
{
	struct timeval tv;

	tv.tv_sec = (time_t)s;
	tv.tv_usec = (suseconds_t)((s - (double)tv.tv_sec) * 1e6);
	return tv;
}

sigjmp_buf *rd_recover;

void
rd_dead(struct rd *r, const char *why)
{
	const char *e = r->c && r->c->err ? r->c->errstr : why;

	if (!e || !*e)
		e = "connection lost";
	if (rd_recover) {
		err_warn("redis %s: %s", r->addr, e);
		siglongjmp(*rd_recover, 1);
	}
	err_die(HAZ_TEMP, "redis %s: %s", r->addr, e);
}

void
rd_fail(struct rd *r, redisReply *y, int status, const char *what)
{
	char why[512];

	snprintf(why, sizeof why, "%s",
		y && y->type == REDIS_REPLY_ERROR ? y->str
						  : "unexpected reply");
	if (y)
		freeReplyObject(y);
	err_die(status, "redis %s: %s: %s", r->addr, what, err_clean(why));
}

/* open_socket connects to r's address, with r->timeout_s (5 s when 0)
 * to connect. Returns the context (maybe with err set), or NULL: out of
 * memory, or the address unusable (*bad says how). */
static redisContext *
open_socket(struct rd *r, const char **bad)
{
	const char *a = r->addr, *colon;
	struct timeval tv = tv_of(r->timeout_s > 0 ? r->timeout_s : 5);
	redisContext *c;
	char *host;
	int port = 6379;

	*bad = NULL;
	if (strncmp(a, "unix:", 5) == 0)
		return redisConnectUnixWithTimeout(a + 5, tv);
	if (a[0] == '/')
		return redisConnectUnixWithTimeout(a, tv);
	if (a[0] == '[') {
		colon = strchr(a, ']');
		if (!colon) {
			*bad = "bad address";
			return NULL;
		}
		host = estrdup(a + 1);
		host[colon - a - 1] = '\0';
		colon = colon[1] == ':' ? colon + 1 : NULL;
	} else {
		colon = strrchr(a, ':');
		host = estrdup(a);
		if (colon)
			host[colon - a] = '\0';
	}
	if (colon) {
		char *end;
		long p = strtol(colon + 1, &end, 10);

		if (*end || end == colon + 1 || p < 1 || p > 65535) {
			free(host);
			*bad = "bad port";
			return NULL;
		}
		port = (int)p;
	}
	if (!*host) {
		free(host);
		*bad = "bad address";
		return NULL;
	}
	c = redisConnectWithTimeout(host, port, tv);
	free(host);
	return c;
}

/* refused says whether an error reply means the password was refused or
 * is needed. */
static int
refused(const redisReply *y)
{
	return y->type == REDIS_REPLY_ERROR &&
		(strncmp(y->str, "WRONGPASS", 9) == 0 ||
			strncmp(y->str, "NOAUTH", 6) == 0 ||
			strstr(y->str, "invalid password") ||
			strstr(y->str, "no password is set"));
}

void
rd_connect(struct rd *r, const char *addr, int db, const char *password,
	double timeout_s)
{
	const char *bad;
	redisReply *y;

	memset(r, 0, sizeof *r);
	r->addr = estrdup(addr);
	r->password = password ? estrdup(password) : NULL;
	r->db = db;
	r->timeout_s = timeout_s;
	r->c = open_socket(r, &bad);
	if (!r->c && bad)
		err_die(HAZ_USAGE, "redis %s: %s", addr, bad);
	if (!r->c)
		err_die(HAZ_FAIL, "redis %s: out of memory", addr);
	if (r->c->err)
		rd_dead(r, NULL);
	if (timeout_s > 0)
		redisSetTimeout(r->c, tv_of(timeout_s));
	if (r->password) {
		const char *argv[] = {"AUTH", r->password};

		y = rd_cmdv(r, 2, argv, NULL);
		if (y->type == REDIS_REPLY_ERROR)
			rd_fail(r, y, HAZ_FAIL, "authentication failed");
		freeReplyObject(y);
	}
	y = rd_cmd(r, "SELECT %d", db);
	if (refused(y))
		rd_fail(r, y, HAZ_FAIL, "authentication failed");
	if (y->type == REDIS_REPLY_ERROR)
		rd_fail(r, y, HAZ_FAIL, "select");
	freeReplyObject(y);
}

/* ---- soft connections ---- */

/* set_why replaces r->why with "redis ADDR: " and the message, its
 * control characters cleaned. */
static void
set_why(struct rd *r, const char *fmt, ...)
{
	char buf[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof buf, fmt, ap);
	va_end(ap);
	free(r->why);
	r->why = easprintf("redis %s: %s", r->addr, buf);
	err_clean(r->why);
}

static void
hang_up(struct rd *r)
{
	if (r->c)
		redisFree(r->c);
	r->c = NULL;
}

/* setup_reply checks the reply y to a command of dial's (what: for the
 * message) and frees it. Returns 0, or HAZ_TEMP / HAZ_FAIL after hanging
 * up with r->why set. */
static int
setup_reply(struct rd *r, redisReply *y, const char *what)
{
	int status = HAZ_FAIL;

	if (!y) {
		set_why(r, "%s", r->c->err ? r->c->errstr : "connection lost");
		hang_up(r);
		return HAZ_TEMP;
	}
	if (refused(y))
		set_why(r, "authentication failed: %s", y->str);
	else if (y->type == REDIS_REPLY_ERROR)
		set_why(r, "%s: %s", what, y->str);
	else
		status = HAZ_OK;
	freeReplyObject(y);
	if (status != HAZ_OK)
		hang_up(r);
	return status;
}

/* dial connects the soft r: socket, AUTH, SELECT. Returns 0, or
 * HAZ_TEMP / HAZ_FAIL with r->why set and no connection left. */
static int
dial(struct rd *r)
{
	const char *bad, *argv[2];
	int status;

	r->c = open_socket(r, &bad);
	if (!r->c) {
		set_why(r, "%s", bad ? bad : "out of memory");
		return HAZ_FAIL;
	}
	if (r->c->err) {
		set_why(r, "%s", r->c->errstr);
		hang_up(r);
		return HAZ_TEMP;
	}
	if (r->timeout_s > 0)
		redisSetTimeout(r->c, tv_of(r->timeout_s));
	if (r->password) {
		argv[0] = "AUTH";
		argv[1] = r->password;
		status = setup_reply(r, redisCommandArgv(r->c, 2, argv, NULL),
			"authentication failed");
		if (status)
			return status;
	}
	return setup_reply(r, redisCommand(r->c, "SELECT %d", r->db), "select");
}

int
rd_try_connect(struct rd *r, const char *addr, int db, const char *password,
	double timeout_s, char **why)
{
	int status;

	memset(r, 0, sizeof *r);
	r->addr = estrdup(addr);
	r->password = password ? estrdup(password) : NULL;
	r->db = db;
	r->timeout_s = timeout_s;
	r->soft = 1;
	status = dial(r);
	*why = status ? estrdup(r->why) : NULL;
	return status;
}

/* lost answers a command that got no reply: the end of the tool, or on
 * a soft connection NULL with the connection gone. */
static redisReply *
lost(struct rd *r)
{
	if (!r->soft)
		rd_dead(r, NULL);
	set_why(r, "%s", r->c->err ? r->c->errstr : "connection lost");
	hang_up(r);
	return NULL;
}

void
rd_close(struct rd *r)
{
	if (r->c)
		redisFree(r->c);
	if (r->password) {
		memset(r->password, 0, strlen(r->password));
		free(r->password);
	}
	free(r->addr);
	free(r->why);
	memset(r, 0, sizeof *r);
}

redisReply *
rd_cmd(struct rd *r, const char *fmt, ...)
{
	redisReply *y;
	va_list ap;

	if (r->soft && !r->c && dial(r))
		return NULL;
	va_start(ap, fmt);
	y = redisvCommand(r->c, fmt, ap);
	va_end(ap);
	return y ? y : lost(r);
}

redisReply *
rd_cmdv(struct rd *r, int argc, const char **argv, const size_t *lens)
{
	redisReply *y;

	if (r->soft && !r->c && dial(r))
		return NULL;
	y = redisCommandArgv(r->c, argc, argv, lens);
	return y ? y : lost(r);
}

int
rd_is_error(const redisReply *y)
{
	return y->type == REDIS_REPLY_ERROR;
}

void
rd_script_sha(struct rd_script *s)
{
	sha1_hex(s->src, strlen(s->src), s->sha);
}

redisReply *
rd_eval(struct rd *r, struct rd_script *s, int argc, const char **argv)
{
	const char *args[16];
	redisReply *y;
	int i;

	if (argc > 13)
		err_die(HAZ_FAIL, "rd_eval: too many arguments");
	if (!s->sha[0])
		rd_script_sha(s);
	args[0] = "EVALSHA";
	args[1] = s->sha;
	args[2] = "0";
	for (i = 0; i < argc; i++)
		args[3 + i] = argv[i];
	if (r->soft && !r->c && dial(r))
		return NULL;
	if (r->timeout_s > 0 && r->timeout_s < RD_SCRIPT_WAIT)
		redisSetTimeout(r->c, tv_of(RD_SCRIPT_WAIT));
	y = redisCommandArgv(r->c, argc + 3, args, NULL);
	if (y && y->type == REDIS_REPLY_ERROR &&
		strncmp(y->str, "NOSCRIPT", 8) == 0) {
		freeReplyObject(y);
		args[0] = "EVAL";
		args[1] = s->src;
		y = redisCommandArgv(r->c, argc + 3, args, NULL);
	}
	if (!y && r->c->err == REDIS_ERR_IO &&
		(errno == EAGAIN || errno == EWOULDBLOCK)) {
		char why[160];

		snprintf(why, sizeof why,
			"no answer to the %s script in %d s; it may have "
			"been carried out (see gpu-reserve status)",
			s->name ? s->name : "ledger", RD_SCRIPT_WAIT);
		hang_up(r);
		if (!r->soft)
			rd_dead(r, why);
		set_why(r, "%s", why);
		return NULL;
	}
	if (!y)
		return lost(r);
	if (r->timeout_s > 0 && r->timeout_s < RD_SCRIPT_WAIT)
		redisSetTimeout(r->c, tv_of(r->timeout_s));
	return y;
}

int
rd_psubscribe(struct rd *r, const char *pattern, char **why)
{
	redisReply *y;

	*why = NULL;
	redisSetTimeout(r->c, tv_of(0));
	y = rd_cmd(r, "PSUBSCRIBE %s", pattern);
	if (y->type == REDIS_REPLY_ERROR) {
		*why = estrdup(y->str);
		freeReplyObject(y);
		return -1;
	}
	freeReplyObject(y);
	return 0;
}

void
rd_read_input(struct rd *r)
{
	if (redisBufferRead(r->c) != REDIS_OK)
		rd_dead(r, NULL);
}

char *
rd_pop_message(struct rd *r)
{
	redisReply *y = NULL;
	char *chan;

	if (redisGetReplyFromReader(r->c, (void **)&y) != REDIS_OK)
		rd_dead(r, NULL);
	if (!y)
		return NULL;
	/* pmessage pattern channel payload; message channel payload */
	if (y->type == REDIS_REPLY_ARRAY && y->elements == 4 &&
		y->element[2]->type == REDIS_REPLY_STRING)
		chan = estrdup(y->element[2]->str);
	else if (y->type == REDIS_REPLY_ARRAY && y->elements == 3 &&
		y->element[1]->type == REDIS_REPLY_STRING)
		chan = estrdup(y->element[1]->str);
	else
		chan = estrdup("");
	freeReplyObject(y);
	return chan;
}

int
rd_fd(const struct rd *r)
{
	return r->c ? r->c->fd : -1;
}
