/* nvproc: GPU facts from /proc/driver/nvidia and sysfs (see nvproc.h). */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "err.h"
#include "nvproc.h"
#include "smi.h"
#include "smi_int.h"

enum { WHY_SIZE = 256, SMALL_FILE = 8192 };

/* hex reads 1..max hex digits at *p into *v. Returns 0 or -1. */
static int
hex(const char **p, size_t max, unsigned *v)
{
	size_t n = strspn(*p, "0123456789abcdefABCDEF");

	if (n < 1 || n > max)
		return -1;
	*v = (unsigned)strtoul(*p, NULL, 16);
	*p += n;
	return 0;
}

int
np_bus_id(const char *s, char *out)
{
	unsigned dom = 0, bus, dev, fn;
	const char *p = s;

	if (strchr(s, ':') != strrchr(s, ':') &&
		(hex(&p, 8, &dom) < 0 || *p++ != ':'))
		return -1;
	if (hex(&p, 2, &bus) < 0 || *p++ != ':' || hex(&p, 2, &dev) < 0 ||
		*p++ != '.' || !(*p >= '0' && *p <= '7') || p[1])
		return -1;
	fn = (unsigned)(*p - '0');
	if (dom > 0xffff || dev > 0x1f)
		return -1;
	snprintf(out, NP_BUS_SIZE, "%04x:%02x:%02x.%x", dom, bus, dev, fn);
	return 0;
}

/* read_small reads the file at path (at most size - 1 bytes) into buf,
 * NUL-terminated. Returns its length, or -1 with why filled. */
static long
read_small(const char *path, char *buf, size_t size, char *why)
{
	FILE *f = fopen(path, "r");
	size_t n;

	if (!f) {
		snprintf(why, WHY_SIZE, "%s: %s", path, strerror(errno));
		return -1;
	}
	n = fread(buf, 1, size - 1, f);
	if (ferror(f)) {
		snprintf(why, WHY_SIZE, "%s: read error: %s", path,
			strerror(errno));
		fclose(f);
		return -1;
	}
	fclose(f);
	buf[n] = '\0';
	if (n == size - 1 || memchr(buf, '\0', n)) {
		snprintf(why, WHY_SIZE, "%s: not a file the kernel writes",
			path);
		return -1;
	}
	return (long)n;
}

/* ---- /proc/driver/nvidia/gpus/<bus>/information ---- */

/* info_value handles line no of path, "name: value"; fills g. Returns 0,
 * or -1 when the line does not parse (warned). */
static int
info_line(const char *path, long no, char *line, struct np_gpu *g)
{
	char *colon = strchr(line, ':'), *v, *end, shown[64];
	long n;

	if (!colon) {
		err_warn("%s:%ld:1: not a \"name: value\" line: \"%s\"", path,
			no, smi_show(line, shown));
		return -1;
	}
	*colon = '\0';
	v = smi_trim(colon + 1);
	if (strcmp(smi_trim(line), "Device Minor") == 0) {
		errno = 0;
		n = strtol(v, &end, 10);
		if (!*v || *end || errno || n < 0 || n > INT_MAX ||
			strspn(v, "0123456789") != strlen(v)) {
			err_warn("%s:%ld:%ld: Device Minor: \"%s\" is not a "
				 "number",
				path, no, (long)(v - line) + 1,
				smi_show(v, shown));
			return -1;
		}
		g->minor = (int)n;
	} else if (strcmp(line, "Bus Location") == 0) {
		if (np_bus_id(v, g->bus) < 0) {
			err_warn("%s:%ld:%ld: Bus Location: \"%s\" is not a "
				 "PCI address",
				path, no, (long)(v - line) + 1,
				smi_show(v, shown));
			return -1;
		}
	} else if (strcmp(line, "GPU UUID") == 0) {
		if (strlen(v) >= NP_UUID_SIZE || smi_not_text(v, strlen(v)) ||
			!*v) {
			err_warn("%s:%ld:%ld: GPU UUID: \"%s\" is not a UUID",
				path, no, (long)(v - line) + 1,
				smi_show(v, shown));
			return -1;
		}
		snprintf(g->uuid, sizeof g->uuid, "%s", v);
	}
	return 0;
}

/* info_file reads one information file into *g. Returns 0, or -1 when it
 * cannot be read or parsed (warned). */
static int
info_file(const char *path, struct np_gpu *g)
{
	char buf[SMALL_FILE], why[WHY_SIZE], *line, *next;
	long no = 0;
	int bad = 0;

	memset(g, 0, sizeof *g);
	g->minor = -1;
	if (read_small(path, buf, sizeof buf, why) < 0) {
		err_warn("%s", why);
		return -1;
	}
	for (line = buf; *line; line = next) {
		next = line + strcspn(line, "\n");
		if (*next)
			*next++ = '\0';
		no++;
		if (!smi_blank(line) && info_line(path, no, line, g) < 0)
			bad = 1;
	}
	if (!bad && (g->minor < 0 || !g->bus[0])) {
		err_warn("%s: no \"%s\" line", path,
			g->minor < 0 ? "Device Minor" : "Bus Location");
		bad = 1;
	}
	return bad ? -1 : 0;
}

static int
by_bus(const void *a, const void *b)
{
	return strcmp(((const struct np_gpu *)a)->bus,
		((const struct np_gpu *)b)->bus);
}

