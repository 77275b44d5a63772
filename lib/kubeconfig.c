/* kubeconfig: load and merge kubeconfig files, or the in-cluster service
 * account, into one resolved struct kc_config. */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <jansson.h>

#include "b64.h"
#include "err.h"
#include "kubeconfig.h"
#include "y2j.h"

#define SA_DIR "/var/run/secrets/kubernetes.io/serviceaccount"
#define FILE_MAX (16L << 20)

struct kfile {
	char *path;
	json_t *doc;
};

/* where names the entry a setting came from, for messages. */
struct where {
	const char *file; /* the kubeconfig file */
	const char *list; /* "clusters", "users", "contexts" */
	size_t index;
	const char *field; /* "cluster", "user", "context" */
};

static void fail(const char *file, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* fail prints `kubeconfig: FILE: message`. */
static void
fail(const char *file, const char *fmt, ...)
{
	va_list ap;
	char *msg;

	va_start(ap, fmt);
	if (vasprintf(&msg, fmt, ap) < 0)
		err_die(HAZ_FAIL, "vasprintf:");
	va_end(ap);
	err_warn("kubeconfig: %s: %s", file, msg);
	free(msg);
}

/* read_all reads path into a malloc'd NUL-terminated buffer. Returns -1
 * with errno set on failure. */
static int
read_all(const char *path, unsigned char **out, size_t *len)
{
	unsigned char *buf = NULL;
	size_t n = 0, cap = 0;
	ssize_t got;
	int fd = open(path, O_RDONLY | O_CLOEXEC), saved;

	*out = NULL;
	if (fd < 0)
		return -1;
	for (;;) {
		if (n + 4097 > cap) {
			cap = cap ? cap * 2 : 8192;
			buf = erealloc(buf, cap);
		}
		got = read(fd, buf + n, cap - n - 1);
		if (got < 0 && errno == EINTR)
			continue;
		if (got <= 0 || n + (size_t)got > FILE_MAX)
			break;
		n += (size_t)got;
	}
	saved = got < 0 ? errno : EFBIG;
	close(fd);
	if (got != 0) {
		free(buf);
		errno = saved;
		return -1;
	}
	buf[n] = '\0';
	*out = buf;
	*len = n;
	return 0;
}

/* resolve returns the malloc'd name of path relative to the directory of
 * file (unchanged when absolute). */
static char *
resolve(const char *file, const char *path)
{
	const char *slash = strrchr(file, '/');

	if (path[0] == '/' || !slash)
		return estrdup(path);
	return easprintf("%.*s/%s", (int)(slash - file), file, path);
}

/* ---- reading fields -------------------------------------------------- */

/* getstr stores the string at o[key] in *out (NULL when absent). Returns
 * -1 after a message when it is there but not a string. */
static int
getstr(const struct where *w, const json_t *o, const char *key,
	const char **out)
{
	json_t *v = json_object_get(o, key);

	*out = NULL;
	if (!v || json_is_null(v))
		return 0;
	if (!json_is_string(v)) {
		fail(w->file, "%s[%zu].%s.%s: not a string", w->list, w->index,
			w->field, key);
		return -1;
	}
	*out = json_string_value(v);
	if (!**out)
		*out = NULL;
	return 0;
}

/* blob_file reads the file named by o[key] into b. */
static int
blob_file(const struct where *w, const json_t *o, const char *key,
	struct kc_blob *b)
{
	const char *name;

	if (getstr(w, o, key, &name) < 0)
		return -1;
	if (!name)
		return 0;
	b->path = resolve(w->file, name);
	if (read_all(b->path, &b->data, &b->len) < 0) {
		fail(w->file, "%s[%zu].%s.%s: %s: %s", w->list, w->index,
			w->field, key, b->path, strerror(errno));
		return -1;
	}
	return 0;
}

/* blob_data decodes the base64 of o[key] into b. */
static int
blob_data(const struct where *w, const json_t *o, const char *key,
	struct kc_blob *b)
{
	const char *text;
	size_t bad;

	if (getstr(w, o, key, &text) < 0)
		return -1;
	if (!text)
		return 0;
	if (b64_decode(text, strlen(text), &b->data, &b->len, &bad) < 0) {
		fail(w->file, "%s[%zu].%s.%s: invalid base64 at offset %zu",
			w->list, w->index, w->field, key, bad);
		return -1;
	}
	return 0;
}

/* blob takes KEY-data over KEY, as client-go does. */
static int
blob(const struct where *w, const json_t *o, const char *key, struct kc_blob *b)
{
	char *dkey = easprintf("%s-data", key);
	int ret = blob_data(w, o, dkey, b);

	free(dkey);
	if (ret == 0 && !b->data)
		ret = blob_file(w, o, key, b);
	return ret;
}

/* ---- named entries --------------------------------------------------- */

/* find looks up the entry called name in list (e.g. "clusters") of every
 * file, first file first, and returns its inner object (e.g. .cluster),
 * filling w. Returns NULL after a message when absent or malformed. */
static const json_t *
find(struct kfile *f, size_t nf, const char *list, const char *field,
	const char *name, const char *what_file, struct where *w)
{
	const json_t *arr, *e, *inner;
	const char *n;
	size_t i, j;

	for (i = 0; i < nf; i++) {
		arr = json_object_get(f[i].doc, list);
		if (arr && !json_is_array(arr) && !json_is_null(arr)) {
			fail(f[i].path, "%s: not a list", list);
			return NULL;
		}
		json_array_foreach(arr, j, e) {
			n = json_string_value(json_object_get(e, "name"));
			if (!n || strcmp(n, name) != 0)
				continue;
			*w = (struct where){f[i].path, list, j, field};
			inner = json_object_get(e, field);
			if (inner && !json_is_object(inner)) {
				fail(f[i].path, "%s[%zu].%s: not a mapping",
					list, j, field);
				return NULL;
			}
			return inner ? inner : json_object_get(e, "name");
		}
	}
	fail(what_file, "%.*s \"%s\" not found", (int)strlen(field), field,
		name);
	return NULL;
}

/* ---- pieces of a context --------------------------------------------- */

static int
load_cluster(struct kc_config *c, const struct where *w, const json_t *cl)
{
	const char *server;
	json_t *ins = json_object_get(cl, "insecure-skip-tls-verify");
	size_t n;

	if (getstr(w, cl, "server", &server) < 0)
		return -1;
	if (!server || !json_is_object(cl)) {
		fail(w->file, "%s[%zu].%s.server: not set", w->list, w->index,
			w->field);
		return -1;
	}
	c->server = estrdup(server);
	n = strlen(c->server);
	while (n > 0 && c->server[n - 1] == '/')
		c->server[--n] = '\0';
	if (ins && !json_is_boolean(ins)) {
		fail(w->file,
			"%s[%zu].%s.insecure-skip-tls-verify: not a boolean",
			w->list, w->index, w->field);
		return -1;
	}
	c->insecure = json_is_true(ins);
	if (blob(w, cl, "certificate-authority", &c->ca) < 0)
		return -1;
	if (c->insecure && c->ca.data) {
		fail(w->file,
			"%s[%zu].%s: insecure-skip-tls-verify: true "
			"together with a certificate authority is not allowed",
			w->list, w->index, w->field);
		return -1;
	}
	return 0;
}

/* read_token reads and trims the token in path. */
static char *
read_token(const char *path)
{
	unsigned char *buf;
	size_t n, skip;

	if (read_all(path, &buf, &n) < 0)
		return NULL;
	while (n > 0 && strchr(" \t\r\n", buf[n - 1]))
		buf[--n] = '\0';
	skip = strspn((char *)buf, " \t\r\n");
	memmove(buf, buf + skip, n - skip + 1);
	return (char *)buf;
}

static int
token_from_file(struct kc_config *c, const char *path)
{
	struct stat st;

	c->token_file = estrdup(path);
	if (stat(path, &st) == 0)
		c->token_mtime = st.st_mtime;
	c->token = read_token(path);
	return c->token ? 0 : -1;
}

static int
load_user(struct kc_config *c, const struct where *w, const json_t *u)
{
	const char *token, *tfile;
	char *path;
	int ret;

	if (!json_is_object(u))
		return 0;
	if (blob(w, u, "client-certificate", &c->cert) < 0 ||
		blob(w, u, "client-key", &c->key) < 0 ||
		getstr(w, u, "token", &token) < 0 ||
		getstr(w, u, "tokenFile", &tfile) < 0)
		return -1;
	if (!c->cert.data != !c->key.data) {
		fail(w->file, "%s[%zu].%s: client-%s without client-%s",
			w->list, w->index, w->field,
			c->cert.data ? "certificate" : "key",
			c->cert.data ? "key" : "certificate");
		return -1;
	}
	if (token) {
		c->token = estrdup(token);
		return 0;
	}
	if (!tfile) {
		if (!c->cert.data &&
			(json_object_get(u, "exec") ||
				json_object_get(u, "auth-provider"))) {
			fail(w->file,
				"%s[%zu].%s: exec and auth-provider "
				"credentials are not supported",
				w->list, w->index, w->field);
			return -1;
		}
		return 0;
	}
	path = resolve(w->file, tfile);
	if ((ret = token_from_file(c, path)) < 0)
		fail(w->file, "%s[%zu].%s.tokenFile: %s: %s", w->list, w->index,
			w->field, path, strerror(errno));
	free(path);
	return ret;
}

/* ---- files ----------------------------------------------------------- */

/* load_file parses one kubeconfig into f. Returns 1 when loaded, 0 when
 * the file does not exist and may be skipped, -1 after a message. */
static int
load_file(struct kfile *f, const char *path, int must_exist)
{
	unsigned char *text;
	size_t len;
	struct y2j_error yerr;

	f->path = estrdup(path);
	f->doc = NULL;
	if (read_all(path, &text, &len) < 0) {
		if (errno == ENOENT && !must_exist)
			return 0;
		fail(path, "%s", strerror(errno));
		return -1;
	}
	f->doc = y2j_load_buffer((const char *)text, len, path, Y2J_SKIP_NULL,
		&yerr);
	free(text);
	if (!f->doc) {
		err_warn("kubeconfig: %s", yerr.text);
		return -1;
	}
	if (json_is_null(f->doc)) {
		json_decref(f->doc);
		f->doc = json_object();
	}
	if (!json_is_object(f->doc)) {
		fail(path, "not a mapping");
		return -1;
	}
	return 1;
}

static void
free_files(struct kfile *f, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		free(f[i].path);
		json_decref(f[i].doc);
	}
	free(f);
}

