/* cri: images through the runtime's CRI and containerd's services (see
 * cri.h). */
#include "cri.h"

#include <errno.h>
#include <fnmatch.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <time.h>

#include "containerd.pb-c.h"
#include "cri.pb-c.h"

#include "b64.h"
#include "clock.h"
#include "err.h"
#include "grpcc.h"

/* protoc-c's names carry the whole package name */
#define RT(x) Runtime__V1__##x
#define CD(x) Containerd__Cache__##x

typedef CD(UpdateImageRequest) UpdateRequest;
typedef CD(UpdateImageResponse) UpdateResponse;
typedef CD(Image__LabelsEntry) LabelEntry;
typedef CD(ListStatusesRequest) StatusesRequest;
typedef CD(ListStatusesResponse) StatusesResponse;

#define IMAGES "/runtime.v1.ImageService/"
#define CALL_MS 30000    /* any call but a pull: the runtime is local */
#define PROGRESS_MS 5000 /* cri_progress runs beside a pull: short */
#define PIN_WAIT_MS 3000 /* CRI learns of a label change by an event */
#define PIN_POLL_MS 50

static const char *const k8s_namespace[] = {"containerd-namespace", "k8s.io",
	NULL};

/* ---- calls ----------------------------------------------------------- */

/* contains: s has one of the words, without regard to case. */
static int
contains(const char *s, const char *const *words)
{
	for (; *words; words++)
		if (strcasestr(s, *words))
			return 1;
	return 0;
}

/* classify reads the runtime's failure as a reason (cri.h has the table;
 * "authorization" before "not found": a registry that wants a login says
 * the repository "does not exist or may require authorization"). */
static enum ck_reason
classify(int status, const char *msg)
{
	static const char *const unauthorized[] = {"401", "403", "unauthorized",
		"authorization failed", "require authorization",
		"access denied", "forbidden", NULL};
	static const char *const not_found[] = {"not found", "manifest unknown",
		"name unknown", NULL};
	static const char *const unreachable[] = {"connection refused",
		"no such host", "dial tcp", "i/o timeout", "no route to host",
		"network is unreachable", NULL};
	static const char *const deadline[] = {"deadline", NULL};

	if (contains(msg, unauthorized))
		return CK_UNAUTHORIZED;
	if (status == 5 || contains(msg, not_found))
		return CK_NOT_FOUND;
	if (contains(msg, unreachable))
		return CK_UNREACHABLE;
	if (status == 4 || contains(msg, deadline))
		return CK_TIMEOUT;
	return CK_RUNTIME;
}

/* fail is ck_fail with the message made safe to print (the runtime's
 * words, cut at any byte by the buffer's size). */
static int __attribute__((format(printf, 3, 4)))
fail(struct ck_result *res, enum ck_reason reason, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	ck_vfail(res, reason, fmt, ap);
	va_end(ap);
	err_clean(res->message);
	return -1;
}

/* rpc sends m to path on sock and decodes the answer as d into *out.
 * Returns 0; a grpc-status (1..16) or -1 (no answer), with res's reason
 * and message set, the message starting with what ("pull REF"). */
static int
rpc(const char *sock, const char *path, const char *const *headers,
	const ProtobufCMessage *m, const ProtobufCMessageDescriptor *d,
	int timeout_ms, ProtobufCMessage **out, const char *what,
	struct ck_result *res)
{
	size_t n = protobuf_c_message_get_packed_size(m), resp_len;
	uint8_t *req = emalloc(n ? n : 1), *resp;
	static const uint8_t none[1];
	char *msg;
	int rc, e;

