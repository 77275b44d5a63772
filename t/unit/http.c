/* http: test driver for lib/http.
 *
 *	http classify           the verdict and class of each curl code and
 *	                        HTTP status of a fixed table, one a line:
 *	                        "NAME STATUS VERDICT CLASS"
 *	http retry-after NOW VALUE...   http_retry_after of each VALUE at
 *	                        Unix time NOW, one a line (%g)
 *	http headers [NAME...]  feeds stdin, cut after each "\n", to
 *	                        http_headers_line; prints "status N",
 *	                        "field NAME: VALUE" for each field kept,
 *	                        "dropped N", "bytes N", then for each NAME
 *	                        "last NAME: VALUE" and "list NAME: VALUE"
 *	                        ("-" for none). Bytes outside 32 to 126 are
 *	                        shown as \xNN.
 *	http origin URL         http_origin ("-" for NULL)
 *	http join BASE REF      http_url_join ("-" for NULL)
 *	http get [-c CAFILE] URL   one GET through http_setup (peer
 *	                        verified against CAFILE when given):
 *	                        "STATUS VERDICT CLASS"
 *
 * Exit 0, or 2 for usage. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <curl/curl.h>

#include "err.h"
#include "http.h"

static void
usage(void)
{
	fprintf(stderr,
		"usage: http classify | retry-after NOW VALUE... | "
		"headers [NAME...] | origin URL | join BASE REF | "
		"get [-c CAFILE] URL\n");
	exit(HAZ_USAGE);
}

#define CODE(c)                                                                \
	{                                                                      \
		c, #c                                                          \
	}
static const struct {
	CURLcode rc;
	const char *name;
} codes[] = {
	CODE(CURLE_OPERATION_TIMEDOUT),
	CODE(CURLE_COULDNT_RESOLVE_HOST),
	CODE(CURLE_COULDNT_RESOLVE_PROXY),
	CODE(CURLE_COULDNT_CONNECT),
	CODE(CURLE_SSL_CONNECT_ERROR),
	CODE(CURLE_SEND_ERROR),
	CODE(CURLE_RECV_ERROR),
	CODE(CURLE_PARTIAL_FILE),
	CODE(CURLE_GOT_NOTHING),
	CODE(CURLE_WEIRD_SERVER_REPLY),
	CODE(CURLE_HTTP2),
	CODE(CURLE_HTTP2_STREAM),
	CODE(CURLE_WRITE_ERROR),
	CODE(CURLE_TOO_MANY_REDIRECTS),
	CODE(CURLE_PEER_FAILED_VERIFICATION),
	CODE(CURLE_SSL_CACERT_BADFILE),
	CODE(CURLE_SSL_CERTPROBLEM),
	CODE(CURLE_SSL_ISSUER_ERROR),
	CODE(CURLE_SSL_PINNEDPUBKEYNOTMATCH),
	CODE(CURLE_SSL_CRL_BADFILE),
	CODE(CURLE_SSL_INVALIDCERTSTATUS),
	CODE(CURLE_SSL_CLIENTCERT),
	CODE(CURLE_URL_MALFORMAT),
	CODE(CURLE_UNSUPPORTED_PROTOCOL),
	CODE(CURLE_BAD_FUNCTION_ARGUMENT),
	CODE(CURLE_UNKNOWN_OPTION),
	CODE(CURLE_NOT_BUILT_IN),
	CODE(CURLE_FAILED_INIT),
	CODE(CURLE_OUT_OF_MEMORY),
	CODE(CURLE_SSL_CIPHER),
	CODE(CURLE_SSL_ENGINE_NOTFOUND),
	CODE(CURLE_SSL_ENGINE_SETFAILED),
	CODE(CURLE_SSL_ENGINE_INITFAILED),
	CODE(CURLE_ABORTED_BY_CALLBACK),
};

static void
show(enum http_verdict v)
{
	printf("%s %s\n", http_verdict_name(v), http_class_name(http_class(v)));
}

static int
classify(void)
{
	static const long statuses[] = {0, 100, 200, 204, 206, 299, 301, 304,
		400, 401, 403, 404, 408, 409, 410, 416, 428, 429, 431, 499, 500,
		501, 502, 503, 504, 599};
	size_t i;

	for (i = 0; i < sizeof codes / sizeof codes[0]; i++) {
		printf("%s 0 ", codes[i].name);
		show(http_classify(codes[i].rc, 0));
	}
	for (i = 0; i < sizeof statuses / sizeof statuses[0]; i++) {
		printf("CURLE_OK %ld ", statuses[i]);
		show(http_classify(CURLE_OK, statuses[i]));
	}
	printf("CURLE_COULDNT_CONNECT 200 ");
	show(http_classify(CURLE_COULDNT_CONNECT, 200));
	printf("CURLE_PEER_FAILED_VERIFICATION 503 ");
	show(http_classify(CURLE_PEER_FAILED_VERIFICATION, 503));
	return 0;
}

/* put writes s, bytes outside 32 to 126 as \xNN. */
static void
put(const char *s)
{
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;
		if (c < 32 || c > 126 || c == '\\')
			printf("\\x%02x", c);
		else
			putchar(c);
	}
}

