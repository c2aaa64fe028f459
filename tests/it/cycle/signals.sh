#!/bin/bash
# tests/it/cycle/signals.sh: SIGTERM/SIGINT of the parent mid-cycle stop the run within
# 2.5 s with the summary and the knobs restored; SIGKILL of a worker (the
# instance's child running the cycles) is reported and fails the run (exit
# 2); SIGKILL of an instance ends its worker at once; SIGKILL of the parent
# is repaired by the next run from the state file.  Nothing is left behind
# in any case.
. "$(dirname "$0")/../../lib/lib.sh"
require_ksm
private_bin		# leftovers are this script's processes only (others may queue for the lock)
STRESSOR=$BIN

# wait_cycles: wait until the run logging to $1 is past its set-up
wait_started() {
	log_wait "$1" "using .* per stressor instance" && sleep 1.5
}

before=$(knobs)
for sig in TERM INT; do
	log=$TMPD/$sig.log
	"$STRESSOR" --ksm-unmerge 2 -t 60 --metrics --ksm-unmerge-bytes 32M --ksm-unmerge-method madvise > "$log" 2>&1 &
	pid=$!
	wait_started "$log" || fail "SIG$sig: run did not start"
	t0=$(date +%s.%N)
	kill -$sig $pid
	wait $pid
	rc=$?
	t1=$(date +%s.%N)
	secs=$(echo "$t1 - $t0" | bc)
	echo "SIG$sig: exit $rc after ${secs}s"
	checked; [ "$(echo "$secs < 2.5" | bc)" = 1 ] || fail "SIG$sig took ${secs}s to stop"
	check [ "$rc" = 0 ] || { cat "$log"; fail "SIG$sig: exit $rc (a stop is a clean end)"; }
	checked; ! fail_lines "$log" >/dev/null || { cat "$log"; fail "SIG$sig: fail: lines"; }
	check grep -q "successful run completed" "$log" || { cat "$log"; fail "SIG$sig: no summary"; }
	check grep -q "ksm-unmerge: totals:" "$log" || fail "SIG$sig: deinit did not run"
	check [ "$(knobs)" = "$before" ] || fail "SIG$sig: knobs '$(knobs)' != '$before'"
	check [ -z "$(ours)" ] || fail "SIG$sig: processes left: $(ours)"
	check [ ! -e /run/stress-ksm-unmerge.state ] || fail "SIG$sig: state file left"
done

# SIGKILL of one worker (the instance's child that runs the cycles): the
# instance reports it, the run fails, the knobs are restored
log=$TMPD/kill-worker.log
"$STRESSOR" --ksm-unmerge 2 -t 6 --metrics --ksm-unmerge-bytes 32M --ksm-unmerge-method madvise > "$log" 2>&1 &
pid=$!
wait_started "$log" || fail "worker kill: run did not start"
inst=$(instances_of $pid | head -1)
check [ -n "$inst" ] || fail "no instance process found"
worker=$(worker_of "$inst")
check [ -n "$worker" ] || fail "instance $inst has no worker"
kill -KILL "$worker"
wait $pid
rc=$?
echo "SIGKILL of worker $worker (instance $inst): run exit $rc"
check grep -q "worker $worker killed by signal 9 from outside the run" "$log" || { cat "$log"; fail "killed worker $worker not reported"; }
# a killed worker is not a pass, whatever the other instance did
check [ "$rc" = 2 ] || { cat "$log"; fail "worker kill: run exit $rc, expected 2"; }
check grep -q "\] failed: 1: ksm-unmerge (1)$" "$log" || { cat "$log"; fail "worker kill: no failed line"; }
check [ "$(knobs)" = "$before" ] || fail "worker kill: knobs '$(knobs)' != '$before'"
check [ -z "$(ours)" ] || fail "worker kill: processes left: $(ours)"

# SIGKILL of one instance (the supervisor): stress-ng's rule decides what
# that instance counts as (stress-ng counts a SIGKILLed instance as passed);
# whatever it is, the orphaned worker stops at once (its parent-death
# signal), the other instance finishes, nothing is left, knobs restored
log=$TMPD/kill-instance.log
"$STRESSOR" --ksm-unmerge 2 -t 6 --metrics --ksm-unmerge-bytes 32M --ksm-unmerge-method madvise > "$log" 2>&1 &
pid=$!
wait_started "$log" || fail "instance kill: run did not start"
inst=$(instances_of $pid | head -1)
worker=$(worker_of "$inst")
check [ -n "$inst" ] && [ -n "$worker" ] || fail "instance kill: no instance or worker"
kill -KILL "$inst"
for i in $(seq 1 120); do kill -0 "$worker" 2>/dev/null || break; sleep 0.1; done
checked; ! kill -0 "$worker" 2>/dev/null || fail "instance kill: worker $worker still alive 12 s after its instance was killed"
echo "SIGKILL of instance $inst: its worker $worker ended within $((i / 10)).$((i % 10)) s"
wait $pid
rc=$?
echo "SIGKILL of instance $inst: run exit $rc ($(grep -o '\] \(passed\|failed\): .*' "$log" | tr '\n' ' '))"
case $rc in
0) check grep -q "\] passed: 2: ksm-unmerge (2)$" "$log" || { cat "$log"; fail "instance kill: exit 0 without 'passed: 2'"; };;
2) check grep -q "\] failed: 1: ksm-unmerge (1)$" "$log" || { cat "$log"; fail "instance kill: exit 2 without 'failed: 1'"; };;
*) cat "$log"; fail "instance kill: run exit $rc";;
esac
check grep -q "ksm-unmerge: totals:" "$log" || fail "instance kill: deinit did not run"
check [ "$(knobs)" = "$before" ] || fail "instance kill: knobs '$(knobs)' != '$before'"
check [ -z "$(ours)" ] || fail "instance kill: processes left: $(ours)"

# SIGKILL of the parent: knobs stay changed, state file kept; next run repairs
log=$TMPD/kill-parent.log
"$STRESSOR" --ksm-unmerge 1 -t 30 --ksm-unmerge-bytes 16M --ksm-unmerge-method madvise > "$log" 2>&1 &
pid=$!
wait_started "$log" || fail "parent kill: run did not start"
kill -KILL $pid
wait $pid 2>/dev/null
for i in $(seq 1 120); do [ -z "$(ours)" ] && break; sleep 0.1; done
check [ -z "$(ours)" ] || fail "parent kill: instances or workers outlived the parent: $(ours)"
check [ -e /run/stress-ksm-unmerge.state ] || fail "parent kill: no state file to repair from"
check [ "$(cat $KSM/run)" = 1 ] || echo "note: run is $(cat $KSM/run) after SIGKILL"
log2=$TMPD/repair.log
"$STRESSOR" --ksm-unmerge 1 -t 2 --ksm-unmerge-bytes 1M --ksm-unmerge-method madvise > "$log2" 2>&1
check grep -q "restoring KSM knobs left by killed run" "$log2" || { cat "$log2"; fail "next run did not repair"; }
check [ "$(knobs)" = "$before" ] || fail "after repair: knobs '$(knobs)' != '$before'"
check [ ! -e /run/stress-ksm-unmerge.state ] || fail "state file left after repair"
echo "ok: SIGTERM, SIGINT, worker SIGKILL, instance SIGKILL, parent SIGKILL + repair"
checks_done
exit 0
