#!/bin/bash
# tests/it/lkp/lkp-tree.sh: the lkp-tests side, with lkp-tests' own
# programs.  Fetches nothing: runs only when LKP_TREE names an lkp-tests git
# clone (skips otherwise, so CI skips it); needs ruby, ruby-activesupport,
# ruby-git and ruby-tty-command (Debian).  On a clone of LKP_TREE under
# $TMPD (LKP_TREE itself is not touched; nothing is installed):
#  - tools/integrate/lkp-integrate --commit makes two commits: "- ksm-unmerge" in the
#    part file's test list (between klog and kvm) and a ksm-unmerge stanza
#    (KSM: y) in programs/stress-ng/include, no job with need_kconfig; then
#    tools/integrate/lkp-patches' parse change (programs/stress-ng/parse and a spec
#    fixture); a second run changes nothing;
#  - lkp split-job makes the ksm-unmerge atom job, which carries KSM: "y",
#    and lkp job2sh turns it into run_test test='ksm-unmerge';
#  - lkp's programs/stress-ng/run (the 0-day script, with stress-ng from
#    $LKP_IT_STRESS_NG: default the stress-ng tree stress-ng-tree.sh built,
#    else ./build/stress-ksm-unmerge; its sysctl stubbed so the host is left
#    alone) runs the 0-day line with --ksm-unmerge-method all added by its
#    --help detection, exit 0;
#  - programs/stress-ng/parse gives ksm-unmerge.pass/ops/ops_per_sec and a
#    key per misc metric, no .fail key, and sbin/dump-stat accepts them;
#  - the patched parser on recorded stress-ng outputs of the lkp line
#    (tests/data/fixtures/report/lkp/ksm-unmerge-{pass,fail,known-bug}.txt):
#    ksm-unmerge.fail: 1 for the failed run only (none for the run that
#    names the known kernel bug), no key but ksm-unmerge.*, dump-stat
#    accepts each; lkp's own stats spec (its stress-ng fixtures, the new one
#    too) passes where rspec is installed, else each fixture parses to its
#    .yaml as the spec checks.
# LKP_IT_TESTTIME (default 60) is the job's testtime.
. "$(dirname "$0")/../../lib/lib.sh"
. "$(dirname "$0")/../../lib/lock.sh"

check [ -n "${LKP_TREE:-}" ] ||
	skip "LKP_TREE not set (path of an lkp-tests git clone; this test fetches nothing)"
check [ -x "$LKP_TREE/programs/stress-ng/parse" ] && [ -d "$LKP_TREE/.git" ] ||
	fail "LKP_TREE=$LKP_TREE is not an lkp-tests git clone"
command -v ruby >/dev/null || skip "ruby not installed"
ruby -e 'require "active_support"; require "git"; require "tty-command"' 2>/dev/null ||
	skip "ruby-activesupport, ruby-git or ruby-tty-command not installed"

L=$TMPD/lkp-tests
git clone -q "$LKP_TREE" "$L" || fail "git clone $LKP_TREE"
export GIT_AUTHOR_NAME="it-lkp-tree" GIT_AUTHOR_EMAIL="it@localhost"
export GIT_COMMITTER_NAME="$GIT_AUTHOR_NAME" GIT_COMMITTER_EMAIL="$GIT_AUTHOR_EMAIL"
export LKP_SRC=$L
base=$(git -C "$L" rev-parse HEAD)

# 1. the commits
"$TOP/tools/integrate/lkp-integrate" --commit "$L" || fail "lkp-integrate --commit: exit $?"
check [ "$(git -C "$L" rev-list --count "$base..HEAD")" = 2 ] || fail "not exactly two commits"
git -C "$L" show --stat --format='%s' HEAD~1 HEAD
check [ "$(git -C "$L" show --format= --name-only HEAD~1 | tr '\n' ' ')" = \
	"jobs/stress-ng/stress-ng-part2.yaml programs/stress-ng/include " ] || fail "the job commit touches other files"
check [ "$(git -C "$L" show --format= HEAD~1 -- jobs | grep -c '^[-+] ')" = 1 ] ||
	fail "the job change is not one added line"
check [ "$(git -C "$L" show --format= --name-only HEAD | tr '\n' ' ')" = \
	"programs/stress-ng/parse spec/fixtures/stats/stress-ng/09 spec/fixtures/stats/stress-ng/09.yaml " ] ||
	fail "the parse commit touches other files"
check grep -B1 -A1 -x '    - ksm-unmerge' "$L/jobs/stress-ng/stress-ng-part2.yaml" | tr -d ' -' |
	tr '\n' ' ' | grep -qx 'klog ksmunmerge kvm ' || fail "ksm-unmerge is not between klog and kvm"
