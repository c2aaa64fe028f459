#!/bin/bash
# tests/it/racer/default.sh: with no --ksm-unmerge-method a run does the whole job,
# as "all": both merge switches cycle (prctl only where the kernel has
# PR_SET_MEMORY_MERGE, else a skip line) and every racer prints "reached"
# with kernel-side evidence, or "skipped:" with a reason (the fork-zero
# racer steps aside once the run has seen the known kernel bug); exit 0
# with --verify (expect_ok); on a kernel with per-process ksm_zero_pages
# the run says whether it saw the known bug, and the KSM zero pages it
# leaves charged to no process stay within 1024 (the global counter
# before and after, and the run's own figure); the KSM knobs as before.
. "$(dirname "$0")/../../lib/lib.sh"
require_ksm

private_bin
RUNDIR=$TMPD/cwd
mkdir -p "$RUNDIR" || fail "cannot create $RUNDIR"
before=$(knobs)
log=$TMPD/default.log
z0=$(cat "$KSM/ksm_zero_pages" 2>/dev/null)
(cd "$RUNDIR" && exec "$BIN" --ksm-unmerge 1 -t 8 --verify --metrics --ksm-unmerge-bytes 32M) >"$log" 2>&1
rc=$?
z1=$(cat "$KSM/ksm_zero_pages" 2>/dev/null)
checked; expect_ok "$log" "$rc" || fail "exit $rc"
if known_bug_possible; then
	# the start probe ran (the default job's racers fork) and said what it saw
	check grep -q "$KNOWN_BUG_LINE" "$log" || { cat "$log"; fail "no line on the known kernel bug"; }
	left=$(known_bug_left "$log")
	echo "ok global ksm_zero_pages $z0 -> $z1, the run says it left $left charged to no process"
	check [ $((z1 - z0)) -le 1024 ] || fail "the default job moved the global ksm_zero_pages by $((z1 - z0)) (> 1024)"
	check [ "$left" -le 1024 ] || fail "the run left $left KSM zero pages charged to no process (> 1024)"
	if known_bug_seen "$log"; then
		check grep -q "racer fork-zero skipped: steps aside" "$log" ||
			{ grep racer "$log"; fail "the known bug was seen but the fork-zero racer did not step aside"; }
		check grep -q " known kernel bugs confirmed (total" "$log" || fail "no known kernel bugs metric"
	fi
fi
check [ "$(total "$log" madvise-cycles)" -gt 0 ] 2>/dev/null || { cat "$log"; fail "no madvise cycle"; }
if ! grep -q "method prctl skipped:" "$log"; then
	check [ "$(total "$log" prctl-cycles)" -gt 0 ] 2>/dev/null || { cat "$log"; fail "no prctl cycle"; }
fi
racers_check "$log"
check [ "$RACERS_REACHED" -gt 0 ] || fail "no racer ran by default"
check [ "$(knobs)" = "$before" ] || fail "knobs '$(knobs)' != '$before'"
grep -E "racer .* reached|totals:" "$log" | sed 's/.*ksm-unmerge: /ok /'
checks_done
exit 0
