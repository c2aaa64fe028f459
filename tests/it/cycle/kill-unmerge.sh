#!/bin/bash
# tests/it/cycle/kill-unmerge.sh: a signal that lands while an instance is
# inside MADV_UNMERGEABLE leaves nothing behind.  Three runs (1 instance,
# madvise with the sparse, fork, mrelease, prctl-exec and gup racers,
# pattern mixed): the instance is SIGKILLed, or the whole run gets SIGTERM,
# or SIGINT, at a moment its main thread's kernel stack
# (/proc/PID/task/PID/stack) shows the madvise -> unmerge_ksm_pages ->
# break_ksm path, after one verified cycle.  The sparse racer's
# MADV_UNMERGEABLE of a --ksm-unmerge-sparse-bytes range walks every hole
# page (about 60 ns each on 6.18: 64G is about 1 s), which makes the
# unmerge long enough to catch.  The sampler runs on the instance's CPU,
# so when it reads the stack the instance is off the CPU (the stack of a
# task running on another CPU reads empty) and preempted at the walk's
# cond_resched().  Then, each check one that fails if the thing is left:
#   - verdict: SIGKILL fails the run (exit 2, "failed: 1", the pid
#     "terminated on signal 9" and "killed from outside the run"); SIGTERM
#     and SIGINT stop it within 2.5 s, exit 0, with the summary;
#   - processes: every process of the run seen just before the signal
#     (runner, instance, kernel-log watcher, monitor, racer children:
#     mrelease victims, fork children, prctl-exec helpers; all of them run
#     the private binary, found by exe and checked by pid + start time) is
#     gone; racer children die through PR_SET_PDEATHSIG;
#   - KSM knobs: every knob the stressor saves reads as before (they were
#     changed while it ran: checked too);
#   - state file: during the run it names the runner and holds the knobs as
#     before; after it, it and its .tmp are gone and no process holds a
#     lock on the run lock file;
#   - temp files: every file the run's processes held open is either
#     unnamed ("(deleted)": the gup racer's O_TMPFILE, memfds) or existed
#     before; none of the others exists after; the run's cwd (the gup
#     racer's first choice) is empty; no stress-ksm-unmerge* name is new in
#     /tmp, /var/tmp, /dev/shm or /run;
#   - KSM counters: every rmap_item belongs to an mm (mm->ksm_rmap_items),
#     and pages_shared + pages_sharing count the stable ones
#     (mm->ksm_merging_pages); ksm_zero_pages counts KSM zero pages mapped
#     (mm->ksm_zero_pages).  So on a correct kernel, with ksmd stopped
#     (run=0) and nothing else changing them, the global counters equal the
#     sums of /proc/PID/ksm_stat over the live processes; an excess is held
#     by a dead mm.  A killed (or exited) mm keeps its rmap_items, its
#     mm_slot and its share of pages_shared/pages_sharing until ksmd's next
#     visit (run=2 would free them too, but unmerges every KSM user of the
#     machine, so the stressor never writes it): the stressor lets ksmd
#     finish a full scan before it stops ksmd again.  ksm_zero_pages drops
#     at unmap (exit_mmap), with or without ksmd.  stable_node_chains and
#     stable_node_dups are pruned lazily by later stable-tree searches, so
#     they are printed, not checked.
# KILL_IT_SPARSE (default 64G) sets the sparse range.
. "$(dirname "$0")/../../lib/lib.sh"
export LC_ALL=C		# $EPOCHREALTIME with a '.'
require_ksm
private_bin		# the run's processes are exactly those whose exe is $BIN
STRESSOR=$BIN
command -v taskset >/dev/null || skip "taskset (util-linux) missing"
[ "$(nproc)" -ge 2 ] || skip "needs 2 CPUs (the sampler shares CPU 0 with the instance, ksmd needs another)"
SPARSE=${KILL_IT_SPARSE:-64G}
RUNDIR=$TMPD/cwd
STATE=/run/stress-ksm-unmerge.state
mkdir -p "$RUNDIR" || fail "cannot create $RUNDIR"
RUN_PID=

