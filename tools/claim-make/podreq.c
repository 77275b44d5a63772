/* podreq: pod requests against a node's allocatable (see podreq.h). */
#include <string.h>

#include "podreq.h"
#include "podres.h"

int
podreq_terminal(const json_t *pod)
{
	const char *phase = json_string_value(
		json_object_get(json_object_get(pod, "status"), "phase"));

	return phase &&
		(strcmp(phase, "Succeeded") == 0 ||
			strcmp(phase, "Failed") == 0);
}

/* entry reads res of the object holder.<which> into *q: 1 named, 0 not,
 * a bad value counted in *bad and read as zero (still named). */
static int
entry(const json_t *holder, const char *which, const char *res, struct qty *q,
	int *bad)
{
	int r = podres_entry(holder, which, res, q);

	if (r < 0) {
		++*bad;
		return 1;
	}
	return r;
}

/* requested reads a resources object's request of res, else its limit,
 * into *q; returns whether either names it. */
static int
requested(const json_t *resources, const char *res, struct qty *q, int *bad)
{
	return entry(resources, "requests", res, q, bad) ||
		entry(resources, "limits", res, q, bad);
}

/* pod_level: kube-scheduler reads these from spec.resources when given */
static int
pod_level(const char *res)
{
	return strcmp(res, "cpu") == 0 || strcmp(res, "memory") == 0 ||
		strncmp(res, "hugepages-", 10) == 0;
}

/* container_request is kube-scheduler's reading of one container (see
 * podreq.h): its request, else its limit; never -1, bad values go to
 * *bad. */
static int
container_request(const json_t *c, const char *res, struct qty *q, void *bad)
{
	return requested(json_object_get(c, "resources"), res, q, bad);
}

int
podreq_request(const json_t *pod, const char *res, struct qty *q, int *bad)
{
	const json_t *spec = json_object_get(pod, "spec");
	struct qty over;
	int named;

	if (strcmp(res, "pods") == 0) {
		qty_from_int(q, 1, QTY_DECIMAL_SI);
		return 1;
	}
	if (!(pod_level(res) &&
		    (named = requested(json_object_get(spec, "resources"), res,
			     q, bad))))
		named = podres_combine(spec, res, container_request, bad, q);
	if (entry(spec, "overhead", res, &over, bad)) {
		qty_add(q, q, &over);
		named = 1;
	}
	return named;
}

json_t *
podreq_left(const json_t *allocatable, const json_t *pods, int *bad)
{
	json_t *out = json_object(), *v;
	const json_t *pod;
	struct qty left, want, zero = {0};
	char buf[QTY_BUFSIZE];
	const char *res;
	size_t i;

	json_object_foreach((json_t *)allocatable, res, v) {
		if (podres_qty(v, &left) != QTY_OK) {
			json_object_set(out, res, v);
			++*bad;
			continue;
		}
		json_array_foreach(pods, i, pod) {
			if (!podreq_terminal(pod) &&
				podreq_request(pod, res, &want, bad))
				qty_sub(&left, &left, &want);
		}
		if (qty_cmp(&left, &zero) < 0)
			left = zero;
		json_object_set_new(out, res,
			json_string(qty_format(&left, buf)));
	}
	return out;
}