check grep -A1 -x '% elsif ___.test == "ksm-unmerge"' "$L/programs/stress-ng/include" | grep -qx -- '- KSM: y' ||
	fail "programs/stress-ng/include: no ksm-unmerge stanza with KSM: y"
check [ -z "$(git -C "$L" show HEAD -- jobs | grep need_kconfig)" ] || fail "a job carries need_kconfig"
"$TOP/tools/integrate/lkp-integrate" --commit "$L" >"$TMPD/again" || fail "a second --commit: exit $?"
check grep -q "nothing to commit" "$TMPD/again" || fail "a second --commit is not a no-op"
check grep -q "is applied already" "$TMPD/again" || fail "a second --commit applied the parse patch again"
check [ "$(git -C "$L" rev-list --count "$base..HEAD")" = 2 ] || fail "a second --commit made a commit"
git -C "$L" format-patch -q -2 -o "$TMPD/patch" || fail "git format-patch failed"

# 1b. lkp's own stats spec on its stress-ng fixtures (the new one too)
if command -v rspec >/dev/null && (cd "$L" && timeout 300 rspec spec/unit/lib/stats_spec.rb -e stress-ng) >"$TMPD/rspec" 2>&1; then
	checked; grep -q "^[0-9]* examples, 0 failures" "$TMPD/rspec" || fail "rspec: $(tail -3 "$TMPD/rspec")"
	echo "lkp's stats spec: $(grep -o '^[0-9]* examples, 0 failures' "$TMPD/rspec")"
else
	command -v rspec >/dev/null && echo "note: rspec could not run lkp's stats spec: $(tail -2 "$TMPD/rspec")"
	for f in "$L"/spec/fixtures/stats/stress-ng/[0-9]*[0-9]; do
		check diff -u <(cat "$f.yaml") <("$L/programs/stress-ng/parse" <"$f") ||
			fail "the patched parser changes lkp's fixture $(basename "$f")"
	done
fi

# 2. lkp split-job and job2sh
host=vm-snb
[ -f "$L/hosts/$host" ] || host=$(ls "$L/hosts" | head -1)
mkdir -p "$TMPD/split"
(cd "$TMPD/split" && "$L/bin/lkp" split-job -t "$host" -o "$TMPD/split" \
	"$L/jobs/stress-ng/stress-ng-part2.yaml") >"$TMPD/split.log" 2>&1
