#!/bin/bash
# tests/it/racer/uffd-wp-gup.sh: the uffd-wp and gup racers together, no other
# racer (so no layout racer: the "lost their uffd-wp bit" verdict judges every
# cycle), 2 instances on the real kernel.  --ksm-unmerge-method takes one racer
# or all, so the pair runs as the stressor cut to those two racers (the way the
# stress-ng series is cut: tools/integrate/stress-ng-integrate --states, with
# the other racers moved to a last patch), built like
# tests/it/tools/stress-ng-series.sh builds a cut.
#
# A read-only pin (gup) unshares protected KSM pages, ksmd can merge the copies
# again before the unmerge reaches them, and ksmd's merge drops the uffd-wp bit
# (a kernel bug, docs/upstream/ksm-merge-uffd-wp): before the verdict left those
# pages out it failed this run on 6.18 (2 of 3 10 s runs, 2 of 2 20 s runs).
# Checks: exit 0 with --verify, no fail: line, both racers reached with
# evidence, a verified cycle, the pages left out counted (wp-lost-after-pin),
# nothing left behind, the KSM knobs as before.
. "$(dirname "$0")/../../lib/lib.sh"
require_ksm
command -v python3 >/dev/null || skip "python3 missing (tools/integrate/stress-ng-integrate)"
[ -r "$TOP/build/libshim.a" ] || fail "build first: $TOP/build/libshim.a missing"

# the manifest: the real one with every racer but uffd-wp and gup moved to
# a last patch, "others"; the cut before it is the stressor with its features
# and those two racers only
MANIFEST=$TMPD/manifest
python3 - "$TOP/tools/integrate/stress-ng-series" "$MANIFEST" <<'EOF' || fail "no manifest"
import sys
PAIR, others, out = ("uffd-wp", "gup"), [], []
for line in open(sys.argv[1]):
    if line.startswith("racers "):
        names = line.split()[1:]
        others += [r for r in names if r not in PAIR]
        line = "racers %s\n" % " ".join(r for r in names if r in PAIR)
        if line == "racers \n":
            continue
    out.append(line)
out.append("\npatch others\nracers %s\nsubject others\nbody\nothers\n.\n" % " ".join(others))
open(sys.argv[2], "w").write("".join(out))
EOF
"$TOP/tools/integrate/stress-ng-integrate" --states "$TMPD/states" --manifest "$MANIFEST" \
	>"$TMPD/states.log" 2>&1 || { cat "$TMPD/states.log"; fail "--states: exit $?"; }
CUT=$(ls "$TMPD"/states/[0-9][0-9]-*.c | tail -2 | head -1)
have=$(sed -n "s/^stress-ng-integrate: $(basename "$CUT"): [0-9]* lines, racers //p" "$TMPD/states.log")
check [ "$(echo $have | tr ' ' '\n' | sort | tr '\n' ' ')" = "gup uffd-wp " ] ||
	{ cat "$TMPD/states.log"; fail "the cut's racers are '$have', want gup uffd-wp"; }
BIN=$TMPD/stress-ksm-unmerge
CFL="-std=gnu11 -O2 -Wall -Wextra -Werror -D_GNU_SOURCE -I$TOP/core-shim -I$TOP"
check gcc $CFL -o "$BIN" "$CUT" "$TOP/build/libshim.a" -lbsd -lpthread -lm ||
	fail "the uffd-wp + gup cut does not build"

RUNDIR=$TMPD/cwd	# the default --temp-path, where the gup racer keeps its O_DIRECT file
mkdir -p "$RUNDIR" || fail "cannot create $RUNDIR"
before=$(knobs)
log=$TMPD/run.log
(cd "$RUNDIR" && exec "$BIN" --ksm-unmerge 2 -t 15 --metrics --verify) >"$log" 2>&1
rc=$?
check expect_ok "$log" "$rc" || fail "uffd-wp + gup: exit status $rc"
check [ -z "$(fail_lines "$log")" ] || { cat "$log"; fail "uffd-wp + gup: fail: lines"; }
for r in gup uffd-wp; do
	line=$(grep -o "racer $r .*" "$log")
	case $line in
	"racer $r skipped"*)
		why=$(racer_skip_ok "$line" "$r" "$log") || { cat "$log"; fail "$line: $why"; }
		skip "$line ($why)";;
	esac
	ev=$(echo "$line" | sed -n "s/.* reached: ops=[0-9]* $(racer_evidence "$r")=\([0-9]*\).*/\1/p")
	check [ -n "$ev" ] && [ "$ev" -gt 0 ] || { cat "$log"; fail "racer $r not reached: '$line'"; }
	echo "ok $line"
done
lost=$(grep -o "racer uffd-wp reached: .*" "$log" | sed -n 's/.*wp-lost-after-pin=\([0-9]*\).*/\1/p')
check [ -n "$lost" ] || fail "no wp-lost-after-pin counter in the uffd-wp line"
cycles=$(total "$log" cycles)
check [ -n "$cycles" ] && [ "$cycles" -gt 0 ] || fail "no verified cycle"
sleep 0.5
left=$(ours)
check [ -z "$left" ] || fail "processes left: $left"
check [ -z "$(ls -A "$RUNDIR")" ] || fail "files left in the temp path: $(ls -A "$RUNDIR")"
check [ "$(knobs)" = "$before" ] || fail "KSM knobs changed: '$before' -> '$(knobs)'"
echo "ok uffd-wp + gup, $cycles cycles, $lost protected pages a pin unshared lost the bit (left out)"
checks_done
exit 0
