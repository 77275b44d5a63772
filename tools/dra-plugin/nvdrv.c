/* nvdrv: the driver files of a node for CDI specs (see nvdrv.h). */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "err.h"
#include "nvdrv.h"

/* The toolkit's compute and utility libraries, each with the SONAME link
 * its create-symlinks hook makes (NULL: the SONAME is the versioned name
 * itself). */
static const struct {
	const char *name, *soname;
	int needed; /* said so when missing */
} libs[] = {
	{"libcuda.so", "libcuda.so.1", 1},
	{"libcudadebugger.so", "libcudadebugger.so.1", 0},
	{"libnvidia-ml.so", "libnvidia-ml.so.1", 1},
	{"libnvidia-cfg.so", "libnvidia-cfg.so.1", 0},
	{"libnvidia-nscq.so", NULL, 0},
	{"libnvidia-opencl.so", "libnvidia-opencl.so.1", 0},
	{"libnvidia-gpucomp.so", NULL, 0},
	{"libnvidia-ptxjitcompiler.so", "libnvidia-ptxjitcompiler.so.1", 0},
	{"libnvidia-allocator.so", "libnvidia-allocator.so.1", 0},
	{"libnvidia-nvvm.so", "libnvidia-nvvm.so.4", 0},
	{"libnvidia-pkcs11.so", NULL, 0},
	{"libnvidia-pkcs11-openssl3.so", NULL, 0},
};

static const char *const lib_dirs[] = {"/usr/lib64",
	"/usr/lib/x86_64-linux-gnu", "/usr/lib/aarch64-linux-gnu", "/lib64",
	"/lib/x86_64-linux-gnu", "/usr/lib", "/lib", "/usr/local/nvidia/lib64",
	NULL};

static const char *const bin_dirs[] = {"/usr/bin", "/usr/sbin", "/bin", "/sbin",
	"/usr/local/bin", "/usr/local/sbin", "/usr/local/nvidia/bin", NULL};

static const char *const bins[] = {"nvidia-smi", "nvidia-debugdump",
	"nvidia-persistenced", "nvidia-cuda-mps-control",
	"nvidia-cuda-mps-server", NULL};

#define HOOK_NAME "nvidia-cdi-hook"

char *
nvd_join(const char *root, const char *path)
{
	size_t n = strlen(root);

	while (n > 0 && root[n - 1] == '/')
		n--;
	return easprintf("%.*s%s", (int)n, root, path);
}

int
nvd_version_ok(const char *v)
{
	if (!v || *v < '0' || *v > '9')
		return 0;
	return strspn(v, "0123456789.") == strlen(v);
}

char *
nvd_version(const char *procroot, char *why, size_t n)
{
	char *path = nvd_join(procroot, "/driver/nvidia/version");
	char line[512], *tok, *save = NULL, *v = NULL;
	FILE *f = fopen(path, "r");

	if (!f) {
		snprintf(why, n, "%s: %s", path, strerror(errno));
		free(path);
		return NULL;
	}
	if (fgets(line, sizeof line, f)) {
		for (tok = strtok_r(line, " \t\r\n", &save); tok && !v;
			tok = strtok_r(NULL, " \t\r\n", &save))
			if (nvd_version_ok(tok) && strchr(tok, '.'))
				v = estrdup(tok);
	}
	fclose(f);
	if (!v)
		snprintf(why, n, "%s: line 1: no driver version in it", path);
	free(path);
	return v;
}

int
nvd_cap_minor(const char *path, long *minor, char *why, size_t n)
{
	FILE *f = fopen(path, "r");
	char *line = NULL, *val, *end;
	size_t cap = 0;
	ssize_t len;
	int lineno = 0, found = 0;

	if (!f) {
		snprintf(why, n, "%s: %s", path, strerror(errno));
		return -1;
	}
	while (!found && (len = getline(&line, &cap, f)) >= 0) {
		lineno++;
		line[strcspn(line, "\r\n")] = '\0';
		if (!*line)
			continue;
		if (!(val = strchr(line, ':'))) {
			snprintf(why, n,
				"%s:%d: not a \"Key: value\" line: %.64s", path,
				lineno, line);
			goto bad;
		}
		if (strncmp(line, "DeviceFileMinor:", 16) != 0)
			continue;
		val += strspn(val + 1, " \t") + 1;
		errno = 0;
		*minor = strtol(val, &end, 10);
		end += strspn(end, " \t");
		if (errno || end == val || *end || *minor < 0) {
			snprintf(why, n,
				"%s:%d: DeviceFileMinor is not a number: %.64s",
				path, lineno, val);
			goto bad;
		}
		found = 1;
	}
	if (!found)
		snprintf(why, n, "%s: no DeviceFileMinor line", path);
	free(line);
	fclose(f);
	return found ? 0 : -1;
bad:
	free(line);
	fclose(f);
	return -1;
}

