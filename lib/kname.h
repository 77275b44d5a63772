/* kname (kn_): what Kubernetes accepts as a name or a label value, and the one
 * sanitiser that turns any string into a label value.
 *
 * kn_label_value does to a string what NVIDIA GPU feature discovery does
 * to a product name for nvidia.com/gpu.product, then makes sure of the
 * rest of the rules: each space becomes '-'; '(' and ')' are dropped;
 * every other byte outside [A-Za-z0-9._-] is dropped too (so a character
 * of several UTF-8 bytes goes whole); the result is cut to 63 bytes; and
 * characters other than letters and digits are trimmed from both ends.
 * "NVIDIA A100 (PCIe)" gives "NVIDIA-A100-PCIe". The result may be empty.
 * Every label value, and every part of a label, annotation or resource
 * key, that is built from input goes through it. */
#ifndef HAZ_KNAME_H
#define HAZ_KNAME_H

#include <stddef.h>

enum {
	KN_LABEL_MAX = 63,      /* label value, name part of a key, DNS label */
	KN_SUBDOMAIN_MAX = 253, /* DNS subdomain: node and object names */
};

/* kn_label_value writes the label value s gives (see above) into buf,
 * which holds KN_LABEL_MAX + 1 bytes, and returns buf. s NULL gives "". */
char *kn_label_value(const char *s, char *buf);

/* kn_is_label_value: s matches (([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?
 * and has at most 63 bytes. */
int kn_is_label_value(const char *s);

/* kn_is_dns_label: s is an RFC 1123 label, [a-z0-9]([-a-z0-9]*[a-z0-9])?,
 * of 1 to 63 bytes (ResourceSlice device names, namespaces). */
int kn_is_dns_label(const char *s);

/* kn_is_dns_subdomain: s is RFC 1123 labels joined by '.', of 1 to max
 * bytes (node names, DRA driver names; max is at most 253), as the API
 * server checks it: its labels are not held to 63 bytes. */
int kn_is_dns_subdomain(const char *s, size_t max);

#endif