int
np_read_info(const char *procroot, struct np_info *info, char *why)
{
	char *dir = easprintf("%s/driver/nvidia/gpus", procroot), *path;
	size_t cap = 0;
	struct dirent *e;
	struct np_gpu g;
	DIR *d;

	memset(info, 0, sizeof *info);
	if (!(d = opendir(dir))) {
		snprintf(why, WHY_SIZE, "%s: %s", dir, strerror(errno));
		free(dir);
		return -1;
	}
	while ((e = readdir(d))) {
		if (e->d_name[0] == '.' || info->n >= 4096)
			continue;
		path = easprintf("%s/%s/information", dir, e->d_name);
		if (info_file(path, &g) == 0) {
			info->gpus = smi_grow(info->gpus, info->n, &cap,
				sizeof *info->gpus);
			info->gpus[info->n++] = g;
		}
		free(path);
	}
	closedir(d);
	free(dir);
	if (info->n)
		qsort(info->gpus, info->n, sizeof *info->gpus, by_bus);
	return 0;
}

const struct np_gpu *
np_find(const struct np_info *info, const char *uuid, const char *bus)
{
	size_t i;

	for (i = 0; uuid && i < info->n; i++)
		if (strcmp(info->gpus[i].uuid, uuid) == 0)
			return &info->gpus[i];
	for (i = 0; bus && i < info->n; i++)
		if (strcmp(info->gpus[i].bus, bus) == 0)
			return &info->gpus[i];
	return NULL;
}

void
np_free(struct np_info *info)
{
	free(info->gpus);
	memset(info, 0, sizeof *info);
}

/* ---- sysfs ---- */

int
np_numa_node(const char *sysroot, const char *bus, char *why)
{
	char *path = easprintf("%s/bus/pci/devices/%s/numa_node", sysroot, bus);
	char buf[64], *v, *end;
	long n;

	if (read_small(path, buf, sizeof buf, why) < 0) {
		free(path);
		return -2;
	}
	v = smi_trim(buf);
	v[strcspn(v, "\n")] = '\0';
	errno = 0;
	n = strtol(v, &end, 10);
	if (!*v || *end || errno || n < -1 || n > INT_MAX) {
		snprintf(why, WHY_SIZE, "%s: \"%.20s\" is not a NUMA node",
			path, v);
		free(path);
		return -2;
	}
	free(path);
	return (int)n;
}

int
np_pci_class(const char *sysroot, const char *bus, char *out, char *why)
{
	char *path = easprintf("%s/bus/pci/devices/%s/class", sysroot, bus);
	char buf[64], *v;

	if (read_small(path, buf, sizeof buf, why) < 0) {
		free(path);
		return -1;
	}
	v = smi_trim(buf);
	v[strcspn(v, "\n")] = '\0';
	if (strlen(v) != 8 || strncmp(v, "0x", 2) != 0 ||
		strspn(v + 2, "0123456789abcdefABCDEF") != 6) {
		snprintf(why, WHY_SIZE, "%s: \"%.20s\" is not a PCI class",
			path, v);
		free(path);
		return -1;
	}
	snprintf(out, NP_CLASS_SIZE, "%s", v);
	free(path);
	return 0;
}

/* pcie_root_name: s is "pci" + a domain of 4 or more hex digits + ":" +
 * a bus of 2. */
static int
pcie_root_name(const char *s, size_t n)
{
	size_t d;

	if (n < 10 || strncmp(s, "pci", 3) != 0)
		return 0;
	d = strspn(s + 3, "0123456789abcdef");
	return d >= 4 && 3 + d + 3 == n && s[3 + d] == ':' &&
		strspn(s + 4 + d, "0123456789abcdef") == 2;
}

int
np_pcie_root(const char *sysroot, const char *bus, char *out, char *why)
{
	char *path = easprintf("%s/bus/pci/devices/%s", sysroot, bus);
	char *real = realpath(path, NULL), *p;
	size_t n;

	if (!real) {
		snprintf(why, WHY_SIZE, "%s: %s", path, strerror(errno));
		free(path);
		return -1;
	}
	for (p = real; *p; p += n) {
		p += strspn(p, "/");
		n = strcspn(p, "/");
		if (pcie_root_name(p, n) && n < 32) {
			snprintf(out, 32, "%.*s", (int)n, p);
			free(real);
			free(path);
			return 0;
		}
	}
	snprintf(why, WHY_SIZE, "%s: no pciDDDD:BB in its real path", path);
	free(real);
	free(path);
	return -1;
}

int
np_machine(const char *sysroot, char *out, char *why)
{
	char *path = easprintf("%s/class/dmi/id/product_name", sysroot);
	char buf[SMALL_FILE], *v, *end;
	const char *bad;

	if (read_small(path, buf, sizeof buf, why) < 0) {
		free(path);
		return -1;
	}
	v = buf + strspn(buf, " \t\n");
	end = v + strlen(v);
	while (end > v && strchr(" \t\n", end[-1]))
		*--end = '\0';
	if (!*v)
		bad = "is empty";
	else if (strlen(v) >= NP_NAME_SIZE)
		bad = "is too long";
	else if (!(bad = smi_not_text(v, strlen(v))) && strchr(v, '\t'))
		bad = "holds a tab";
	if (bad) {
		snprintf(why, WHY_SIZE, "%s: the name %s", path, bad);
		free(path);
		return -1;
	}
	snprintf(out, NP_NAME_SIZE, "%s", v);
	free(path);
	return 0;
}
