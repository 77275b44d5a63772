/* jsonpatch: RFC 6902 patches by difference, and their application. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "err.h"
#include "jsonpatch.h"

char *
jp_escape(const char *key)
{
	size_t n = 0;
	const char *p;
	char *out, *q;

	for (p = key; *p; p++)
		n += (*p == '~' || *p == '/') ? 2 : 1;
	out = q = emalloc(n + 1);
	for (p = key; *p; p++) {
		if (*p == '~' || *p == '/') {
			*q++ = '~';
			*q++ = *p == '~' ? '0' : '1';
		} else {
			*q++ = *p;
		}
	}
	*q = '\0';
	return out;
}

/* A JSON Pointer being built: one buffer for the whole walk, grown as
 * needed and cut back after each member, so a walk over a large
 * document allocates nothing per member. */
struct path {
	char *s;
	size_t len, cap;
};

static void
path_grow(struct path *p, size_t more)
{
	if (p->len + more + 1 > p->cap) {
		p->cap = (p->len + more + 1) * 2;
		p->s = erealloc(p->s, p->cap);
	}
}

/* path_push appends "/" and key escaped; returns the length to cut back
 * to. */
static size_t
path_push(struct path *p, const char *key)
{
	size_t was = p->len, n = strlen(key), i;

	path_grow(p, 1 + 2 * n);
	p->s[p->len++] = '/';
	for (i = 0; i < n; i++) {
		if (key[i] == '~' || key[i] == '/') {
			p->s[p->len++] = '~';
			p->s[p->len++] = key[i] == '~' ? '0' : '1';
		} else {
			p->s[p->len++] = key[i];
		}
	}
	p->s[p->len] = '\0';
	return was;
}

static size_t
path_push_index(struct path *p, size_t i)
{
	size_t was = p->len;

	path_grow(p, 24);
	p->len += (size_t)snprintf(p->s + p->len, 24, "/%zu", i);
	return was;
}

static void
path_pop(struct path *p, size_t to)
{
	p->len = to;
	p->s[to] = '\0';
}

/* op appends {"op":name,"path":path[,"value":value]} to ops. */
static void
op(json_t *ops, const char *name, const struct path *path, const json_t *value)
{
	json_t *o = json_object();

	json_object_set_new(o, "op", json_string(name));
	json_object_set_new(o, "path", json_stringn(path->s, path->len));
	if (value)
		json_object_set_new(o, "value", json_deep_copy(value));
	json_array_append_new(ops, o);
}

static void diff(json_t *ops, struct path *path, const json_t *a,
	const json_t *b);

/* diff_objects emits removals before additions and changes, so that a
 * key renamed inside one object reads remove-then-add. */
static void
diff_objects(json_t *ops, struct path *path, const json_t *a, const json_t *b)
{
	const char *key;
	json_t *va, *vb;
	size_t was;

	json_object_foreach((json_t *)a, key, va) {
		if (!json_object_get(b, key)) {
			was = path_push(path, key);
			op(ops, "remove", path, NULL);
			path_pop(path, was);
		}
	}
	json_object_foreach((json_t *)b, key, vb) {
		if ((va = json_object_get(a, key)) == vb)
			continue; /* shared: equal */
		was = path_push(path, key);
		if (!va)
			op(ops, "add", path, vb);
		else
			diff(ops, path, va, vb);
		path_pop(path, was);
	}
}

/* diff walks both documents once: containers are compared member by
 * member (equal ones yield nothing), never whole at every level, which
 * would cost the size of the document times its depth. */
static void
diff(json_t *ops, struct path *path, const json_t *a, const json_t *b)
{
	size_t i, was;

	if (a == b)
		return;
	if (json_is_object(a) && json_is_object(b)) {
		diff_objects(ops, path, a, b);
	} else if (json_is_array(a) && json_is_array(b) &&
		json_array_size(a) == json_array_size(b)) {
		for (i = 0; i < json_array_size(a); i++) {
			was = path_push_index(path, i);
			diff(ops, path, json_array_get(a, i),
				json_array_get(b, i));
			path_pop(path, was);
		}
	} else if (json_is_object(a) || json_is_array(a) ||
		!json_equal((json_t *)a, (json_t *)b)) {
		op(ops, "replace", path, b);
	}
}

json_t *
jp_diff(const json_t *from, const json_t *to)
{
	struct path path = {NULL, 0, 0};
	json_t *ops = json_array();

	path_grow(&path, 64);
	path.s[0] = '\0';
	diff(ops, &path, from, to);
	free(path.s);
	return ops;
}

/* ---- application ----------------------------------------------------- */