/* gather loads the files to merge: the one given, or $KUBECONFIG's, or
 * ~/.kube/config. *label names them all for messages. Returns the number
 * loaded (0: none exists) or -1 after a message. */
static int
gather(const char *kubeconfig, struct kfile **out, size_t *n, char **label)
{
	const char *env = getenv("KUBECONFIG"), *home = getenv("HOME");
	char *list, *p, *name, *save = NULL;
	int got = 0, r = 0;

	*out = NULL;
	*n = 0;
	if (kubeconfig)
		list = estrdup(kubeconfig);
	else if (env && *env)
		list = estrdup(env);
	else
		list = easprintf("%s/.kube/config", home ? home : "");
	*label = estrdup(list);
	for (p = list; (name = strtok_r(p, ":", &save)); p = NULL) {
		*out = erealloc(*out, (*n + 1) * sizeof **out);
		r = load_file(&(*out)[*n], name, kubeconfig != NULL);
		(*n)++;
		if (r < 0)
			break;
		got += r;
	}
	free(list);
	return r < 0 ? -1 : got;
}

/* ---- in-cluster ------------------------------------------------------ */

static int
load_in_cluster(struct kc_config *c)
{
	const char *host = getenv("KUBERNETES_SERVICE_HOST");
	const char *port = getenv("KUBERNETES_SERVICE_PORT");
	const char *dir = getenv("K8SHAZGPU_SERVICEACCOUNT_DIR");
	char *path, *ns;

	if (!dir || !*dir)
		dir = SA_DIR;
	c->in_cluster = 1;
	c->source = estrdup("in-cluster");
	c->server = easprintf(strchr(host, ':') ? "https://[%s]:%s"
						: "https://%s:%s",
		host, port && *port ? port : "443");
	path = easprintf("%s/token", dir);
	if (token_from_file(c, path) < 0) {
		fail("in-cluster", "%s: %s", path, strerror(errno));
		free(path);
		return -1;
	}
	free(path);
	c->ca.path = easprintf("%s/ca.crt", dir);
	if (read_all(c->ca.path, &c->ca.data, &c->ca.len) < 0) {
		fail("in-cluster", "%s: %s", c->ca.path, strerror(errno));
		return -1;
	}
	path = easprintf("%s/namespace", dir);
	ns = read_token(path);
	free(path);
	c->namespace = ns && *ns ? ns : estrdup("default");
	if (ns && !*ns)
		free(ns);
	return 0;
}

