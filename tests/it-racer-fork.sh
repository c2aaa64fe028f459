#!/bin/bash
# it-racer-fork: the fork racer alone on the real kernel, 2
# instances: exit 0 with --verify, "racer fork reached" with evidence
# ksm-cow-writes > 0, no fail: lines, no fd growth in the instances, no
# process of the run left afterwards, KSM knobs as before.
#
# This script is also the body of it-racer-mrelease.sh, it-racer-mprotect.sh
# and it-racer-sparse.sh, which exec it with their racer name.  It runs the
# stressor, so run it under "flock /tmp/ksm-dev.lock" (tests/run-tests does).
. "$(dirname "$0")/lib.sh"

RACER=${1:-fork}
case $RACER in
fork)		EVIDENCE=ksm-cow-writes;;
mrelease)	EVIDENCE=mrelease-reaps;;
mprotect)	EVIDENCE=ksm-pages-protected;;
sparse)		EVIDENCE=sparse-pages-walked;;
*)		fail "unknown racer '$RACER'";;
esac
require_ksm

# a private copy of the binary: its processes are exactly those with this exe
BIN=$TMPD/stress-ksm-unmerge
cp "$STRESSOR" "$BIN" || fail "cannot copy $STRESSOR to $TMPD"

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

# check_extra LOG: racer specific figures
check_extra() {
	local v
	case $RACER in
	mrelease)
		v=$(grep -o "mrelease kill-to-reaped millisecs: .*" "$1")
		[ -n "$v" ] || fail "no mrelease latency spread printed"
		echo "$v" | grep -q "samples=[1-9]" || fail "no mrelease latency samples: $v"
		echo "    $v"
		;;
	sparse)
		v=$(sed -n 's/.* \([0-9.]*\) nanosecs per sparse page.*/\1/p' "$1" | head -1)
		if [ -n "$v" ]; then
			awk -v v="$v" 'BEGIN { exit !(v > 1 && v < 100000) }' ||
				fail "implausible $v nanosecs per sparse page"
			echo "    $v nanosecs per sparse page"
		fi
		;;
	esac
}

before=$(knobs)
for n in ${RACER_IT_INSTANCES:-2}; do
	log=$TMPD/run-$n.log
	"$BIN" --ksm-unmerge $n -t 6 --metrics --verify --ksm-unmerge-bytes 16M \
		--ksm-unmerge-method "$RACER" >"$log" 2>&1 &
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
	growth=$(fd_growth "$s1" "$s2")
	[ "$growth" -le 3 ] || fail "$RACER, $n instance(s): an instance's fds grew by $growth ($s1 -> $s2)"
	sleep 0.5
	left=$(ours)
	[ -z "$left" ] || { ps -o pid,ppid,stat,cmd -p "$(echo $left | tr ' ' ',')"; fail "$RACER: processes left: $left"; }
	[ "$(knobs)" = "$before" ] || fail "$RACER: KSM knobs changed: '$before' -> '$(knobs)'"
	echo "ok $RACER, $n instance(s): $line"
	check_extra "$log"
done
exit 0
