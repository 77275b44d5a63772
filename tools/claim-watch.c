/* claim-watch: list, then watch, any Kubernetes resource as NDJSON.
 *
 *   claim-watch [-1Asv] [-n namespace] [-l selector] [-f selector]
 *               [-c count] [-t seconds] [-L limit] [-r seconds]
 *               [--context name] [--kubeconfig file] resource
 *   claim-watch -g name [-n namespace] [--context name]
 *               [--kubeconfig file] resource
 *   claim-watch [-v] [-c count] -R file
 *   claim-watch -F pod [-C container] [-n namespace] [-t seconds]
 *               [-r seconds] [--context name] [--kubeconfig file]
 *
 * resource is named as kubectl names it: pods, po, deployments.apps,
 * apps/v1/deployments, resourceslices.resource.k8s.io,
 * gpuworkloads.canhazgpu.dev. The API server and credentials come from
 * the kubeconfig (see kubeconfig.h): --kubeconfig, $KUBECONFIG,
 * ~/.kube/config, or the in-cluster service account.
 *
 * Output is one watch event per line, {"type":"ADDED|MODIFIED|DELETED",
 * "object":{...}}, flushed per line. First the current objects, each as
 * ADDED (listed in pages of -L items), then every change as it happens.
 * With -1 it stops after the list; with -s the list is followed by one
 * line {"type":"SYNCED"}, so a consumer knows it has seen every object
 * once (relists after 410 Gone print none). A watched object is printed as the
 * bytes the server sent (whitespace between tokens dropped): each line
 * is checked by js_scan, not parsed into objects (see watch.h).
 *
 * A dropped connection or a restarted API server is resumed from the
 * last resourceVersion seen (bookmarks are asked for and followed, not
 * printed), so nothing is lost or repeated. When the server answers 410
 * Gone (that version is compacted away), the collection is listed again
 * and only the difference from what was printed comes out: ADDED for new
 * objects, MODIFIED for changed ones, DELETED with the last state printed
 * for vanished ones. A stream line that is not a watch event is reported
 * with its URL, line and byte offset, and the watch resumes.
 *
 * -g gets the one object named (one GET, which RBAC may grant where it
 * grants no list) and prints it as ADDED, as -1 -f metadata.name=NAME
 * would list it: nothing when there is none.
 *
 * -R replays a captured stream (the raw lines of a GET ...?watch=1, or
 * claim-watch's own output; - for stdin) through the same line handler:
 * the same events come out, the same warnings name the file instead of
 * the URL. An ERROR event is warned about and skipped, there being no
 * server to list again from.
 *
 * -F follows the log of a pod's container (-C, needed when the pod has
 * several): the bytes of GET .../pods/POD/log?follow=true go to stdout
 * as they come, not JSON, until the stream ends: the container exited.
 * Until the pod's status says the container runs or has run (not before
 * it is scheduled, while its image is pulled or init containers run, or
 * while the kubelet does not know it yet), the pod is looked at again
 * every 0.5 s for up to -r seconds (then status 1).
 *
 * EXIT STATUS: 0 after -1, -c count events, -t seconds, or the end of a
 * replay, or when -F's stream ended; 1 on a configuration error, a pod
 * that does not exist or a container that did not start, an API error (403, no
 * such resource...), when bad stream lines (or, replaying, ERROR events) were
 * met, or the replay file cannot be read; 2 on bad usage; 75 when the
 * API server is unreachable, overloaded, or stayed so for -r seconds
 * while watching. */
#include <fcntl.h>
#include <getopt.h>
#include <signal.h>
#include <time.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "clock.h"
#include "err.h"
#include "kube.h"
#include "kubeconfig.h"
#include "nd.h"
#include "opt.h"
#include "watch.h"

