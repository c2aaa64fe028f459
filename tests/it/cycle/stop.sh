#!/bin/bash
# tests/it/cycle/stop.sh: stop on time and no false pass.  At 256 MiB
# (madvise cycles: every racer at 256 MiB would pass the 512 MiB test
# budget with the mrelease victims' copies) a run ends within 2 s of its
# timeout and of SIGTERM sent at several points of the cycle (fill, merge
# wait, unmerge, verification); with every racer (64 MiB) SIGTERM stops the
# run within 2 s too (the racers stopped; exit 0, expect_ok); knobs
# restored every
# time; a worker (the instance's child running the cycles) SIGKILLed before
# its first verified cycle fails the run (exit 2, "failed: 1", the kill
# named); a timeout too short for the region is not a pass
# (skipped with the step it ended in).  KSM_IT_BIG=1 adds the opt-in large
# case: --ksm-unmerge 0 --ksm-unmerge-bytes 50% runs, verifies and stops on
# time (several minutes and half of memory).
. "$(dirname "$0")/../../lib/lib.sh"
require_ksm
private_bin		# leftovers are this script's processes only (others may queue for the lock)
STRESSOR=$BIN
before=$(knobs)

# lat T0 T1: seconds between two date +%s.%N stamps
lat() { echo "$2 - $1" | bc; }

# check_after NAME LOG: knobs restored, nothing left
check_after() {
	check [ "$(knobs)" = "$before" ] || fail "$1: knobs '$(knobs)' != '$before'"
	for i in $(seq 1 20); do [ -z "$(ours)" ] && break; sleep 0.1; done
	check [ -z "$(ours)" ] || fail "$1: processes left: $(ours)"
	grep -q 'still running, sending SIGKILL' "$2" && { cat "$2"; fail "$1: instance had to be killed"; }
	return 0
}

# timeout: ends within 2 s of -t
t0=$(date +%s.%N)
"$STRESSOR" --ksm-unmerge 1 -t 3 --ksm-unmerge-bytes 256M --ksm-unmerge-method madvise --verify >"$TMPD/t.log" 2>&1
rc=$?
s=$(lat "$t0" "$(date +%s.%N)")
echo "256M -t 3: exit $rc after ${s}s"
check [ "$(echo "$s < 5" | bc)" = 1 ] || fail "-t 3 run took ${s}s"
check_after timeout "$TMPD/t.log"

# SIGTERM at several points of the cycle
for at in 0.2 0.7 1.3 2.1 2.9; do
	log=$TMPD/term-$at.log
	"$STRESSOR" --ksm-unmerge 1 -t 60 --ksm-unmerge-bytes 256M --ksm-unmerge-method madvise --verify >"$log" 2>&1 &
	pid=$!
	sleep "$at"
	t0=$(date +%s.%N)
	kill -TERM $pid
	wait $pid
	rc=$?
	s=$(lat "$t0" "$(date +%s.%N)")
	echo "256M SIGTERM after ${at}s: exit $rc, stopped in ${s}s"
	check [ "$(echo "$s < 2" | bc)" = 1 ] || { cat "$log"; fail "SIGTERM at ${at}s: stopped in ${s}s"; }
	case $rc in 0|3) ;; *) cat "$log"; fail "SIGTERM at ${at}s: exit $rc" ;; esac
	if [ "$rc" = 3 ]; then
		check grep -q 'no merge/unmerge cycle verified: the run ended during the' "$log" ||
			{ cat "$log"; fail "SIGTERM at ${at}s: 0 cycles without the reason"; }
		check grep -q '\] passed: 0$' "$log" || fail "SIGTERM at ${at}s: 0 cycles counted as passed"
	fi
	check_after "SIGTERM at $at" "$log"
done

# SIGTERM with every racer running: the racers stop too, within 2 s
log=$TMPD/term-all.log
"$STRESSOR" --ksm-unmerge 1 -t 60 --ksm-unmerge-bytes 64M --ksm-unmerge-method all --verify >"$log" 2>&1 &
pid=$!
log_wait "$log" "per stressor instance" && sleep 3
t0=$(date +%s.%N)
kill -TERM $pid
wait $pid
rc=$?
s=$(lat "$t0" "$(date +%s.%N)")
echo "64M every racer, SIGTERM after 3 s: exit $rc, stopped in ${s}s"
check [ "$(echo "$s < 2" | bc)" = 1 ] || { cat "$log"; fail "SIGTERM with every racer: stopped in ${s}s"; }
if [ "$rc" != 3 ]; then
	checked; expect_ok "$log" "$rc" || fail "SIGTERM with every racer: see above"
fi
check_after "SIGTERM, every racer" "$log"

# a worker killed before its first verified cycle fails the run
log=$TMPD/kill0.log
"$STRESSOR" --ksm-unmerge 1 -t 30 --ksm-unmerge-bytes 256M --ksm-unmerge-method madvise >"$log" 2>&1 &
pid=$!
for i in $(seq 1 250); do grep -q 'per stressor instance' "$log" && break; sleep 0.02; done
inst=$(instances_of $pid | head -1)
worker=$(worker_of "$inst")
check [ -n "$worker" ] || fail "kill0: no worker process"
kill -KILL "$worker"
wait $pid
rc=$?
cycles=$(total "$log" cycles)
echo "worker killed after $cycles cycles: run exit $rc"
check [ "$cycles" = 0 ] || echo "note: the worker verified $cycles cycle(s) before the kill"
check [ "$rc" = 2 ] || { cat "$log"; fail "kill0: exit $rc, expected 2"; }
check grep -q '\] failed: 1: ksm-unmerge (1)$' "$log" || fail "kill0: no failed line"
check grep -q '\] passed: 0$' "$log" || fail "kill0: counted as passed"
check grep -q "worker $worker killed by signal 9 from outside the run" "$log" || { cat "$log"; fail "kill0: no reason"; }
check_after kill0 "$log"

# a timeout too short for the region: not a pass, the step is named
log=$TMPD/short.log
"$STRESSOR" --ksm-unmerge 1 -t 1 --ksm-unmerge-bytes 448M --ksm-unmerge-method madvise >"$log" 2>&1
rc=$?
echo "448M -t 1: exit $rc, $(total "$log" cycles) cycles"
if [ "$(total "$log" cycles)" = 0 ]; then
	check [ "$rc" = 3 ] || { cat "$log"; fail "short: 0 cycles, exit $rc, expected 3"; }
	check grep -q 'no merge/unmerge cycle verified: the run ended during the' "$log" || fail "short: no reason"
	check grep -q '\] skipped: 1: ksm-unmerge (1)$' "$log" || fail "short: not skipped"
fi
check_after short "$log"

if [ "${KSM_IT_BIG:-0}" = 1 ]; then
	log=$TMPD/big.log
	t0=$(date +%s.%N)
	"$STRESSOR" --ksm-unmerge 0 --ksm-unmerge-bytes 50% -t 240 --verify --metrics >"$log" 2>&1
	rc=$?
	s=$(lat "$t0" "$(date +%s.%N)")
	echo "50% -t 240: exit $rc after ${s}s, cycles $(total "$log" cycles)"
	check [ "$rc" = 0 ] || { cat "$log"; fail "big: exit $rc"; }
	check [ "$(total "$log" cycles)" -gt 0 ] || fail "big: no verified cycle"
	check [ "$(echo "$s < 242" | bc)" = 1 ] || fail "big: ended ${s}s after start (timeout 240)"
	check_after big "$log"
fi
echo "ok: timeout and SIGTERM stops within 2 s, killed instance fails the run, short run not a pass"
checks_done
exit 0
