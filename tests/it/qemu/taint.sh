#!/bin/bash
# tests/it/qemu/taint.sh: a taint bit that appears during a run fails it (exit 2,
# "kernel taint: U ... set during the run").  A taint bit can never be
# cleared, so this sets it inside a qemu guest (Debian's 6.1 kernel), not on
# the host.  Opt-in like it/qemu/boot.sh: KSM_QEMU_TESTS=1 (make test-qemu).
. "$(dirname "$0")/../../lib/lib.sh"
[ "${KSM_QEMU_TESTS:-0}" = 1 ] || skip "it/qemu/taint.sh boots a kernel under qemu (slow); set KSM_QEMU_TESTS=1 or run 'make test-qemu'"
KERNEL=$(ls "$TOP"/build/kernels/linux-image-6.1.*/boot/vmlinuz-6.1.* 2>/dev/null | head -1)
[ -n "$KERNEL" ] || skip "no kernel unpacked (make kernel-6.1)"
[ -x "$TOP/stress-ksm-unmerge-static" ] || skip "no static stressor (make static)"
command -v qemu-system-x86_64 >/dev/null || skip "qemu-system-x86 not installed"

log=$TMPD/qemu.log
"$TOP/tools/ksm-qemu" --kernel "$KERNEL" --out "$TMPD/out" --init-cmd \
	'mkdir -p /run; (sleep 8; echo 64 > /proc/sys/kernel/tainted) & /stress-ksm-unmerge --ksm-unmerge 1 -t 15 --ksm-unmerge-bytes 8M --ksm-unmerge-method madvise --metrics-brief; echo "stressor exit $?"' \
	> "$log" 2>&1 || { cat "$log"; fail "ksm-qemu failed"; }
check grep -q "kernel taint: U (0x40) set during the run" "$log" || { cat "$log"; fail "taint not reported"; }
check grep -q "stressor exit 2" "$log" || { cat "$log"; fail "run did not fail with exit 2"; }
check grep -q "kernel-log key: taint:U" "$log" || { cat "$log"; fail "no taint key in the summary"; }
echo "ok: taint U set in the guest during the run -> exit 2, key taint:U"
checks_done
exit 0
