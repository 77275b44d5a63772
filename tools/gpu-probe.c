/* gpu-probe: discover the node's GPUs and MIG devices, with health.
 *
 * usage: gpu-probe [-Fpq] [-c config] [-H name=value] [-N node]
 *                  [-s nvidia-smi] [-T seconds] [-i seconds] [-P file]
 *                  [-R procroot] [-Y sysroot]
 *                  [-r csvfile [-m listfile] [-a appsfile] [-x xmlfile] |
 *                   -t topology [-n node]]
 *
 * Writes one `gpu` record (NDJSON) per whole GPU and per MIG device, from
 * one of three sources:
 *
 *   live (default)  one `nvidia-smi --query-gpu=... --format=csv,noheader,
 *                   nounits` call, plus `nvidia-smi -L` only when some GPU
 *                   has MIG mode enabled, plus with -p one
 *                   `nvidia-smi --query-compute-apps=...`. nvidia-smi is
 *                   -s PATH, else $NVIDIA_SMI, else found on PATH; each
 *                   call is killed after -T seconds (default 10).
 *   replay (-r)     the captured output of those commands.
 *   topology (-t)   what node -n (default: every node) of a simulated
 *                   topology has: deterministic UUIDs, idle readings.
 *
 * Stable facts (gpufacts.h) complete the records: minor numbers, CUDA
 * version, brand, addressing mode and MIG instance ids from one
 * `nvidia-smi -q -x` (replay: -x FILE), the PCIe root, NUMA node and
 * machine name from sysfs (-Y, default /sys; replay: only when given),
 * minor numbers from /proc/driver/nvidia (-R, default /proc; replay:
 * only when given) when -q -x cannot say. They are read on the first
 * probe and again only when the driver version, the set of GPU UUIDs or
 * the -L output changes; a failed -q -x is warned and not called again
 * before the driver version changes. The CUDA version comes from -q -x
 * alone: null when it failed. -F reads no facts at all (no -q -x call):
 * for one-shot callers that need only the readings, as canhazgpu's.
 *
 * With -p (or -a), a `process` record follows per compute process: its
 * GPU's index and UUID, pid, name, memory, and its owner from
 * /proc/<pid>/status ("unknown", warned, when it cannot be read).
 *
 * Records carry node (-N, else $NODE_NAME, else the host name; the topology
 * node in -t mode), the readings, mig_enabled (the physical GPU's MIG
 * mode: a whole GPU with it set is not allocatable), mig ({profile,
 * parent_uuid, device, gi, ci} for MIG devices, else null), and health
 * ("ok", "warn", "unhealthy" with reasons) judged from this probe's
 * readings alone against thresholds from -c FILE (JSON or YAML) and -H.
 *
 * The records of one probe are written together. With -i SECONDS it
 * probes again every SECONDS, forever, ending each good probe with a
 * {"kind":"flush"} record so claim-make(1) publishes it; a probe that
 * fails writes nothing at all, so the last good state stays published.
 * -P FILE also writes the readings as node-exporter textfile metrics,
 * replaced atomically after every good probe.
 *
 * Exit: 0 ok; 1 a bad line in the nvidia-smi output (skipped, others still
 * written), nvidia-smi missing or failing, a bad topology or config; 2
 * usage; 75 nvidia-smi timed out or was killed. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <sys/prctl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "err.h"
#include "gpufacts.h"
#include "health.h"
#include "mig.h"
#include "nd.h"
#include "owner.h"
#include "proc.h"
#include "prom.h"
#include "smi.h"
#include "topo.h"
#include "y2j.h"

#define USAGE                                                                       \
	"usage: gpu-probe [-Fpq] [-c config] [-H name=value] [-N node]\n"           \
	"                 [-s nvidia-smi] [-T seconds] [-i seconds] [-P file]\n"    \
	"                 [-R procroot] [-Y sysroot]\n"                             \
	"                 [-r csvfile [-m listfile] [-a appsfile] [-x xmlfile] |\n" \
	"                  -t topology [-n node]]\n"

enum { MAX_OUTPUT = 16 << 20, MAX_SETS = 32 };

struct opts {
	const char *node, *config, *smi, *replay, *list, *apps, *topo;
	const char *xml, *procroot, *sysroot;
	const char *topo_node;
	const char *sets[MAX_SETS]; /* -H name=value, applied after -c */
	int nsets, timeout, quiet, interval, procs, no_facts;
	const char *textfile;
	struct health_limits limits;
};

/* The records of the probe under way, written together at its end. */
static json_t *batch;

