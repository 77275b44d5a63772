/* quantity: test driver for lib/quantity.
 *
 * Reads lines from stdin and prints one result line for each:
 *
 *	QTY             the canonical form of QTY (the whole line, as is)
 *	add A B         A+B, canonical
 *	sub A B         A-B, canonical
 *
 * A huge value (10^38 units or more) is followed by " huge".
 *	cmp A B         -1, 0 or 1
 *	value A         A in units, rounded away from zero
 *	milli A         A in thousandths, rounded away from zero
 *	bytes N         the integer N as a binary (memory) quantity
 *	millis N        N thousandths as a decimal quantity
 *
 * Failures print `error: reason`; a bad quantity is named in it. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "err.h"
#include "quantity.h"

static int
parse(const char *s, struct qty *q)
{
	int err = qty_parse(q, s);

	if (err != QTY_OK)
		printf("error: \"%s\": %s\n", s, qty_strerror(err));
	return err;
}

static void
print(const struct qty *q)
{
	char buf[QTY_BUFSIZE];

	printf("%s%s\n", qty_format(q, buf), qty_huge(q) ? " huge" : "");
}

static void
binary_op(const char *op, const char *x, const char *y)
{
	struct qty a, b, r;
	int err;

	if (parse(x, &a) != QTY_OK || parse(y, &b) != QTY_OK)
		return;
	if (strcmp(op, "cmp") == 0) {
		printf("%d\n", qty_cmp(&a, &b));
		return;
	}
	err = strcmp(op, "add") == 0 ? qty_add(&r, &a, &b)
				     : qty_sub(&r, &a, &b);
	if (err != QTY_OK && (err != QTY_ERANGE || !qty_huge(&r)))
		printf("error: %s\n", qty_strerror(err));
	else
		print(&r);
}

static void
unary_op(const char *op, const char *x)
{
	struct qty q;
	int64_t v;
	int err;

	if (strcmp(op, "bytes") == 0 || strcmp(op, "millis") == 0) {
		v = strtoll(x, NULL, 10);
		if (op[0] == 'b')
			qty_from_int(&q, v, QTY_BINARY_SI);
		else
			qty_from_milli(&q, v, QTY_DECIMAL_SI);
		print(&q);
		return;
	}
	if (parse(x, &q) != QTY_OK)
		return;
	err = op[0] == 'v' ? qty_value(&q, &v) : qty_milli(&q, &v);
	if (err != QTY_OK)
		printf("error: %s\n", qty_strerror(err));
	else
		printf("%jd\n", (intmax_t)v);
}

static void
run(char *line)
{
	char op[8], x[256], y[256];
	int n = sscanf(line, "%7s %255s %255s", op, x, y);

	if (n == 3 &&
		(strcmp(op, "add") == 0 || strcmp(op, "sub") == 0 ||
			strcmp(op, "cmp") == 0))
		binary_op(op, x, y);
	else if (n == 2 &&
		(strcmp(op, "value") == 0 || strcmp(op, "milli") == 0 ||
			strcmp(op, "bytes") == 0 || strcmp(op, "millis") == 0))
		unary_op(op, x);
	else {
		struct qty q;

		if (parse(line, &q) == QTY_OK)
			print(&q);
	}
}

int
main(int argc, char **argv)
{
	char *line = NULL;
	size_t cap = 0;
	ssize_t len;

	(void)argc;
	err_init(argv[0]);
	while ((len = getline(&line, &cap, stdin)) >= 0) {
		if (len > 0 && line[len - 1] == '\n')
			line[--len] = '\0';
		run(line);
	}
	free(line);
	if (fflush(stdout) == EOF || ferror(stdout))
		err_die(HAZ_FAIL, "<stdout>: write error:");
	return 0;
}
