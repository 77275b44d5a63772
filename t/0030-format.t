#!/bin/sh
# The C files are formatted as .clang-format describes (`make format`
# rewrites them). Layout differs between clang-format releases; the
# configuration is tuned for clang-format 14, Debian bookworm's.
. "$(dirname "$0")/lib.sh"

command -v clang-format >/dev/null ||
	skip_all 'clang-format is not installed (scripts/deps installs it)'
v=$(clang-format --version | sed -n 's/.*version \([0-9]*\).*/\1/p')
[ "$v" = 14 ] || skip_all "clang-format $v lays out code otherwise than 14"

cd "$TOP" || exit 1
for f in lib/*.[ch] tools/*.c tools/*/*.[ch] t/unit/*.c t/fuzz/*.[ch] bench/*.c; do
	check "$f is formatted" "clang-format --dry-run -Werror '$f'"
done

done_testing