struct opts {
	const char *namespace;
	int all_namespaces;
	const char *labels, *fields;
	const char *context, *kubeconfig;
	const char *resource;
	const char *replay;     /* -R file, or NULL */
	const char *get;        /* -g name, or NULL */
	const char *follow;     /* -F pod, or NULL */
	const char *container;  /* -C container, or NULL */
	const char *server_opt; /* the first option -R excludes, or NULL */
	long count;             /* 0: no limit */
	double timeout;         /* 0: none */
	long limit;
	double give_up;
	int list_only, verbose, synced;
	int paged; /* -L was given */
};

static const char usage_text[] =
	"usage: claim-watch [-1Asv] [-n namespace] [-l selector] [-f selector]\n"
	"                   [-c count] [-t seconds] [-L limit] [-r seconds]\n"
	"                   [--context name] [--kubeconfig file] resource\n"
	"       claim-watch -g name [-n namespace] [--context name]\n"
	"                   [--kubeconfig file] resource\n"
	"       claim-watch [-v] [-c count] -R file\n"
	"       claim-watch -F pod [-C container] [-n namespace] [-t seconds]\n"
	"                   [-r seconds] [--context name] [--kubeconfig file]\n";

static const char help_text[] =
	"List, then watch, a Kubernetes resource; one watch event per line.\n"
	"\n"
	"  -1              list only (ADDED per object), then exit\n"
	"  -g name         get the object named name only (ADDED; nothing if none)\n"
	"  -A              all namespaces\n"
	"  -s              print {\"type\":\"SYNCED\"} once the first list is out\n"
	"  -n namespace    this namespace (default: the kubeconfig's)\n"
	"  -l selector     label selector, as kubectl -l\n"
	"  -f selector     field selector, as kubectl --field-selector\n"
	"  -c count        exit after count events\n"
	"  -t seconds      exit (status 0) after seconds\n"
	"  -L limit        list in pages of limit objects (default 500)\n"
	"  -r seconds      keep reconnecting for seconds (default 300)\n"
	"  -v              say on stderr when (re)connecting\n"
	"  -R, --replay f  replay the watch stream captured in f (- for stdin)\n"
	"  -F, --follow p  print the log of pod p as it comes, until it ends\n"
	"  -C, --container c  with -F: the container (default: the only one)\n" OPT_KUBE_HELP;

/* number parses a positive number, at most 1e9, for option c, or
 * exits 2. */
static double
number(int c, const char *s, int whole)
{
	return opt_number(c, s, 0, 1e9, OPT_POSITIVE | whole, usage_text);
}

/* server_option names option c in messages. */
static const char *
server_option(int c)
{
	static char flag[] = "-?";

	if (c == OPT_CONTEXT)
		return "--context";
	if (c == OPT_KUBECONFIG)
		return "--kubeconfig";
	flag[1] = (char)c;
	return flag;
}

/* replay_usage exits 2 unless the options fit -R: no resource, nothing
 * that concerns a server. */
static void
replay_usage(const struct opts *o, int operands)
{
	if (o->server_opt) {
		err_warn("-R and %s exclude each other", o->server_opt);
		opt_usage(usage_text);
	}
	if (operands) {
		err_warn("-R takes no resource");
		opt_usage(usage_text);
	}
}

/* follow_usage exits 2 unless the options fit -F: no resource, only
 * -C, -n, -t, -r, -v and the kubeconfig's. */
static void
follow_usage(const struct opts *o, int operands)
{
	if (!o->follow) {
		err_warn("-C goes with -F only");
		opt_usage(usage_text);
	}
	if (operands || o->all_namespaces || o->synced || o->labels ||
		o->fields || o->count || o->list_only || o->get || o->paged) {
		err_warn("-F goes with -C, -n, -t, -r, -v, --context, "
			 "--kubeconfig only");
		opt_usage(usage_text);
	}
}

