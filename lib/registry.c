/* registry: the anonymous tag probe (see registry.h). */
#include "registry.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <curl/curl.h>
#include <jansson.h>

#include "err.h"
#include "http.h"

#define ACCEPT                                                                 \
	"Accept: application/vnd.oci.image.index.v1+json, "                    \
	"application/vnd.oci.image.manifest.v1+json, "                         \
	"application/vnd.docker.distribution.manifest.list.v2+json, "          \
	"application/vnd.docker.distribution.manifest.v2+json"

/* The most of an answer's body kept: token answers are a few KiB. */
#define MAX_BODY (1 << 20)

struct registry {
	CURL *h;
	char *host; /* as named: "127.0.0.1:5000", "public.ecr.aws" */
	char *name; /* the repository inside it: "q9t5s3a7/vllm-ci-..." */
	char *base; /* "https://HOST" (registry-1.docker.io for docker.io) */
	char *token;
	char err[CURL_ERROR_SIZE];
};

/* One answer's header and body; the header is the last response's,
 * after redirects. */
struct answer {
	struct http_headers hdr;
	char *body;
	size_t len;
	CURLcode rc; /* curl's code for the transfer */
};

static int
is_loopback(const char *host)
{
	size_t n = strcspn(host, ":");

	if (host[0] == '[')
		return strncmp(host, "[::1]", 5) == 0;
	return (n == 9 && strncmp(host, "localhost", 9) == 0) ||
		strncmp(host, "127.", 4) == 0;
}

static int
name_ok(const char *name)
{
	const char *p;

	if (!*name || name[0] == '/' || name[strlen(name) - 1] == '/' ||
		strstr(name, "//"))
		return 0;
	for (p = name; *p; p++)
		if (!islower((unsigned char)*p) &&
			!isdigit((unsigned char)*p) && !strchr("._-/", *p))
			return 0;
	return 1;
}

struct registry *
registry_open(const char *repo, char **why)
{
	struct registry *r;
	const char *slash = strchr(repo, '/');
	size_t hl = slash ? (size_t)(slash - repo) : 0;
	int has_host = slash &&
		(memchr(repo, '.', hl) || memchr(repo, ':', hl) ||
			(hl == 9 && !strncmp(repo, "localhost", 9)));
	const char *name = has_host ? slash + 1 : repo;

	*why = NULL;
	if (!name_ok(name) || (has_host && hl == 0)) {
		*why = easprintf("%s: not an image repository name", repo);
		return NULL;
	}
	r = ecalloc(1, sizeof *r);
	r->host = has_host ? easprintf("%.*s", (int)hl, repo)
			   : estrdup("docker.io");
	if (!strcmp(r->host, "docker.io") && !strchr(name, '/'))
		r->name = easprintf("library/%s", name);
	else
		r->name = estrdup(name);
	if (!strcmp(r->host, "docker.io"))
		r->base = estrdup("https://registry-1.docker.io");
	else
		r->base = easprintf("%s://%s",
			is_loopback(r->host) ? "http" : "https", r->host);
	http_global_init();
	if (!(r->h = curl_easy_init()))
		err_die(HAZ_FAIL, "curl_easy_init failed");
	return r;
}

void
registry_close(struct registry *r)
{
	if (!r)
		return;
	curl_easy_cleanup(r->h);
	free(r->host);
	free(r->name);
	free(r->base);
	free(r->token);
	free(r);
}

const char *
registry_where(const struct registry *r)
{
	return r->base;
}

static size_t
on_body(char *buf, size_t size, size_t n, void *arg)
{
	struct answer *a = arg;
	size_t len = size * n;

	if (a->len + len > MAX_BODY)
		return 0;
	a->body = erealloc(a->body, a->len + len + 1);
	memcpy(a->body + a->len, buf, len);
	a->len += len;
	a->body[a->len] = 0;
	return len;
}

static void
answer_free(struct answer *a)
{
	http_headers_clear(&a->hdr);
	free(a->body);
	memset(a, 0, sizeof *a);
}

/* verdict judges the transfer that filled a, which got status st (-1:
 * none). */
static enum http_verdict
verdict(const struct answer *a, long st)
{
	return http_classify(st < 0 ? a->rc : CURLE_OK, st);
}

/* request performs one GET (head 0) or HEAD of url with the given extra
 * header lines (NULL-ended), filling a; returns the HTTP status, or -1
 * when no answer came (r->err says why, a->rc is curl's code). */
static long
request(struct registry *r, const char *url, int head, const char **hdr,
	struct answer *a)
{
	struct http_opts o = {.agent = "diff-pack/" HAZ_VERSION,
		.errbuf = r->err,
		.connect_ms = 10000,
		.timeout_ms = 60000,
		.follow = 1,
		.headers = &a->hdr};
	struct curl_slist *list = NULL;
	long status = -1;

	memset(a, 0, sizeof *a);
	http_setup(r->h, url, &o);
	curl_easy_setopt(r->h, CURLOPT_NOBODY, head ? 1L : 0L);
	curl_easy_setopt(r->h, CURLOPT_WRITEFUNCTION, on_body);
	curl_easy_setopt(r->h, CURLOPT_WRITEDATA, a);
	for (; hdr && *hdr; hdr++)
		list = curl_slist_append(list, *hdr);
	curl_easy_setopt(r->h, CURLOPT_HTTPHEADER, list);
	a->rc = curl_easy_perform(r->h);
	curl_slist_free_all(list);
	if (a->rc == CURLE_OK)
		curl_easy_getinfo(r->h, CURLINFO_RESPONSE_CODE, &status);
	else if (!r->err[0])
		snprintf(r->err, sizeof r->err, "%s",
			curl_easy_strerror(a->rc));
	return status;
}

