#!/bin/bash
# ksm-report run with a stub stressor (no KSM needed): per-run files (the
# YAML and the text output), env capture, progress lines, failure
# propagation; then compare of the result, with stats from both files.
# With the real ./build/stress-ksm-unmerge built and KSM present, also a short
# real 2-run series (under the KSM lock). Exit 0 pass, 1 fail, 77 skip.
set -u
ROOT=$(cd "$(dirname "$0")/../../.." && pwd)
KR=$ROOT/build/ksm-report
F=$ROOT/tests/data/fixtures/report
TMP=$(mktemp -d /tmp/it-report-run.XXXXXX)
trap 'rm -rf "$TMP"' EXIT
fails=0

[ -x "$KR" ] || make -C "$ROOT" -s build/ksm-report >/dev/null || { echo "cannot build $KR"; exit 1; }
# the racer table: a stub until build/ksm-racers comes with the stressor
export KSM_REPORT_RACERS=${KSM_REPORT_RACERS:-$F/ksm-racers}

. "$(dirname "$0")/../../lib/lock.sh"
# this script's check NAME CMD... replaces the one of tests/lib/checks.sh
. "$(dirname "$0")/../../lib/checks.sh"
check() {
	local name=$1
	shift
	checked
	if "$@"; then echo "ok: $name"; else echo "FAIL: $name"; fails=$((fails + 1)); fi
}

# stub stressor: copies a fixture YAML to --yaml FILE, prints stress-ng-like
# lines, and exits 2 on its second call (counter file next to it)
cat >"$TMP/stub" <<STUB
#!/bin/bash
n=\$(( \$(cat "$TMP/count" 2>/dev/null || echo 0) + 1 ))
echo \$n >"$TMP/count"
echo "stress-ng: info:  [1] args: \$*"
while [ \$# -gt 0 ]; do
	[ "\$1" = --yaml ] && cp "$F/base/run-\$n.yaml" "\$2"
	shift
done
echo "stress-ng: metrc: [1] ksm-unmerge          2400.00 MB per sec unmerge rate (harmonic mean of 1 instance)"
echo "stress-ng: info:  [1] ksm-unmerge: totals: cycles=1\$n,failures=0"
[ \$n -eq 3 ] && echo "stress-ng: info:  [1] ksm-unmerge: racer gup NOT reached: ops=7 ksm-pages-pinned=0 (never)"
[ \$n -eq 2 ] && { echo "stress-ng: fail:  [2] ksm-unmerge: forced failure" >&2; exit 2; }
exit 0
STUB
chmod +x "$TMP/stub"
mkdir "$TMP/sysfs"
echo 0 >"$TMP/sysfs/run"
echo 100 >"$TMP/sysfs/pages_to_scan"

KSM_REPORT_SYSFS=$TMP/sysfs "$KR" run --runs 3 --out "$TMP/out" --stressor "$TMP/stub" \
	-- --ksm-unmerge 1 -t 1 >"$TMP/progress" 2>&1
rc=$?
cat "$TMP/progress"
check "run exits 2 when a run exits 2" [ "$rc" -eq 2 ]
check "three progress lines" [ "$(grep -c '^run [123] of 3, elapsed [0-9.]*s, ' "$TMP/progress")" -eq 3 ]
check "progress shows headline" grep -q '^run 1 of 3, .*ops_per_sec 1000.00, MB_per_sec_unmerge_rate 2400.00' "$TMP/progress"
check "progress shows the failure" grep -q '^run 2 of 3, .*FAILED: exit status 2' "$TMP/progress"
check "summary line" grep -q '^3 runs in .*: 2 ok, 1 failed' "$TMP/progress"
for i in 1 2 3; do
	check "run-$i files" test -s "$TMP/out/run-$i.yaml" -a -s "$TMP/out/run-$i.txt" -a -s "$TMP/out/run-$i.env"
done
check "stressor got its args and --yaml" grep -q "args: --ksm-unmerge 1 -t 1 --yaml $TMP/out/run-1.yaml" "$TMP/out/run-1.txt"
check "stderr captured too" grep -q 'forced failure' "$TMP/out/run-2.txt"
check "text output kept" grep -q 'ksm-unmerge: totals: cycles=13,' "$TMP/out/run-3.txt"
check "env: release" grep -q "^release=$(uname -r)\$" "$TMP/out/run-1.env"
check "env: KSM knobs" grep -q '^ksm.pages_to_scan=100$' "$TMP/out/run-1.env"
check "env: loadavg before/after" bash -c "grep -q '^loadavg_before=' '$TMP/out/run-1.env' && grep -q '^loadavg_after=' '$TMP/out/run-1.env'"
check "env: exit codes" bash -c "grep -q '^exit_code=0$' '$TMP/out/run-1.env' && grep -q '^exit_code=2$' '$TMP/out/run-2.env'"

"$KR" compare "$F/base" "$TMP/out" >"$TMP/cmp" 2>&1
crc=$?
cat "$TMP/cmp" | head -12
check "compare of the series exits 0" [ "$crc" -eq 0 ]
check "exit code 2 shows in the fail table" grep -qF "           :5           33%           1:3     last_state.test.stress-ng.exit_code.2" "$TMP/cmp"
check "a racer line of run-3.txt shows in the fail table" grep -qF "           :5           33%           1:3     ksm-unmerge.racer.gup.not_reached" "$TMP/cmp"
check "progress line names the racer that missed" grep -q '^run 3 of 3, .*ksm-unmerge.racer.gup.not_reached' "$TMP/progress"

KSM_REPORT_SYSFS=$TMP/sysfs "$KR" run --runs 1 --out "$TMP/x" --stressor "$TMP/nonexistent" -- -t 1 >/dev/null 2>"$TMP/err"
check "missing stressor is a setup error" bash -c "[ $? -eq 1 ] && grep -q 'nonexistent' '$TMP/err'"

# real series of the default job, when the stressor is built and KSM is there
BIN=${KSM_STRESSOR:-$ROOT/build/stress-ksm-unmerge}
if [ -x "$BIN" ] && [ -w /sys/kernel/mm/ksm/run ]; then
	locked "$KR" run --runs 2 --out "$TMP/real" --stressor "$BIN" \
		-- --ksm-unmerge 1 -t 4 --metrics >"$TMP/rp" 2>&1
	rrc=$?
	cat "$TMP/rp"
	check "real run exits 0" [ "$rrc" -eq 0 ]
	"$KR" compare "$TMP/real" "$TMP/real" >"$TMP/rc" 2>&1
	check "real run compares" [ $? -eq 0 ]
	check "real run: metrics from the YAML, totals and latency from the text" \
		bash -c "grep -q 'stress-ng.ksm-unmerge.ops_per_sec' '$TMP/rc' && grep -q 'ksm-unmerge.cycles' '$TMP/rc' && grep -q 'ksm-unmerge.latency.unmerge-millisecs.p50' '$TMP/rc'"
	check "real run: the unmerge rate under its LKP key, in the progress line too" \
		bash -c "grep -Eq 'stress-ng\.ksm-unmerge\.unmerge_MB_per_sec( |\$)' '$TMP/rc' && grep -q '^run 1 of 2, .*, unmerge_MB_per_sec [0-9]' '$TMP/rp'"
else
	echo "note: real series skipped (./build/stress-ksm-unmerge not built or no KSM)"
fi

echo "it/report/run.sh: $fails failure(s)"
checks_done
[ "$fails" -eq 0 ]
