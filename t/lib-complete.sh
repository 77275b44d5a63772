# t/lib-complete.sh: the driver of the bash completion the tests of
# completion share (t/0028, t/9747; t/lib.sh is sourced first).

# comp WORD...: COMPREPLY, one a line, for `k8shazgpu WORD...` with the
# cursor at the end of the last word; COMP_WORDS split at "=" too, as
# bash splits them (COMP_WORDBREAKS).
comp() {
	bash -c '. "$1"; shift
		COMP_WORDS=()
		for a; do
			while [[ $a == *=* ]]; do
				[[ -z ${a%%=*} ]] || COMP_WORDS+=("${a%%=*}")
				COMP_WORDS+=("=")
				a=${a#*=}
			done
			[[ -z $a && ${COMP_WORDS[-1]} == = ]] || COMP_WORDS+=("$a")
		done
		COMP_CWORD=$((${#COMP_WORDS[@]} - 1)) COMP_LINE="$*" COMP_POINT=${#COMP_LINE}
		_k8shazgpu
		[ ${#COMPREPLY[@]} = 0 ] || printf "%s\n" "${COMPREPLY[@]}"' \
		bash "$TOP/scripts/completion/k8shazgpu.bash" k8shazgpu "$@"
}
