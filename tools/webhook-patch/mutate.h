/* mutate (mut_): the admission policy of webhook-patch: RuntimeClass limits,
 * MIG-size fallback and our scheduler for strategy-annotated pods,
 * applied to a Pod or to the pod template of a workload, and answered as
 * a JSON Patch.
 *
 * Objects handled: Pod (CREATE only), and on CREATE and UPDATE the pod
 * template of Deployment, StatefulSet, ReplicaSet, DaemonSet (apps),
 * Job (batch: spec.template), CronJob (batch: spec.jobTemplate.spec.
 * template) and ReplicationController. A workload with a controlling
 * owner (a ReplicaSet of a Deployment, a Job of a CronJob) is left alone:
 * its owner was judged already, and changing a template its controller
 * made would make the controller make another. Subresources pass as
 * they are. Steps, in order:
 *
 * 1. With a default class (-R), a pod that asks for any nvidia.com/
 *    resource and names no runtimeClassName gets that class.
 * 2. RuntimeClass limits. The class's annotations limits.k8s.gpu/default
 *    (count of nvidia.com/gpu), limits.k8s.gpu/cpu and limits.k8s.gpu/
 *    memory bound the whole pod. A resource no container names is filled
 *    in: the limit is divided evenly over the regular containers (init
 *    containers are left alone), nvidia.com/gpu and memory in whole
 *    units, cpu in millicores, any remainder going one unit at a time to
 *    the first containers; a container whose share is 0 gets nothing;
 *    requests and limits are both set (not for a limit beyond 64 bits
 *    of those units). Then a pod asking for more than a limit (podres(3)
 *    totals, exact: quantity(3)) is refused with code 403 and a message
 *    per limit exceeded, e.g. "pod requests nvidia.com/gpu 2 > 1 allowed
 *    by RuntimeClass seeweb-nvidia-1xa6000 (limits.k8s.gpu/default)". A
 *    request or limit of a limited resource that is no quantity, is
 *    negative, or is 10^38 units or more refuses the pod too, naming the
 *    first such value per limit: "container c: limits.memory \"lots\" is
 *    not a quantity, so RuntimeClass x (limits.k8s.gpu/memory) cannot be
 *    checked" (10^38 and more under a smaller limit: "container c:
 *    limits.memory \"1e40\" > 32Gi allowed by ..."); so does a total of
 *    10^38 or more ("pod requests memory 1e38 or more > 32Gi allowed by
 *    ..."). With the gate option (-P) such a pod is admitted but held
 *    Pending by the scheduling gate gpu-webhook.k8s.io/runtimeclass-
 *    limits, with the message in the annotation gpu-webhook.k8s.io/
 *    refused and a warning.
 * 3. MIG fallback, on CREATE only. Each nvidia.com/mig-<profile> the pod
 *    asks for (as the scheduler totals it) that does not fit on one ready
 *    node (avail(3): free devices less waiting demand) is replaced, in
 *    the requests and limits of every container asking for it, by the
 *    first later profile of its chain (migchain(3)) of which the same
 *    count fits; the pod gets the annotation gpu-webhook.k8s.io/fallback:
 *    "2g.20gb->1g.10gb" (several joined by ","). For a template the count
 *    is multiplied by its replicas (Job: parallelism; beyond 2^31-1, which
 *    the API server refuses, taken as 2^31-1) and must fit in the
 *    cluster; counts are bounded as avail(3) says, and the product is
 *    exact. Pod annotations: gpu-webhook.k8s.io/fallback "disabled" (or
 *    "false", "off") turns fallback off; gpu-webhook.k8s.io/min-profile
 *    "2g.20gb" allows no profile smaller than that. When nothing fits the
 *    request stays as asked and a warning says why.
 * 4. A pod asking for MIG devices, unless the review is a dry run,
 *    counts as waiting demand until the watch shows it (avail(3)); it is
 *    not marked, so a pod that fits is allowed without a patch.
 * 5. Our scheduler, for a Pod on CREATE that is allowed (held by the gate
 *    included). A pod carrying agentaflow.gpu/scheduling-strategy or
 *    agentaflow.gpu/priority whose spec.schedulerName is absent, empty or
 *    "default-scheduler" gets schedulerName = ours (mutate_opts.scheduler)
 *    and the warning "pod scheduled by k8shazgpu (strategy S, priority
 *    P)": S the strategy's name as the sched engine spells it, or
 *    "default"; P the priority, 0 when absent. A malformed annotation (a
 *    strategy sched-pick(1) does not know; a priority that is no decimal
 *    integer in -2147483648..2147483647, as sched-bind(1) reads it)
 *    leaves the pod unchanged, with a warning per annotation naming the
 *    pod: "pod ns/p: annotation agentaflow.gpu/priority: \"high\" is not
 *    an integer; left to the default scheduler". A pod already naming
 *    ours is not patched (a malformed annotation is still said: "...;
 *    k8shazgpu uses its default"); a pod naming another scheduler is left
 *    alone; templates are not changed (their pods are judged when
 *    made). */
#ifndef HAZ_MUTATE_H
#define HAZ_MUTATE_H

#include "admission.h"
#include "avail.h"
#include "migchain.h"

#define MUTATE_FALLBACK_ANNOTATION "gpu-webhook.k8s.io/fallback"
#define MUTATE_MIN_ANNOTATION "gpu-webhook.k8s.io/min-profile"
#define MUTATE_REFUSED_ANNOTATION "gpu-webhook.k8s.io/refused"
#define MUTATE_GATE "gpu-webhook.k8s.io/runtimeclass-limits"
#define MUTATE_MAX_NOTES 8
#define MUTATE_STRATEGY_ANNOTATION "agentaflow.gpu/scheduling-strategy"
#define MUTATE_PRIORITY_ANNOTATION "agentaflow.gpu/priority"
#define MUTATE_SCHEDULER_DEFAULT "k8shazgpu"

struct mutate_opts {
	const struct migchain *chains;
	const char *default_class; /* -R, or NULL */
	int gate;              /* hold over-limit pods instead of refusing */
	const char *scheduler; /* our scheduler's name; NULL: the default */
};

/* What a decision did, for metrics. */
struct mutate_note {
	int nfallback;
	char from[MUTATE_MAX_NOTES][32], to[MUTATE_MAX_NOTES][32];
	const char *limit; /* first limit exceeded (annotation key), or NULL */
	int gated;
	/* the scheduler the pod was handed to, or NULL */
	const char *scheduler;
};

/* mutate_decide fills v (which starts allowed) for review r, reading and
 * updating a; note may be NULL. */
void mutate_decide(const struct mutate_opts *o, struct avail *a,
	const struct adm_request *r, struct adm_verdict *v,
	struct mutate_note *note);

#endif
