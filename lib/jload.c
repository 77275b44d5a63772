/* jload: json_loadb's results through jscan's tokens (see jload.h). */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "err.h"
#include "jload.h"
#include "jscan.h"

/* The first token array holds a token per this many bytes of text; it
 * grows as jscan needs (at most twice), and never starts past MAX_TOKENS. */
enum { BYTES_PER_TOKEN = 6, MAX_TOKENS = 1 << 16, MAX_PATH = 512 };

/* A thread keeps its copy of the text and its tokens from call to call
 * while each is at most this big: a line or an answer a malloc and a free
 * apiece was most of the cost of small reads (and the large requests made
 * glibc sweep its fast bins every time). A larger one is freed at once,
 * so a hostile object costs its size only while it is read. */
enum { KEEP_MAX = 256 << 10 };

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

/* What a thread keeps between calls (see KEEP_MAX); busy while in use,
 * so that a skip function that reads JSON itself gets buffers of its own. */
struct scratch {
	char *copy;
	size_t copy_cap;
	struct js_tok *t;
	int tcap;
	int busy;
	struct walk w;
};

static pthread_key_t scratch_key;
static pthread_once_t scratch_once = PTHREAD_ONCE_INIT;

static void
scratch_free(void *p)
{
	struct scratch *s = p;

	free(s->copy);
	free(s->t);
	free(s);
}

static void
scratch_init(void)
{
	if (pthread_key_create(&scratch_key, scratch_free) != 0)
		err_die(HAZ_FAIL, "jload: no thread key");
}

/* scratch_take returns this thread's scratch, marked busy, or NULL when
 * it is busy already. */
static struct scratch *
scratch_take(void)
{
	struct scratch *s;

	pthread_once(&scratch_once, scratch_init);
	if (!(s = pthread_getspecific(scratch_key))) {
		s = ecalloc(1, sizeof *s);
		if (pthread_setspecific(scratch_key, s) != 0) {
			free(s);
			return NULL;
		}
	}
	if (s->busy)
		return NULL;
	s->busy = 1;
	return s;
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
	struct scratch *s, own; /* not zeroed whole: its walk is 4 KiB */
	struct walk *w;
	struct js_doc d = {0};
	json_t *v = NULL;
	size_t cap = len / BYTES_PER_TOKEN + 16;

	if (!buf || (flags & ~(size_t)(JSON_DECODE_ANY | JSON_ALLOW_NUL)))
		goto jansson;
	if (cap > MAX_TOKENS)
		cap = MAX_TOKENS;
	if (!(s = scratch_take())) {
		s = &own;
		s->copy = NULL;
		s->t = NULL;
		s->copy_cap = 0;
		s->tcap = 0;
	}
	if (s->copy_cap < len + 1) {
		free(s->copy);
		s->copy = emalloc(len + 1);
		s->copy_cap = len + 1;
	}
	memcpy(s->copy, buf, len);
	s->copy[len] = '\0';
	if ((size_t)s->tcap < cap) {
		free(s->t);
		s->t = emalloc(cap * sizeof *s->t);
		s->tcap = (int)cap;
	}
	d.t = s->t;
	d.cap = s->tcap;
	w = &s->w; /* path[] is written before it is read */
	w->d = &d;
	w->skip = skip;
	w->arg = arg;
	w->depth = 0;
	if (js_parse(&d, s->copy, len) == 0 && !d.bignum &&
		(!d.nul || ((flags & JSON_ALLOW_NUL) && !skip)) &&
		((flags & JSON_DECODE_ANY) || d.t[0].type == JS_OBJECT ||
			d.t[0].type == JS_ARRAY))
		v = build(w, 0);
	s->t = d.t; /* js_parse may have grown it */
	s->tcap = d.cap;
	if (s == &own || s->copy_cap > KEEP_MAX) {
		free(s->copy);
		s->copy = NULL;
		s->copy_cap = 0;
	}
	if (s == &own || (size_t)s->tcap * sizeof *s->t > KEEP_MAX) {
		free(s->t);
		s->t = NULL;
		s->tcap = 0;
	}
	s->busy = 0;
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
