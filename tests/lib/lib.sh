# tests/lib/lib.sh: shared helpers for the integration scripts (source it).
# Exit codes: 0 pass, 77 skip (reason on stdout), anything else fail.

TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
. "$(dirname "${BASH_SOURCE[0]}")/checks.sh"
STRESSOR=${STRESSOR:-$TOP/build/stress-ksm-unmerge}
KSM=/sys/kernel/mm/ksm
KNOBS="run pages_to_scan sleep_millisecs use_zero_pages max_page_sharing merge_across_nodes smart_scan advisor_mode"
TMPD=$(mktemp -d /tmp/ksm-it.XXXXXX)
# KSM_IT_KEEP=1 keeps the temp dir (logs) for a look after a failure
trap '[ -n "$KSM_IT_KEEP" ] || rm -rf "$TMPD"' EXIT

# skip: print the reason and exit 77
skip() { echo "SKIP: $*"; exit 77; }

# fail: print the reason and exit 1
fail() { echo "FAIL: $*"; exit 1; }

# require_ksm: root and a KSM kernel, else skip
require_ksm() {
	[ "$(id -u)" = 0 ] || skip "needs root"
	[ -w "$KSM/run" ] || skip "kernel has no KSM ($KSM/run missing or read-only)"
	[ -x "$STRESSOR" ] || fail "$STRESSOR not built"
}

# knobs: one line with every KSM knob value
knobs() {
	local k out=""
	for k in $KNOBS; do out="$out $k=$(cat $KSM/$k 2>/dev/null)"; done
	echo "$out"
}

# total LOG KEY: value of KEY=N in the stressor's totals line of LOG
total() {
	grep -m1 'ksm-unmerge: totals: ' "$1" | grep -o "[,: ]$2=[0-9]*" | head -1 | sed 's/.*=//'
}

# bogo_ops: bogo ops from the metrics row in file $1
bogo_ops() {
	awk '$3 ~ /^\[/ && $4 == "ksm-unmerge" && $5 ~ /^[0-9]+$/ { print $5; exit }' "$1"
}

# leftovers: stressor processes still alive
leftovers() {
	local p exe bin
	bin=$(readlink -f "${BIN:-$STRESSOR}")
	for p in /proc/[0-9]*; do
		[ "${p#/proc/}" = "$$" ] && continue
		exe=$(readlink "$p/exe" 2>/dev/null) || continue
		[ "$exe" = "$bin" ] && echo "${p#/proc/}"
	done
	return 0
}

# log_wait LOG REGEX: wait up to 10 s until LOG has a line matching REGEX
log_wait() {
	local i
	for i in $(seq 1 100); do
		grep -q "$2" "$1" 2>/dev/null && return 0
		sleep 0.1
	done
	return 1
}

# private_bin: copy the stressor into $TMPD as $BIN, so the run's processes
# are exactly those whose exe is $BIN
private_bin() {
	BIN=$TMPD/stress-ksm-unmerge
	cp "$STRESSOR" "$BIN" || fail "cannot copy $STRESSOR to $TMPD"
}

# ours: pids of live processes running the private copy $BIN
ours() {
	local p
	for p in /proc/[0-9]*; do
		[ "$(readlink "$p/exe" 2>/dev/null)" = "$BIN" ] && echo "${p#/proc/}"
	done
}

# instances_of RUNNER: the runner's instance processes (titled "[run]";
# not the kernel-log reader the runner may also fork)
instances_of() {
	local c
	for c in $(pgrep -P "$1"); do
		grep -q '\[run\]' "/proc/$c/cmdline" 2>/dev/null && echo "$c"
	done
	return 0
}

# worker_of INSTANCE: the worker child the instance supervises (it runs the
# cycles and the racers); empty if none (yet)
worker_of() {
	pgrep -P "$1" | head -n 1
}

# fds: "pid:count" for each instance and worker of the runner $1
fds() {
	local p w
	for p in $(instances_of "$1"); do
		echo "$p:$(ls "/proc/$p/fd" 2>/dev/null | wc -l)"
		for w in $(pgrep -P "$p"); do
			echo "$w:$(ls "/proc/$w/fd" 2>/dev/null | wc -l)"
		done
	done
}

# fd_growth: largest growth of an instance's fd count between two fds samples
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

