#!/bin/bash
# it-racer-vmsplice: the vmsplice racer alone on the real kernel, 2
# instances (madvise and prctl switches): exit 0 with --verify, "racer
# vmsplice reached" with evidence > 0, no fail: lines, no fd growth in the
# instances, no process of the run and no temp file left, KSM knobs as
# before.
#
# This script is also the body of it-racer-gup.sh, it-racer-uffd-wp.sh and
# it-racer-thp.sh, which exec it with their racer name.  It runs the
# stressor, so run it under "flock /tmp/ksm-dev.lock" (tests/run-tests does).
. "$(dirname "$0")/lib.sh"

RACER=${1:-vmsplice}
case $RACER in
vmsplice)	EVIDENCE=ksm-pages-spliced;;
gup)		EVIDENCE=ksm-pages-pinned;;
uffd-wp)	EVIDENCE=wp-pages-unshared;;
thp)		EVIDENCE=thps-split;;
*)		fail "unknown racer '$RACER'";;
esac
require_ksm

# a private copy of the binary: its processes are exactly those with this exe
BIN=$TMPD/stress-ksm-unmerge
cp "$STRESSOR" "$BIN" || fail "cannot copy $STRESSOR to $TMPD"
# the run's cwd is the default --temp-path, where the gup racer tries first
RUNDIR=$TMPD/cwd
mkdir -p "$RUNDIR" || fail "cannot create $RUNDIR"

# ours: pids of live processes running the private copy
ours() {
	local p
	for p in /proc/[0-9]*; do
		[ "$(readlink "$p/exe" 2>/dev/null)" = "$BIN" ] && echo "${p#/proc/}"
	done
}

# fds: "pid:count" for each instance (child of the runner $1)
fds() {
	local p
	for p in $(pgrep -P "$1"); do
		echo "$p:$(ls "/proc/$p/fd" 2>/dev/null | wc -l)"
	done
}

# fd_growth: largest growth of an instance's fd count between two samples
fd_growth() {
	local a=$1 b=$2 e p n m max=0
	for e in $b; do
		p=${e%%:*}
		n=${e##*:}
		m=$(echo "$a" | tr ' ' '\n' | sed -n "s/^$p://p")
		[ -n "$m" ] && [ $((n - m)) -gt $max ] && max=$((n - m))
	done
	echo $max
}

# temp_files: O_DIRECT files of the gup racer left anywhere it may write
temp_files() {
	ls -d "$RUNDIR"/stress-ksm-unmerge-gup-* /var/tmp/stress-ksm-unmerge-gup-* \
		/tmp/stress-ksm-unmerge-gup-* 2>/dev/null | grep -v -x -F -f <(echo "$TEMP_BEFORE") || true
}

TEMP_BEFORE=$(ls -d /var/tmp/stress-ksm-unmerge-gup-* /tmp/stress-ksm-unmerge-gup-* 2>/dev/null)
before=$(knobs)
for n in ${RACER_IT_INSTANCES:-2}; do
	log=$TMPD/run-$n.log
	(cd "$RUNDIR" && exec "$BIN" --ksm-unmerge $n -t 6 --metrics --verify --ksm-unmerge-bytes 16M \
		--ksm-unmerge-method "$RACER,madvise,prctl") >"$log" 2>&1 &
	pid=$!
	sleep 2
	s1=$(fds $pid)
	sleep 3
	s2=$(fds $pid)
	wait $pid
	rc=$?
	line=$(grep -o "racer $RACER .*" "$log")
	case $line in
	"racer $RACER skipped"*) skip "$line";;
	esac
	[ $rc = 0 ] || { cat "$log"; fail "$RACER, $n instance(s): exit status $rc"; }
	! grep -q " fail: " "$log" || { cat "$log"; fail "$RACER, $n instance(s): fail: lines"; }
	ev=$(echo "$line" | sed -n "s/.* reached: ops=[0-9]* $EVIDENCE=\([0-9]*\).*/\1/p")
	[ -n "$ev" ] && [ "$ev" -gt 0 ] || { cat "$log"; fail "$RACER, $n instance(s): '$line'"; }
	cycles=$(total "$log" cycles)
	[ -n "$cycles" ] && [ "$cycles" -gt 0 ] || fail "$RACER, $n instance(s): no verified cycle"
	growth=$(fd_growth "$s1" "$s2")
	[ "$growth" -le 3 ] || fail "$RACER, $n instance(s): an instance's fds grew by $growth ($s1 -> $s2)"
	sleep 0.5
	left=$(ours)
	[ -z "$left" ] || { ps -o pid,ppid,stat,cmd -p "$(echo $left | tr ' ' ',')"; fail "$RACER: processes left: $left"; }
	files=$(temp_files)
	[ -z "$files" ] || fail "$RACER: temp files left: $files"
	[ "$(knobs)" = "$before" ] || fail "$RACER: KSM knobs changed: '$before' -> '$(knobs)'"
	echo "ok $RACER, $n instance(s), $cycles cycles: $line"
done
exit 0
