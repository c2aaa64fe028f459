#!/bin/bash
# tests/it/qemu/taint.sh: a kernel-warning taint bit (W, 0x200) that appears
# during a run fails it (exit 2, the kernel-log check's taint rule, the one
# the stress-ng core patch carries: "klog-check: kernel taint: W (0x200) set
# during the run, no log record seen"), while a bit it does not judge (U,
# 0x40: a user's taint) alone does not.  A taint bit can never be cleared,
# so this sets them inside a qemu guest (Debian's 6.1 kernel), not on the
# host.  Opt-in like it/qemu/boot.sh: KSM_QEMU_TESTS=1 (make test-qemu).
. "$(dirname "$0")/../../lib/lib.sh"
[ "${KSM_QEMU_TESTS:-0}" = 1 ] || skip "it/qemu/taint.sh boots a kernel under qemu (slow); set KSM_QEMU_TESTS=1 or run 'make test-qemu'"
KERNEL=$(ls "$TOP"/build/kernels/linux-image-6.1.*/boot/vmlinuz-6.1.* 2>/dev/null | head -1)
[ -n "$KERNEL" ] || skip "no kernel unpacked (make kernel-6.1)"
[ -x "$TOP/build/stress-ksm-unmerge-static" ] || skip "no static stressor (make static)"
command -v qemu-system-x86_64 >/dev/null || skip "qemu-system-x86 not installed"

log=$TMPD/qemu.log
"$TOP/tools/kernels/ksm-qemu" --kernel "$KERNEL" --out "$TMPD/out" --init-cmd \
	'mkdir -p /run; R="/stress-ksm-unmerge --ksm-unmerge 1 -t 12 --ksm-unmerge-bytes 8M --ksm-unmerge-method madvise --metrics-brief"
	(sleep 6; echo 64 > /proc/sys/kernel/tainted) & $R; echo "stressor exit $? (U)"
	(sleep 6; echo 512 > /proc/sys/kernel/tainted) & $R; echo "stressor exit $? (W)"' \
	> "$log" 2>&1 || { cat "$log"; fail "ksm-qemu failed"; }
check grep -q "stressor exit 0 (U)" "$log" || { cat "$log"; fail "a user taint (U) alone failed the run"; }
check grep -q "klog-check: kernel taint: W (0x200) set during the run" "$log" ||
	{ cat "$log"; fail "taint W not reported"; }
check grep -q "stressor exit 2 (W)" "$log" || { cat "$log"; fail "run did not fail with exit 2"; }
echo "ok: taint U alone passes; taint W set in the guest during the run -> exit 2, named"
checks_done
exit 0
