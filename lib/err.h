/* err: one way to report trouble for every tool.
 *
 * Messages read `tool: what failed: why`, lowercase, no trailing period.
 * A format ending in ':' has strerror(errno) appended.
 *
 * Threads: any thread: each message is one write to stderr, never
 * interleaved with another's. err_prog is set once, before threads start. */
#ifndef HAZ_ERR_H
#define HAZ_ERR_H

#include <stdarg.h>
#include <stddef.h>

/* Exit statuses, the same for every tool (see k8shazgpu(7)). */
enum {
	HAZ_OK = 0,    /* everything done */
	HAZ_FAIL = 1,  /* some record or operation failed */
	HAZ_USAGE = 2, /* bad options or arguments */
	HAZ_TEMP = 75, /* temporary failure worth retrying */
};

extern const char *err_prog;

/* err_init sets the program name used in every message from argv[0]. */
void err_init(const char *argv0);
void err_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void err_die(int status, const char *fmt, ...)
	__attribute__((format(printf, 2, 3), noreturn));

/* err_vsay writes "tool: " and fmt's message (control characters
 * and invalid UTF-8 shown as '?'), then strerror of the errno on entry
 * when with_errno, and a newline: the one writer of every diagnostic. */
void err_vsay(const char *fmt, va_list ap, int with_errno);

/* e* wrappers: allocate or die with status 1. */
void *emalloc(size_t n);
void *ecalloc(size_t n, size_t size);
void *erealloc(void *p, size_t n);
char *estrdup(const char *s);
/* easprintf returns a malloc'd formatted string or dies. */
char *easprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* err_utf8_len returns the length of the well-formed UTF-8 sequence at p
 * (lead byte >= 0x80, ending by end), or 0: no overlongs, surrogates or
 * values past U+10FFFF. */
int err_utf8_len(const unsigned char *p, const unsigned char *end);

/* err_clean turns each byte of s that is a control character or no part
 * of valid UTF-8 into '?', in place, and returns s: a message quoting
 * bad input (jansson's "near '...'"), or cut inside a character by a
 * precision, is then safe on a terminal and a valid JSON string. */
char *err_clean(char *s);

#endif