static void
lookup(const struct http_headers *h, const char *name)
{
	const char *last = http_header(h, name);
	char *list = http_header_list(h, name);

	printf("last %s: ", name);
	put(last ? last : "-");
	printf("\nlist %s: ", name);
	put(list ? list : "-");
	putchar('\n');
	free(list);
}

static int
headers(int argc, char **argv)
{
	struct http_headers h = {0};
	char *line = NULL;
	size_t cap = 0;
	ssize_t n;

	while ((n = getline(&line, &cap, stdin)) > 0)
		http_headers_line(&h, line, (size_t)n);
	free(line);
	printf("status %ld\n", h.status);
	for (size_t i = 0; i < h.n; i++) {
		printf("field ");
		put(h.f[i].name);
		printf(": ");
		put(h.f[i].value);
		putchar('\n');
	}
	printf("dropped %ld\nbytes %zu\n", h.dropped, h.bytes);
	for (int i = 0; i < argc; i++)
		lookup(&h, argv[i]);
	http_headers_clear(&h);
	return 0;
}

static size_t
discard(char *p, size_t size, size_t n, void *arg)
{
	(void)p;
	(void)arg;
	return size * n;
}

static int
get(int argc, char **argv)
{
	struct http_opts o = {.agent = "http-test/0", .connect_ms = 10000};
	const char *ca = NULL;
	CURL *h;
	CURLcode rc;
	long status = 0;

	if (argc == 3 && !strcmp(argv[0], "-c"))
		ca = argv[1], argc -= 2, argv += 2;
	if (argc != 1)
		usage();
	if (!(h = curl_easy_init()))
		err_die(HAZ_FAIL, "curl_easy_init failed");
	http_setup(h, argv[0], &o);
	if (ca)
		curl_easy_setopt(h, CURLOPT_CAINFO, ca);
	curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, discard);
	rc = curl_easy_perform(h);
	curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &status);
	printf("%ld ", status);
	show(http_classify(rc, status));
	curl_easy_cleanup(h);
	return 0;
}

static int
print_url(char *s)
{
	printf("%s\n", s ? s : "-");
	free(s);
	return 0;
}

int
main(int argc, char **argv)
{
	err_init(argv[0]);
	http_global_init();
	if (argc < 2)
		usage();
	if (!strcmp(argv[1], "classify") && argc == 2)
		return classify();
	if (!strcmp(argv[1], "retry-after") && argc >= 3) {
		for (int i = 3; i < argc; i++)
			printf("%g\n",
				http_retry_after(argv[i],
					strtod(argv[2], NULL)));
		return 0;
	}
	if (!strcmp(argv[1], "headers"))
		return headers(argc - 2, argv + 2);
	if (!strcmp(argv[1], "origin") && argc == 3)
		return print_url(http_origin(argv[2]));
	if (!strcmp(argv[1], "join") && argc == 4)
		return print_url(http_url_join(argv[2], argv[3]));
	if (!strcmp(argv[1], "get"))
		return get(argc - 2, argv + 2);
	usage();
}
