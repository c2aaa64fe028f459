#!/bin/bash
# tests/it/cli/bad-input.sh: every malformed command line in
# tests/data/bad-input.tsv must exit 1 with exactly one stderr line naming the
# option, print nothing on stdout, and touch nothing: the KSM knob files
# in /sys/kernel/mm/ksm are byte-identical before and after, and (dummy
# runner) the stressor's init() was never called.
# BIN=<binary> overrides; default ./build/stress-ksm-unmerge, else the dummy runner.

cd "$(dirname "$0")/../../.." || exit 1
. tests/lib/checks.sh
TSV=${BAD_INPUT_TSV:-tests/data/bad-input.tsv}
DUMMY=tests/build/dummy-runner
if [ -n "$BIN" ]; then :;
elif [ -x ./build/stress-ksm-unmerge ]; then BIN=./build/stress-ksm-unmerge;
else BIN=$DUMMY; fi
[ -x "$BIN" ] || { echo "binary $BIN not built"; exit 1; }

tmp=$(mktemp -d /tmp/it-bad-input.XXXXXX)
trap 'rm -rf "$tmp"' EXIT

# knobs: the writable files of /sys/kernel/mm/ksm
snapshot() {
	local f
	for f in /sys/kernel/mm/ksm/*; do
		# knobs have an owner write bit (test -w is always true for root)
		[ -f "$f" ] && [ $(( 0$(stat -c %a "$f") & 0200 )) -ne 0 ] || continue
		printf '%s=' "$(basename "$f")"
		cat "$f" 2>/dev/null
	done
}

snapshot >"$tmp/before"
n=0
bad=0
while IFS=$'\t' read -r expect args; do
	case "$expect" in ''|'#'*) continue ;; esac
	n=$((n + 1))
	eval "argv=($args)"
	: >"$tmp/trace"
	DUMMY_TRACE="$tmp/trace" timeout 20 "$BIN" "${argv[@]}" >"$tmp/out" 2>"$tmp/err"
	rc=$?
	lines=$(wc -l <"$tmp/err")
	why=""
	[ "$rc" -eq 1 ] || why="exit $rc, expected 1"
	[ -z "$why" ] && [ "$lines" -ne 1 ] && why="$lines stderr lines, expected 1"
	needle=$expect
	case "$expect" in --??*) needle=${expect#--} ;; esac	# "option" or "--option"
	[ -z "$why" ] && ! grep -qF -- "$needle" "$tmp/err" && why="stderr does not name '$expect'"
	[ -z "$why" ] && [ -s "$tmp/out" ] && why="unexpected stdout: $(head -c 200 "$tmp/out")"
	[ -z "$why" ] && [ -s "$tmp/trace" ] && why="stressor init/run was called"
	if [ -n "$why" ]; then
		echo "BAD: '$args': $why; stderr: $(head -c 300 "$tmp/err")"
		bad=$((bad + 1))
	fi
done <"$TSV"
snapshot >"$tmp/after"

if ! cmp -s "$tmp/before" "$tmp/after"; then
	echo "KSM knobs changed:"; diff "$tmp/before" "$tmp/after"
	bad=$((bad + 1))
fi
if [ "$n" -lt 40 ]; then
	echo "only $n command lines in $TSV, need at least 40"
	exit 1
fi
if [ "$bad" -ne 0 ]; then
	echo "$bad of $n bad command lines misbehaved ($BIN)"
	exit 1
fi
# each command line was one check, the knob comparison one more
checked $((n + 1))
echo "all $n bad command lines rejected cleanly by $BIN"
checks_done
exit 0
