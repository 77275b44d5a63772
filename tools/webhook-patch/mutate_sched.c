/* mutate_sched: pods that ask for a strategy or a priority by annotation
 * are handed to our scheduler (see mutate.h, step 5).
 *
 * Strategy names are the sched engine's (sp_strategy_parse) and
 * priorities are read as sched-bind reads them (bind_priority), so the
 * webhook redirects exactly the pods the scheduler will honor as asked. */
#include <stdlib.h>
#include <string.h>

#include "bind.h"
#include "err.h"
#include "mutate_int.h"
#include "sched.h"

/* pod_name returns "namespace/name" of the review's pod, its
 * generateName and "*" before the API server names it (malloc'd). */
static char *
pod_name(const struct target *t)
{
	const json_t *md = json_object_get(t->pod, "metadata");
	const char *name = json_string_value(json_object_get(md, "name")),
		   *gen = json_string_value(
			   json_object_get(md, "generateName"));

	if (!name || !*name)
		name = t->r->name;
	if (*name)
		return easprintf("%s/%s", t->r->namespace, name);
	return easprintf("%s/%s*", t->r->namespace, gen ? gen : "");
}

/* bad_value warns that annotation key's value val is malformed (what
 * says how), and what becomes of the pod. */
static void
bad_value(const struct target *t, struct adm_verdict *v, const char *key,
	const char *val, const char *what, const char *fate)
{
	char *pod = pod_name(t);

	adm_warn(v, "pod %s: annotation %s: \"%s\" %s; %s", pod, key, val, what,
		fate);
	free(pod);
}

void
mutate_sched(const struct mutate_opts *o, struct target *t,
	struct adm_verdict *v, struct mutate_note *note)
{
	const char *ours = o->scheduler ? o->scheduler
					: MUTATE_SCHEDULER_DEFAULT;
	const char *strat = mut_annotation(t->pod, MUTATE_STRATEGY_ANNOTATION);
	const char *prio = mut_annotation(t->pod, MUTATE_PRIORITY_ANNOTATION);
	const char *have = json_string_value(
		json_object_get(t->spec, "schedulerName"));
	const char *why, *fate;
	char *fate_ours;
	long long p = 0;
	int s = -1, mine, ok = 1;

	if (!t->is_pod || (!strat && !prio))
		return;
	mine = have && !strcmp(have, ours);
	if (have && *have && !mine && strcmp(have, "default-scheduler"))
		return; /* another scheduler's pod: its own business */
	fate_ours = easprintf("%s uses its default", ours);
	fate = mine ? fate_ours : "left to the default scheduler";
	if (prio && bind_priority(prio, &p, &why) < 0) {
		bad_value(t, v, MUTATE_PRIORITY_ANNOTATION, prio, why, fate);
		ok = 0;
	}
	if (strat && (s = sp_strategy_parse(strat)) < 0) {
		bad_value(t, v, MUTATE_STRATEGY_ANNOTATION, strat,
			"is not a known strategy", fate);
		ok = 0;
	}
	free(fate_ours);
	if (!ok || mine)
		return;
	json_object_set_new(t->spec, "schedulerName", json_string(ours));
	adm_warn(v, "pod scheduled by %s (strategy %s, priority %lld)", ours,
		s >= 0 ? sp_strategy_name(s) : "default", p);
	note->scheduler = ours;
}
