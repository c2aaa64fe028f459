#!/bin/bash
# tests/it/cycle/signals.sh: SIGTERM/SIGINT of the parent mid-cycle stop the run within
# 2 s with the summary and the knobs restored; SIGKILL of an instance is
# reported, fails the run (exit 2) and the knobs are restored; SIGKILL of the parent is repaired by the
# next run from the state file.  Nothing is left behind in any case.
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
	check grep -q "run completed" "$log" || { cat "$log"; fail "SIG$sig: no summary"; }
	check grep -q "ksm-unmerge: totals:" "$log" || fail "SIG$sig: deinit did not run"
	check [ "$(knobs)" = "$before" ] || fail "SIG$sig: knobs '$(knobs)' != '$before'"
	check [ -z "$(ours)" ] || fail "SIG$sig: processes left: $(ours)"
	check [ ! -e /run/stress-ksm-unmerge.state ] || fail "SIG$sig: state file left"
done

# SIGKILL of one instance: reported, the rest go on, knobs restored
log=$TMPD/kill-instance.log
"$STRESSOR" --ksm-unmerge 2 -t 6 --metrics --ksm-unmerge-bytes 32M --ksm-unmerge-method madvise > "$log" 2>&1 &
pid=$!
wait_started "$log" || fail "instance kill: run did not start"
# an instance, not the kernel-log watcher or the monitor the parent also forks
child=$(for c in $(pgrep -P $pid); do grep -q '\[run\]' /proc/$c/cmdline 2>/dev/null && echo $c; done | head -1)
check [ -n "$child" ] || fail "no instance process found"
kill -KILL "$child"
wait $pid
rc=$?
echo "SIGKILL of instance $child: run exit $rc"
check grep -q "\[$child\] terminated on signal 9" "$log" || { cat "$log"; fail "killed instance $child not reported"; }
# a killed instance is not a pass, whatever the other one did
check [ "$rc" = 2 ] || { cat "$log"; fail "instance kill: run exit $rc, expected 2"; }
check grep -q "\] failed: 1: ksm-unmerge (1)$" "$log" || { cat "$log"; fail "instance kill: no failed line"; }
check [ "$(knobs)" = "$before" ] || fail "instance kill: knobs '$(knobs)' != '$before'"
check [ -z "$(ours)" ] || fail "instance kill: processes left: $(ours)"

# SIGKILL of the parent: knobs stay changed, state file kept; next run repairs
log=$TMPD/kill-parent.log
"$STRESSOR" --ksm-unmerge 1 -t 30 --ksm-unmerge-bytes 16M --ksm-unmerge-method madvise > "$log" 2>&1 &
pid=$!
wait_started "$log" || fail "parent kill: run did not start"
kill -KILL $pid
wait $pid 2>/dev/null
for i in $(seq 1 30); do [ -z "$(ours)" ] && break; sleep 0.1; done
check [ -z "$(ours)" ] || fail "parent kill: instances outlived the parent: $(ours)"
check [ -e /run/stress-ksm-unmerge.state ] || fail "parent kill: no state file to repair from"
check [ "$(cat $KSM/run)" = 1 ] || echo "note: run is $(cat $KSM/run) after SIGKILL"
log2=$TMPD/repair.log
"$STRESSOR" --ksm-unmerge 1 -t 2 --ksm-unmerge-bytes 1M --ksm-unmerge-method madvise > "$log2" 2>&1
check grep -q "restoring KSM knobs left by killed run" "$log2" || { cat "$log2"; fail "next run did not repair"; }
check [ "$(knobs)" = "$before" ] || fail "after repair: knobs '$(knobs)' != '$before'"
check [ ! -e /run/stress-ksm-unmerge.state ] || fail "state file left after repair"
echo "ok: SIGTERM, SIGINT, instance SIGKILL, parent SIGKILL + repair"
checks_done
exit 0