/* The order of every record's keys. */
static const char *const record_keys[] = {"kind", "node", "index", "minor",
	"uuid", "name", "product", "brand", "memory_mib", "memory_used_mib",
	"util_pct", "temp_c", "power_w", "power_limit_w", "ecc_errors",
	"driver_version", "cuda_version", "compute_cap", "pci_bus_id",
	"pcie_root", "numa_node", "pci_class", "addressing_mode", "machine",
	"mig_enabled", "mig", "health", "health_reasons"};

/* The stable facts, kept from probe to probe (gpufacts.h). */
static struct gf_facts facts;

static void
help(void)
{
	fputs(USAGE, stdout);
	puts("  -c FILE     health thresholds from a JSON or YAML map\n"
	     "  -F          no stable facts: no -q -x call, no /proc or /sys\n"
	     "  -H N=V      set threshold N (temp_warn, temp_unhealthy,\n"
	     "              power_warn_pct, power_unhealthy_pct, ecc_warn,\n"
	     "              ecc_unhealthy, mem_warn_pct, mem_unhealthy_pct,\n"
	     "              util_warn_pct, util_unhealthy_pct) to V or off\n"
	     "  -N NODE     node name for the records\n"
	     "  -p          also a process record per compute process\n"
	     "  -q          no warnings for values nvidia-smi cannot report,\n"
	     "              nor for stable facts that cannot be read\n"
	     "  -s PATH     nvidia-smi to run\n"
	     "  -T SECONDS  time limit per nvidia-smi call (default 10)\n"
	     "  -r FILE     replay a captured --query-gpu CSV output\n"
	     "  -m FILE     with -r: the captured nvidia-smi -L output\n"
	     "  -a FILE     with -r: the captured compute-apps output (-p)\n"
	     "  -x FILE     with -r: the captured nvidia-smi -q -x output\n"
	     "  -R DIR      proc root for minor numbers when -q -x cannot say\n"
	     "              (default /proc; replay: none unless given)\n"
	     "  -Y DIR      sysfs root for PCIe root, NUMA node, machine\n"
	     "              (default /sys; replay: none unless given)\n"
	     "  -t FILE     simulate the nodes of a topology file\n"
	     "  -n NODE     with -t: just this node\n"
	     "  -i SECONDS  probe again every SECONDS, each good probe ending\n"
	     "              with a flush record; a failed one writes nothing\n"
	     "  -P FILE     also write node-exporter textfile metrics to FILE\n"
	     "  -h, -V      help, version");
	printf("query: %s\n", smi_query_arg() + strlen("--query-gpu="));
	printf("apps: %s\n", smi_apps_arg() + strlen("--query-compute-apps="));
}

static void
usage(void)
{
	fputs(USAGE, stderr);
	exit(HAZ_USAGE);
}

/* ---- records ---- */

/* jstr returns s as a JSON string. Every string of a record was checked
 * as text where it was read (smi.h, topo.h), so one that is not valid
 * UTF-8 here is a bug: dying beats a record quietly missing a key, or
 * keeping its parent's. */
static json_t *
jstr(const char *s)
{
	json_t *j = json_string(s);

	if (!j)
		err_die(HAZ_FAIL,
			"internal error: a string that is not UTF-8 "
			"reached a record");
	return j;
}

/* skeleton returns a new gpu record for node with every key null. */
static json_t *
skeleton(const char *node)
{
	json_t *rec = json_object();
	size_t i;

	for (i = 0; i < sizeof record_keys / sizeof *record_keys; i++)
		json_object_set_new(rec, record_keys[i], json_null());
	json_object_set_new(rec, "kind", jstr("gpu"));
	json_object_set_new(rec, "node", jstr(node));
	return rec;
}

/* respell returns a copy of s (NULL gives json null) with every from
 * character replaced by to, as a JSON string. */
static json_t *
respell(const char *s, char from, char to)
{
	char *copy, *p;
	json_t *j;

	if (!s)
		return json_null();
	copy = estrdup(s);
	for (p = copy; *p; p++)
		*p = *p == from ? to : *p;
	j = jstr(copy);
	free(copy);
	return j;
}

/* mig_child returns a new record for a MIG device of the GPU whose record
 * is parent: the parent's physical readings (temperature, power, ECC), the
 * nominal memory of the profile (capped at the parent's), no memory use
 * or utilization of its own (nvidia-smi --query-gpu has none). */
static json_t *
mig_child(const json_t *parent, const char *profile, const char *uuid,
	int device, int gi, int ci)
{
	json_t *rec = json_deep_copy(parent);
	json_t *pmem = json_object_get(parent, "memory_mib");
	struct mig_profile p;
	long mem;

	mig_parse(profile, &p);
	mem = mig_memory_mib(&p);
	if (json_is_integer(pmem) && json_integer_value(pmem) < mem)
		mem = (long)json_integer_value(pmem);
	json_object_set_new(rec, "uuid", jstr(uuid));
	json_object_set_new(rec, "memory_mib", json_integer(mem));
	json_object_set_new(rec, "memory_used_mib", json_null());
	json_object_set_new(rec, "util_pct", json_null());
	json_object_set_new(rec, "mig",
		json_pack("{s:s, s:O, s:i, s:o, s:o}", "profile", profile,
			"parent_uuid", json_object_get(parent, "uuid"),
			"device", device, "gi",
			gi < 0 ? json_null() : json_integer(gi), "ci",
			ci < 0 ? json_null() : json_integer(ci)));
	return rec;
}

