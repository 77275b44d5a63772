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

/* open_socket connects r->c to the address, without a timeout when
 * r->timeout_s is 0. Returns the context (maybe with err set). */
static redisContext *
open_socket(struct rd *r)
{
	const char *a = r->addr, *colon;
	struct timeval tv = tv_of(r->timeout_s > 0 ? r->timeout_s : 5);
	redisContext *c;
	char *host;
	int port = 6379;

	if (strncmp(a, "unix:", 5) == 0)
		return redisConnectUnixWithTimeout(a + 5, tv);
	if (a[0] == '/')
		return redisConnectUnixWithTimeout(a, tv);
	if (a[0] == '[') {
		colon = strchr(a, ']');
		if (!colon)
			err_die(HAZ_USAGE, "redis %s: bad address", a);
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

		if (*end || end == colon + 1 || p < 1 || p > 65535)
			err_die(HAZ_USAGE, "redis %s: bad port", a);
		port = (int)p;
	}
	if (!*host)
		err_die(HAZ_USAGE, "redis %s: bad address", a);
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
	redisReply *y;

	memset(r, 0, sizeof *r);
	r->addr = estrdup(addr);
	r->password = password ? estrdup(password) : NULL;
	r->db = db;
	r->timeout_s = timeout_s;
	r->c = open_socket(r);
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
	memset(r, 0, sizeof *r);
}

redisReply *
rd_cmd(struct rd *r, const char *fmt, ...)
{
	redisReply *y;
	va_list ap;

	va_start(ap, fmt);
	y = redisvCommand(r->c, fmt, ap);
	va_end(ap);
	if (!y)
		rd_dead(r, NULL);
	return y;
}

redisReply *
rd_cmdv(struct rd *r, int argc, const char **argv, const size_t *lens)
{
	redisReply *y = redisCommandArgv(r->c, argc, argv, lens);

	if (!y)
		rd_dead(r, NULL);
	return y;
}

int
rd_is_error(const redisReply *y)
{
	return y->type == REDIS_REPLY_ERROR;
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
		sha1_hex(s->src, strlen(s->src), s->sha);
	args[0] = "EVALSHA";
	args[1] = s->sha;
	args[2] = "0";
	for (i = 0; i < argc; i++)
		args[3 + i] = argv[i];
	y = rd_cmdv(r, argc + 3, args, NULL);
	if (y->type == REDIS_REPLY_ERROR &&
		strncmp(y->str, "NOSCRIPT", 8) == 0) {
		freeReplyObject(y);
		args[0] = "EVAL";
		args[1] = s->src;
		y = rd_cmdv(r, argc + 3, args, NULL);
	}
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
	return r->c->fd;
}
