/* h1: test driver for lib/h1.
 *
 *	h1 head METHOD TARGET HOST BODYLEN [LINE...]
 *	        h1_head's request head, CR shown as \r
 *	h1 read [-p PIECE] [-m MAX] [-M METHOD] [-f FAIL]
 *	        stdin's answers, one after another on one connection, read
 *	        PIECE bytes at a time (default all there is) as a socket
 *	        would hand them, the body at most MAX bytes (default 1 MiB):
 *	        "answer CODE keep=K after=A len=N" and the body (bytes
 *	        outside 32 to 126 but \n as \xNN) for each, until one fails
 *	        or none is left: "error NAME got=G: WHY" or "end". With -f,
 *	        reading fails (-1) after FAIL bytes instead of ending.
 *
 * Exit 0, or 2 for usage. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "err.h"
#include "h1.h"

static void
usage(void)
{
	fputs("usage: h1 head METHOD TARGET HOST BODYLEN [LINE...] | "
	      "read [-p PIECE] [-m MAX] [-M METHOD] [-f FAIL]\n",
		stderr);
	exit(HAZ_USAGE);
}

struct src {
	char *p;
	size_t n, at, piece;
	long fail; /* -1 when none */
};

static ssize_t
src_read(void *arg, char *buf, size_t cap)
{
	struct src *s = arg;
	size_t n = s->n - s->at;

	if (s->fail >= 0 && s->at >= (size_t)s->fail)
		return -1;
	if (s->piece && n > s->piece)
		n = s->piece;
	if (n > cap)
		n = cap;
	memcpy(buf, s->p + s->at, n);
	s->at += n;
	return (ssize_t)n;
}

static void
show(const char *p, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)p[i];
		if ((c >= 32 && c <= 126) || c == '\n')
			putchar(c);
		else
			printf("\\x%02x", c);
	}
}

static const char *const names[] = {"ok", "read", "end", "bad", "big"};

static int
read_answers(int argc, char **argv)
{
	struct src s = {.fail = -1};
	struct h1_in in = {.read = src_read, .arg = &s};
	struct h1_answer a;
	const char *method = "GET";
	size_t max = 1 << 20, cap = 0, got;
	enum h1_status st;
	char why[256];
	int ch;

	while ((ch = getopt(argc, argv, "p:m:M:f:")) != -1) {
		if (ch == 'p')
			s.piece = strtoul(optarg, NULL, 10);
		else if (ch == 'm')
			max = strtoul(optarg, NULL, 10);
		else if (ch == 'M')
			method = optarg;
		else if (ch == 'f')
			s.fail = strtol(optarg, NULL, 10);
		else
			usage();
	}
	do {
		if (s.n + 4096 > cap)
			s.p = erealloc(s.p, cap = 2 * cap + 4096);
		got = fread(s.p + s.n, 1, 4096, stdin);
		s.n += got;
	} while (got);
	for (;;) {
		if (in.off == in.len && s.at == s.n && s.fail < 0) {
			puts("end");
			break;
		}
		st = h1_read(&in, method, max, 1e9, &a, why, sizeof why);
		if (st != H1_OK) {
			printf("error %s got=%zu: %s\n", names[st], in.got,
				why);
			h1_answer_free(&a);
			break;
		}
		printf("answer %ld keep=%d after=%g len=%zu\n", a.code, a.keep,
			a.after, a.len);
		show(a.body ? a.body : "", a.len);
		if (a.len)
			putchar('\n');
		h1_answer_free(&a);
	}
	h1_in_free(&in);
	free(s.p);
	return 0;
}

int
main(int argc, char **argv)
{
	char *h;
	size_t n;

	err_init("h1");
	if (argc >= 6 && !strcmp(argv[1], "head")) {
		h = h1_head(argv[2], argv[3], argv[4],
			(const char *const *)argv + 6, (size_t)(argc - 6),
			strtoll(argv[5], NULL, 10), &n);
		for (size_t i = 0; i < n; i++)
			fputs(h[i] == '\r' ? "\\r" : (char[]){h[i], 0}, stdout);
		free(h);
		return 0;
	}
	if (argc >= 2 && !strcmp(argv[1], "read"))
		return read_answers(argc - 1, argv + 1);
	usage();
	return HAZ_USAGE;
}