static void
parse(int argc, char **argv, struct opts *o)
{
	static const struct option longs[] = {
		OPT_KUBE_LONGS,
		{"help", no_argument, NULL, 'h'},
		{"replay", required_argument, NULL, 'R'},
		{"follow", required_argument, NULL, 'F'},
		{"container", required_argument, NULL, 'C'},
		{NULL, 0, NULL, 0},
	};
	int c;

	*o = (struct opts){.limit = 500, .give_up = 300};
	while ((c = getopt_long(argc, argv, "1Asn:l:f:c:t:L:r:R:g:F:C:vhV",
			longs, NULL)) != -1) {
		if (!o->server_opt &&
			(c == OPT_CONTEXT || c == OPT_KUBECONFIG ||
				(c > 0 && c < 256 &&
					strchr("1AsnlftLrgFC", c))))
			o->server_opt = server_option(c);
		switch (c) {
		case '1': o->list_only = 1; break;
		case 'A': o->all_namespaces = 1; break;
		case 's': o->synced = 1; break;
		case 'n': o->namespace = optarg; break;
		case 'l': o->labels = optarg; break;
		case 'f': o->fields = optarg; break;
		case 'c': o->count = (long)number(c, optarg, OPT_WHOLE); break;
		case 't': o->timeout = number(c, optarg, 0); break;
		case 'L':
			o->limit = (long)number(c, optarg, OPT_WHOLE);
			o->paged = 1;
			break;
		case 'r': o->give_up = number(c, optarg, 0); break;
		case 'v': o->verbose = 1; break;
		case OPT_CONTEXT: o->context = optarg; break;
		case OPT_KUBECONFIG: o->kubeconfig = optarg; break;
		case 'F': o->follow = optarg; break;
		case 'C': o->container = optarg; break;
		case 'R': o->replay = optarg; break;
		case 'g': o->get = optarg; break;
		case 'h':
			fputs(usage_text, stdout);
			fputs(help_text, stdout);
			exit(nd_finish(HAZ_OK));
		case 'V':
			puts("claim-watch " HAZ_VERSION);
			exit(nd_finish(HAZ_OK));
		default: opt_usage(usage_text);
		}
	}
	if (o->replay) {
		replay_usage(o, argc - optind);
		return;
	}
	if (o->follow || o->container) {
		follow_usage(o, argc - optind);
		return;
	}
	if (optind != argc - 1)
		opt_usage(usage_text);
	if (o->all_namespaces && o->namespace) {
		err_warn("-A and -n exclude each other");
		opt_usage(usage_text);
	}
	if (o->get &&
		(o->all_namespaces || o->synced || o->labels || o->fields ||
			o->count || o->timeout)) {
		err_warn("-g goes with -n, -v, --context, --kubeconfig only");
		opt_usage(usage_text);
	}
	o->resource = argv[optind];
}

struct sink {
	long emitted, count;
};

/* print writes one watch event, {"type":TYPE,"object":JS}, flushed;
 * returns nonzero once count are out. */
static int
print(const char *type, const char *js, size_t len, void *arg)
{
	struct sink *s = arg;

	if (printf("{\"type\":\"%s\",\"object\":", type) < 0 ||
		fwrite(js, 1, len, stdout) != len ||
		fputs("}\n", stdout) == EOF || fflush(stdout) == EOF)
		err_die(HAZ_FAIL, "<stdout>: write error:");
	return s->count && ++s->emitted >= s->count;
}

/* collection returns the path to list and watch, per the options; with
 * -g, the path of the object named. */
static char *
collection(struct kube *k, struct kc_config *cfg, const struct opts *o,
	struct kube_error *e)
{
	struct kube_resource r;
	const char *ns = NULL;
	char *path;

	if (kube_resolve(k, o->resource, &r, e) < 0)
		return NULL;
	if (!o->all_namespaces)
		ns = o->namespace ? o->namespace : cfg->namespace;
	path = kube_path(&r, ns, o->get);
	kube_resource_free(&r);
	return path;
}

/* synced writes the line that ends the first list; a write error ends
 * the tool, as for events. */
static void
synced(void)
{
	if (fputs("{\"type\":\"SYNCED\"}\n", stdout) == EOF ||
		fflush(stdout) == EOF)
		err_die(HAZ_FAIL, "write error:");
}

