#!/bin/sh
# Every function and variable a C file of lib/ or of a tool's own engine
# (tools/NAME/) exports carries its file's prefix: the file's name, its
# module's (the name up to the first '_': ledger_mark is of ledger), or
# the short one the file's header, or its module's, names on its first
# line, "/* NAME (PFX_): ...". Read from the built objects, so a symbol a
# header forgets is still seen (names the compiler makes, __*, are not
# the code's). The allocation helpers of err.c (e*) are
# the one family without a prefix: every file uses them.
. "$(dirname "$0")/lib.sh"

cd "$TOP" || exit 1
# declared DIR NAME: the prefix NAME.h in DIR names, if any
declared() {
	[ -f "$1/$2.h" ] && sed -n '1s/^\/\* [a-z_0-9]* (\([a-z_0-9]*_\)): .*/\1/p' "$1/$2.h"
}
for c in lib/*.c tools/*/*.c; do
	d=$(dirname "$c") f=$(basename "$c" .c)
	m=${f%%_*}
	case $d in lib) o=$BUILD/lib/$f.o ;; *) o=$BUILD/$d/$f.o ;; esac
	pf=$(declared "$d" "$f") pm=
	[ "$m" = "$f" ] || pm=$(declared "$d" "$m")
	check_output "$c: every symbol it exports has its prefix (${f}_${pf:+, $pf}${pm:+, $pm}$([ "$m" = "$f" ] || echo ", ${m}_"))" \
		"nm -g --defined-only '$o' | awk '\$2 ~ /^[TDBRC]\$/ { print \$3 }' |
		awk -v f='$f' -v m='$m' -v pf='$pf' -v pm='$pm' '
			/^__/ || \$0 == f || \$0 == m { next }
			index(\$0, f \"_\") == 1 || index(\$0, m \"_\") == 1 { next }
			pf != \"\" && index(\$0, pf) == 1 { next }
			pm != \"\" && index(\$0, pm) == 1 { next }
			f == \"err\" && \$0 ~ /^e(asprintf|calloc|malloc|realloc|strdup)\$/ { next }
			{ print }'" </dev/null
done

# one prefix, one module: two modules never declare the same one
check_output 'no prefix is declared by two modules' \
	"for h in lib/*.h tools/*/*.h; do
		p=\$(sed -n '1s/^\/\* [a-z_0-9]* (\([a-z_0-9]*_\)): .*/\1/p' \"\$h\")
		[ -z \"\$p\" ] || echo \"\$p \$(basename \"\$h\" .h | sed 's/_.*//')\"
	done | sort -u | awk '{ n[\$1]++ } n[\$1] == 2 { print \"prefix\", \$1, \"declared by two modules\" }'" </dev/null
done_testing
