#!/bin/bash
# tests/it/klog/inject.sh: the kernel-log watcher end to end (root).
#  1. a clean run passes and reports "kernel warnings: 0"
#  2. a WARNING splat written to /dev/kmsg during a run fails it (exit 2),
#     names the LKP key, and lands in the YAML kernel-log section
#  3. a "BUG: Bad rss-counter state" line does the same
#  4. --ksm-unmerge-no-klog: the same injection is not watched, status off
#  5. opt-in (KLOG_IT_TAINT=1): a taint bit set during the run fails it
#
# Records written from user space get facility 1 (LOG_USER) even with a
# "<4>" prefix; the watcher counts them only when they have a kernel splat
# shape.  Injected WARNINGs fail any concurrent run, so this script holds
# /tmp/ksm-dev.lock (re-executing itself under flock unless an ancestor,
# e.g. tests/run-tests, already holds it).
#
# Exit: 0 pass, 77 skip (reason printed), anything else fail.

. "$(dirname "$0")/../../lib/lock.sh"
if ! lock_held; then
	command -v flock >/dev/null 2>&1 || { echo "SKIP: flock(1) not installed"; exit 77; }
	exec flock "$KSM_LOCK" bash "$0" "$@"
fi

. "$(dirname "$0")/../../lib/lib.sh"
require_ksm
[ -w /dev/kmsg ] || skip "/dev/kmsg not writable"
[ -r /dev/kmsg ] || skip "/dev/kmsg not readable"

RUN_T=${KLOG_IT_TIME:-5}
KEY_WARN='WARNING:at_mm/ksm.c:#break_ksm'
KEY_RSS='BUG:Bad_rss-counter_state_mm:#type:MM_ANONPAGES_val'

# kmsg: write one record to /dev/kmsg
kmsg() {
	printf '%s\n' "$1" > /dev/kmsg || fail "write to /dev/kmsg failed"
}

# run_bg OUT YAML ARGS...: start a run in the background, PID in $RUN_PID
run_bg() {
	local out=$1 yaml=$2
	shift 2
	"$STRESSOR" --ksm-unmerge 1 -t "$RUN_T" -Y "$yaml" --ksm-unmerge-method madvise "$@" >"$out" 2>&1 &
	RUN_PID=$!
}

# wait_started OUT: wait (<= 5 s) until the run has started its instance
wait_started() {
	local i
	for i in $(seq 50); do
		kill -0 "$RUN_PID" 2>/dev/null || return 0
		pgrep -P "$RUN_PID" >/dev/null 2>&1 && { sleep 1; return 0; }
		sleep 0.1
	done
}

# finish: wait for the run, exit code in $RC
finish() {
	wait "$RUN_PID"
	RC=$?
}

# inject_warn: a kernel-format WARN splat, marked as a test for dmesg readers
inject_warn() {
	kmsg "<6>it-klog-inject: next lines are a FAKE kernel warning injected by a test"
	kmsg "<4>------------[ cut here ]------------"
	kmsg "<4>WARNING: CPU: 0 PID: $$ at mm/ksm.c:3012 break_ksm+0x1a2/0x1c0"
	kmsg "<4>Modules linked in:"
	kmsg "<4>RIP: 0010:break_ksm+0x1a2/0x1c0"
	kmsg "<4>Call Trace:"
	kmsg "<4> <TASK>"
	kmsg "<4> unmerge_ksm_pages+0x5c/0xa0"
	kmsg "<4> ksm_madvise+0xc4/0x100"
	kmsg "<4> </TASK>"
	kmsg "<4>---[ end trace 0000000000000000 ]---"
}

before=$(knobs)
SECONDS=0

# 1. clean run
out=$TMPD/clean.out
run_bg "$out" "$TMPD/clean.yaml"
finish
check [ "$RC" = 0 ] || { cat "$out"; fail "clean run exited $RC, expected 0"; }
check grep -q 'ksm-unmerge: kernel warnings: 0$' "$out" || { cat "$out"; fail "clean run: no 'kernel warnings: 0' line"; }
check grep -q 'kernel-log check off' "$out" && { cat "$out"; fail "clean run: kernel-log check is off"; }
checked; grep -A2 '^kernel-log:' "$TMPD/clean.yaml" | grep -q 'status: ok' || fail "clean run: YAML kernel-log status is not ok"

# 2. injected WARN splat
out=$TMPD/warn.out
run_bg "$out" "$TMPD/warn.yaml"
wait_started
inject_warn
finish
check [ "$RC" = 2 ] || { cat "$out"; fail "WARN injection: exit $RC, expected 2"; }
check grep -q "fail: .*ksm-unmerge: kernel warning: $KEY_WARN\$" "$out" || { cat "$out"; fail "WARN injection: key $KEY_WARN not reported"; }
check grep -q 'first line: WARNING: CPU: 0 PID: .* at mm/ksm.c:3012 break_ksm+0x1a2/0x1c0 (injected from user space, facility 1)' "$out" ||
	{ cat "$out"; fail "WARN injection: first line not reported"; }
