/* prom-check: libFuzzer target for prom_check, stat-serve's reader of the
 * metrics file (and of stat-serve -c), and for prom's writers.
 *
 * Each input is a whole metrics file. Checked, or abort:
 *   - prom_check names a line that exists (at most one past the last
 *     line feed), none for an empty input, and says why;
 *   - the input as a label value (up to a NUL byte) and as help text,
 *     written by prom_labels and prom_render, makes an exposition
 *     prom_check takes whole, with the series in it;
 *   - the input as one label value written by prom_sample is refused
 *     only when it holds a NUL byte or is not UTF-8, and is otherwise a
 *     line prom_check takes.
 * Leaks are found by libFuzzer's leak check. Run by t/0890-fuzz.t. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "err.h"
#include "prom.h"

/* text tells whether d[0..n) is UTF-8 without a NUL byte. */
static int
text(const uint8_t *d, size_t n)
{
	size_t i = 0;
	int l;

	while (i < n) {
		if (!d[i])
			return 0;
		if (d[i] < 0x80) {
			i++;
			continue;
		}
		if (!(l = err_utf8_len(d + i, d + n)))
			return 0;
		i += (size_t)l;
	}
	return 1;
}

static void
written(const uint8_t *data, size_t size)
{
	struct prom *p = prom_new();
	struct prom_label l = {"v", (const char *)data, size};
	char *s = strndup((const char *)data, size), *set, *out, why[256];
	size_t n;
	FILE *f;
	int r;

	if (!s)
		abort();
	prom_gauge(p, "g", s);
	set = prom_labels("v", s, (char *)NULL);
	prom_set(p, "g", set, 1);
	out = prom_render(p, &n);
	if (prom_check(out, n, why, sizeof why) || !strstr(out, "\ng{v=\""))
		abort();
	free(out);
	free(set);
	free(s);
	prom_free(p);

	out = NULL;
	if (!(f = open_memstream(&out, &n)))
		abort();
	r = prom_sample(f, "s", &l, 1, "1");
	if (fclose(f) || (r < 0) != !text(data, size) ||
		(r == 0 && prom_check(out, n, why, sizeof why)) || (r < 0 && n))
		abort();
	free(out);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char why[256] = "";
	size_t line, lines = 0, i;

	line = prom_check((const char *)data, size, why, sizeof why);
	for (i = 0; i < size; i++)
		lines += data[i] == '\n';
	if (line > lines + 1 || (!size && line) || (line && !*why) ||
		!memchr(why, '\0', sizeof why))
		abort();
	written(data, size);
	return 0;
}
