/* smi: parse the output of
 *
 *   nvidia-smi --query-gpu=<SMI columns> --format=csv,noheader,nounits
 *   nvidia-smi -L
 *   nvidia-smi --query-compute-apps=pid,process_name,gpu_uuid,used_memory \
 *              --format=csv,noheader
 *
 * into an inventory of GPUs, their MIG devices and the compute processes
 * on them.
 *
 * CSV values are trimmed. "[N/A]", "N/A" and "[Not Supported]" mean the
 * GPU cannot say: the value becomes null with one warning (none for
 * mig.mode.current, where it means no MIG support: false). "ERR!",
 * "[Unknown Error]" and any other "[...]" are error states: null, a
 * warning, and a fault kept for the health check. Lines may lack trailing
 * columns (captures from older drivers): those become null with one
 * warning per line. A line that is garbage (too few or too many columns, a
 * number that is not one, a missing index or uuid, an index or uuid of a
 * GPU already read) or truncated (the last line without its newline) is
 * reported with its source and line number and yields no GPU; inv->failed
 * is set.
 *
 * Every line, of either output, must be text: valid UTF-8 with no NUL
 * byte and no control character but tab (a separator, never part of a
 * value), or it is refused whole, named by its line number; so every
 * string taken from nvidia-smi is one a record can carry unchanged. An
 * -L line that repeats a GPU, a MIG device number of its GPU, or a UUID
 * already read (GPU or MIG device) is refused the same way, so no two
 * records name the same device.
 *
 * Parsing takes time linear in the output (lookups are hashed).
 *
 * Power readings are rounded to whole watts. */
#ifndef HAZ_SMI_H
#define HAZ_SMI_H

#include <stddef.h>

#include <jansson.h>

enum smi_col {
	SMI_INDEX,
	SMI_UUID,
	SMI_NAME,
	SMI_BUS_ID,
	SMI_MEM_TOTAL,
	SMI_MEM_USED,
	SMI_UTIL,
	SMI_TEMP,
	SMI_POWER,
	SMI_POWER_LIMIT,
	SMI_ECC,
	SMI_DRIVER,
	SMI_MIG_MODE,
	SMI_COMPUTE_CAP,
	SMI_NCOLS,
	SMI_MIN_COLS = SMI_MEM_TOTAL + 1, /* fewer is a truncated line */
};

struct smi_colspec {
	const char *field; /* nvidia-smi query field, e.g. "memory.total" */
	const char *key;   /* gpu record key it fills, e.g. "memory_mib" */
	char type; /* 'i' integer, 'w' watts, 's' string, 'm' MIG mode */
};

/* The query columns, in order. */
extern const struct smi_colspec smi_cols[SMI_NCOLS];

struct smi_mig {
	char *profile; /* as listed, e.g. "1c.3g.40gb" */
	char *uuid;    /* "MIG-..." */
	int device;    /* N of "Device N" */
	int gi, ci;    /* from "MIG-GPU-<uuid>/GI/CI" UUIDs; else -1 */
};

struct smi_gpu {
	long line;              /* line of the CSV source, from 1 */
	json_t *val[SMI_NCOLS]; /* owned: parsed value or json null */
	char *fault[SMI_NCOLS]; /* owned: text of an error state, or NULL */
	int listed;             /* seen on a GPU line of the -L output */
	struct smi_mig *migs;   /* owned: MIG devices from -L, in order */
	size_t nmig, mig_cap;
};

/* A compute process on a GPU of the inventory. */
struct smi_app {
	long line;        /* line of its source, from 1 */
	long pid;         /* as nvidia-smi shows it: the host's */
	char *name;       /* owned: process_name; NULL when empty */
	size_t gpu;       /* its GPU: inv->gpus[gpu], found by UUID */
	json_t *used_mib; /* owned: used_memory in MiB, or json null */
};

struct hm;

struct smi_inv {
	struct smi_gpu *gpus; /* owned, in CSV order */
	size_t ngpus, cap;
	int quiet;  /* set by the caller: no warnings for unavailable values */
	int listed; /* set once some -L output was parsed */
	int failed; /* set once any line was bad */
	/* owned: where each key was read (line numbers, as pointers):
	 * GPU index (decimal) and UUID, MIG UUID, "GPU-POSITION/DEVICE" */
	struct hm *seen;
	struct smi_app *apps; /* owned: compute processes, in order */
	size_t napps, apps_cap;
};

/* smi_query_arg returns the "--query-gpu=..." argument naming smi_cols. */
const char *smi_query_arg(void);

/* smi_parse_csv parses buf (len bytes, NUL-terminated) from src (a name
 * for messages) and appends one GPU per good line to inv. Returns 0, or
 * -1 when some line was bad (warned; inv->failed set). */
int smi_parse_csv(struct smi_inv *inv, const char *src, const char *buf,
	size_t len);

/* smi_parse_list parses `nvidia-smi -L` output and attaches its MIG
 * devices to the GPUs of inv with the same UUID. Returns 0, or -1 when
 * some line was bad or named an unknown GPU (warned; inv->failed set). */
int smi_parse_list(struct smi_inv *inv, const char *src, const char *buf,
	size_t len);

/* smi_apps_arg returns the "--query-compute-apps=..." argument. */
const char *smi_apps_arg(void);

/* smi_parse_apps parses the compute-apps output buf (len bytes,
 * NUL-terminated) from src and appends its processes to inv, each mapped
 * to its GPU by the UUID (so after smi_parse_csv). A line is "pid,
 * process_name, gpu_uuid, used_memory": the name may hold commas (the
 * first field is the pid, the last two the UUID and the memory); the
 * memory is "N MiB" or N, or unavailable ("[N/A]", "N/A", "[Not
 * Supported]" or any other bracketed text: null, warned unless
 * inv->quiet). A line with another number of fields, a pid or memory
 * that is not a number, or the UUID of no GPU of inv, is reported and
 * yields no process; so is a truncated or non-text line. A first line
 * "No running processes found" is none. Returns 0, or -1 when some line
 * was bad (warned; inv->failed set). */
int smi_parse_apps(struct smi_inv *inv, const char *src, const char *buf,
	size_t len);

/* smi_not_text says why the n bytes at p are not text a record can carry
 * (see above): "holds a NUL byte", "is not valid UTF-8", "holds a control
 * character" (C0 but tab, DEL, C1); NULL when they are. */
const char *smi_not_text(const char *p, size_t n);

/* smi_mig_enabled returns 1 when g reports MIG mode Enabled. */
int smi_mig_enabled(const struct smi_gpu *g);

/* smi_any_mig returns 1 when some GPU of inv has MIG mode enabled. */
int smi_any_mig(const struct smi_inv *inv);

/* smi_faults returns a new array of reasons (strings) why nvidia-smi
 * shows g in an error state: fields in an error state, or MIG enabled
 * but g absent from the -L output that was parsed. Caller owns it. */
json_t *smi_faults(const struct smi_inv *inv, const struct smi_gpu *g);

/* smi_free releases everything inv holds and zeroes it. */
void smi_free(struct smi_inv *inv);

#endif
