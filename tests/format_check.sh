#!/bin/sh
# Every C, C++ and BPF source of the tree (but the copied uapi headers) is as the tree's
# .clang-format lays it out. Fails naming the files that are not; skips (exit 77, counted as
# skipped by ctest) where clang-format is missing.
#   usage: format_check.sh SOURCE_DIR
set -u
cd "$1" || exit 1
command -v clang-format >/dev/null || { echo "SKIP: clang-format not installed (apt-get install clang-format)"; exit 77; }
bad=0
for f in $(git ls-files '*.c' '*.h' '*.cpp' '*.hpp' | grep -v '^user/uapi/'); do
	if ! clang-format --dry-run -Werror "$f" >/dev/null 2>&1; then
		echo "not formatted: $f (clang-format -i $f)"
		bad=$((bad + 1))
	fi
done
[ "$bad" = 0 ] && echo "every source is formatted ($(clang-format --version))"
[ "$bad" = 0 ]
