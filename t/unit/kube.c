/* kube: test driver for lib/kube.c and lib/b64.c.
 *
 *   build/unit/kube [-K] [-r N] [-t MS] [-k kubeconfig] [-c context] OP ARGS...
 *
 * -K: the client keeps its connection (kube_keep); -r N: the call is made
 * N times on the one client (stdin read once), the exit status the
 * last's; -t: kube_set_timeout.
 *
 *   resolve NAME...         the group/version/resource/kind/namespaced of each
 *   path NAME [NS [OBJ]]    the path kube_path makes for NAME
 *   get PATH                 kube_get
 *   list PATH LIMIT          kube_list: {"resourceVersion": rv, "items": [...]}
 *   create|replace PATH      kube_create / kube_replace with the JSON on stdin
 *   merge|json|strategic PATH  kube_patch of that type, patch on stdin
 *   apply PATH MANAGER [force]  kube_apply, object on stdin
 *   apply-meta PATH MANAGER [force]  kube_apply_meta, the same
 *   delete PATH [UID [RV]]   kube_delete with those preconditions
 *   escape STRING            kube_escape
 *   query PATH KEY VALUE     kube_query
 *   b64 STRING               b64_encode then b64_decode back
 *
 * Answers are printed as one JSON line. A failed call prints its message
 * as claim-watch would and exits with kube_exit_status; the message also
 * says the error kind and HTTP status on a second line. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "b64.h"
#include "err.h"
#include "kube.h"
#include "kubeconfig.h"
#include "nd.h"

static const char *const kinds[] = {"ok", "temp", "api", "gone", "nores",
	"baddata", "fail", "deadline", "stopped"};

static void
usage(void)
{
	fputs("usage: kube [-K] [-d deadline-s] [-r times] [-t timeout-ms] "
	      "[-k kubeconfig] [-c context] op args...\n",
		stderr);
	exit(HAZ_USAGE);
}

static json_t *
stdin_json(void)
{
	json_error_t jerr;
	static json_t *j; /* read once, for every call of -r */

	if (!j && !(j = json_loadf(stdin, 0, &jerr)))
		err_die(HAZ_FAIL, "<stdin>: invalid JSON: %s", jerr.text);
	return json_incref(j);
}

static int
failed(const struct kube_error *e)
{
	err_warn("%s", e->msg);
	fprintf(stderr, "kind=%s status=%ld reason=%s\n", kinds[e->kind],
		e->status, e->reason);
	return kube_exit_status(e) == HAZ_OK ? HAZ_FAIL : kube_exit_status(e);
}

static int
show(json_t *j, const struct kube_error *e)
{
	if (!j)
		return failed(e);
	nd_write(j);
	json_decref(j);
	return HAZ_OK;
}

static int
resolve(struct kube *k, int argc, char **argv)
{
	struct kube_resource r;
	struct kube_error e;
	json_t *j;
	int i;

	for (i = 0; i < argc; i++) {
		if (kube_resolve(k, argv[i], &r, &e) < 0)
			return failed(&e);
		j = json_pack("{s:s, s:s, s:s, s:s, s:b}", "group", r.group,
			"version", r.version, "resource", r.resource, "kind",
			r.kind, "namespaced", r.namespaced);
		show(j, &e);
		kube_resource_free(&r);
	}
	return HAZ_OK;
}

static int
list(struct kube *k, const char *path, long limit)
{
	struct kube_error e;
	json_t *items;
	char *rv;

	if (kube_list(k, path, limit, &items, &rv, &e) < 0)
		return failed(&e);
	show(json_pack("{s:s, s:o}", "resourceVersion", rv, "items", items),
		&e);
	free(rv);
	return HAZ_OK;
}

static int
path(struct kube *k, int argc, char **argv)
{
	struct kube_resource r;
	struct kube_error e;
	char *p;

	if (kube_resolve(k, argv[0], &r, &e) < 0)
		return failed(&e);
	p = kube_path(&r, argc > 1 ? argv[1] : NULL, argc > 2 ? argv[2] : NULL);
	puts(p);
	free(p);
	kube_resource_free(&r);
	return HAZ_OK;
}