static int fail(char *err, size_t errlen, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int
fail(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
	return -1;
}

/* unescape turns one pointer token (len bytes at s) into a malloc'd key;
 * NULL when a '~' is followed by anything but 0 or 1. */
static char *
unescape(const char *s, size_t len)
{
	char *out = emalloc(len + 1), *q = out;
	size_t i;

	for (i = 0; i < len; i++) {
		if (s[i] != '~') {
			*q++ = s[i];
		} else if (i + 1 < len &&
			(s[i + 1] == '0' || s[i + 1] == '1')) {
			*q++ = s[++i] == '0' ? '~' : '/';
		} else {
			free(out);
			return NULL;
		}
	}
	*q = '\0';
	return out;
}

/* array_index reads a token as an array index below limit (limit itself
 * too when end is allowed, and "-" means limit). Returns -1 if none. */
static long
array_index(const char *tok, size_t limit, int end)
{
	char *stop;
	long v;

	if (end && strcmp(tok, "-") == 0)
		return (long)limit;
	if (!*tok || (tok[0] == '0' && tok[1]) || tok[0] < '0' || tok[0] > '9')
		return -1;
	errno = 0;
	v = strtol(tok, &stop, 10);
	if (*stop || errno || (size_t)v > limit || (!end && (size_t)v == limit))
		return -1;
	return v;
}

/* resolve walks path to the parent of its last token. Returns the
 * parent (borrowed) and the malloc'd last token in *last, or NULL. */
static json_t *
resolve(json_t *doc, const char *path, char **last, char *err, size_t errlen)
{
	const char *p = path, *slash;
	json_t *cur = doc;
	char *tok;
	long i;

	*last = NULL;
	if (*p != '/') {
		fail(err, errlen, "path \"%.200s\" does not start with /",
			path);
		return NULL;
	}
	for (;;) {
		p++;
		slash = strchr(p, '/');
		if (!(tok = unescape(p,
			      slash ? (size_t)(slash - p) : strlen(p)))) {
			fail(err, errlen, "path \"%.200s\": bad ~ escape",
				path);
			return NULL;
		}
		if (!slash) {
			*last = tok;
			return cur;
		}
		if (json_is_object(cur))
			cur = json_object_get(cur, tok);
		else if (json_is_array(cur) &&
			(i = array_index(tok, json_array_size(cur), 0)) >= 0)
			cur = json_array_get(cur, (size_t)i);
		else
			cur = NULL;
		free(tok);
		if (!cur) {
			fail(err, errlen, "path \"%.200s\" does not exist",
				path);
			return NULL;
		}
		p = slash;
	}
}

/* apply_one applies one operation at a non-root path. */
static int
apply_one(json_t *doc, const char *name, const char *path, json_t *value,
	char *err, size_t errlen)
{
	char *last;
	json_t *parent = resolve(doc, path, &last, err, errlen);
	int add = !strcmp(name, "add"), rc = -1;
	long i = -1;

	if (!parent)
		return -1;
	if (json_is_array(parent))
		i = array_index(last, json_array_size(parent), add);
	if (json_is_array(parent) && i < 0) {
		fail(err, errlen, "%s %.200s: bad array index", name, path);
	} else if (!json_is_array(parent) && !json_is_object(parent)) {
		fail(err, errlen, "%s %.200s: parent is not a container", name,
			path);
	} else if (add) {
		rc = json_is_array(parent)
			? json_array_insert(parent, (size_t)i, value)
			: json_object_set(parent, last, value);
	} else if (json_is_object(parent) && !json_object_get(parent, last)) {
		fail(err, errlen, "%s %.200s: no such member", name, path);
	} else if (!strcmp(name, "remove")) {
		rc = json_is_array(parent)
			? json_array_remove(parent, (size_t)i)
			: json_object_del(parent, last);
	} else if (!strcmp(name, "replace")) {
		rc = json_is_array(parent)
			? json_array_set(parent, (size_t)i, value)
			: json_object_set(parent, last, value);
	} else {
		rc = json_equal(json_is_array(parent)
				     ? json_array_get(parent, (size_t)i)
				     : json_object_get(parent, last),
			     value)
			? 0
			: -1;
		if (rc)
			fail(err, errlen, "test %.200s: values differ", path);
	}
	free(last);
	return rc;
}

int
jp_apply(json_t **doc, const json_t *patch, char *err, size_t errlen)
{
	const char *name, *path;
	json_t *o, *value;
	size_t i;

	if (errlen)
		err[0] = '\0';
	if (!json_is_array(patch))
		return fail(err, errlen, "patch is not an array");
	json_array_foreach(patch, i, o) {
		name = json_string_value(json_object_get(o, "op"));
		path = json_string_value(json_object_get(o, "path"));
		value = json_object_get(o, "value");
		if (!name || !path)
			return fail(err, errlen, "operation %zu: no op or path",
				i);
		if (strcmp(name, "add") && strcmp(name, "remove") &&
			strcmp(name, "replace") && strcmp(name, "test"))
			return fail(err, errlen,
				"operation %zu: op \"%.40s\" not supported", i,
				name);
		if (strcmp(name, "remove") && !value)
			return fail(err, errlen, "operation %zu: no value", i);
		if (!*path && strcmp(name, "remove") && strcmp(name, "test")) {
			json_decref(*doc);
			*doc = json_deep_copy(value);
			continue;
		}
		if (!*path) {
			if (!strcmp(name, "remove") || !json_equal(*doc, value))
				return fail(err, errlen,
					"operation %zu: %s on the root", i,
					name);
			continue;
		}
		value = value ? json_deep_copy(value) : NULL;
		if (apply_one(*doc, name, path, value, err, errlen) < 0) {
			json_decref(value);
			if (!*err)
				fail(err, errlen, "operation %zu failed", i);
			return -1;
		}
		json_decref(value);
	}
	return 0;
}
