# cli-lib.sh: what the k8shazgpu command groups share, sourced (not run)
# by scripts/k8shazgpu-<group> from beside it or from libexec/k8shazgpu:
# the options every group spells alike, reading objects and printing
# tables.
# The sourcing script sets prog (its name in messages); cli_done sets
# kc_opt (the claim-watch options choosing the kubeconfig context, or
# empty) from ctx (--context, or empty); ns is -n, or empty.
# The variables these functions set and read are the sourcing script's.
# shellcheck shell=sh disable=SC2034,SC2154

# die MESSAGE [STATUS]: "PROG: MESSAGE" on stderr, exit STATUS (1);
# unless the sourcing script has a die of its own already (one defined
# after sourcing this file replaces this one). cli_take and cli_done
# call die with status 2.
command -v die >/dev/null 2>&1 || die() { printf '%s: %s\n' "$prog" "$1" >&2; exit "${2:-1}"; }

# jqdir: the jq programs (NAME.jq, loaded with jq -f, modules with -L),
# in jq/ beside this file: scripts/jq in the tree, libexec/k8shazgpu/jq
# once installed. The sourcing script found this file as $lib.
jqdir=${lib%/*}/jq

# ------------------------------------------------------------ options

# One grammar for the options of every group. An option with a value
# takes it in the next word or in its own: -n NS, -nNS, -n=NS,
# --namespace NS, --namespace=NS.

# cli_take "$@": the value of the option in $1 into v, the number of
# words it used (1 or 2) into n; "OPTION needs a value" (status 2) when
# no word follows -x or --name.
cli_take() {
	case $1 in
	--*=*) v=${1#*=} n=1 ;;
	-? | --*)
		[ $# -ge 2 ] || die "$1 needs a value" 2
		v=$2 n=2
		;;
	*) v=${1#-?} n=1 v=${v#=} ;;
	esac
}

# cli_word WORD: take WORD when it is, or completes, one of the global
# options the group takes, and fail for any other word. cli_takes names
# those options: namespace (-n, --namespace: ns), all (-A,
# --all-namespaces: all=1), output (-o, --output: output), context
# (--context: ctx). A value in the next word is taken with that word;
# cli_done then says when it is missing (-o's values as cli_outputs
# names them). Called word by word, so a group takes its global options
# before its own, or anywhere.
cli_takes='' cli_outputs='' cli_want='' cli_opt=''
cli_word() {
	if [ -n "$cli_want" ]; then
		cli_set "$cli_want" "$1"
		cli_want=
		return 0
	fi
	case $1 in
	-n | -n?* | --namespace | --namespace=*) cli_key=namespace ;;
	-A | --all-namespaces) cli_key=all ;;
	-o | -o?* | --output | --output=*) cli_key=output ;;
	--context | --context=*) cli_key=context ;;
	*) return 1 ;;
	esac
	case " $cli_takes " in *" $cli_key "*) ;; *) return 1 ;; esac
	case $1 in
	-A | --all-namespaces) all=1 ;;
	-? | --namespace | --output | --context) cli_want=$cli_key cli_opt=$1 ;;
	*)
		cli_take "$1"
		cli_set "$cli_key" "$v"
		;;
	esac
}

# cli_set KEY VALUE: the global option KEY's value.
cli_set() {
	case $1 in
	namespace) ns=$2 ;;
	output) output=$2 ;;
	context) ctx=$2 ;;
	esac
}

# cli_done: the global options are all read: a value missing from the
# last one is a usage error (2); kc_opt from ctx.
cli_done() {
	case $cli_want in
	namespace) die "$cli_opt needs a namespace" 2 ;;
	output) die "$cli_opt needs $cli_outputs" 2 ;;
	context) die "$cli_opt needs a name" 2 ;;
	esac
	kc_opt=
	[ -z "${ctx:-}" ] || kc_opt="--context $ctx"
}

# get RESOURCE [claim-watch options]: the objects, one JSON line each.
# claim-watch's own status is the function's (75: the API server is
# unreachable), not jq's.
get() {
	get_r=$1
	shift
	# shellcheck disable=SC2086
	get_out=$(claim-watch -1 $kc_opt "$@" "$get_r") || return
	[ -z "$get_out" ] || printf '%s\n' "$get_out" | jq -c .object
}

# table JQ: print objects through a jq program yielding arrays, as
# columns; tabs and line ends inside a cell become spaces, so a cell is
# never split. JQ may include the modules of jqdir.
table() {
	jq -L "$jqdir" -r "$1 | map(tostring | gsub(\"[\\t\\r\\n]\"; \" \")) | join(\"\\t\")" | awk -F '\t' '
		{ for (i = 1; i <= NF; i++) { cell[NR, i] = $i; if (length($i) > w[i]) w[i] = length($i) } n = NF > n ? NF : n }
		END { for (r = 1; r <= NR; r++) { line = ""
			for (i = 1; i <= n; i++) line = line sprintf(i < n ? "%-" w[i] + 3 "s" : "%s", cell[r, i])
			sub(/ +$/, "", line); print line } }'
}

# kube_namespace: -n, else the kubeconfig context's namespace (the files
# of KUBECONFIG, the first to say winning, as claim-watch reads them),
# else the pod's service account's, else default.
kube_namespace() {
	if [ -n "$ns" ]; then
		printf '%s\n' "$ns"
		return
	fi
	kn=$(
		IFS=:
		for f in ${KUBECONFIG:-${HOME:-/}/.kube/config}; do
			[ ! -f "$f" ] || yaml2json -s "$f" 2>/dev/null || :
		done | jq -r -s --arg ctx "$ctx" '
			(if $ctx != "" then $ctx else [.[]["current-context"] // empty | select(. != "")] | first end) as $c
			| [.[].contexts[]? | select(.name == $c)] | first | .context.namespace // empty'
	) || kn=
	if [ -z "$kn" ] && [ -z "${KUBECONFIG:-}" ] && [ ! -f "${HOME:-/}/.kube/config" ]; then
		kn=$(cat "${K8SHAZGPU_SERVICEACCOUNT_DIR:-/var/run/secrets/kubernetes.io/serviceaccount}/namespace" 2>/dev/null) || kn=
	fi
	printf '%s\n' "${kn:-default}"
}
