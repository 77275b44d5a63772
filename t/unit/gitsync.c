/* gitsync: test driver for tools/cache-sync/gitsync.
 *
 *	gitsync ROOT PATHNAME URL [-b branch] [-c commit] [-t timeout] [-f]
 *	        [-x bytes]
 *	    gitsync_sync, printing {"reason","message","resolved",
 *	    "lfsPointers","held","fetched","progress"}: held and fetched
 *	    are whether bytes and fetched are above 0; progress is "none"
 *	    when the callback was never called, "ok" when its done counts
 *	    never went down and its last call had total = done = fetched,
 *	    else what was wrong. -x stops the transfer (the callback
 *	    returns 1) once more than that many bytes arrived.
 *	gitsync -q ROOT PATHNAME    gitsync_current: {"current":"<commit>"}
 *	                            or {"current":null}
 *	gitsync -r ROOT PATHNAME    gitsync_remove: {"reason","message"}
 *
 * One JSON line per run; exit 0 when the call succeeded, 1 when it
 * failed, 2 for usage. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>

#include "err.h"
#include "gitsync.h"

struct seen {
	int calls, down;
	uint64_t last_done, last_total, stop_after;
};

static int
progress(void *arg, uint64_t done, uint64_t total)
{
	struct seen *p = arg;

	if (p->calls++ && done < p->last_done)
		p->down = 1;
	p->last_done = done;
	p->last_total = total;
	return p->stop_after && done > p->stop_after;
}

static void
usage(void)
{
	fprintf(stderr,
		"usage: gitsync ROOT PATHNAME URL [-b branch] [-c commit] "
		"[-t timeout] [-f] [-x bytes]\n"
		"       gitsync -q|-r ROOT PATHNAME\n");
	exit(HAZ_USAGE);
}

static int
print(json_t *j, int rc)
{
	char *s = json_dumps(j, JSON_COMPACT);

	puts(s);
	free(s);
	json_decref(j);
	return rc < 0 ? HAZ_FAIL : 0;
}

static const char *
verdict(const struct seen *p, const struct ck_result *res)
{
	if (!p->calls)
		return "none";
	if (p->down)
		return "done went down";
	if (p->last_total != p->last_done)
		return "last total is not done";
	if (p->last_done != res->fetched)
		return "last done is not fetched";
	return "ok";
}

int
main(int argc, char **argv)
{
	struct gitsync_item it = {0};
	struct ck_result res;
	struct seen seen = {0};
	char commit[41];
	int c, rc, mode = 0;

	err_init(argv[0]);
	while ((c = getopt(argc, argv, "b:c:t:fx:qr")) != -1) {
		switch (c) {
		case 'b': it.branch = optarg; break;
		case 'c': it.commit = optarg; break;
		case 't': it.timeout_s = atoi(optarg); break;
		case 'f': it.force = 1; break;
		case 'x': seen.stop_after = strtoull(optarg, NULL, 10); break;
		case 'q':
		case 'r': mode = c; break;
		default: usage();
		}
	}
	if (argc - optind != (mode ? 2 : 3))
		usage();
	it.root = argv[optind];
	it.path_name = argv[optind + 1];
	gitsync_init();
	if (mode == 'q') {
		rc = gitsync_current(it.root, it.path_name, commit);
		rc = print(json_pack("{s:o}", "current",
				   rc == 0 ? json_string(commit) : json_null()),
			0);
	} else if (mode == 'r') {
		rc = gitsync_remove(it.root, it.path_name, &res);
		rc = print(json_pack("{s:s,s:s}", "reason",
				   ck_reason_name(res.reason), "message",
				   res.message),
			rc);
	} else {
		it.url = argv[optind + 2];
		rc = gitsync_sync(&it, progress, &seen, &res);
		rc = print(json_pack("{s:s,s:s,s:s,s:i,s:b,s:b,s:s}", "reason",
				   ck_reason_name(res.reason), "message",
				   res.message, "resolved", res.resolved,
				   "lfsPointers", res.lfs_pointers, "held",
				   res.bytes > 0, "fetched", res.fetched > 0,
				   "progress", verdict(&seen, &res)),
			rc);
	}
	gitsync_shutdown();
	if (fflush(stdout) == EOF || ferror(stdout))
		err_die(HAZ_FAIL, "write error:");
	return rc;
}
