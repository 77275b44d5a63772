/* cdi: the per-claim CDI specs of the kubelet plugin (see cdi.h). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cdi.h"
#include "ck.h"
#include "err.h"
#include "nvdrv.h"

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

void
cdi_conf_free(struct cdi_conf *c)
{
	json_decref(c->driver);
	c->driver = NULL;
}

int
cdi_mode_of(const char *s)
{
	if (strcmp(s, "full") == 0)
		return CDI_FULL;
	if (strcmp(s, "env") == 0)
		return CDI_ENV;
	return -1;
}

/* What one spec is built with, and the notes for its annotations. */
struct build {
	struct cdi_conf *c;
	json_t *minor, *caps, *driver; /* notes: arrays of strings */
	char *missing;                 /* the first GPU node missing */
	int any_node;
};

/* note adds text (taken) to notes, warned about when warn. */
static void
note(json_t *notes, json_t *text, int warn)
{
	if (warn)
		err_warn("%s", json_string_value(text));
	json_array_append_new(notes, text);
}

static json_int_t
iget(const json_t *o, const char *key, json_int_t dflt)
{
	json_t *v = json_object_get(o, key);

	return json_is_integer(v) ? json_integer_value(v) : dflt;
}

/* cap passes the MIG capability node whose access file is
 * <procroot>/driver/nvidia/capabilities/<rel>/access, for device dev. */
static void
cap(struct build *b, json_t *nodes, const char *dev, const char *rel)
{
	char *file = easprintf("/driver/nvidia/capabilities/%s/access", rel);
	char *path = nvd_join(b->c->procroot, file), why[1024], leaf[64];
	long minor;

	if (nvd_cap_minor(path, &minor, why, sizeof why) < 0) {
		note(b->caps,
			json_sprintf("%s: %s; that capability is not passed",
				dev, why),
			1);
	} else {
		snprintf(leaf, sizeof leaf, "nvidia-caps/nvidia-cap%ld", minor);
		if (!node_of(nodes, b->c->devdir, leaf))
			note(b->caps,
				json_sprintf("%s: %s/%s (named by %s) does not "
					     "exist on this node, not passed",
					dev, b->c->devdir, leaf, path),
				1);
	}
	free(path);
	free(file);
}

/* device_nodes adds the nodes of request device d to nodes. */
static void
device_nodes(struct build *b, json_t *nodes, const json_t *d)
{
	const char *dev = json_string_value(json_object_get(d, "name"));
	const char *uuid = json_string_value(json_object_get(d, "uuid"));
	json_int_t minor = iget(d, "minor", -1), gi, ci;
	char leaf[64], rel[96];

	if (minor < 0) {
		minor = iget(d, "gpu", 0);
		note(b->minor,
			json_sprintf("%s: its GPU's minor number is unknown; "
				     "its index %lld is taken for it "
				     "(/dev/nvidia%lld)",
				dev, (long long)minor, (long long)minor),
			0);
	}
	snprintf(leaf, sizeof leaf, "nvidia%lld", (long long)minor);
	if (!node_of(nodes, b->c->devdir, leaf)) {
		if (!b->missing)
			b->missing = easprintf("%s/%s", b->c->devdir, leaf);
		return;
	}
	b->any_node = 1;
	if (!json_object_get(d, "gi") && (!uuid || strncmp(uuid, "MIG-", 4)))
		return; /* a whole GPU */
	gi = iget(d, "gi", -1);
	ci = iget(d, "ci", -1);
	if (gi < 0 || ci < 0) {
		note(b->caps,
			json_sprintf("%s: its GPU instance or compute instance "
				     "id is unknown, so no nvidia-cap node is "
				     "passed for it",
				dev),
			1);
		return;
	}
	snprintf(rel, sizeof rel, "gpu%lld/mig/gi%lld", (long long)minor,
		(long long)gi);
	cap(b, nodes, dev, rel);
	snprintf(rel, sizeof rel, "gpu%lld/mig/gi%lld/ci%lld", (long long)minor,
		(long long)gi, (long long)ci);
	cap(b, nodes, dev, rel);
}

