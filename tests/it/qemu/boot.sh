#!/bin/bash
# tests/it/qemu/boot.sh: boot Debian's 6.1 kernel under qemu with tools/kernels/ksm-qemu
# and check the harness end to end:
#   1. a short stressor run: the harness's exit status agrees with the
#      stressor's summary printed in the guest (pass <-> "successful run
#      completed"; fail <-> exit 2 and a "fail:" line), and the output, YAML
#      and guest dmesg came back;
#   2. a guest command's exit status is passed through (--init-cmd 'exit 5'),
#      and another static program's (--program) arguments, output and status;
#   3. a guest kernel panic gives 126, a hung guest gives 124;
#   2c. --batch: several commands in one boot (verdicts, group stop, early
#      stop of a failed command, known lines, a panic mid-batch).
# Slow (each boot is ~10 s under TCG), so it runs only with KSM_QEMU_TESTS=1.
# Needs: make static (or KSM_QEMU_STRESSOR=/path/static-binary),
# make kernel-6.1 (or KSM_QEMU_KERNEL=/path/vmlinuz).

if [ "${KSM_QEMU_TESTS:-0}" != 1 ]; then
	echo "skip: it/qemu/boot.sh boots a kernel under qemu (slow); set KSM_QEMU_TESTS=1 or run 'make test-qemu'"
	exit 77
fi
cd "$(dirname "$0")/../../.." || exit 1
. tests/lib/checks.sh
TOOL=tools/kernels/ksm-qemu
KERNEL=${KSM_QEMU_KERNEL:-$(ls build/kernels/linux-image-6.1.*/boot/vmlinuz-6.1.* 2>/dev/null | head -n 1)}
MEM=${KSM_QEMU_MEM:-1G}
STRESSOR=${KSM_QEMU_STRESSOR:-./build/stress-ksm-unmerge-static}
T=$(mktemp -d /tmp/it-qemu-boot.XXXXXX) || exit 1
trap 'rm -rf "$T"' EXIT
FAIL=0
PASS=0

# ok/bad: record one check's outcome
ok() { echo "ok   $*"; PASS=$((PASS + 1)); }
bad() { echo "FAIL $*"; FAIL=$((FAIL + 1)); }

# harness: run tools/kernels/ksm-qemu into $T/<name>, output in $T/<name>.log; sets RC
harness() {
	local name=$1
	shift
	"$TOOL" --kernel "$KERNEL" --mem "$MEM" --stressor "$STRESSOR" --out "$T/$name" "$@" > "$T/$name.log" 2>&1
	RC=$?
	echo "     $name: harness exit $RC; $(grep '^ksm-qemu: result:' "$T/$name.log")"
}

[ -n "$KERNEL" ] && [ -f "$KERNEL" ] || { echo "FAIL no 6.1 kernel: run 'make kernel-6.1' or set KSM_QEMU_KERNEL"; exit 1; }
[ -x "$STRESSOR" ] || { echo "FAIL no $STRESSOR: run 'make static'"; exit 1; }

# 1. the real stressor, short
harness stress --timeout 900 -- --ksm-unmerge 1 -t 20 --ksm-unmerge-method all
D=$T/stress
cat "$D/stdout.txt" "$D/stderr.txt" > "$T/guest-out" 2>/dev/null
if [ "$RC" -ge 124 ] || [ ! -s "$T/guest-out" ]; then
	bad "stressor run: no result from the guest (exit $RC)"
	tail -n 30 "$T/stress.log" | sed 's/^/     | /'
