#!/bin/bash
# run-tests: no KSM lock (the build runs without it; each KSM run takes it).
# tests/it/build/stress-ng-tree.sh: the upstream patch series on a real
# stress-ng tree, checked as its maintainer and 0-day would.  Fetches
# nothing: runs only when STRESS_NG_TREE names a stress-ng git clone (skips
# otherwise, so CI skips it).
#
# It works in STRESS_NG_WORK (default /tmp/stress-ng-ksm-unmerge-it), a clone
# of STRESS_NG_TREE kept between runs so that a tree built once rebuilds
# only what changed (a first build took 8 min 42 s on the 2-vCPU VM: run with
# TEST_TIMEOUT=2400; ccache is used when installed).  It checks that
#  - tools/integrate/stress-ng-integrate --commit makes one commit per
#    tools/integrate/stress-ng-patches/*.patch first, then one stressor commit
#    touching exactly Makefile (+1 line), core-opts.c, core-opts.h,
#    core-stressors.h (+1 line), stress-ng.1 and stress-ksm-unmerge.c, on
#    top of them (its man text relies on -K); a second run and --check change
#    nothing; git format-patch gives that many patches and they apply with
#    git am to a clean clone;
#  - stress-ng.1 has an entry for every option, the method table lists
#    all, madvise, prctl and the racers of build/ksm-racers, and groff
#    gives no warning the parent commit lacks;
#  - stress-ng's make builds it, and make PEDANTIC=1 gives no warning from
#    stress-ksm-unmerge.c and no more in a .c a core patch changes than
#    that file had before;
#  - stress-ng --help: every ksm-unmerge row fits the option column and
#    the method row passes lkp's "all" detection;
#  - the 0-day line (--timeout 60 --times --verify --metrics --no-rand-seed
#    --ksm-unmerge-method all --ksm-unmerge 2) exits 0 (or 2 only through
#    the kernel bug the fork-zero racer names) with every racer
#    reached and the knobs restored (its output is kept in
#    $STRESS_NG_WORK.0day.log for tests/it/lkp);
#  - with -K (when a core patch changes core-klog.c): a kernel WARNING
#    written to /dev/kmsg from user space fails nothing (the patched core
#    matches kernel records only), a real kernel error record (an ext4
#    mount of a zeroed loop file, level 3) fails the run.  A real kernel
#    WARNING is not made on the host: it taints the kernel for good.
. "$(dirname "$0")/../../lib/lib.sh"
. "$(dirname "$0")/../../lib/lock.sh"

check [ -n "${STRESS_NG_TREE:-}" ] ||
	skip "STRESS_NG_TREE not set (path of a stress-ng git clone; this test fetches nothing)"
check [ -f "$STRESS_NG_TREE/stress-ng.h" ] && [ -d "$STRESS_NG_TREE/.git" ] ||
	fail "STRESS_NG_TREE=$STRESS_NG_TREE is not a stress-ng git clone"
command -v groff >/dev/null || fail "groff not installed (tools/make/debian-packages)"
[ "$(id -u)" = 0 ] || skip "needs root"
[ -w "$KSM/run" ] || skip "kernel has no KSM ($KSM/run missing or read-only)"

W=${STRESS_NG_WORK:-/tmp/stress-ng-ksm-unmerge-it}
LATE=""
# late_fail MSG: a failure that does not stop the later checks (the script
# fails at its end)
late_fail() {
	echo "FAIL (checks go on): $*"
	LATE="$LATE${LATE:+; }$*"
}
MARK=.ksm-unmerge-it
PATCHES=${STRESS_NG_PATCHES:-$TOP/tools/integrate/stress-ng-patches}
SUBJECT="stress-ksm-unmerge: add KSM unmerging stressor"
export GIT_AUTHOR_NAME="it-stress-ng-tree" GIT_AUTHOR_EMAIL="it@localhost"
export GIT_COMMITTER_NAME="$GIT_AUTHOR_NAME" GIT_COMMITTER_EMAIL="$GIT_AUTHOR_EMAIL"
base=$(git -C "$STRESS_NG_TREE" rev-parse HEAD) || fail "git rev-parse in $STRESS_NG_TREE"

