/* webhook-review: libFuzzer target for the review path of webhook-patch.
 *
 * Each input is one request body. It goes through adm_answer with the
 * mutate(3) policy over a fixed inventory (a fresh table per input, so
 * runs do not depend on each other), and the answer is checked:
 *   - it is an AdmissionReview response with a uid and allowed;
 *   - a refusal has a status with a code and a message;
 *   - a patch is base64 of a JSON array that applies cleanly (jp_apply)
 *     to the request's object.
 * Then the request's object is fed to the table as a watched Pod, added
 * and deleted, as the watch would show the pod just admitted; and the
 * input is read by jl_loadb and json_loadb under three sets of flags,
 * which must agree (jload(3)): the same value written the same way, or
 * the same error. And adm_answer, which leaves out what the policy never
 * reads, must answer exactly as adm_answer_json over the whole review
 * read by jansson does, on a table of its own.
 * Anything else aborts, which libFuzzer reports with the input.
 *
 * Build: clang -fsanitize=fuzzer,address -iquote lib t/fuzz/webhook-review.c
 *        lib/... $(pkg-config --cflags --libs jansson yaml-0.1)
 * (t/0700-webhook-patch.t does it and runs it briefly over t/fuzz/corpus). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "admission.h"
#include "avail.h"
#include "b64.h"
#include "jload.h"
#include "jsonpatch.h"
#include "migchain.h"
#include "mutate.h"

#include "fuzz.h"

static const char *const inventory[] = {
	"{\"kind\":\"node\",\"name\":\"small\",\"allocatable\":"
	"{\"nvidia.com/mig-1g.10gb\":\"28\"}}",
	"{\"kind\":\"node\",\"name\":\"medium\",\"allocatable\":"
	"{\"nvidia.com/mig-2g.20gb\":\"12\",\"nvidia.com/mig-1g.10gb\":\"4\"},"
	"\"allocated\":{\"nvidia.com/mig-2g.20gb\":\"11\"}}",
	"{\"kind\":\"runtimeclass\",\"name\":\"seeweb-nvidia-1xa6000\","
	"\"annotations\":{\"limits.k8s.gpu/cpu\":\"8000m\",\"limits.k8s.gpu/"
	"memory\":\"32861620Ki\",\"limits.k8s.gpu/default\":\"1\"}}",
	"{\"kind\":\"runtimeclass\",\"name\":\"odd\",\"annotations\":"
	"{\"limits.k8s.gpu/cpu\":\"lots\",\"limits.k8s.gpu/default\":\"3\"}}",
};

struct ctx {
	struct mutate_opts mo;
	struct avail *a;
};

static void
decide(const struct adm_request *r, struct adm_verdict *v, void *arg)
{
	struct ctx *c = arg;

	mutate_decide(&c->mo, c->a, r, v, NULL);
}

/* check_patch decodes the patch and applies it to the request object. */
static void
check_patch(const char *b64, const char *buf, size_t len)
{
	json_t *review = json_loadb(buf, len, JSON_DECODE_ANY, NULL), *ops,
	       *obj;
	unsigned char *text;
	size_t n, bad;
	char err[256];

	check(b64_decode(b64, strlen(b64), &text, &n, &bad) == 0, "bad base64");
	ops = json_loadb((char *)text, n, 0, NULL);
	check(json_is_array(ops), "patch is not a JSON array");
	obj = json_deep_copy(
		json_object_get(json_object_get(review, "request"), "object"));
	check(obj != NULL, "patch for a review without object");
	check(jp_apply(&obj, ops, err, sizeof err) == 0, err);
	json_decref(obj);
	json_decref(ops);
	json_decref(review);
	free(text);
}

/* watch_it shows the request's object to the table as a Pod event. */
static void
watch_it(struct ctx *c, const char *buf, size_t len)
{
	json_t *review = json_loadb(buf, len, JSON_DECODE_ANY, NULL);
	json_t *obj = json_object_get(json_object_get(review, "request"),
		"object");

	if (json_is_object(obj)) {
		avail_event(c->a, "Pod", "ADDED", obj);
		avail_event(c->a, "Pod", "DELETED", obj);
	}
	json_decref(review);
}

