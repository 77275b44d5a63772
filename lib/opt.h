/* opt: the command-line pieces every kubeconfig-reading tool shares,
 * so that they read, check and describe them alike.
 *
 * A bad numeric value is said as "tool: -c: not a whole number from 1 to
 * 100: x" (or, with OPT_POSITIVE, "-c: not a positive integer: 0"), the
 * usage text follows on stderr, and the tool exits 2. */
#ifndef HAZ_OPT_H
#define HAZ_OPT_H

/* --context and --kubeconfig, long options without a short one, as
 * getopt_long returns them; their struct option entries; their help. */
enum { OPT_CONTEXT = 256, OPT_KUBECONFIG };
/* kept by hand: clang-format would brace the second entry */
/* clang-format off */
#define OPT_KUBE_LONGS \
	{"context", required_argument, NULL, OPT_CONTEXT}, \
	{"kubeconfig", required_argument, NULL, OPT_KUBECONFIG}
/* clang-format on */
#define OPT_KUBE_HELP                                                          \
	"  --context name  kubeconfig context (default: current-context)\n"    \
	"  --kubeconfig f  kubeconfig file (default: $KUBECONFIG, "            \
	"~/.kube/config)\n"                                                    \
	"  -h, -V          this help; the version\n"

enum {
	OPT_WHOLE = 1,    /* an integer */
	OPT_POSITIVE = 2, /* above lo rather than from it; the range is not
			     said */
};

/* opt_usage writes usage to stderr and exits 2. */
_Noreturn void opt_usage(const char *usage);

/* opt_number returns the number s, option c's value, when it is from lo
 * to hi (above lo with OPT_POSITIVE) and whole with OPT_WHOLE; else says
 * so and calls opt_usage(usage). */
double opt_number(int c, const char *s, double lo, double hi, int flags,
	const char *usage);

#endif
