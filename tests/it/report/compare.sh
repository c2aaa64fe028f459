#!/bin/bash
# ksm-report compare on fixture sets with known answers (run-<i>.yaml
# metrics plus run-<i>.txt text output): exit codes, the LKP table rows
# (hand-computed), racer and kernel-log rows from the text, the racer table
# of a stub build/ksm-racers, bad-input handling, SVG well-formedness, and
# one valgrind run. Exit 0 pass, 1 fail, 77 skip.
set -u
ROOT=$(cd "$(dirname "$0")/../../.." && pwd)
KR=$ROOT/build/ksm-report
F=$ROOT/tests/data/fixtures/report
TMP=$(mktemp -d /tmp/it-report-compare.XXXXXX)
trap 'rm -rf "$TMP"' EXIT
fails=0

[ -x "$KR" ] || make -C "$ROOT" -s build/ksm-report >/dev/null || { echo "cannot build $KR"; exit 1; }
# the racer table: a stub until build/ksm-racers comes with the stressor
export KSM_REPORT_RACERS=${KSM_REPORT_RACERS:-$F/ksm-racers}

# this script's check NAME CMD... replaces the one of tests/lib/checks.sh
. "$(dirname "$0")/../../lib/checks.sh"
# check NAME CONDITION...: report one assertion
check() {
	local name=$1
	shift
	checked
	if "$@"; then
		echo "ok: $name"
	else
		echo "FAIL: $name"
		fails=$((fails + 1))
	fi
}

# cmp_run BASE NEW [ARGS]: run compare, keep output in $TMP/out, $TMP/err, rc in $rc
cmp_run() {
	"$KR" compare "$@" >"$TMP/out" 2>"$TMP/err"
	rc=$?
}

has() { grep -qF -- "$1" "$TMP/out"; }
hasnt() { ! grep -qF -- "$1" "$TMP/out"; }
err_has() { grep -qF -- "$1" "$TMP/err"; }

# 1. 5% regression, tight, 5 vs 5: flagged, exit 1, rows as hand-computed
cmp_run "$F/base" "$F/regress5" --svg "$TMP/r.svg"
check "regress5 exits 1" [ "$rc" -eq 1 ]
check "regress5 ops_per_sec row" has \
	"      1000            -5.0%     950.00        stress-ng.ksm-unmerge.ops_per_sec  * regression"
check "ops_per_sec is the first table row" \
	bash -c "grep -A1 -F '             \\          |' '$TMP/out' | tail -1 | grep -q 'ops_per_sec  \\*'"
check "MB rate: ±5% (5.89% truncated), -5.0%, overlapping so not marked" has \
	"      2400 ±  5%      -5.0%       2280 ±  5%  stress-ng.ksm-unmerge.MB_per_sec_unmerge_rate"
check "latency p95 +50.0% ±7% marked regression" has \
	"     20.00 ±  7%     +50.0%      30.00 ±  7%  ksm-unmerge.latency.unmerge-millisecs.p95  * regression"
check "fail table header" has "       fail:runs  %reproduction    fail:runs"
# run 2 has it as stress-ng's -K line, run 4 as the standalone key lines
check "warning key on new side only in fail table" has \
	"           :5           40%           2:5     dmesg.WARNING:at_mm/ksm.c:#break_ksm"
check "an older stressor's racer rate its text does not name keeps its YAML key" has "stress-ng.ksm-unmerge.uffdwp-ops-per-sec"
check "racer stats from the text output" has "ksm-unmerge.racer.vmsplice.splices-held-over-unmerge"
check "totals from the text output" has "ksm-unmerge.cow-ksm-delta"
check "svg is well formed" xmllint --noout "$TMP/r.svg"
check "svg: regressions drawn, ops_per_sec among them" \
	bash -c "grep -q '>Regressions<' '$TMP/r.svg' && grep -q '>stress-ng.ksm-unmerge.ops_per_sec<' '$TMP/r.svg'"
check "svg: unchanged MB rate left out by default" bash -c "! grep -q 'MB_per_sec_unmerge_rate' '$TMP/r.svg'"
check "svg: each side labelled once" \
	bash -c "[ \$(grep -c '>base: ' '$TMP/r.svg') = 1 ] && [ \$(grep -c '>new: ' '$TMP/r.svg') = 1 ]"
# axis tick labels: few significant digits, k/M/G scaled, evenly spaced
check "svg: round tick labels" bash -c "! grep -o 'text-anchor=\"end\">[^<]*<' '$TMP/r.svg' | sed 's/.*>\\(.*\\)</\\1/' | grep -Evq '^-?[0-9]{1,4}(\\.[0-9]{1,2})?[kMG]?\$|^[+-][0-9.]+%\$'"
"$KR" compare "$F/regress5" "$F/base" --svg "$TMP/i.svg" --svg-all >/dev/null 2>&1
check "svg --svg-all: improvements, then changed, then unchanged (MB rate)" bash -c \
	"grep -o '>Regressions<\\|>Improvements<\\|>Changed[^<]*<\\|>Unchanged<' '$TMP/i.svg' | tr -d '<>' | tr '\\n' / | grep -qx 'Improvements/Changed (no better direction)/Unchanged/' && grep -q 'MB_per_sec_unmerge_rate' '$TMP/i.svg'"
check "svg --svg-all is well formed" xmllint --noout "$TMP/i.svg"

# 2. -0.8% tight shift: not flagged, exit 0
cmp_run "$F/base" "$F/shift08"
check "shift08 exits 0" [ "$rc" -eq 0 ]
check "shift08 row unmarked" has \
	"      1000            -0.8%     992.00        stress-ng.ksm-unmerge.ops_per_sec"
