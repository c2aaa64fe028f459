#!/bin/bash
# tests/it/cycle/fallbacks.sh: the counter fallbacks older kernels need, exercised on
# this kernel through --ksm-unmerge-proc (a fake /proc root): no per-process
# counters -> pagemap; only ksm_merging_pages (5.19-6.0) -> that file, and
# pagemap for zero pages.  Each run must still merge, verify and pass.
. "$(dirname "$0")/../../lib/lib.sh"
require_ksm

run() {	# run <root> <pattern> <expected source>
	local log=$TMPD/run.log
	"$STRESSOR" --ksm-unmerge 1 -t 3 --metrics --verify --ksm-unmerge-bytes 8M --ksm-unmerge-method madvise \
		--ksm-unmerge-proc "$1" --ksm-unmerge-pattern "$2" > "$log" 2>&1
	local rc=$?
	check [ $rc = 0 ] || { cat "$log"; fail "proc root $1 pattern $2: exit $rc"; }
	if [ "$3" = ksm_stat ]; then
		check grep -q "merge waits read" "$log" && { cat "$log"; fail "$2: fell back with full counters"; }
	else
		check grep -q "merge waits read $3" "$log" || { cat "$log"; fail "$2: expected source $3"; }
	fi
	merged=$(total "$log" pages-merged)
	check [ "$merged" -gt 0 ] || fail "proc root $1 pattern $2: nothing merged"
	echo "ok root=$1 pattern=$2 source=$3 merged=$merged"
}

empty=$TMPD/empty; mkdir -p "$empty/self"
partial=$TMPD/partial; mkdir -p "$partial/self"
ln -s /proc/self/ksm_merging_pages "$partial/self/ksm_merging_pages"
full=$TMPD/full; mkdir -p "$full/self"
ln -s /proc/self/ksm_stat "$full/self/ksm_stat"
ln -s /proc/self/ksm_merging_pages "$full/self/ksm_merging_pages"

before=$(knobs)
run "$empty" same pagemap
run "$empty" zero pagemap
run "$partial" same ksm_merging_pages
run "$partial" mixed pagemap
run "$full" mixed ksm_stat
check [ "$(knobs)" = "$before" ] || fail "knobs changed"
checks_done
exit 0
