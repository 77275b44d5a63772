/* cuda-query: what CUDA itself sees, through the driver's libcuda.
 *
 * usage: cuda-query [-l library]
 *
 * Loads the CUDA driver library (-l PATH, default "libcuda.so.1" found
 * the loader's way: LD_LIBRARY_PATH, the ld cache, the default paths),
 * initialises it and writes one NDJSON record for the driver,
 *
 *   {"kind":"cuda","library":"libcuda.so.1","driver_version":"13.0",
 *    "devices":1}
 *
 * then one per device CUDA enumerates, in CUDA's order,
 *
 *   {"kind":"cuda_device","ordinal":0,"name":"NVIDIA H200",
 *    "uuid":"GPU-ef3dd380-...","compute_cap":"9.0","memory_mib":143771,
 *    "pci_bus_id":"0000:00:06.0"}
 *
 * It is the device query a container runs to show that the devices and
 * libraries it was given are enough for CUDA: it needs nothing but the C
 * library and libcuda, no CUDA toolkit, so it runs in an image of a few
 * files. CUDA_VISIBLE_DEVICES applies as it does to any CUDA program.
 *
 * Exit: 0 CUDA saw at least one device; 1 the library cannot be loaded,
 * lacks a function, or a call failed (each named with CUDA's error name),
 * or CUDA sees no device; 2 usage. */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "err.h"

#define USAGE "usage: cuda-query [-l library]\n"

/* The driver API's own types, as cuda.h declares them (ABI-stable). */
typedef int CUresult;
typedef int CUdevice;
typedef struct {
	unsigned char bytes[16];
} CUuuid;

enum {
	CUDA_SUCCESS = 0,
	ATTR_PCI_BUS_ID = 33,
	ATTR_PCI_DEVICE_ID = 34,
	ATTR_PCI_DOMAIN_ID = 50,
	ATTR_CC_MAJOR = 75,
	ATTR_CC_MINOR = 76,
};

static struct {
	CUresult (*init)(unsigned);
	CUresult (*driver_version)(int *);
	CUresult (*count)(int *);
	CUresult (*get)(CUdevice *, int);
	CUresult (*name)(char *, int, CUdevice);
	CUresult (*uuid)(CUuuid *, CUdevice);
	CUresult (*mem)(size_t *, CUdevice);
	CUresult (*attr)(int *, int, CUdevice);
	CUresult (*error_name)(CUresult, const char **);
} cu;

/* sym binds *fp to the library's function name, or dies naming it. */
static void
sym(void *lib, const char *lname, void *fp, const char *name)
{
	void *p = dlsym(lib, name);

	if (!p)
		err_die(HAZ_FAIL, "%s: no function %s", lname, name);
	memcpy(fp, &p, sizeof p);
}

static void
load(const char *lname)
{
	void *lib = dlopen(lname, RTLD_NOW | RTLD_LOCAL);

	if (!lib)
		err_die(HAZ_FAIL, "cannot load the CUDA driver library: %s",
			dlerror());
	sym(lib, lname, &cu.init, "cuInit");
	sym(lib, lname, &cu.driver_version, "cuDriverGetVersion");
	sym(lib, lname, &cu.count, "cuDeviceGetCount");
	sym(lib, lname, &cu.get, "cuDeviceGet");
	sym(lib, lname, &cu.name, "cuDeviceGetName");
	sym(lib, lname, &cu.uuid, "cuDeviceGetUuid");
	sym(lib, lname, &cu.mem, "cuDeviceTotalMem_v2");
	sym(lib, lname, &cu.attr, "cuDeviceGetAttribute");
	sym(lib, lname, &cu.error_name, "cuGetErrorName");
	/* the library stays loaded until exit: CUDA keeps state in it */
}

/* check dies when a driver call failed, naming the call and the error. */
static void
check(CUresult r, const char *call)
{
	const char *name = NULL;

	if (r == CUDA_SUCCESS)
		return;
	if (cu.error_name(r, &name) != CUDA_SUCCESS || !name)
		name = "an unknown error";
	err_die(HAZ_FAIL, "%s: %s (%d)", call, name, r);
}

/* json_str writes s as a JSON string: quotes, backslashes and control
 * characters escaped (a device name is the driver's text). */
static void
json_str(const char *s)
{
	putchar('"');
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;

		if (c == '"' || c == '\\')
			printf("\\%c", c);
		else if (c < 0x20)
			printf("\\u%04x", c);
		else
			putchar(c);
	}
	putchar('"');
}

static void
device(int ordinal)
{
	CUdevice d;
	CUuuid u;
	char name[256];
	size_t mem;
	int major, minor, dom, bus, dev;
	const unsigned char *b = u.bytes;

	check(cu.get(&d, ordinal), "cuDeviceGet");
	check(cu.name(name, sizeof name, d), "cuDeviceGetName");
	name[sizeof name - 1] = '\0';
	check(cu.uuid(&u, d), "cuDeviceGetUuid");
	check(cu.mem(&mem, d), "cuDeviceTotalMem");
	check(cu.attr(&major, ATTR_CC_MAJOR, d), "cuDeviceGetAttribute");
	check(cu.attr(&minor, ATTR_CC_MINOR, d), "cuDeviceGetAttribute");
	check(cu.attr(&dom, ATTR_PCI_DOMAIN_ID, d), "cuDeviceGetAttribute");
	check(cu.attr(&bus, ATTR_PCI_BUS_ID, d), "cuDeviceGetAttribute");
	check(cu.attr(&dev, ATTR_PCI_DEVICE_ID, d), "cuDeviceGetAttribute");
	printf("{\"kind\":\"cuda_device\",\"ordinal\":%d,\"name\":", ordinal);
	json_str(name);
	printf(",\"uuid\":\"GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-"
	       "%02x%02x%02x%02x%02x%02x\"",
		b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9],
		b[10], b[11], b[12], b[13], b[14], b[15]);
	printf(",\"compute_cap\":\"%d.%d\",\"memory_mib\":%zu,"
	       "\"pci_bus_id\":\"%04x:%02x:%02x.0\"}\n",
		major, minor, mem >> 20, (unsigned)dom & 0xffff,
		(unsigned)bus & 0xff, (unsigned)dev & 0x1f);
}

int
main(int argc, char **argv)
{
	const char *lname = "libcuda.so.1";
	int c, version, n, i;

	err_init(argv[0]);
	while ((c = getopt(argc, argv, "l:hV")) != -1) {
		switch (c) {
		case 'l': lname = optarg; break;
		case 'h':
			fputs(USAGE, stdout);
			puts("  -l PATH   the CUDA driver library (default "
			     "libcuda.so.1)\n"
			     "  -h, -V    help, version");
			return 0;
		case 'V': puts("cuda-query " HAZ_VERSION); return 0;
		default: fputs(USAGE, stderr); return HAZ_USAGE;
		}
	}
	if (optind != argc) {
		fputs(USAGE, stderr);
		return HAZ_USAGE;
	}
	load(lname);
	check(cu.init(0), "cuInit");
	check(cu.driver_version(&version), "cuDriverGetVersion");
	check(cu.count(&n), "cuDeviceGetCount");
	printf("{\"kind\":\"cuda\",\"library\":");
	json_str(lname);
	printf(",\"driver_version\":\"%d.%d\",\"devices\":%d}\n",
		version / 1000, version % 1000 / 10, n);
	for (i = 0; i < n; i++)
		device(i);
	if (fflush(stdout) == EOF || ferror(stdout))
		err_die(HAZ_FAIL, "stdout: write error");
	if (n == 0)
		err_die(HAZ_FAIL, "CUDA sees no device");
	return 0;
}
