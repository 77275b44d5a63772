# cli-lib.sh: what the k8shazgpu command groups share, sourced (not run)
# by scripts/k8shazgpu-<group> from beside it or from libexec/k8shazgpu:
# reading objects and printing tables.
# The sourcing script sets prog (its name in messages), kc_opt (the
# claim-watch options choosing the kubeconfig context, or empty), ns
# (-n, or empty) and ctx (--context, or empty).

# die MESSAGE [STATUS]: "PROG: MESSAGE" on stderr, exit STATUS (1).
die() { printf '%s: %s\n' "$prog" "$1" >&2; exit "${2:-1}"; }

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
# never split.
table() {
	jq -r "$1 | map(tostring | gsub(\"[\\t\\r\\n]\"; \" \")) | join(\"\\t\")" | awk -F '\t' '
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