/* get_one prints the object at path as an ADDED event; one that does not
 * exist (404) is no error, only nothing printed. */
static void
get_one(struct kube *k, const char *path, struct kube_error *e)
{
	struct sink sink = {0, 0};
	json_t *obj = kube_get(k, path, e);
	char *js;

	if (!obj) {
		if (e->kind == KUBE_EAPI && e->status == 404)
			*e = (struct kube_error){0};
		return;
	}
	if (!(js = json_dumps(obj, JSON_COMPACT)))
		err_die(HAZ_FAIL, "out of memory");
	print("ADDED", js, strlen(js), &sink);
	free(js);
	json_decref(obj);
}

static int
run(struct kube *k, struct kc_config *cfg, const struct opts *o)
{
	struct sink sink = {0, o->count};
	struct kube_error e = {0};
	struct watch_opts wo = {NULL, o->labels, o->fields, o->limit,
		o->give_up, o->verbose, 0};
	struct watch *w = NULL;
	char *path;
	int status = HAZ_OK;

	if (!(path = collection(k, cfg, o, &e)))
		goto out;
	if (o->get) {
		get_one(k, path, &e);
		free(path);
		goto out;
	}
	wo.path = path;
	w = watch_new_raw(k, &wo, print, &sink);
	if (watch_list(w, &e) == 0 && !o->list_only &&
		!(sink.count && sink.emitted >= sink.count)) {
		if (o->synced)
			synced();
		watch_run(w, &e);
	}
	free(path);
out:
	if (e.kind != KUBE_OK && e.kind != KUBE_EDEADLINE)
		err_warn("%s", e.msg);
	status = kube_exit_status(&e);
	if (status == HAZ_OK && w && watch_bad(w))
		status = HAZ_FAIL;
	watch_free(w);
	return status;
}

/* ---- -F: a pod's log ----------------------------------------------- */

/* log_bytes writes the log's bytes as they come, flushed, so that a
 * follower sees them at once. */
static int
log_bytes(const char *p, size_t n, void *arg, struct kube_error *e)
{
	int *wrote = arg;

	(void)e;
	if (fwrite(p, 1, n, stdout) != n || fflush(stdout) == EOF)
		err_die(HAZ_FAIL, "<stdout>: write error:");
	*wrote = 1;
	return 0;
}

enum { UNSCHEDULED, WAITING, STARTED };

/* stage tells, from the pod at path, how far container c (NULL: the
 * pod's only one) has come: UNSCHEDULED without a node; WAITING with no
 * status yet (the kubelet may not know the pod) or waiting with nothing
 * run before, the waiting reason in why; STARTED once it runs, ran, or
 * when c is NULL and the pod has several containers (the log request says
 * why not). -1 when the GET fails, e filled. */
static int
stage(struct kube *k, const char *path, const char *c, char *why, size_t whysz,
	struct kube_error *e)
{
	json_t *pod = kube_get(k, path, e), *spec, *sts, *st, *cs;
	const char *node;
	size_t i;
	int at = WAITING;

	if (!pod)
		return -1;
	snprintf(why, whysz, "no status yet");
	spec = json_object_get(pod, "spec");
	node = json_string_value(json_object_get(spec, "nodeName"));
	cs = json_object_get(spec, "containers");
	if (!node || !*node)
		at = UNSCHEDULED;
	else if (!c && json_array_size(cs) != 1)
		at = STARTED;
	if (!c)
		c = json_string_value(
			json_object_get(json_array_get(cs, 0), "name"));
	sts = json_object_get(json_object_get(pod, "status"),
		"containerStatuses");
	json_array_foreach(sts, i, st) {
		const char *n = json_string_value(json_object_get(st, "name"));
		json_t *state = json_object_get(st, "state");
		const char *r = json_string_value(
			json_object_get(json_object_get(state, "waiting"),
				"reason"));

		if (at != WAITING || !n || !c || strcmp(n, c) != 0)
			continue;
		if (json_object_get(state, "running") ||
			json_object_get(state, "terminated") ||
			json_object_get(json_object_get(st, "lastState"),
				"terminated"))
			at = STARTED;
		else
			snprintf(why, whysz, "waiting: %s",
				r ? r : "no reason");
	}
	json_decref(pod);
	return at;
}

