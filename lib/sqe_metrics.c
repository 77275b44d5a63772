/* sqe_metrics: the engine's metrics in the Prometheus text format: the
 * devices and the queue, what was placed, failed and retried, the time
 * of the passes, and what the caller's watches and writes did. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "err.h"
#include "jbuf.h"
#include "prom.h"
#include "sqe_int.h"

const double sqe_buckets[SQE_BUCKETS] = {0.005, 0.01, 0.025, 0.05, 0.1, 0.25,
	0.5, 1, 2.5, 5, 10};

/* the bounds as the le label has always spelled them */
static const char *const bucket_le[SQE_BUCKETS] = {"0.005", "0.01", "0.025",
	"0.05", "0.1", "0.25", "0.5", "1.0", "2.5", "5.0", "10.0"};

void
sqe_metrics_pass(struct sqe *e, double seconds)
{
	struct sqe_counters *c = &e->c;
	size_t i;

	c->pass_last = seconds;
	for (i = 0; i < SQE_BUCKETS; i++)
		if (seconds <= sqe_buckets[i])
			c->hist[i]++;
	c->pass_sum += seconds;
	c->passes++;
	c->changed = 1;
}

static void
family(FILE *f, const char *name, const char *type, const char *help)
{
	fprintf(f, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

/* sample writes name{label="value"} v (no braces when label is NULL). */
static void
sample(FILE *f, const char *name, const char *label, const char *value,
	double v)
{
	struct prom_label l = {label, value, value ? strlen(value) : 0};
	char num[PROM_VALUE_SIZE];

	prom_sample(f, name, &l, label ? 1 : 0, prom_value(v, num));
}

static void
gauge(FILE *f, const char *name, const char *help, double v)
{
	family(f, name, "gauge", help);
	sample(f, name, NULL, NULL, v);
}

/* metrics_cluster writes the gauges of the devices and the workloads. */
static void
metrics_cluster(FILE *f, const struct sqe_gauges *g,
	const struct sqe_counters *c)
{
	gauge(f, "agentaflow_gpu_total",
		"GPUs and MIG devices the nodes publish.", (double)g->total);
	gauge(f, "agentaflow_gpu_available",
		"Devices neither allocated nor unhealthy.", (double)g->avail);
	gauge(f, "agentaflow_gpu_utilization",
		"Mean utilization of the GPUs, percent.", g->util);
	gauge(f, "agentaflow_workloads_pending",
		"GPUWorkloads waiting to be placed.", (double)g->pending);
	gauge(f, "agentaflow_workloads_running", "GPUWorkloads running.",
		(double)g->running);
	gauge(f, "agentaflow_scheduling_duration",
		"Seconds the last placement pass took.", c->pass_last);
}

/* metrics_counts writes the engine's counters and the histogram. */
static void
metrics_counts(FILE *f, const struct sqe_counters *c)
{
	const char *name = "warp_gpuworkload_reconcile_duration_seconds", *k;
	void *v;
	size_t pos = 0, i;

	family(f, "warp_gpuworkload_scheduled_total", "counter",
		"Workloads placed, by strategy.");
	while (hm_next(c->scheduled, &pos, &k, &v))
		sample(f, "warp_gpuworkload_scheduled_total", "strategy", k,
			(double)*(long *)v);
	family(f, "warp_gpuworkload_failed_total", "counter",
		"Workloads that ended Failed, by reason.");
	sample(f, "warp_gpuworkload_failed_total", "reason", "invalid",
		(double)c->failed_invalid);
	sample(f, "warp_gpuworkload_failed_total", "reason", "job_failed",
		(double)c->failed_job);
	sample(f, "warp_gpuworkload_failed_total", "reason", "unschedulable",
		(double)c->failed_unsched);
	family(f, "warp_gpuworkload_retries_total", "counter",
		"Placement attempts scheduled for a retry.");
	sample(f, "warp_gpuworkload_retries_total", NULL, NULL,
		(double)c->retries);
	family(f, name, "histogram", "Time of one placement pass.");
	for (i = 0; i < SQE_BUCKETS; i++)
		sample(f, "warp_gpuworkload_reconcile_duration_seconds_bucket",
			"le", bucket_le[i], c->hist[i]);
	sample(f, "warp_gpuworkload_reconcile_duration_seconds_bucket", "le",
		"+Inf", (double)c->passes);
	sample(f, "warp_gpuworkload_reconcile_duration_seconds_sum", NULL, NULL,
		c->pass_sum);
	sample(f, "warp_gpuworkload_reconcile_duration_seconds_count", NULL,
		NULL, (double)c->passes);
}

/* metrics_io writes the queue's depth and what the watches and the
 * writers did. */
static void
metrics_io(FILE *f, const struct sqe_counters *c, const struct sqe_gauges *g,
	const struct sqe_watches *w)
{
	size_t i;

	gauge(f, "k8shazgpu_controller_queue_depth",
		"Workloads waiting: for capacity or for a retry.",
		(double)g->queued);
	family(f, "k8shazgpu_controller_watch_events_total", "counter",
		"Watch events received, by resource.");
	for (i = 0; i < SQE_NFEEDS; i++)
		sample(f, "k8shazgpu_controller_watch_events_total", "resource",
			sqe_feed_name[i], (double)w->events[i]);
	family(f, "k8shazgpu_controller_watch_lists_total", "counter",
		"Lists made: the first, after 410 Gone, and each resync.");
	for (i = 0; i < SQE_NFEEDS; i++)
		sample(f, "k8shazgpu_controller_watch_lists_total", "resource",
			sqe_feed_name[i], (double)w->lists[i]);
	family(f, "k8shazgpu_controller_writes_total", "counter",
		"Writes to the API server, by result.");
	sample(f, "k8shazgpu_controller_writes_total", "result", "error",
		(double)c->writes_err);
	sample(f, "k8shazgpu_controller_writes_total", "result", "ok",
		(double)c->writes_ok);
}

char *
sqe_metrics(const struct sqe *e, const struct sqe_watches *w, size_t *len)
{
	struct sqe_gauges g;
	char *buf = NULL;
	FILE *f = open_memstream(&buf, len);

	if (!f)
		err_die(HAZ_FAIL, "open_memstream:");
	sqe_gauges(e, &g);
	metrics_cluster(f, &g, &e->c);
	metrics_counts(f, &e->c);
	metrics_io(f, &e->c, &g, w);
	if (fclose(f) != 0)
		err_die(HAZ_FAIL, "open_memstream:");
	return buf;
}

/* ---- kept across restarts ---- */

void
sqe_metrics_load(struct sqe *e, const json_t *j)
{
	struct sqe_counters *c = &e->c;
	json_t *h, *v;
	const char *k;
	long *n;
	size_t i;

	if (!j)
		return;
	json_object_foreach(json_object_get(j, "scheduled"), k, v) {
		n = ecalloc(1, sizeof *n);
		*n = (long)json_integer_value(v);
		hm_put(c->scheduled, k, n);
	}
	h = json_object_get(j, "failed");
	c->failed_invalid = (long)json_integer_value(
		json_object_get(h, "invalid"));
	c->failed_unsched = (long)json_integer_value(
		json_object_get(h, "unschedulable"));
	c->failed_job = (long)json_integer_value(
		json_object_get(h, "job_failed"));
	c->retries = (long)json_integer_value(json_object_get(j, "retries"));
	h = json_object_get(j, "reconcile");
	json_array_foreach(json_object_get(h, "buckets"), i, v)
		if (i < SQE_BUCKETS)
			c->hist[i] = json_number_value(v);
	c->pass_sum = json_number_value(json_object_get(h, "sum"));
	c->passes = (long)json_integer_value(json_object_get(h, "count"));
}

char *
sqe_metrics_save(const struct sqe *e, size_t *len)
{
	const struct sqe_counters *c = &e->c;
	struct jb b = {0};
	const char *k;
	void *v;
	size_t pos = 0, i;

	jb_raw(&b, "{\"scheduled\":{");
	while (hm_next(c->scheduled, &pos, &k, &v)) {
		if (b.buf[b.len - 1] != '{')
			jb_raw(&b, ",");
		jb_str(&b, k);
		jb_raw(&b, ":");
		jb_int(&b, *(long *)v);
	}
	jb_raw(&b, "},\"failed\":{\"invalid\":");
	jb_int(&b, c->failed_invalid);
	jb_raw(&b, ",\"unschedulable\":");
	jb_int(&b, c->failed_unsched);
	jb_raw(&b, ",\"job_failed\":");
	jb_int(&b, c->failed_job);
	jb_raw(&b, "},\"retries\":");
	jb_int(&b, c->retries);
	jb_raw(&b, ",\"reconcile\":{\"buckets\":[");
	for (i = 0; i < SQE_BUCKETS; i++) {
		if (i)
			jb_raw(&b, ",");
		jb_int(&b, (long long)c->hist[i]);
	}
	jb_raw(&b, "],\"sum\":");
	jb_real(&b, c->pass_sum);
	jb_raw(&b, ",\"count\":");
	jb_int(&b, c->passes);
	jb_raw(&b, "}}\n");
	*len = b.len;
	return b.buf;
}
