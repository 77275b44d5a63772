/* alert_url (au_): where gpu-alert finds its webhook URL.
 *
 * Either key KEY of Secret NAMESPACE/NAME, read through the API server
 * when an alert is to be sent and then kept for ttl seconds, or the
 * first line of a file (for hosts without a cluster), read for every
 * alert. Leading and trailing white space is dropped (`echo URL |
 * kubectl create secret ... --from-file` leaves a newline). A source
 * that fails is tried again at the next alert.
 *
 * The URL is a secret: it is never printed. Messages name the source
 * ("secret canhazgpu-system/alert-webhook key webhook-url", "file
 * /etc/gpu-alert/url") instead. */
#ifndef HAZ_ALERT_URL_H
#define HAZ_ALERT_URL_H

#include <stddef.h>

#include "kube.h"

struct alert_url;

/* au_secret reads key of Secret ns/name through k (borrowed; used by one
 * thread at a time). */
struct alert_url *au_secret(struct kube *k, const char *ns, const char *name,
	const char *key, double ttl);
struct alert_url *au_file(const char *path);
void au_free(struct alert_url *u);

/* au_name names the source in messages. */
const char *au_name(const struct alert_url *u);

/* au_get returns the URL (malloc'd; the caller frees it), or NULL with
 * why (n bytes) saying what is wrong, naming the source, and *temporary
 * 1 when the API server could not be reached (worth another try soon),
 * 0 when the Secret, its key or the file is missing or unusable. now is
 * monotonic seconds. */
char *au_get(struct alert_url *u, double now, int *temporary, char *why,
	size_t n);

#endif
