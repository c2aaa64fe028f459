#!/bin/bash
# tests/it/cycle/iface.sh: the interface self-test on the real kernel.  -v
# prints the whole table (5 interfaces, each trusted here); the replacement
# paths pass real cycles on this kernel when other kernels' behaviour is
# faked by tests/build/fakeproc.so (an LD_PRELOAD library built only for the
# tests, tests/lib/fakeproc.c; the stressor has no test hook), each as the
# recorded dumps of tests/data/kernel-signals/ show it:
#   kpf-ksm-all   KPF_KSM on every anonymous page (Debian 6.12.117)
#   no-zero-page  the self-test's read faults map private pages
#                 (pvm_no_zero_page=1)
#   ksm-stat-61   ksm_stat with only ksm_rmap_items, no global
#                 ksm_zero_pages (Debian 6.1.192): merging pages read from
#                 /proc/self/ksm_merging_pages, the fork-zero racer and the
#                 global zero-page check skip with their reason
# Each faked run prints its "interface ... unreliable" line, exits 0
# (expect_ok), merges
# pages, fully in at least half its cycles (every racer runs); the
# unfaked interfaces stay trusted.
# advisor_mode=scan-time is saved, set to none and restored.
. "$(dirname "$0")/../../lib/lib.sh"
require_ksm
FAKE=$TOP/tests/build/fakeproc.so
if [ ! -e "$FAKE" ]; then
	make -s -C "$TOP" tests/build/fakeproc.so >/dev/null 2>&1 || fail "cannot build $FAKE (make tests/build/fakeproc.so)"
fi

# run NAME FAKE WANT ARGS...: the stressor under FAKEPROC=FAKE ("-" none);
# exit 0, merged, no partial merge (with every racer: in
# at most half the cycles), a line matching WANT ("-" none)
run() {
	local name=$1 fake=$2 want=$3 log=$TMPD/$1.log rc partial
	shift 3
	if [ "$fake" = - ]; then
		"$STRESSOR" --ksm-unmerge 2 -t 4 --metrics --verify --ksm-unmerge-bytes 16M "$@" >"$log" 2>&1
	else
		FAKEPROC=$fake LD_PRELOAD=$FAKE "$STRESSOR" --ksm-unmerge 2 -t 4 --metrics --verify \
			--ksm-unmerge-bytes 16M "$@" >"$log" 2>&1
	fi
	rc=$?
	checked; expect_ok "$log" "$rc" || fail "$name: see above"
	check [ "$(total "$log" pages-merged)" -gt 0 ] || { cat "$log"; fail "$name: nothing merged"; }
	check [ "$(total "$log" cycles)" -gt 0 ] || { cat "$log"; fail "$name: no verified cycle"; }
	# a racer can keep a few pages from merging through ksmd's passes (a
	# partial merge, which the stressor allows while racers run; it failed
	# a clean-clone run once); an interface that miscounts makes every
	# cycle partial
	partial=$(total "$log" partial-merges)
	case " $* " in *" --ksm-unmerge-method all "*) ;; *) check [ "$partial" = 0 ] ||
		{ cat "$log"; fail "$name: partial merges with no racer"; } ;; esac
	check [ $(( 2 * partial )) -le "$(total "$log" cycles)" ] ||
		{ cat "$log"; fail "$name: partial merges in more than half the cycles"; }
	if [ "$want" != - ]; then
		check grep -Eq "$want" "$log" || { cat "$log"; fail "$name: no line matching '$want'"; }
	fi
	grep -q "signals disagree" "$log" && echo "note: $name: $(grep -m1 'signals disagree' "$log")"
	echo "ok $name: exit $rc, cycles $(total "$log" cycles), partial $partial, merged $(total "$log" pages-merged)$(grep -o 'interface [a-z_-]*: unreliable' "$log" | sed 's/^/; /' | tr '\n' ' ')"
}

# unreliable LOG: the interfaces LOG calls unreliable, sorted, space separated
unreliable() {
	grep -o 'interface [a-z_-]*: unreliable' "$1" | awk '{ print $2 }' | tr -d : | sort | tr '\n' ' '
}

before=$(knobs)

# the table: five interfaces, all trusted on this kernel unfaked
log=$TMPD/table.log
"$STRESSOR" --ksm-unmerge 1 -t 2 -v --ksm-unmerge-bytes 8M --ksm-unmerge-method madvise >"$log" 2>&1 ||
	{ cat "$log"; fail "-v run failed"; }