	*out = NULL;
	protobuf_c_message_pack(m, req);
	rc = grpcc_call(sock, path, headers, req, n, timeout_ms, &resp,
		&resp_len, &msg);
	e = errno;
	free(req);
	if (rc < 0) {
		if (e == ETIMEDOUT)
			fail(res, CK_TIMEOUT,
				"%s: no answer from the runtime in %d s", what,
				(timeout_ms + 999) / 1000);
		else if (e == ENOENT || e == ECONNREFUSED || e == ENOTSOCK ||
			e == EACCES || e == ENAMETOOLONG || e == ENOTDIR)
			fail(res, CK_RUNTIME,
				"%s: no container runtime at %s (%s)", what,
				sock, strerror(e));
		else
			fail(res, CK_RUNTIME, "%s: runtime at %s: %s", what,
				sock, msg);
	} else if (rc > 0) {
		fail(res, classify(rc, msg), "%s: %s", what,
			*msg ? msg : "failed with no message");
	} else if (!(*out = protobuf_c_message_unpack(d, NULL, resp_len,
			     resp_len ? resp : none))) {
		rc = -1;
		fail(res, CK_RUNTIME, "%s: the runtime's answer is not a %s",
			what, d->short_name);
	}
	free(resp);
	free(msg);
	return rc;
}

/* ---- refs ------------------------------------------------------------ */

/* has_registry: ref's first component names a registry host. */
static size_t
registry_len(const char *ref)
{
	size_t n = strcspn(ref, "/");

	if (!ref[n])
		return 0;
	if (memchr(ref, '.', n) || memchr(ref, ':', n) ||
		(n == 9 && memcmp(ref, "localhost", 9) == 0))
		return n;
	return 0;
}

void
cri_registry(const char *ref, char *buf, size_t n)
{
	size_t len = registry_len(ref);

	if (!len || (len == 15 && strncasecmp(ref, "index.docker.io", 15) == 0))
		snprintf(buf, n, "docker.io");
	else
		snprintf(buf, n, "%.*s", (int)len, ref);
}

void
cri_repository(const char *ref, char *buf, size_t n)
{
	size_t reg = registry_len(ref), path_len;
	const char *path = reg ? ref + reg + 1 : ref, *slash, *colon;
	char host[256];

	path_len = strcspn(path, "@");
	slash = memrchr(path, '/', path_len);
	colon = memrchr(slash ? slash : path, ':',
		path_len - (size_t)((slash ? slash : path) - path));
	if (colon)
		path_len = (size_t)(colon - path);
	cri_registry(ref, host, sizeof host);
	snprintf(buf, n, "%s/%s%.*s", host,
		strcmp(host, "docker.io") == 0 && !memchr(path, '/', path_len)
			? "library/"
			: "",
		(int)path_len, path);
}

/* pick_digest sets out to img's repo digest for ref's repository, else
 * its id. */
static void
pick_digest(const RT(Image) * img, const char *ref, char *out, size_t n)
{
	char repo[512];
	size_t len, i;
	const char *at;

	cri_repository(ref, repo, sizeof repo);
	len = strlen(repo);
	for (i = 0; i < img->n_repo_digests; i++) {
		at = strrchr(img->repo_digests[i], '@');
		if (at && (size_t)(at - img->repo_digests[i]) == len &&
			strncmp(img->repo_digests[i], repo, len) == 0) {
			snprintf(out, n, "%s", at + 1);
			return;
		}
	}
	snprintf(out, n, "%s", img->id);
}

/* ---- the ImageService ------------------------------------------------ */

const char *
cri_default_socket(void)
{
	static const char *const socks[] = {"/run/containerd/containerd.sock",
		"/var/run/crio/crio.sock", NULL};
	struct stat st;

	for (const char *const *s = socks; *s; s++)
		if (stat(*s, &st) == 0 && S_ISSOCK(st.st_mode))
			return *s;
	return socks[0];
}

/* version is cri_version with the failure in res. */
static int
version(const char *sock, RT(VersionResponse) * *v, struct ck_result *res)
{
	RT(VersionRequest) req = RUNTIME__V1__VERSION_REQUEST__INIT;

	req.version = "v1";
	return rpc(sock, "/runtime.v1.RuntimeService/Version", NULL, &req.base,
		       &runtime__v1__version_response__descriptor, CALL_MS,
		       (ProtobufCMessage **)v, "version", res)
		? -1
		: 0;
}

