#!/bin/bash
# tests/it/build/stress-ng-tree.sh: the upstream patch on a real stress-ng tree.  Fetches
# nothing: runs only when STRESS_NG_TREE names a stress-ng git clone (skips
# otherwise).  On a copy of it (cp -a, so a tree built once rebuilds only
# what changed; a never built tree takes minutes: raise TEST_TIMEOUT):
#  - tools/stress-ng-integrate --commit makes exactly one commit in
#    stress-ng's subject style, and git format-patch -1 gives the patch;
#  - stress-ng's own make builds it;
#  - stress-ng --ksm-unmerge 1 -t 10 --verify --metrics exits 0, every racer
#    reached or skipped with a reason, and the metrics row is there;
#  - example-jobs/ksm-unmerge.job runs (its timeout cut to 10 s);
#  - stress-ng.1 has an entry for every option of the stressor's option
#    table and renders with no groff warning the parent commit lacks;
#  - stress-ng --help passes lkp's --<test>-method all detection.
. "$(dirname "$0")/../../lib/lib.sh"

check [ -n "${STRESS_NG_TREE:-}" ] ||
	skip "STRESS_NG_TREE not set (path of a stress-ng git clone; this test fetches nothing)"
check [ -f "$STRESS_NG_TREE/stress-ng.h" ] && [ -d "$STRESS_NG_TREE/.git" ] ||
	fail "STRESS_NG_TREE=$STRESS_NG_TREE is not a stress-ng git clone"
command -v groff >/dev/null || fail "groff not installed (tools/debian-packages)"
require_ksm

T=$TMPD/sng
cp -a "$STRESS_NG_TREE" "$T" || fail "cannot copy $STRESS_NG_TREE"
export GIT_AUTHOR_NAME="it-stress-ng-tree" GIT_AUTHOR_EMAIL="it@localhost"
export GIT_COMMITTER_NAME="$GIT_AUTHOR_NAME" GIT_COMMITTER_EMAIL="$GIT_AUTHOR_EMAIL"
SUBJECT="stress-ksm-unmerge: add KSM unmerging stressor"
# a clone that already carries the commit: take it back, keep its files
while [ "$(git -C "$T" log -1 --format=%s)" = "$SUBJECT" ]; do
	git -C "$T" reset -q --soft HEAD~1 || fail "git reset in the copy failed"
done
base=$(git -C "$T" rev-parse HEAD)

"$TOP/tools/stress-ng-integrate" --commit "$T" >"$TMPD/integ" 2>&1 ||
	{ cat "$TMPD/integ"; fail "stress-ng-integrate --commit exit $?"; }
cat "$TMPD/integ"
check [ "$(git -C "$T" rev-list --count "$base..HEAD")" = 1 ] || fail "not exactly one commit"
check [ "$(git -C "$T" log -1 --format=%s)" = "$SUBJECT" ] || fail "subject: $(git -C "$T" log -1 --format=%s)"
files=$(git -C "$T" show --format= --name-only HEAD | sort | tr '\n' ' ')
for f in stress-ksm-unmerge.c core-stressors.h core-opts.h core-opts.c Makefile stress-ng.1 \
	example-jobs/ksm-unmerge.job; do
	case " $files " in *" $f "*) ;; *) fail "commit lacks $f (has: $files)" ;; esac
done
for h in "$TOP"/stress-ksm-unmerge-*.h; do
	check [ -e "$h" ] || continue
	case " $files " in *" $(basename "$h") "*) ;; *) fail "commit lacks $(basename "$h")" ;; esac
	check grep -q "^	$(basename "$h") " "$T/Makefile" || fail "$(basename "$h") not in Makefile HEADERS"
