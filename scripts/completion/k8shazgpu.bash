# bash completion for k8shazgpu(1) and kubectl-hazgpu: what
# `k8shazgpu __complete WORD... CURRENT` prints, one candidate a line;
# ":file" or ":dir" there asks for the names of files or directories.
# Installed as .../bash-completion/completions/k8shazgpu; or: source it.

_k8shazgpu() {
	local cur=${COMP_WORDS[COMP_CWORD]} prog=${COMP_WORDS[0]} out IFS=$'\n'
	case $prog in
	*kubectl-hazgpu | *k8shazgpu) command -v "$prog" >/dev/null 2>&1 || prog=k8shazgpu ;;
	*) prog=k8shazgpu ;;
	esac
	out=$("$prog" __complete "${COMP_WORDS[@]:1:COMP_CWORD}" 2>/dev/null)
	COMPREPLY=()
	case $out in
	'') ;;
	:file)
		compopt -o filenames 2>/dev/null
		mapfile -t COMPREPLY < <(compgen -f -- "$cur")
		;;
	:dir)
		compopt -o filenames 2>/dev/null
		mapfile -t COMPREPLY < <(compgen -d -- "$cur")
		;;
	*) mapfile -t COMPREPLY <<<"$out" ;;
	esac
}
complete -F _k8shazgpu k8shazgpu kubectl-hazgpu