/* call runs the operations that need a body or preconditions. */
static int
call(struct kube *k, const char *op, int argc, char **argv)
{
	static const char *const patches[] = {"merge", "json", "strategic"};
	struct kube_error e;
	json_t *in = NULL, *out;
	int i;

	if (!strcmp(op, "get"))
		return show(kube_get(k, argv[0], &e), &e);
	if (!strcmp(op, "delete"))
		return show(kube_delete(k, argv[0], argc > 1 ? argv[1] : NULL,
				    argc > 2 ? argv[2] : NULL, &e),
			&e);
	in = stdin_json();
	if (!strcmp(op, "create"))
		out = kube_create(k, argv[0], in, &e);
	else if (!strcmp(op, "replace"))
		out = kube_replace(k, argv[0], in, &e);
	else if (!strcmp(op, "apply") && argc > 1)
		out = kube_apply(k, argv[0], in, argv[1],
			argc > 2 && !strcmp(argv[2], "force"), &e);
	else if (!strcmp(op, "apply-meta") && argc > 1)
		out = kube_apply_meta(k, argv[0], in, argv[1],
			argc > 2 && !strcmp(argv[2], "force"), &e);
	else {
		for (i = 0; i < 3 && strcmp(op, patches[i]); i++)
			;
		if (i == 3)
			usage();
		out = kube_patch(k, argv[0], (enum kube_patch)i, in, &e);
	}
	json_decref(in);
	return show(out, &e);
}

/* offline runs the operations that need no server. */
static int
offline(const char *op, int argc, char **argv)
{
	unsigned char *back;
	size_t n, bad;
	char *s;

	if (!strcmp(op, "escape")) {
		s = kube_escape(argv[0]);
	} else if (!strcmp(op, "query") && argc == 3) {
		s = estrdup(argv[0]);
		kube_query(&s, argv[1], argv[2]);
	} else if (!strcmp(op, "b64")) {
		s = b64_encode(argv[0], strlen(argv[0]));
		if (b64_decode(s, strlen(s), &back, &n, &bad) < 0 ||
			n != strlen(argv[0]) || memcmp(back, argv[0], n) != 0)
			err_die(HAZ_FAIL, "b64: %s does not decode back", s);
		free(back);
	} else {
		return -1;
	}
	puts(s);
	free(s);
	return HAZ_OK;
}

int
main(int argc, char **argv)
{
	const char *kubeconfig = NULL, *context = NULL, *op;
	struct kc_config cfg;
	struct kube *k;
	int ch, status, keep = 0, times = 1;
	long timeout = 0;
	double deadline = 0;

	err_init("kube");
	while ((ch = getopt(argc, argv, "Kd:r:t:k:c:")) != -1) {
		if (ch == 'k')
			kubeconfig = optarg;
		else if (ch == 'c')
			context = optarg;
		else if (ch == 'K')
			keep = 1;
		else if (ch == 'r')
			times = atoi(optarg);
		else if (ch == 't')
			timeout = atol(optarg);
		else if (ch == 'd')
			deadline = atof(optarg);
		else
			usage();
	}
	argc -= optind;
	argv += optind;
	if (argc < 2)
		usage();
	op = *argv++;
	argc--;
	if ((status = offline(op, argc, argv)) >= 0)
		return nd_finish(status);
	if (kc_load(&cfg, kubeconfig, context) < 0)
		return nd_finish(HAZ_FAIL);
	k = kube_new(&cfg);
	if (keep)
		kube_keep(k);
	if (timeout)
		kube_set_timeout(k, timeout);
	if (deadline > 0)
		kube_set_deadline(k, deadline);
	for (int i = 0; i < times; i++)
		if (!strcmp(op, "resolve"))
			status = resolve(k, argc, argv);
		else if (!strcmp(op, "path"))
			status = path(k, argc, argv);
		else if (!strcmp(op, "list") && argc == 2)
			status = list(k, argv[0], atol(argv[1]));
		else
			status = call(k, op, argc, argv);
	kube_free(k);
	kc_free(&cfg);
	return nd_finish(status);
}