# the work tree: reused when it holds STRESS_NG_TREE's HEAD, else made anew
if [ -d "$W/.git" ] && git -C "$W" merge-base --is-ancestor "$base" HEAD 2>/dev/null; then
	echo "reusing $W (built objects kept)"
else
	if [ -e "$W" ]; then
		[ -e "$W/$MARK" ] || fail "$W exists and is not this test's work tree (no $MARK): set STRESS_NG_WORK"
		rm -rf "$W"
	fi
	git clone -q "$STRESS_NG_TREE" "$W" || fail "git clone $STRESS_NG_TREE $W"
	: >"$W/$MARK"
	echo "cloned $STRESS_NG_TREE to $W"
fi

# the racer table, from build/ksm-racers ($KSM_RACERS in development)
if [ -n "${KSM_RACERS:-}" ]; then
	$KSM_RACERS >"$TMPD/racers" || fail "$KSM_RACERS failed"
else
	make -s -C "$TOP" build/ksm-racers >/dev/null || fail "make build/ksm-racers failed"
	"$TOP/build/ksm-racers" >"$TMPD/racers" || fail "build/ksm-racers failed"
fi
RACERS=$(cut -f1 "$TMPD/racers")
check [ -n "$RACERS" ] || fail "no racer in the racer table"

# 1. the commits
patches=$(ls "$PATCHES"/*.patch 2>/dev/null | sort)
npatches=$(echo "$patches" | grep -c .)
"$TOP/tools/integrate/stress-ng-integrate" --commit ${STRESS_NG_PATCHES:+--patches "$PATCHES"} "$W" \
	>"$TMPD/integ" 2>&1 || { cat "$TMPD/integ"; fail "stress-ng-integrate --commit: exit $?"; }
cat "$TMPD/integ"
compat=0
grep -q "warning: compatibility path" "$TMPD/integ" && compat=1
check [ $compat = 1 ] || ! grep -q "warning:" "$TMPD/integ" || fail "stress-ng-integrate warned"
check [ "$(git -C "$W" rev-list --count "$base..HEAD")" = $((1 + npatches)) ] ||
	fail "$(git -C "$W" rev-list --count "$base..HEAD") commits on $base, not 1 + $npatches patches"
stressor_commit=$(git -C "$W" rev-parse HEAD)
check [ "$(git -C "$W" log -1 --format=%s "$stressor_commit")" = "$SUBJECT" ] ||
	fail "last commit: $(git -C "$W" log -1 --format=%s "$stressor_commit")"
files=$(git -C "$W" show --format= --name-only "$stressor_commit" | sort | tr '\n' ' ')
check [ "$files" = "Makefile core-opts.c core-opts.h core-stressors.h stress-ksm-unmerge.c stress-ng.1 " ] ||
	fail "the stressor commit touches: $files"
check [ "$(git -C "$W" show --format= --numstat "$stressor_commit" -- Makefile core-stressors.h |
	awk '{ print $1 "/" $2 }' | tr '\n' ' ')" = "1/0 1/0 " ] ||
	fail "Makefile and core-stressors.h are not +1 line each"
check git -C "$W" show "$stressor_commit" -- Makefile | grep -qx '+	stress-ksm-unmerge.c \\' ||
	fail "Makefile: stress-ksm-unmerge.c is not in the stressor list"
if [ $compat = 0 ]; then
	check cmp -s "$TOP/stress-ksm-unmerge.c" <(git -C "$W" show "$stressor_commit:stress-ksm-unmerge.c") ||
		fail "the committed stressor differs from $TOP/stress-ksm-unmerge.c"
fi
n=1
for p in $patches; do
	want=$(git mailinfo /dev/null /dev/null <"$p" | sed -n 's/^Subject: //p')
	got=$(git -C "$W" log -1 --format=%s "$(git -C "$W" rev-list --reverse "$base..HEAD" | sed -n ${n}p)")
	check [ "$got" = "$want" ] || fail "commit $n is '$got', not $(basename "$p")'s '$want'"
	n=$((n + 1))
done
"$TOP/tools/integrate/stress-ng-integrate" --commit ${STRESS_NG_PATCHES:+--patches "$PATCHES"} "$W" 2>&1 |
	grep -q "nothing to commit" || fail "a second --commit is not a no-op"
head=$(git -C "$W" rev-parse HEAD)
"$TOP/tools/integrate/stress-ng-integrate" --check --commit ${STRESS_NG_PATCHES:+--patches "$PATCHES"} "$W" >"$TMPD/chk" 2>&1
check grep -q "nothing to commit" "$TMPD/chk" || { cat "$TMPD/chk"; fail "--check after --commit reports changes"; }
check [ "$(git -C "$W" rev-parse HEAD)" = "$head" ] && [ -z "$(git -C "$W" status --porcelain --untracked-files=no)" ] ||
	fail "--check changed the tree"
rm -rf "$TMPD/fp" "$TMPD/clone"
git -C "$W" format-patch -q -o "$TMPD/fp" "$base..HEAD" || fail "git format-patch failed"
ls "$TMPD/fp"
check [ "$(ls "$TMPD/fp" | wc -l)" = $((1 + npatches)) ] || fail "format-patch: not $((1 + npatches)) patches"
git clone -q "$STRESS_NG_TREE" "$TMPD/clone" && git -C "$TMPD/clone" checkout -q "$base" &&
	git -C "$TMPD/clone" am -q "$TMPD"/fp/*.patch
check [ $? = 0 ] || fail "the series does not apply with git am to a clean clone"

# 2. the man page
section=$(sed -n '/^\.B Kernel samepage merging (KSM) unmerge stressor/,/^\.RE/p' "$W/stress-ng.1")
check [ -n "$section" ] || fail "stress-ng.1 has no ksm-unmerge section"
opts=$(sed -n 's/^stress-ng-integrate: options: //p' "$TMPD/integ")
for o in $opts; do
	check grep -q "^\.B $(echo "$o" | sed 's/-/\\\\-/g')\( \|$\)" <<<"$section" ||
		fail "stress-ng.1 has no entry for $o"
done
man_methods=$(awk '/^\.TS/ { t = 1; next } /^\.TE/ { t = 0 } t && /\tT\{$/ { sub(/\t.*/, ""); gsub(/\\-/, "-"); print }' <<<"$section" | tr '\n' ' ')
check [ "$man_methods" = "$(echo all madvise prctl $RACERS) " ] ||
	fail "stress-ng.1 methods '$man_methods' are not all madvise prctl + the racer table"
