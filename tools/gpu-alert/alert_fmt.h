/* alert_fmt (af_): an alert as the JSON a chat webhook takes.
 *
 * slack: an incoming-webhook message, {"text": SENTENCE, "attachments":
 *   [{"color": "danger"|"warning"|"good", "fields": [{"title", "value",
 *   "short"}...]}]}.
 * teams: a Workflows (Power Automate) "post to a channel when a webhook
 *   request is received" message: {"type": "message", "attachments":
 *   [{"contentType": "application/vnd.microsoft.card.adaptive",
 *   "contentUrl": null, "content": AdaptiveCard 1.4 with a TextBlock of
 *   the sentence and a FactSet}]}.
 * The sentence and the facts (Node, GPU, UUID, Product, Health,
 * Temperature, ECC errors, Reasons; those known) are the same in both,
 * each string escaped for the markup of the format (& < > as entities
 * for Slack's mrkdwn, a backslash before Markdown's characters for
 * Teams), so that what a record says shows as written.
 * auto picks teams for a URL whose host ends in .office.com,
 * .logic.azure.com or .powerplatform.com, slack for any other. */
#ifndef HAZ_ALERT_FMT_H
#define HAZ_ALERT_FMT_H

#include <jansson.h>

#include "alert.h"

enum alert_format { AF_AUTO, AF_SLACK, AF_TEAMS };

/* af_parse reads "slack", "teams" or "auto"; 0, or -1 for another. */
int af_parse(const char *s, enum alert_format *f);
const char *af_name(enum alert_format f);

/* af_for_url: the format auto means for url (AF_SLACK or AF_TEAMS). */
enum alert_format af_for_url(const char *url);

/* af_text returns the alert's sentence, malloc'd: "GPU 0 on node n1 is
 * unhealthy: temperature 91C >= 90C". */
char *af_text(const struct alert *a);

/* af_body returns the message of a in format f (AF_SLACK or AF_TEAMS);
 * the caller owns it. */
json_t *af_body(const struct alert *a, enum alert_format f);

#endif
