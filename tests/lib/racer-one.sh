#!/bin/bash
# racer-one.sh RACER: one racer alone on the real kernel, 2 instances
# (--ksm-unmerge-method RACER: the racer with the madvise and prctl
# switches; RACER_IT_INSTANCES="1 2" for both counts; vmsplice and gup also
# with pattern mixed):
# exit 0 with --verify (checked before any skip; expect_ok in lib.sh: a
# known kernel bug is named, not failed, but the fork-zero racer alone fails
# through the bug it checks, expect_fork_zero), "racer RACER reached"
# with its evidence > 0 (a skip only for a supported() refusal on a kernel
# that lacks the racer's interface, see racer_skip_ok in lib.sh), at
# least one verified cycle, no fail: lines, no fd growth in the instances,
# no process of the run and no temp file left, KSM knobs as before, plus
# racer specific figures (mrelease latency spread, sparse walk cost, the
# KSM pages the mremap racer saw copied by its moves).
#
# The body of every tests/it/racer/NAME.sh except all.sh and default.sh.  It runs
# the stressor, so run it under "flock /tmp/ksm-dev.lock" (tests/run-tests
# does).
. "$(dirname "$0")/lib.sh"

RACER=$1
# vmsplice and gup keep copies of region pages: with prctl's merge-any a
# copy of a unique page must not merge with its source (pattern mixed)
PATTERNS=same
case $RACER in vmsplice|gup) PATTERNS="same mixed";; esac
EVIDENCE=$(racer_evidence "$RACER") || fail "unknown racer '$RACER'"
require_ksm

private_bin
# the run's cwd is the default --temp-path, where the gup racer tries first
RUNDIR=$TMPD/cwd
mkdir -p "$RUNDIR" || fail "cannot create $RUNDIR"

# temp_names: instance temp dirs (stress-ng's tmp-<prog>-<stressor>-<pid>-<i>,
# where the gup racer keeps its O_DIRECT file) in the shared temp directories
temp_names() {
	ls -d /var/tmp/tmp-*ksm-unmerge-* /tmp/tmp-*ksm-unmerge-* 2>/dev/null || true
}

# temp_files: anything left in the run's cwd (its --temp-path) or new
# instance temp dirs in /tmp, /var/tmp
temp_files() {
	ls -A "$RUNDIR" | sed "s|^|$RUNDIR/|"
	temp_names | grep -v -x -F -f <(echo "$TEMP_BEFORE") || true
}

# check_extra LOG: racer specific figures
check_extra() {
	local v
	case $RACER in
	mrelease)
		v=$(grep -o "mrelease kill-to-reaped millisecs: .*" "$1")
		check [ -n "$v" ] || fail "no mrelease latency spread printed"
		checked; echo "$v" | grep -q "samples=[1-9]" || fail "no mrelease latency samples: $v"
		echo "    $v"
		;;
	fork-zero)
		# the racer's overcharge counters agree with the verdict
		v=$(echo "$line" | sed -n 's/.*overcharged-uncopied=\([0-9]*\),overcharged-unmerging=\([0-9]*\).*/\1 \2/p')
		check [ -n "$v" ] || fail "fork-zero: no overcharge counters in '$line'"
		if [ "$KNOWN_BUG_SEEN" = 1 ]; then
			checked; [ "${v% *}" -gt 0 ] || [ "${v#* }" -gt 0 ] || ! fail_lines "$1" | grep -q "fork-zero racer" ||
				fail "fork-zero: a racer fail: line but no overcharge counted: '$line'"
		else
			check [ "$v" = "0 0" ] || fail "fork-zero: overcharges counted ($v) but the run passed"
		fi
		echo "    overcharged (uncopied, unmerging): $v"
		# the concurrent-zap check judged rounds (instance 0's child, 2 CPUs)
		v=$(echo "$line" | sed -n 's/.*zap-rounds=\([0-9]*\),zero-zaps-reached=\([0-9]*\).*/\1 \2/p')
		check [ -n "$v" ] || fail "fork-zero: no zap counters in '$line'"
		if [ "$(nproc)" -ge 2 ]; then
			checked
			[ "${v% *}" -gt 0 ] || fail "fork-zero: no zap round judged: '$line'"
		fi
		echo "    zap rounds (judged, reached): $v"
		;;
	mremap)
		# the moves' frame check ran: KSM pages moved arrived in new frames (a move
		# unmerges first; a KSM page kept in its frame is a fail line)
		v=$(echo "$line" | sed -n 's/.*ksm-pages-copied=\([0-9]*\).*/\1/p')
		check [ -n "$v" ] || fail "mremap: no ksm-pages-copied in '$line'"
		checked; [ "$v" -gt 0 ] || fail "mremap: KSM pages moved but none seen in a new frame: '$line'"
		echo "    KSM pages copied by the moves: $v"
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

