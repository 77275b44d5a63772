/* dp_apply: test driver for tools/diff-pack/dp_apply, the unpack half of
 *diff-pack.
 *
 *	dp_apply [-d PACKDIR | -f PACKFILE] [-t TREE] [-P PKGDIR] [-s SHA256]
 *[-q] dp_apply -I DEST
 *
 * Calls dp_unpack with the options as diff-pack -u takes them (or
 * dp_install for -I) and exits with its status, so a test sees what the
 * pod's diff-pack would do without the rest of diff-pack. */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "dp_apply.h"
#include "err.h"

int
main(int argc, char **argv)
{
	struct dp_unpack_opts o = {0};
	const char *install = NULL;
	int c, st;

	err_init(argv[0]);
	while ((c = getopt(argc, argv, "d:f:s:t:P:qcI:")) != -1)
		switch (c) {
		case 'd': o.dir = optarg; break;
		case 'f': o.file = optarg; break;
		case 's': o.sha256 = optarg; break;
		case 't': o.tree = optarg; break;
		case 'P': o.pkgdir = optarg; break;
		case 'q': o.quiet = 1; break;
		case 'c': o.check_only = 1; break;
		case 'I': install = optarg; break;
		default:
			fprintf(stderr,
				"usage: dp_apply [-d DIR | -f FILE] "
				"[-t TREE] [-P PKGDIR] [-s SHA256] "
				"[-q] [-c] | -I DEST\n");
			return HAZ_USAGE;
		}
	st = install ? dp_install(install) : dp_unpack(&o);
	if (fclose(stdout) == EOF && !st) {
		err_warn("stdout: write:");
		st = HAZ_FAIL;
	}
	return st;
}
