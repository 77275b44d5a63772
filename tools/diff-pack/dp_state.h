/* dp_state: what a pod's tree holds where packs changed it, so that a
 * later pack carries only what differs (k8shazgpu vllm sync). A state
 * file is one line of JSON,
 *
 *	{"kind":"pack-state","version":1,"base":SHA,
 *	 "files":{PATH:{"mode":"100644"|"100755"|"120000","blob":ID}|null}}
 *
 * PATH as in a pack (vllm/ for the package directory), ID the git blob
 * id of its content (of a link, its target), null where a pack deleted
 * it. diff-pack -u -S keeps it; diff-pack --since reads it.
 *
 * Threads: no state of its own: any thread. */
#ifndef HAZ_DP_STATE_H
#define HAZ_DP_STATE_H

#include <jansson.h>
#include <stddef.h>

/* dp_state_blob writes the git blob id of data[0..len) to out. */
void dp_state_blob(const void *data, size_t len, char out[41]);

/* dp_state_load reads file: its "files" object (new reference) with
 * *base its base (malloc'd); a missing file is an empty state (*base
 * NULL). NULL, said on stderr, for a file that is no state. */
json_t *dp_state_load(const char *file, char **base);

/* dp_state_entry: files' entry for path: 1 with *mode and *blob (both
 * NULL where a pack deleted it), 0 when the state has none, -1 when it
 * is malformed. */
int dp_state_entry(json_t *files, const char *path, const char **mode,
	const char **blob);

/* dp_state_save writes the state of base and files to file, through a
 * temporary name and rename(2): 0, or -1 said on stderr. */
int dp_state_save(const char *file, const char *base, json_t *files);

#endif
