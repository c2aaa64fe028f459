#!/bin/bash
# run-tests: no KSM lock (the builds run without it; each stress-ng run takes it).
# tests/it/build/stress-ng-series.sh: the stress-ng series, patch by patch,
# in a real stress-ng tree.  Fetches nothing: runs only when STRESS_NG_TREE
# names a stress-ng git clone (skips otherwise, so CI skips it).  Long: the
# check builds all of stress-ng after the first patch and again after each
# patch that changes core-opts.h (a few full builds of 5-10 min on 2 vCPUs; ccache
# helps a second run): run with TEST_TIMEOUT=5400.
#
# tools/integrate/stress-ng-integrate --series DIR --check writes the series (the core
# patches of tools/integrate/stress-ng-patches, then one patch per entry of
# tools/integrate/stress-ng-series) and applies it with git am to a clone of
# STRESS_NG_TREE at its base (STRESS_NG_SERIES_WORK, default
# /tmp/stress-ng-ksm-unmerge-series, kept between runs), patch by patch:
# make PEDANTIC=1 with gcc, no warning from stress-ksm-unmerge.c and no more
# in a core .c than at base, the .c files of the patch compiled alone with
# clang PEDANTIC=1 (no warning from ours), then stress-ng --ksm-unmerge 2
# -t 10 --metrics exits 0 with a metrics row and the KSM knobs restored.
# This script checks that it says so for every patch, that the series has
# one patch per core patch and manifest entry, that a second --series
# writes the same patches, that the base adds at most 1,200 lines and no
# patch after it (features, racers) over 600.
. "$(dirname "$0")/../../lib/lib.sh"

check [ -n "${STRESS_NG_TREE:-}" ] ||
	skip "STRESS_NG_TREE not set (path of a stress-ng git clone; this test fetches nothing)"
check [ -f "$STRESS_NG_TREE/stress-ng.h" ] && [ -d "$STRESS_NG_TREE/.git" ] ||
	fail "STRESS_NG_TREE=$STRESS_NG_TREE is not a stress-ng git clone"
[ "$(id -u)" = 0 ] || skip "needs root"
[ -w "$KSM/run" ] || skip "kernel has no KSM ($KSM/run missing or read-only)"

W=${STRESS_NG_SERIES_WORK:-/tmp/stress-ng-ksm-unmerge-series}
INTEG=$TOP/tools/integrate/stress-ng-integrate
export GIT_AUTHOR_NAME="it-stress-ng-series" GIT_AUTHOR_EMAIL="it@localhost"
export GIT_COMMITTER_NAME="$GIT_AUTHOR_NAME" GIT_COMMITTER_EMAIL="$GIT_AUTHOR_EMAIL"
ncore=$(ls "$TOP"/tools/integrate/stress-ng-patches/*.patch 2>/dev/null | wc -l)
nman=$(grep -c '^patch ' "$TOP/tools/integrate/stress-ng-series")

"$INTEG" --series "$TMPD/series" --check --work "$W" "$STRESS_NG_TREE" >"$TMPD/check.log" 2>&1
rc=$?
cat "$TMPD/check.log"
check [ $rc = 0 ] || fail "--series --check: exit $rc"
n=$(ls "$TMPD/series"/*.patch | wc -l)
check [ "$n" = $((ncore + nman)) ] || fail "$n patches, not $ncore core + $nman manifest patches"
ok=$(grep -c "^stress-ng-integrate: ok [0-9][0-9][0-9][0-9]-" "$TMPD/check.log")
check [ "$ok" = "$n" ] || fail "$ok of $n patches checked ok"
check grep -q "^stress-ng-integrate: 0 of $n patches failed" "$TMPD/check.log" || fail "no '0 of $n patches failed' line"
runs=$(grep -c "^stress-ng-integrate: ok .*run: exit 0" "$TMPD/check.log")
check [ "$runs" = $((n - ncore)) ] || fail "$runs stress-ng runs passed, not $((n - ncore))"

# the same patches again (dates and commit ids aside)
"$INTEG" --series "$TMPD/series2" "$STRESS_NG_TREE" >/dev/null 2>&1 || fail "a second --series failed"
for f in "$TMPD/series"/*.patch; do
	strip() { grep -v -e '^From [0-9a-f]\{40\} ' -e '^Date: ' -e '^index ' -e '^\.TH STRESS-NG' -e '^[-+]\.TH STRESS-NG' "$1"; }
	check cmp -s <(strip "$f") <(strip "$TMPD/series2/$(basename "$f")") || fail "$(basename "$f") differs in a second --series"
done

# the sizes: the base at most 1,200 lines, each patch after it (features
# and racers) at most 600
cap=1200
for f in $(ls "$TMPD/series"/*.patch | tail -n +$((ncore + 1))); do
	add=$(awk '/^\+/ && !/^\+\+\+/ { n++ } END { print n + 0 }' "$f")
	check [ "$add" -le $cap ] || fail "$(basename "$f"): +$add lines (> $cap)"
	cap=600
done
echo "it/build/stress-ng-series.sh: ok ($n patches in $W)"
checks_done