/* ---- the whole ------------------------------------------------------- */

/* load_context resolves context name from the merged files. */
static int
load_context(struct kc_config *c, struct kfile *f, size_t nf, const char *label,
	const char *name)
{
	const json_t *ctx, *cl, *u;
	struct where w, wc, wu;
	const char *cluster, *user, *ns;

	if (!(ctx = find(f, nf, "contexts", "context", name, label, &w)))
		return -1;
	if (getstr(&w, ctx, "cluster", &cluster) < 0 ||
		getstr(&w, ctx, "user", &user) < 0 ||
		getstr(&w, ctx, "namespace", &ns) < 0)
		return -1;
	c->source = estrdup(w.file);
	c->context = estrdup(name);
	c->namespace = estrdup(ns ? ns : "default");
	if (!cluster) {
		fail(w.file, "contexts[%zu].context.cluster: not set", w.index);
		return -1;
	}
	c->cluster = estrdup(cluster);
	if (!(cl = find(f, nf, "clusters", "cluster", cluster, w.file, &wc)) ||
		load_cluster(c, &wc, cl) < 0)
		return -1;
	if (!user)
		return 0;
	c->user = estrdup(user);
	if (!(u = find(f, nf, "users", "user", user, w.file, &wu)))
		return -1;
	return load_user(c, &wu, u);
}

