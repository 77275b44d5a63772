/* drapb: libFuzzer target for lib/drapb, the DRA plugin's reader of the
 * kubelet's protobuf messages, and for its writers.
 *
 * Each input is one message's bytes, read as every message the plugin or
 * its test client decodes. Checked, or abort:
 *   - a decoder either gives JSON or says why not, never both or neither;
 *   - claims, prepared and unprepared JSON, encoded again and decoded
 *     again, give the same JSON (duplicate map keys collapse at the first
 *     decoding, so the second equals it);
 *   - plugin info re-encoded through dpb_plugin_info decodes the same.
 * Leaks are found by libFuzzer's leak check. Run by t/0890-fuzz.t. */
#include <stdint.h>
#include <stdlib.h>

#include "drapb.h"
#include "fuzz.h"

typedef json_t *decoder(const uint8_t *, size_t, char *, size_t);
typedef uint8_t *encoder(const json_t *, size_t *);

/* round_trip decodes d, then checks that encode and decode again give the
 * same JSON. */
static void
round_trip(decoder *dec, encoder *enc, const uint8_t *d, size_t n)
{
	char why[128] = "";
	json_t *j = dec(d, n, why, sizeof why), *again;
	uint8_t *buf;
	size_t len;

	check(!j == !!*why, "a reason exactly when there is no JSON");
	if (!j)
		return;
	buf = enc(j, &len);
	check(buf != NULL, "decoded JSON encodes");
	again = dec(buf, len, why, sizeof why);
	check(again && json_equal(j, again), "encode then decode is the same");
	free(buf);
	json_decref(again);
	json_decref(j);
}

static void
plugin_info(const uint8_t *d, size_t n)
{
	char why[128] = "";
	json_t *j = dpb_decode_plugin_info(d, n, why, sizeof why), *again, *v;
	const char **versions;
	uint8_t *buf;
	size_t len, i;

	check(!j == !!*why, "a reason exactly when there is no JSON");
	if (!j)
		return;
	v = json_object_get(j, "supportedVersions");
	versions = calloc(json_array_size(v) + 1, sizeof *versions);
	for (i = 0; i < json_array_size(v); i++)
		versions[i] = json_string_value(json_array_get(v, i));
	buf = dpb_plugin_info(json_string_value(json_object_get(j, "type")),
		json_string_value(json_object_get(j, "name")),
		json_string_value(json_object_get(j, "endpoint")), versions,
		&len);
	again = dpb_decode_plugin_info(buf, len, why, sizeof why);
	check(again && json_equal(j, again), "plugin info round trip");
	free(versions);
	free(buf);
	json_decref(again);
	json_decref(j);
}

int
LLVMFuzzerTestOneInput(const uint8_t *d, size_t n)
{
	int registered;
	char *error;

	fuzz_quiet();
	round_trip(dpb_claims, dpb_encode_claims, d, n);
	round_trip(dpb_decode_prepare_response, dpb_prepare_response, d, n);
	round_trip(dpb_decode_unprepare_response, dpb_unprepare_response, d, n);
	plugin_info(d, n);
	if (dpb_registration_status(d, n, &registered, &error) == 0) {
		check(registered == 0 || registered == 1,
			"registered is 0 or 1");
		free(error);
	}
	return 0;
}
