#!/bin/bash
# tests/it/qemu/kernels.sh: the stressor's verdicts on real Debian kernels under qemu
# (tools/kernels/ksm-qemu), two runs per kernel:
#   plain:  --ksm-unmerge 1 -t 15 --verify --metrics (madvise cycles)
#   0-day:  the lkp line --timeout 60 --times --verify --metrics
#           --no-rand-seed --ksm-unmerge-method all --ksm-unmerge 2
# 6.12.117 (its /proc/kpageflags sets KPF_KSM on every anonymous page,
# 6.10..fix; it has the bug "KSM zero pages charged at fork"): the plain
# run passes; the 0-day run passes too and names that known bug (its start
# probe sees it; the fork-zero racer steps aside); the kpageflags bug is
# named by an "interface kpageflags-ksm: unreliable" line in both.
# 6.1.192: the plain run passes with partial-merges=0, kpageflags is not
# called unreliable, a 1G run (the mrelease racer: its victims' copies
# halve the cap) in a 256M cgroup v2 is capped by its memory.max and
# passes, the fork-zero racer skips for want of ksm_zero_pages (6.10), and
# the 0-day line passes or fails only through the
# known pre-6.2 unmerge bug (MADV_UNMERGEABLE leaves KSM pages in
# PROT_NONE/PROT_READ and uffd-wp protected PTEs: mprotect / uffd-wp racer
# lines, the KSM pages and shared pfns they leave, and the uffd-wp racer
# never seeing a page unshared; README "Other kernels").
# Every guest: a result came back, the guest kernel log has no
# WARNING/BUG/Oops.  Slow (about 4 minutes under TCG): KSM_QEMU_TESTS=1
# (make test-qemu).  QEMU_KERNELS="6.1 6.12" picks the kernels.
. "$(dirname "$0")/../../lib/lib.sh"
[ "${KSM_QEMU_TESTS:-0}" = 1 ] || skip "it/qemu/kernels.sh boots kernels under qemu (slow); set KSM_QEMU_TESTS=1 or run 'make test-qemu'"
STATIC=${KSM_QEMU_STRESSOR:-$TOP/build/stress-ksm-unmerge-static}
[ -x "$STATIC" ] || fail "no $STATIC: run 'make static'"
command -v qemu-system-x86_64 >/dev/null || fail "qemu-system-x86 not installed (make test-qemu says what to install)"
ZERO_DAY="--timeout 60 --times --verify --metrics --no-rand-seed --ksm-unmerge-method all --ksm-unmerge 2"
PLAIN="--ksm-unmerge 1 -t 15 --verify --metrics --ksm-unmerge-method madvise"
KPF_BUG="interface kpageflags-ksm: unreliable"
MEMCG='G=/sys/fs/cgroup/t; mount -t cgroup2 none /sys/fs/cgroup && echo +memory > /sys/fs/cgroup/cgroup.subtree_control &&
	mkdir $G && echo 256M > $G/memory.max && echo $$ > $G/cgroup.procs &&
	/stress-ksm-unmerge --ksm-unmerge 1 -t 20 --verify --ksm-unmerge-bytes 1G --ksm-unmerge-method mrelease'
# fail: lines the pre-6.2 unmerge bug explains on 6.1 (see the header)
KNOWN_61='mprotect racer: |uffd-wp racer: |racer (mprotect|uffd-wp): [0-9]+ verification failure|racer (mprotect|uffd-wp) ran [0-9]+ ops but never reached|is still a KSM page after unmerge|still shares pfn|failures reached, aborting'
errors=0

# expect DESC CMD...: one check; a failure is counted and the test goes on,
# so one run shows every kernel's state
expect() {
	local d=$1
	shift
	if check "$@"; then
		echo "ok   $d"
	else
		echo "FAIL $d"
		errors=$((errors + 1))
	fi
}

