/* dp_state: the state file of diff-pack -u -S and --since, see dp_state.h. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dp_state.h"
#include "err.h"
#include "jbuf.h"
#include "sha1.h"

void
dp_state_blob(const void *data, size_t len, char out[41])
{
	char h[32];
	int n = snprintf(h, sizeof h, "blob %zu", len) + 1;
	unsigned char *b = emalloc((size_t)n + len + 1);

	memcpy(b, h, (size_t)n);
	if (len)
		memcpy(b + n, data, len);
	sha1_hex(b, (size_t)n + len, out);
	free(b);
}

json_t *
dp_state_load(const char *file, char **base)
{
	json_error_t je;
	json_t *j, *files;
	const char *b, *kind;

	*base = NULL;
	if (access(file, F_OK) < 0 && errno == ENOENT)
		return json_object();
	if (!(j = json_load_file(file, 0, &je))) {
		err_warn("%s: not a pack state: %s", file, je.text);
		return NULL;
	}
	files = json_object_get(j, "files");
	b = json_string_value(json_object_get(j, "base"));
	kind = json_string_value(json_object_get(j, "kind"));
	if (!json_is_object(files) || !b || !kind ||
		strcmp(kind, "pack-state")) {
		err_warn("%s: not a pack state (kind, base, files)", file);
		json_decref(j);
		return NULL;
	}
	*base = estrdup(b);
	json_incref(files);
	json_decref(j);
	return files;
}

int
dp_state_entry(json_t *files, const char *path, const char **mode,
	const char **blob)
{
	json_t *v = json_object_get(files, path);

	*mode = *blob = NULL;
	if (!v)
		return 0;
	if (json_is_null(v))
		return 1;
	*mode = json_string_value(json_object_get(v, "mode"));
	*blob = json_string_value(json_object_get(v, "blob"));
	return *mode && *blob && strlen(*blob) == 40 ? 1 : -1;
}

int
dp_state_save(const char *file, const char *base, json_t *files)
{
	json_t *j = json_pack("{s:s, s:i, s:s, s:O}", "kind", "pack-state",
		"version", 1, "base", base, "files", files);
	char *tmp = easprintf("%s.tmp", file), *line = jb_dumps(j);
	FILE *f = fopen(tmp, "w");
	int bad = !f || fputs(line, f) < 0 || fputc('\n', f) < 0;

	if (f && fclose(f))
		bad = 1;
	if (bad || rename(tmp, file) < 0) {
		err_warn("%s:", file);
		unlink(tmp);
		bad = 1;
	}
	free(line);
	free(tmp);
	json_decref(j);
	return bad ? -1 : 0;
}
