/* jitems: the items of a List page, found in its text (jitems.h). */
#include <string.h>

#include "jitems.h"

static size_t
blanks(const char *p, size_t i, size_t end)
{
	while (i < end &&
		(p[i] == ' ' || p[i] == '\t' || p[i] == '\n' || p[i] == '\r'))
		i++;
	return i;
}

/* string_end returns the offset just past the string opening at p[i],
 * or 0 when it is not closed before end. */
static size_t
string_end(const char *p, size_t i, size_t end)
{
	for (i++; i < end; i++) {
		if (p[i] == '\\')
			i++;
		else if (p[i] == '"')
			return i + 1;
	}
	return 0;
}

/* value_end returns the offset just past the value starting at p[i], or
 * 0 when there is none or it does not end before end. A scalar runs to
 * the next separator; its spelling is the reader's to check. */
static size_t
value_end(const char *p, size_t i, size_t end)
{
	size_t start = i;
	int depth = 0;

	if (i >= end)
		return 0;
	if (p[i] == '"')
		return string_end(p, i, end);
	if (p[i] != '{' && p[i] != '[') {
		while (i < end && !memchr(",}] \t\r\n", p[i], 8))
			i++;
		return i > start ? i : 0;
	}
	for (; i < end; i++) {
		switch (p[i]) {
		case '"':
			if (!(i = string_end(p, i, end)))
				return 0;
			i--;
			break;
		case '{':
		case '[': depth++; break;
		case '}':
		case ']':
			if (--depth == 0)
				return i + 1;
			break;
		}
	}
	return 0;
}

int
ji_split(const char *p, size_t len, size_t *a, size_t *b)
{
	size_t i = blanks(p, 0, len), k, v, ve;
	int found = 0, items;

	if (i >= len || p[i] != '{')
		return 1;
	i = blanks(p, i + 1, len);
	if (i < len && p[i] == '}')
		return 1;
	for (;;) {
		if (i >= len || p[i] != '"' || !(k = string_end(p, i, len)))
			return 1;
		items = k - i == 7 && !memcmp(p + i, "\"items\"", 7);
		i = blanks(p, k, len);
		if (i >= len || p[i] != ':')
			return 1;
		v = blanks(p, i + 1, len);
		if (!(ve = value_end(p, v, len)))
			return 1;
		if (items) {
			if (found++ || p[v] != '[')
				return 1;
			*a = v;
			*b = ve;
		}
		i = blanks(p, ve, len);
		if (i < len && p[i] == ',') {
			i = blanks(p, i + 1, len);
			continue;
		}
		if (i < len && p[i] == '}')
			return found ? 0 : 1;
		return 1;
	}
}

int
ji_next(const char *p, size_t a, size_t b, size_t *pos, size_t *s, size_t *e)
{
	size_t end = b - 1, i, ve; /* end: the closing bracket */

	if (*pos == 0) {
		if ((i = blanks(p, a + 1, end)) == end) {
			*pos = end;
			return 0;
		}
	} else {
		if ((i = blanks(p, *pos, end)) == end)
			return 0;
		if (p[i] != ',') {
			*pos = i;
			return -1;
		}
		i = blanks(p, i + 1, end);
	}
	if (!(ve = value_end(p, i, end))) {
		*pos = i;
		return -1;
	}
	*s = i;
	*e = ve;
	*pos = ve;
	return 1;
}