# kernel_at_least MAJ MIN: the running kernel's version is >= MAJ.MIN
kernel_at_least() {
	local v maj min
	v=$(uname -r)
	maj=${v%%.*}
	min=${v#*.}
	min=${min%%[!0-9]*}
	[ "$maj" -gt "$1" ] || { [ "$maj" -eq "$1" ] && [ "$min" -ge "$2" ]; }
}

# racer_interface RACER: succeed when this kernel has what racer RACER
# needs (so a skip of it is a defect); else print what is missing and fail
racer_interface() {
	local thp=/sys/kernel/mm/transparent_hugepage/enabled
	case $1 in
	thp)
		[ -r $thp ] || { echo "no transparent huge pages ($thp missing)"; return 1; }
		! grep -q '\[never\]' $thp || { echo "transparent huge pages are [never]"; return 1; }
		;;
	uffd-wp)
		[ -e /proc/sys/vm/unprivileged_userfaultfd ] ||
			{ echo "no userfaultfd (CONFIG_USERFAULTFD off)"; return 1; }
		kernel_at_least 5 7 || { echo "no anonymous uffd-wp before Linux 5.7"; return 1; }
		;;
	mrelease)
		kernel_at_least 5 15 || { echo "no process_mrelease before Linux 5.15"; return 1; }
		;;
	uffd-minor)
		[ -e /proc/sys/vm/unprivileged_userfaultfd ] ||
			{ echo "no userfaultfd (CONFIG_USERFAULTFD off)"; return 1; }
		kernel_at_least 5 13 || { echo "no uffd minor faults on shmem before Linux 5.13"; return 1; }
		;;
	prctl-exec)
		kernel_at_least 6 4 || { echo "no PR_SET_MEMORY_MERGE before Linux 6.4"; return 1; }
		;;
	fork-zero)
		grep -q '^ksm_zero_pages' /proc/self/ksm_stat 2>/dev/null ||
			{ echo "no ksm_zero_pages in /proc/self/ksm_stat (per-process KSM zero pages: Linux 6.10)"; return 1; }
		;;
	esac
	return 0
}

# racer_skip_ok LINE RACER [LOG]: succeed when LINE ("racer R skipped: ...")
# is a skip a test may accept: a supported() refusal (not "start failed") on
# a kernel that lacks the racer's interface, or a racer stepping aside from a
# known kernel bug the run (LOG) named as seen; else print why it is a failure
racer_skip_ok() {
	local why
	case $1 in
	*"skipped: start failed"*) echo "a start() failure is a failure, not a skip"; return 1;;
	*"skipped: steps aside: this run confirmed the known kernel bug"*)
		if [ -n "${3:-}" ] && known_bug_seen "$3"; then
			echo "the run named the known kernel bug it steps aside from"
			return 0
		fi
		echo "a racer stepped aside from a known bug the run did not name"
		return 1;;
	esac
	if why=$(racer_interface "$2"); then
		echo "this kernel has what racer $2 needs, so the skip is a failure"
		return 1
	fi
	echo "$why"
	return 0
}

# racer_list: the stressor's racer table, one racer a line, tab separated:
# name, evidence counter, "built" or "not built: reason", description.
# build/ksm-racers (built by make from the stressor's own source) prints it:
# the table is the only list of racers, no test keeps its own
RACERS_TOOL=${RACERS_TOOL:-$TOP/build/ksm-racers}
racer_list() {
	local out
	[ -x "$RACERS_TOOL" ] || fail "$RACERS_TOOL not built (make)"
	out=$("$RACERS_TOOL") && [ -n "$out" ] || fail "$RACERS_TOOL listed no racers"
	echo "$out"
}

# racer_names: the racers' names, one a line
racer_names() {
	racer_list | cut -f1
}

# racer_evidence RACER: the name of racer RACER's evidence counter
racer_evidence() {
	racer_list | awk -F'\t' -v r="$1" '$1 == r { print $2; found = 1 } END { exit !found }'
}

# racers_check LOG: every racer "reached" with evidence in LOG, or "skipped:"
# with a reason a test may accept (racer_skip_ok); fails otherwise.  Sets
# RACERS_REACHED.
racers_check() {
	local r line why
	RACERS_REACHED=0
	for r in $(racer_names); do
		if grep -q "racer $r skipped: ." "$1"; then
			line=$(grep -o "racer $r skipped:.*" "$1" | head -1)
			checked
			why=$(racer_skip_ok "$line" "$r" "$1") || { grep "racer" "$1"; fail "$line: $why"; }
			echo "note: $line ($why)"
			continue
		fi
		check grep -q "racer $r reached: ops=[1-9][0-9]* [a-z-]*=[1-9]" "$1" ||
			{ grep "racer" "$1"; fail "racer $r not reached"; }
		RACERS_REACHED=$((RACERS_REACHED + 1))
	done
}