int
cri_version(const char *sock, char *runtime, char *ver, char **err)
{
	struct ck_result res = {0};
	RT(VersionResponse) * v;

	*err = NULL;
	if (version(sock, &v, &res) < 0) {
		*err = estrdup(res.message);
		return -1;
	}
	snprintf(runtime, 64, "%s", v->runtime_name);
	snprintf(ver, 64, "%s", v->runtime_version);
	protobuf_c_message_free_unpacked(&v->base, NULL);
	return 0;
}

/* status asks for ref's image: 0 with *img (NULL when absent; free
 * *resp), or -1 with res set. */
static int
status(const char *sock, const char *ref, RT(ImageStatusResponse) * *resp,
	const char *what, struct ck_result *res)
{
	RT(ImageStatusRequest) req = RUNTIME__V1__IMAGE_STATUS_REQUEST__INIT;
	RT(ImageSpec) spec = RUNTIME__V1__IMAGE_SPEC__INIT;

	spec.image = (char *)ref;
	req.image = &spec;
	return rpc(sock, IMAGES "ImageStatus", NULL, &req.base,
		       &runtime__v1__image_status_response__descriptor, CALL_MS,
		       (ProtobufCMessage **)resp, what, res)
		? -1
		: 0;
}

int
cri_image(const char *sock, const char *ref, struct cri_image *out,
	struct ck_result *res)
{
	RT(ImageStatusResponse) * r;
	char what[320];

	memset(out, 0, sizeof *out);
	snprintf(what, sizeof what, "image %s", ref);
	if (status(sock, ref, &r, what, res) < 0)
		return -1;
	if (r->image) {
		out->present = 1;
		snprintf(out->id, sizeof out->id, "%s", r->image->id);
		pick_digest(r->image, ref, out->digest, sizeof out->digest);
		out->size = r->image->size;
		out->pinned = r->image->pinned ? 1 : 0;
		snprintf(res->resolved, sizeof res->resolved, "%s",
			out->digest);
		res->bytes = out->size;
	}
	protobuf_c_message_free_unpacked(&r->base, NULL);
	return 0;
}

int
cri_pull(const char *sock, const char *ref, const struct cri_auth *auth,
	int timeout_s, struct ck_result *res)
{
	RT(PullImageRequest) req = RUNTIME__V1__PULL_IMAGE_REQUEST__INIT;
	RT(ImageSpec) spec = RUNTIME__V1__IMAGE_SPEC__INIT;
	RT(AuthConfig) ac = RUNTIME__V1__AUTH_CONFIG__INIT;
	RT(PullImageResponse) * resp;
	struct cri_image img;
	char what[320];

	snprintf(what, sizeof what, "pull %s", ref);
	spec.image = (char *)ref;
	req.image = &spec;
	if (auth && auth->username) {
		ac.username = auth->username;
		ac.password = auth->password ? auth->password : "";
		req.auth = &ac;
	}
	if (rpc(sock, IMAGES "PullImage", NULL, &req.base,
		    &runtime__v1__pull_image_response__descriptor,
		    timeout_s > 0 ? timeout_s * 1000 : 0,
		    (ProtobufCMessage **)&resp, what, res))
		return -1;
	protobuf_c_message_free_unpacked(&resp->base, NULL);
	if (cri_image(sock, ref, &img, res) < 0)
		return -1;
	if (!img.present)
		return fail(res, CK_RUNTIME,
			"pull %s: the runtime pulled it but does not list it",
			ref);
	return 0;
}

int
cri_remove(const char *sock, const char *ref, struct ck_result *res)
{
	RT(RemoveImageRequest) req = RUNTIME__V1__REMOVE_IMAGE_REQUEST__INIT;
	RT(ImageSpec) spec = RUNTIME__V1__IMAGE_SPEC__INIT;
	RT(RemoveImageResponse) * resp;
	char what[320];

	snprintf(what, sizeof what, "remove %s", ref);
	spec.image = (char *)ref;
	req.image = &spec;
	if (rpc(sock, IMAGES "RemoveImage", NULL, &req.base,
		    &runtime__v1__remove_image_response__descriptor, CALL_MS,
		    (ProtobufCMessage **)&resp, what, res))
		return -1;
	protobuf_c_message_free_unpacked(&resp->base, NULL);
	return 0;
}