/* same_load checks that jl_loadb reads buf as json_loadb does. */
static void
same_load(const char *buf, size_t len, size_t flags)
{
	json_error_t ea, eb;
	json_t *a = jl_loadb(buf, len, flags, &ea);
	json_t *b = json_loadb(buf, len, flags, &eb);
	char *ta, *tb;

	check(!a == !b, "jl_loadb and json_loadb disagree on success");
	check(ea.line == eb.line && ea.column == eb.column &&
			ea.position == eb.position &&
			!strcmp(ea.text, eb.text) &&
			!strcmp(ea.source, eb.source),
		"jl_loadb's error is not jansson's");
	if (a) {
		ta = json_dumps(a, JSON_COMPACT | JSON_ENCODE_ANY);
		tb = json_dumps(b, JSON_COMPACT | JSON_ENCODE_ANY);
		check(ta && tb && !strcmp(ta, tb) && json_equal(a, b),
			"jl_loadb's value is not jansson's");
		free(ta);
		free(tb);
	}
	json_decref(a);
	json_decref(b);
}

/* new_table returns the inventory every input starts from. */
static struct avail *
new_table(void)
{
	struct avail *a = avail_new(60);
	char err[512];
	json_t *rec;
	size_t i;

	for (i = 0; i < sizeof inventory / sizeof *inventory; i++) {
		rec = json_loads(inventory[i], 0, NULL);
		avail_record(a, rec, err, sizeof err);
		json_decref(rec);
	}
	avail_set_synced(a, AVAIL_ALL);
	return a;
}

/* same_answer checks that answering the whole review gives resp too. */
static void
same_answer(struct ctx *c, const char *buf, size_t len, const json_t *resp)
{
	json_t *review = json_loadb(buf, len, JSON_DECODE_ANY, NULL), *whole;
	struct ctx w = *c;
	enum adm_outcome out;
	char err[512], *a, *b;

	if (!review)
		return;
	w.a = new_table();
	whole = adm_answer_json(review, decide, &w, &out, err, sizeof err);
	a = json_dumps(resp, JSON_COMPACT);
	b = json_dumps(whole, JSON_COMPACT);
	check(a && b && !strcmp(a, b),
		"the answer differs when the policy sees the whole review");
	free(a);
	free(b);
	json_decref(whole);
	json_decref(review);
	avail_free(w.a);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct migchain *chains;
	struct ctx c = {0};
	enum adm_outcome out;
	json_t *resp, *r;
	char err[512], *buf = malloc(size + 1), *text;

	if (!chains)
		chains = migchain_default();
	memcpy(buf, data, size);
	buf[size] = '\0';
	c.mo.chains = chains;
	c.mo.gate = size % 2;
	c.mo.default_class = size % 3 == 0 ? "seeweb-nvidia-1xa6000" : NULL;
	c.a = new_table();
	resp = adm_answer(buf, size, decide, &c, &out, err, sizeof err);
	same_answer(&c, buf, size, resp);
	r = json_object_get(resp, "response");
	check(json_is_string(json_object_get(r, "uid")), "no uid");
	check(json_is_boolean(json_object_get(r, "allowed")), "no allowed");
	if (!json_is_true(json_object_get(r, "allowed")))
		check(json_is_string(
			      json_object_get(json_object_get(r, "status"),
				      "message")),
			"refusal without message");
	if (json_object_get(r, "patch"))
		check_patch(json_string_value(json_object_get(r, "patch")), buf,
			size);
	watch_it(&c, buf, size);
	same_load(buf, size, 0);
	same_load(buf, size, JSON_DECODE_ANY);
	same_load(buf, size, JSON_DECODE_ANY | JSON_ALLOW_NUL);
	text = json_dumps(resp, JSON_COMPACT);
	check(text != NULL, "response does not serialize");
	free(text);
	json_decref(resp);
	avail_free(c.a);
	free(buf);
	return 0;
}
