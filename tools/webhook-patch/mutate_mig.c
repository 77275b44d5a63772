/* mutate_mig: MIG-size fallback along the chains, and admitted demand
 * counted until the watch shows the pod (see mutate.h, steps 3 and 4). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "err.h"
#include "mig.h"
#include "mutate_int.h"
#include "podres.h"

#define PREFIX AVAIL_MIG_PREFIX

/* One fallback being judged. */
struct judge {
	const struct mutate_opts *o;
	struct avail *a;
	struct target *t;
	struct adm_verdict *v;
	int disabled;           /* by annotation */
	const char *floor_name; /* min-profile annotation, or NULL */
	struct mig_profile floor;
	int floor_bad;
};

/* fits says whether n devices of res fit (per pod on one node; times
 * the replicas in the cluster); *free_ gets what is free to report. */
static int
fits(struct judge *j, const char *res, long n, long *free_)
{
	json_t *d = json_pack("{s:I}", res, (json_int_t)n);
	long total, best = avail_free_locked(j->a, res, &total);
	int ok = avail_fits_locked(j->a, d, j->t->replicas);

	json_decref(d);
	*free_ = j->t->replicas > 1 ? total : best;
	return ok;
}

/* asked describes n devices of res for the message; n times the
 * replicas (each below 2^63) is written in full. */
static char *
asked(struct judge *j, const char *res, long n, long free_)
{
	unsigned __int128 all = n;
	char digits[48], *p = digits + sizeof digits;

	if (j->t->replicas <= 1)
		return easprintf("%s: %ld asked, %ld free", res, n, free_);
	all *= (unsigned long)j->t->replicas;
	*--p = '\0';
	do {
		*--p = (char)('0' + (int)(all % 10));
		all /= 10;
	} while (all);
	return easprintf("%s: %s asked for %ld pods, %ld free", res, p,
		j->t->replicas, free_);
}

struct rename {
	const char *from, *to;
};

/* rename_one moves resource from to to in one container's requests and
 * limits, adding to what it may already ask of to; a value that cannot
 * be added exactly (no quantity, or 10^38 or more) stays as asked. */
static void
rename_one(json_t *c, void *arg)
{
	static const char *const which[] = {"requests", "limits"};
	const struct rename *rn = arg;
	json_t *map, *v, *have;
	struct qty a, b;
	char buf[QTY_BUFSIZE];
	size_t i;

	for (i = 0; i < 2; i++) {
		map = json_object_get(json_object_get(c, "resources"),
			which[i]);
		if (!(v = json_object_get(map, rn->from)))
			continue;
		have = json_object_get(map, rn->to);
		if (!have)
			json_object_set(map, rn->to, v);
		else if (podres_qty(have, &a) == QTY_OK &&
			podres_qty(v, &b) == QTY_OK &&
			qty_add(&a, &a, &b) == QTY_OK)
			json_object_set_new(map, rn->to,
				json_string(qty_format(&a, buf)));
		else
			continue;
		json_object_del(map, rn->from);
	}
}

/* try_chain looks for the first later profile of res's chain of which n
 * fit. Returns the malloc'd resource name, or NULL with the reason added
 * to *why. */
static char *
try_chain(struct judge *j, const char *profile, long n, char **why)
{
	const char *const *next;
	struct mig_profile p;
	size_t k, count = migchain_after(j->o->chains, profile, &next);
	char *res, *s;
	long free_;

	if (!count) {
		*why = easprintf("no fallback chain names %s", profile);
		return NULL;
	}
	for (k = 0; k < count; k++) {
		if (j->floor_name && mig_parse(next[k], &p) == 0 &&
			mig_cmp(&p, &j->floor) < 0)
			break;
		res = easprintf(PREFIX "%s", next[k]);
		if (fits(j, res, n, &free_))
			return res;
		free(res);
		s = easprintf("%s%s%s: %ld free", *why ? *why : "",
			*why ? ", " : "", next[k], free_);
		free(*why);
		*why = s;
	}
	s = *why ? easprintf("no fallback fits (%s)", *why)
		 : easprintf("no fallback at or above min-profile %s",
			   j->floor_name);
	free(*why);
	*why = s;
	return NULL;
}

/* one judges one resource of the pod; returns the resource it now asks
 * for (malloc'd) when it fell back, else NULL. */