/* ---- containerd: pins and progress ----------------------------------- */

/* label_one sets or removes the pin label on containerd's image record
 * name: the grpc-status (5: no such record), or -1 with res set. */
static int
label_one(const char *sock, const char *name, int pin, const char *what,
	struct ck_result *res)
{
	UpdateRequest req = CONTAINERD__CACHE__UPDATE_IMAGE_REQUEST__INIT;
	CD(Image) img = CONTAINERD__CACHE__IMAGE__INIT;
	LabelEntry label = CONTAINERD__CACHE__IMAGE__LABELS_ENTRY__INIT;
	LabelEntry *labels[] = {&label};
	CD(FieldMask) mask = CONTAINERD__CACHE__FIELD_MASK__INIT;
	CD(Descriptor) target = CONTAINERD__CACHE__DESCRIPTOR__INIT;
	char *paths[] = {"labels." CRI_PIN_LABEL};
	UpdateResponse *resp;
	int rc;

	img.name = (char *)name;
	/* empty, and ignored under the mask; containerd crashes without it
	 * (see proto/containerd.proto) */
	img.target = &target;
	label.key = CRI_PIN_LABEL;
	label.value = CRI_PIN_VALUE;
	if (pin) {
		img.n_labels = 1;
		img.labels = labels;
	}
	mask.n_paths = 1;
	mask.paths = paths;
	req.image = &img;
	req.update_mask = &mask;
	rc = rpc(sock, "/containerd.services.images.v1.Images/Update",
		k8s_namespace, &req.base,
		&containerd__cache__update_image_response__descriptor, CALL_MS,
		(ProtobufCMessage **)&resp, what, res);
	if (rc == 0)
		protobuf_c_message_free_unpacked(&resp->base, NULL);
	return rc;
}

/* names lists every name containerd keeps the image under (its tags,
 * its repo digests, its id), NULL-terminated, pointing into img. */
static char **
names(const RT(Image) * img)
{
	size_t i, k = 0;
	char **v = ecalloc(img->n_repo_tags + img->n_repo_digests + 2,
		sizeof *v);

	for (i = 0; i < img->n_repo_tags; i++)
		v[k++] = img->repo_tags[i];
	for (i = 0; i < img->n_repo_digests; i++)
		v[k++] = img->repo_digests[i];
	if (*img->id)
		v[k++] = img->id;
	return v;
}

/* label_all labels each of the image's names: 0 when at least one was
 * there to label; -1 with res set; 1 when containerd's images service is
 * not on sock (res->message says so). */
static int
label_all(const char *sock, const RT(Image) * img, int pin, const char *what,
	struct ck_result *res)
{
	char **v = names(img);
	int rc = 0, done = 0;

	for (char **n = v; *n && rc >= 0; n++) {
		rc = label_one(sock, *n, pin, what, res);
		if (rc == 12) {
			snprintf(res->message, sizeof res->message,
				"%s: the runtime at %s has no containerd "
				"images service",
				what, sock);
			res->reason = CK_OK;
			rc = 1;
			break;
		}
		if (rc == 0)
			done = 1;
		else if (rc == 5)
			rc = 0; /* a name CRI lists but containerd lacks */
		else
			rc = -1;
	}
	free(v);
	if (rc == 0 && !done)
		return fail(res, CK_NOT_FOUND, "%s: the image is gone", what);
	if (rc == 0)
		res->reason = CK_OK, res->message[0] = '\0';
	return rc;
}

static void
sleep_ms(long ms)
{
	struct timespec ts = {ms / 1000, ms % 1000 * 1000000};

	while (nanosleep(&ts, &ts) != 0)
		;
}

/* read_back waits for CRI to report the pin as wanted (it hears of a
 * label change by an event, a moment later): 1 when it does, 0 when it
 * still does not after PIN_WAIT_MS, -1 with res set. */
