/* grpc-echo: test server for lib/grpc and lib/drapb.
 *
 *	grpc-echo REGSOCK DRASOCK
 *
 * Serves two sockets, as the kubelet plugin does, until SIGTERM or
 * SIGINT; then stops both servers, removes both sockets and exits 0.
 *
 * REGSOCK, the registration methods:
 *	/pluginregistration.Registration/GetInfo     PluginInfo {DRAPlugin,
 *		gpu.canhazgpu.dev, DRASOCK, [v1.DRAPlugin, v1beta1.DRAPlugin]}
 *	/pluginregistration.Registration/NotifyRegistrationStatus
 *		prints `notify registered=0|1 error=TEXT`, answers empty
 * DRASOCK:
 *	/test.Echo/Echo   answers the request's bytes
 *	/test.Echo/Slow   request: ASCII milliseconds; prints `slow MS`,
 *	                  sleeps that long, answers the request
 *	/test.Echo/Fail   status 9 with a message of spaces, '%', a newline
 *	                  and non-ASCII
 *	/test.Echo/Big    request: ASCII N; answers N bytes of 'a'
 *	/runtime.v1.RuntimeService/Version  as CRI-O 1.34.0 would answer
 *	/runtime.v1.ImageService/PullImage  fails with status 2 and the ref
 *	                  as its message (then " as USER" with credentials),
 *	                  to make a runtime's failures up
 *	/k8s.io.kubelet.pkg.apis.dra.{v1,v1beta1}.DRAPlugin/NodePrepareResources
 *	                  for each claim one device "dev-NAME" in pool "pool"
 *	                  for request "req", CDI ID "k8s.canhazgpu.dev/gpu=UID";
 *	                  a claim named "bad" gets error "no such device"
 *	.../NodeUnprepareResources  an empty entry per claim
 * Lines on stdout are flushed at once, for the test to wait on. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cri.pb-c.h"
#include "drapb.h"
#include "err.h"
#include "grpc.h"

static int
echo(void *arg, const uint8_t *req, size_t len, uint8_t **resp,
	size_t *resp_len, char **msg)
{
	(void)arg, (void)msg;
	*resp = len ? emalloc(len) : NULL;
	if (len)
		memcpy(*resp, req, len);
	*resp_len = len;
	return 0;
}

static int
slow(void *arg, const uint8_t *req, size_t len, uint8_t **resp,
	size_t *resp_len, char **msg)
{
	char buf[16];
	long ms;
	struct timespec ts;

	if (len == 0 || len >= sizeof buf) {
		*msg = estrdup("want milliseconds");
		return GS_INVALID_ARGUMENT;
	}
	memcpy(buf, req, len);
	buf[len] = '\0';
	ms = atol(buf);
	printf("slow %ld\n", ms);
	fflush(stdout);
	ts.tv_sec = ms / 1000;
	ts.tv_nsec = ms % 1000 * 1000000;
	while (nanosleep(&ts, &ts) != 0)
		;
	return echo(arg, req, len, resp, resp_len, msg);
}

static int
fail(void *arg, const uint8_t *req, size_t len, uint8_t **resp,
	size_t *resp_len, char **msg)
{
	(void)arg, (void)req, (void)len, (void)resp, (void)resp_len;
	*msg = estrdup("GPU 3 held: 100% by “alice”\nsee ledger");
	return GS_FAILED_PRECONDITION;
}

static int
big(void *arg, const uint8_t *req, size_t len, uint8_t **resp, size_t *resp_len,
	char **msg)
{
	char buf[16];

	(void)arg;
	if (len == 0 || len >= sizeof buf) {
		*msg = estrdup("want a size");
		return GS_INVALID_ARGUMENT;
	}
	memcpy(buf, req, len);
	buf[len] = '\0';
	*resp_len = strtoul(buf, NULL, 10);
	*resp = *resp_len ? emalloc(*resp_len) : NULL;
	if (*resp_len)
		memset(*resp, 'a', *resp_len);
	return 0;
}

static int
fake_version(void *arg, const uint8_t *req, size_t len, uint8_t **resp,
	size_t *resp_len, char **msg)
{
	Runtime__V1__VersionResponse v = RUNTIME__V1__VERSION_RESPONSE__INIT;

	(void)arg, (void)req, (void)len, (void)msg;
	v.version = "0.1.0";
	v.runtime_name = "cri-o";
	v.runtime_version = "1.34.0";
	v.runtime_api_version = "v1";
	*resp_len = runtime__v1__version_response__get_packed_size(&v);
	*resp = emalloc(*resp_len);
	runtime__v1__version_response__pack(&v, *resp);
	return 0;
}

static int
fake_pull(void *arg, const uint8_t *req, size_t len, uint8_t **resp,
	size_t *resp_len, char **msg)
{
	Runtime__V1__PullImageRequest *r;

	(void)arg, (void)resp, (void)resp_len;
	r = runtime__v1__pull_image_request__unpack(NULL, len, req);
	if (!r || !r->image) {
		if (r)
			runtime__v1__pull_image_request__free_unpacked(r, NULL);
		*msg = estrdup("not a PullImageRequest");
		return GS_INVALID_ARGUMENT;
	}
	*msg = r->auth
		? easprintf("%s as %s", r->image->image, r->auth->username)
		: estrdup(r->image->image);
	runtime__v1__pull_image_request__free_unpacked(r, NULL);
	return GS_UNKNOWN;
}

static int
get_info(void *arg, const uint8_t *req, size_t len, uint8_t **resp,
	size_t *resp_len, char **msg)
{
	static const char *const versions[] = {"v1.DRAPlugin",
		"v1beta1.DRAPlugin", NULL};

	(void)req, (void)len, (void)msg;
	*resp = dpb_plugin_info("DRAPlugin", "gpu.canhazgpu.dev", arg, versions,
		resp_len);
	return 0;
}

static int
notify(void *arg, const uint8_t *req, size_t len, uint8_t **resp,
	size_t *resp_len, char **msg)
{
	int registered;
	char *error;

	(void)arg, (void)resp, (void)resp_len;
	if (dpb_registration_status(req, len, &registered, &error) < 0) {
		*msg = estrdup("not a RegistrationStatus");
		return GS_INVALID_ARGUMENT;
	}
	printf("notify registered=%d error=%s\n", registered, error);
	fflush(stdout);
	free(error);
	return 0;
}

/* claims_or_fail decodes the request's claims, or sets the status 3
 * answer. */