n=$(grep -Ec "ksm-unmerge: interface (zero-page|kpageflags-ksm|pfns|ksm_stat|cow_ksm): (trusted|unreliable)" "$log")
check [ "$n" = 5 ] || { cat "$log"; fail "-v printed $n interface lines, expected 5"; }
if grep -q 'pvm_no_zero_page=1' /proc/cmdline; then
	echo "note: booted with pvm_no_zero_page=1: zero-page is unreliable unfaked"
	check [ "$(unreliable "$log")" = "zero-page " ] || { cat "$log"; fail "unfaked: unreliable '$(unreliable "$log")'"; }
else
	check [ -z "$(unreliable "$log")" ] || { cat "$log"; fail "unfaked: unreliable '$(unreliable "$log")'"; }
fi
echo "ok -v table: $n interfaces, unreliable here: '$(unreliable "$log")'"

# the library is in effect only where asked: an unfaked run under it is the same
FAKEPROC="" LD_PRELOAD=$FAKE "$STRESSOR" --ksm-unmerge 1 -t 2 -v --ksm-unmerge-bytes 8M --ksm-unmerge-method madvise \
	>"$TMPD/nofake.log" 2>&1 || { cat "$TMPD/nofake.log"; fail "run under the library with no fake failed"; }
check [ "$(unreliable "$TMPD/nofake.log")" = "$(unreliable "$log")" ] ||
	fail "the library with no fake changed the table: '$(unreliable "$TMPD/nofake.log")'"

# 6.12: KPF_KSM on every anonymous page; every racer, pattern mixed
run kpf-ksm-all kpf-ksm-all "interface kpageflags-ksm: unreliable \(KPF_KSM set on a fresh anonymous page .*6.10-6.12 stable_page_flags\(\) bug\); using pfn sharing" \
	--ksm-unmerge-pattern mixed --ksm-unmerge-method all
check [ "$(unreliable "$TMPD/kpf-ksm-all.log")" = "kpageflags-ksm " ] ||
	fail "kpf-ksm-all: unreliable '$(unreliable "$TMPD/kpf-ksm-all.log")', expected kpageflags-ksm alone"

# pvm_no_zero_page=1: a read fault maps a private page; every racer, pattern mixed
run no-zero-page no-zero-page "interface zero-page: unreliable \(a read fault maps a private exclusive page .*pvm_no_zero_page=1\?\); using KPF_ZERO_PAGE per page" \
	--ksm-unmerge-pattern mixed --ksm-unmerge-method all
check [ "$(unreliable "$TMPD/no-zero-page.log")" = "zero-page " ] ||
	fail "no-zero-page: unreliable '$(unreliable "$TMPD/no-zero-page.log")', expected zero-page alone"

# 6.1: ksm_stat has only ksm_rmap_items, no global ksm_zero_pages; pattern
# zero so KSM zero pages must be counted from pagemap
run ksm-stat-61 ksm-stat-61 "interface ksm_stat: unreliable \(ksm_stat lacks ksm_merging_pages and ksm_zero_pages\); using /proc/self/ksm_merging_pages for merging pages, pagemap for KSM zero pages" \
	--ksm-unmerge-pattern mixed --ksm-unmerge-method all
log=$TMPD/ksm-stat-61.log
check [ "$(unreliable "$log")" = "ksm_stat " ] || fail "ksm-stat-61: unreliable '$(unreliable "$log")', expected ksm_stat alone"
check grep -q "racer fork-zero skipped: no ksm_zero_pages in ksm_stat" "$log" ||
	{ grep racer "$log"; fail "ksm-stat-61: the fork-zero racer did not skip for want of the counter"; }
checked; ! grep -q "$KNOWN_BUG" "$log" || fail "ksm-stat-61: a zero-page verdict without the counters"
check [ "$(total "$log" zero-pages)" -gt 0 ] || fail "ksm-stat-61: no KSM zero page counted from pagemap"

# advisor_mode=scan-time refuses pages_to_scan writes: set to none, restored
if [ -w $KSM/advisor_mode ]; then
	saved=$(sed 's/.*\[\(.*\)\].*/\1/' $KSM/advisor_mode)
	trap 'echo "$saved" > $KSM/advisor_mode; rm -rf "$TMPD"' EXIT
	echo scan-time > $KSM/advisor_mode
	run advisor-scan-time - - --ksm-unmerge-pattern same --ksm-unmerge-method madvise
	check grep -q '\[scan-time\]' $KSM/advisor_mode || fail "advisor_mode not restored to scan-time: $(cat $KSM/advisor_mode)"
	echo "$saved" > $KSM/advisor_mode
	echo "ok advisor_mode restored"
else
	echo "note: no advisor_mode (before 6.8): not tested"
fi
check [ "$(knobs)" = "$before" ] || fail "knobs changed: $before -> $(knobs)"
checks_done
exit 0
