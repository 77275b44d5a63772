/* smi_int: what the parsers of nvidia-smi outputs (smi.c, smi_apps.c)
 * share; not for tools. */
#ifndef HAZ_SMI_INT_H
#define HAZ_SMI_INT_H

#include <stddef.h>

#include "smi.h"

/* A line of a source, cut in place: text without "\r\n", its number,
 * whether it ended with a newline, and why it is no text (NULL when it
 * is). */
struct smi_line {
	char *text;
	long no;
	int complete;
	const char *bad;
};

/* A source being read: a private copy of the bytes, and the position. */
struct smi_src {
	const char *name;
	char *buf;
	size_t len, pos;
	long no;
};

/* smi_src_open starts reading a copy of buf (len bytes) named name; the
 * caller frees s->buf at the end. */
void smi_src_open(struct smi_src *s, const char *name, const char *buf,
	size_t len);

/* smi_next_line cuts the next line of s into *l. Returns 0 at the end. */
int smi_next_line(struct smi_src *s, struct smi_line *l);

/* smi_refused reports a line that is no text (l->bad) and returns -1, or
 * returns 0 for a good line. */
int smi_refused(const struct smi_src *s, const struct smi_line *l);

/* smi_show copies s into buf (64 bytes) for a message: at most 48 bytes,
 * with control and non-ASCII bytes as '?', "..." when cut. Returns buf. */
const char *smi_show(const char *s, char *buf);

/* smi_trim cuts the spaces and tabs around s, in place; returns its
 * start. smi_blank is 1 when s holds only spaces and tabs. */
char *smi_trim(char *s);
int smi_blank(const char *s);

/* smi_grow returns v, an array of cap elements of size holding n, with
 * room for one more: doubling, so appending n elements takes linear
 * time. */
void *smi_grow(void *v, size_t n, size_t *cap, size_t size);

/* smi_find_gpu returns the GPU of inv with that UUID, or NULL. */
struct smi_gpu *smi_find_gpu(struct smi_inv *inv, const char *uuid);

#endif