/* emit judges rec against l with faults (borrowed, may be NULL), writes
 * it, and drops the caller's reference. */
static void
emit(json_t *rec, const struct health_limits *l, const json_t *faults)
{
	health_apply(rec, l, faults);
	json_array_append_new(batch, rec);
}

/* ---- nvidia-smi output ---- */

/* jstr_or_null returns s as a JSON string, NULL as null. */
static json_t *
jstr_or_null(const char *s)
{
	return s ? jstr(s) : json_null();
}

/* smi_record returns the record (before health) of GPU g on node, with
 * its stable facts f (NULL when none are known). */
static json_t *
smi_record(const char *node, const struct smi_gpu *g, const struct gf_gpu *f)
{
	json_t *rec = skeleton(node);
	size_t c;

	for (c = 0; c < SMI_NCOLS; c++)
		json_object_set(rec, smi_cols[c].key, g->val[c]);
	json_object_set_new(rec, "product",
		respell(json_string_value(g->val[SMI_NAME]), ' ', '-'));
	json_object_set_new(rec, "cuda_version",
		jstr_or_null(facts.cuda_version));
	json_object_set_new(rec, "machine", jstr_or_null(facts.machine));
	if (!f)
		return rec;
	if (f->minor >= 0)
		json_object_set_new(rec, "minor", json_integer(f->minor));
	json_object_set_new(rec, "brand", jstr_or_null(f->brand));
	json_object_set_new(rec, "pcie_root",
		jstr_or_null(f->pcie_root[0] ? f->pcie_root : NULL));
	if (f->numa_node >= 0)
		json_object_set_new(rec, "numa_node",
			json_integer(f->numa_node));
	json_object_set_new(rec, "pci_class",
		jstr_or_null(f->pci_class[0] ? f->pci_class : NULL));
	json_object_set_new(rec, "addressing_mode",
		jstr_or_null(f->addressing_mode));
	return rec;
}

/* mig_ids gives MIG device m of a GPU with facts f its GPU and compute
 * instance ids: from its UUID (old style), else from -q -x. */
static void
mig_ids(const struct smi_mig *m, const struct gf_gpu *f, int *gi, int *ci)
{
	size_t i;

	*gi = m->gi;
	*ci = m->ci;
	for (i = 0; *gi < 0 && f && i < f->nmig; i++) {
		if (f->migs[i].index == m->device) {
			*gi = f->migs[i].gi;
			*ci = f->migs[i].ci;
		}
	}
}

/* emit_inv writes the records of every GPU of inv and its MIG devices. */
static void
emit_inv(const struct opts *o, const struct smi_inv *inv)
{
	const struct smi_gpu *g;
	const struct smi_mig *m;
	const struct gf_gpu *f;
	json_t *rec, *faults;
	size_t i, j;
	int gi, ci;

	for (i = 0; i < inv->ngpus; i++) {
		g = &inv->gpus[i];
		f = gf_at(&facts, i, json_string_value(g->val[SMI_UUID]));
		rec = smi_record(o->node, g, f);
		faults = smi_faults(inv, g);
		emit(json_incref(rec), &o->limits, faults);
		for (j = 0; j < g->nmig; j++) {
			m = &g->migs[j];
			mig_ids(m, f, &gi, &ci);
			emit(mig_child(rec, m->profile, m->uuid, m->device, gi,
				     ci),
				&o->limits, faults);
		}
		json_decref(rec);
		json_decref(faults);
	}
}

/* apps_src names the compute-apps output in messages. */
static const char *
apps_src(const struct opts *o)
{
	if (!o->apps)
		return "nvidia-smi --query-compute-apps";
	return strcmp(o->apps, "-") ? o->apps : "<stdin>";
}

/* app_record returns the process record of a, a process of inv, with
 * its owner: "unknown" when it cannot be read (gone, hidden), as
 * canhazgpu has it, with a warning naming the line it came from. */
