#!/bin/bash
# tests/it/racer/all.sh: --ksm-unmerge-method all with 2 instances on the real
# kernel: exit 0 with --verify (a known kernel bug is named, not failed:
# expect_ok in lib.sh), every racer of
# the table (build/ksm-racers) "reached" (or skipped by its supported()
# check where the kernel lacks its interface: racer_skip_ok in lib.sh; a
# start() failure or a skip on a kernel that has the interface fails),
# quiet cycles (the window 5-8 s in: every instance's racers stopped)
# counted with their metrics, and
# nothing left behind: no process of the run, no new file of the run in
# /tmp, /var/tmp or its working directory, the KSM knobs as before.  Also:
# every racer of the table has its own tests/it/racer/<name>.sh.
. "$(dirname "$0")/../../lib/lib.sh"
require_ksm

private_bin
# the run's cwd (the default --temp-path, where the gup racer puts its file)
RUNDIR=$TMPD/cwd
mkdir -p "$RUNDIR" || fail "cannot create $RUNDIR"
# listing: entries of the run's kind in /tmp and /var/tmp, and all of its cwd
# (by name: a directory whose mtime changed is not a file left behind)
listing() {
	{ find /tmp /var/tmp -mindepth 1 -maxdepth 1 ! -path "$TMPD" | grep -E 'stress|ksm'
	  find "$RUNDIR" -mindepth 1; } 2>/dev/null | sort
}

before=$(knobs)
files_before=$(listing)
log=$TMPD/all.log
(cd "$RUNDIR" && exec "$BIN" --ksm-unmerge 2 -t 12 --verify --metrics --ksm-unmerge-method all \
	--ksm-unmerge-bytes 32M) > "$log" 2>&1
rc=$?
checked; expect_ok "$log" "$rc" || fail "exit $rc"
racers_check "$log"
cycles=$(total "$log" cycles)
quiet=$(total "$log" quiet-cycles)
check [ "$cycles" -ge 8 ] || { cat "$log"; fail "only $cycles verified cycles in 12 s"; }
check [ "$quiet" -gt 0 ] || { cat "$log"; fail "$cycles cycles, no quiet cycle counted"; }
check grep -q " quiet unmerge MB per sec " "$log" || fail "no quiet unmerge MB per sec metric"
check grep -q " quiet CPU-time unmerge MB per sec " "$log" || fail "no quiet CPU-time unmerge MB per sec metric"
for r in $(racer_names); do
	check [ -f "$TOP/tests/it/racer/$r.sh" ] || fail "racer $r has no tests/it/racer/$r.sh"
done
for i in $(seq 1 20); do [ -z "$(ours)" ] && break; sleep 0.1; done
check [ -z "$(ours)" ] || fail "processes left: $(ours)"
check [ "$(listing)" = "$files_before" ] || fail "files left: $(comm -13 <(echo "$files_before") <(listing))"
check [ "$(knobs)" = "$before" ] || fail "knobs '$(knobs)' != '$before'"
grep "racer .* reached" "$log" | sed 's/.*ksm-unmerge: /ok /'
echo "ok cycles=$cycles quiet-cycles=$quiet; $(grep -o 'ksm-unmerge .* quiet unmerge MB per sec' "$log" | head -1)"
checks_done
exit 0
