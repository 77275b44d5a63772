/* cdi: the per-claim CDI specs of the kubelet plugin (see cdi.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cdi.h"
#include "ck.h"
#include "err.h"

#define SPEC_PREFIX CDI_VENDOR "-" CDI_CLASS "_"

char *
cdi_spec_path(const char *dir, const char *uid)
{
	return easprintf("%s/" SPEC_PREFIX "%s.json", dir, uid);
}

char *
cdi_device_id(const char *uid, const char *request)
{
	return easprintf(CDI_VENDOR "/" CDI_CLASS "=%s-%s", uid, request);
}

char *
cdi_claim_of(const char *filename)
{
	size_t lp = strlen(SPEC_PREFIX), n = strlen(filename);

	if (n <= lp + 5 || strncmp(filename, SPEC_PREFIX, lp) != 0 ||
		strcmp(filename + n - 5, ".json") != 0)
		return NULL;
	return strndup(filename + lp, n - lp - 5);
}

/* node_of adds to nodes {"path": "/dev/<leaf>", "hostPath": <devdir>/<leaf>}
 * when devdir has leaf and nodes has no entry for it yet. Returns 1 when
 * the node exists. */
static int
node_of(json_t *nodes, const char *devdir, const char *leaf)
{
	char *host = easprintf("%s/%s", devdir, leaf);
	char *path = easprintf("/dev/%s", leaf);
	struct stat st;
	size_t i;
	json_t *e;
	int have = stat(host, &st) == 0;

	if (have) {
		json_array_foreach(nodes, i, e) {
			if (strcmp(json_string_value(
					   json_object_get(e, "path")),
				    path) == 0)
				goto done;
		}
		json_array_append_new(nodes,
			json_pack("{s:s, s:s}", "path", path, "hostPath",
				host));
	}
done:
	free(host);
	free(path);
	return have;
}

/* join appends s to the comma-separated list *acc (malloc'd). */
static void
join(char **acc, const char *s)
{
	char *n = *acc ? easprintf("%s,%s", *acc, s) : estrdup(s);

	free(*acc);
	*acc = n;
}

json_t *
cdi_spec(const char *uid, const char *ns, const char *name,
	const json_t *requests, const char *devdir)
{
	json_t *devices = json_array(), *spec, *list, *d, *nodes, *edits;
	const char *req;
	char *uuids, *names, leaf[32], *missing = NULL;
	size_t i;
	int any_node = 0;

	json_object_foreach((json_t *)requests, req, list) {
		uuids = names = NULL;
		nodes = json_array();
		json_array_foreach(list, i, d) {
			join(&uuids,
				json_string_value(json_object_get(d, "uuid")));
			join(&names,
				json_string_value(json_object_get(d, "name")));
			snprintf(leaf, sizeof leaf, "nvidia%lld",
				json_integer_value(json_object_get(d, "gpu")));
			if (node_of(nodes, devdir, leaf))
				any_node = 1;
			else if (!missing)
				missing = easprintf("%s/%s", devdir, leaf);
		}
		if (json_array_size(nodes) > 0) {
			node_of(nodes, devdir, "nvidiactl");
			node_of(nodes, devdir, "nvidia-uvm");
			node_of(nodes, devdir, "nvidia-uvm-tools");
		}
		edits = json_pack("{s:[s+, s+, s+++, s+, s+]}", "env",
			"CUDA_VISIBLE_DEVICES=", uuids ? uuids : "",
			"NVIDIA_VISIBLE_DEVICES=", uuids ? uuids : "",
			"CANHAZGPU_CLAIM=", ns, "/", name,
			"CANHAZGPU_CLAIM_UID=", uid,
			"CANHAZGPU_DEVICES=", names ? names : "");
		if (json_array_size(nodes) > 0)
			json_object_set(edits, "deviceNodes", nodes);
		json_decref(nodes);
		json_array_append_new(devices,
			json_pack("{s:s++, s:o}", "name", uid, "-", req,
				"containerEdits", edits));
		free(uuids);
		free(names);
	}
	spec = json_pack("{s:s, s:s, s:{s:s++, s:s}, s:o}", "cdiVersion",
		CDI_VERSION, "kind", CDI_VENDOR "/" CDI_CLASS, "annotations",
		"canhazgpu.dev/claim", ns, "/", name, "canhazgpu.dev/claim-uid",
		uid, "devices", devices);
	if (missing) {
		char *why =
			easprintf("%s: %s does not exist on this node, so "
				  "no device node is passed for %s; the "
				  "devices are named by CUDA_VISIBLE_DEVICES "
				  "and NVIDIA_VISIBLE_DEVICES only",
				any_node ? "some" : "none", missing,
				any_node ? "that GPU" : "any GPU");
		json_object_set_new(json_object_get(spec, "annotations"),
			"canhazgpu.dev/device-nodes", json_string(why));
		free(why);
		free(missing);
	}
	return spec;
}

int
cdi_write(const char *path, const json_t *spec, char *why, size_t n)
{
	char *text = json_dumps(spec, JSON_COMPACT | JSON_SORT_KEYS);
	int rc;

	if (!text)
		err_die(HAZ_FAIL, "out of memory");
	rc = ck_write_atomic(path, text, strlen(text));
	if (rc < 0)
		snprintf(why, n, "%s: %s", path, strerror(errno));
	free(text);
	return rc;
}

int
cdi_remove(const char *path, char *why, size_t n)
{
	if (unlink(path) == 0 || errno == ENOENT)
		return 0;
	snprintf(why, n, "%s: %s", path, strerror(errno));
	return -1;
}