static json_t *
app_record(const struct opts *o, const struct smi_inv *inv,
	const struct smi_app *a)
{
	const struct smi_gpu *g = &inv->gpus[a->gpu];
	char user[256];

	if (owner_of(a->pid, user, sizeof user) < 0) {
		err_warn("%s:%ld: pid %ld: /proc/%ld/status: %s: user unknown",
			apps_src(o), a->line, a->pid, a->pid, strerror(errno));
		strcpy(user, "unknown");
	} else if (smi_not_text(user, strlen(user))) {
		err_warn("%s:%ld: pid %ld: its user's name is not text: user "
			 "unknown",
			apps_src(o), a->line, a->pid);
		strcpy(user, "unknown");
	}
	return json_pack("{s:s, s:o, s:O, s:O, s:I, s:o, s:O, s:o}", "kind",
		"process", "node", jstr(o->node), "index", g->val[SMI_INDEX],
		"gpu_uuid", g->val[SMI_UUID], "pid", (json_int_t)a->pid,
		"process_name", a->name ? jstr(a->name) : json_null(),
		"used_memory_mib", a->used_mib, "user", jstr(user));
}

/* emit_apps writes the process record of every process of inv. */
static void
emit_apps(const struct opts *o, const struct smi_inv *inv)
{
	size_t i;

	for (i = 0; i < inv->napps; i++)
		json_array_append_new(batch, app_record(o, inv, &inv->apps[i]));
}

/* call runs nvidia-smi with args (argv[0] filled in here) and checks how it
 * went. When it ran to the end, out->buf holds its output (caller frees)
 * and the result is HAZ_OK, or HAZ_FAIL when it exited non-zero (warned;
 * with mute_empty, not when it printed nothing: some nvidia-smi say so
 * that they have no process to list, canhazgpu reads it so). Otherwise
 * out->buf is NULL and the result is the status to stop with (warned). */
static int
call(const struct opts *o, char **argv, struct proc_out *out, int mute_empty)
{
	argv[0] = (char *)o->smi;
	switch (proc_run(argv, o->timeout * 1000L, MAX_OUTPUT, out)) {
	case PROC_EXITED:
		if (!out->code || (mute_empty && !out->len))
			return HAZ_OK;
		err_warn("%s: exited with status %d", o->smi, out->code);
		return HAZ_FAIL;
	case PROC_NOEXEC:
		if (out->code == ENOENT)
			err_warn("%s: not found", o->smi);
		else
			err_warn("%s: cannot run: %s", o->smi,
				strerror(out->code));
		break;
	case PROC_TOOBIG:
		err_warn("%s: more than %d bytes of output", o->smi,
			MAX_OUTPUT);
		break;
	case PROC_TIMEOUT:
		err_warn("%s: timed out after %ds", o->smi, o->timeout);
		proc_free(out);
		return HAZ_TEMP;
	case PROC_KILLED:
		err_warn("%s: killed by signal %d", o->smi, out->code);
		proc_free(out);
		return HAZ_TEMP;
	case PROC_SYSERR:
		err_warn("%s: %s", o->smi, strerror(out->code));
		proc_free(out);
		return HAZ_TEMP;
	}
	proc_free(out);
	return HAZ_FAIL;
}

typedef int parse_fn(struct smi_inv *, const char *, const char *, size_t);

/* run_parse runs nvidia-smi with argv and parses its output, named src,
 * into inv with parse; hash, unless NULL, gets the output's gf_hash.
 * Returns 1 when the call ran to the end (its status, HAZ_OK or
 * HAZ_FAIL, into *st), else 0 with the status to stop with in *st. */
static int
run_parse(const struct opts *o, char **argv, parse_fn *parse,
	struct smi_inv *inv, const char *src, int *st, uint64_t *hash)
{
	struct proc_out out;

	*st = call(o, argv, &out, parse == smi_parse_apps);
	if (!out.buf)
		return 0;
	parse(inv, src, out.buf, out.len);
	if (hash)
		*hash = gf_hash(out.buf, out.len);
	proc_free(&out);
	return 1;
}

/* live_facts reads the stable facts of inv anew when they can have
 * changed (gpufacts.h): one nvidia-smi -q -x, unless it failed before
 * for this driver version, then the kernel's files. A failed -q -x is
 * warned and does not fail the probe. */
static void
live_facts(const struct opts *o, const struct smi_inv *inv, uint64_t list_hash)
{
	char *argv[] = {NULL, "-q", "-x", NULL};
	struct gf_roots r = {o->procroot ? o->procroot : "/proc",
		o->sysroot ? o->sysroot : "/sys", o->quiet};
	struct proc_out out;
	struct sx_doc x;
	int ok = 0;

	if (!gf_stale(&facts, inv, list_hash))
		return;
	if (inv->ngpus && gf_want_xml(&facts, inv)) {
		if (call(o, argv, &out, 0) == HAZ_OK)
			ok = sx_parse(&x, "nvidia-smi -q -x", out.buf,
				     out.len) == 0;
		proc_free(&out);
		if (!ok)
			err_warn("nvidia-smi -q -x failed: minor numbers from "
				 "%s/driver/nvidia, cuda_version null; not "
				 "called again before the driver version "
				 "changes",
				r.proc);
	}
	gf_build(&facts, inv, list_hash, ok ? &x : NULL, "nvidia-smi -q -x",
		!ok, &r);
	if (ok)
		sx_free(&x);
}

