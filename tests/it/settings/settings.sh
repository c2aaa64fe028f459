#!/bin/bash
# tests/it/settings/settings.sh: a short all-racers --verify run (2 instances, 5 s, 16M)
# under each setting real machines have: THP always and never,
# advisor_mode=scan-time, vm.overcommit_memory=2, kernel.io_uring_disabled=2,
# a cgroup v2 memory cgroup with memory.max 256M, the run's directory on
# tmpfs, one CPU (taskset), a non-root user.  Each setting passes (exit 0
# and no fail: line: expect_ok; every racer of the table reached or
# skipped by racer_skip_ok's rule, KSM knobs as before) or skips with a
# reason (the setting does not exist
# here, or the stressor itself skipped with its reason, as a non-root user
# must be told).  Every setting changed is restored (trap), also on failure.
. "$(dirname "$0")/../../lib/lib.sh"
require_ksm
private_bin
chmod 755 "$TMPD" "$BIN"
RUNDIR=$TMPD/cwd
mkdir -p "$RUNDIR" && chmod 1777 "$RUNDIR" || fail "cannot create $RUNDIR"
THP=/sys/kernel/mm/transparent_hugepage/enabled
RESTORE=()
CGDIR=""
errors=0
results=""

# current FILE: a sysfs/proc setting's value (the [selected] word if any)
current() {
	sed 's/.*\[\(.*\)\].*/\1/' "$1"
}

# set_setting FILE VALUE: save FILE's value for restore_all, then write VALUE
set_setting() {
	RESTORE+=("$1=$(current "$1")")
	echo "$2" > "$1"
}

# restore_all: put every saved setting back, remove the test cgroup
restore_all() {
	local i e
	for ((i = ${#RESTORE[@]} - 1; i >= 0; i--)); do
		e=${RESTORE[$i]}
		echo "${e#*=}" > "${e%%=*}" 2>/dev/null || echo "WARNING: could not restore ${e%%=*} to '${e#*=}'"
	done
	RESTORE=()
	[ -n "$CGDIR" ] && [ -d "$CGDIR" ] && rmdir "$CGDIR" 2>/dev/null
	CGDIR=""
}
trap 'restore_all; umount "$RUNDIR" 2>/dev/null; rm -rf "$TMPD"' EXIT

# note NAME RESULT: record one setting's result line
note() {
	echo "$1: $2"
	results+="$1: $2"$'\n'
}

# run_all NAME [PREFIX...]: the all-racers run under PREFIX (taskset, setpriv,
# a cgroup shell), from $RUNDIR; judge it
run_all() {
	local name=$1 log=$TMPD/$1.log rc r line why before
	shift
	before=$(knobs)
	(cd "$RUNDIR" && exec "$@" "$BIN" --ksm-unmerge 2 -t 5 --verify --metrics \
		--ksm-unmerge-method all --ksm-unmerge-bytes 16M) > "$log" 2>&1
	rc=$?
	checked
	if [ "$(knobs)" != "$before" ]; then
		note "$name" "FAIL: KSM knobs '$before' -> '$(knobs)'"
		errors=$((errors + 1))
		return
	fi
	checked
	if ! expect_ok "$log" "$rc" >"$TMPD/$name.why"; then
		grep -E ' fail: | error: ' "$log" | head -n 5 | sed 's/^/    | /'
		note "$name" "FAIL: exit $rc: $(tail -n 1 "$TMPD/$name.why")"
		errors=$((errors + 1))
		return
	fi
	if grep -q 'skipped: 2: ksm-unmerge' "$log"; then
		note "$name" "skip: the stressor skipped: $(grep -m1 -o 'ksm-unmerge stressor will be skipped.*\|ksm-unmerge: .*skipp.*' "$log")"
		return
	fi
	for r in $(racer_names); do
		checked
		line=$(grep -o "racer $r \(skipped\|reached\|NOT reached\).*" "$log" | head -n 1)
		case $line in
		"racer $r reached"*) ;;
		"racer $r skipped"*)
			why=$(racer_skip_ok "$line" "$r" "$log") ||
				{ note "$name" "FAIL: $line: $why"; errors=$((errors + 1)); return; };;
		*) note "$name" "FAIL: racer $r: '${line:-no line}'"; errors=$((errors + 1)); return;;
		esac
	done
	note "$name" "pass ($(grep -c 'racer .* reached' "$log") racers reached, cycles=$(total "$log" cycles)$(known_bug_seen "$log" && echo ", the known kernel bug named"))$(grep -o 'sparse racer: .*cut it.*' "$log" | head -n 1 | sed 's/^/; /')"
}

