#!/bin/bash
# tests/it/hygiene/size.sh: the stressor is the one file stress-ng would
# merge (issue 19):
#   1. stress-ksm-unmerge.c is at most MAX_FILE lines (raised with each
#      check that needed lines, the reason beside it; the goal is 5,000:
#      the core helpers stress-ng already has, replacing the stressor's own,
#      are to bring it back there);
#   2. there is no stress-ksm-unmerge-*.h (no code in private headers: the
#      whole stressor is the .c);
#   3. no function in it is over 100 lines (from the line of its name to
#      its closing brace; a function is a column-0 "{" ... "}" block);
#   4. at most 2 % of its lines are wider than 100 columns (tabs every 8),
#      as stress-ng's are within 100: what is left is long format strings
#      a break would make harder to grep.
# Canaries (a MAX_FILE + 1-line file, a header beside the stressor, a 101-line
# function, a 100-line one, 2 and 3 wide lines in 100, a line of exactly 100
# columns, tabs counted as 8) prove the checks flag what they should and
# nothing else.
#
# Exit: 0 pass, anything else fail (never skips).
# run-tests: no KSM lock (it never touches the host's KSM)

cd "$(dirname "$0")/../../.." || exit 2
. tests/lib/checks.sh
tmp=$(mktemp -d /tmp/hyg-size.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
STRESSOR_SRC=stress-ksm-unmerge.c
MAX_FILE=7729	# 7,709 before the zap child's death by a signal of its own failed the run (+19); one short-merge predicate (+1)
MAX_FUNC=100
MAX_COLS=100
MAX_PCT=2
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

# wide FILE: the number of FILE's lines over MAX_COLS columns
wide() {
	expand -t8 "$1" | awk -v max="$MAX_COLS" 'length > max { n++ } END { print n + 0 }'
}

# too_wide FILE: "FILE: W of N lines over MAX_COLS columns" when W is over
# MAX_PCT % of N
too_wide() {
	local w n
	w=$(wide "$1")
	n=$(wc -l <"$1")
	[ $((w * 100)) -le $((n * MAX_PCT)) ] ||
		echo "$1: $w of $n lines over $MAX_COLS columns (max $MAX_PCT %)"
}

# headers DIR: the stressor's private headers in DIR
headers() {
	ls "$1"/stress-ksm-unmerge-*.h 2>/dev/null
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
seq 1 $((MAX_FILE + 1)) >"$tmp/big.c"
check [ -n "$(long_file "$tmp/big.c")" ] || { echo "FAIL: a $((MAX_FILE + 1))-line file is not flagged"; errors=$((errors + 1)); }
seq 1 "$MAX_FILE" >"$tmp/fits.c"
check [ -z "$(long_file "$tmp/fits.c")" ] || { echo "FAIL: a $MAX_FILE-line file is flagged"; errors=$((errors + 1)); }
: >"$tmp/stress-ksm-unmerge-racer.h"
{ printf '%0101d\n' 0 0; seq 1 98; } >"$tmp/wide2.c"		# 2 % wide
{ printf '%0101d\n' 0 0 0; seq 1 97; } >"$tmp/wide3.c"	# 3 % wide
check [ -z "$(too_wide "$tmp/wide2.c")" ] || { echo "FAIL: 2 wide lines in 100 are flagged"; errors=$((errors + 1)); }
check [ -n "$(too_wide "$tmp/wide3.c")" ] || { echo "FAIL: 3 wide lines in 100 are not flagged"; errors=$((errors + 1)); }
printf '%0100d\n' 0 >"$tmp/edge.c"
check [ "$(wide "$tmp/edge.c")" = 0 ] || { echo "FAIL: a 100-column line counts as wide"; errors=$((errors + 1)); }
printf '\t\t%093d\n' 0 >"$tmp/tabs.c"	# 16 + 93 = 109 columns in 95 characters
check [ "$(wide "$tmp/tabs.c")" = 1 ] || { echo "FAIL: a tab is not counted as 8 columns"; errors=$((errors + 1)); }
check [ -n "$(headers "$tmp")" ] || { echo "FAIL: a stress-ksm-unmerge-*.h is not found"; errors=$((errors + 1)); }

check [ -f "$STRESSOR_SRC" ] || { echo "FAIL: no $STRESSOR_SRC"; exit 1; }
out=$(long_file "$STRESSOR_SRC")
check [ -z "$out" ] || { echo "FAIL: $out"; errors=$((errors + 1)); }
out=$(headers .)
check [ -z "$out" ] || { echo "FAIL: private headers beside the stressor (the whole stressor is $STRESSOR_SRC): $(echo $out)"; errors=$((errors + 1)); }
out=$(too_wide "$STRESSOR_SRC")
check [ -z "$out" ] || { echo "FAIL: $out"; errors=$((errors + 1)); }
out=$(long_functions "$STRESSOR_SRC")
check [ -z "$out" ] || { echo "FAIL: functions over $MAX_FUNC lines:"; echo "$out"; errors=$((errors + 1)); }
echo "$STRESSOR_SRC: $(wc -l <"$STRESSOR_SRC") lines (max $MAX_FILE), $(headers . | wc -l) private headers (max 0), longest function $(MAX_FUNC=0 long_functions "$STRESSOR_SRC" | sed 's/.* is \([0-9]*\) lines.*/\1/' | sort -n | tail -1) lines (max $MAX_FUNC), $(wide "$STRESSOR_SRC") lines over $MAX_COLS columns (max $MAX_PCT %)"
[ "$errors" = 0 ] || { echo "FAIL: $errors size checks failed"; exit 1; }
checks_done