/* live fills inv from nvidia-smi. Returns an exit status: HAZ_OK or
 * HAZ_FAIL with inv filled as far as the output went, or the status of a
 * call that ended too early. */
static int
live(const struct opts *o, struct smi_inv *inv)
{
	char *query[] = {NULL, (char *)smi_query_arg(),
		"--format=csv,noheader,nounits", NULL};
	char *list[] = {NULL, "-L", NULL};
	char *apps[] = {NULL, (char *)smi_apps_arg(), "--format=csv,noheader",
		NULL};
	int st, st2 = HAZ_OK, st3 = HAZ_OK;
	uint64_t list_hash = 0;

	if (!run_parse(o, query, smi_parse_csv, inv, "nvidia-smi", &st, NULL))
		return st;
	if (smi_any_mig(inv) &&
		!run_parse(o, list, smi_parse_list, inv, "nvidia-smi -L", &st2,
			&list_hash))
		return st2;
	if (o->procs &&
		!run_parse(o, apps, smi_parse_apps, inv, apps_src(o), &st3,
			NULL))
		return st3;
	if (!o->no_facts)
		live_facts(o, inv, list_hash);
	return st3 != HAZ_OK ? st3 : st2 != HAZ_OK ? st2 : st;
}

/* slurp reads all of path ("-" is stdin) into *buf (caller frees), at
 * most MAX_OUTPUT bytes: a capture is what nvidia-smi may print. Returns
 * 0, or -1 with a message printed (and *buf NULL). */
static int
slurp(const char *path, char **buf, size_t *len)
{
	FILE *f = strcmp(path, "-") == 0 ? stdin : fopen(path, "r");
	const char *name = f == stdin ? "<stdin>" : path;
	size_t cap = 8192, n;
	int bad = 0;

	*buf = NULL;
	*len = 0;
	if (!f) {
		err_warn("%s:", path);
		return -1;
	}
	*buf = emalloc(cap + 1);
	while ((n = fread(*buf + *len, 1, cap - *len, f)) > 0) {
		*len += n;
		if (*len > MAX_OUTPUT) {
			err_warn("%s: more than %d bytes: not a capture of "
				 "nvidia-smi output",
				name, MAX_OUTPUT);
			bad = 1;
			break;
		}
		if (*len == cap)
			*buf = erealloc(*buf, (cap *= 2) + 1);
	}
	if (!bad && ferror(f)) {
		err_warn("%s: read error:", name);
		bad = 1;
	}
	if (f != stdin)
		fclose(f);
	if (bad) {
		free(*buf);
		*buf = NULL;
		return -1;
	}
	(*buf)[*len] = '\0';
	return 0;
}

/* replay_one parses the capture at path into inv with parse; hash,
 * unless NULL, gets its gf_hash. Returns 0, or -1 when it cannot be read
 * (said). */
static int
replay_one(const char *path, parse_fn *parse, struct smi_inv *inv,
	uint64_t *hash)
{
	char *buf;
	size_t len;

	if (slurp(path, &buf, &len) < 0)
		return -1;
	parse(inv, strcmp(path, "-") ? path : "<stdin>", buf, len);
	if (hash)
		*hash = gf_hash(buf, len);
	free(buf);
	return 0;
}

/* replay_facts is live_facts for captures: the -q -x output from -x
 * FILE, the kernel's files only under the roots given. */
static void
replay_facts(const struct opts *o, const struct smi_inv *inv,
	uint64_t list_hash)
{
	struct gf_roots r = {o->procroot, o->sysroot, o->quiet};
	const char *src;
	struct sx_doc x;
	char *buf;
	size_t len;
	int ok = 0;

	if (!gf_stale(&facts, inv, list_hash))
		return;
	if (o->xml && slurp(o->xml, &buf, &len) == 0) {
		src = strcmp(o->xml, "-") ? o->xml : "<stdin>";
		ok = sx_parse(&x, src, buf, len) == 0;
		free(buf);
	}
	gf_build(&facts, inv, list_hash, ok ? &x : NULL, o->xml, !ok, &r);
	if (ok)
		sx_free(&x);
}