/* auth_param copies the value of key in a Bearer challenge's
 * `k="v",k2="v2"` list into a malloc'd string, or NULL. */
static char *
auth_param(const char *chal, const char *key)
{
	size_t kl = strlen(key);
	const char *p = chal;

	while (*p) {
		while (*p == ' ' || *p == ',')
			p++;
		if (!strncasecmp(p, key, kl) && p[kl] == '=') {
			const char *v = p + kl + 1, *e;
			if (*v == '"') {
				v++;
				e = strchr(v, '"');
				if (!e)
					return NULL;
			} else {
				e = v + strcspn(v, ", ");
			}
			return easprintf("%.*s", (int)(e - v), v);
		}
		/* skip this pair, its value quoted or not */
		p += strcspn(p, "=,");
		if (*p == '=') {
			p++;
			if (*p == '"') {
				const char *e = strchr(p + 1, '"');
				p = e ? e + 1 : p + strlen(p);
			} else {
				p += strcspn(p, ",");
			}
		}
	}
	return NULL;
}

/* get_token answers a Bearer challenge anonymously, setting r->token:
 * REG_PRESENT (0) when a token came, else a REG_* failure with *why. */
static int
get_token(struct registry *r, const char *chal, char **why)
{
	char *realm = auth_param(chal + 7, "realm");
	char *service = auth_param(chal + 7, "service");
	char *scope = auth_param(chal + 7, "scope");
	char *s, *c, *url;
	const char *tok;
	struct answer a;
	json_t *j;
	long st;
	int ret = REG_REFUSED;

	if (!scope)
		scope = easprintf("repository:%s:pull", r->name);
	if (!realm) {
		*why = easprintf("%s: a Bearer challenge without a realm",
			r->base);
		goto out;
	}
	s = curl_easy_escape(r->h, service ? service : "", 0);
	c = curl_easy_escape(r->h, scope, 0);
	url = easprintf("%s%sservice=%s&scope=%s", realm,
		strchr(realm, '?') ? "&" : "?", s, c);
	curl_free(s);
	curl_free(c);
	st = request(r, url, 0, NULL, &a);
	if (st < 0 || http_class(verdict(&a, st)) == HTTP_RETRY) {
		*why = st < 0 ? easprintf("%s: %s", realm, r->err)
			      : easprintf("%s: HTTP %ld", realm, st);
		if (http_class(verdict(&a, st)) == HTTP_RETRY)
			ret = REG_UNREACHABLE;
	} else if (st != 200) {
		*why = easprintf("%s: HTTP %ld for an anonymous token", realm,
			st);
	} else if (!(j = json_loadb(a.body ? a.body : "", a.len, 0, NULL))) {
		*why = easprintf("%s: the token answer is not JSON", realm);
	} else {
		tok = json_string_value(json_object_get(j, "token"));
		if (!tok)
			tok = json_string_value(
				json_object_get(j, "access_token"));
		if (tok && *tok && !strpbrk(tok, "\r\n")) {
			free(r->token);
			r->token = estrdup(tok);
			ret = REG_PRESENT;
		} else {
			*why = easprintf("%s: no token in the answer", realm);
		}
		json_decref(j);
	}
	answer_free(&a);
	free(url);
out:
	free(realm);
	free(service);
	free(scope);
	return ret;
}

int
registry_probe(struct registry *r, const char *tag, char **digest, char **why)
{
	char *url = easprintf("%s/v2/%s/manifests/%s", r->base, r->name, tag);
	char *bearer = NULL;
	const char *hdr[3] = {ACCEPT, NULL, NULL}, *chal, *dig;
	struct answer a;
	long st;
	int tries, ret;

	*digest = *why = NULL;
	for (tries = 0;; tries++) {
		free(bearer);
		bearer = r->token
			? easprintf("Authorization: Bearer %s", r->token)
			: NULL;
		hdr[1] = bearer;
		st = request(r, url, 1, hdr, &a);
		chal = http_header(&a.hdr, "WWW-Authenticate");
		if (st == 401 && tries == 0 && chal &&
			!strncasecmp(chal, "Bearer ", 7)) {
			ret = get_token(r, chal, why);
			answer_free(&a);
			if (ret != REG_PRESENT)
				goto out;
			continue;
		}
		break;
	}
	if (st == 200) {
		ret = REG_PRESENT;
		dig = http_header(&a.hdr, "Docker-Content-Digest");
		*digest = dig ? estrdup(dig) : NULL;
	} else if (st == 404) {
		ret = REG_ABSENT;
		*why = easprintf("%s/%s:%s: not found", r->host, r->name, tag);
	} else if (st < 0 || http_class(verdict(&a, st)) == HTTP_RETRY) {
		ret = http_class(verdict(&a, st)) == HTTP_RETRY
			? REG_UNREACHABLE
			: REG_REFUSED;
		*why = st < 0 ? easprintf("%s: %s", r->base, r->err)
			      : easprintf("%s: HTTP %ld", r->base, st);
	} else {
		ret = REG_REFUSED;
		*why = easprintf("%s/%s:%s: HTTP %ld", r->host, r->name, tag,
			st);
	}
	answer_free(&a);
out:
	free(bearer);
	free(url);
	return ret;
}