# guest VER NAME HARNESS-ARGS...: tools/kernels/ksm-qemu on kernel VER with
# HARNESS-ARGS ("-- stressor args" or "--init-cmd CMD"); output in
# $TMPD/VER-NAME/, the guest's output in $OUT, its status in $RC
guest() {
	local ver=$1 name=$2 kernel
	shift 2
	kernel=$(ls "$TOP"/build/kernels/linux-image-$ver.*/boot/vmlinuz-$ver.* 2>/dev/null | head -n 1)
	[ -n "$kernel" ] || fail "no $ver kernel in build/kernels: run 'make kernel-$ver'"
	D=$TMPD/$ver-$name
	"$TOP/tools/kernels/ksm-qemu" --kernel "$kernel" --stressor "$STATIC" --out "$D" --timeout 600 \
		"$@" > "$D.log" 2>&1
	RC=$?
	OUT=$D/stress.txt
	echo "     $ver $name: $(grep '^ksm-qemu: result:' "$D.log") ($(grep -o 'total [0-9.]*s, [a-z]*' "$D.log"))"
	grep -E ' fail: |interface |partial-merges|racer .* (skipped|NOT reached)' "$OUT" 2>/dev/null |
		sed 's/^stress-ng: [a-z]*: *\[[0-9]*\] //' | sort | uniq -c | head -n 20 | sed 's/^/     | /'
	expect "$ver $name: the guest returned a result (status $RC)" [ "$RC" -lt 124 -a -s "$OUT" ]
	expect "$ver $name: guest kernel log came back, no WARNING/BUG/Oops" \
		[ -s "$D/dmesg.txt" -a ! -e "$D/klog-matches.txt" ]
}

# passed: the run exited 0 with no fail: line and verified cycles
passed() {
	[ "$RC" = 0 ] && ! grep -q ' fail: ' "$OUT" && [ "$(total "$OUT" cycles)" -gt 0 ] 2>/dev/null
}

# known_61_only: exit 0, or exit 2 with every fail: line explained by the
# pre-6.2 unmerge bug
known_61_only() {
	[ "$RC" = 0 ] && return 0
	[ "$RC" = 2 ] && grep -q ' fail: ' "$OUT" && ! grep ' fail: ' "$OUT" | grep -Evq "$KNOWN_61"
}

for ver in ${QEMU_KERNELS:-6.1 6.12}; do
	guest "$ver" plain -- $PLAIN
	expect "$ver plain: exit 0, no fail: line, cycles verified" passed
	expect "$ver plain: partial-merges=0" [ "$(total "$OUT" partial-merges)" = 0 ]
	case $ver in
	6.12) expect "$ver plain: the kpageflags bug is named ('$KPF_BUG')" grep -q "$KPF_BUG" "$OUT";;
	6.1) expect "$ver plain: kpageflags is not called unreliable" eval '! grep -q "$KPF_BUG" "$OUT"';;
	esac
	# shellcheck disable=SC2086
	guest "$ver" 0-day -- $ZERO_DAY
	case $ver in
	6.12)
		expect "$ver 0-day: exit 0, no fail: line, cycles verified" passed
		expect "$ver 0-day: names the known kernel bug (6.12.117 has it)" known_bug_seen "$OUT"
		expect "$ver 0-day: the fork-zero racer steps aside" grep -q "racer fork-zero skipped: steps aside" "$OUT"
		expect "$ver 0-day: verified cycles" [ "$(total "$OUT" cycles)" -gt 0 ]
		expect "$ver 0-day: the kpageflags bug is named" grep -q "$KPF_BUG" "$OUT"
		;;
	6.1)
		expect "$ver 0-day: passes or fails only through the pre-6.2 unmerge bug" known_61_only
		expect "$ver 0-day: kpageflags is not called unreliable" eval '! grep -q "$KPF_BUG" "$OUT"'
		expect "$ver 0-day: fork-zero skips for want of the counter" \
			grep -q "racer fork-zero skipped: no ksm_zero_pages in ksm_stat" "$OUT"
		# 1G asked for in a 256M cgroup v2: the region is capped by memory.max
		guest "$ver" memcg --init-cmd "$MEMCG"
		expect "$ver memcg: exit 0, no fail: line, cycles verified" passed
		expect "$ver memcg: the region is capped by the cgroup's memory.max" \
			grep -q "capping .* the cgroup's memory.max room" "$OUT"
		;;
	esac
done
[ "$errors" = 0 ] || fail "$errors of $CHECKS checks failed (above)"
checks_done
exit 0