/* replay fills inv from capture files. Returns an exit status. */
static int
replay(const struct opts *o, struct smi_inv *inv)
{
	uint64_t list_hash = 0;

	if (replay_one(o->replay, smi_parse_csv, inv, NULL) < 0)
		return HAZ_FAIL;
	if (!o->list && smi_any_mig(inv))
		err_warn("%s: MIG is enabled but no -m list was given: "
			 "no MIG devices reported",
			o->replay);
	if (o->list && replay_one(o->list, smi_parse_list, inv, &list_hash) < 0)
		return HAZ_FAIL;
	if (!o->no_facts)
		replay_facts(o, inv, list_hash);
	if (o->apps && replay_one(o->apps, smi_parse_apps, inv, NULL) < 0)
		return HAZ_FAIL;
	return HAZ_OK;
}

/* ---- topology ---- */

/* sim_gpu writes the records of GPU g of simulated node n. */
static void
sim_gpu(const struct opts *o, const struct topo_node *n,
	const struct topo_gpu *g)
{
	char uuid[48], mig_uuid[48];
	json_t *rec = skeleton(n->name);
	size_t i;

	topo_uuid(uuid, "GPU", n->name, g->index, -1);
	json_object_update_new(rec,
		json_pack("{s:i, s:i, s:s, s:o, s:s?, s:o, s:i, s:i, s:i, s:i, "
			  "s:s?, s:s?, s:s?, s:b}",
			"index", g->index, "minor", g->minor, "uuid", uuid,
			"name", respell(n->product, '-', ' '), "product",
			n->product, "memory_mib",
			n->memory_mib ? json_integer(n->memory_mib)
				      : json_null(),
			"memory_used_mib", 0, "util_pct", 0, "temp_c", 30,
			"ecc_errors", 0, "driver_version", n->driver_version,
			"cuda_version", n->cuda_version, "compute_cap",
			n->compute_cap, "mig_enabled", g->mig != NULL));
	emit(json_incref(rec), &o->limits, NULL);
	for (i = 0; i < json_array_size(g->mig); i++) {
		topo_uuid(mig_uuid, "MIG", n->name, g->index, (int)i);
		emit(mig_child(rec,
			     json_string_value(json_array_get(g->mig, i)),
			     mig_uuid, (int)i, -1, -1),
			&o->limits, NULL);
	}
	json_decref(rec);
}

/* simulate writes the records of node o->topo_node, or of every node, of
 * topology o->topo. Returns an exit status. */
static int
simulate(const struct opts *o)
{
	const struct topo_node *n;
	struct topo t;
	size_t i;
	int g;

	if (topo_load(o->topo, &t) < 0)
		return HAZ_FAIL;
	if (o->topo_node && !topo_find(&t, o->topo_node)) {
		err_warn("%s: no node \"%s\"", o->topo, o->topo_node);
		topo_free(&t);
		return HAZ_FAIL;
	}
	for (i = 0; i < t.nnodes; i++) {
		n = &t.nodes[i];
		if (o->topo_node && strcmp(n->name, o->topo_node) != 0)
			continue;
		for (g = 0; g < n->ngpus; g++)
			sim_gpu(o, n, &n->gpus[g]);
	}
	topo_free(&t);
	return HAZ_OK;
}
/* ---- options ---- */

/* load_limits fills o->limits: defaults, then -c, then each -H. Returns
 * HAZ_OK, HAZ_FAIL for a bad -c file or HAZ_USAGE for a bad -H, with a
 * message printed. */
static int
load_limits(struct opts *o)
{
	struct y2j_error e;
	const char *why;
	char *name, *eq;
	json_t *doc;
	int i, rc = HAZ_OK;

	health_defaults(&o->limits);
	if (o->config) {
		if (!(doc = y2j_load(o->config, Y2J_SKIP_NULL, &e))) {
			err_warn("%s", e.text);
			return HAZ_FAIL;
		}
		if (health_load_json(&o->limits, doc, o->config) < 0)
			rc = HAZ_FAIL;
		json_decref(doc);
	}
	for (i = 0; rc == HAZ_OK && i < o->nsets; i++) {
		name = estrdup(o->sets[i]);
		eq = strchr(name, '=');
		if (eq)
			*eq++ = '\0';
		if (!eq || health_set_text(&o->limits, name, eq, &why) < 0) {
			err_warn("-H %s: %s", o->sets[i],
				eq ? why : "expected name=value");
			rc = HAZ_USAGE;
		}
		free(name);
	}
	return rc;
}

/* seconds parses a -T value: whole seconds from 1 to 3600. */
static int
seconds(const char *s)
{
	char *end;
	long v = strtol(s, &end, 10);

	if (!*s || *end || v < 1 || v > 3600) {
		err_warn("-T %s: expected whole seconds from 1 to 3600", s);
		usage();
	}
	return (int)v;
}

