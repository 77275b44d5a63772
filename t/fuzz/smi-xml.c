/* smi-xml: libFuzzer target for sx_parse, gpu-probe's reader of
 * `nvidia-smi -q -x` output (live, or a capture given to -x).
 *
 * Each input is a whole document. Checked, or abort:
 *   - a refused document leaves nothing behind;
 *   - every string kept is text a record can carry: not empty, at most
 *     SX_MAX_TEXT bytes, no NUL, valid UTF-8, no control character or tab;
 *   - every GPU has a UUID, no two the same, at most SX_MAX_GPUS of them;
 *     a minor number is -1 or >= 0;
 *   - every MIG device has an index >= 0, no two the same on a GPU, at
 *     most SX_MAX_MIGS; its instance ids are -1 or >= 0.
 * Leaks are found by libFuzzer's leak check. Run by t/0890-fuzz.t. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "err.h"
#include "smi.h"
#include "smi_xml.h"

#include "fuzz.h"

/* text checks a string kept from the document (NULL: absent). */
static void
text(const char *s)
{
	if (!s)
		return;
	check(*s && strlen(s) <= SX_MAX_TEXT, "an empty or long string");
	check(!smi_not_text(s, strlen(s)) && !strchr(s, '\t'),
		"a string is not text");
}

static void
gpu(const struct sx_doc *doc, size_t i)
{
	const struct sx_gpu *g = &doc->gpus[i];
	size_t j, k;

	check(g->uuid != NULL, "a GPU without a UUID");
	text(g->uuid);
	text(g->brand);
	text(g->arch);
	text(g->addressing_mode);
	text(g->pci_bus_id);
	check(g->minor >= -1, "a bad minor number");
	for (j = 0; j < i; j++)
		check(strcmp(doc->gpus[j].uuid, g->uuid) != 0,
			"two GPUs with one UUID");
	check(g->nmig <= SX_MAX_MIGS, "too many MIG devices");
	for (j = 0; j < g->nmig; j++) {
		check(g->migs[j].index >= 0, "a MIG device without an index");
		check(g->migs[j].gi >= -1 && g->migs[j].ci >= -1,
			"a bad instance id");
		for (k = 0; k < j; k++)
			check(g->migs[k].index != g->migs[j].index,
				"two MIG devices with one index");
	}
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct sx_doc doc;
	size_t i;
	int rc;

	fuzz_quiet();
	rc = sx_parse(&doc, "fuzz", (const char *)data, size);
	if (rc < 0)
		check(!doc.gpus && !doc.ngpus && !doc.driver_version &&
				!doc.cuda_version,
			"a refused document left something");
	text(doc.driver_version);
	text(doc.cuda_version);
	check(doc.ngpus <= SX_MAX_GPUS, "too many GPUs");
	for (i = 0; i < doc.ngpus; i++)
		gpu(&doc, i);
	sx_free(&doc);
	return 0;
}
