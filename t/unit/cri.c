/* cri: test driver for lib/cri and lib/grpcc.
 *
 *	cri SOCKET version             {"runtime":..,"version":..}
 *	cri SOCKET pull REF [AUTHFILE] {"reason","message","resolved","bytes"}
 *	cri SOCKET image REF           {"present","id","digest","size","pinned"}
 *	cri SOCKET remove REF          {"reason","message"}
 *	cri SOCKET pin|unpin REF       {"reason","message","pinned"}
 *	cri SOCKET progress            {"done":N,"total":N}
 *	cri SOCKET call PATH MS [NAME VALUE]...
 *	                               grpcc_call with stdin's bytes as the
 *	                               request: {"status":0,"size","response"
 *	                               (hex, "" past 64 bytes)},
 *	                               {"status","message"}, or
 *	                               {"errno":"ETIMEDOUT","error":..} for -1
 *	cri SOCKET mute                listen on SOCKET, never accept; print
 *	                               "ready"; stop at SIGTERM, leaving the
 *	                               socket file (nothing listens there then)
 *	cri - auth CONFIGFILE REF      {"found":true,"server","username",
 *	                               "password"}, {"found":false} or
 *	                               {"error":..}
 *	cri - repo REF                 {"registry":..,"repository":..}
 *
 * AUTHFILE and CONFIGFILE hold a dockerconfigjson object. A failure
 * prints {"reason","message"} (image) or {"error":..}. One JSON line per
 * run; exit 0 when the call succeeded, 1 when it failed, 2 for usage. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <jansson.h>

#include "cri.h"
#include "err.h"
#include "grpcc.h"

static void
usage(void)
{
	fprintf(stderr,
		"usage: cri SOCKET version|progress|pull REF [AUTHFILE]|"
		"image REF|remove REF|pin REF|unpin REF|call PATH MS "
		"[NAME VALUE]...|mute\n"
		"       cri - auth CONFIGFILE REF|repo REF\n");
	exit(HAZ_USAGE);
}

static int
print(json_t *j, int rc)
{
	char *s = json_dumps(j, JSON_COMPACT);

	puts(s);
	free(s);
	json_decref(j);
	return rc < 0 || rc > 0 ? HAZ_FAIL : 0;
}

static int
result(const struct ck_result *res, int rc)
{
	return print(json_pack("{s:s,s:s}", "reason",
			     ck_reason_name(res->reason), "message",
			     res->message),
		rc);
}

static json_t *
load(const char *file)
{
	json_error_t e;
	json_t *j = json_load_file(file, 0, &e);

	if (!j)
		err_die(HAZ_USAGE, "%s: %s", file, e.text);
	return j;
}

static uint8_t *
slurp(size_t *len)
{
	uint8_t *buf = NULL;
	size_t cap = 0, n;

	*len = 0;
	do {
		if (*len == cap)
			buf = erealloc(buf, cap = cap ? cap * 2 : 4096);
		n = fread(buf + *len, 1, cap - *len, stdin);
		*len += n;
	} while (n > 0);
	return buf;
}

static int
call(const char *sock, int argc, char **argv)
{
	const char **headers = ecalloc((size_t)argc, sizeof *headers);
	size_t len, resp_len, i;
	uint8_t *req = slurp(&len), *resp;
	char *msg, *hex;
	int rc, e;

	if (argc < 2 || argc % 2)
		usage();
	for (i = 2; i < (size_t)argc; i++)
		headers[i - 2] = argv[i];
	rc = grpcc_call(sock, argv[0], headers, req, len, atoi(argv[1]), &resp,
		&resp_len, &msg);
	e = errno;
	free(req);
	free(headers);
	if (rc < 0) {
		if (resp || resp_len)
			err_die(HAZ_FAIL, "a failed call left a response");
		rc = print(json_pack("{s:s,s:s}", "errno", strerrorname_np(e),
				   "error", msg),
			rc);
		free(msg);
		return rc;
	}
	if (rc > 0) {
		if (resp || resp_len)
			err_die(HAZ_FAIL, "a failed call left a response");
		rc = print(json_pack("{s:i,s:s}", "status", rc, "message", msg),
			rc);
		free(msg);
		return rc;
	}
	if (!resp || msg)
		err_die(HAZ_FAIL, "status 0 without a buffer, or a message");
	/* the bytes in hex when they are few, else only their count */
	hex = emalloc(2 * resp_len + 1);
	for (i = 0; i < resp_len && resp_len <= 64; i++)
		sprintf(hex + 2 * i, "%02x", resp[i]);
	hex[2 * i] = '\0';
	rc = print(json_pack("{s:i,s:I,s:s}", "status", 0, "size",
			   (json_int_t)resp_len, "response", hex),
		0);
	free(hex);
	free(resp);
	return rc;
}