/* ---------------------------------------------------------------- scan */

struct scan {
	const char *root;
	json_t *mounts, *notes, *dirs, *links;
};

static void
note(struct scan *s, json_t *text)
{
	err_warn("%s", json_string_value(text));
	json_array_append_new(s->notes, text);
}

/* mount adds a bind mount of rel (below the root) with options opts. */
static void
mount(struct scan *s, const char *rel, const char *opts)
{
	char *host = nvd_join(s->root, rel), *o = estrdup(opts), *save = NULL;
	json_t *options = json_array();
	char *t;

	for (t = strtok_r(o, ",", &save); t; t = strtok_r(NULL, ",", &save))
		json_array_append_new(options, json_string(t));
	json_array_append_new(s->mounts,
		json_pack("{s:s, s:s, s:o}", "hostPath", host, "containerPath",
			rel, "options", options));
	free(o);
	free(host);
}

/* find returns the first dir/name of dirs under the root that is a
 * regular file (malloc'd, below the root), or NULL; a dangling symlink or
 * other non-file met on the way is noted. */
static char *
find(struct scan *s, const char *const *dirs, const char *name)
{
	struct stat st;
	char *rel, *host;

	for (; *dirs; dirs++) {
		rel = easprintf("%s/%s", *dirs, name);
		host = nvd_join(s->root, rel);
		if (lstat(host, &st) == 0) {
			if (stat(host, &st) < 0)
				note(s,
					json_sprintf("%s: a dangling symlink, "
						     "not mounted",
						host));
			else if (!S_ISREG(st.st_mode))
				note(s,
					json_sprintf("%s: not a regular file, "
						     "not mounted",
						host));
			else {
				free(host);
				return rel;
			}
		}
		free(host);
		free(rel);
	}
	return NULL;
}

static int
add_unique(json_t *a, const char *s)
{
	size_t i;
	json_t *e;

	json_array_foreach(a, i, e) {
		if (strcmp(json_string_value(e), s) == 0)
			return 0;
	}
	json_array_append_new(a, json_string(s));
	return 1;
}

/* scan_libs mounts the libraries; returns how many. The names of needed
 * ones not found go into missing. */
static int
scan_libs(struct scan *s, const char *version, json_t *missing)
{
	char *name, *rel, *dir;
	size_t i;
	int found = 0;

	for (i = 0; i < sizeof libs / sizeof libs[0]; i++) {
		name = easprintf("%s.%s", libs[i].name, version);
		rel = find(s, lib_dirs, name);
		if (!rel) {
			if (libs[i].needed)
				json_array_append_new(missing,
					json_string(name));
			free(name);
			continue;
		}
		found++;
		mount(s, rel, "ro,nosuid,nodev,bind");
		dir = estrdup(rel);
		dir[strrchr(dir, '/') - dir] = '\0';
		add_unique(s->dirs, dir);
		if (libs[i].soname)
			json_array_append_new(s->links,
				json_sprintf("%s::%s/%s", name, dir,
					libs[i].soname));
		if (strcmp(libs[i].name, "libcuda.so") == 0)
			json_array_append_new(s->links,
				json_sprintf("libcuda.so.1::%s/libcuda.so",
					dir));
		free(dir);
		free(rel);
		free(name);
	}
	return found;
}

