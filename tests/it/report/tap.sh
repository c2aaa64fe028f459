#!/bin/bash
# tools/user/ksm-tap: TAP 13 output and kselftest exit codes for pass, fail,
# kernel warning, skip (no KSM, stressor skipped, no resources) using stub
# stressors; plus a real short run when ./build/stress-ksm-unmerge is built.
set -u
ROOT=$(cd "$(dirname "$0")/../../.." && pwd)
TAP=$ROOT/tools/user/ksm-tap
F=$ROOT/tests/data/fixtures/report
TMP=$(mktemp -d /tmp/it-tap.XXXXXX)
trap 'rm -rf "$TMP"' EXIT
fails=0

. "$(dirname "$0")/../../lib/lock.sh"
# this script's check NAME CMD... replaces the one of tests/lib/checks.sh
. "$(dirname "$0")/../../lib/checks.sh"
check() {
	local name=$1
	shift
	checked
	if "$@"; then echo "ok: $name"; else echo "FAIL: $name"; fails=$((fails + 1)); sed 's/^/    /' "$TMP/out"; fi
}

mkdir "$TMP/ksm"
echo 0 >"$TMP/ksm/run"

# stub NAME RC YAML-SOURCE EXTRA-LINE: a fake stressor
stub() {
	cat >"$TMP/$1" <<STUB
#!/bin/bash
echo "stress-ng: info:  [10] dispatching hogs: 1 ksm-unmerge"
$4
while [ \$# -gt 0 ]; do [ "\$1" = --yaml ] && { [ -n "$3" ] && cp "$3" "\$2"; }; shift; done
exit $2
STUB
	chmod +x "$TMP/$1"
}

# tap STUB [ARGS]: run the wrapper with a stub, output in $TMP/out, rc in $rc
tap() {
	local s=$1
	shift
	KSM_TAP_SYSFS=$TMP/ksm KSM_TAP_STRESSOR=$TMP/$s "$TAP" "$@" >"$TMP/out" 2>&1
	rc=$?
}

tap_header() { [ "$(sed -n 1p "$TMP/out")" = "TAP version 13" ] && [ "$(sed -n 2p "$TMP/out")" = "1..1" ]; }
last() { [ "$(grep -E '^(not )?ok 1 ' "$TMP/out")" = "$1" ] || { echo "    got: $(grep -E '^(not )?ok 1 ' "$TMP/out")"; false; }; }
lastmatch() { grep -qE "$1" <(grep -E '^(not )?ok 1 ' "$TMP/out"); }

# a clean run
stub pass 0 "$F/regress5/run-1.yaml" 'echo "stress-ng: info:  [10] passed: 1: ksm-unmerge (1)"'
tap pass
check "pass: exit 0" [ "$rc" -eq 0 ]
check "pass: TAP header" tap_header
check "pass: ok line" lastmatch '^ok 1 ksm-unmerge --ksm-unmerge 1 -t 10 --verify --metrics \([0-9]+s\)$'
check "pass: stressor output as diagnostics" grep -q '^# stress-ng: info:  \[10\] dispatching hogs' "$TMP/out"
tap pass --ksm-unmerge 2 -t 1
check "pass: arguments passed through" lastmatch '^ok 1 ksm-unmerge --ksm-unmerge 2 -t 1 '

# a kernel warning in the output (stress-ng's -K line): not ok, with the
# LKP key (ksm-report keys next to ksm-tap), else with the line as printed
KLOG_LINE="stress-ng: info:  [10] klog-check: warning: [812.345678] 'WARNING: CPU: 1 PID: 4242 at mm/ksm.c:3012 break_ksm+0x1a2/0x1c0'"
stub warn 0 "$F/regress5/run-2.yaml" "echo \"stress-ng: info:  [10] passed: 1: ksm-unmerge (1)\"; echo \"$KLOG_LINE\""
tap warn
check "kernel warning: exit 1" [ "$rc" -eq 1 ]
check "kernel warning: not ok with the key" last "not ok 1 ksm-unmerge # kernel warning during run: WARNING:at_mm/ksm.c:#break_ksm"
mkdir -p "$TMP/alone/user"
cp "$TAP" "$TMP/alone/user/ksm-tap"
KSM_TAP_SYSFS=$TMP/ksm KSM_TAP_STRESSOR=$TMP/warn "$TMP/alone/user/ksm-tap" >"$TMP/out" 2>&1
rc=$?
check "kernel warning without ksm-report: not ok with the line" bash -c \
	"[ $rc -eq 1 ] && grep -qF \"not ok 1 ksm-unmerge # kernel warning during run: klog-check: warning: [812.345678] 'WARNING: CPU: 1\" '$TMP/out'"
stub info 0 "$F/regress5/run-1.yaml" "echo \"stress-ng: info:  [10] passed: 1: ksm-unmerge (1)\"; echo \"stress-ng: info:  [10] klog-check: warning: [9.5] 'ext4: an ordinary warning'\""
tap info
check "an ordinary level-4 kernel message: ok" [ "$rc" -eq 0 ]
KSM_TAP_SYSFS=$TMP/ksm KSM_TAP_STRESSOR=$TMP/info "$TMP/alone/user/ksm-tap" >"$TMP/out" 2>&1
check "... also without ksm-report" [ $? -eq 0 ]

stub fail 2 "" 'echo "stress-ng: fail:  [11] ksm-unmerge: page content mismatch after unmerge"'
tap fail
check "forced failure: exit 1" [ "$rc" -eq 1 ]
check "forced failure: not ok with reason" last "not ok 1 ksm-unmerge # exit status 2: ksm-unmerge: page content mismatch after unmerge"

KSM_TAP_SYSFS=$TMP/no-ksm KSM_TAP_STRESSOR=$TMP/pass "$TAP" >"$TMP/out" 2>&1
rc=$?
check "forced skip (no KSM): exit 4" [ "$rc" -eq 4 ]
check "forced skip: TAP header" tap_header
check "forced skip: SKIP line" last "ok 1 ksm-unmerge # SKIP KSM not available ($TMP/no-ksm/run missing, CONFIG_KSM=y needed)"

stub skipped 0 "" 'echo "stress-ng: info:  [10] ksm-unmerge stressor will be skipped, it is not implemented on this system"; echo "stress-ng: info:  [10] skipped: 1: ksm-unmerge (1)"; echo "stress-ng: info:  [10] passed: 0"'
tap skipped
check "stressor skipped: exit 4" [ "$rc" -eq 4 ]
check "stressor skipped: SKIP with its reason" last "ok 1 ksm-unmerge # SKIP ksm-unmerge stressor will be skipped, it is not implemented on this system"

stub nores 3 "" 'echo "stress-ng: warn:  [10] ksm-unmerge: [11] aborted early, no system resources"'
tap nores
check "no resources: exit 4 SKIP" bash -c "[ $rc -eq 4 ] && grep -q '^ok 1 ksm-unmerge # SKIP no system resources (exit 3)' '$TMP/out'"

# KSM_TAP_LOCK: the run waits for the lock (a private lock file here)
( exec 9>"$TMP/lock"; flock 9; sleep 2 ) &
sleep 0.5
t0=$(date +%s)
KSM_TAP_LOCK=$TMP/lock KSM_TAP_SYSFS=$TMP/ksm KSM_TAP_STRESSOR=$TMP/pass "$TAP" >"$TMP/out" 2>&1
rc=$?
wait
check "KSM_TAP_LOCK: waits for the lock, then passes" bash -c "[ $rc -eq 0 ] && [ \$(( \$(date +%s) - $t0 )) -ge 1 ]"

tap missing-stressor
check "missing stressor: exit 1 not ok" bash -c "[ $rc -eq 1 ] && grep -q '^not ok 1 ksm-unmerge # stressor not found' '$TMP/out'"

# real short run
BIN=${KSM_STRESSOR:-$ROOT/build/stress-ksm-unmerge}
if [ -x "$BIN" ] && [ -w /sys/kernel/mm/ksm/run ]; then
	locked env KSM_TAP_STRESSOR="$BIN" "$TAP" --ksm-unmerge 1 -t 3 --verify --metrics --ksm-unmerge-method madvise >"$TMP/out" 2>&1
	rc=$?
	tail -3 "$TMP/out"
	check "real run: exit 0 and ok" bash -c "[ $rc -eq 0 ] && grep -q '^ok 1 ksm-unmerge --ksm-unmerge 1 -t 3' '$TMP/out'"
else
	echo "note: real run skipped (./build/stress-ksm-unmerge not built or no KSM)"
fi

echo "it/report/tap.sh: $fails failure(s)"
checks_done
[ "$fails" -eq 0 ]