static int
mute(const char *path)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	int fd = socket(AF_UNIX, SOCK_STREAM, 0);

	snprintf(sa.sun_path, sizeof sa.sun_path, "%s", path);
	if (fd < 0 || bind(fd, (struct sockaddr *)&sa, sizeof sa) < 0 ||
		listen(fd, 8) < 0)
		err_die(HAZ_FAIL, "%s:", path);
	puts("ready");
	fflush(stdout);
	for (;;)
		pause();
}

static int
auth(int argc, char **argv)
{
	json_t *cfg;
	struct cri_auth a;
	int rc;

	if (argc != 2)
		usage();
	cfg = load(argv[0]);
	rc = cri_auth_for(cfg, argv[1], &a);
	json_decref(cfg);
	if (rc < 0)
		return print(json_pack("{s:s}", "error", a.message), rc);
	if (rc > 0)
		return print(json_pack("{s:b}", "found", 0), 0);
	rc = print(json_pack("{s:b,s:s,s:s,s:s}", "found", 1, "server",
			   a.server, "username", a.username, "password",
			   a.password),
		0);
	cri_auth_free(&a);
	return rc;
}

static int
pull(const char *sock, int argc, char **argv)
{
	struct ck_result res = {0};
	struct cri_auth a = {0}, *ap = NULL;
	json_t *cfg;
	int rc;

	if (argc < 1 || argc > 2)
		usage();
	if (argc == 2) {
		cfg = load(argv[1]);
		rc = cri_auth_for(cfg, argv[0], &a);
		json_decref(cfg);
		if (rc < 0)
			return print(json_pack("{s:s}", "error", a.message),
				rc);
		if (rc == 0)
			ap = &a;
	}
	rc = cri_pull(sock, argv[0], ap, 120, &res);
	cri_auth_free(&a);
	return print(json_pack("{s:s,s:s,s:s,s:I}", "reason",
			     ck_reason_name(res.reason), "message", res.message,
			     "resolved", res.resolved, "bytes",
			     (json_int_t)res.bytes),
		rc);
}

static int
image(const char *sock, const char *ref)
{
	struct ck_result res = {0};
	struct cri_image img;

	if (cri_image(sock, ref, &img, &res) < 0)
		return result(&res, -1);
	if (!img.present)
		return print(json_pack("{s:b}", "present", 0), 0);
	return print(json_pack("{s:b,s:s,s:s,s:I,s:i}", "present", 1, "id",
			     img.id, "digest", img.digest, "size",
			     (json_int_t)img.size, "pinned", img.pinned),
		0);
}

int
main(int argc, char **argv)
{
	struct ck_result res = {0};
	const char *sock, *cmd;
	char a[256], b[256];
	char *err;
	uint64_t done, total;
	int rc;

	err_init(argv[0]);
	if (argc < 3)
		usage();
	sock = argv[1];
	cmd = argv[2];
	argc -= 3;
	argv += 3;
	if (strcmp(cmd, "version") == 0 && argc == 0) {
		if (cri_version(sock, a, b, &err) < 0) {
			rc = print(json_pack("{s:s}", "error", err), -1);
			free(err);
			return rc;
		}
		return print(json_pack("{s:s,s:s}", "runtime", a, "version", b),
			0);
	}
	if (strcmp(cmd, "pull") == 0)
		return pull(sock, argc, argv);
	if (strcmp(cmd, "image") == 0 && argc == 1)
		return image(sock, argv[0]);
	if (strcmp(cmd, "remove") == 0 && argc == 1)
		return result(&res, cri_remove(sock, argv[0], &res));
	if ((strcmp(cmd, "pin") == 0 || strcmp(cmd, "unpin") == 0) &&
		argc == 1) {
		rc = cri_pin(sock, argv[0], cmd[0] == 'p', &res);
		return print(json_pack("{s:s,s:s,s:i}", "reason",
				     ck_reason_name(res.reason), "message",
				     res.message, "pinned", res.pinned),
			rc);
	}
	if (strcmp(cmd, "progress") == 0 && argc == 0) {
		if (cri_progress(sock, &done, &total) < 0)
			return print(json_pack("{s:s}", "error", "unsupported"),
				-1);
		return print(json_pack("{s:I,s:I}", "done", (json_int_t)done,
				     "total", (json_int_t)total),
			0);
	}
	if (strcmp(cmd, "mute") == 0 && argc == 0)
		return mute(sock);
	if (strcmp(cmd, "call") == 0)
		return call(sock, argc, argv);
	if (strcmp(cmd, "auth") == 0)
		return auth(argc, argv);
	if (strcmp(cmd, "repo") == 0 && argc == 1) {
		cri_registry(argv[0], a, sizeof a);
		cri_repository(argv[0], b, sizeof b);
		return print(json_pack("{s:s,s:s}", "registry", a, "repository",
				     b),
			0);
	}
	usage();
}
