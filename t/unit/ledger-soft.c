/* ledger-soft: test driver for the ledger on a soft Redis connection
 * (lib/redis.c rd_try_connect, lib/ledger_claim.c), as the kubelet plugin
 * uses it: one struct lg for the whole run, whatever the server does.
 *
 *   build/unit/ledger-soft ADDR [PASSWORD]
 *
 * Connects (a failure is printed, not fatal), then reads commands from
 * stdin, one a line, and prints one line per command, flushed:
 *
 *   prepare CLAIM-JSON   lg_claim_prepare: "ok" or "conflicts" and the
 *                        answer (without released when ok), or
 *                        "fail STATUS: WHY"
 *   release UID          lg_claim_release, likewise
 *   text CONFLICT-JSON   lg_conflict_text
 *
 * It never exits but at the end of its input, with status 0. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "err.h"
#include "ledger.h"
#include "redis.h"

/* answer prints res (taken) or the failure. */
static void
answer(json_t *res, int status, char *why)
{
	char *text;

	if (!res) {
		printf("fail %d: %s\n", status, why);
		free(why);
		return;
	}
	if (json_object_get(res, "ok"))
		json_object_del(res, "released");
	text = json_dumps(res, JSON_COMPACT | JSON_SORT_KEYS);
	printf("%s %s\n",
		json_object_get(res, "conflicts") ? "conflicts" : "ok", text);
	free(text);
	json_decref(res);
}

int
main(int argc, char **argv)
{
	char *line = NULL, *why, *arg;
	size_t cap = 0;
	struct rd rd;
	struct lg lg;
	int status;
	json_t *j, *res;

	err_init(argv[0]);
	if (argc < 2 || argc > 3) {
		fputs("usage: ledger-soft addr [password]\n", stderr);
		return HAZ_USAGE;
	}
	status = rd_try_connect(&rd, argv[1], 0, argc > 2 ? argv[2] : NULL, 2,
		&why);
	printf("connect %d%s%s\n", status, why ? ": " : "", why ? why : "");
	free(why);
	lg_init(&lg, &rd, 0.3);
	while (getline(&line, &cap, stdin) > 0) {
		line[strcspn(line, "\n")] = '\0';
		arg = strchr(line, ' ');
		arg = arg ? arg + 1 : line + strlen(line);
		if (strncmp(line, "prepare ", 8) == 0) {
			j = json_loads(arg, 0, NULL);
			res = lg_claim_prepare(&lg, j, &status, &why);
			answer(res, status, why);
			json_decref(j);
		} else if (strncmp(line, "release ", 8) == 0) {
			res = lg_claim_release(&lg, arg, &status, &why);
			answer(res, status, why);
		} else if (strncmp(line, "text ", 5) == 0) {
			j = json_loads(arg, 0, NULL);
			why = lg_conflict_text(j);
			printf("%s\n", why);
			free(why);
			json_decref(j);
		} else {
			printf("unknown command: %s\n", line);
		}
		fflush(stdout);
	}
	free(line);
	rd_close(&rd);
	return HAZ_OK;
}