static void
parse_opts(struct opts *o, int argc, char **argv)
{
	int c;

	memset(o, 0, sizeof *o);
	o->timeout = 10;
	while ((c = getopt(argc, argv,
			"a:c:FH:hi:m:N:n:pP:qR:r:s:T:t:Vx:Y:")) != -1) {
		switch (c) {
		case 'a': o->apps = optarg; break;
		case 'c': o->config = optarg; break;
		case 'F': o->no_facts = 1; break;
		case 'H':
			if (o->nsets == MAX_SETS)
				err_die(HAZ_USAGE, "-H: more than %d",
					MAX_SETS);
			o->sets[o->nsets++] = optarg;
			break;
		case 'h': help(); exit(nd_finish(HAZ_OK));
		case 'i': o->interval = seconds(optarg); break;
		case 'm': o->list = optarg; break;
		case 'p': o->procs = 1; break;
		case 'P': o->textfile = optarg; break;
		case 'N': o->node = optarg; break;
		case 'n': o->topo_node = optarg; break;
		case 'q': o->quiet = 1; break;
		case 'r': o->replay = optarg; break;
		case 'R': o->procroot = optarg; break;
		case 'x': o->xml = optarg; break;
		case 'Y': o->sysroot = optarg; break;
		case 's': o->smi = optarg; break;
		case 'T': o->timeout = seconds(optarg); break;
		case 't': o->topo = optarg; break;
		case 'V':
			puts("gpu-probe " HAZ_VERSION);
			exit(nd_finish(HAZ_OK));
		default: usage();
		}
	}
	if (optind != argc || (o->replay && o->topo) ||
		(o->list && !o->replay) || (o->topo_node && !o->topo) ||
		(o->apps && !o->replay) || (o->xml && !o->replay) ||
		(o->procs && (o->replay || o->topo)) ||
		(o->topo && (o->procroot || o->sysroot)))
		usage();
}

/* default_node picks $NODE_NAME or the host name into buf. */
static const char *
default_node(char *buf, size_t n)
{
	const char *env = getenv("NODE_NAME");

	if (env && *env)
		return env;
	if (gethostname(buf, n) < 0 || !buf[0])
		return "localhost";
	buf[n - 1] = '\0';
	return buf;
}

/* ---- one probe, and the loop ---- */

/* probe fills batch with one probe's records. Returns an exit status. */
static int
probe(const struct opts *o)
{
	struct smi_inv inv = {0};
	int st;

	if (o->topo)
		return simulate(o);
	inv.quiet = o->quiet;
	st = o->replay ? replay(o, &inv) : live(o, &inv);
	if (st == HAZ_OK || st == HAZ_FAIL) {
		emit_inv(o, &inv); /* what parsed, even when a call failed */
		emit_apps(o, &inv);
	}
	if (inv.failed && st == HAZ_OK)
		st = HAZ_FAIL;
	smi_free(&inv);
	return st;
}

/* textfile_label points l at the label value v: a string as it is, an
 * integer in buf (24 bytes), anything else empty. */
static void
textfile_label(struct prom_label *l, const json_t *v, char *buf)
{
	l->value = NULL;
	l->len = 0;
	if (json_is_string(v)) {
		l->value = json_string_value(v);
		l->len = json_string_length(v);
	} else if (json_is_integer(v)) {
		snprintf(buf, 24, "%" JSON_INTEGER_FORMAT,
			json_integer_value(v));
		l->value = buf;
		l->len = strlen(buf);
	}
}

/* textfile_gauge writes the family k8shazgpu_gpu_NAME: a sample of every
 * record of batch with a number at key (integers as they are), or for
 * key "health" of every record (0 ok, 1 warn, 2 otherwise), labelled
 * with its node, uuid, index and MIG profile, escaped as the format
 * wants. A record a label of which no label value may hold (a NUL byte)
 * is left out, and told when key is "health"; returns -1 then, else 0. */
static int
textfile_gauge(FILE *f, const char *path, const char *name, const char *help,
	const char *key)
{
	char metric[64], value[PROM_VALUE_SIZE], index[24];
	const json_t *r, *v, *m;
	const char *h;
	size_t i;
	int st = 0;

	snprintf(metric, sizeof metric, "k8shazgpu_gpu_%s", name);
	fprintf(f, "# HELP %s %s\n# TYPE %s gauge\n", metric, help, metric);
	json_array_foreach(batch, i, r) {
		struct prom_label l[] = {{"node", NULL, 0}, {"uuid", NULL, 0},
			{"index", NULL, 0}, {"mig", NULL, 0}};

		if (strcmp(json_string_value(json_object_get(r, "kind")),
			    "gpu") != 0)
			continue; /* a process record */
		if (strcmp(key, "health") == 0) {
			h = json_string_value(json_object_get(r, "health"));
			snprintf(value, sizeof value, "%d",
				!h || !strcmp(h, "ok")       ? 0
					: !strcmp(h, "warn") ? 1
							     : 2);
		} else if (json_is_integer(v = json_object_get(r, key))) {
			snprintf(value, sizeof value, "%" JSON_INTEGER_FORMAT,
				json_integer_value(v));
		} else if (json_is_real(v)) {
			prom_value(json_real_value(v), value);
		} else {
			continue;
		}
		m = json_object_get(r, "mig");
		textfile_label(&l[0], json_object_get(r, "node"), NULL);
		textfile_label(&l[1], json_object_get(r, "uuid"), NULL);
		textfile_label(&l[2], json_object_get(r, "index"), index);
		textfile_label(&l[3], json_object_get(m, "profile"), NULL);
		if (prom_sample(f, metric, l, 4, value) == 0)
			continue;
		if (strcmp(key, "health") == 0)
			err_warn(
				"%s: gpu record %zu: a label value holds a NUL byte: "
				"left out",
				path, i + 1);
		st = -1;
	}
	return st;
}