git -C "$W" show "$base:stress-ng.1" >"$TMPD/old.1"
gwarn() { groff -man -ww -z "$1" 2>&1 | sed 's/^[^:]*:[^:]*:[0-9]*: //' | sort; }
new_warn=$(comm -13 <(gwarn "$TMPD/old.1") <(gwarn "$W/stress-ng.1"))
check [ -z "$new_warn" ] || fail "groff warnings added: $new_warn"

# 3. the build: stress-ng's make, then the stressor again under PEDANTIC=1
[ -d /usr/lib/ccache ] && export PATH=/usr/lib/ccache:$PATH
echo "building stress-ng (make -j2; a first build takes about 9 min on 2 vCPUs)"
t0=$SECONDS
make -C "$W" -j2 >"$TMPD/build" 2>&1 || { tail -30 "$TMPD/build"; fail "stress-ng build failed"; }
echo "make: $((SECONDS - t0)) s"
# pedantic warnings of FILE.c in build log $2
pwarn() { grep -cE "^${1//./\\.}:[0-9]+:[0-9]+: warning:" "$2"; }
# the .c files the core patches change: their pedantic warnings at base,
# compiled from the base version put in place for one compile
core_c=$(grep -h "^diff --git a/[^ ]*\.c b/" $patches /dev/null | sed 's|^diff --git a/\([^ ]*\) .*|\1|' | sort -u)
for f in $core_c; do
	cp "$W/$f" "$TMPD/patched.c" && git -C "$W" show "$base:$f" >"$W/$f" && rm -f "$W/${f%.c}.o" &&
		make -C "$W" PEDANTIC=1 "${f%.c}.o" >"$TMPD/base-$f.log" 2>&1
	cp "$TMPD/patched.c" "$W/$f" || fail "cannot restore $W/$f"
	rm -f "$W/${f%.c}.o"