static int
read_back(const char *sock, const char *ref, int pin, struct ck_result *res)
{
	struct cri_image img;
	long end = clock_mono_ms() + PIN_WAIT_MS;

	for (;;) {
		if (cri_image(sock, ref, &img, res) < 0)
			return -1;
		if (!img.present)
			return fail(res, CK_NOT_FOUND,
				"%spin %s: the image is gone", pin ? "" : "un",
				ref);
		if (img.pinned == pin)
			return 1;
		if (clock_mono_ms() >= end)
			return 0;
		sleep_ms(PIN_POLL_MS);
	}
}

int
cri_pin(const char *sock, const char *ref, int pin, struct ck_result *res)
{
	RT(VersionResponse) * v;
	RT(ImageStatusResponse) * st;
	char what[320], runtime[64], ver[64];
	int rc;

	snprintf(what, sizeof what, "%spin %s", pin ? "" : "un", ref);
	if (version(sock, &v, res) < 0)
		return -1;
	snprintf(runtime, sizeof runtime, "%s", v->runtime_name);
	snprintf(ver, sizeof ver, "%s", v->runtime_version);
	protobuf_c_message_free_unpacked(&v->base, NULL);
	res->pinned = -1;
	if (strcmp(runtime, "containerd") != 0) {
		snprintf(res->message, sizeof res->message,
			strcmp(runtime, "cri-o") == 0
				? "cri-o pins only the images its pinned_images "
				  "setting (crio.conf) lists"
				: "%s cannot be asked to pin images",
			runtime);
		err_clean(res->message);
		return 0;
	}
	if (status(sock, ref, &st, what, res) < 0)
		return -1;
	if (!st->image) {
		protobuf_c_message_free_unpacked(&st->base, NULL);
		return fail(res, CK_NOT_FOUND, "%s: the image is not present",
			what);
	}
	rc = label_all(sock, st->image, pin, what, res);
	protobuf_c_message_free_unpacked(&st->base, NULL);
	if (rc != 0)
		return rc < 0 ? -1 : 0;
	if ((rc = read_back(sock, ref, pin, res)) < 0)
		return -1;
	if (rc == 1) {
		res->pinned = pin;
		return 0;
	}
	if (!pin) {
		res->pinned = 1;
		return fail(res, CK_RUNTIME,
			"%s: still pinned after its label was removed", what);
	}
	snprintf(res->message, sizeof res->message,
		"containerd %s keeps the pin label but its CRI does not report "
		"pins (1.7 and later do)",
		ver);
	err_clean(res->message);
	return 0;
}

int
cri_progress(const char *sock, uint64_t *done, uint64_t *total)
{
	StatusesRequest req = CONTAINERD__CACHE__LIST_STATUSES_REQUEST__INIT;
	StatusesResponse *resp;
	struct ck_result res = {0};
	size_t i;

	*done = *total = 0;
	if (rpc(sock, "/containerd.services.content.v1.Content/ListStatuses",
		    k8s_namespace, &req.base,
		    &containerd__cache__list_statuses_response__descriptor,
		    PROGRESS_MS, (ProtobufCMessage **)&resp, "progress", &res))
		return -1;
	for (i = 0; i < resp->n_statuses; i++) {
		if (resp->statuses[i]->offset > 0)
			*done += (uint64_t)resp->statuses[i]->offset;
		if (resp->statuses[i]->total > 0)
			*total += (uint64_t)resp->statuses[i]->total;
	}
	protobuf_c_message_free_unpacked(&resp->base, NULL);
	return 0;
}

/* ---- credentials ----------------------------------------------------- */

/* key_host writes the host of a dockerconfigjson key (no scheme, no
 * path) into buf. */
static void
key_host(const char *key, char *buf, size_t n)
{
	const char *p = strstr(key, "://");

	p = p ? p + 3 : key;
	snprintf(buf, n, "%.*s", (int)strcspn(p, "/"), p);
}

static int
docker_io(const char *host)
{
	return strcasecmp(host, "docker.io") == 0 ||
		strcasecmp(host, "index.docker.io") == 0 ||
		strcasecmp(host, "registry-1.docker.io") == 0;
}

