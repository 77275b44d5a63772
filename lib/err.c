/* err: diagnostics and die-on-failure allocation helpers. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "err.h"

const char *err_prog = "k8shazgpu";

void
err_init(const char *argv0)
{
	const char *slash;

	if (!argv0 || !*argv0)
		return;
	slash = strrchr(argv0, '/');
	err_prog = slash ? slash + 1 : argv0;
}

static void
vwarn(const char *fmt, va_list ap)
{
	int saved = errno;
	size_t len = strlen(fmt);

	fprintf(stderr, "%s: ", err_prog);
	vfprintf(stderr, fmt, ap);
	if (len && fmt[len - 1] == ':')
		fprintf(stderr, " %s", strerror(saved));
	fputc('\n', stderr);
}

void
err_warn(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vwarn(fmt, ap);
	va_end(ap);
}

void
err_die(int status, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vwarn(fmt, ap);
	va_end(ap);
	exit(status);
}

void *
emalloc(size_t n)
{
	void *p = malloc(n ? n : 1);

	if (!p)
		err_die(HAZ_FAIL, "malloc:");
	return p;
}

void *
ecalloc(size_t n, size_t size)
{
	void *p = calloc(n ? n : 1, size ? size : 1);

	if (!p)
		err_die(HAZ_FAIL, "calloc:");
	return p;
}

void *
erealloc(void *p, size_t n)
{
	p = realloc(p, n ? n : 1);
	if (!p)
		err_die(HAZ_FAIL, "realloc:");
	return p;
}

char *
estrdup(const char *s)
{
	char *p = strdup(s);

	if (!p)
		err_die(HAZ_FAIL, "strdup:");
	return p;
}

char *
easprintf(const char *fmt, ...)
{
	va_list ap;
	char *s;
	int n;

	va_start(ap, fmt);
	n = vasprintf(&s, fmt, ap);
	va_end(ap);
	if (n < 0)
		err_die(HAZ_FAIL, "vasprintf:");
	return s;
}

/* utf8_len returns the length of the valid UTF-8 sequence at s, or 0. */
static int
utf8_len(const unsigned char *s)
{
	unsigned cp, n, i;

	if (s[0] < 0x80)
		return 1;
	if (s[0] >= 0xc2 && s[0] <= 0xdf)
		n = 2, cp = s[0] & 0x1f;
	else if (s[0] >= 0xe0 && s[0] <= 0xef)
		n = 3, cp = s[0] & 0x0f;
	else if (s[0] >= 0xf0 && s[0] <= 0xf4)
		n = 4, cp = s[0] & 0x07;
	else
		return 0;
	for (i = 1; i < n; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = cp << 6 | (s[i] & 0x3f);
	}
	if ((n == 3 && cp < 0x800) || (n == 4 && (cp < 0x10000 || cp > 0x10ffff)) ||
		(cp >= 0xd800 && cp <= 0xdfff))
		return 0;
	return (int)n;
}

char *
err_clean(char *s)
{
	unsigned char *p = (unsigned char *)s;
	int n;

	while (*p) {
		if (*p < ' ' || *p == 0x7f)
			*p++ = '?';
		else if ((n = utf8_len(p)))
			p += n;
		else
			*p++ = '?';
	}
	return s;
}