done
rm -f "$W/stress-ksm-unmerge.o"
make -C "$W" -j2 PEDANTIC=1 >"$TMPD/pedantic" 2>&1 || { tail -30 "$TMPD/pedantic"; fail "make PEDANTIC=1 failed"; }
grep -E "^stress-ksm-unmerge\.c:[0-9]+:[0-9]+: warning:" "$TMPD/pedantic" | head -40
nw=$(pwarn stress-ksm-unmerge.c "$TMPD/pedantic")
echo "make PEDANTIC=1: $nw warnings from stress-ksm-unmerge.c"
check [ "$nw" = 0 ] || late_fail "make PEDANTIC=1: $nw warnings from stress-ksm-unmerge.c"
for f in $core_c; do
	nb=$(pwarn "$f" "$TMPD/base-$f.log")
	np=$(pwarn "$f" "$TMPD/pedantic")
	echo "make PEDANTIC=1: $f: $nb warnings at base, $np with the core patches"
	check [ "$np" -le "$nb" ] || late_fail "make PEDANTIC=1: the core patches add warnings to $f ($nb -> $np)"
done
SNG=$W/stress-ng

# 4. --help: the option column and lkp's method detection
"$SNG" --help >"$TMPD/help" 2>&1
check grep -q -- "--ksm-unmerge " "$TMPD/help" || fail "stress-ng --help has no --ksm-unmerge row"
long=$(grep -E "^ {6}--ksm-unmerge" "$TMPD/help" | awk 'substr($0, 30, 1) != " "')
check [ -z "$long" ] || late_fail "help rows run into their description: $long"
check grep -Eq "^ +--ksm-unmerge-method .*(\[.*all|all,)" "$TMPD/help" ||
	late_fail "stress-ng --help fails lkp's method detection: $(grep -- '--ksm-unmerge-method' "$TMPD/help")"
choices=$("$SNG" --ksm-unmerge-method no-such-method --ksm-unmerge 1 2>&1 |
	sed -n "s/.*choice 'no-such-method' not known, choices are: *//p")
if [ -n "$choices" ]; then
	check [ "$choices " = "$man_methods" ] || fail "stress-ng's methods '$choices' are not the man page's '$man_methods'"
else
	echo "note: --ksm-unmerge-method is not a stress-ng method option in this stressor"
fi

# 5. the 0-day line, knobs read under the same lock as the run
log=$W.0day.log
cat >"$TMPD/0day.sh" <<EOF
. "$TOP/tests/lib/lib.sh"
knobs >"$TMPD/knobs.before"
cd "$TMPD" && timeout 180 "$W/stress-ng" --timeout 60 --times --verify --metrics --no-rand-seed \\
	--ksm-unmerge-method all --ksm-unmerge 2 >"$log" 2>&1
rc=\$?
knobs >"$TMPD/knobs.after"
exit \$rc
EOF
locked bash "$TMPD/0day.sh"
rc=$?
grep -E "metrc|racer|totals|successful|unsuccessful|fail" "$log"
# exit 0: a known kernel bug is named, not failed (lib.sh)
checked; expect_ok "$log" "$rc" || fail "the 0-day line: exit $rc"
check grep -Eq "metrc: .* ksm-unmerge +[0-9]+ " "$log" || fail "no ksm-unmerge metrics row"
check cmp -s "$TMPD/knobs.before" "$TMPD/knobs.after" ||
	fail "knobs '$(cat "$TMPD/knobs.after")' != '$(cat "$TMPD/knobs.before")'"
