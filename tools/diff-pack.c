/* diff-pack: carry a vLLM checkout's changes to a pod that runs the
 * base's image, and apply them there.
 *
 * usage: diff-pack [-C dir] [-b ref] [--fetch] [-i image | -r repo]
 *                  [--check [-w n]] [-o packfile] [-x cap]
 *                  [-k prefix -n namespace [-l k=v]...] [-j]
 *        diff-pack -u [-d packdir | -f packfile] [-t tree] [-P pkgdir]
 *                  [-s sha256] [-q] [-c]
 *        diff-pack --install dest
 *
 * Pack mode finds the checkout around the directory, its base (the
 * merge-base with upstream's or origin's main), the image built from
 * the base (REPO:<base sha>; with --check asked of the registry,
 * walking back first parents until one has an image), and packs every
 * difference between the base's tree and the work tree: one pack
 * (diff-pack(1) gives its bytes), written to -o, and with -k the
 * ConfigMaps that carry it, one JSON object a line; then one
 * `checkout` record on stdout, always last.
 *
 * Unpack mode (-u) verifies a pack and applies it onto the image's
 * source tree and installed package; --install copies this binary to
 * DEST for an init container. Unpack mode with -c only judges the
 * pack, as far as no image is needed (the client's check before a run
 * is made of it). Built with -DDP_UNPACK_ONLY the tool does
 * only these two, links no libgit2 or libcurl, and links statically.
 *
 * Pack mode reads no file of the work tree through a symbolic link, and
 * refuses a pack whose paths unpack mode would refuse: the same checks
 * (dp_path), made before the pack is sent.
 *
 * Exit: 0 ok; 1 I/O error; 2 usage; 3 not a usable checkout, or no
 * target tree; 4 over the cap; 5 a corrupt pack, or one over 256 MiB;
 * 6 a base blob does not match; 7 a path or link target escapes the tree
 * (pack mode: one the unpacker would refuse); 8 no image for the base
 * (--check); 75 the registry or remote unreachable. */
#include <getopt.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dp_apply.h"
#include "err.h"
#include "nd.h"
#ifndef DP_UNPACK_ONLY
#include "dp_git.h"
#endif

#define USAGE                                                                   \
	"usage: diff-pack [-C dir] [-b ref] [--fetch] [-i image | -r repo] "    \
	"[--check [-w n]]\n"                                                    \
	"                 [-o packfile] [-x cap] [-k prefix -n namespace "      \
	"[-l k=v]...] [-j]\n"                                                   \
	"                 [--since state]\n"                                    \
	"       diff-pack -u [-d packdir | -f packfile] [-t tree] [-P pkgdir] " \
	"[-s sha256] [-S state] [-q] [-c]\n"                                    \
	"       diff-pack --install dest\n"

#define DEFAULT_REPO "public.ecr.aws/q9t5s3a7/vllm-ci-postmerge-repo"
#define DEFAULT_CAP "8M"
#define DEFAULT_TREE "/vllm-workspace"

enum { OPT_FETCH = 256, OPT_CHECK, OPT_INSTALL, OPT_SINCE };

static const struct option longopts[] = {
	{"fetch", no_argument, NULL, OPT_FETCH},
	{"check", no_argument, NULL, OPT_CHECK},
	{"install", required_argument, NULL, OPT_INSTALL},
	{"since", required_argument, NULL, OPT_SINCE},
	{"help", no_argument, NULL, 'h'},
	{"version", no_argument, NULL, 'V'},
	{NULL, 0, NULL, 0},
};

