# complete.sh: `k8shazgpu __complete WORD... CURRENT`, the one source of
# the bash and zsh completions (scripts/completion/) and of kubectl's
# (kubectl_complete-hazgpu): the candidates for CURRENT, the last word,
# one a line, those that begin with it; or the line ":file" or ":dir"
# when a file or a directory is wanted there.
# Sourced by scripts/k8shazgpu after its usage, groups and group_path.
# Nothing here names a verb or an option: they are read from the usage
# texts (k8shazgpu -h; each group's -h, its --summary lines "  GROUP
# VERB ..." and, once a verb is typed, GROUP VERB -h), so an option a
# group adds to its usage is completed as it is. Read there:
#   "usage: PROG [VERB] SYNOPSIS" and lines under it that begin with
#                         blanks and "[" or "-": the options anywhere
#                         (VERB's, where the line names one)
#   "  VERB SYNOPSIS"    a verb (two blanks, then a lowercase word), its
#                         options, literal words and PLACEHOLDERS
#   "  -x, --long VALUE  ..."    options (-x the same as --long)
# where SYNOPSIS ends at two blanks (the description follows). An option
# takes a value when a word that is no option follows it inside its
# brackets ([-d 30m]) or without brackets (--gpus G). Values and
# placeholders name what is completed: a|b|c those words, namespace
# namespaces, NODE nodes, CLAIM ResourceClaims, RUN the claims of runs,
# WORKLOAD GPUWorkloads, NAME the cache's items (in `cache`) or the
# strategies (`strategy`), FILE, F and PATH files, DIR directories;
# --context the kubeconfig's contexts. Live names come from claim-watch
# -1 -t K8SHAZGPU_COMPLETE_TIMEOUT (1 s): a cluster that cannot be
# reached gives nothing, in about that long.
# shellcheck shell=sh disable=SC2154

