/* alert_url: the webhook URL from a Secret or a file (see alert_url.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "alert_url.h"
#include "b64.h"
#include "err.h"

struct alert_url {
	struct kube *k; /* NULL: a file */
	char *ns, *secret, *key, *path;
	char *name;
	double ttl, fetched;
	char *cached; /* the Secret's URL, while fresh */
};

struct alert_url *
au_secret(struct kube *k, const char *ns, const char *name, const char *key,
	double ttl)
{
	struct alert_url *u = ecalloc(1, sizeof *u);

	u->k = k;
	u->ns = estrdup(ns);
	u->secret = estrdup(name);
	u->key = estrdup(key);
	u->ttl = ttl;
	u->name = easprintf("secret %s/%s key %s", ns, name, key);
	return u;
}

struct alert_url *
au_file(const char *path)
{
	struct alert_url *u = ecalloc(1, sizeof *u);

	u->path = estrdup(path);
	u->name = easprintf("file %s", path);
	return u;
}

/* forget wipes the cached URL: it is a credential. */
static void
forget(struct alert_url *u)
{
	if (u->cached) {
		memset(u->cached, 0, strlen(u->cached));
		free(u->cached);
		u->cached = NULL;
	}
}

void
au_free(struct alert_url *u)
{
	if (!u)
		return;
	forget(u);
	free(u->ns);
	free(u->secret);
	free(u->key);
	free(u->path);
	free(u->name);
	free(u);
}

const char *
au_name(const struct alert_url *u)
{
	return u->name;
}

/* usable trims s[0..len) in place and returns it as a URL, or NULL with
 * why filled: empty, a NUL inside, not http(s). */
static char *
usable(struct alert_url *u, char *s, size_t len, char *why, size_t n)
{
	size_t start = 0;

	while (len && strchr(" \t\r\n", s[len - 1]))
		len--;
	while (start < len && strchr(" \t\r\n", s[start]))
		start++;
	s[len] = '\0';
	if (start == len)
		snprintf(why, n, "%s: empty", u->name);
	else if (strlen(s + start) != len - start || strpbrk(s + start, "\r\n"))
		snprintf(why, n, "%s: more than one line", u->name);
	/* a scheme is any case (RFC 3986 3.1): HTTPS:// is https:// */
	else if (strncasecmp(s + start, "https://", 8) != 0 &&
		strncasecmp(s + start, "http://", 7) != 0)
		snprintf(why, n, "%s: not an http(s) URL", u->name);
	else
		return estrdup(s + start);
	return NULL;
}

static char *
from_file(struct alert_url *u, char *why, size_t n)
{
	char buf[8192], *url;
	FILE *f = fopen(u->path, "r");
	size_t len;

	if (!f) {
		snprintf(why, n, "%s: %s", u->name, strerror(errno));
		return NULL;
	}
	len = fread(buf, 1, sizeof buf - 1, f);
	if (ferror(f)) {
		snprintf(why, n, "%s: %s", u->name, strerror(errno));
		fclose(f);
		return NULL;
	}
	fclose(f);
	buf[len] = '\0';
	url = usable(u, buf, len, why, n);
	memset(buf, 0, sizeof buf);
	return url;
}

static char *
from_secret(struct alert_url *u, int *temporary, char *why, size_t n)
{
	char *ens = kube_escape(u->ns), *ename = kube_escape(u->secret);
	char *path = easprintf("/api/v1/namespaces/%s/secrets/%s", ens, ename);
	struct kube_error e = {0};
	json_t *obj = kube_get(u->k, path, &e);
	const char *data;
	unsigned char *raw = NULL;
	size_t len, bad;
	char *url = NULL;

	free(path);
	free(ens);
	free(ename);
	if (!obj) {
		*temporary = e.kind == KUBE_ETEMP;
		if (e.kind == KUBE_EAPI && e.status == 404)
			snprintf(why, n, "secret %s/%s: not found", u->ns,
				u->secret);
		else
			snprintf(why, n, "secret %s/%s: %s", u->ns, u->secret,
				e.msg);
		return NULL;
	}
	data = json_string_value(
		json_object_get(json_object_get(obj, "data"), u->key));
	if (!data)
		snprintf(why, n, "secret %s/%s: no key %s", u->ns, u->secret,
			u->key);
	else if (b64_decode(data, strlen(data), &raw, &len, &bad) < 0)
		snprintf(why, n, "%s: invalid base64 at offset %zu", u->name,
			bad);
	else {
		url = usable(u, (char *)raw, len, why, n);
		memset(raw, 0, len);
		free(raw);
	}
	json_decref(obj);
	return url;
}

char *
au_get(struct alert_url *u, double now, int *temporary, char *why, size_t n)
{
	char *url;

	*temporary = 0;
	why[0] = '\0';
	if (!u->k)
		return from_file(u, why, n);
	if (u->cached && now - u->fetched < u->ttl)
		return estrdup(u->cached);
	forget(u);
	if (!(url = from_secret(u, temporary, why, n)))
		return NULL;
	u->cached = estrdup(url);
	u->fetched = now;
	return url;
}
