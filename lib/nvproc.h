/* nvproc (np_): what the kernel says about NVIDIA GPUs, under a root directory
 * given by the caller (/proc, /sys; a fake tree in tests).
 *
 *   PROCROOT/driver/nvidia/gpus/<bus>/information
 *       "Device Minor:", "Bus Location:", "GPU UUID:" lines: the minor
 *       number (the N of /dev/nvidiaN) of each GPU, for when
 *       `nvidia-smi -q -x` cannot say
 *   SYSROOT/bus/pci/devices/<bus>/numa_node
 *       the GPU's NUMA node (-1: none)
 *   SYSROOT/bus/pci/devices/<bus>/class
 *       the GPU's PCI class ("0x030200"): whether it is a 3D (compute) or
 *       a VGA (graphics) controller
 *   SYSROOT/bus/pci/devices/<bus>, resolved
 *       its PCIe root complex: the "pci<domain>:<bus>" component of the
 *       real path, e.g. /sys/devices/pci0000:00/0000:00:06.0 gives
 *       "pci0000:00", as Kubernetes derives resource.kubernetes.io/pcieRoot
 *   SYSROOT/class/dmi/id/product_name
 *       the machine's name
 *
 * <bus> is the PCI address as sysfs spells it: a 4-digit domain, lower
 * case ("0000:00:06.0"); np_bus_id turns nvidia-smi's
 * "00000000:00:06.0" into it. Nothing here is fatal: what cannot be read
 * is said (once, by the caller's choice) and comes back unknown. */
#ifndef HAZ_NVPROC_H
#define HAZ_NVPROC_H

#include <stddef.h>

enum {
	NP_BUS_SIZE = 24,
	NP_UUID_SIZE = 80,
	NP_NAME_SIZE = 128,
	NP_CLASS_SIZE = 16,
};

struct np_gpu {
	char bus[NP_BUS_SIZE];   /* "Bus Location:", as sysfs spells it */
	char uuid[NP_UUID_SIZE]; /* "GPU UUID:" */
	int minor;               /* "Device Minor:" */
};

struct np_info {
	struct np_gpu *gpus; /* owned, sorted by bus */
	size_t n;
};

/* np_bus_id writes bus id s ("00000000:00:06.0", any case, a domain of
 * up to 8 hex digits or none) as sysfs spells it into out
 * (NP_BUS_SIZE bytes). Returns 0, or -1 when s is not a PCI address. */
int np_bus_id(const char *s, char *out);

/* np_read_info reads every GPU's information file under procroot into
 * *info (zeroed first). Returns 0, or -1 when the directory cannot be
 * read (the message, "PATH: why", into why: 256 bytes). A file that
 * cannot be read or parsed is warned, naming it and its line, and left
 * out. */
int np_read_info(const char *procroot, struct np_info *info, char *why);

/* np_find returns the GPU of info with that UUID, or with bus id bus
 * (sysfs spelling) when uuid is NULL or unknown; NULL when none. */
const struct np_gpu *np_find(const struct np_info *info, const char *uuid,
	const char *bus);

void np_free(struct np_info *info);

/* np_numa_node reads the NUMA node of PCI device bus. Returns it (-1
 * when the kernel says none), or -2 with why (256 bytes) filled. */
int np_numa_node(const char *sysroot, const char *bus, char *why);

/* np_pci_class writes the PCI class of device bus, as sysfs prints it
 * ("0x030200": a 3D controller, as data-centre GPUs are; "0x030000" a
 * VGA one), into out (NP_CLASS_SIZE bytes). Returns 0, or -1 with why
 * (256 bytes) filled. */
int np_pci_class(const char *sysroot, const char *bus, char *out, char *why);

/* np_pcie_root writes the PCIe root of PCI device bus into out (32
 * bytes). Returns 0, or -1 with why (256 bytes) filled. */
int np_pcie_root(const char *sysroot, const char *bus, char *out, char *why);

/* np_machine writes the machine's DMI product name, trimmed, into out
 * (NP_NAME_SIZE bytes). Returns 0, or -1 with why (256 bytes) filled
 * (also for an empty name, or one that is not text). */
int np_machine(const char *sysroot, char *out, char *why);

#endif
