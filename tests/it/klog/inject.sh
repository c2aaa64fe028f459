#!/bin/bash
# tests/it/klog/inject.sh: the standalone core's kernel-log check
# (klog/klog-check.c, on by default) end to end on the real kernel log
# (root).  Runs the core with the dummy stressor (tests/build/dummy-runner,
# no KSM needed), and once with the real stressor:
#  1. a clean run passes, prints no klog-check line, YAML status ok
#  1b. a WARNING splat and a BUG line written to /dev/kmsg from user space
#     (facility 1) fail nothing, with or without -K: only kernel records
#     count
#  2. a WARNING splat injected as kernel records during a run fails it
#     (exit 2):
#     an error line with the LKP key, first line, RIP, call trace, the
#     splat's pid and the instances, the keys, the stress-ng verdict as
#     the last line after "successful run completed", the YAML section
#  3. noise lines (no splat shape) pass, with and without -K
#  4. a "BUG: Bad rss-counter state" line fails the run with its key
#  5. -K (stress-ng's level rule on top): the splat is still one error
#  6. a WARNING logged by the instance as its very last act is caught
#     (the reader reads to the end of the run after the instances end)
#  7. the real stressor fails on an injected WARNING too (needs KSM), also
#     its default job, which names a known kernel bug and passes without it
#  8. opt-in (KLOG_IT_TAINT=1): a taint bit set during the run fails it
#  9. opt-in (KLOG_IT_FLOOD=1): records overwritten while the reader is
#     stopped are counted as lost (writes 640 KB of junk into the kernel log)
#
# Records written from user space get facility 1 (LOG_USER) even with a
# "<4>" prefix, and the check matches kernel records (facility 0) only.
# Cases 2-7 run the programs under tests/build/fakeproc.so with
# FAKEPROC=kmsg-kernel, which has them read the facility 1 records as
# kernel ones: the real /dev/kmsg, reader and timing, the kernel's
# facility faked.  The injected records could fail a concurrent run that
# is under the same preload, so this script holds /tmp/ksm-dev.lock
# (re-executing itself under flock unless an ancestor, e.g.
# tests/run-tests, already holds it).
#
# Exit: 0 pass, 77 skip (reason printed), anything else fail.

. "$(dirname "$0")/../../lib/lock.sh"
if ! lock_held; then
	command -v flock >/dev/null 2>&1 || { echo "SKIP: flock(1) not installed"; exit 77; }
	exec flock "$KSM_LOCK" bash "$0" "$@"
fi

. "$(dirname "$0")/../../lib/lib.sh"
[ "$(id -u)" = 0 ] || skip "needs root"
[ -w /dev/kmsg ] || skip "/dev/kmsg not writable"
[ -r /dev/kmsg ] || skip "/dev/kmsg not readable"
R=$TOP/tests/build/dummy-runner
[ -x "$R" ] || fail "$R not built (make shim-tests)"
FAKE=$TOP/tests/build/fakeproc.so
[ -f "$FAKE" ] || fail "$FAKE not built (make tests/build/fakeproc.so)"

RUN_T=${KLOG_IT_TIME:-3}
KEY_WARN='WARNING:at_mm/ksm.c:#break_ksm'
KEY_RSS='BUG:Bad_rss-counter_state_mm:#type:MM_ANONPAGES_val'

# kmsg: write one record to /dev/kmsg
kmsg() {
	printf '%s\n' "$1" > /dev/kmsg || fail "write to /dev/kmsg failed"
}

# "${AS_KERNEL[@]}" CMD...: CMD (the same pid) reading user space
# (facility 1) records as kernel ones
AS_KERNEL=(env LD_PRELOAD="$FAKE" FAKEPROC=kmsg-kernel)

# run_bg OUT YAML ARGS...: start a dummy run in the background, PID in $RUN_PID;
# the injected records are read as kernel records
run_bg() {
	local out=$1 yaml=$2
	shift 2
	"${AS_KERNEL[@]}" "$R" --ksm-unmerge 1 -t "$RUN_T" -Y "$yaml" "$@" >"$out" 2>&1 &
	RUN_PID=$!
}