static int
by_string(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* scan_firmware mounts <root>/lib/firmware/nvidia/<version>/gsp*.bin. */
static void
scan_firmware(struct scan *s, const char *version)
{
	char *rel = easprintf("/lib/firmware/nvidia/%s", version);
	char *dir = nvd_join(s->root, rel), *names[64], *f, *host;
	struct dirent *de;
	struct stat st;
	size_t n = 0, i, len;
	DIR *d = opendir(dir);

	while (d && (de = readdir(d)) && n < sizeof names / sizeof names[0]) {
		len = strlen(de->d_name);
		if (strncmp(de->d_name, "gsp", 3) == 0 && len > 7 &&
			strcmp(de->d_name + len - 4, ".bin") == 0)
			names[n++] = estrdup(de->d_name);
	}
	if (d)
		closedir(d);
	qsort(names, n, sizeof names[0], by_string);
	for (i = 0; i < n; i++) {
		f = easprintf("%s/%s", rel, names[i]);
		host = nvd_join(s->root, f);
		if (stat(host, &st) == 0 && S_ISREG(st.st_mode))
			mount(s, f, "ro,nosuid,nodev,bind");
		else
			note(s,
				json_sprintf("%s: not a regular file, not "
					     "mounted",
					host));
		free(host);
		free(f);
		free(names[i]);
	}
	free(dir);
	free(rel);
}

/* exists says whether rel is there under the root (a dangling symlink
 * is not). */
static int
exists(struct scan *s, const char *rel)
{
	char *host = nvd_join(s->root, rel);
	struct stat st;
	int ok = stat(host, &st) == 0;

	free(host);
	return ok;
}

/* hook_path returns the hook binary as the runtime runs it (malloc'd),
 * or NULL, noted. */
static char *
hook_path(struct scan *s, const char *hook)
{
	struct stat st;
	char *rel, *host;

	if (hook) {
		if (stat(hook, &st) == 0 && S_ISREG(st.st_mode) &&
			access(hook, X_OK) == 0)
			return estrdup(hook);
		note(s,
			json_sprintf("%s: %s; no hooks", hook,
				stat(hook, &st) < 0
					? strerror(errno)
					: "not an executable file"));
		return NULL;
	}
	if ((rel = find(s, bin_dirs, HOOK_NAME))) {
		host = nvd_join(s->root, rel);
		free(rel);
		return host;
	}
	note(s,
		json_sprintf("no " HOOK_NAME " in the bin directories under "
			     "%s: no hooks (no libcuda.so symlinks, no ld "
			     "cache update)",
			s->root));
	return NULL;
}

static json_t *
hook_of(const char *path, json_t *args)
{
	return json_pack("{s:s, s:s, s:o}", "hookName", "createContainer",
		"path", path, "args", args);
}

json_t *
nvd_scan(const char *root, const char *version, const char *hook)
{
	struct scan s = {root, json_array(), json_array(), json_array(),
		json_array()};
	json_t *hooks = json_array(), *missing = json_array(), *args, *e;
	char *rel, *hp;
	size_t i;
	int nlibs = scan_libs(&s, version, missing);

	for (i = 0; bins[i]; i++) {
		if ((rel = find(&s, bin_dirs, bins[i]))) {
			mount(&s, rel, "ro,nosuid,nodev,bind");
			free(rel);
		}
	}
	if (exists(&s, "/run/nvidia-persistenced/socket"))
		mount(&s, "/run/nvidia-persistenced/socket",
			"ro,nosuid,nodev,bind,noexec");
	if (exists(&s, "/tmp/nvidia-mps"))
		mount(&s, "/tmp/nvidia-mps", "rw,nosuid,nodev,bind");
	scan_firmware(&s, version);
	if (nlibs == 0)
		note(&s,
			json_sprintf("none: no library of driver %s under "
				     "%s, so none is mounted: the container "
				     "has the driver only if the node's "
				     "runtime adds it",
				version, root));
	json_array_foreach(nlibs > 0 ? missing : NULL, i, e)
		note(&s,
			json_sprintf("%s: not found in the library "
				     "directories under %s",
				json_string_value(e), root));
	json_decref(missing);
	if (nlibs > 0 && (hp = hook_path(&s, hook))) {
		args = json_pack("[s, s]", HOOK_NAME, "create-symlinks");
		json_array_foreach(s.links, i, e) {
			json_array_append_new(args, json_string("--link"));
			json_array_append(args, e);
		}
		json_array_append_new(hooks, hook_of(hp, args));
		json_array_append_new(hooks,
			hook_of(hp,
				json_pack("[s, s, s+]", HOOK_NAME,
					"enable-cuda-compat",
					"--host-driver-version=", version)));
		args = json_pack("[s, s]", HOOK_NAME, "update-ldcache");
		json_array_foreach(s.dirs, i, e) {
			json_array_append_new(args, json_string("--folder"));
			json_array_append(args, e);
		}
		json_array_append_new(hooks, hook_of(hp, args));
		free(hp);
	}
	json_decref(s.dirs);
	json_decref(s.links);
	return json_pack("{s:s, s:s, s:i, s:o, s:o, s:o}", "version", version,
		"root", root, "libraries", nlibs, "mounts", s.mounts, "hooks",
		hooks, "notes", s.notes);
}
