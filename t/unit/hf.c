/* hf: test driver for lib/hf.
 *
 *	hf [-g] [-c BYTES] [-t SECONDS] [-w WORKERS] [-R BYTES] ENDPOINT HUB
 *	        REPO [REVISION]
 *	        hf_resolve, then hf_fetch: {"reason","message","resolved",
 *	        "files","bytes","fetched"}; HF_TOKEN from the environment.
 *	        -g prints each progress call first, {"done":N,"total":N};
 *	        -c stops the transfer (the callback says stop) once done
 *	        reaches BYTES; -t is hf_item.timeout_s, -w workers, -R
 *	        range_bytes
 *	hf -p HUB REPO [REVISION]  hf_present: {"present":true,"commit":..}
 *	                           or {"present":false}
 *	hf -r HUB REPO [REVISION]  hf_remove: {"reason","message"}
 *	hf -P HUB REPO             hf_prune: {"reason","message"}
 *	hf -n REPO [REVISION]      hf_repo_dir and hf_revision_ok:
 *	                           {"dir":..|null,"revision_ok":bool}
 *
 * One JSON line per run (after -g's); exit 0 when the call succeeded, 1
 * when it failed, 2 for usage. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>

#include "err.h"
#include "hf.h"

static void
usage(void)
{
	fprintf(stderr,
		"usage: hf [-g] [-c BYTES] [-t SECONDS] [-w WORKERS] [-R BYTES] "
		"ENDPOINT HUB REPO [REVISION]\n"
		"       hf -p|-r HUB REPO [REVISION]\n"
		"       hf -P HUB REPO\n"
		"       hf -n REPO [REVISION]\n");
	exit(HAZ_USAGE);
}

static int
print(json_t *j, int rc)
{
	char *s = json_dumps(j, JSON_COMPACT);

	puts(s);
	fflush(stdout);
	free(s);
	json_decref(j);
	return rc < 0 ? HAZ_FAIL : 0;
}

static int
result(const struct ck_result *res, int rc)
{
	return print(json_pack("{s:s,s:s}", "reason",
			     ck_reason_name(res->reason), "message",
			     res->message),
		rc);
}

struct watch {
	int show;
	unsigned long long stop_at; /* 0: never */
};

static int
progress(void *arg, uint64_t done, uint64_t total)
{
	struct watch *w = arg;

	if (w->show) {
		printf("{\"done\":%llu,\"total\":%llu}\n",
			(unsigned long long)done, (unsigned long long)total);
		fflush(stdout);
	}
	return w->stop_at && done >= w->stop_at;
}

static int
fetch(int argc, char **argv, struct watch *w, int timeout, int workers,
	uint64_t range_bytes)
{
	struct hf_item it = {
		.endpoint = argv[0],
		.hub = argv[1],
		.repo_id = argv[2],
		.revision = argc > 3 ? argv[3] : NULL,
		.token = getenv("HF_TOKEN"),
		.timeout_s = timeout,
		.workers = workers,
		.range_bytes = range_bytes,
	};
	struct hf_plan plan = {0};
	struct ck_result res;
	int rc;

	rc = hf_resolve(&it, &plan, &res);
	if (rc == 0)
		rc = hf_fetch(&it, &plan, progress, w, &res);
	rc = print(json_pack("{s:s,s:s,s:s,s:I,s:I,s:I}", "reason",
			   ck_reason_name(res.reason), "message", res.message,
			   "resolved", res.resolved, "files",
			   (json_int_t)plan.nfiles, "bytes",
			   (json_int_t)res.bytes, "fetched",
			   (json_int_t)res.fetched),
		rc);
	hf_plan_free(&plan);
	return rc;
}

int
main(int argc, char **argv)
{
	struct watch w = {0};
	struct ck_result res;
	char commit[41], dir[512];
	int c, mode = 0, timeout = 0, workers = 0, rc;
	uint64_t range_bytes = 0;

	err_init(argv[0]);
	while ((c = getopt(argc, argv, "c:gnpPrR:t:w:")) != -1) {
		switch (c) {
		case 'c': w.stop_at = strtoull(optarg, NULL, 10); break;
		case 'g': w.show = 1; break;
		case 't': timeout = atoi(optarg); break;
		case 'w': workers = atoi(optarg); break;
		case 'R': range_bytes = strtoull(optarg, NULL, 10); break;
		case 'n':
		case 'p':
		case 'P':
		case 'r': mode = c; break;
		default: usage();
		}
	}
	argc -= optind;
	argv += optind;
	switch (mode) {
	case 'n':
		if (argc < 1 || argc > 2)
			usage();
		return print(json_pack("{s:s?,s:b}", "dir",
				     hf_repo_dir(argv[0], dir, sizeof dir),
				     "revision_ok",
				     hf_revision_ok(
					     argc > 1 ? argv[1] : "main")),
			0);
	case 'p':
		if (argc < 2 || argc > 3)
			usage();
		if (hf_present(argv[0], argv[1], argc > 2 ? argv[2] : NULL,
			    commit) < 0)
			return print(json_pack("{s:b}", "present", 0), -1);
		return print(json_pack("{s:b,s:s}", "present", 1, "commit",
				     commit),
			0);
	case 'r':
		if (argc < 2 || argc > 3)
			usage();
		rc = hf_remove(argv[0], argv[1], argc > 2 ? argv[2] : NULL,
			&res);
		return result(&res, rc);
	case 'P':
		if (argc != 2)
			usage();
		return result(&res, hf_prune(argv[0], argv[1], &res));
	}
	if (argc < 3 || argc > 4)
		usage();
	return fetch(argc, argv, &w, timeout, workers, range_bytes);
}