/* follow prints the log of o->follow until its stream ends. While the
 * pod is not scheduled or its container has not started, by the pod's
 * status (the kubelet refuses a log it does not have yet, in words that
 * vary), it looks again every 0.5 s for up to -r seconds. */
static int
follow(struct kube *k, struct kc_config *cfg, const struct opts *o)
{
	static const struct timespec pause = {0, 500000000L};
	const char *ns = o->namespace ? o->namespace : cfg->namespace;
	char *ens = kube_escape(ns), *epod = kube_escape(o->follow);
	char *pod = easprintf("/api/v1/namespaces/%s/pods/%s", ens, epod);
	char *log = easprintf("%s/log", pod);
	double until = clock_mono() + o->give_up;
	struct kube_error e = {0};
	char why[128];
	int wrote = 0, at, status;

	kube_query(&log, "follow", "true");
	if (o->container)
		kube_query(&log, "container", o->container);
	for (;;) {
		if ((at = stage(k, pod, o->container, why, sizeof why, &e)) < 0)
			break;
		if (at == STARTED) {
			kube_stream_bytes(k, log, log_bytes, &wrote, &e);
			break;
		}
		if (clock_mono() + 0.5 > until) {
			if (at == UNSCHEDULED)
				err_warn("pod %s/%s: not scheduled after %g s",
					ns, o->follow, o->give_up);
			else
				err_warn("pod %s/%s: container not started "
					 "after %g s: %s",
					ns, o->follow, o->give_up, why);
			e = (struct kube_error){.kind = KUBE_EAPI};
			break;
		}
		if (kube_seconds_left(k) < 0.5) {
			e = (struct kube_error){.kind = KUBE_EDEADLINE};
			break;
		}
		nanosleep(&pause, NULL);
	}
	if (e.kind != KUBE_OK && e.kind != KUBE_EDEADLINE && e.msg[0])
		err_warn("%s", e.msg);
	status = kube_exit_status(&e);
	free(log);
	free(pod);
	free(epod);
	free(ens);
	return status;
}

/* replay runs the stream captured in o->replay through a watcher. */
static int
replay(const struct opts *o)
{
	struct sink sink = {0, o->count};
	struct watch_opts wo = {.verbose = o->verbose};
	struct kube_error e;
	struct watch *w;
	const char *name = o->replay;
	int fd = STDIN_FILENO, status = HAZ_OK;

	if (strcmp(name, "-") == 0)
		name = "<stdin>";
	else if ((fd = open(name, O_RDONLY)) < 0) {
		err_warn("%s:", name);
		return HAZ_FAIL;
	}
	w = watch_new_raw(NULL, &wo, print, &sink);
	if (watch_replay(w, fd, name, &e) < 0) {
		err_warn("%s", e.msg);
		status = HAZ_FAIL;
	}
	if (watch_bad(w))
		status = HAZ_FAIL;
	watch_free(w);
	if (fd != STDIN_FILENO)
		close(fd);
	return status;
}

int
main(int argc, char **argv)
{
	struct kc_config cfg;
	struct opts o;
	struct kube *k;
	int status;

	err_init(argv[0]);
	parse(argc, argv, &o);
	signal(SIGPIPE, SIG_IGN);
	if (o.replay)
		return nd_finish(replay(&o));
	if (kc_load(&cfg, o.kubeconfig, o.context) < 0)
		return nd_finish(HAZ_FAIL);
	k = kube_new(&cfg);
	if (o.timeout > 0)
		kube_set_deadline(k, o.timeout);
	status = o.follow ? follow(k, &cfg, &o) : run(k, &cfg, &o);
	kube_free(k);
	kc_free(&cfg);
	return nd_finish(status);
}