while IFS=$'\t' read -r r ev state _; do
	if [ "$state" = built ] && grep -q "racer $r skipped: ." "$log"; then
		# a racer stepping aside from a known bug the run named (lib.sh)
		line=$(grep -o "racer $r skipped:.*" "$log" | head -1)
		checked
		why=$(racer_skip_ok "$line" "$r" "$log") || fail "$line: $why"
		echo "note: $line ($why)"
	elif [ "$state" = built ]; then
		check grep -Eq "racer $r reached: .*$ev=[1-9]" "$log" || fail "racer $r not reached ($ev)"
	else
		check grep -Eq "racer $r (reached|skipped)" "$log" || fail "racer $r ($state) neither reached nor skipped"
	fi
done <"$TMPD/racers"

# 6. -K: a WARNING written from user space fails nothing, a kernel error does
klog_patch=$(grep -l "^diff --git a/core-klog.c" $patches /dev/null 2>/dev/null)
kmsg() { printf '%s\n' "$1" >/dev/kmsg; }
# kernel_error: the kernel logs "EXT4-fs (loopN): VFS: Can't find ext4 filesystem" (level 3)
kernel_error() {
	local img=$TMPD/zero.img dev
	mkdir -p "$TMPD/mnt" && truncate -s 1M "$img" && dev=$(losetup -f --show "$img") || return 0
	mount -t ext4 -o ro "$dev" "$TMPD/mnt" 2>/dev/null && umount "$TMPD/mnt"
	losetup -d "$dev"
}
inject_warn() {
	kmsg "<6>it-stress-ng-tree: next lines are a FAKE kernel warning injected by a test"
	kmsg "<4>------------[ cut here ]------------"
	kmsg "<4>WARNING: CPU: 0 PID: $$ at mm/ksm.c:3012 break_ksm+0x1a2/0x1c0"
	kmsg "<4>Modules linked in:"
	kmsg "<4>RIP: 0010:break_ksm+0x1a2/0x1c0"
	kmsg "<4>---[ end trace 0000000000000000 ]---"
}
# klog_run WHAT: a -K run of 8 s; after 3 s WHAT (0 nothing, 1 a user
# space WARNING and BUG, 2 a kernel error record)
klog_run() {
	(cd "$TMPD" && "$SNG" -K --ksm-unmerge 1 --ksm-unmerge-method madvise -t 8 --metrics) >"$TMPD/klog.$1" 2>&1 &
	local pid=$!
	sleep 3
	if [ "$1" = 1 ]; then
		inject_warn
		kmsg "<1>BUG: Bad rss-counter state mm:000000000fb13173 type:MM_ANONPAGES val:-1 (FAKE, it-stress-ng-tree)"
	fi
	[ "$1" = 2 ] && kernel_error
	wait $pid
}
if [ -w /dev/kmsg ] && [ -n "$klog_patch" ]; then
	export -f klog_run inject_warn kmsg kernel_error
	export SNG TMPD
	locked bash -c 'klog_run 0'
	rc0=$?
	locked bash -c 'klog_run 1'
	rc1=$?
	rc2=skip
	if command -v losetup >/dev/null && grep -qw ext4 /proc/filesystems; then
		locked bash -c 'klog_run 2'
		rc2=$?
	fi
	grep -E "klog" "$TMPD/klog.1" "$TMPD/klog.2" 2>/dev/null | head -5
	echo "-K runs: exit $rc0 without, $rc1 with a user space WARNING, $rc2 with a kernel error"
	check [ "$rc0" = 0 ] || { cat "$TMPD/klog.0"; fail "-K run without injection: exit $rc0"; }
	check [ "$rc1" = 0 ] || { cat "$TMPD/klog.1"; fail "-K run with a user space WARNING: exit $rc1, not 0 ($(basename $klog_patch) applied)"; }
	check [ "$rc2" = skip ] || [ "$rc2" = 2 ] || { cat "$TMPD/klog.2"; fail "-K run with a kernel error: exit $rc2, not 2"; }
else
	echo "note: /dev/kmsg not writable or no core-klog.c patch: -K not checked"
fi
[ -z "$LATE" ] || fail "$LATE"
echo "it/build/stress-ng-tree.sh: ok ($((1 + npatches)) patches in $W)"
checks_done
