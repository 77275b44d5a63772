/* sqe_keep: what the engine keeps of an event's object (see sqe.h). */
#include <string.h>

#include "jload.h"
#include "sqe.h"

/* The annotations and labels any engine file reads (sqe, sqe_job,
 * sqe_node, nodefit, wl), by prefix. */
static const char *const ours[] = {"canhazgpu.dev/*", "agentaflow.gpu/*",
	"k8shazgpu.dev/*", "app.kubernetes.io/managed-by", NULL};
/* No engine file reads a resourceVersion (writes are applies), nor a Job's
 * labels, generation or creation time: a workload keeps a Job of its own,
 * so what is not kept is a tenth of what a workload costs. */
static const char *const metadata[] = {"name", "namespace", "uid", "generation",
	"creationTimestamp", "labels", "annotations", "ownerReferences",
	"deletionTimestamp", NULL};
static const char *const job_metadata[] = {"name", "namespace", "uid",
	"annotations", "ownerReferences", "deletionTimestamp", NULL};
static const char *const spec[] = {"spec", NULL};
static const char *const conditions[] = {"conditions", NULL};
static const char *const job_status[] = {"conditions", "ready", NULL};
static const char *const condition[] = {"type", "status", "message", NULL};
static const char *const owner[] = {"kind", "uid", NULL};

static int
is(const char *const *path, int i, const char *name)
{
	return path[i] && !strcmp(path[i], name);
}

const char *const *
sqe_skip(const char *const *path, int depth, int *keep, void *arg)
{
	int feed = *(const int *)arg;

	if (depth == 0)
		return feed == SQE_JOBS ? spec : NULL; /* a Job's is ours */
	if (depth == 1 && is(path, 1, "metadata")) {
		*keep = 1;
		return feed == SQE_JOBS ? job_metadata : metadata;
	}
	if (depth == 1 && feed == SQE_NODES && is(path, 1, "status")) {
		*keep = 1;
		return conditions;
	}
	/* of a Job: whether it is ready, how it ended, whose it is */
	if (depth == 1 && feed == SQE_JOBS && is(path, 1, "status")) {
		*keep = 1;
		return job_status;
	}
	if (depth == 3 && feed == SQE_JOBS && is(path, 1, "status") &&
		is(path, 2, "conditions")) {
		*keep = 1;
		return condition;
	}
	if (depth == 3 && is(path, 1, "metadata") &&
		is(path, 2, "ownerReferences")) {
		*keep = 1;
		return owner;
	}
	/* a Node's labels are matched by affinity; anyone else's and every
	 * annotation only where they are ours */
	if (depth == 2 && is(path, 1, "metadata") &&
		(is(path, 2, "annotations") ||
			(is(path, 2, "labels") && feed != SQE_NODES))) {
		*keep = 1;
		return ours;
	}
	return NULL;
}

json_t *
sqe_load(int feed, const char *js, size_t len, json_error_t *je)
{
	return jl_loadb_skip(js, len, 0, je, sqe_skip, &feed);
}