/* current_context returns the first current-context set. */
static const char *
current_context(struct kfile *f, size_t nf)
{
	const char *cur;
	size_t i;

	for (i = 0; i < nf; i++) {
		cur = json_string_value(
			json_object_get(f[i].doc, "current-context"));
		if (cur && *cur)
			return cur;
	}
	return NULL;
}

int
kc_load(struct kc_config *c, const char *kubeconfig, const char *context)
{
	struct kfile *f;
	size_t nf;
	char *label;
	const char *host = getenv("KUBERNETES_SERVICE_HOST");
	int got, ret = -1;

	memset(c, 0, sizeof *c);
	got = gather(kubeconfig, &f, &nf, &label);
	if (got == 0 && !kubeconfig && !context && host && *host)
		ret = load_in_cluster(c);
	else if (got == 0)
		fail(label,
			"no configuration found: no such file, "
			"and not running in a cluster");
	else if (got > 0 && !context && !(context = current_context(f, nf)))
		fail(label, "current-context is not set and no context given");
	else if (got > 0)
		ret = load_context(c, f, nf, label, context);
	free_files(f, nf);
	free(label);
	if (ret < 0)
		kc_free(c);
	return ret;
}

void
kc_refresh_token(struct kc_config *c)
{
	struct stat st;
	char *tok;

	if (!c->token_file || stat(c->token_file, &st) < 0 ||
		st.st_mtime == c->token_mtime)
		return;
	if (!(tok = read_token(c->token_file)))
		return;
	c->token_mtime = st.st_mtime;
	if (c->token)
		memset(c->token, 0, strlen(c->token));
	free(c->token);
	c->token = tok;
}

static void
blob_free(struct kc_blob *b)
{
	if (b->data)
		memset(b->data, 0, b->len);
	free(b->data);
	free(b->path);
}

void
kc_free(struct kc_config *c)
{
	free(c->source);
	free(c->context);
	free(c->cluster);
	free(c->user);
	free(c->server);
	free(c->namespace);
	blob_free(&c->ca);
	blob_free(&c->cert);
	blob_free(&c->key);
	if (c->token)
		memset(c->token, 0, strlen(c->token));
	free(c->token);
	free(c->token_file);
	memset(c, 0, sizeof *c);
}