/* driver_of returns the scan of the driver files (cached in c), or NULL
 * when no driver version is known, noted. */
static const json_t *
driver_of(struct build *b, const char *version)
{
	struct cdi_conf *c = b->c;
	char why[1024], *v = NULL;
	const char *have;

	if (!nvd_version_ok(version)) {
		if (!(v = nvd_version(c->procroot, why, sizeof why))) {
			note(b->driver,
				json_sprintf("no driver version known (the gpu "
					     "records carry none, and %s), so "
					     "no driver file is mounted",
					why),
				1);
			return NULL;
		}
		version = v;
	}
	have = json_string_value(json_object_get(c->driver, "version"));
	if (!have || strcmp(have, version) != 0) {
		json_decref(c->driver);
		c->driver = nvd_scan(c->root, version, c->hook);
	}
	free(v);
	json_array_extend(b->driver, json_object_get(c->driver, "notes"));
	return c->driver;
}

/* joined returns the strings of notes joined by "; " (malloc'd). */
static char *
joined(const json_t *notes)
{
	char *acc = NULL, *n;
	size_t i;
	json_t *e;

	json_array_foreach(notes, i, e) {
		n = acc ? easprintf("%s; %s", acc, json_string_value(e))
			: estrdup(json_string_value(e));
		free(acc);
		acc = n;
	}
	return acc;
}

/* annotate sets annotation key to the notes joined, if any. */
static void
annotate(json_t *spec, const char *key, const json_t *notes)
{
	char *text = joined(notes);

	if (text)
		json_object_set_new(json_object_get(spec, "annotations"), key,
			json_string(text));
	free(text);
}

/* spec_edits returns the spec's own edits: the common nodes (when a GPU
 * node is passed) and in full mode the driver's files and hooks; NULL
 * when there are none. */
static json_t *
spec_edits(struct build *b, const char *version)
{
	json_t *edits = json_object(), *nodes = json_array();
	const json_t *drv;

	if (b->any_node) {
		node_of(nodes, b->c->devdir, "nvidiactl");
		node_of(nodes, b->c->devdir, "nvidia-uvm");
		node_of(nodes, b->c->devdir, "nvidia-uvm-tools");
		node_of(nodes, b->c->devdir, "nvidia-modeset");
	}
	if (json_array_size(nodes) > 0)
		json_object_set(edits, "deviceNodes", nodes);
	json_decref(nodes);
	if (b->c->mode == CDI_FULL && (drv = driver_of(b, version))) {
		if (json_array_size(json_object_get(drv, "mounts")) > 0)
			json_object_set(edits, "mounts",
				json_object_get(drv, "mounts"));
		if (json_array_size(json_object_get(drv, "hooks")) > 0)
			json_object_set(edits, "hooks",
				json_object_get(drv, "hooks"));
	}
	if (json_object_size(edits) == 0) {
		json_decref(edits);
		return NULL;
	}
	return edits;
}

/* host_path rewrites the string member key of o from a path under
 * prefix, as the plugin sees the host, to the host's own path. */
static void
host_path(json_t *o, const char *key, const char *prefix)
{
	const char *p = json_string_value(json_object_get(o, key));
	size_t n = strlen(prefix);

	if (p && strncmp(p, prefix, n) == 0 && p[n] == '/')
		json_object_set_new(o, key, json_string(p + n));
}

/* host_paths writes every host path of edits (device nodes, mounts, hook
 * binaries) as the host names it: the runtime reading the spec runs on
 * the host, not in the plugin's container. */
static void
host_paths(json_t *edits, const char *prefix)
{
	json_t *e;
	size_t i;

	json_array_foreach(json_object_get(edits, "deviceNodes"), i, e)
		host_path(e, "hostPath", prefix);
	json_array_foreach(json_object_get(edits, "mounts"), i, e)
		host_path(e, "hostPath", prefix);
	json_array_foreach(json_object_get(edits, "hooks"), i, e)
		host_path(e, "path", prefix);
}