# cleanup: a run still going when the script ends (a failed check) is
# stopped the way the knobs get restored, then killed
cleanup() {
	local i
	if [ -n "$RUN_PID" ] && kill -TERM "$RUN_PID" 2>/dev/null; then
		for i in $(seq 1 30); do kill -0 "$RUN_PID" 2>/dev/null || break; sleep 0.1; done
		kill -KILL "$RUN_PID" 2>/dev/null
	fi
	rm -rf "$TMPD"
}
trap cleanup EXIT

# start_of PID: the process's start time (stat field 22), empty if gone
start_of() {
	local s
	s=$(cat "/proc/$1/stat" 2>/dev/null) || return 0
	s=${s##*) }
	echo "$s" | awk '{ print $20 }'
}

# ppid_of PID: its parent's pid
ppid_of() {
	local s
	s=$(cat "/proc/$1/stat" 2>/dev/null) || return 0
	s=${s##*) }
	echo "$s" | awk '{ print $2 }'
}

# ksm_names: stress-ksm-unmerge* names in the shared temp directories
ksm_names() {
	ls -d /tmp/stress-ksm-unmerge* /var/tmp/stress-ksm-unmerge* /dev/shm/stress-ksm-unmerge* \
		/run/stress-ksm-unmerge* 2>/dev/null | grep -v -x "$STATE.lock" || true
}

# live_sums: "rmap_items merging_pages zero_pages" summed over live processes
live_sums() {
	awk '$1 == "ksm_rmap_items" { r += $2 } $1 == "ksm_merging_pages" { m += $2 }
		$1 == "ksm_zero_pages" { z += $2 } END { printf "%d %d %d\n", r, m, z }' \
		/proc/[0-9]*/ksm_stat 2>/dev/null
}

# global_sums: the same three from /sys/kernel/mm/ksm
global_sums() {
	local sh sg us vo z
	sh=$(cat $KSM/pages_shared) sg=$(cat $KSM/pages_sharing) us=$(cat $KSM/pages_unshared)
	vo=$(cat $KSM/pages_volatile) z=$(cat $KSM/ksm_zero_pages)
	echo "$((sh + sg + us + vo)) $((sh + sg)) $z"
}

# instance_of RUNNER: the instance process (not the watcher or the monitor)
instance_of() {
	local c
	for c in $(pgrep -P "$1"); do
		grep -q '\[run\]' "/proc/$c/cmdline" 2>/dev/null && { echo "$c"; return; }
	done
}

# catch_signal INST TARGET SIG: on CPU 0 (the instance's), read INST's main
# thread's kernel stack until it is in the unmerge, then send SIG to TARGET
# at once; writes the stack, the read-to-signal gap (us) and the samples
# taken to $TMPD/hit
catch_signal() {
	local inst=$1 target=$2 sig=$3 st t0 t1 n=0 end=$((SECONDS + 20))
	taskset -pc 0 $BASHPID >/dev/null || return 1
	while [ $SECONDS -lt $end ]; do
		st=
		t0=$EPOCHREALTIME
		IFS= read -r -d '' st <"/proc/$inst/task/$inst/stack" 2>/dev/null
		n=$((n + 1))
		case $st in
		*unmerge_ksm_pages*madvise* | *break_ksm*madvise*)
			: >"$TMPD/sig"
			kill -"$sig" "$target"
			t1=$EPOCHREALTIME
			{ echo "$st"; echo "gap_us $(( ${t1/./} - ${t0/./} ))"; echo "samples $n"; } >"$TMPD/hit"
			return 0;;
		esac
	done
	return 1
}

# run_pids: pids of the processes running $BIN (ours() with one find)
run_pids() {
	find /proc -mindepth 2 -maxdepth 2 -path '/proc/[0-9]*/exe' -lname "$BIN" 2>/dev/null | cut -d/ -f3
}

# snapshot: pid, ppid, start time and cmdline of every process of the run
snapshot() {
	local p start
	for p in $(run_pids); do
		start=$(start_of "$p")
		[ -n "$start" ] || continue	# gone already
		echo "$p $(ppid_of "$p") $start $(tr '\0' ' ' 2>/dev/null <"/proc/$p/cmdline" | cut -c1-60)"
	done
}

# open_files: the regular files the run's processes hold open, one a line
open_files() {
	local p f
	for p in $(run_pids); do
		for f in /proc/$p/fd/*; do
			f=$(readlink "$f" 2>/dev/null) || continue
			case $f in /dev/shm/*) ;; /proc/* | /sys/* | /dev/* | pipe:* | socket:* | anon_inode:* | "") continue;; esac
			echo "$f"
		done
	done | sort -u
}

before=$(knobs)
names_before=$(ksm_names)
ls -A "$RUNDIR" | grep -q . && fail "$RUNDIR is not empty before the run"
pre_existing=$TMPD/pre-existing
# zero_excess: global ksm_zero_pages less the live processes' sum
zero_excess() {
	local g l
	g=$(global_sums) l=$(live_sums)
	echo $(( ${g##* } - ${l##* } ))
}

# one_run SIG PATTERN METHODS: a run, SIG at a caught unmerge (KILL to the
# instance, else to the runner)
one_run() {
	local sig=$1 pattern=$2 methods=$3 log=$TMPD/$1-$2.log pid inst target rc t0 t1 secs st gap left f held
	local snap files kstat s1 f1 k1 during_knobs during_state g l i zx0 zx1 items zero k v w
	echo "SIG$sig, pattern $pattern, methods $methods"
	zx0=$(zero_excess)
	(cd "$RUNDIR" && exec taskset -c 0 "$BIN" --ksm-unmerge 1 -t 60 --verify --metrics \
		--ksm-unmerge-bytes 32M --ksm-unmerge-pattern "$pattern" --ksm-unmerge-sparse-bytes "$SPARSE" \
		--ksm-unmerge-progress 1 --ksm-unmerge-method "$methods") >"$log" 2>&1 &
	pid=$!
	RUN_PID=$pid
	# files it may hold that are not its own: its log, the fds it inherits
	# (the test's, such as the /tmp/ksm-dev.lock flock), and the run lock
	# file, which stays by design (a lock, no data: checked unlocked below)
	{ echo "$log"; echo "$STATE.lock"; for f in /proc/$$/fd/*; do readlink "$f"; done; } >"$pre_existing"
	for i in $(seq 1 300); do
		grep -q "progress: .*,cycles=[1-9]" "$log" && break
		kill -0 $pid 2>/dev/null || break
		sleep 0.1
	done
	grep -q "progress: .*,cycles=[1-9]" "$log" || { cat "$log"; fail "SIG$sig: no verified cycle within 30 s"; }
	inst=$(instance_of $pid)
	check [ -n "$inst" ] || fail "SIG$sig: no instance process"
	target=$pid
	[ "$sig" = KILL ] && target=$inst
	during_knobs=$(knobs)
	during_state=$(cat "$STATE" 2>/dev/null)
	rm -f "$TMPD/hit" "$TMPD/sig"
	snap=$(snapshot)
	files=$(open_files)
	kstat=$(cat "/proc/$inst/ksm_stat" 2>/dev/null)
	catch_signal "$inst" "$target" "$sig" &
	# snapshots while the sampler looks (the racer children come and go);
	# one the signal may have overtaken is dropped
	while [ ! -e "$TMPD/sig" ] && kill -0 $! 2>/dev/null; do
		s1=$(snapshot)
		f1=$(open_files)
		k1=$(cat "/proc/$inst/ksm_stat" 2>/dev/null)
		[ -e "$TMPD/sig" ] && break
		snap=$s1 files=$f1 kstat=$k1
		sleep 0.2
	done
	wait $! || { cat "$log"; fail "SIG$sig: never caught inside MADV_UNMERGEABLE in 20 s"; }
	t0=$(date +%s.%N)
	wait $pid
	rc=$?
	RUN_PID=
	t1=$(date +%s.%N)
	secs=$(echo "$t1 - $t0" | bc)
	st=$(grep -v -e '^gap_us' -e '^samples' "$TMPD/hit")
	gap=$(sed -n 's/^gap_us //p' "$TMPD/hit")
	echo "SIG$sig during the unmerge: exit $rc after ${secs}s; stack read $gap us before the signal" \
		"($(sed -n 's/^samples //p' "$TMPD/hit") samples):"
	echo "$st" | sed 's/^/    /'

	# the kernel's own view: the main thread was in the unmerge walk of a madvise
	checked; echo "$st" | grep -Eq 'do_madvise|sys_madvise' || fail "SIG$sig: stack has no madvise syscall frame"
	checked; echo "$st" | grep -Eq 'unmerge_ksm_pages|break_ksm' || fail "SIG$sig: stack not in the unmerge"
	check [ "$gap" -lt 20000 ] || fail "SIG$sig: ${gap} us between the stack read and the signal"

	# the verdict
	if [ "$sig" = KILL ]; then
		check [ "$rc" = 2 ] || { cat "$log"; fail "SIGKILL: run exit $rc, expected 2"; }
		check grep -q "\[$inst\] terminated on signal 9 'SIGKILL'" "$log" || { cat "$log"; fail "SIGKILL of $inst not reported"; }
		check grep -q "\[$inst\] killed from outside the run (not by the OOM killer)" "$log" ||
			{ cat "$log"; fail "SIGKILL: no line saying why the run failed"; }
		check grep -q '\] failed: 1: ksm-unmerge (1)$' "$log" || { cat "$log"; fail "SIGKILL: no failed line"; }
	else
		check [ "$rc" = 0 ] || { cat "$log"; fail "SIG$sig: run exit $rc, expected 0"; }
		check [ "$(echo "$secs < 2.5" | bc)" = 1 ] || fail "SIG$sig: took ${secs}s to stop"
		check grep -q '\] successful run completed' "$log" || { cat "$log"; fail "SIG$sig: no summary"; }
		checked; ! grep -q ' fail: ' "$log" || { cat "$log"; fail "SIG$sig: fail: lines"; }
	fi
	check grep -q "ksm-unmerge: totals:" "$log" || fail "SIG$sig: deinit did not run"

	# processes: each one seen before the signal is gone (pid + start time)
	check [ "$(echo "$snap" | grep -c .)" -ge 3 ] || fail "SIG$sig: saw only '$snap' before the signal"
	echo "  processes before the signal: $(echo "$snap" | grep -c .), racer children: $(echo "$snap" | awk -v i="$inst" '$2 == i' | grep -c .)"
	for i in $(seq 1 30); do
		left=$(while read -r p pp start rest; do [ "$(start_of "$p")" = "$start" ] && echo "$p"; done <<<"$snap")
		[ -z "$left$(ours)" ] && break
		sleep 0.1
	done
	while read -r p pp start rest; do
		check [ "$(start_of "$p")" != "$start" ] || { ps -o pid,ppid,stat,cmd -p "$p"; fail "SIG$sig: $p ($rest) left running"; }
	done <<<"$snap"
	left=$(ours)
	check [ -z "$left" ] || { ps -o pid,ppid,stat,cmd -p "$(echo $left | tr ' ' ',')"; fail "SIG$sig: processes left: $left"; }

	# knobs (changed while it ran) restored
	check [ "$during_knobs" != "$before" ] || fail "SIG$sig: the knobs were not changed during the run"
	check [ "$(knobs)" = "$before" ] || fail "SIG$sig: knobs '$(knobs)' != '$before'"

	# state file: consistent during the run, gone after; run lock released
	checked; echo "$during_state" | grep -qx "pid $pid" || fail "SIG$sig: state file '$during_state' does not name $pid"
	# (compared with the restored knobs, checked equal to those before;
	# a choice knob such as advisor_mode is saved as its selected word)
	while read -r k v; do
		[ "$k" = pid ] && continue
		w=$(cat "$KSM/$k" 2>/dev/null)
		case $w in *\[*\]*) w=${w#*[}; w=${w%%]*};; esac
		check [ "$v" = "$w" ] || fail "SIG$sig: state file holds $k $v, the knob was $w"
	done <<<"$during_state"
	check [ ! -e "$STATE" ] || fail "SIG$sig: state file $STATE left"
	check [ ! -e "$STATE.tmp" ] || fail "SIG$sig: $STATE.tmp left"
	held=$(awk -v ino="$(stat -c %i "$STATE.lock" 2>/dev/null)" '{ n = split($6, a, ":") } a[n] == ino' /proc/locks)
	check [ -z "$held" ] || fail "SIG$sig: the run lock $STATE.lock is still held: $held"

	# files: the ones held open were unnamed or pre-existing, and are gone
	while read -r f; do
		[ -z "$f" ] && continue
		case $f in *" (deleted)") continue;; esac
		grep -qxF "$f" "$pre_existing" && continue
		check [ ! -e "$f" ] || fail "SIG$sig: $f (held open by the run) left"
	done <<<"$files"
	echo "  files held open: $(echo "$files" | grep -c .) ($(echo "$files" | grep -c '(deleted)') unnamed)"
	check [ -z "$(ls -A "$RUNDIR")" ] || fail "SIG$sig: left in the run's cwd: $(ls -A "$RUNDIR")"
	check [ "$(ksm_names)" = "$names_before" ] || fail "SIG$sig: new temp names: $(ksm_names)"

	# KSM counters: nothing held by a dead mm (see the header)
	g=$(global_sums)
	l=$(live_sums)
	zx1=$(zero_excess)
	# what the instance held just before the signal: the checks below have something to catch
	items=$(echo "$kstat" | awk '$1 == "ksm_rmap_items" { print $2 }')
	zero=$(echo "$kstat" | awk '$1 == "ksm_zero_pages" { print $2 }')
	echo "  the instance held $items rmap_items, $zero KSM zero pages" \
		"($(echo "$kstat" | awk '$1 == "ksm_merging_pages" { print $2 }') merging pages) just before the signal"
	check [ "${items:-0}" -gt 0 ] || fail "SIG$sig: the instance held no rmap_items before the signal"
	[ "$pattern" = mixed ] && { check [ "${zero:-0}" -gt 0 ] || fail "SIG$sig: pattern mixed, no KSM zero page"; }
	echo "  rmap_items, shared+sharing, zero pages: global $g, live processes $l;" \
		"zero pages held by no live process: $zx0 before, $zx1 after;" \
		"chains $(cat $KSM/stable_node_chains) dups $(cat $KSM/stable_node_dups)"
	if [ "$(cat $KSM/run)" = 0 ]; then
		check [ "${g% *}" = "${l% *}" ] ||
			fail "SIG$sig: rmap_items/pages_shared+pages_sharing held by dead processes: global $g, live $l"
	else
		echo "note: ksmd runs (run=$(cat $KSM/run)): rmap_items and merged pages move, not checked"
	fi
	check [ "$zx1" = "$zx0" ] || fail "SIG$sig: $((zx1 - zx0)) KSM zero pages counted for no live process"
	check [ "${g##* }" -lt 4611686018427387904 ] || fail "SIG$sig: ksm_zero_pages wrapped: ${g##* }"
}

# the forking racers' children (mrelease victims, fork children,
# prctl-exec helpers) with pattern same: with zero pages, a fork during
# an unmerge makes 6.18 count KSM zero pages that no process maps (a kernel
# bug, docs/racers.md "the global ksm_zero_pages grows without bound"),
# which the zero-page check would report; zero pages with the racers that
# do not fork
FORKERS=madvise,sparse,fork,mrelease,prctl-exec,gup
QUIET=madvise,sparse,gup
one_run KILL mixed $QUIET
one_run KILL same $FORKERS
one_run TERM same $FORKERS
one_run INT mixed $QUIET
echo "ok: SIGKILL, SIGTERM and SIGINT inside MADV_UNMERGEABLE left nothing behind"
checks_done
exit 0