static json_t *
claims_or_fail(const uint8_t *req, size_t len, char **msg)
{
	char why[128];
	json_t *c = dpb_claims(req, len, why, sizeof why);

	if (!c)
		*msg = estrdup(why);
	return c;
}

static int
prepare(void *arg, const uint8_t *req, size_t len, uint8_t **resp,
	size_t *resp_len, char **msg)
{
	json_t *in, *out, *claims, *c;
	size_t i;
	const char *uid, *name;

	(void)arg;
	if (!(in = claims_or_fail(req, len, msg)))
		return GS_INVALID_ARGUMENT;
	claims = json_object();
	out = json_pack("{s:o}", "claims", claims);
	json_array_foreach(json_object_get(in, "claims"), i, c) {
		uid = json_string_value(json_object_get(c, "uid"));
		name = json_string_value(json_object_get(c, "name"));
		if (strcmp(name, "bad") == 0) {
			json_object_set_new(claims, uid,
				json_pack("{s:s}", "error", "no such device"));
			continue;
		}
		json_object_set_new(claims, uid,
			json_pack("{s:[{s:[s],s:s,s:s+,s:[s+]}]}", "devices",
				"requestNames", "req", "poolName", "pool",
				"deviceName", "dev-", name, "cdiDeviceIDs",
				"k8s.canhazgpu.dev/gpu=", uid));
	}
	*resp = dpb_prepare_response(out, resp_len);
	json_decref(in);
	json_decref(out);
	return 0;
}

static int
unprepare(void *arg, const uint8_t *req, size_t len, uint8_t **resp,
	size_t *resp_len, char **msg)
{
	json_t *in, *out, *claims, *c;
	size_t i;

	(void)arg;
	if (!(in = claims_or_fail(req, len, msg)))
		return GS_INVALID_ARGUMENT;
	claims = json_object();
	out = json_pack("{s:o}", "claims", claims);
	json_array_foreach(json_object_get(in, "claims"), i, c)
		json_object_set_new(claims,
			json_string_value(json_object_get(c, "uid")),
			json_object());
	*resp = dpb_unprepare_response(out, resp_len);
	json_decref(in);
	json_decref(out);
	return 0;
}

#define DRA1 "/k8s.io.kubelet.pkg.apis.dra.v1.DRAPlugin/"
#define DRA1B1 "/k8s.io.kubelet.pkg.apis.dra.v1beta1.DRAPlugin/"

int
main(int argc, char **argv)
{
	struct grpc_method reg[] = {
		{"/pluginregistration.Registration/GetInfo", get_info, NULL},
		{"/pluginregistration.Registration/NotifyRegistrationStatus",
			notify, NULL},
		{NULL, NULL, NULL},
	};
	static const struct grpc_method dra[] = {
		{"/test.Echo/Echo", echo, NULL},
		{"/test.Echo/Slow", slow, NULL},
		{"/test.Echo/Fail", fail, NULL},
		{"/test.Echo/Big", big, NULL},
		{"/runtime.v1.RuntimeService/Version", fake_version, NULL},
		{"/runtime.v1.ImageService/PullImage", fake_pull, NULL},
		{DRA1 "NodePrepareResources", prepare, NULL},
		{DRA1 "NodeUnprepareResources", unprepare, NULL},
		{DRA1B1 "NodePrepareResources", prepare, NULL},
		{DRA1B1 "NodeUnprepareResources", unprepare, NULL},
		{NULL, NULL, NULL},
	};
	struct grpc_server *rs, *ds;
	char why[256];
	sigset_t set;
	int rfd, dfd, sig;

	err_init(argv[0]);
	if (argc != 3) {
		fprintf(stderr, "usage: grpc-echo REGSOCK DRASOCK\n");
		return HAZ_USAGE;
	}
	reg[0].arg = argv[2];
	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	pthread_sigmask(SIG_BLOCK, &set, NULL);
	if ((rfd = grpc_listen(argv[1], why, sizeof why)) < 0)
		err_die(HAZ_FAIL, "%s", why);
	if ((dfd = grpc_listen(argv[2], why, sizeof why)) < 0)
		err_die(HAZ_FAIL, "%s", why);
	if (!(rs = grpc_start(rfd, reg, "registration")) ||
		!(ds = grpc_start(dfd, dra, "dra")))
		err_die(HAZ_FAIL, "cannot serve");
	printf("ready\n");
	fflush(stdout);
	sigwait(&set, &sig);
	grpc_stop(rs);
	grpc_stop(ds);
	unlink(argv[1]);
	unlink(argv[2]);
	return 0;
}