static char *
one(struct judge *j, const char *res, long n)
{
	struct mig_profile p;
	char profile[32], *to = NULL, *why = NULL, *head;
	long free_;

	if (fits(j, res, n, &free_) || mig_parse(res + strlen(PREFIX), &p) < 0)
		return NULL;
	mig_format(&p, profile, sizeof profile);
	head = asked(j, res, n, free_);
	if (j->disabled)
		adm_warn(j->v, "%s; fallback disabled by annotation", head);
	else if (j->floor_bad)
		adm_warn(j->v,
			"%s; %s \"%.32s\" is not a MIG profile: no fallback",
			head, MUTATE_MIN_ANNOTATION, j->floor_name);
	else if ((to = try_chain(j, profile, n, &why)))
		adm_warn(j->v, "%s; falling back to %s", head, to);
	else
		adm_warn(j->v, "%s, %s; left as asked", head, why);
	free(head);
	free(why);
	return to;
}

/* fall_back rewrites every container from res to to and records it. */
static void
fall_back(struct judge *j, const char *res, const char *to, char **value,
	struct mutate_note *note)
{
	struct rename rn = {res, to};
	const char *from_p = res + strlen(PREFIX), *to_p = to + strlen(PREFIX);
	char *s;

	podres_foreach(j->t->spec, rename_one, &rn);
	s = easprintf("%s%s%s->%s", *value ? *value : "", *value ? "," : "",
		from_p, to_p);
	free(*value);
	*value = s;
	if (note->nfallback < MUTATE_MAX_NOTES) {
		snprintf(note->from[note->nfallback], sizeof note->from[0],
			"%s", from_p);
		snprintf(note->to[note->nfallback++], sizeof note->to[0], "%s",
			to_p);
	}
}

static void
judge_init(struct judge *j, const struct mutate_opts *o, struct avail *a,
	struct target *t, struct adm_verdict *v)
{
	const char *fb = mut_annotation(t->pod, MUTATE_FALLBACK_ANNOTATION);

	memset(j, 0, sizeof *j);
	j->o = o;
	j->a = a;
	j->t = t;
	j->v = v;
	j->disabled = fb &&
		(!strcmp(fb, "disabled") || !strcmp(fb, "false") ||
			!strcmp(fb, "off"));
	j->floor_name = mut_annotation(t->pod, MUTATE_MIN_ANNOTATION);
	j->floor_bad = j->floor_name && mig_parse(j->floor_name, &j->floor) < 0;
}

/* judge_all runs fallback over every resource of demand; returns the
 * annotation value (malloc'd) or NULL when nothing fell back. */
static char *
judge_all(struct judge *j, json_t *demand, struct mutate_note *note)
{
	json_t *names = json_array(), *name;
	char *value = NULL, *to;
	const char *res;
	json_t *n;
	size_t i;

	json_object_foreach(demand, res, n)
		json_array_append_new(names, json_string(res));
	json_array_foreach(names, i, name) {
		res = json_string_value(name);
		if (!(to = one(j, res,
			      (long)json_integer_value(
				      json_object_get(demand, res)))))
			continue;
		fall_back(j, res, to, &value, note);
		free(to);
	}
	json_decref(names);
	return value;
}

void
mutate_mig(const struct mutate_opts *o, struct avail *a, struct target *t,
	struct adm_verdict *v, struct mutate_note *note)
{
	json_t *demand = podres_demand(t->spec, PREFIX);
	struct judge j;
	char *value = NULL, *match;

	if (!json_object_size(demand)) {
		json_decref(demand);
		return;
	}
	judge_init(&j, o, a, t, v);
	avail_lock(a);
	if ((avail_synced_locked(a) & (AVAIL_NODES | AVAIL_PODS)) !=
		(AVAIL_NODES | AVAIL_PODS))
		adm_warn(v,
			"GPU inventory not synced yet: MIG requests left as asked");
	else if ((value = judge_all(&j, demand, note)))
		mut_set_annotation(t->pod, MUTATE_FALLBACK_ANNOTATION, value);
	if (t->is_pod && !t->r->dry_run) {
		json_decref(demand);
		demand = podres_demand(t->spec, PREFIX);
		match = avail_match_key(t->pod, t->r->namespace);
		avail_admit_locked(a, t->r->uid, match, demand);
		free(match);
	}
	avail_unlock(a);
	free(value);
	json_decref(demand);
}