# THP always / never
if [ -w $THP ]; then
	for v in always never; do
		set_setting $THP $v
		run_all thp-$v
		restore_all
	done
else
	note thp "skip: $THP missing or read-only"
fi

# KSM advisor (6.8+): in scan-time mode pages_to_scan writes are refused
if [ -w "$KSM/advisor_mode" ]; then
	set_setting "$KSM/advisor_mode" scan-time
	run_all advisor-scan-time
	checked
	[ "$(current "$KSM/advisor_mode")" = scan-time ] ||
		{ note advisor-scan-time "FAIL: the run left advisor_mode '$(current "$KSM/advisor_mode")'"; errors=$((errors + 1)); }
	restore_all
else
	note advisor-scan-time "skip: no $KSM/advisor_mode (KSM advisor needs Linux 6.8)"
fi

# strict overcommit: MAP_NORESERVE is ignored, the sparse range is charged
set_setting /proc/sys/vm/overcommit_memory 2
run_all overcommit-2
restore_all

if [ -w /proc/sys/kernel/io_uring_disabled ]; then
	set_setting /proc/sys/kernel/io_uring_disabled 2
	run_all io-uring-disabled-2
	restore_all
else
	note io-uring-disabled-2 "skip: no /proc/sys/kernel/io_uring_disabled (Linux 6.6+)"
fi

# a cgroup v2 memory cgroup of 256M (the stressor reads /sys/fs/cgroup)
if [ -f /sys/fs/cgroup/cgroup.controllers ] && grep -qw memory /sys/fs/cgroup/cgroup.controllers; then
	grep -qw memory /sys/fs/cgroup/cgroup.subtree_control ||
		set_setting /sys/fs/cgroup/cgroup.subtree_control +memory
	CGDIR=/sys/fs/cgroup/ksm-it-settings.$$
	mkdir "$CGDIR" && echo 256M > "$CGDIR/memory.max" || fail "cannot create cgroup $CGDIR"
	run_all memcg-256M sh -c 'echo $$ > '"$CGDIR"'/cgroup.procs && exec "$@"' sh
	# 1G asked for: the region must be capped by the cgroup, and still pass
	(exec sh -c 'echo $$ > '"$CGDIR"'/cgroup.procs && exec "$@"' sh "$BIN" --ksm-unmerge 1 -t 3 \
		--verify --ksm-unmerge-bytes 1G) > "$TMPD/memcg-1G.log" 2>&1
	rc=$?
	checked
	if expect_ok "$TMPD/memcg-1G.log" "$rc" >/dev/null && grep -q "the cgroup's memory.max room" "$TMPD/memcg-1G.log"; then
		note memcg-256M-1G "pass ($(grep -o 'capping .*' "$TMPD/memcg-1G.log"))"
	else
		note memcg-256M-1G "FAIL: exit $rc, $(grep -o 'capping .*' "$TMPD/memcg-1G.log" || echo 'no capping line')"
		errors=$((errors + 1))
	fi
	restore_all
else
	note memcg-256M "skip: no cgroup v2 memory controller at /sys/fs/cgroup ($(awk '$3 == "cgroup2" {print "cgroup2 at " $2}' /proc/mounts | head -n 1 || true); memory on v1 here)"
fi

# the run's directory on tmpfs (O_DIRECT there goes through the page cache)
mount -t tmpfs -o size=64M,mode=1777 ksm-it-tmpfs "$RUNDIR" || fail "cannot mount tmpfs on $RUNDIR"
run_all cwd-tmpfs
umount "$RUNDIR" || fail "cannot unmount the tmpfs on $RUNDIR"

run_all one-cpu taskset -c 0

if id nobody >/dev/null 2>&1; then
	run_all non-root setpriv --reuid=nobody --regid=nogroup --clear-groups
else
	note non-root "skip: no user nobody"
fi

echo "--- settings:"
printf '%s' "$results"
[ "$errors" = 0 ] || fail "$errors setting(s) failed (above)"
checks_done
exit 0
