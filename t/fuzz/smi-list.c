/* smi-list: libFuzzer target for smi_parse_list, gpu-probe's reader of
 * `nvidia-smi -L` output (live, or a capture given to -m).
 *
 * Each input is a whole -L output, read against GPUs from --query-gpu
 * output: when the input holds a line "--", what comes before it is
 * that CSV output (so the fuzzer can make up GPUs) and what follows the
 * -L output; otherwise the -L output is all of it and the GPUs are four
 * H200s and two A100s of t/fixtures/gpu-probe. Checked, or abort:
 *   - every MIG device has a profile mig_parse reads, a UUID that is
 *     text without blanks, a device number >= 0, and GI and CI both -1
 *     or both >= 0;
 *   - no two MIG devices of one GPU share a device number, no two MIG
 *     devices a UUID, and no MIG device has a GPU's UUID: records are
 *     never two of one device, nor a MIG device under its GPU's UUID;
 *   - no more MIG devices than lines; a line given up sets inv.failed,
 *     which the return value tells;
 *   - a GPU's faults are an array of strings.
 * Leaks are found by libFuzzer's leak check. Run by t/0890-fuzz.t. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "err.h"
#include "mig.h"
#include "smi.h"

#include "fuzz.h"

static const char gpus_csv[] =
	"0, GPU-c41f0d92-7e35-4b1a-8f62-3d9e5a7c2000, NVIDIA H200, "
	"00000000:19:00.0, 71680, 88, [N/A], 34, 118.20, 700.00, 0, "
	"550.90.07, Enabled, 9.0\n"
	"1, GPU-c41f0d92-7e35-4b1a-8f62-3d9e5a7c2001, NVIDIA H200, "
	"00000000:3B:00.0, 71680, 88, [N/A], 35, 120.66, 700.00, 0, "
	"550.90.07, Enabled, 9.0\n"
	"2, GPU-c41f0d92-7e35-4b1a-8f62-3d9e5a7c2002, NVIDIA H200, "
	"00000000:4C:00.0, 71680, 88, [N/A], 33, 117.95, 700.00, 0, "
	"550.90.07, Enabled, 9.0\n"
	"3, GPU-c41f0d92-7e35-4b1a-8f62-3d9e5a7c2003, NVIDIA H200, "
	"00000000:5D:00.0, 71680, 88, [N/A], 34, 119.40, 700.00, 0, "
	"550.90.07, Enabled, 9.0\n"
	"4, GPU-1e7d4c2b-9a60-3f85-b1d4-2e8c7f5a3000, NVIDIA A100-SXM4-80GB, "
	"00000000:07:00.0, 81920, 0, [N/A], 30, 60.00, 400.00, 0, "
	"535.104.05, Enabled, 8.0\n"
	"5, GPU-1e7d4c2b-9a60-3f85-b1d4-2e8c7f5a3001, NVIDIA A100-SXM4-80GB, "
	"00000000:0F:00.0, 81920, 0, [N/A], 31, 61.00, 400.00, 0, "
	"535.104.05, Disabled, 8.0\n";

/* one_mig checks MIG device m. */
static void
one_mig(const struct smi_mig *m)
{
	struct mig_profile p;

	check(m->profile && mig_parse(m->profile, &p) == 0,
		"a MIG profile that does not parse");
	check(m->uuid && *m->uuid && !smi_not_text(m->uuid, strlen(m->uuid)) &&
			!strpbrk(m->uuid, " \t"),
		"a MIG UUID that is not text without blanks");
	check(m->device >= 0, "a negative device number");
	check((m->gi < 0) == (m->ci < 0) && m->gi >= -1 && m->ci >= -1,
		"GI and CI are not both known or both unknown");
}

/* gpu_uuid is the uuid of GPU i of inv. */
static const char *
gpu_uuid(const struct smi_inv *inv, size_t i)
{
	return json_string_value(inv->gpus[i].val[SMI_UUID]);
}

/* twins checks MIG device a of GPU i against the MIG devices after it,
 * of every GPU, and against every GPU. */
static void
twins(const struct smi_inv *inv, size_t i, size_t a)
{
	const struct smi_mig *m = &inv->gpus[i].migs[a], *o;
	size_t j, b;

	for (j = 0; j < inv->ngpus; j++)
		check(strcmp(m->uuid, gpu_uuid(inv, j)) != 0,
			"a MIG device with a GPU's UUID");
	for (j = i; j < inv->ngpus; j++) {
		for (b = j == i ? a + 1 : 0; b < inv->gpus[j].nmig; b++) {
			o = &inv->gpus[j].migs[b];
			check(strcmp(m->uuid, o->uuid) != 0,
				"two MIG devices with one UUID");
			check(j != i || m->device != o->device,
				"two MIG devices of a GPU with one number");
		}
	}
}

/* no_twins checks the pairwise rules over every MIG device of inv
 * (inputs are small: the plain quadratic check). */
static void
no_twins(const struct smi_inv *inv)
{
	size_t i, a;

	for (i = 0; i < inv->ngpus; i++)
		for (a = 0; a < inv->gpus[i].nmig; a++)
			twins(inv, i, a);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *buf = (const char *)data, *list = buf, *sep = NULL;
	struct smi_inv inv = {0};
	json_t *faults, *f;
	size_t i, j, lines = 1, nmig = 0, len = size;
	int rc;

	inv.quiet = 1;
	if (size >= 3 && memcmp(buf, "--\n", 3) == 0)
		sep = buf;
	else if (size >= 4)
		sep = memmem(buf, size, "\n--\n", 4);
	if (sep) {
		sep += sep != buf; /* the "--" line itself */
		smi_parse_csv(&inv, "fuzz.csv", buf, (size_t)(sep - buf));
		list = sep + 3;
		len = size - (size_t)(list - buf);
	} else {
		smi_parse_csv(&inv, "fuzz.csv", gpus_csv, sizeof gpus_csv - 1);
	}
	inv.failed = 0;
	for (i = 0; i < len; i++)
		lines += list[i] == '\n';
	rc = smi_parse_list(&inv, "fuzz.list", list, len);
	check((rc < 0) == (inv.failed != 0), "the result is not inv.failed");
	check(inv.listed, "the inventory is not marked as listed");
	for (i = 0; i < inv.ngpus; i++) {
		for (j = 0; j < inv.gpus[i].nmig; j++)
			one_mig(&inv.gpus[i].migs[j]);
		nmig += inv.gpus[i].nmig;
		faults = smi_faults(&inv, &inv.gpus[i]);
		check(json_is_array(faults), "faults are not an array");
		json_array_foreach(faults, j, f)
			check(json_is_string(f), "a fault is not a string");
		json_decref(faults);
	}
	check(nmig <= lines, "more MIG devices than lines");
	no_twins(&inv);
	smi_free(&inv);
	return 0;
}
