#!/bin/bash
# tests/it/cycle/width.sh: the default job at width, many instances per CPU
# (8 per CPU here, 16 to 64 instances; the 0-day robot runs one per CPU on
# 64-224 CPUs, and over-subscribed CPUs are a harsher proxy for ksmd's
# share): --verify -t 20 with the default method and bytes passes (expect_ok:
# a known kernel bug is named, not failed), every instance verifies at least
# 3 cycles (the report's verified-cycles-min), every racer is reached (over
# all instances: more instances than CPUs) or skipped for a reason a test
# accepts, no merge wait is stuck and none ends in "nothing merged", the
# report has the width's lines (merge waits, ksmd's CPU share, RSS per
# instance, KSM-managed bytes), the run ends within 2 s of its timeout, and
# the knobs are as before.  Test memory: the default 64 MiB region split
# over the instances, the racers' memory split with it (docs/width.md).
. "$(dirname "$0")/../../lib/lib.sh"
require_ksm
private_bin

cpus=$(nproc)
n=$((8 * cpus))
[ "$n" -gt 64 ] && n=64
secs=20
before=$(knobs)
log=$TMPD/width.log
RUNDIR=$TMPD/cwd
mkdir -p "$RUNDIR" || fail "cannot create $RUNDIR"
t0=$(date +%s.%N)
(cd "$RUNDIR" && exec "$BIN" --ksm-unmerge "$n" -t "$secs" --verify --metrics) >"$log" 2>&1
rc=$?
took=$(echo "$(date +%s.%N) - $t0" | bc)
echo "--ksm-unmerge $n -t $secs on $cpus CPUs: exit $rc after ${took}s"
checked; expect_ok "$log" "$rc" || fail "exit $rc"
line=$(grep -o "ksm-unmerge: instances: .*" "$log")
least=$(echo "$line" | sed -n 's/.*verified-cycles-min=\([0-9]*\).*/\1/p')
check [ -n "$least" ] && [ "$least" -ge 3 ] 2>/dev/null || { cat "$log"; fail "an instance verified fewer than 3 cycles: '$line'"; }
check [ "$(echo "$line" | sed -n 's/.*count=\([0-9]*\),.*/\1/p')" = "$n" ] || fail "instances line: '$line'"
check echo "$line" | grep -q "worker-rss-kb-max=[1-9][0-9]*,ksm-managed-bytes=[1-9][0-9]*" ||
	fail "no RSS or KSM-managed bytes: '$line'"
racers_check "$log"
check [ "$RACERS_REACHED" -gt 0 ] || fail "no racer reached"
check grep -q "ksm-unmerge: merge waits: merged=[1-9][0-9]*,.*,stuck=0" "$log" || { cat "$log"; fail "merge waits: $(grep -o 'merge waits: .*' "$log")"; }
check grep -q "ksm-unmerge: ksmd: cpu-share=[0-9.]*%" "$log" || fail "no ksmd line"
checked; ! grep -q "nothing merged\|ksmd stuck" "$log" || { cat "$log"; fail "nothing merged or ksmd stuck"; }
# the end of the run: the instances' real time (the metrics row) against the timeout
run=$(awk '$2 == "metrc:" && $4 == "ksm-unmerge" && $5 ~ /^[0-9]+$/ { print $6; exit }' "$log")
check [ -n "$run" ] && [ "$(echo "$run < $secs + 2" | bc)" = 1 ] || fail "the instances ran ${run}s for -t $secs"
check [ "$(knobs)" = "$before" ] || fail "knobs '$(knobs)' != '$before'"
for i in $(seq 1 20); do [ -z "$(ours)" ] && break; sleep 0.1; done
check [ -z "$(ours)" ] || fail "processes left: $(ours)"
echo "ok $line"
grep -o "ksm-unmerge: \(merge waits\|ksmd\): .*" "$log" | sed 's/^/ok /'
checks_done
exit 0