done
cmp -s "$TOP/stress-ksm-unmerge.c" "$T/stress-ksm-unmerge.c" || fail "committed stressor differs"
check [ -z "$(git -C "$T" status --porcelain -- $files)" ] || fail "files left uncommitted"
(cd "$T" && git format-patch -q -1 -o "$TMPD/patch") || fail "git format-patch failed"
check grep -q "^Subject: \[PATCH\] $SUBJECT" "$TMPD"/patch/*.patch || fail "patch subject"
# the commit message names the racers of the racer list, in its order
RACERS=$(racer_list | awk '{ print $1 }')
want=$(echo $RACERS | sed 's/ /, /g')
got=$(git -C "$T" log -1 --format=%b | tr '\n' ' ' | sed 's/  */ /g' |
	sed -n 's/.*every racer the kernel supports (\([^)]*\)).*/\1/p')
check [ "$got" = "$want" ] || fail "commit message racers '$got', not the racer list '$want'"
"$TOP/tools/stress-ng-integrate" --commit "$T" | grep -q "nothing to commit" ||
	fail "a second --commit is not a no-op"

# man page: an entry for every option of the stressor's option table
opts=$(grep -o '{ OPT_ksm_unmerge_[a-z_]*, *"ksm-unmerge-[a-z-]*"' "$TOP/stress-ksm-unmerge.c" |
	sed 's/.*"\(.*\)"/\1/')
check [ "$(echo "$opts" | wc -w)" -ge 5 ] || fail "option table not read from the stressor"
for o in ksm-unmerge ksm-unmerge-ops $opts; do
	check grep -q "^\.B \\\\-\\\\-${o//-/\\\\-}\( \|$\)" "$T/stress-ng.1" || fail "stress-ng.1 has no entry for --$o"
done
git -C "$T" show HEAD~1:stress-ng.1 >"$TMPD/old.1"
warn() { groff -man -ww -z "$1" 2>&1 | sed 's/^[^:]*:[^:]*:[0-9]*: //' | sort; }
new_warn=$(comm -13 <(warn "$TMPD/old.1") <(warn "$T/stress-ng.1"))
check [ -z "$new_warn" ] || fail "groff warnings added: $new_warn"

echo "building stress-ng (make -j2)"
make -C "$T" -j2 >"$TMPD/build" 2>&1 || { tail -30 "$TMPD/build"; fail "stress-ng build failed"; }
SNG=$T/stress-ng
"$SNG" --help >"$TMPD/help" 2>&1
check grep -Eq "^ +--ksm-unmerge-method .*(\[.*all|all,)" "$TMPD/help" ||
	fail "stress-ng --help fails lkp's method detection: $(grep -- '--ksm-unmerge-method' "$TMPD/help")"

before=$(knobs)
log=$TMPD/run.log
(cd "$TMPD" && timeout 120 "$SNG" --ksm-unmerge 1 -t 10 --verify --metrics) >"$log" 2>&1
rc=$?
cat "$log"
check [ "$rc" = 0 ] || fail "stress-ng --ksm-unmerge 1 -t 10 --verify --metrics: exit $rc"
check grep -Eq "metrc: .* ksm-unmerge +[0-9]+ " "$log" || fail "no ksm-unmerge metrics row"
for r in $RACERS; do
	check grep -Eq "racer $r (reached|skipped: .+)" "$log" || fail "racer $r neither reached nor skipped"
done
sed 's/^timeout 60s$/timeout 10s/' "$T/example-jobs/ksm-unmerge.job" >"$TMPD/job"
check grep -q '^timeout 10s$' "$TMPD/job" || fail "example job has no 'timeout 60s' line"
(cd "$TMPD" && timeout 180 "$SNG" --job "$TMPD/job") >"$TMPD/job.log" 2>&1
rc=$?
tail -5 "$TMPD/job.log"
check [ "$rc" = 0 ] || { cat "$TMPD/job.log"; fail "example job: exit $rc"; }
check grep -q "racer .* reached" "$TMPD/job.log" || fail "example job ran no racer"
check [ "$(knobs)" = "$before" ] || fail "knobs '$(knobs)' != '$before'"
echo "it/build/stress-ng-tree.sh: ok"
checks_done
