#!/bin/bash
# tests/it/tools/bench-idle.sh: the bench's idle condition.  run-bench
# rejects a bad --idle with one line naming it and creates nothing; while
# bench/lib.sh's idle_poll holds its request no CPU enters an idle state
# other than polling, and the request is gone once its holder exits.
# run-tests holds the KSM lock around it, as run-bench holds it around the
# request: no bench pair's request overlaps the test.

cd "$(dirname "$0")/../../.." || exit 1
. tests/lib/checks.sh
. tests/lib/lib.sh
DEV=/dev/cpu_dma_latency

tmp=$(mktemp -d /tmp/it-bench-idle.XXXXXX)
trap 'rm -rf "$tmp"' EXIT

# outs: what build/bench holds (run-bench creates its directory there)
outs() { ls -A build/bench 2>/dev/null; }

# bad --idle: one stderr line naming the option and the value, exit 1
before=$(outs)
bench/run-bench --idle sometimes >"$tmp/out" 2>"$tmp/err"
rc=$?
check [ "$rc" = 1 ] || fail "--idle sometimes: exit $rc, expected 1"
check [ "$(wc -l <"$tmp/err")" = 1 ] || fail "--idle sometimes: $(wc -l <"$tmp/err") stderr lines, expected 1: $(cat "$tmp/err")"
check grep -q "option --idle: invalid value 'sometimes'" "$tmp/err" || fail "--idle sometimes: '$(cat "$tmp/err")'"
check [ ! -s "$tmp/out" ] || fail "--idle sometimes printed on stdout: $(head -3 "$tmp/out")"
check [ "$(outs)" = "$before" ] || fail "--idle sometimes created an output directory"

[ -w "$DEV" ] || skip "no $DEV (checked: bad --idle)"
# latency: the CPU latency the kernel applies now (us; the strictest request)
latency() { od -An -td4 -N4 "$DEV" | tr -d ' '; }
held_before=$(latency)

# held: halts while idle_poll's request is held, and the latency then
(
	. bench/lib.sh
	idle_poll 8 || { echo "idle_poll failed"; exit 1; }
	sleep 0.3	# a CPU halted before the request is kicked out of it
	a=$(idle_halts)
	sleep 2
	b=$(idle_halts)
	echo "latency $(latency)"
	[ "$a" = - ] && echo "halts -" || echo "halts $(( b - a ))"
) >"$tmp/held" 2>&1
check grep -q '^latency 0$' "$tmp/held" || fail "while held the CPU latency is not 0: $(cat "$tmp/held")"
halts=$(awk '$1 == "halts" { print $2 }' "$tmp/held")
# without a POLL state (arm64: state0 is WFI) idle never polls: no count
grep -qx POLL /sys/devices/system/cpu/cpu0/cpuidle/state*/name 2>/dev/null || halts=-
if [ "$halts" != - ]; then
	check [ "$halts" = 0 ] || fail "$halts idle entries other than polling in 2 s with the request held"
fi
check [ "$(latency)" = "$held_before" ] || fail "the CPU latency is $(latency) after the holder exited, $held_before before"
echo "held: latency 0, halts ${halts/-/not counted (no cpuidle or no POLL state)}; after: latency $(latency) as before"
checks_done
