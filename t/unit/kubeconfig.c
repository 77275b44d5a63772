/* kubeconfig: test driver for lib/kubeconfig.c.
 *
 *   build/unit/kubeconfig [-k kubeconfig] [-c context] [-r]
 *
 * Loads the configuration as a tool would and prints what it resolved as
 * one JSON object. Secrets (the client key, the token) are shown only as
 * their length. With -r it then waits for a line on stdin, calls
 * kc_refresh_token and prints the token length again. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "err.h"
#include "kubeconfig.h"
#include "nd.h"

static json_t *
str_or_null(const char *s)
{
	return s ? json_string(s) : json_null();
}

/* public shows a certificate: where from, and its text. */
static json_t *public(const struct kc_blob *b)
{
	if (!b->data)
		return json_null();
	return json_pack("{s:o, s:s%}", "path", str_or_null(b->path), "data",
		(const char *)b->data, b->len);
}

/* secret shows a key: where from, and its length only. */
static json_t *
secret(const struct kc_blob *b)
{
	if (!b->data)
		return json_null();
	return json_pack("{s:o, s:I}", "path", str_or_null(b->path), "bytes",
		(json_int_t)b->len);
}

static json_t *
token(const struct kc_config *c)
{
	return c->token ? json_sprintf("<set: %zu bytes>", strlen(c->token))
			: json_null();
}

int
main(int argc, char **argv)
{
	const char *kubeconfig = NULL, *context = NULL;
	struct kc_config c;
	json_t *out;
	char line[64];
	int ch, refresh = 0;

	err_init("kctest");
	while ((ch = getopt(argc, argv, "k:c:r")) != -1) {
		switch (ch) {
		case 'k': kubeconfig = optarg; break;
		case 'c': context = optarg; break;
		case 'r': refresh = 1; break;
		default:
			fputs("usage: kubeconfig [-k file] [-c context] [-r]\n",
				stderr);
			return HAZ_USAGE;
		}
	}
	if (kc_load(&c, kubeconfig, context) < 0)
		return nd_finish(HAZ_FAIL);
	out = json_pack("{s:s, s:o, s:o, s:o, s:s, s:s, s:b, s:b, s:o, s:o, "
			"s:o, s:o, s:o}",
		"source", c.source, "context", str_or_null(c.context),
		"cluster", str_or_null(c.cluster), "user", str_or_null(c.user),
		"server", c.server, "namespace", c.namespace, "insecure",
		c.insecure, "in_cluster", c.in_cluster, "ca", public(&c.ca),
		"cert", public(&c.cert), "key", secret(&c.key), "token",
		token(&c), "token_file", str_or_null(c.token_file));
	nd_write(out);
	json_decref(out);
	if (refresh && fgets(line, sizeof line, stdin)) {
		kc_refresh_token(&c);
		out = json_pack("{s:o}", "token", token(&c));
		nd_write(out);
		json_decref(out);
	}
	kc_free(&c);
	return nd_finish(HAZ_OK);
}
