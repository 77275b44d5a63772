/* jload: json_loadb's results through jscan's tokens (see jload.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "err.h"
#include "jload.h"
#include "jscan.h"

/* The first token array holds a token per this many bytes of text; it
 * grows as jscan needs (at most twice), and never starts past MAX_TOKENS. */
enum { BYTES_PER_TOKEN = 6, MAX_TOKENS = 1 << 16, MAX_PATH = 512 };

static unsigned long handed_over;

struct walk {
	const struct js_doc *d;
	jl_skip_fn *skip;
	void *arg;
	int depth;
	const char *path[MAX_PATH + 1];
};

/* among says whether s is named by list: a name ending in '*' names
 * every key it begins. */
static int
among(const char *const *list, const char *s)
{
	size_t n;

	for (; *list; list++) {
		if (**list != *s)
			continue;
		n = strlen(*list);
		if (n && (*list)[n - 1] == '*' ? !strncmp(*list, s, n - 1)
					       : !strcmp(*list, s))
			return 1;
	}
	return 0;
}

/* build returns the value of token i, or NULL when jansson would not
 * read it the same way. */
static json_t *
build(struct walk *w, int i)
{
	const struct js_doc *d = w->d;
	const struct js_tok *t = &d->t[i];
	const char *const *skip;
	json_t *v, *c;
	int k, m, keep;

	switch (t->type) {
	case JS_NULL: return json_null();
	case JS_FALSE: return json_false();
	case JS_TRUE: return json_true();
	case JS_INT: return json_integer(t->i);
	case JS_REAL: return json_real(t->d);
	case JS_STRING: return json_stringn_nocheck(t->s, t->len);
	case JS_ARRAY:
		v = json_array();
		w->path[++w->depth] = NULL;
		for (m = 0, k = i + 1; m < t->n; m++, k = d->t[k].next) {
			if (!(c = build(w, k)) || json_array_append_new(v, c))
				break;
		}
		w->depth--;
		break;
	case JS_OBJECT:
		v = json_object();
		keep = 0;
		skip = w->skip ? w->skip(w->path, w->depth, &keep, w->arg)
			       : NULL;
		for (m = 0, k = i + 1; m < t->n; m++, k = d->t[k + 1].next) {
			if (strlen(d->t[k].s) != d->t[k].len)
				break; /* jansson takes no key holding NUL */
			if (skip && among(skip, d->t[k].s) != keep)
				continue;
			w->path[++w->depth] = d->t[k].s;
			c = build(w, k + 1);
			w->depth--;
			if (!c ||
				json_object_setn_new_nocheck(v, d->t[k].s,
					d->t[k].len, c))
				break;
		}
		break;
	default: return NULL;
	}
	if (m < t->n) {
		json_decref(v);
		return NULL;
	}
	return v;
}

/* ok_error leaves err as json_loadb leaves it after reading len bytes. */
static void
ok_error(json_error_t *err, size_t len)
{
	if (!err)
		return;
	memset(err, 0, sizeof *err);
	err->line = err->column = -1;
	err->position = (int)len;
	snprintf(err->source, sizeof err->source, "<buffer>");
}

json_t *
jl_loadb_skip(const char *buf, size_t len, size_t flags, json_error_t *err,
	jl_skip_fn *skip, void *arg)
{
	struct walk *w;
	struct js_doc d = {0};
	json_t *v = NULL;
	char *copy;
	size_t cap = len / BYTES_PER_TOKEN + 16;

	if (!buf || (flags & ~(size_t)(JSON_DECODE_ANY | JSON_ALLOW_NUL)))
		goto jansson;
	copy = emalloc(len + 1);
	memcpy(copy, buf, len);
	copy[len] = '\0';
	d.cap = (int)(cap < MAX_TOKENS ? cap : MAX_TOKENS);
	d.t = emalloc((size_t)d.cap * sizeof *d.t);
	w = emalloc(sizeof *w); /* path[] is written before it is read */
	w->d = &d;
	w->skip = skip;
	w->arg = arg;
	w->depth = 0;
	if (js_parse(&d, copy, len) == 0 && !d.bignum &&
		(!d.nul || ((flags & JSON_ALLOW_NUL) && !skip)) &&
		((flags & JSON_DECODE_ANY) || d.t[0].type == JS_OBJECT ||
			d.t[0].type == JS_ARRAY))
		v = build(w, 0);
	free(w);
	js_free(&d);
	free(copy);
	if (v) {
		ok_error(err, len);
		return v;
	}
jansson:
	__atomic_add_fetch(&handed_over, 1, __ATOMIC_RELAXED);
	return json_loadb(buf, len, flags, err);
}

json_t *
jl_loadb(const char *buf, size_t len, size_t flags, json_error_t *err)
{
	return jl_loadb_skip(buf, len, flags, err, NULL, NULL);
}

unsigned long
jl_handed_over(void)
{
	return __atomic_load_n(&handed_over, __ATOMIC_RELAXED);
}
