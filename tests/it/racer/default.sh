#!/bin/bash
# tests/it/racer/default.sh: with no --ksm-unmerge-method a run does the whole job,
# as "all": both merge switches cycle (prctl only where the kernel has
# PR_SET_MEMORY_MERGE, else a skip line) and every racer prints "reached"
# with kernel-side evidence, or "skipped:" with a reason; exit 0 with
# --verify (or only the known kernel bug: the default job has the fork-zero
# racer, expect_ok_or_known_bug) and the KSM knobs as before.
. "$(dirname "$0")/../../lib/lib.sh"
require_ksm

private_bin
RUNDIR=$TMPD/cwd
mkdir -p "$RUNDIR" || fail "cannot create $RUNDIR"
before=$(knobs)
log=$TMPD/default.log
(cd "$RUNDIR" && exec "$BIN" --ksm-unmerge 1 -t 8 --verify --ksm-unmerge-bytes 32M) >"$log" 2>&1
rc=$?
checked; expect_ok_or_known_bug "$log" "$rc" || fail "exit $rc"
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
