/* unit/gpunode: drive tools/claim-make/podreq, lib/podres and
 * tools/claim-make/gpunode from stdin, one JSON object a line, printing one
 * JSON line each:
 *
 *   {"op":"request","res":R,"pod":POD}
 *       -> {"q":"2500m","named":1,"bad":0}  (podreq_request)
 *   {"op":"left","allocatable":{...},"pods":[...]}
 *       -> {"left":{...},"bad":0}           (podreq_left)
 *   {"op":"total","res":R,"spec":SPEC}
 *       -> {"q":"2","named":1}             (podres_total, the webhook's
 *                                            reading, over the same walk)
 *   {"op":"status","gpus":[...],"node_status":{...},"pods":[...],
 *    "claims":[...]}
 *       -> gn_status for node "n1", driver gpu.canhazgpu.dev, at time 0;
 *          "pods" absent or null: none known
 *   {"op":"current","have":OBJ,"want":OBJ,"now":N,"heartbeat":H}
 *       -> {"current":0|1}                  (gn_current)
 *
 * Exit 1 when a line is no such request. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "err.h"
#include "gpunode.h"
#include "podreq.h"
#include "podres.h"

static json_t *
request(const json_t *in)
{
	char buf[QTY_BUFSIZE];
	struct qty q;
	int bad = 0, named;

	named = podreq_request(json_object_get(in, "pod"),
		json_string_value(json_object_get(in, "res")), &q, &bad);
	return json_pack("{s:s, s:i, s:i}", "q", qty_format(&q, buf), "named",
		named, "bad", bad);
}

static json_t *
total(const json_t *in)
{
	char buf[QTY_BUFSIZE];
	struct qty q;
	int named;

	named = podres_total(json_object_get(in, "spec"),
		json_string_value(json_object_get(in, "res")), &q);
	return json_pack("{s:s, s:i}", "q", qty_format(&q, buf), "named",
		named);
}

static json_t *
left(const json_t *in)
{
	int bad = 0;
	json_t *l = podreq_left(json_object_get(in, "allocatable"),
		json_object_get(in, "pods"), &bad);

	return json_pack("{s:o, s:i}", "left", l, "bad", bad);
}

static json_t *
status(const json_t *in)
{
	const json_t *pods = json_object_get(in, "pods");
	int bad = 0;

	return gn_status(json_object_get(in, "gpus"), "n1", "gpu.canhazgpu.dev",
		json_object_get(in, "node_status"),
		json_is_array(pods) ? pods : NULL,
		json_object_get(in, "claims"), 0, &bad);
}

static json_t *
current(const json_t *in)
{
	return json_pack("{s:i}", "current",
		gn_current(json_object_get(in, "have"),
			json_object_get(in, "want"),
			(time_t)json_integer_value(json_object_get(in, "now")),
			json_integer_value(json_object_get(in, "heartbeat"))));
}

int
main(int argc, char **argv)
{
	char *line = NULL;
	size_t cap = 0;
	json_t *in, *out;
	const char *op;
	int status_code = 0;

	(void)argc;
	err_init(argv[0]);
	while (getline(&line, &cap, stdin) > 0) {
		if (!(in = json_loads(line, 0, NULL)) ||
			!(op = json_string_value(json_object_get(in, "op")))) {
			printf("bad request: %s", line);
			json_decref(in);
			status_code = 1;
			continue;
		}
		out = strcmp(op, "request") == 0     ? request(in)
			: strcmp(op, "left") == 0    ? left(in)
			: strcmp(op, "total") == 0   ? total(in)
			: strcmp(op, "status") == 0  ? status(in)
			: strcmp(op, "current") == 0 ? current(in)
						     : NULL;
		if (out) {
			char *s = json_dumps(out, JSON_COMPACT);

			puts(s);
			free(s);
		} else {
			printf("bad request: %s", line);
			status_code = 1;
		}
		json_decref(out);
		json_decref(in);
	}
	free(line);
	return status_code;
}
