/* unit/wl: drive lib/wl. The first argument names the function; stdin
 * holds one workload a line, either a whole GPUWorkload or "spec " and a
 * spec, which is given the metadata name w1, namespace ns, uid u-1 and
 * creationTimestamp 2025-01-02T03:04:05Z. Each line prints one line:
 *
 *   wl problem                    -> "ok" or wl_problem's message
 *   wl numbers                    -> "priority=P gpus=G retries=R
 *                                     backoff=B"
 *   wl request [KEY]              -> wl_request's record (extra_key KEY)
 *   wl constraints TOLS           -> wl_constraints (TOLS the controller's
 *                                    tolerations, JSON)
 *   wl job NODE DEVICES STRATEGY PROFILE IMAGE TOLS [TEMPLATE]
 *                                 -> wl_job, DEVICES a JSON array, PROFILE
 *                                    and IMAGE "-" for NULL; TEMPLATE the
 *                                    claim template (DRA)
 *   wl chain [none]               -> wl_chain with the built-in chains
 *                                    (none: NULL)
 *   wl request-dra [KEY]          -> wl_request_dra, built-in chains
 *   wl template DEVICES PROFILE [none]
 *                                 -> wl_claim_template on node n1
 *
 * Objects are printed compact with sorted keys. Exit 1 when a line is no
 * JSON object, 2 on bad arguments. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "err.h"
#include "jbuf.h"
#include "wl.h"

static json_t *
arg_json(const char *s)
{
	json_error_t e;
	json_t *v = json_loads(s, JSON_DECODE_ANY, &e);

	if (!v)
		err_die(2, "%s: %s", s, e.text);
	return v;
}

static const char *
arg_or_null(const char *s)
{
	return strcmp(s, "-") == 0 ? NULL : s;
}

static void
print_sorted(json_t *v)
{
	char *s = json_dumps(v, JSON_SORT_KEYS | JSON_COMPACT);

	puts(s ? s : "(null)");
	free(s);
	json_decref(v);
}

static struct migchain *builtin;

/* chains returns the built-in chains, made once. */
static const struct migchain *
chains(void)
{
	if (!builtin)
		builtin = migchain_default();
	return builtin;
}

static const char *
w_name(const json_t *w)
{
	return json_string_value(
		json_object_get(json_object_get(w, "metadata"), "name"));
}

/* one runs the function argv[1] names on workload w. */
static void
one(json_t *w, int argc, char **argv)
{
	struct jb b = {0};
	char *m;

	if (strcmp(argv[1], "problem") == 0) {
		m = wl_problem(w);
		puts(m ? m : "ok");
		free(m);
	} else if (strcmp(argv[1], "numbers") == 0) {
		printf("priority=%lld gpus=%d retries=%d backoff=%g\n",
			wl_priority(w), wl_gpus(w), wl_max_retries(w),
			wl_backoff(w));
	} else if (strcmp(argv[1], "request") == 0) {
		wl_request(w, argc > 2 ? argv[2] : NULL, &b);
		printf("%.*s\n", (int)b.len, b.buf);
		jb_free(&b);
	} else if (strcmp(argv[1], "constraints") == 0 && argc == 3) {
		json_t *tols = arg_json(argv[2]);

		print_sorted(wl_constraints(w, tols));
		json_decref(tols);
	} else if (strcmp(argv[1], "job") == 0 && (argc == 8 || argc == 9)) {
		json_t *devs = arg_json(argv[3]), *tols = arg_json(argv[7]);
		struct wl_place p = {argv[2], devs, arg_or_null(argv[4]),
			arg_or_null(argv[5]), argc == 9 ? argv[8] : NULL};

		print_sorted(wl_job(w, &p, arg_or_null(argv[6]), tols));
		json_decref(devs);
		json_decref(tols);
	} else if (strcmp(argv[1], "chain") == 0) {
		print_sorted(wl_chain(w, argc > 2 ? NULL : chains()));
	} else if (strcmp(argv[1], "request-dra") == 0) {
		wl_request_dra(w, argc > 2 ? argv[2] : NULL, chains(), &b);
		printf("%.*s\n", (int)b.len, b.buf);
		jb_free(&b);
	} else if (strcmp(argv[1], "template") == 0 &&
		(argc == 4 || argc == 5)) {
		json_t *devs = arg_json(argv[2]);
		struct wl_place p = {"n1", devs, "binpack",
			arg_or_null(argv[3]), w_name(w)};

		print_sorted(
			wl_claim_template(w, &p, argc == 5 ? NULL : chains()));
		json_decref(devs);
	} else {
		err_die(2,
			"usage: wl problem|numbers|request|constraints|job|"
			"chain|request-dra|template ARGS");
	}
}

int
main(int argc, char **argv)
{
	char *line = NULL, *text;
	size_t cap = 0;
	ssize_t n;
	json_error_t e;
	json_t *w, *spec;
	int status = 0;

	err_init(argv[0]);
	if (argc < 2)
		err_die(2,
			"usage: wl problem|numbers|request|constraints|job|"
			"chain|request-dra|template ARGS");
	while ((n = getline(&line, &cap, stdin)) > 0) {
		text = strncmp(line, "spec ", 5) == 0 ? line + 5 : line;
		if (!(w = json_loads(text, 0, &e))) {
			printf("invalid JSON: %s\n", e.text);
			status = 1;
			continue;
		}
		if (text != line) {
			spec = w;
			w = json_pack("{s:s, s:s, s:{s:s, s:s, s:s, s:s}, s:o}",
				"apiVersion", "canhazgpu.dev/v1alpha1", "kind",
				"GPUWorkload", "metadata", "name", "w1",
				"namespace", "ns", "uid", "u-1",
				"creationTimestamp", "2025-01-02T03:04:05Z",
				"spec", spec);
		}
		one(w, argc, argv);
		json_decref(w);
	}
	free(line);
	if (builtin)
		migchain_free(builtin);
	return status;
}
