/* prom: test driver for lib/prom's registry and writers.
 *
 *   build/unit/prom
 *
 * Declares families whose help and label values hold every character the
 * text format escapes (and bytes that are no UTF-8), gives one series a
 * hand-made label set that is not valid, sets values the format spells
 * its own way (NaN, infinities, the shortest round trip), and prints the
 * exposition; then prom_sample's lines, and whether it refused a value.
 * Warnings go to stderr. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "err.h"
#include "prom.h"

int
main(int argc, char **argv)
{
	static const double bounds[] = {1e-05, 0.1, 0.25};
	static const struct prom_label ok[] = {{"node", "a\"b\\c\nd", 7},
		{"empty", NULL, 0}};
	static const struct prom_label nul[] = {{"node", "a\0b", 3}};
	static const struct prom_label bad[] = {{"node", "\xc3(", 2}};
	struct prom *p = prom_new();
	char *l, *out, v[PROM_VALUE_SIZE];
	size_t len;

	(void)argc;
	err_init(argv[0]);
	prom_counter(p, "t_total", "Help with \\ and a\nline feed.");
	l = prom_labels("path", "/a\"b\\c\nd", "bytes", "\xff\xc3\xa9", "none",
		(char *)NULL, (char *)NULL);
	prom_add(p, "t_total", l, 1);
	prom_add(p, "t_total", l, 2);
	free(l);
	prom_add(p, "t_total", "path=\"a\"b\"", 1);
	prom_add(p, "t_total", "path=\"a\"b\"", 1);
	prom_add(p, "t_total", "a=\"1\",a=\"2\"", 1);
	prom_add(p, "t_total", NULL, 0.1 + 0.2);
	prom_gauge(p, "t_gauge", "Values.");
	prom_set(p, "t_gauge", "v=\"nan\"", NAN);
	prom_set(p, "t_gauge", "v=\"inf\"", INFINITY);
	prom_set(p, "t_gauge", "v=\"-inf\"", -INFINITY);
	prom_set(p, "t_gauge", "v=\"big\"", 1e300);
	prom_set(p, "t_gauge", "v=\"int\"", 9007199254740992.0);
	prom_histogram(p, "t_seconds", "Latency.", bounds, 3);
	l = prom_labels("op", "x\"y", (char *)NULL);
	prom_observe(p, "t_seconds", l, 0.2);
	prom_observe(p, "t_seconds", l, NAN);
	free(l);
	out = prom_render(p, &len);
	fwrite(out, 1, len, stdout);
	free(out);
	prom_free(p);
	printf("sample: %d\n",
		prom_sample(stdout, "s", ok, 2, prom_value(-0.5, v)));
	printf("sample: %d\n", prom_sample(stdout, "s", NULL, 0, "7"));
	printf("nul: %d\n", prom_sample(stdout, "s", nul, 1, "1"));
	printf("bad: %d\n", prom_sample(stdout, "s", bad, 1, "1"));
	printf("escape: %d ", prom_escape(stdout, "q\"", 2));
	printf("%d\n", prom_escape(stdout, "\xed\xa0\x80", 3));
	return fclose(stdout) != 0;
}