/* write_textfile renders batch for node-exporter's textfile collector
 * into path, through a temporary file (made anew, never one found there)
 * renamed over it, so a reader sees the old file or the new one whole.
 * Returns HAZ_FAIL when it could not, or left a record out. */
static int
write_textfile(const char *path)
{
	static const char *const gauges[][3] = {
		{"memory_total_mib", "Device memory, MiB.", "memory_mib"},
		{"memory_used_mib", "Device memory in use, MiB.",
			"memory_used_mib"},
		{"utilization_percent", "GPU utilization, percent.",
			"util_pct"},
		{"temperature_celsius", "GPU temperature.", "temp_c"},
		{"power_watts", "Power draw, watts.", "power_w"},
		{"ecc_errors", "Uncorrected volatile ECC errors.",
			"ecc_errors"},
		{"health", "0 ok, 1 warn, 2 unhealthy.", "health"},
	};
	char *tmp = easprintf("%s.tmp.%ld", path, (long)getpid());
	FILE *f = NULL;
	size_t i;
	int fd, ok, left_out = 0;

	unlink(tmp);
	fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
	if (fd < 0 || !(f = fdopen(fd, "w"))) {
		err_warn("%s:", tmp);
		if (fd >= 0) {
			close(fd);
			unlink(tmp);
		}
		free(tmp);
		return HAZ_FAIL;
	}
	for (i = 0; i < sizeof gauges / sizeof *gauges; i++)
		if (textfile_gauge(f, path, gauges[i][0], gauges[i][1],
			    gauges[i][2]) < 0)
			left_out = 1;
	ok = fflush(f) == 0 && !ferror(f);
	ok = (fclose(f) == 0) && ok && rename(tmp, path) == 0;
	if (!ok) {
		err_warn("%s:", path);
		unlink(tmp);
	}
	free(tmp);
	return ok && !left_out ? HAZ_OK : HAZ_FAIL;
}

static void
write_batch(void)
{
	json_t *rec;
	size_t i;

	json_array_foreach(batch, i, rec)
		nd_write(rec);
}

/* loop probes every o->interval seconds, forever; only good probes are
 * written, each followed by a flush record. */
static void
loop(const struct opts *o)
{
	json_t *flush = json_pack("{s:s}", "kind", "flush");
	int st;

	/* a wrapper killed outright takes its endless probe with it */
	if (prctl(PR_SET_PDEATHSIG, SIGTERM) < 0 || getppid() == 1)
		exit(HAZ_OK);
	for (;;) {
		batch = json_array();
		st = probe(o);
		if (st == HAZ_OK) {
			write_batch();
			nd_write(flush);
			if (o->textfile)
				write_textfile(o->textfile);
		} else {
			err_warn(
				"probe failed (status %d): nothing written this cycle",
				st);
		}
		json_decref(batch);
		sleep((unsigned)o->interval);
	}
}

int
main(int argc, char **argv)
{
	char host[256];
	struct opts o;
	int st;

	err_init(argv[0]);
	parse_opts(&o, argc, argv);
	if (!o.smi)
		o.smi = getenv("NVIDIA_SMI") && *getenv("NVIDIA_SMI")
			? getenv("NVIDIA_SMI")
			: "nvidia-smi";
	if (!o.node)
		o.node = default_node(host, sizeof host);
	if (!*o.node || smi_not_text(o.node, strlen(o.node)) ||
		strchr(o.node, '\t'))
		err_die(HAZ_USAGE, "node name \"%s\": not a name", o.node);
	if ((st = load_limits(&o)) != HAZ_OK)
		return nd_finish(st);
	if (o.interval > 0)
		loop(&o);
	batch = json_array();
	st = probe(&o);
	write_batch();
	if (st == HAZ_OK && o.textfile)
		st = write_textfile(o.textfile);
	json_decref(batch);
	gf_free(&facts);
	return nd_finish(st);
}
