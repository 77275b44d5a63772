/* ledger_bound: the valid range of every ledger field, for the C side;
 * lg_lua_bounds hands the same numbers to the Lua scripts, whose own
 * checks (lua_lib's tcheck, jcheck, pcheck) mirror these. */
#include <stdio.h>
#include <string.h>

#include "err.h"
#include "ledger.h"

#define STR_(x) #x
#define STR(x) STR_(x)

const char *
lg_text_check(const char *s, size_t max, char *why, size_t n)
{
	const unsigned char *p = (const unsigned char *)s, *end;
	size_t len = strlen(s);
	int k;

	if (len > max) {
		snprintf(why, n, "longer than %zu bytes (%zu)", max, len);
		return why;
	}
	end = p + len;
	while (p < end) {
		if (*p < 0x20 || *p == 0x7f) {
			snprintf(why, n, "a control character at byte %zu",
				(size_t)(p - (const unsigned char *)s) + 1);
			return why;
		}
		if (*p < 0x80) {
			p++;
			continue;
		}
		if (!(k = err_utf8_len(p, end))) {
			snprintf(why, n, "not UTF-8 at byte %zu",
				(size_t)(p - (const unsigned char *)s) + 1);
			return why;
		}
		if (p[0] == 0xc2 && p[1] < 0xa0) {
			snprintf(why, n, "a control character at byte %zu",
				(size_t)(p - (const unsigned char *)s) + 1);
			return why;
		}
		p += k;
	}
	return NULL;
}

int
lg_time_ok(long long sec)
{
	return sec >= 0 && sec <= LG_TIME_MAX;
}

/* token counts the value that starts at raw[i] (a number or a literal),
 * and returns the index of its last byte. */
static size_t
token(const char *raw, size_t len, size_t i)
{
	while (i + 1 < len && raw[i + 1] &&
		strchr("+-.0123456789eEtruefalsn", raw[i + 1]))
		i++;
	return i;
}

const char *
lg_value_check(const char *raw, size_t len)
{
	size_t i, n = 0;
	int depth = 0, in_str = 0;

	if (len > LG_MAX_KEY)
		return "larger than " STR(LG_MAX_KEY) " bytes";
	for (i = 0; i < len; i++) {
		if (in_str) {
			if (raw[i] == '\\')
				i++;
			else if (raw[i] == '"')
				in_str = 0;
			continue;
		}
		if (raw[i] == '"') {
			in_str = 1;
			n++;
		} else if (raw[i] == '{' || raw[i] == '[') {
			n++;
			if (++depth > LG_MAX_DEPTH)
				return "nested deeper than " STR(LG_MAX_DEPTH);
		} else if (raw[i] == '}' || raw[i] == ']') {
			depth--;
		} else if (raw[i] && strchr("-0123456789tfn", raw[i])) {
			n++;
			i = token(raw, len, i);
		}
		if (n > LG_MAX_VALUES)
			return "more than " STR(LG_MAX_VALUES) " values";
	}
	return NULL;
}

const char *
lg_lua_bounds(void)
{
	static char line[512];

	if (!line[0])
		snprintf(line, sizeof line,
			"local MAXGPUS, MAXNAME, MAXNOTE, MAXID = %d, %d, %d, "
			"%d\n"
			"local MAXKEY, MAXDEPTH, MAXVALUES = %d, %d, %d\n"
			"local TIMEMAX, MAXDUR = %lld, %d\n"
			"local MAXQUEUE, MAXHOLDS, MAXAHEAD, MAXGPUID = %d, %d, "
			"%d, %d\n",
			LG_MAX_GPUS, LG_MAX_NAME, LG_MAX_NOTE, LG_MAX_ID,
			LG_MAX_KEY, LG_MAX_DEPTH, LG_MAX_VALUES, LG_TIME_MAX,
			LG_MAX_DURATION, LG_MAX_QUEUE, LG_MAX_HOLDS,
			LG_MAX_AHEAD, LG_MAX_GPU_ID);
	return line;
}