check "shift08 no regression line" hasnt "REGRESSION:"

# 3. overlapping runs: not flagged
cmp_run "$F/base" "$F/overlap"
check "overlap exits 0" [ "$rc" -eq 0 ]
check "overlap shows -14.7% unmarked, ±19% (pstdev 169.87 / 852.8 = 19.92%)" has \
	"      1000           -14.7%     852.80 ± 19%  stress-ng.ksm-unmerge.ops_per_sec"

# 4. 2 runs per side: not flagged; 3 vs 2: flagged
cmp_run "$F/base2" "$F/new2"
check "2 vs 2 exits 0" [ "$rc" -eq 0 ]
check "2 vs 2 says why" has "fewer than 3 runs on both sides"
cmp_run "$F/base3" "$F/new2"
check "3 vs 2 exits 1" [ "$rc" -eq 1 ]

# 5. latency-only regression: marked, exit 0 unless --strict
cmp_run "$F/base" "$F/latregress"
check "latency-only regression exits 0" [ "$rc" -eq 0 ]
check "latency-only regression is reported" has "REGRESSION: ksm-unmerge.latency.unmerge-millisecs.p95"
cmp_run "$F/base" "$F/latregress" --strict
check "latency-only regression --strict exits 1" [ "$rc" -eq 1 ]

# 5b. racers: NOT reached and skipped rows, described from the racer table
cmp_run "$F/base" "$F/latregress"
check "racer NOT reached in 1 of 5 new runs" has \
	"           :5           20%           1:5     ksm-unmerge.racer.fork.not_reached"
check "racer skipped in every new run" has \
	"           :5          100%           5:5     ksm-unmerge.racer.uffd-minor.skipped"
check "racer legend from the racer table" has \
	"racer uffd-minor (evidence: ksm-pages-unmerged; not built: no UFFDIO_REGISTER_MODE_MINOR in <linux/userfaultfd.h>): unmerge of a shmem VMA registered for userfaultfd minor faults"
KSM_REPORT_RACERS=/nonexistent/ksm-racers "$KR" compare "$F/base" "$F/latregress" >"$TMP/out" 2>"$TMP/err"
check "no racer table: said, the fail rows stay, no legend" bash -c "grep -q 'racer table /nonexistent/ksm-racers: errno=2' '$TMP/err' && grep -q 'ksm-unmerge.racer.uffd-minor.skipped' '$TMP/out' && ! grep -q '^racer uffd-minor (' '$TMP/out'"

# 6. malformed YAML among good files: skipped with a message naming it
cmp_run "$F/base" "$F/mixed"
check "mixed: still compared (exit 1 for its -5%)" [ "$rc" -eq 1 ]
check "mixed: malformed file named" err_has "mixed/run-4.yaml:38:1: malformed YAML"
check "mixed: empty file named" err_has "mixed/run-5.yaml: empty file"
check "mixed: no-metrics file named" err_has "mixed/run-6.yaml: document 1: no 'metrics:' list"
check "mixed: 3 runs used, 3 skipped" has "mixed: 3 runs, 3 bad files skipped"

# 7. bad input: missing dir, empty dir, all-bad dir, stressor mismatch
cmp_run "$F/base" "$TMP/no-such-dir"
check "missing dir exits 2" [ "$rc" -eq 2 ]
check "missing dir is named" err_has "$TMP/no-such-dir: cannot access"
mkdir "$TMP/empty"
cmp_run "$TMP/empty" "$F/base"
check "empty dir exits 2 naming it" bash -c "[ $rc -eq 2 ] && grep -qF '$TMP/empty: no *.yaml' '$TMP/err'"
mkdir "$TMP/allbad"
cp "$F/mixed/run-4.yaml" "$F/mixed/run-5.yaml" "$TMP/allbad/"
cmp_run "$F/base" "$TMP/allbad"
check "all-bad dir exits 2" [ "$rc" -eq 2 ]
cmp_run "$F/base" "$F/vmsplice"
check "stressor mismatch exits 2" [ "$rc" -eq 2 ]
check "stressor mismatch names both" err_has "'ksm-unmerge' in $F/base/run-1.yaml, 'vm-splice' in $F/vmsplice/run-1.yaml"
cmp_run "$F/base"
check "usage error exits 2" [ "$rc" -eq 2 ]

# 8. single files, a multi-document YAML stream, YAML without text output
cmp_run "$F/base/run-1.yaml" "$F/stream.yaml"
check "file vs multi-document stream works" bash -c "[ $rc -eq 0 ] && grep -q 'stream.yaml: 4 runs' '$TMP/out'"
cmp_run "$F/plain022" "$F/base"
check "YAML without text output compares" bash -c "[ $rc -eq 0 ] && grep -q '3 without a text output' '$TMP/out'"
check "... and its text stats are only on the other side" bash -c \
	"grep -q 'note: 22 stats only in new runs (not compared): ksm-unmerge.cycles' '$TMP/out' && ! grep -q 'ksm-unmerge.latency' '$TMP/out'"

# 9. valgrind: no leaks or errors on a full compare with SVG
if command -v valgrind >/dev/null; then
	valgrind -q --leak-check=full --errors-for-leak-kinds=definite,indirect \
		--error-exitcode=99 "$KR" compare "$F/base" "$F/mixed" --svg "$TMP/v.svg" \
		>/dev/null 2>"$TMP/vg"
	vrc=$?
	check "valgrind clean (rc $vrc)" [ "$vrc" -eq 1 ]
	[ "$vrc" -eq 1 ] || cat "$TMP/vg"
else
	echo "note: valgrind not installed, leak check not run"
fi

echo "it/report/compare.sh: $fails failure(s)"
checks_done
[ "$fails" -eq 0 ]