# complete_spec [VERB]: the usage text on stdin as records, TAB-separated:
#   V VERB | F OWNER OPTION VALUE | L OWNER OPTION ALIAS
#   | S OWNER WORD OPTIONAL | A OWNER PLACEHOLDER WORDS
# OWNER is the verb ("" anywhere); VALUE is "" (none) or "?" (unnamed);
# WORDS are the literal words (|-joined) before the placeholder. A usage
# line that names a verb ("usage: PROG VERB ...") owns the options under
# it. With VERB, the text is VERB's own usage (GROUP VERB -h): every
# record is VERB's.
complete_spec() {
	awk -v own="${1:-}" '
	function strip(s) {
		sub(/^[[(]+/, "", s)
		while (s ~ /[]),.]$/) s = substr(s, 1, length(s) - 1)
		return s
	}
	# flags(owner, val): the options waiting in pend, all of value val
	function flags(owner, val,   k, p, i) {
		k = split(pend, p, " ")
		for (i = 1; i <= k; i++) printf "F\t%s\t%s\t%s\n", owner, p[i], val
		for (i = 2; i <= k; i++) printf "L\t%s\t%s\t%s\n", owner, p[1], p[i]
		pend = ""
	}
	function placeholders(owner,   i) {
		for (i = 1; i <= na; i++) printf "A\t%s\t%s\t%s\n", owner, ph[i], words
		na = 0
		words = ""
	}
	function synopsis(s, owner,   n, t, i, raw, tok, val, k, alt, j) {
		n = split(s, t, " ")
		words = ""
		na = 0
		pend = ""
		for (i = 1; i <= n; i++) {
			raw = t[i]
			tok = strip(raw)
			if (tok == "--") break
			if (raw == "|") {
				flags(owner, "")
				placeholders(owner)
			} else if (tok ~ /^--?[A-Za-z][A-Za-z0-9-]*$/) {
				pend = pend " " tok
				# "-g, --gpus N": -g is --gpus
				if (raw ~ /,$/ && i < n && t[i + 1] ~ /^--?[A-Za-z]/) continue
				val = ""
				if (raw !~ /[]),]$/ && i < n && t[i + 1] !~ /^[-[(|]/) {
					val = strip(t[++i])
					if (val == "") val = "?"
				}
				flags(owner, val)
			} else if (owner != "" && tok ~ /^[a-z][a-z0-9|-]*$/ && tok !~ /^(options|args|arg|command)$/) {
				flags(owner, "")
				k = split(tok, alt, "|")
				for (j = 1; j <= k; j++) printf "S\t%s\t%s\t%s\n", owner, alt[j], (raw ~ /^\[/ ? 1 : 0)
				words = words (words == "" ? "" : "|") tok
			} else if (tok ~ /^[A-Z]/) {
				flags(owner, "")
				sub(/[^A-Z_].*/, "", tok)
				ph[++na] = tok
			}
		}
		flags(owner, "")
		placeholders(owner)
	}
	/^usage: / {
		s = substr($0, 8)
		if (own != "") {
			# the words up to VERB are the command
			while (s != "" && s !~ ("^" own "( |$)")) sub(/^[^ ]+ */, "", s)
			sub(/^[^ ]+ */, "", s)
			base = own
		} else {
			sub(/^[^ ]+ */, "", s)
			base = ""
			if (s ~ /^[a-z][a-z0-9-]*( |$)/) {
				base = s
				sub(/ .*/, "", base)
				print "V\t" base
				sub(/^[^ ]+ */, "", s)
			}
		}
		owner = base
		synopsis(s, owner)
		next
	}
	/^  [a-z]/ && own == "" {
		s = substr($0, 3)
		owner = s
		sub(/ .*/, "", owner)
		print "V\t" owner
		sub(/^[^ ]+ */, "", s)
		sub(/  .*/, "", s)
		synopsis(s, owner)
		next
	}
	/^  -/ {
		s = substr($0, 3)
		sub(/  .*/, "", s)
		owner = base
		synopsis(s, owner)
		next
	}
	/^   +[[-]/ {
		s = $0
		sub(/^ +/, "", s)
		sub(/  .*/, "", s)
		synopsis(s, owner)
	}'
}

# complete_live RESOURCE [claim-watch options]: the names of its objects
# in the context typed (cctx), or nothing in time.
complete_live() {
	cl_r=$1
	shift
	claim-watch -1 -t "${K8SHAZGPU_COMPLETE_TIMEOUT:-1}" ${cctx:+--context "$cctx"} \
		"$@" "$cl_r" 2>/dev/null | jq -r '.object.metadata.name // empty' 2>/dev/null
}

# complete_cache_items [TYPE]: the names of the CachePlan's items (of
# TYPE: image, gitrepo or model).
complete_cache_items() {
	claim-watch -1 -t "${K8SHAZGPU_COMPLETE_TIMEOUT:-1}" ${cctx:+--context "$cctx"} \
		-f metadata.name=default cacheplans.canhazgpu.dev 2>/dev/null |
		jq -L "$jqdir" -r --arg t "${1:-}" 'include "cache"; .object.spec.items[]?
			| select($t == "" or word == $t) | .name' 2>/dev/null
}

# complete_contexts: the kubeconfig's contexts, as claim-watch finds it.
complete_contexts() {
	(
		IFS=:
		for f in ${KUBECONFIG:-${HOME:-/}/.kube/config}; do
			[ ! -f "$f" ] || yaml2json -s "$f" 2>/dev/null || :
		done
	) | jq -r '.contexts[]?.name // empty' 2>/dev/null
}

# complete_values VALUE OPTION: the candidates for the value of OPTION
# (or of a positional word, OPTION empty) that VALUE names.
complete_values() {
	if [ "$2" = --context ]; then
		complete_contexts
		return
	fi
	case $1 in
	*'|'*) printf '%s\n' "$1" | tr '|' '\n' ;;
	namespace | NAMESPACE) complete_live namespaces ;;
	NODE) complete_live nodes ;;
	CLAIM) complete_live resourceclaims.resource.k8s.io ${cns:+-n "$cns"} ;;
	RUN) complete_live resourceclaims.resource.k8s.io ${cns:+-n "$cns"} -l canhazgpu.dev/run ;;
	WORKLOAD) complete_live gpuworkloads.canhazgpu.dev ${cns:+-n "$cns"} ;;
	NAME)
		if [ "$cgroup" = cache ]; then
			case $csub in image | gitrepo | model) complete_cache_items "$csub" ;; *) complete_cache_items ;; esac
		elif [ -z "$cgroup" ] && [ "$cverb" = strategy ]; then
			# shellcheck disable=SC2086
			printf '%s\n' $STRATEGIES
		fi
		;;
	FILE | F | PATH) echo :file ;;
	DIR) echo :dir ;;
	esac
}

# complete_flag OPTION: "1 VALUE" when OPTION takes a value at this
# point (the options anywhere and the verb's), "0" when not, nothing
# when the usage does not name it. VALUE is the first the usage gives
# OPTION or an alias (-p, --provider), an a|b|c one rather than a name.
# The long spellings of the global options (cli-lib.sh's) are those of
# the short ones a usage names.
complete_flag() {
	case $1 in
	--namespace) set -- "$1" -n ;;
	--output) set -- "$1" -o ;;
	--all-namespaces) set -- "$1" -A ;;
	*) set -- "$1" "$1" ;;
	esac
	printf '%s\n' "$cspec" | awk -F '\t' -v o="$1" -v s="$2" -v v="$cverb" '
		$2 != "" && $2 != v { next }
		$1 == "L" && ($3 == o || $3 == s) { al[$4] = 1 }
		$1 == "L" && ($4 == o || $4 == s) { al[$3] = 1 }
		$1 == "F" { n++; fo[n] = $3; fv[n] = $4 }
		END {
			al[o] = 1
			al[s] = 1
			for (i = 1; i <= n; i++) {
				if (!(fo[i] in al)) continue
				if (!found) { best = fv[i]; found = 1 }
				else if (best != "" && best !~ /[|]/ && fv[i] ~ /[|]/) best = fv[i]
			}
			if (found) print (best == "" ? 0 : 1) "\t" best
		}'
}

