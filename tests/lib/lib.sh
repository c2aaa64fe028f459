# tests/lib/lib.sh: shared helpers for the integration scripts (source it).
# Exit codes: 0 pass, 77 skip (reason on stdout), anything else fail.

TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
. "$(dirname "${BASH_SOURCE[0]}")/checks.sh"
STRESSOR=${STRESSOR:-$TOP/stress-ksm-unmerge}
KSM=/sys/kernel/mm/ksm
KNOBS="run pages_to_scan sleep_millisecs use_zero_pages max_page_sharing merge_across_nodes smart_scan advisor_mode"
TMPD=$(mktemp -d /tmp/ksm-it.XXXXXX)
trap 'rm -rf "$TMPD"' EXIT

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

# field: value of key=N in the stressor's totals line of file $1
total() {
	grep -o "[,: ]$2=[0-9]*" "$1" | head -1 | sed 's/.*=//'
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

# fds: "pid:count" for each instance (child of the runner $1)
fds() {
	local p
	for p in $(pgrep -P "$1"); do
		echo "$p:$(ls "/proc/$p/fd" 2>/dev/null | wc -l)"
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
	esac
	return 0
}

# racer_skip_ok LINE RACER: succeed when LINE ("racer R skipped: ...") is a
# skip a test may accept: a supported() refusal (not "start failed") on a
# kernel that lacks the racer's interface; else print why it is a failure
racer_skip_ok() {
	local why
	case $1 in
	*"skipped: start failed"*) echo "a start() failure is a failure, not a skip"; return 1;;
	esac
	if why=$(racer_interface "$2"); then
		echo "this kernel has what racer $2 needs, so the skip is a failure"
		return 1
	fi
	echo "$why"
	return 0
}

# racer_list [BINARY]: the stressor's racer table, one racer a line: "name
# evidence-name built" or "name evidence-name not built: reason" (asks the
# binary, default $STRESSOR: the table is the only list of racers)
racer_list() {
	local out
	out=$("${1:-$STRESSOR}" --ksm-unmerge-method which) && [ -n "$out" ] ||
		fail "${1:-$STRESSOR} --ksm-unmerge-method which listed no racers"
	echo "$out"
}

# racer_evidence RACER [BINARY]: the name of racer RACER's evidence counter
racer_evidence() {
	racer_list "$2" | awk -v r="$1" '$1 == r { print $2; found = 1 } END { exit !found }'
}

# racers_check LOG: every racer "reached" with evidence in LOG, or "skipped:"
# with a reason a test may accept (racer_skip_ok); fails otherwise.  Sets
# RACERS_REACHED.
racers_check() {
	local r line why
	RACERS_REACHED=0
	for r in $(racer_list | awk '{ print $1 }'); do
		if grep -q "racer $r skipped: ." "$1"; then
			line=$(grep -o "racer $r skipped:.*" "$1" | head -1)
			checked
			why=$(racer_skip_ok "$line" "$r") || { grep "racer" "$1"; fail "$line: $why"; }
			echo "note: $line ($why)"
			continue
		fi
		check grep -q "racer $r reached: ops=[1-9][0-9]* [a-z-]*=[1-9]" "$1" ||
			{ grep "racer" "$1"; fail "racer $r not reached"; }
		RACERS_REACHED=$((RACERS_REACHED + 1))
	done
}