json_t *
cdi_spec(const char *uid, const char *ns, const char *name,
	const json_t *requests, const char *version, struct cdi_conf *c)
{
	struct build b = {c, json_array(), json_array(), json_array(), NULL, 0};
	json_t *devices = json_array(), *spec, *list, *d, *nodes, *edits;
	const char *req;
	char *uuids, *names;
	size_t i;

	json_object_foreach((json_t *)requests, req, list) {
		uuids = names = NULL;
		nodes = json_array();
		json_array_foreach(list, i, d) {
			join(&uuids,
				json_string_value(json_object_get(d, "uuid")));
			join(&names,
				json_string_value(json_object_get(d, "name")));
			device_nodes(&b, nodes, d);
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
	spec = json_pack("{s:s, s:s, s:{s:s++, s:s, s:s}, s:o}", "cdiVersion",
		CDI_VERSION, "kind", CDI_VENDOR "/" CDI_CLASS, "annotations",
		"canhazgpu.dev/claim", ns, "/", name, "canhazgpu.dev/claim-uid",
		uid, "canhazgpu.dev/cdi-mode",
		c->mode == CDI_FULL ? "full" : "env", "devices", devices);
	if ((edits = spec_edits(&b, version)))
		json_object_set_new(spec, "containerEdits", edits);
	if (b.missing) {
		json_t *why =
			json_sprintf("%s: %s does not exist on this node, "
				     "so no device node is passed for "
				     "%s; the devices are named by "
				     "CUDA_VISIBLE_DEVICES and "
				     "NVIDIA_VISIBLE_DEVICES only",
				b.any_node ? "some" : "none", b.missing,
				b.any_node ? "that GPU" : "any GPU");

		if (b.any_node)
			err_warn("%s", json_string_value(why));
		json_object_set_new(json_object_get(spec, "annotations"),
			"canhazgpu.dev/device-nodes", why);
		free(b.missing);
	}
	if (c->hostroot && strcmp(c->hostroot, "/") != 0) {
		host_paths(json_object_get(spec, "containerEdits"),
			c->hostroot);
		json_array_foreach(devices, i, d)
			host_paths(json_object_get(d, "containerEdits"),
				c->hostroot);
	}
	annotate(spec, "canhazgpu.dev/minor-numbers", b.minor);
	annotate(spec, "canhazgpu.dev/mig-caps", b.caps);
	annotate(spec, "canhazgpu.dev/driver", b.driver);
	json_decref(b.minor);
	json_decref(b.caps);
	json_decref(b.driver);
	return spec;
}

int
cdi_write(const char *path, const json_t *spec, char *why, size_t n)
{
	char *text = json_dumps(spec, JSON_COMPACT | JSON_SORT_KEYS);
	char *tmp = easprintf("%s.tmp", path);
	size_t len, off = 0;
	ssize_t w;
	int fd, e;

	if (!text)
		err_die(HAZ_FAIL, "out of memory");
	len = strlen(text);
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	while (fd >= 0 && off < len) {
		w = write(fd, text + off, len - off);
		if (w < 0 && errno != EINTR)
			break;
		off += w > 0 ? (size_t)w : 0;
	}
	if (fd < 0 || off < len || close(fd) < 0 || rename(tmp, path) < 0) {
		e = errno;
		if (fd >= 0 && off < len)
			close(fd);
		unlink(tmp);
		snprintf(why, n, "%s: %s", path, strerror(e));
		free(tmp);
		free(text);
		return -1;
	}
	free(tmp);
	free(text);
	return 0;
}

int
cdi_remove(const char *path, char *why, size_t n)
{
	if (unlink(path) == 0 || errno == ENOENT)
		return 0;
	snprintf(why, n, "%s: %s", path, strerror(errno));
	return -1;
}
