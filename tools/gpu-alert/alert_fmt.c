/* alert_fmt: Slack and Teams messages of an alert (see alert_fmt.h). */
#include <ctype.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "alert_fmt.h"
#include "err.h"

int
af_parse(const char *s, enum alert_format *f)
{
	if (strcmp(s, "slack") == 0)
		*f = AF_SLACK;
	else if (strcmp(s, "teams") == 0)
		*f = AF_TEAMS;
	else if (strcmp(s, "auto") == 0)
		*f = AF_AUTO;
	else
		return -1;
	return 0;
}

const char *
af_name(enum alert_format f)
{
	return f == AF_TEAMS ? "teams" : f == AF_SLACK ? "slack" : "auto";
}

/* ends_with: host ends in suffix, case aside. */
static int
ends_with(const char *host, size_t len, const char *suffix)
{
	size_t n = strlen(suffix);

	return len > n && strncasecmp(host + len - n, suffix, n) == 0;
}

enum alert_format
af_for_url(const char *url)
{
	static const char *const teams[] = {".office.com", ".logic.azure.com",
		".powerplatform.com"};
	const char *host = strstr(url, "://"), *end, *at;
	size_t len, i;

	if (!host)
		return AF_SLACK;
	host += 3;
	end = host + strcspn(host, "/?#");
	/* user:password@ comes before the host */
	while ((at = memchr(host, '@', (size_t)(end - host))))
		host = at + 1;
	if (*host == '[')
		return AF_SLACK; /* an IPv6 literal: no name to match */
	len = (size_t)(end - host);
	if ((at = memchr(host, ':', len)))
		len = (size_t)(at - host);
	if (len && host[len - 1] == '.')
		len--; /* a fully qualified name's root dot */
	for (i = 0; i < sizeof teams / sizeof *teams; i++)
		if (ends_with(host, len, teams[i]))
			return AF_TEAMS;
	return AF_SLACK;
}

/* device_name: "GPU 0", "GPU 0 (MIG 1g.10gb)", "GPU GPU-uuid" when the
 * index is not known. */
static char *
device_name(const struct alert *a)
{
	char *base = a->index >= 0 ? easprintf("GPU %lld", a->index)
				   : easprintf("GPU %s", a->uuid);
	char *name;

	if (!a->mig)
		return base;
	name = easprintf("%s (MIG %s)", base, a->mig);
	free(base);
	return name;
}

/* reasons joins the alert's health reasons with sep ("" when none). */
static char *
reasons(const struct alert *a, const char *sep)
{
	char *s = estrdup(""), *next;
	const json_t *r;
	size_t i;

	json_array_foreach(a->reasons, i, r) {
		if (!json_is_string(r))
			continue;
		next = easprintf("%s%s%s", s, *s ? sep : "",
			json_string_value(r));
		free(s);
		s = next;
	}
	return s;
}

char *
af_text(const struct alert *a)
{
	char *dev, *why, *text;

	if (a->event == ALERT_TEST)
		return easprintf("gpu-alert test message: this webhook "
				 "receives GPU alerts%s%s",
			a->node ? " from " : "", a->node ? a->node : "");
	dev = device_name(a);
	switch (a->event) {
	case ALERT_UNHEALTHY:
		why = reasons(a, "; ");
		text = easprintf("%s on node %s is unhealthy%s%s", dev, a->node,
			*why ? ": " : "", why);
		free(why);
		break;
	case ALERT_RECOVERED:
		text = easprintf("%s on node %s recovered: health is %s", dev,
			a->node, alert_health_name(a->health));
		break;
	case ALERT_TEMP:
		text = easprintf("%s on node %s is at %gC (threshold %gC)", dev,
			a->node, a->temp_c, a->threshold);
		break;
	default:
		text = easprintf("%s on node %s: uncorrected ECC errors rose "
				 "from %lld to %lld",
			dev, a->node, a->ecc_from, a->ecc_to);
		break;
	}
	free(dev);
	return text;
}

/* facts returns [[title, value, short]...]: what both formats list,
 * the reasons joined by sep. */
static json_t *
facts(const struct alert *a, const char *sep)
{
	json_t *f = json_array();
	char *s;

#define FACT(title, value, shrt)                                               \
	json_array_append_new(f, json_pack("[s, s, b]", title, value, shrt))
	if (a->node)
		FACT("Node", a->node, 1);
	if (a->uuid) {
		s = device_name(a);
		FACT("GPU", s + 4, 1);
		free(s);
		FACT("UUID", a->uuid, 0);
	}
	if (a->product)
		FACT("Product", a->product, 1);
	if (a->health >= 0)
		FACT("Health", alert_health_name(a->health), 1);
	if (!isnan(a->temp_c)) {
		s = easprintf("%gC", a->temp_c);
		FACT("Temperature", s, 1);
		free(s);
	}
	if (a->ecc_to >= 0) {
		s = easprintf("%lld", a->ecc_to);
		FACT("ECC errors", s, 1);
		free(s);
	}
	s = reasons(a, sep);
	if (*s)
		FACT("Reasons", s, 0);
	free(s);
#undef FACT
	return f;
}

/* ---- escaping: what each chat shows as written ---------------------- */

/* Every string a message carries comes from the cluster (node names,
 * products, health reasons anyone able to annotate a node may write), so
 * each is escaped for the markup its place is read in, and shows as
 * written: no mention, link or formatting can be slipped in. */