TEMP_BEFORE=$(temp_names)
before=$(knobs)
for pat in $PATTERNS; do
for n in ${RACER_IT_INSTANCES:-2}; do
	log=$TMPD/run-$pat-$n.log
	(cd "$RUNDIR" && exec "$BIN" --ksm-unmerge $n -t 6 --metrics --verify --ksm-unmerge-bytes 16M \
		--ksm-unmerge-pattern $pat --ksm-unmerge-method "$RACER") >"$log" 2>&1 &
	pid=$!
	sleep 2
	s1=$(fds $pid)
	sleep 3
	s2=$(fds $pid)
	wait $pid
	rc=$?
	line=$(grep -o "racer $RACER .*" "$log")
	# the exit status first: a run that failed is not a skip
	KNOWN_BUG_SEEN=0
	if [ "$RACER" = fork-zero ]; then
		checked; expect_fork_zero "$log" "$rc" || fail "$RACER, $pat, $n instance(s): exit status $rc"
	else
		checked; expect_ok "$log" "$rc" || fail "$RACER, $pat, $n instance(s): exit status $rc"
	fi
	case $line in
	"racer $RACER skipped"*)
		checked
		why=$(racer_skip_ok "$line" "$RACER" "$log") || { cat "$log"; fail "$line: $why"; }
		skip "$line ($why)";;
	esac
	checked; ! fail_lines "$log" | grep -vqF "$KNOWN_BUG" || { cat "$log"; fail "$RACER, $pat, $n instance(s): fail: lines"; }
	ev=$(echo "$line" | sed -n "s/.* reached: ops=[0-9]* $EVIDENCE=\([0-9]*\).*/\1/p")
	check [ -n "$ev" ] && [ "$ev" -gt 0 ] || { cat "$log"; fail "$RACER, $n instance(s): '$line'"; }
	cycles=$(total "$log" cycles)
	check [ -n "$cycles" ] && [ "$cycles" -gt 0 ] || fail "$RACER, $n instance(s): no verified cycle"
	growth=$(fd_growth "$s1" "$s2")
	check [ "$growth" -le 3 ] || fail "$RACER, $n instance(s): an instance's fds grew by $growth ($s1 -> $s2)"
	sleep 0.5
	left=$(ours)
	check [ -z "$left" ] || { ps -o pid,ppid,stat,cmd -p "$(echo $left | tr ' ' ',')"; fail "$RACER: processes left: $left"; }
	files=$(temp_files)
	check [ -z "$files" ] || fail "$RACER: temp files left: $(echo $files)"
	check [ "$(knobs)" = "$before" ] || fail "$RACER: KSM knobs changed: '$before' -> '$(knobs)'"
	echo "ok $RACER, pattern $pat, $n instance(s), $cycles cycles: $line"
	check_extra "$log"
done
done

# zapper_pid: the concurrent-zap check's child, the one process of the run
# with a 64 MiB anonymous mapping (its two zap halves)
zapper_pid() {
	local p range path _
	for p in $(ours); do
		while read -r range _ _ _ _ path; do
			[ -z "$path" ] && [ $((16#${range#*-} - 16#${range%-*})) = 67108864 ] &&
				{ echo "$p"; break; }
		done < "/proc/$p/maps" 2>/dev/null
	done
}

# the zap child killed by a signal of its own (not the stop's SIGKILL)
# fails the run with a line that says so (2 CPUs: the check runs)
if [ "$RACER" = fork-zero ] && [ "$(nproc)" -ge 2 ]; then
	log=$TMPD/zap-signal.log
	(cd "$RUNDIR" && exec "$BIN" --ksm-unmerge 2 -t 8 --verify --ksm-unmerge-bytes 16M \
		--ksm-unmerge-method fork-zero) >"$log" 2>&1 &
	pid=$!
	z=""
	for _ in $(seq 50); do
		sleep 0.1
		z=$(zapper_pid)
		[ -n "$z" ] && break
	done
	check [ -n "$z" ] || fail "fork-zero: no concurrent-zap child found within 5 s"
	kill -SEGV "$z"
	wait $pid
	rc=$?
	checked; [ "$rc" = 2 ] || { cat "$log"; fail "fork-zero: zap child killed: exit $rc, not 2"; }
	check grep -q "concurrent-zap check's child died of signal 11" "$log" ||
		{ cat "$log"; fail "fork-zero: zap child killed by SIGSEGV: no line says so"; }
	check [ "$(knobs)" = "$before" ] || fail "fork-zero: KSM knobs changed after the zap child's kill"
	echo "ok fork-zero: the zap child killed by SIGSEGV fails the run (exit $rc)"
fi
checks_done
exit 0
