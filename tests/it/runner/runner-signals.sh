#!/bin/bash
# tests/it/runner/runner-signals.sh: SIGTERM / SIGINT to the parent mid-run stop all
# instances, print the full summary and run deinit() exactly once, within
# 2 s; an instance that ignores SIGALRM is SIGKILLed after 2 s and, as in
# stress-ng, a SIGKILLed instance counts as passed (exit 0; the stressor
# itself must fail a kill it did not want).  Uses tests/build/dummy-runner.

cd "$(dirname "$0")/../../.." || exit 1
. tests/lib/runner.sh
tmp=$(mktemp -d /tmp/it-signals.XXXXXX)
trap 'rm -rf "$tmp"' EXIT

# stop_run SIG MODE MAXSECS: start a 60 s run, send SIG after 1 s, check
stop_run() {
	local sig=$1 mode=$2 max=$3 pid t0 t1 rc ms want=0
	: >"$tmp/trace"
	DUMMY_MODE=$mode DUMMY_TRACE="$tmp/trace" "$R" --ksm-unmerge 2 -t 60 \
		--metrics-brief -v >"$tmp/out" 2>&1 &
	pid=$!
	sleep 1
	t0=$(date +%s%N)
	kill -"$sig" "$pid"
	wait "$pid"
	rc=$?
	t1=$(date +%s%N)
	ms=$(( (t1 - t0) / 1000000 ))
	check [ "$rc" -eq "$want" ] || fail "$sig/$mode: exit $rc, expected $want"
	check [ "$ms" -le $((max * 1000)) ] || fail "$sig/$mode: took ${ms} ms (> ${max} s)"
	check grep -q '\] stopping 2 stressors$' "$tmp/out" || fail "$sig/$mode: no stopping line"
	# brief mode omits a row with 0 ops that did not run OK (hang)
	if [ "$mode" = ok ]; then
		check grep -Eq '\] ksm-unmerge +[1-9][0-9]* ' "$tmp/out" || fail "$sig/$mode: no metrics row"
	fi
	check grep -q '\] passed: 2: ksm-unmerge (2)$' "$tmp/out" || fail "$sig/$mode: no passed line"
	check grep -q '\] successful run completed in' "$tmp/out" || fail "$sig/$mode: no final line"
	check grep -q 'finished prematurely' "$tmp/out" && fail "$sig/$mode: premature warning after stop"
	check [ "$(grep -c '^deinit' "$tmp/trace")" = 1 ] || fail "$sig/$mode: deinit not called once"
	echo "$sig/$mode: stopped in ${ms} ms"
}

stop_run TERM ok 2
stop_run INT ok 2
stop_run TERM hang 3
check grep -q "terminated on signal 9 'SIGKILL'" "$tmp/out" || fail "hang: SIGKILL not reported"
check grep -q 'still running, sending SIGKILL' "$tmp/out" || fail "hang: no escalation line"
sleep 0.2
exe=$(readlink -f "$R")
for p in /proc/[0-9]*; do
	check [ "$(readlink "$p/exe" 2>/dev/null)" = "$exe" ] && fail "instance ${p#/proc/} left running"
done

[ "$errors" -eq 0 ] || { echo "$errors check(s) failed"; exit 1; }
echo "signal handling OK"
checks_done