static size_t
dots(const char *s)
{
	size_t n = 0;

	for (; *s; s++)
		n += *s == '.';
	return n;
}

/* host_match: 2 for the same host, 1 for a wildcard key that matches, 0
 * for none. A '*' stands for part of one label, as in the kubelet's
 * keyring: the key and the host have as many labels. */
static int
host_match(const char *key, const char *host)
{
	char k[256];

	key_host(key, k, sizeof k);
	if (strcasecmp(k, host) == 0 || (docker_io(k) && docker_io(host)))
		return 2;
	return strchr(k, '*') && dots(k) == dots(host) &&
			fnmatch(k, host, FNM_CASEFOLD) == 0
		? 1
		: 0;
}

/* auth_bad says what is wrong (never quoting a secret) and returns -1. */
static int __attribute__((format(printf, 2, 3)))
auth_bad(struct cri_auth *out, const char *fmt, ...)
{
	va_list ap;

	cri_auth_free(out);
	va_start(ap, fmt);
	vsnprintf(out->message, sizeof out->message, fmt, ap);
	va_end(ap);
	err_clean(out->message);
	return -1;
}

/* string_member sets *to to a copy of o's member name when it is a
 * non-empty string: 0; -1 when it is there but not a string. */
static int
string_member(const json_t *o, const char *name, char **to)
{
	const json_t *v = json_object_get(o, name);

	if (!v || json_is_null(v))
		return 0;
	if (!json_is_string(v))
		return -1;
	if (*json_string_value(v)) {
		free(*to);
		*to = estrdup(json_string_value(v));
	}
	return 0;
}

int
cri_auth_for(const json_t *cfg, const char *ref, struct cri_auth *out)
{
	const json_t *auths, *e, *entry = NULL, *a;
	const char *key, *entry_key = NULL;
	unsigned char *plain;
	size_t len, bad;
	char *colon;
	int m, best = 0;

	memset(out, 0, sizeof *out);
	if (!json_is_object(cfg) ||
		!json_is_object(auths = json_object_get(cfg, "auths")))
		return auth_bad(out, "no \"auths\" object");
	cri_registry(ref, out->server, sizeof out->server);
	json_object_foreach((json_t *)auths, key, e) {
		if ((m = host_match(key, out->server)) > best)
			best = m, entry = e, entry_key = key;
	}
	if (!entry)
		return 1;
	if (!json_is_object(entry))
		return auth_bad(out, "auths[\"%s\"] is not an object",
			entry_key);
	if (string_member(entry, "username", &out->username) < 0 ||
		string_member(entry, "password", &out->password) < 0)
		return auth_bad(out,
			"auths[\"%s\"]: username or password is not a string",
			entry_key);
	if ((a = json_object_get(entry, "auth")) && !json_is_null(a) &&
		!(json_is_string(a) && !*json_string_value(a))) {
		if (!json_is_string(a) ||
			b64_decode(json_string_value(a), json_string_length(a),
				&plain, &len, &bad) < 0)
			return auth_bad(out, "auths[\"%s\"].auth is not base64",
				entry_key);
		if (!(colon = memchr(plain, ':', len)) ||
			memchr(plain, '\0', len)) {
			explicit_bzero(plain, len);
			free(plain);
			return auth_bad(out,
				"auths[\"%s\"].auth is not base64 of "
				"user:password",
				entry_key);
		}
		*colon = '\0';
		free(out->username);
		free(out->password);
		out->username = estrdup((char *)plain);
		out->password = estrdup(colon + 1);
		explicit_bzero(plain, len);
		free(plain);
	}
	if (!out->username)
		return auth_bad(out, "auths[\"%s\"] has no username",
			entry_key);
	if (!out->password)
		out->password = estrdup("");
	return 0;
}

void
cri_auth_free(struct cri_auth *a)
{
	/* a password does not linger in freed memory */
	if (a->password)
		explicit_bzero(a->password, strlen(a->password));
	free(a->username);
	free(a->password);
	a->username = a->password = NULL;
}
