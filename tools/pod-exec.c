/* pod-exec: run a command in a pod's container through the API server
 * (pods/exec over a WebSocket, lib/kexec), its standard input from a
 * file, its output on ours; the exit status is the command's.
 *
 * usage: pod-exec [-n namespace] [-c container] [-i file] [-t seconds]
 *                 [--context name] [--kubeconfig file] pod command [arg...]
 *
 * No kubectl, no port opened anywhere: the API server checks the
 * caller's right to create pods/exec, and TLS is verified as for every
 * other call (lib/kube).
 *
 * Exit: the command's status (0-255) when it ran; else 124 when the
 * pod cannot run it (missing, not running, no such container: the
 * server's words on stderr), 125 when the exec was refused otherwise or
 * broke, 2 usage, 75 the API server unreachable. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "err.h"
#include "kexec.h"
#include "kube.h"
#include "kubeconfig.h"
#include "nd.h"
#include "opt.h"

#define USAGE                                                                  \
	"usage: pod-exec [-n namespace] [-c container] [-i file] "             \
	"[-t seconds]\n"                                                       \
	"                [--context name] [--kubeconfig file] pod command "    \
	"[arg...]\n"

enum { PE_NOPOD = 124, PE_BROKEN = 125 };

static const struct option longopts[] = {
	OPT_KUBE_LONGS,
	{"help", no_argument, NULL, 'h'},
	{"version", no_argument, NULL, 'V'},
	{NULL, 0, NULL, 0},
};

static void
help(void)
{
	fputs(USAGE, stdout);
	fputs("  -n namespace    the pod's namespace (default: the "
	      "kubeconfig's)\n"
	      "  -c container    the container (default: the pod's only "
	      "one)\n"
	      "  -i file         the command's standard input (default: "
	      "none; - stdin)\n"
	      "  -t seconds      give up after this long (default 120)\n" OPT_KUBE_HELP,
		stdout);
}

/* slurp reads all of file ("-": stdin). */
static unsigned char *
slurp(const char *file, size_t *n)
{
	FILE *f = strcmp(file, "-") ? fopen(file, "rb") : stdin;
	unsigned char *b = NULL;
	size_t cap = 0, got;

	if (!f)
		err_die(HAZ_FAIL, "%s:", file);
	*n = 0;
	do {
		if (*n + 65536 > cap)
			b = erealloc(b, cap = 2 * cap + 65536);
		got = fread(b + *n, 1, 65536, f);
		*n += got;
	} while (got);
	if (ferror(f))
		err_die(HAZ_FAIL, "%s: read:", file);
	if (f != stdin)
		fclose(f);
	return b;
}

int
main(int argc, char **argv)
{
	struct kexec_req r = {.out = stdout, .err = stderr};
	const char *context = NULL, *kubeconfig = NULL, *in = NULL;
	unsigned char *data = NULL;
	double secs = 120;
	struct kc_config kc;
	struct kube_error e;
	struct kube *k;
	int c, code;

	err_init(argv[0]);
	opterr = 0; /* the messages name the tool, not argv[0] */
	while ((c = getopt_long(argc, argv, "+:n:c:i:t:hV", longopts, NULL)) !=
		-1) {
		switch (c) {
		case 'n': r.ns = optarg; break;
		case 'c': r.container = optarg; break;
		case 'i': in = optarg; break;
		case 't':
			secs = opt_number(c, optarg, 0, 86400, OPT_POSITIVE,
				USAGE);
			break;
		case OPT_CONTEXT: context = optarg; break;
		case OPT_KUBECONFIG: kubeconfig = optarg; break;
		case 'h': help(); return nd_finish(HAZ_OK);
		case 'V':
			puts("pod-exec " HAZ_VERSION);
			return nd_finish(HAZ_OK);
		case ':':
			err_warn("%s needs an argument", argv[optind - 1]);
			opt_usage(USAGE);
		default:
			if (optopt)
				err_warn("unknown option -%c", optopt);
			else
				err_warn("unknown option %s", argv[optind - 1]);
			opt_usage(USAGE);
		}
	}
	if (argc - optind < 2)
		opt_usage(USAGE);
	r.pod = argv[optind];
	r.argv = argv + optind + 1;
	if (in)
		r.in = data = slurp(in, &r.inlen);
	if (kc_load(&kc, kubeconfig, context) < 0)
		return HAZ_FAIL;
	if (!r.ns)
		r.ns = kc.namespace ? kc.namespace : "default";
	k = kube_new(&kc);
	kube_set_deadline(k, secs);
	code = kexec_run(k, &r, &e);
	if (code < 0) {
		err_warn("%s", e.msg);
		code = e.kind == KUBE_ETEMP ? HAZ_TEMP
			: e.kind == KUBE_EAPI &&
				(e.status == 404 || e.status == 400)
			? PE_NOPOD
			: PE_BROKEN;
	}
	kube_free(k);
	kc_free(&kc);
	free(data);
	return nd_finish(code);
}
