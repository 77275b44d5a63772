# bash completion for k8shazgpu(1) and kubectl-hazgpu: what
# `k8shazgpu __complete WORD... CURRENT` prints, one candidate a line;
# ":file" or ":dir" there asks for the names of files or directories.
# Installed as .../bash-completion/completions/k8shazgpu; or: source it.

# The words go to k8shazgpu as typed (split at blanks, from COMP_LINE),
# so --namespace=NS is one word; bash replaces only COMP_WORDS' current
# word, which "=" (in COMP_WORDBREAKS) may have cut from its option.
_k8shazgpu() {
	local cur=${COMP_WORDS[COMP_CWORD]} line=${COMP_LINE:0:COMP_POINT} prog out last pre='' IFS=$' \t\n'
	local -a words
	read -ra words <<<"$line"
	[[ -z $line || $line == *[[:space:]] ]] && words+=("")
	prog=${words[0]:-k8shazgpu}
	case $prog in
	*kubectl-hazgpu | *k8shazgpu) command -v "$prog" >/dev/null 2>&1 || prog=k8shazgpu ;;
	*) prog=k8shazgpu ;;
	esac
	out=$("$prog" __complete "${words[@]:1}" 2>/dev/null)
	last=${words[${#words[@]} - 1]}
	if [[ $last == -*=* ]]; then
		if [[ $cur == "=" ]]; then
			pre='='
		elif [[ $cur == "$last" ]]; then
			pre=${last%%=*}=
		fi
		last=${last#*=}
	fi
	COMPREPLY=()
	case $out in
	'') ;;
	:file)
		compopt -o filenames 2>/dev/null
		mapfile -t COMPREPLY < <(compgen -f -- "$last")
		;;
	:dir)
		compopt -o filenames 2>/dev/null
		mapfile -t COMPREPLY < <(compgen -d -- "$last")
		;;
	*) mapfile -t COMPREPLY <<<"$out" ;;
	esac
	[[ -z $pre ]] || COMPREPLY=("${COMPREPLY[@]/#/$pre}")
}
complete -F _k8shazgpu k8shazgpu kubectl-hazgpu
