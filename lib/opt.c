/* opt: shared command-line checks (see opt.h). */
#include <stdio.h>
#include <stdlib.h>

#include "err.h"
#include "opt.h"

void
opt_usage(const char *usage)
{
	fputs(usage, stderr);
	exit(HAZ_USAGE);
}

double
opt_number(int c, const char *s, double lo, double hi, int flags,
	const char *usage)
{
	int whole = flags & OPT_WHOLE, positive = flags & OPT_POSITIVE;
	char *end;
	double v = strtod(s, &end);

	if (*s && !*end && (positive ? v > lo : v >= lo) && v <= hi &&
		(!whole || v == (long)v))
		return v;
	if (positive)
		err_warn("-%c: not a positive %s: %s", c,
			whole ? "integer" : "number", s);
	else
		err_warn("-%c: not a%s number from %g to %g: %s", c,
			whole ? " whole" : "", lo, hi, s);
	opt_usage(usage);
}