static void
help(void)
{
	fputs(USAGE, stdout);
	puts("pack mode (the default):\n"
	     "  -C DIR        a directory inside the checkout (default .)\n"
	     "  -b REF        the base ref or commit (default: upstream/main,\n"
	     "                else origin/main); the base is its merge-base\n"
	     "                with HEAD\n"
	     "  --fetch       fetch main of upstream (else origin) first\n"
	     "  -i IMAGE      the image, exactly (no walk back)\n"
	     "  -r REPO       the image repository (default\n"
	     "                $K8SHAZGPU_VLLM_IMAGE_REPO, else " DEFAULT_REPO
	     ")\n"
	     "  --check       ask the registry the image exists; without -i\n"
	     "                walk back first parents until one has an image\n"
	     "  -w N          commits tried by --check (default 30)\n"
	     "  -o PACKFILE   write the pack there (atomically)\n"
	     "  -x CAP        the most bytes a pack may have, up to 256M; K, M\n"
	     "                suffixes (default $K8SHAZGPU_PACK_CAP, else " DEFAULT_CAP
	     ")\n"
	     "  -k PREFIX     print the ConfigMaps PREFIX-0... carrying the "
	     "pack\n"
	     "  -n NAMESPACE  their namespace (with -k)\n"
	     "  -l K=V        a label on them (repeatable)\n"
	     "  -j            the record compact (it always is)\n"
	     "  --since STATE only what differs from a pod's tree, as its\n"
	     "                state file (diff-pack -u -S) says it is; the\n"
	     "                base is the state's\n"
	     "unpack mode:\n"
	     "  -u            verify and apply a pack\n"
	     "  -d PACKDIR    a directory of index.json and pack.NNN chunks\n"
	     "  -f PACKFILE   a pack file\n"
	     "  -t TREE       the source tree (default " DEFAULT_TREE ")\n"
	     "  -P PKGDIR     the installed vllm package (default: searched)\n"
	     "  -s SHA256     the pack's hash expected (default index.json's)\n"
	     "  -q            print no record\n"
	     "  -c            check only: verify the pack and judge its paths\n"
	     "                and links as -u does without the image; write\n"
	     "                nothing, open no tree\n"
	     "  -S STATE      keep in STATE what the packs made each path\n"
	     "                (for a later --since)\n"
	     "  --install DEST  copy this program to DEST (mode 0755)\n"
	     "  -h            this help;  -V  the version");
}

static void __attribute__((noreturn)) usage(const char *fmt, const char *arg)
{
	if (fmt)
		err_warn(fmt, arg);
	fputs(USAGE, stderr);
	exit(HAZ_USAGE);
}

/* What was given, for the checks between options. */
struct given {
	int pack, unpack, install;
	const char *pack_opt, *unpack_opt;
};