# complete_words WORD... CURRENT: the candidates (the contract above).
complete_words() {
	[ $# -ge 1 ] || set -- ''
	cspec=$(usage | complete_spec)
	cgroup='' cverb='' csub='' npos=0 cns='' cctx='' want='' wantv='' dashdash=0
	while [ $# -gt 1 ]; do
		w=$1
		shift
		if [ -n "$want" ]; then
			case $wantv in namespace | NAMESPACE) cns=$w ;; esac
			[ "$want" != --context ] || cctx=$w
			want=''
			continue
		fi
		if [ $dashdash = 1 ]; then
			continue
		fi
		case $w in
		--) dashdash=1 ;;
		--*=* | -?*)
			opt=${w%%=*}
			case $opt in --*) ;; *) opt=$(printf '%.2s' "$w") ;; esac
			f=$(complete_flag "$opt")
			[ "${f%%"$TAB"*}" = 1 ] || continue
			fv=${f#*"$TAB"}
			if [ "$opt" = "$w" ]; then
				want=$opt wantv=$fv
			else
				v=${w#"$opt"}
				v=${v#=}
				case $fv in namespace | NAMESPACE) cns=$v ;; esac
				[ "$opt" != --context ] || cctx=$v
			fi
			;;
		*)
			if [ -z "$cverb" ] && printf '%s\n' "$cspec" | grep -q '^V'; then
				if [ -z "$cgroup" ] && g=$(group_path "$w") && [ -n "$g" ]; then
					# the group's usage, and the verbs of its summary
					cgroup=$w
					cspec=$(
						"$g" -h 2>/dev/null | complete_spec
						"$g" --summary 2>/dev/null | awk -v g="$w" '$1 == g && $2 ~ /^[a-z][a-z0-9-]*$/ { print "V\t" $2 }'
					)
				else
					cverb=$w
					# a group's verb: its own usage too (GROUP VERB -h)
					if [ -n "$cgroup" ] && printf '%s\n' "$cspec" | grep -qx "V$TAB$w" &&
						vh=$("$g" "$w" -h 2>/dev/null) && [ "${vh#usage: }" != "$vh" ]; then
						cspec=$(printf '%s\n%s\n' "$cspec" "$(printf '%s\n' "$vh" | complete_spec "$w")")
					fi
				fi
			else
				npos=$((npos + 1))
				[ $npos != 1 ] || csub=$w
			fi
			;;
		esac
	done
	cur=$1
	# --option=VALUE: VALUE is completed
	case $cur in
	-?*=*)
		if [ -z "$want" ] && [ $dashdash = 0 ]; then
			f=$(complete_flag "${cur%%=*}")
			if [ "${f%%"$TAB"*}" = 1 ]; then
				want=${cur%%=*} wantv=${f#*"$TAB"} cur=${cur#*=}
			fi
		fi
		;;
	esac
	{
		if [ -n "$want" ]; then
			complete_values "$wantv" "$want"
		elif [ $dashdash = 1 ]; then
			echo :file
		else
			case $cur in
			-*)
				printf '%s\n' "$cspec" | awk -F '\t' -v v="$cverb" '$1 == "F" && ($2 == "" || $2 == v) { print $3 }' ;;
			*)
				if [ -z "$cverb" ] && printf '%s\n' "$cspec" | grep -q '^V'; then
					printf '%s\n' "$cspec" | awk -F '\t' '$1 == "V" { print $2 }'
				else
					complete_positional
				fi
				;;
			esac
		fi
	} | awk -v c="$cur" 'NR == 1 && /^:(file|dir)$/ { print; exit } index($0, c) == 1 && !seen[$0]++'
}

# complete_positional: a word after the verb: the verb's literal words
# first (and its placeholders' values when those words are optional),
# then the values of the placeholders on the lines of the word chosen.
complete_positional() {
	if [ "$npos" = 0 ] && printf '%s\n' "$cspec" | awk -F '\t' -v v="$cverb" '$1 == "S" && $2 == v { f = 1 } END { exit !f }'; then
		printf '%s\n' "$cspec" | awk -F '\t' -v v="$cverb" '$1 == "S" && $2 == v { print $3 }'
		printf '%s\n' "$cspec" | awk -F '\t' -v v="$cverb" '$1 == "S" && $2 == v && $4 == 1 { f = 1 } END { exit !f }' || return 0
		ws=''
	elif printf '%s\n' "$cspec" | awk -F '\t' -v v="$cverb" -v s="$csub" '$1 == "S" && $2 == v && $3 == s { f = 1 } END { exit !f }'; then
		ws=$csub
	else
		ws=''
	fi
	printf '%s\n' "$cspec" | awk -F '\t' -v v="$cverb" -v s="$ws" '
		$1 == "A" && $2 == v && (s == "" || $4 == "" || index("|" $4 "|", "|" s "|")) && !seen[$3]++ { print $3 }' |
		while IFS= read -r ph; do
			complete_values "$ph" ''
		done
}