else
	nfail=$(grep -c 'fail:' "$T/guest-out")
	succ=$(grep -c 'successful run completed' "$T/guest-out")
	unsucc=$(grep -c 'unsuccessful run completed' "$T/guest-out")
	succ=$((succ - unsucc))
	if [ "$RC" -eq 0 ]; then
		if [ "$succ" -ge 1 ] && [ "$nfail" -eq 0 ]; then
			ok "stressor run: exit 0 and 'successful run completed', no fail: line"
		else
			bad "stressor run: exit 0 but successful=$succ fail-lines=$nfail"
		fi
	elif [ "$nfail" -gt 0 ]; then
		if [ "$RC" -eq 2 ]; then
			ok "stressor run: exit 2 and $nfail fail: line(s)"
		else
			bad "stressor run: $nfail fail: line(s) but exit $RC (want 2)"
		fi
	elif [ "$RC" -eq 2 ] && grep -q -E 'error:|unsuccessful run completed' "$T/guest-out"; then
		ok "stressor run: exit 2 with an error line (no fail: line)"
	else
		bad "stressor run: exit $RC with successful=$succ and no fail: line"
	fi
	grep -E 'fail:|error:|skip|successful run' "$T/guest-out" | head -n 20 | sed 's/^/     | /'
	[ "$(cat "$D/exit-status" 2>/dev/null)" = "$RC" ] && ok "exit-status file says $RC" ||
		bad "exit-status file disagrees with exit $RC"
	[ -s "$D/stress.yaml" ] && ok "YAML came back" || bad "no stress.yaml from the guest"
	grep -q 'Linux version 6\.1\.' "$D/dmesg.txt" 2>/dev/null && ok "guest dmesg came back (6.1)" ||
		bad "no guest dmesg.txt with 'Linux version 6.1.'"
	grep -q 'run completed' "$D/console.log" && ok "stressor output streamed on the console" ||
		bad "the stressor's summary is not in console.log"
fi

# 2. exit status pass-through
harness rc5 --timeout 300 --init-cmd 'echo from-guest; exit 5'
[ "$RC" -eq 5 ] && grep -q '^from-guest$' "$T/rc5/stdout.txt" 2>/dev/null &&
	ok "guest status 5 passed through" || bad "guest 'exit 5' gave harness exit $RC"

# 2b. another static program (--program): its arguments, output and status
printf '#include <stdio.h>\nint main(int c, char **v) { printf("prog %%s %%d\\n", v[1], c); return 3; }\n' > "$T/prog.c"
if gcc -static -o "$T/prog.bin" "$T/prog.c" 2> "$T/prog.err"; then
	harness prog --timeout 300 --program "$T/prog.bin" -- 'one arg'
	[ "$RC" -eq 3 ] && grep -q '^prog one arg 2$' "$T/prog/stdout.txt" 2>/dev/null &&
		grep -q '^program: ' "$T/prog/summary.txt" &&
		grep -q 'result: program prog.bin exit status 3' "$T/prog.log" &&
		ok "--program: argument, output and status 3 passed through" ||
		bad "--program gave harness exit $RC (want 3) or lost its output"
else
	bad "cannot build the static test program: $(head -n 1 "$T/prog.err")"
fi

# 2c. --batch: several commands in one boot, each with its own output,
# status and verdict; a group stops after --group-kills failures (and p
# after its --group-passes p=2 passes, while q, with no such limit, runs on), a failed
# command is stopped --stop-after s after its failing line, a known line
# is no failure; then a panic in the middle: what ran is kept, the command
# the kernel died under is "panic", the rest "not-run"
cat > "$T/runs.batch" <<'BATCH'
# name command
g.1 sh -c 'echo "stress-ng: fail: x"; exit 2'
g.2 sh -c 'echo "stress-ng: fail: y"; sleep 100; exit 2'
g.3 sh -c 'echo never; exit 0'
known.1 sh -c 'echo "stress-ng: fail: a known bug"; exit 2'
prog.1 prog.bin two
sig.1 sh -c 'kill -9 $$'
p.1 true
p.2 true
p.3 true
q.1 true
q.2 true
q.3 true
BATCH
harness batch --timeout 300 --batch "$T/runs.batch" --program "$T/prog.bin" \
	--kill-re 'stress-ng: fail:' --known-re 'known bug' --group-kills 2 --stop-after 2 \
	--group-passes p=2
D=$T/batch
want=$(printf 'g.1 2 failed\ng.2 143 failed\ng.3 - skipped\nknown.1 2 passed\nprog.1 3 passed\nsig.1 137 failed')
want=$(printf '%s\np.1 0 passed\np.2 0 passed\np.3 - skipped\nq.1 0 passed\nq.2 0 passed\nq.3 0 passed' \
	"$want")
got=$(awk -F'\t' 'NR > 1 { s = ($3 == "skipped" ? "-" : $2); print $1, s, $3 }' "$D/batch.tsv" 2>/dev/null)
[ "$RC" -eq 0 ] && [ "$got" = "$want" ] && ok "--batch: statuses and verdicts of 12 commands in one boot" ||
	{ bad "--batch gave exit $RC and verdicts:"; echo "$got" | sed 's/^/     | /'; }
