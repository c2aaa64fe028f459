#!/bin/bash
# tests/it/cycle/iface.sh: the interface self-test on the real kernel.  -v prints the
# whole table (5 interfaces); the replacement paths pass on this kernel when
# the other kernels' behaviour is faked: KPF_KSM on every anonymous page
# (Debian 6.12), read faults mapping private pages (pvm_no_zero_page=1,
# STRESS_KSM_UNMERGE_FAKE, tests only), ksm_stat with only ksm_rmap_items
# (6.1, through a fake /proc root); advisor_mode=scan-time is saved, set to
# none and restored.  Each run: exit 0, pages merged, no partial merge.
. "$(dirname "$0")/../../lib/lib.sh"
require_ksm

checks=0
# run <name> <expected line regex or -> <args...>: exit 0, merged, no partial merge
run() {
	local name=$1 want=$2 log=$TMPD/$1.log
	shift 2
	"$STRESSOR" --ksm-unmerge 2 -t 4 --metrics --verify --ksm-unmerge-bytes 16M "$@" > "$log" 2>&1
	local rc=$?
	check [ $rc = 0 ] || { cat "$log"; fail "$name: exit $rc"; }
	check [ "$(total "$log" pages-merged)" -gt 0 ] || { cat "$log"; fail "$name: nothing merged"; }
	check [ "$(total "$log" partial-merges)" = 0 ] || { cat "$log"; fail "$name: partial merges"; }
	if [ "$want" != - ]; then
		check grep -Eq "$want" "$log" || { cat "$log"; fail "$name: no line matching '$want'"; }
	fi
	grep -q "signals disagree" "$log" && echo "note: $name: $(grep -m1 'signals disagree' "$log")"
	checks=$((checks + 1))
	echo "ok $name"
}

before=$(knobs)

log=$TMPD/table.log
"$STRESSOR" --ksm-unmerge 1 -t 2 -v --ksm-unmerge-bytes 8M > "$log" 2>&1 || { cat "$log"; fail "-v run failed"; }
n=$(grep -Ec "ksm-unmerge: interface (zero-page|kpageflags-ksm|pfns|ksm_stat|cow_ksm): (trusted|unreliable)" "$log")
check [ "$n" = 5 ] || { cat "$log"; fail "-v printed $n interface lines, expected 5"; }
checks=$((checks + 1))
echo "ok -v table: $n interfaces"

STRESS_KSM_UNMERGE_FAKE=kpf-ksm-all run kpf-ksm-all "interface kpageflags-ksm: unreliable \(KPF_KSM set on a fresh anonymous page.*\); using pfn sharing" \
	--ksm-unmerge-pattern mixed --ksm-unmerge-method all
STRESS_KSM_UNMERGE_FAKE=no-zero-page run no-zero-page "interface zero-page: unreliable \(a read fault maps a private exclusive page.*\); using KPF_ZERO_PAGE per page" \
	--ksm-unmerge-pattern mixed --ksm-unmerge-method all

# 6.1's ksm_stat: only ksm_rmap_items; merging pages from ksm_merging_pages
old=$TMPD/proc61; mkdir -p "$old/self"
echo "ksm_rmap_items 0" > "$old/self/ksm_stat"
ln -s /proc/self/ksm_merging_pages "$old/self/ksm_merging_pages"
run ksm-stat-61 "interface ksm_stat: unreliable \(ksm_stat lacks ksm_merging_pages and ksm_zero_pages\); using /proc/self/ksm_merging_pages" \
	--ksm-unmerge-proc "$old" --ksm-unmerge-pattern same
check grep -q "merge waits read ksm_merging_pages" "$TMPD/ksm-stat-61.log" || fail "ksm-stat-61: merge waits do not read ksm_merging_pages"

# advisor_mode=scan-time refuses pages_to_scan writes: set to none, restored
if [ -w $KSM/advisor_mode ]; then
	saved=$(sed 's/.*\[\(.*\)\].*/\1/' $KSM/advisor_mode)
	trap 'echo "$saved" > $KSM/advisor_mode; rm -rf "$TMPD"' EXIT
	echo scan-time > $KSM/advisor_mode
	run advisor-scan-time - --ksm-unmerge-pattern same
	check grep -q '\[scan-time\]' $KSM/advisor_mode || fail "advisor_mode not restored to scan-time: $(cat $KSM/advisor_mode)"
	echo "$saved" > $KSM/advisor_mode
	echo "ok advisor_mode restored"
else
	echo "note: no advisor_mode (before 6.8): not tested"
fi
check [ "$(knobs)" = "$before" ] || fail "knobs changed: $before -> $(knobs)"
echo "$checks checks"
checks_done
exit 0
