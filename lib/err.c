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

/* err_vsay writes `tool: ` and the message to stderr in one write, with
 * every control character and byte of invalid UTF-8 of the formatted
 * text turned into '?': names and values quoted from input reach a
 * terminal or a log as what they are, never as escape sequences. */
void
err_vsay(const char *fmt, va_list ap, int with_errno)
{
	char small[1024], *msg = small;
	int saved = errno, n;
	va_list copy;

	va_copy(copy, ap);
	n = vsnprintf(small, sizeof small, fmt, copy);
	va_end(copy);
	if (n >= (int)sizeof small && (msg = malloc((size_t)n + 1)))
		vsnprintf(msg, (size_t)n + 1, fmt, ap);
	else if (n >= (int)sizeof small)
		msg = small; /* cut, but said */
	if (n < 0)
		snprintf(small, sizeof small, "(unprintable message)");
	err_clean(msg);
	if (with_errno)
		fprintf(stderr, "%s: %s %s\n", err_prog, msg, strerror(saved));
	else
		fprintf(stderr, "%s: %s\n", err_prog, msg);
	if (msg != small)
		free(msg);
}

static void
vwarn(const char *fmt, va_list ap)
{
	size_t len = strlen(fmt);

	err_vsay(fmt, ap, len && fmt[len - 1] == ':');
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

/* err_utf8_len returns the length of the well-formed UTF-8 sequence at p
 * (lead byte >= 0x80), or 0: no overlongs, surrogates or values past
 * U+10FFFF. */
int
err_utf8_len(const unsigned char *p, const unsigned char *end)
{
	unsigned c = p[0], lo = 0x80, hi = 0xbf;
	int n, i;

	if (c >= 0xc2 && c <= 0xdf)
		n = 2;
	else if (c >= 0xe0 && c <= 0xef)
		n = 3;
	else if (c >= 0xf0 && c <= 0xf4)
		n = 4;
	else
		return 0;
	if (end - p < n)
		return 0;
	if (c == 0xe0)
		lo = 0xa0;
	else if (c == 0xed)
		hi = 0x9f;
	else if (c == 0xf0)
		lo = 0x90;
	else if (c == 0xf4)
		hi = 0x8f;
	if (p[1] < lo || p[1] > hi)
		return 0;
	for (i = 2; i < n; i++)
		if (p[i] < 0x80 || p[i] > 0xbf)
			return 0;
	return n;
}

char *
err_clean(char *s)
{
	unsigned char *p = (unsigned char *)s, *end = p + strlen(s);
	int n;

	while (p < end) {
		if (*p < ' ' || *p == 0x7f)
			*p++ = '?';
		else if (*p < 0x80)
			p++;
		else if ((n = err_utf8_len(p, end)))
			p += n;
		else
			*p++ = '?';
	}
	return s;
}