grep -q '^prog two 2$' "$D/prog.1/stress.txt" 2>/dev/null && [ "$(cat "$D/prog.1/exit-status")" = 3 ] &&
	ok "--batch: a command's output and exit status in its own directory" ||
	bad "--batch: prog.1's output or status missing"
secs=$(awk -F'\t' '$1 == "g.2" { print $4 }' "$D/batch.tsv" 2>/dev/null)
[ -n "$secs" ] && [ "$secs" -lt 60 ] && ok "--batch: a failed command stopped early (${secs}s of its 100)" ||
	bad "--batch: g.2 was not stopped early (${secs:-?}s)"
grep -q 'batch done: .*3 failed' "$T/batch.log" && ok "--batch: the result line counts the verdicts" ||
	bad "--batch: no 'batch done' result line"
printf 'a.1 sh -c "echo before"\nb.1 sh -c "echo c > /proc/sysrq-trigger; sleep 60"\nc.1 true\n' > "$T/panic.batch"
harness batchpanic --timeout 300 --batch "$T/panic.batch"
got=$(awk -F'\t' 'NR > 1 { print $1, $3 }' "$T/batchpanic/batch.tsv" 2>/dev/null | tr '\n' ' ')
[ "$RC" -eq 126 ] && [ "$got" = "a.1 passed b.1 panic c.1 not-run " ] &&
	grep -q '^before$' "$T/batchpanic/a.1/stress.txt" &&
	ok "--batch: a panic keeps what ran, marks the command it hit and the rest" ||
	bad "--batch panic: exit $RC (want 126), verdicts '$got'"

# 2d. a wedged guest: the command's parent is stopped, so the guest never
# learns that the command ended; the host stops qemu --cmd-timeout + 90 s
# after the command began, and the command gets no result
printf 'w.1 sh -c "kill -STOP $PPID; sleep 600"\nafter.1 true\n' > "$T/wedge.batch"
harness wedge --timeout 400 --batch "$T/wedge.batch" --cmd-timeout 5
got=$(awk -F'\t' 'NR > 1 { print $1, $3 }' "$T/wedge/batch.tsv" 2>/dev/null | tr '\n' ' ')
[ "$RC" -eq 124 ] && [ "$got" = "w.1 no-result after.1 not-run " ] && grep -q 'wedged the guest' "$T/wedge.log" &&
	ok "--batch: a wedged guest is stopped after --cmd-timeout + 90 s" ||
	bad "--batch wedge: exit $RC (want 124), verdicts '$got'"

# 2e. a wedge after an oops: the host stops qemu 60 s after the oops line
# (here printed by the command itself), long before --cmd-timeout + 90 s
printf 'o.1 sh -c "echo kernel BUG at fake.c:1; kill -STOP $PPID; sleep 600"\n' > "$T/oops.batch"
t0=$SECONDS
harness oops --timeout 600 --batch "$T/oops.batch" --cmd-timeout 300
got=$(awk -F'\t' 'NR > 1 { print $1, $3 }' "$T/oops/batch.tsv" 2>/dev/null | tr '\n' ' ')
[ "$RC" -eq 124 ] && [ "$got" = "o.1 no-result " ] && [ $((SECONDS - t0)) -lt 250 ] &&
	ok "--batch: a command wedged after an oops is stopped 60 s after it ($((SECONDS - t0)) s)" ||
	bad "--batch oops wedge: exit $RC (want 124), verdicts '$got', $((SECONDS - t0)) s (want < 250)"

# 3. panic and timeout
harness panic --timeout 300 --init-cmd 'echo c > /proc/sysrq-trigger; sleep 60'
[ "$RC" -eq 126 ] && grep -q 'guest kernel panic' "$T/panic.log" &&
	ok "guest panic gives 126" || bad "guest panic gave exit $RC (want 126)"
harness hang --timeout 40 --init-cmd 'sleep 600'
[ "$RC" -eq 124 ] && grep -q 'timed out' "$T/hang.log" &&
	ok "hung guest gives 124" || bad "hung guest gave exit $RC (want 124)"

echo "it/qemu/boot.sh: $PASS passed, $FAIL failed"
checked $((PASS + FAIL))
checks_done
[ "$FAIL" -eq 0 ]
