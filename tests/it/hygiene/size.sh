#!/bin/bash
# tests/it/hygiene/size.sh: the stressor stays readable (issue 12):
#   1. no file of the stressor (stress-ksm-unmerge.c and its private
#      stress-ksm-unmerge-*.h headers) is over 2,500 lines;
#   2. no function in them is over 100 lines (from the line of its name to
#      its closing brace; a function is a column-0 "{" ... "}" block).
# Canaries (a 2,501-line file, a 101-line function, a 100-line one) prove
# the checks flag what they should and nothing else.
#
# Exit: 0 pass, anything else fail (never skips).

cd "$(dirname "$0")/../../.." || exit 2
. tests/lib/checks.sh
tmp=$(mktemp -d /tmp/hyg-size.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
MAX_FILE=2500
MAX_FUNC=100
errors=0

# long_functions FILE: "FILE:LINE: NAME() is N lines" for each function
# over MAX_FUNC lines
long_functions() {
	awk -v max="$MAX_FUNC" -v file="$1" '
	/^[A-Za-z_].*\(/ && !/;[[:space:]]*$/ {
		if (match($0, /[A-Za-z_][A-Za-z0-9_]*\(/)) {
			name = substr($0, RSTART, RLENGTH - 1); start = NR
		}
	}
	/^\{$/ { open = 1 }
	/^\}$/ && open {
		if (NR - start + 1 > max)
			printf "%s:%d: %s() is %d lines (max %d)\n", file, start, name, NR - start + 1, max
		open = 0
	}' "$1"
}

# long_file FILE: "FILE is N lines" when FILE is over MAX_FILE lines
long_file() {
	local n
	n=$(wc -l <"$1")
	[ "$n" -le "$MAX_FILE" ] || echo "$1 is $n lines (max $MAX_FILE)"
}

# canary FILE BODY_LINES: a file with one function of BODY_LINES body lines
canary() {
	{
		echo "static int canary(void)"
		echo "{"
		for ((i = 0; i < $2; i++)); do echo "	(void)0;"; done
		echo "	return 0;"
		echo "}"
	} >"$1"
}
canary "$tmp/long.c" 97		# name, {, 97, return, } = 101 lines
canary "$tmp/ok.c" 96		# 100 lines
check [ -n "$(long_functions "$tmp/long.c")" ] || { echo "FAIL: a 101-line function is not flagged"; errors=$((errors + 1)); }
check [ -z "$(long_functions "$tmp/ok.c")" ] || { echo "FAIL: a 100-line function is flagged"; errors=$((errors + 1)); }
seq 1 $((MAX_FILE + 1)) >"$tmp/big.h"
check [ -n "$(long_file "$tmp/big.h")" ] || { echo "FAIL: a $((MAX_FILE + 1))-line file is not flagged"; errors=$((errors + 1)); }

files=(stress-ksm-unmerge.c stress-ksm-unmerge-*.h)
for f in "${files[@]}"; do
	out=$(long_file "$f"; long_functions "$f")
	check [ -z "$out" ] || { echo "FAIL: $out"; errors=$((errors + 1)); }
done
echo "checked ${#files[@]} files: max $MAX_FILE lines a file, $MAX_FUNC a function"
[ "$errors" = 0 ] || { echo "FAIL: $errors size checks failed"; exit 1; }
checks_done