job=$(ls "$TMPD"/split/*-ksm-unmerge-*.yaml 2>/dev/null)
check [ -n "$job" ] || { tail -5 "$TMPD/split.log"; fail "lkp split-job made no ksm-unmerge job"; }
echo "split-job: $(basename "$job") (of $(ls "$TMPD"/split/*.yaml | wc -l) jobs)"
check grep -qx '  test: ksm-unmerge' "$job" || fail "$(basename "$job"): no 'test: ksm-unmerge'"
check grep -qx -- '- KSM: "y"' "$job" || fail "$(basename "$job"): need_kconfig has no KSM"
"$L/bin/lkp" job2sh -o "$TMPD/job.sh" "$job" >/dev/null 2>&1
check grep -q "run_test test='ksm-unmerge' \$LKP_SRC/bin/run-test stress-ng" "$TMPD/job.sh" ||
	fail "lkp job2sh: no run_test test='ksm-unmerge'"
check grep -q "run-stats stress-ng" "$TMPD/job.sh" || fail "lkp job2sh: no run-stats stress-ng"

# 3. lkp's run script, the 0-day line
SNG=${LKP_IT_STRESS_NG:-}
if [ -z "$SNG" ]; then
	SNG=${STRESS_NG_WORK:-/tmp/stress-ng-ksm-unmerge-it}/stress-ng
	[ -x "$SNG" ] || SNG=$STRESSOR
fi
[ -x "$SNG" ] || fail "no stress-ng to run ($SNG)"
[ "$(id -u)" = 0 ] && [ -w "$KSM/run" ] || skip "the run needs root and KSM (the commit and split-job checks passed)"
echo "stress-ng for lkp's run script: $SNG"
mkdir -p "$TMPD/bin" "$TMPD/result"
ln -s "$SNG" "$TMPD/bin/stress-ng"
printf '#!/bin/sh\necho "(stubbed: sysctl $*)"\n' >"$TMPD/bin/sysctl"
chmod +x "$TMPD/bin/sysctl"
before=$(knobs)
(cd "$TMPD/result" && locked env PATH="$TMPD/bin:$PATH" TMP_RESULT_ROOT="$TMPD/result" \
	test=ksm-unmerge nr_threads="$(nproc)" testtime="${LKP_IT_TESTTIME:-60}" \
	timeout 300 "$L/programs/stress-ng/run") >"$TMPD/result/stress-ng" 2>&1
rc=$?
grep -E "stress-ng --|metrc|racer .* reached|successful" "$TMPD/result/stress-ng"
# exit 0: a known kernel bug is named, not failed (lib.sh)
checked; expect_ok "$TMPD/result/stress-ng" "$rc" || fail "lkp's programs/stress-ng/run: exit $rc"
check grep -Eq "^[0-9-]+ [0-9:]+ stress-ng --timeout ${LKP_IT_TESTTIME:-60} --times --verify --metrics --no-rand-seed --ksm-unmerge-method all --ksm-unmerge $(nproc)$" \
	"$TMPD/result/stress-ng" || fail "the run script's command line is not the 0-day line with --ksm-unmerge-method all"
check [ "$(knobs)" = "$before" ] || fail "knobs '$(knobs)' != '$before'"

# 4. lkp's parser and dump-stat
"$L/programs/stress-ng/parse" <"$TMPD/result/stress-ng" >"$TMPD/keys" || fail "programs/stress-ng/parse: exit $?"
sed 's/^/    /' "$TMPD/keys"
check grep -qx 'ksm-unmerge.pass: 1' "$TMPD/keys" || fail "no ksm-unmerge.pass"
check grep -Eqx 'ksm-unmerge\.ops: [0-9]+' "$TMPD/keys" || fail "no ksm-unmerge.ops"
check grep -Eqx 'ksm-unmerge\.ops_per_sec: [0-9.]+' "$TMPD/keys" || fail "no ksm-unmerge.ops_per_sec"
check [ "$(grep -cE '^ksm-unmerge\.[^.:]+\.pass: 1$' "$TMPD/keys")" -gt 0 ] || fail "no misc metric key"
check [ -z "$(grep '\.fail:' "$TMPD/keys")" ] || fail "a .fail key: $(grep '\.fail:' "$TMPD/keys")"
RESULT_ROOT=$TMPD/result "$L/sbin/dump-stat" stress-ng "$TMPD/result/stress-ng.json" <"$TMPD/keys" ||
	fail "sbin/dump-stat refused the keys"
check grep -q '"stress-ng.ksm-unmerge.ops_per_sec"' "$TMPD/result/stress-ng.json" ||
	fail "stress-ng.json has no stress-ng.ksm-unmerge.ops_per_sec"

# 5. recorded runs of the lkp line (stress-ng with the stressor, 6.18.44):
# only the failed one gives ksm-unmerge.fail
FX=$TOP/tests/data/fixtures/report/lkp
for kind in pass fail known-bug; do
	mkdir -p "$TMPD/rec-$kind"
	"$L/programs/stress-ng/parse" <"$FX/ksm-unmerge-$kind.txt" >"$TMPD/rec-$kind/keys" ||
		fail "programs/stress-ng/parse on the $kind run: exit $?"
	check [ -z "$(grep -v '^ksm-unmerge\.[^ :]*: [0-9.]*$' "$TMPD/rec-$kind/keys")" ] ||
		fail "$kind run: a key that is not ksm-unmerge.*: $(grep -v '^ksm-unmerge\.[^ :]*: [0-9.]*$' "$TMPD/rec-$kind/keys")"
	RESULT_ROOT=$TMPD/rec-$kind "$L/sbin/dump-stat" stress-ng "$TMPD/rec-$kind/stress-ng.json" \
		<"$TMPD/rec-$kind/keys" || fail "sbin/dump-stat refused the $kind run's keys"
	if [ "$kind" = fail ]; then
		check grep -qx 'ksm-unmerge.fail: 1' "$TMPD/rec-$kind/keys" || fail "the failed run gives no ksm-unmerge.fail"
		check grep -q '"stress-ng.ksm-unmerge.fail"' "$TMPD/rec-$kind/stress-ng.json" || fail "no fail stat in stress-ng.json"
	else
		check [ -z "$(grep '\.fail:' "$TMPD/rec-$kind/keys")" ] || fail "the $kind run gives a .fail key"
	fi
	echo "recorded $kind run: $(wc -l <"$TMPD/rec-$kind/keys") keys$(grep -q '^ksm-unmerge.fail: 1' "$TMPD/rec-$kind/keys" && echo ', ksm-unmerge.fail: 1')"
done
echo "it/lkp/lkp-tree.sh: ok"
checks_done
