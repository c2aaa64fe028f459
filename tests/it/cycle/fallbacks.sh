#!/bin/bash
# tests/it/cycle/fallbacks.sh: the counter fallbacks older kernels need,
# run on this kernel with their files hidden by tests/build/fakeproc.so (an
# LD_PRELOAD library built only for the tests; tests/lib/fakeproc.c):
#   ksm-stat-none                  Linux 5.19-6.0: no /proc/<pid>/ksm_stat,
#                                  no global ksm_zero_pages: merging pages
#                                  from /proc/self/ksm_merging_pages, KSM
#                                  zero pages from pagemap;
#   ksm-stat-none,ksm-merging-none before 5.19: no per-process counter at
#                                  all: both from pagemap.
# Each run (madvise cycles, --verify) names its source in the "interface
# ksm_stat: unreliable (...); using ..." line, exits 0 and merges (KSM zero
# pages counted where the pattern has them); an unfaked run names none.
. "$(dirname "$0")/../../lib/lib.sh"
require_ksm
FAKE=$TOP/tests/build/fakeproc.so
if [ ! -e "$FAKE" ]; then
	make -s -C "$TOP" tests/build/fakeproc.so >/dev/null 2>&1 || fail "cannot build $FAKE (make tests/build/fakeproc.so)"
fi

# run FAKE PATTERN WANT: a run with FAKEPROC=FAKE ("-" none); WANT is the
# expected "using ..." text of the ksm_stat line, "-" for no such line
run() {
	local fake=$1 pattern=$2 want=$3 log=$TMPD/run-$1-$2.log rc merged zero
	[ "$fake" = - ] && fake=
	FAKEPROC=$fake LD_PRELOAD=$FAKE "$STRESSOR" --ksm-unmerge 1 -t 3 --metrics --verify --ksm-unmerge-bytes 8M \
		--ksm-unmerge-method madvise --ksm-unmerge-pattern "$pattern" >"$log" 2>&1
	rc=$?
	check [ $rc = 0 ] || { cat "$log"; fail "fake '$fake' pattern $pattern: exit $rc"; }
	if [ "$want" = - ]; then
		check grep -q "interface ksm_stat: unreliable" "$log" && { cat "$log"; fail "$pattern: a fallback with every counter"; }
	else
		check grep -qF "interface ksm_stat: unreliable" "$log" && grep -qF "; using $want" "$log" ||
			{ cat "$log"; fail "fake '$fake' pattern $pattern: expected the source '$want'"; }
	fi
	merged=$(total "$log" pages-merged)
	zero=$(total "$log" zero-pages)
	check [ "$merged" -gt 0 ] || fail "fake '$fake' pattern $pattern: nothing merged"
	case $pattern in
	zero) check [ "$zero" = "$merged" ] || fail "zero: $zero of $merged merged pages counted as KSM zero pages";;
	mixed) check [ "$zero" -gt 0 ] && [ "$zero" -lt "$merged" ] || fail "mixed: $zero KSM zero pages of $merged";;
	same) check [ "$zero" = 0 ] || fail "same: $zero KSM zero pages";;
	esac
	echo "ok fake '$fake' pattern $pattern: merged $merged, zero $zero; $(grep -o 'interface ksm_stat: .*' "$log" || echo 'no ksm_stat line')"
}

before=$(knobs)
run ksm-stat-none same "/proc/self/ksm_merging_pages for merging pages, pagemap for KSM zero pages"
run ksm-stat-none mixed "/proc/self/ksm_merging_pages for merging pages, pagemap for KSM zero pages"
run ksm-stat-none,ksm-merging-none same "pagemap for merging pages, pagemap for KSM zero pages"
run ksm-stat-none,ksm-merging-none zero "pagemap for merging pages, pagemap for KSM zero pages"
run ksm-stat-none,ksm-merging-none mixed "pagemap for merging pages, pagemap for KSM zero pages"
run - mixed -
check [ "$(knobs)" = "$before" ] || fail "knobs changed"
checks_done
exit 0