/* slack_escape: Slack reads text and attachment fields as mrkdwn, where
 * <...> is a link or a mention (<!channel>); it asks for &, < and > as
 * &amp;, &lt; and &gt;, and nothing else has an escape. */
static char *
slack_escape(const char *s)
{
	char *out = emalloc(5 * strlen(s) + 1), *o = out;

	for (; *s; s++) {
		switch (*s) {
		case '&': o = stpcpy(o, "&amp;"); break;
		case '<': o = stpcpy(o, "&lt;"); break;
		case '>': o = stpcpy(o, "&gt;"); break;
		default: *o++ = *s;
		}
	}
	*o = '\0';
	return out;
}

/* teams_escape: an Adaptive Card's TextBlock and Fact title and value
 * are Markdown (emphasis, links, lists; entities and <...> autolinks
 * too). A backslash escapes what Markdown acts on anywhere in a line
 * (the backslash, ` * _ ~ [ ] < &) and what it acts on at the start of one,
 * after any spaces (- + # >, and the . or ) after digits of a numbered list);
 * a ( or ) with no [...] before it, or > elsewhere, is text already. */
static char *
teams_escape(const char *s)
{
	char *out = emalloc(2 * strlen(s) + 1), *o = out;
	int line_start = 1;

	while (*s) {
		if (line_start && isdigit((unsigned char)*s)) {
			while (isdigit((unsigned char)*s))
				*o++ = *s++;
			if (*s == '.' || *s == ')')
				*o++ = '\\';
			line_start = 0;
			continue;
		}
		if (strchr("\\`*_~[]<&", *s) ||
			(line_start && strchr("-+#>", *s)))
			*o++ = '\\';
		line_start = *s == '\n' || *s == '\r' ||
			(line_start && (*s == ' ' || *s == '\t'));
		*o++ = *s++;
	}
	*o = '\0';
	return out;
}

/* escaped returns a new JSON string of s escaped for format f. */
static json_t *
escaped(const char *s, enum alert_format f)
{
	char *e = f == AF_TEAMS ? teams_escape(s) : slack_escape(s);
	json_t *v = json_string(e);

	free(e);
	if (!v)
		err_die(HAZ_FAIL, "json_string: not UTF-8 or out of memory");
	return v;
}

static const char *
slack_color(enum alert_event e)
{
	return e == ALERT_UNHEALTHY                 ? "danger"
		: e == ALERT_TEMP || e == ALERT_ECC ? "warning"
						    : "good";
}

static const char *
teams_color(enum alert_event e)
{
	return e == ALERT_UNHEALTHY                 ? "Attention"
		: e == ALERT_TEMP || e == ALERT_ECC ? "Warning"
						    : "Good";
}

static json_t *
slack(const struct alert *a, const char *text, const json_t *f)
{
	json_t *fields = json_array();
	const json_t *x;
	size_t i;

	json_array_foreach(f, i, x)
		json_array_append_new(fields,
			json_pack("{s:O, s:O, s:O}", "title",
				json_array_get(x, 0), "value",
				json_array_get(x, 1), "short",
				json_array_get(x, 2)));
	return json_pack("{s:s, s:[{s:s, s:o}]}", "text", text, "attachments",
		"color", slack_color(a->event), "fields", fields);
}

static json_t *
teams(const struct alert *a, const char *text, const json_t *f)
{
	json_t *list = json_array();
	const json_t *x;
	size_t i;

	json_array_foreach(f, i, x)
		json_array_append_new(list,
			json_pack("{s:O, s:O}", "title", json_array_get(x, 0),
				"value", json_array_get(x, 1)));
	return json_pack("{s:s, s:[{s:s, s:n, s:{s:s, s:s, s:s, s:["
			 "{s:s, s:s, s:b, s:s, s:s}, {s:s, s:o}]}}]}",
		"type", "message", "attachments", "contentType",
		"application/vnd.microsoft.card.adaptive", "contentUrl",
		"content", "$schema",
		"http://adaptivecards.io/schemas/adaptive-card.json", "type",
		"AdaptiveCard", "version", "1.4", "body", "type", "TextBlock",
		"text", text, "wrap", 1, "weight", "Bolder", "color",
		teams_color(a->event), "type", "FactSet", "facts", list);
}

/* escape_facts escapes the title and value of every fact for f. */
static void
escape_facts(json_t *facts, enum alert_format f)
{
	json_t *x;
	size_t i, k;

	json_array_foreach(facts, i, x)
		for (k = 0; k < 2; k++)
			json_array_set_new(x, k,
				escaped(json_string_value(json_array_get(x, k)),
					f));
}

json_t *
af_body(const struct alert *a, enum alert_format fmt)
{
	char *plain = af_text(a), *text;
	/* a Slack field shows lines; a FactSet value is best one line */
	json_t *f = facts(a, fmt == AF_TEAMS ? "; " : "\n"), *body;

	text = fmt == AF_TEAMS ? teams_escape(plain) : slack_escape(plain);
	escape_facts(f, fmt);
	body = fmt == AF_TEAMS ? teams(a, text, f) : slack(a, text, f);
	if (!body)
		err_die(HAZ_FAIL, "json_pack: out of memory");
	free(plain);
	free(text);
	json_decref(f);
	return body;
}
