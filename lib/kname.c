/* kname: Kubernetes names and label values (see kname.h). */
#include <string.h>

#include "kname.h"

static int
is_alnum(int c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
		(c >= '0' && c <= '9');
}

static int
is_lower_alnum(int c)
{
	return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
}

char *
kn_label_value(const char *s, char *buf)
{
	size_t n = 0, start = 0;

	for (; s && *s && n < KN_LABEL_MAX; s++) {
		if (*s == ' ')
			buf[n++] = '-';
		else if (is_alnum((unsigned char)*s) || strchr("._-", *s))
			buf[n++] = *s;
	}
	while (n > 0 && !is_alnum((unsigned char)buf[n - 1]))
		n--;
	while (start < n && !is_alnum((unsigned char)buf[start]))
		start++;
	memmove(buf, buf + start, n - start);
	buf[n - start] = '\0';
	return buf;
}

int
kn_is_label_value(const char *s)
{
	size_t n = strlen(s), i;

	if (n == 0)
		return 1;
	if (n > KN_LABEL_MAX || !is_alnum((unsigned char)s[0]) ||
		!is_alnum((unsigned char)s[n - 1]))
		return 0;
	for (i = 0; i < n; i++)
		if (!is_alnum((unsigned char)s[i]) && !strchr("._-", s[i]))
			return 0;
	return 1;
}

/* label_len returns the length of the RFC 1123 label at s (ending at
 * '\0' or '.') of at most max bytes, or 0 when there is none there. */
static size_t
label_len(const char *s, size_t max)
{
	size_t n = 0;

	while (s[n] && s[n] != '.') {
		if (!is_lower_alnum((unsigned char)s[n]) && s[n] != '-')
			return 0;
		n++;
	}
	if (n == 0 || n > max || s[0] == '-' || s[n - 1] == '-')
		return 0;
	return n;
}

int
kn_is_dns_label(const char *s)
{
	size_t n = label_len(s, KN_LABEL_MAX);

	return n > 0 && s[n] == '\0';
}

int
kn_is_dns_subdomain(const char *s, size_t max)
{
	size_t n;

	if (strlen(s) > max || strlen(s) > KN_SUBDOMAIN_MAX)
		return 0;
	for (;;) {
		if (!(n = label_len(s, KN_SUBDOMAIN_MAX)))
			return 0;
		if (s[n] == '\0')
			return 1;
		s += n + 1;
	}
}
