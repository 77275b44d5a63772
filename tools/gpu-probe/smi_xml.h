/* smi_xml (sx_): the stable facts of `nvidia-smi -q -x` output.
 *
 * From the document (root <nvidia_smi_log>) it takes <driver_version> and
 * <cuda_version>; per <gpu id="...">: <uuid>, <minor_number>,
 * <product_brand>, <product_architecture>, <addressing_mode> (absent on
 * older drivers), <pci><pci_bus_id>; and per
 * <mig_devices><mig_device>: <index> (the N of "Device N" in
 * `nvidia-smi -L`: the XML names no MIG UUID, so that is how a MIG
 * device is matched), <gpu_instance_id>, <compute_instance_id>.
 * Everything else is skipped.
 *
 * The XML is read with libexpat: a well-kept streaming parser beats
 * writing one, and it refuses malformed input (truncated, not XML) with a
 * line and column, which the message names ("SRC:LINE:COL: ..."). A
 * document that declares entities is refused too (no expansion bombs);
 * external DTDs (the <!DOCTYPE ... "nvsmi_device_v13.dtd"> nvidia-smi
 * writes) are never loaded.
 *
 * Values "N/A", "[N/A]", "Not Supported", "[Not Supported]" and empty
 * ones are absent. A value longer than SX_MAX_TEXT bytes, one that is not
 * text (smi_not_text) or, for a number, not a decimal from 0 to INT_MAX,
 * is absent with a warning naming its line:column. A <gpu> without a
 * <uuid> is left out and one without a <minor_number> kept, each warned.
 * At most SX_MAX_GPUS GPUs and SX_MAX_MIGS MIG devices per GPU are kept
 * (more are warned and left out). */
#ifndef HAZ_SMI_XML_H
#define HAZ_SMI_XML_H

#include <stddef.h>

enum { SX_MAX_TEXT = 64, SX_MAX_GPUS = 1024, SX_MAX_MIGS = 64 };

struct sx_mig {
	int index;  /* N of "Device N"; -1 when absent */
	int gi, ci; /* GPU and compute instance ids; -1 when absent */
};

/* A GPU of the document: strings owned, NULL when absent. */
struct sx_gpu {
	char *uuid, *brand, *arch, *addressing_mode, *pci_bus_id;
	int minor;           /* -1 when absent */
	struct sx_mig *migs; /* owned, in document order */
	size_t nmig;
};

struct sx_doc {
	char *driver_version, *cuda_version; /* owned, NULL when absent */
	struct sx_gpu *gpus;                 /* owned, in document order */
	size_t ngpus;
};

/* sx_parse parses the len bytes at buf, named src in messages, into
 * *doc (zeroed first). Returns 0, or -1 when the document is not
 * nvidia-smi -q -x output (not XML, truncated, another root element):
 * warned, *doc left empty. Missing or bad fields are warned (see above)
 * and do not fail the document. */
int sx_parse(struct sx_doc *doc, const char *src, const char *buf, size_t len);

/* sx_find returns the GPU of doc with that UUID, or NULL. */
const struct sx_gpu *sx_find(const struct sx_doc *doc, const char *uuid);

/* sx_find_mig returns MIG device index of g, or NULL. */
const struct sx_mig *sx_find_mig(const struct sx_gpu *g, int index);

/* sx_free releases everything doc holds and zeroes it. */
void sx_free(struct sx_doc *doc);

#endif
