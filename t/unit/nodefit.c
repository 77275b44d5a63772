/* unit/nodefit: drive lib/nodefit from stdin, one request a line, a
 * command, a tag (a word echoed back) and JSON values (each inline, or
 * @FILE for the value in FILE):
 *
 *   tolerated TAG TOLERATIONS TAINT  -> "TAG: yes" or "TAG: no"
 *   eligible TAG NODE TOLERATIONS TERMS
 *                                    -> "TAG: ok", "TAG: taint WHY" or
 *                                       "TAG: affinity WHY"
 *   why TAG SIZE NODE TOLERATIONS    -> "TAG: taint [WHY]" with why cut to
 *                                       SIZE bytes (a JSON number)
 *   records TAG NODE [EXTRA]         -> the records, then "TAG: N"
 *   digest TAG NODE                  -> "TAG: " and nf_digest in hex
 *   digest TAG NODE NODE             -> "TAG: same" or "TAG: different"
 *                                       (nf_digest of the two)
 *
 * A JSON null stands for a NULL argument. Lines that are blank or start
 * with '#' are skipped. Exit 1 when a line is no request. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "err.h"
#include "jbuf.h"
#include "nodefit.h"

#define MAXARGS 4

/* args reads the JSON values of p (at most MAXARGS) into v; returns
 * their count, or -1 (with a message) when one is no JSON. */
static int
args(const char *p, json_t **v)
{
	json_error_t e;
	char path[4096];
	size_t len;
	int n = 0;

	for (;;) {
		p += strspn(p, " \t\n");
		if (!*p)
			return n;
		if (n == MAXARGS) {
			printf("bad request: more than %d values\n", MAXARGS);
			goto fail;
		}
		if (*p == '@') {
			len = strcspn(p + 1, " \t\n");
			snprintf(path, sizeof path, "%.*s", (int)len, p + 1);
			v[n] = json_load_file(path, JSON_DECODE_ANY, &e);
			p += 1 + len;
		} else {
			v[n] = json_loads(p,
				JSON_DECODE_ANY | JSON_DISABLE_EOF_CHECK, &e);
			p += e.position;
		}
		if (!v[n]) {
			printf("bad value %d: %s\n", n + 1, e.text);
			goto fail;
		}
		if (json_is_null(v[n])) {
			json_decref(v[n]);
			v[n] = NULL;
		}
		n++;
	}
fail:
	while (n--)
		json_decref(v[n]);
	return -1;
}

static int
run(const char *cmd, const char *tag, json_t **v, int n)
{
	char why[256];
	struct jb b = {0};
	int r;

	if (!strcmp(cmd, "tolerated") && n == 2) {
		printf("%s: %s\n", tag,
			nf_tolerated(v[0], v[1]) ? "yes" : "no");
	} else if (!strcmp(cmd, "eligible") && n == 3) {
		r = nf_eligible(v[0], v[1], v[2], why, sizeof why);
		printf("%s: %s%s%s\n", tag,
			r == NF_OK              ? "ok"
				: r == NF_TAINT ? "taint"
						: "affinity",
			r == NF_OK ? "" : " ", r == NF_OK ? "" : why);
		/* why NULL must be allowed, and give the same answer */
		if (nf_eligible(v[0], v[1], v[2], NULL, 0) != r)
			printf("%s: different without why\n", tag);
	} else if (!strcmp(cmd, "why") && n == 3 && json_is_integer(v[0]) &&
		json_integer_value(v[0]) >= 0 &&
		json_integer_value(v[0]) <= (json_int_t)sizeof why) {
		memset(why, 'X', sizeof why);
		r = nf_eligible(v[1], v[2], NULL, why,
			(size_t)json_integer_value(v[0]));
		printf("%s: %s [%.*s]\n", tag,
			r == NF_TAINT ? "taint" : "other",
			(int)strnlen(why, (size_t)json_integer_value(v[0])),
			why);
	} else if (!strcmp(cmd, "records") && (n == 1 || n == 2)) {
		r = nf_records(v[0], n == 2 ? v[1] : NULL, &b);
		fwrite(b.buf, 1, b.len, stdout);
		printf("%s: %d\n", tag, r);
		jb_free(&b);
	} else if (!strcmp(cmd, "digest") && n == 1) {
		printf("%s: %016" PRIx64 "\n", tag, nf_digest(v[0]));
	} else if (!strcmp(cmd, "digest") && n == 2) {
		printf("%s: %s\n", tag,
			nf_digest(v[0]) == nf_digest(v[1]) ? "same"
							   : "different");
	} else {
		printf("%s: bad request %s\n", tag, cmd);
		return 1;
	}
	return 0;
}

int
main(int argc, char **argv)
{
	char *line = NULL, cmd[32], tag[128];
	json_t *v[MAXARGS];
	size_t cap = 0;
	int n, at, status = 0;

	(void)argc;
	err_init(argv[0]);
	while (getline(&line, &cap, stdin) > 0) {
		if (line[strspn(line, " \t\n")] == '\0' || line[0] == '#')
			continue;
		if (sscanf(line, "%31s %127s %n", cmd, tag, &at) != 2) {
			printf("bad line: %s", line);
			status = 1;
			continue;
		}
		if ((n = args(line + at, v)) < 0) {
			status = 1;
			continue;
		}
		status |= run(cmd, tag, v, n);
		while (n--)
			json_decref(v[n]);
	}
	free(line);
	if (fflush(stdout) == EOF)
		err_die(HAZ_FAIL, "write error:");
	return status;
}
