# tools/ksm-qemu.mk: run the stressor on other kernels under qemu
#
# make kernel-6.1   download + unpack Debian 12's kernel into build/kernels/
# make test-qemu    boot it and run tests/it-qemu-*.sh (KSM_QEMU_TESTS=1)
#
# See docs/ksm-qemu.md.  Needs qemu-system-x86, busybox-static and cpio
# (apt-get install), and the static stressor (make static).

KSM_QEMU_KERNELS ?= build/kernels

.PHONY: kernel-6.1 test-qemu

kernel-6.1:
	@tools/qemu/fetch-kernel.sh $(KSM_QEMU_KERNELS) linux-image-amd64

test-qemu: static kernel-6.1
	KSM_QEMU_TESTS=1 tests/it-qemu-badinput.sh
	KSM_QEMU_TESTS=1 tests/it-qemu-boot.sh
	KSM_QEMU_TESTS=1 tests/it-qemu-taint.sh