# run_user_bg OUT YAML ARGS...: run_bg where user space records stay user space's
run_user_bg() {
	local out=$1 yaml=$2
	shift 2
	"$R" --ksm-unmerge 1 -t "$RUN_T" -Y "$yaml" "$@" >"$out" 2>&1 &
	RUN_PID=$!
}

# wait_started: wait (<= 5 s) until the run has started its instance
wait_started() {
	local i
	for i in $(seq 50); do
		kill -0 "$RUN_PID" 2>/dev/null || return 0
		[ "$(pgrep -P "$RUN_PID" | wc -l)" -ge 2 ] && { sleep 0.5; return 0; }
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

# inject_noise: alarming-looking lines without a kernel splat shape
inject_noise() {
	kmsg "<4>it-klog-inject: noise: a WARNING: CPU: 0 that is not a kernel warning"
	kmsg "<3>it-klog-inject: noise: BUG: 1234 filed in the tracker"
	kmsg "<4>Out of memory: Killed process 1 (it-klog-inject) (noise injected by a test)"
	kmsg "<6>it-klog-inject: noise: Oops: nothing happened"
}

# klog_errors OUT: the number of klog-check error lines in OUT
klog_errors() {
	grep -c '^stress-ng: error: \[[0-9]*\] klog-check: ' "$1"
}

SECONDS=0

# 1. clean run
out=$TMPD/clean.out
run_bg "$out" "$TMPD/clean.yaml"
finish
check [ "$RC" = 0 ] || { cat "$out"; fail "clean run exited $RC, expected 0"; }
check grep -q 'klog-check:' "$out" && { cat "$out"; fail "clean run: a klog-check line was printed"; }
checked; grep -A2 '^kernel-log:' "$TMPD/clean.yaml" | grep -q 'status: ok' ||
	{ cat "$TMPD/clean.yaml"; fail "clean run: YAML kernel-log status is not ok"; }

# 1b. user space writing splats to /dev/kmsg fails nothing, with or without -K
for k in "" -K; do
	out=$TMPD/user$k.out
	run_user_bg "$out" "$TMPD/user.yaml" $k
	wait_started
	inject_warn
	kmsg "<1>BUG: Bad rss-counter state mm:000000000fb13173 type:MM_ANONPAGES val:-1 (it-klog-inject: FAKE, user space)"
	kmsg "<0>watchdog: BUG: soft lockup - CPU#1 stuck for 26s! [it-klog-inject:1] (FAKE, user space)"
	finish
	check [ "$RC" = 0 ] || { cat "$out"; fail "user space splat ${k:-(default)}: exit $RC, expected 0"; }
	check grep -q 'klog-check' "$out" && { cat "$out"; fail "user space splat ${k:-(default)}: a klog-check line"; }
done

# 2. injected WARN splat, the check on by default
out=$TMPD/warn.out
run_bg "$out" "$TMPD/warn.yaml"
wait_started
inject_warn
finish
check [ "$RC" = 2 ] || { cat "$out"; fail "WARN injection: exit $RC, expected 2"; }
check grep -q "^stress-ng: error: \[[0-9]*\] klog-check: kernel warning: $KEY_WARN\$" "$out" ||
	{ cat "$out"; fail "WARN injection: no error line with the key $KEY_WARN"; }
check [ "$(klog_errors "$out")" = 1 ] || { cat "$out"; fail "WARN injection: not exactly one klog-check error line"; }
check grep -q "klog-check:   first line: WARNING: CPU: 0 PID: $$ at mm/ksm.c:3012 break_ksm+0x1a2/0x1c0\$" "$out" ||
	{ cat "$out"; fail "WARN injection: first line not reported"; }
check grep -q 'klog-check:   time: [0-9.]*s into the run (kernel time [0-9]*\.[0-9]\{6\})$' "$out" ||
	{ cat "$out"; fail "WARN injection: time into the run not reported"; }
check grep -q 'klog-check:   function at RIP: break_ksm$' "$out" || { cat "$out"; fail "WARN injection: RIP function not reported"; }
check grep -q 'klog-check:   call trace: unmerge_ksm_pages+0x5c/0xa0$' "$out" || { cat "$out"; fail "WARN injection: call trace not reported"; }
check grep -q "klog-check:   pid $$ (bash) in the log: not a process of this run\$" "$out" ||
	{ cat "$out"; fail "WARN injection: the splat's pid not placed"; }
check grep -q 'klog-check:   instance 0 \[[0-9]*\]: state [A-Z], wchan ' "$out" ||
	{ cat "$out"; fail "WARN injection: the instance not listed"; }
check grep -q "klog-check: kernel-log key: $KEY_WARN (count 1)\$" "$out" || { cat "$out"; fail "WARN injection: key summary missing"; }
last=$(tail -n 1 "$out")
checked; echo "$last" | grep -q '^stress-ng: info:  \[[0-9]*\] klog-check: detected 1 kernel error messages$' ||
	{ cat "$out"; fail "WARN injection: the verdict is not the last line: $last"; }
check grep -q 'successful run completed' "$out" || { cat "$out"; fail "WARN injection: no final run line"; }
grep -A9 '^kernel-log:' "$TMPD/warn.yaml" > "$TMPD/warn.klog"
check grep -q 'warnings: 1' "$TMPD/warn.klog" && grep -q "key: '$KEY_WARN'" "$TMPD/warn.klog" ||
	{ cat "$TMPD/warn.yaml"; fail "WARN injection: YAML kernel-log section lacks the key"; }

# 3. noise: passes, as kernel records (the shape rule) and, with -K, as
# user space records (stress-ng's level rule would take a kernel <3>)
for k in "" -K; do
	out=$TMPD/noise$k.out
	if [ -z "$k" ]; then
		run_bg "$out" "$TMPD/noise.yaml"
	else
		run_user_bg "$out" "$TMPD/noise.yaml" $k
	fi
	wait_started
	inject_noise
	finish
	check [ "$RC" = 0 ] || { cat "$out"; fail "noise injection ${k:-(default)}: exit $RC, expected 0"; }
	check [ "$(klog_errors "$out")" = 0 ] || { cat "$out"; fail "noise injection ${k:-(default)}: an error line"; }
done

# 4. injected BUG line
out=$TMPD/bug.out
run_bg "$out" "$TMPD/bug.yaml"
wait_started
kmsg "<6>it-klog-inject: next line is a FAKE kernel BUG injected by a test"
kmsg "<1>BUG: Bad rss-counter state mm:000000000fb13173 type:MM_ANONPAGES val:-1"
finish
check [ "$RC" = 2 ] || { cat "$out"; fail "BUG injection: exit $RC, expected 2"; }
check grep -q "klog-check: kernel memory corruption: $KEY_RSS\$" "$out" || { cat "$out"; fail "BUG injection: key $KEY_RSS not reported"; }

# 5. -K: stress-ng's rule on top, the splat is one error
out=$TMPD/warn-K.out
run_bg "$out" "$TMPD/warn-K.yaml" -K
wait_started
inject_warn
finish
check [ "$RC" = 2 ] || { cat "$out"; fail "-K WARN injection: exit $RC, expected 2"; }
check [ "$(klog_errors "$out")" = 1 ] || { cat "$out"; fail "-K WARN injection: not exactly one error line"; }
check grep -q 'klog-check: detected 1 kernel error messages$' "$out" || { cat "$out"; fail "-K WARN injection: verdict is not 1 error"; }

# 6. a WARNING logged by the instance just before it ends is still caught
out=$TMPD/last.out
DUMMY_KMSG="<4>WARNING: CPU: 0 PID: 1 at mm/ksm.c:1 break_ksm+0x1/0x2 (it-klog-inject: FAKE, last act of the instance)" \
	"${AS_KERNEL[@]}" "$R" --ksm-unmerge 1 -t 1 >"$out" 2>&1
RC=$?
check [ "$RC" = 2 ] || { cat "$out"; fail "last-act WARN: exit $RC, expected 2 (a record logged before the instance ended was missed)"; }
check grep -q "klog-check: kernel warning: $KEY_WARN" "$out" || { cat "$out"; fail "last-act WARN: key not reported"; }

# 7. the real stressor (the check comes from the core it is linked with)
if [ -w /sys/kernel/mm/ksm/run ] && [ -x "$STRESSOR" ]; then
	before=$(knobs)
	out=$TMPD/real.out
	"${AS_KERNEL[@]}" "$STRESSOR" --ksm-unmerge 1 -t 5 --ksm-unmerge-method madvise >"$out" 2>&1 &
	RUN_PID=$!
	wait_started
	inject_warn
	finish
	check [ "$RC" = 2 ] || { cat "$out"; fail "real stressor WARN injection: exit $RC, expected 2"; }
	check grep -q "^stress-ng: error: \[[0-9]*\] klog-check: kernel warning: $KEY_WARN\$" "$out" ||
		{ cat "$out"; fail "real stressor WARN injection: no klog-check error line"; }
	check grep -q 'klog-check: detected [0-9]* kernel error messages$' "$out" ||
		{ cat "$out"; fail "real stressor WARN injection: no verdict"; }
	after=$(knobs)
	check [ "$before" = "$after" ] || fail "KSM knobs changed: before [$before] after [$after]"
	# the default job: a known kernel bug it names does not hide a new failure
	out=$TMPD/real-all.out
	"${AS_KERNEL[@]}" "$STRESSOR" --ksm-unmerge 1 -t 5 --ksm-unmerge-bytes 16M >"$out" 2>&1 &
	RUN_PID=$!
	wait_started
	inject_warn
	finish
	check [ "$RC" = 2 ] || { cat "$out"; fail "default job WARN injection: exit $RC, expected 2"; }
	check grep -q "^stress-ng: error: \[[0-9]*\] klog-check: kernel warning: $KEY_WARN\$" "$out" ||
		{ cat "$out"; fail "default job WARN injection: no klog-check error line"; }
	if known_bug_seen "$out"; then
		echo "default job: the known kernel bug named and the injected WARNING still failed the run"
	fi
	check [ "$(knobs)" = "$before" ] || fail "KSM knobs changed by the default job"
else
	echo "real stressor part not run: no KSM or $STRESSOR not built"
fi

# 8. taint (opt-in: a taint bit can never be cleared until reboot)
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
		check grep -q 'klog-check: kernel taint: U (0x40) set during the run' "$out" || { cat "$out"; fail "taint: U not reported"; }
	fi
fi

# 9. lost records (opt-in: floods the kernel log, dmesg history is gone)
if [ "${KLOG_IT_FLOOD:-0}" = 1 ]; then
	out=$TMPD/flood.out
	RUN_T=8 run_bg "$out" "$TMPD/flood.yaml"
	wait_started
	reader=""
	for p in $(pgrep -P "$RUN_PID"); do
		grep -q '^stress-ng-klog' "/proc/$p/comm" 2>/dev/null && reader=$p
	done
	check [ -n "$reader" ] || fail "flood: no klog reader process found"
	kill -STOP "$reader"
	pad=$(printf '%0400d' 0)
	for i in $(seq 1500); do	# 1500 x 430 bytes: 5 times a 128 KiB log buffer
		printf '<7>it-klog-inject: flood %d %s\n' "$i" "$pad" > /dev/kmsg
	done
	kill -CONT "$reader"
	finish
	check [ "$RC" = 0 ] || { cat "$out"; fail "flood: exit $RC, expected 0"; }
	check grep -q 'klog-check: [0-9]* kernel log records lost (overwritten before they were read)$' "$out" ||
		{ cat "$out"; fail "flood: lost records not counted"; }
	grep 'records lost' "$out" | sed 's/^/  flood run: /'
	checked; grep -q 'lost-records: [1-9]' "$TMPD/flood.yaml" || fail "flood: YAML lost-records is 0"
fi

grep -E 'klog-check' "$TMPD/warn.out" | sed 's/^/  warn run: /'
echo "klog inject: clean pass; user space splats pass; WARN and BUG injections as kernel records fail with their LKP keys (also under -K, also the real stressor); noise passes; a WARN logged at the very end is caught (${SECONDS}s)"
checks_done
exit 0