int
main(int argc, char **argv)
{
	struct dp_unpack_opts u = {.tree = DEFAULT_TREE};
	struct given g = {0};
	const char *install = NULL, *cap = NULL, *walk = NULL;
	const char *image = NULL, *repo = NULL, *prefix = NULL, *ns = NULL;
	const char *dir = NULL, *base = NULL, *out = NULL, *since = NULL;
	char **labels = NULL;
	size_t nlabels = 0;
	int c, fetch = 0, check = 0;
	static char pack_opt[3] = "-?", unpack_opt[3] = "-?";

	err_init(argv[0]);
	/* jansson draws its hash seed here, before any thread starts */
	json_object_seed(0);
	while ((c = getopt_long(argc, argv,
			"C:b:i:r:w:o:x:k:n:l:jud:f:t:P:s:S:qchV", longopts,
			NULL)) != -1) {
		if (c == OPT_FETCH || c == OPT_CHECK || c == OPT_SINCE ||
			(c < 128 && c > 0 && strchr("Cbirwoxknlj", c))) {
			g.pack = 1;
			pack_opt[1] = (char)c;
			g.pack_opt = c == OPT_FETCH ? "--fetch"
				: c == OPT_CHECK    ? "--check"
				: c == OPT_SINCE    ? "--since"
						    : pack_opt;
		} else if (c < 128 && c > 0 && strchr("dftPsSqc", c)) {
			unpack_opt[1] = (char)c;
			g.unpack_opt = unpack_opt;
		}
		switch (c) {
		case 'C': dir = optarg; break;
		case 'b': base = optarg; break;
		case OPT_FETCH: fetch = 1; break;
		case 'i': image = optarg; break;
		case 'r': repo = optarg; break;
		case OPT_CHECK: check = 1; break;
		case OPT_SINCE: since = optarg; break;
		case 'w': walk = optarg; break;
		case 'o': out = optarg; break;
		case 'x': cap = optarg; break;
		case 'k': prefix = optarg; break;
		case 'n': ns = optarg; break;
		case 'l':
			if (!strchr(optarg, '=') || optarg[0] == '=')
				usage("-l %s: not K=V", optarg);
			labels = erealloc(labels,
				(nlabels + 1) * sizeof *labels);
			labels[nlabels++] = optarg;
			break;
		case 'j': break;
		case 'u': g.unpack = 1; break;
		case 'd': u.dir = optarg; break;
		case 'f': u.file = optarg; break;
		case 't': u.tree = optarg; break;
		case 'P': u.pkgdir = optarg; break;
		case 's': u.sha256 = optarg; break;
		case 'q': u.quiet = 1; break;
		case 'c': u.check_only = 1; break;
		case 'S': u.state = optarg; break;
		case OPT_INSTALL:
			g.install = 1;
			install = optarg;
			break;
		case 'h': help(); return nd_finish(HAZ_OK);
		case 'V':
			puts("diff-pack " HAZ_VERSION);
			return nd_finish(HAZ_OK);
		default: usage(NULL, NULL);
		}
	}
	if (optind < argc)
		usage("%s: unexpected argument", argv[optind]);
	if (g.install) {
		if (g.pack || g.unpack || g.unpack_opt)
			usage("--install takes no other option", NULL);
		free(labels);
		return dp_install(install);
	}
	if (g.unpack) {
		if (g.pack)
			usage("%s: not an unpack option", g.pack_opt);
		if (!u.dir == !u.file)
			usage("-u needs one of -d PACKDIR or -f PACKFILE",
				NULL);
		free(labels);
		return nd_finish(dp_unpack(&u));
	}
	if (g.unpack_opt)
		usage("%s: an unpack option, without -u", g.unpack_opt);
#ifdef DP_UNPACK_ONLY
	(void)install, (void)cap, (void)walk, (void)image, (void)repo;
	(void)prefix, (void)ns, (void)dir, (void)base, (void)out;
	(void)fetch, (void)check, (void)since;
	free(labels);
	err_die(HAZ_USAGE, "this build only unpacks (-u)");
#else
	{
		struct dp_opts o = {.dir = dir,
			.base_ref = base,
			.fetch = fetch,
			.image = image,
			.check = check,
			.walk = 30,
			.out = out,
			.cm_prefix = prefix,
			.cm_ns = ns,
			.labels = labels,
			.nlabels = nlabels,
			.since = since};
		const char *env;
		char *end;
		long w;

		if (image && repo)
			usage("-i and -r: give one", NULL);
		if (since && (base || fetch || image || repo || check))
			usage("--since takes the base of the pod's state: no "
			      "-b, --fetch, -i, -r or --check",
				NULL);
		if (!prefix != !ns)
			usage("-k and -n go together", NULL);
		if (nlabels && !prefix)
			usage("-l needs -k", NULL);
		if (walk) {
			w = strtol(walk, &end, 10);
			if (!*walk || *end || w < 1 || w > 100000)
				usage("-w %s: not a number from 1 to 100000",
					walk);
			o.walk = (int)w;
		}
		env = getenv("K8SHAZGPU_VLLM_IMAGE_REPO");
		o.repo = repo ? repo : env && *env ? env : DEFAULT_REPO;
		if (!cap && (env = getenv("K8SHAZGPU_PACK_CAP")) && *env) {
			if (dp_parse_cap(env, &o.cap) < 0)
				usage("K8SHAZGPU_PACK_CAP=%s: not a size "
				      "from 1 to 256M (8M, 512K)",
					env);
		} else if (dp_parse_cap(cap ? cap : DEFAULT_CAP, &o.cap) < 0) {
			usage("-x %s: not a size from 1 to 256M (8M, 512K)",
				cap);
		}
		int st = dp_pack(&o);

		free(labels);
		return nd_finish(st);
	}
#endif
}