# The known kernel bug "KSM zero pages charged at fork"
# (docs/upstream/ksm-fork-zero-pages): a forked child is charged KSM zero
# pages it does not map, and the global ksm_zero_pages keeps them.  A run
# whose racers fork probes for it at its start and names it in one report
# line, "known kernel bug ksm-fork-zero-pages: ..."; it is not a failure
# of the run, but of the fork-zero racer run alone.
KNOWN_BUG="KSM zero pages charged at fork"
KNOWN_BUG_LINE="known kernel bug ksm-fork-zero-pages:"

# racer_forks RACER: racer RACER forks children during the cycles (with
# prctl's merge-any every zero-filled page of the worker can be a KSM zero
# page), so its runs probe for the known bug and may leave its mark; the
# stressor's KSM_RF_FORKS flag
racer_forks() {
	case $1 in mrelease|fork|prctl-exec|fork-zero) return 0;; esac
	return 1
}

# fail_lines LOG: the run's fail: lines (stress-ng's pr_fail prefix)
fail_lines() {
	grep -E '^stress-ng: fail: ' "$1"
}

# known_bug_possible: this kernel counts KSM zero pages per process and
# globally, so the bug can show (a kernel without the counters cannot fail
# with it: no line naming it is then accepted)
known_bug_possible() {
	[ -r "$KSM/ksm_zero_pages" ] && grep -q '^ksm_zero_pages' /proc/self/ksm_stat 2>/dev/null
}

# known_bug_seen LOG: the run named the known bug as present in this kernel
known_bug_seen() {
	grep -q "$KNOWN_BUG_LINE [0-9]* matching verdict\|$KNOWN_BUG_LINE seen (" "$1"
}

# known_bug_left LOG: the KSM zero pages the run says it left charged to no
# process (its report line for the known bug, or its failure line), 0 if none
known_bug_left() {
	local n
	n=$(sed -n -e 's/.*KSM zero pages the run left charged to no process: \([0-9]*\).*/\1/p' \
		-e 's/.*KSM zero pages charged at fork: the global ksm_zero_pages holds \([0-9]*\) more.*/\1/p' "$1" | head -1)
	echo "${n:-0}"
}

# expect_ok LOG RC: the run passed: exit 0, no fail: line, no error line;
# on failure prints the log and why (the caller fails).  A known kernel
# bug is named by the run (known_bug_seen) and does not fail it.
expect_ok() {
	local log=$1 rc=$2 other
	other=$(fail_lines "$log"; grep -E '^stress-ng: error: ' "$log")
	if [ "$rc" = 0 ] && [ -z "$other" ]; then
		known_bug_seen "$log" && echo "note: the run named the known kernel bug: $(grep -o "$KNOWN_BUG_LINE.*" "$log" | cut -c1-160)"
		return 0
	fi
	cat "$log"
	echo "exit $rc (0 expected)${other:+ with: $other}"
	return 1
}

# expect_fork_zero LOG RC: the fork-zero racer alone: on a kernel with the
# known bug (the run names it seen) it fails through the bug only: exit 2,
# every fail: line names "$KNOWN_BUG", no other error line, no failed
# cycle; else it passes (expect_ok).  Sets KNOWN_BUG_SEEN to 1 or 0.
expect_fork_zero() {
	local log=$1 rc=$2 other
	KNOWN_BUG_SEEN=0
	known_bug_seen "$log" || { expect_ok "$log" "$rc"; return; }
	known_bug_possible || { cat "$log"; echo "the known bug named on a kernel without per-process ksm_zero_pages"; return 1; }
	other=$(fail_lines "$log" | grep -vF "$KNOWN_BUG"
		grep -E '^stress-ng: error: ' "$log" | grep -v 'terminated with an error, exit status=2 (stressor failed)$')
	if [ "$rc" != 2 ] || ! fail_lines "$log" >/dev/null || [ -n "$other" ] || [ "$(total "$log" failures)" != 0 ]; then
		cat "$log"; echo "fork-zero with the known bug: exit $rc, other lines: ${other:-none} (exit 2 through the bug only expected)"
		return 1
	fi
	KNOWN_BUG_SEEN=1
	echo "note: the known kernel bug fails the fork-zero racer run alone, as it must: $(fail_lines "$log" | wc -l) fail: line(s)"
	return 0
}
