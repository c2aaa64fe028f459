# tests/lib.sh: shared helpers for the integration scripts (source it).
# Exit codes: 0 pass, 77 skip (reason on stdout), anything else fail.

TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
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
	pgrep -f "stress-ksm-unmerge|stress-ng-ksm-unmerge" | grep -v "^$$\$" || true
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