check grep -q 'function at RIP: break_ksm$' "$out" || { cat "$out"; fail "WARN injection: RIP function not reported"; }
check grep -q 'call trace: unmerge_ksm_pages+0x5c/0xa0$' "$out" || { cat "$out"; fail "WARN injection: call trace not reported"; }
check grep -q 'ksm-unmerge: kernel warnings: 1$' "$out" || { cat "$out"; fail "WARN injection: summary is not 'kernel warnings: 1'"; }
grep -A8 '^kernel-log:' "$TMPD/warn.yaml" > "$TMPD/warn.klog"
check grep -q 'warnings: 1' "$TMPD/warn.klog" && grep -q "key: '$KEY_WARN'" "$TMPD/warn.klog" ||
	{ cat "$TMPD/warn.yaml"; fail "WARN injection: YAML kernel-log section lacks the key"; }

# 2b. injected WARN splat while every racer runs (2 instances)
out=$TMPD/warn-all.out
"$STRESSOR" --ksm-unmerge 2 -t "$RUN_T" -Y "$TMPD/warn-all.yaml" --ksm-unmerge-method all \
	--ksm-unmerge-bytes 16M >"$out" 2>&1 &
RUN_PID=$!
wait_started
inject_warn
finish
check [ "$RC" = 2 ] || { cat "$out"; fail "WARN injection with all racers: exit $RC, expected 2"; }
check grep -q "fail: .*ksm-unmerge: kernel warning: $KEY_WARN\$" "$out" || { cat "$out"; fail "WARN injection with all racers: key not reported"; }
check grep -q 'racers vmsplice,gup' "$out" || { cat "$out"; fail "WARN injection with all racers: racer context not reported"; }

# 3. injected BUG line
out=$TMPD/bug.out
run_bg "$out" "$TMPD/bug.yaml"
wait_started
kmsg "<6>it-klog-inject: next line is a FAKE kernel BUG injected by a test"
kmsg "<1>BUG: Bad rss-counter state mm:000000000fb13173 type:MM_ANONPAGES val:-1"
finish
check [ "$RC" = 2 ] || { cat "$out"; fail "BUG injection: exit $RC, expected 2"; }
check grep -q "fail: .*ksm-unmerge: kernel memory corruption: $KEY_RSS\$" "$out" || { cat "$out"; fail "BUG injection: key $KEY_RSS not reported"; }

# 4. --ksm-unmerge-no-klog: not watched
out=$TMPD/off.out
run_bg "$out" "$TMPD/off.yaml" --ksm-unmerge-no-klog
wait_started
inject_warn
finish
check [ "$RC" = 0 ] || { cat "$out"; fail "--ksm-unmerge-no-klog run exited $RC, expected 0"; }
check grep -q 'kernel warning:' "$out" && { cat "$out"; fail "--ksm-unmerge-no-klog: a warning was still reported"; }
checked; grep -A2 '^kernel-log:' "$TMPD/off.yaml" | grep -q 'status: off' || { cat "$TMPD/off.yaml"; fail "--ksm-unmerge-no-klog: YAML status is not off"; }

# 5. taint (opt-in: a taint bit can never be cleared until reboot)
if [ "${KLOG_IT_TAINT:-0}" = 1 ]; then
	t0=$(cat /proc/sys/kernel/tainted)
	check grep -q 'panic_on_taint' /proc/cmdline && fail "panic_on_taint on the kernel command line: not setting a taint bit"
	if [ $((t0 & 64)) -ne 0 ]; then
		echo "taint test not run: bit 6 (U) already set"
	else
		out=$TMPD/taint.out
		run_bg "$out" "$TMPD/taint.yaml"
		wait_started
		echo 64 > /proc/sys/kernel/tainted || fail "cannot set taint bit U"
		finish
		check [ "$RC" = 2 ] || { cat "$out"; fail "taint: exit $RC, expected 2"; }
		check grep -q 'kernel taint: U (0x40) set during the run' "$out" || { cat "$out"; fail "taint: U not reported"; }
	fi
fi

grep -E 'kernel warning|first line|RIP|call trace|instance [0-9]+:|kernel warnings' "$TMPD/warn.out" | sed 's/^/  warn run: /'
after=$(knobs)
check [ "$before" = "$after" ] || fail "KSM knobs changed: before [$before] after [$after]"
echo "klog inject: clean pass, WARN (also with all racers) and BUG injections fail with their LKP keys, --ksm-unmerge-no-klog off (${SECONDS}s)"
checks_done
exit 0
