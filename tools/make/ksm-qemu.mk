# tools/make/ksm-qemu.mk: run the stressor on other kernels under qemu
#
# make kernel-6.1   download + unpack Debian's 6.1.192 kernel into build/kernels/
# make kernel-6.12  the same for Debian's 6.12.117 kernel
# make test-qemu    boot them and run tests/it/qemu/*.sh through tests/run-tests
#                   (KSM_QEMU_TESTS=1; opt-in, not part of make test)
#
# See docs/ksm-qemu.md.  Needs qemu-system-x86, busybox-static and cpio
# (apt-get install), and the static stressor (make static).

KSM_QEMU_KERNELS ?= build/kernels
# the exact Debian image packages the qemu tests are written against
KSM_QEMU_PKG_6_1  ?= linux-image-6.1.0-57-amd64
KSM_QEMU_PKG_6_12 ?= linux-image-6.12.117+deb12-amd64

.PHONY: kernel-6.1 kernel-6.12 test-qemu qemu-tools

kernel-6.1:
	@tools/kernels/qemu/fetch-kernel.sh $(KSM_QEMU_KERNELS) $(KSM_QEMU_PKG_6_1)

kernel-6.12:
	@tools/kernels/qemu/fetch-kernel.sh $(KSM_QEMU_KERNELS) $(KSM_QEMU_PKG_6_12)

qemu-tools:
	@for t in qemu-system-x86_64:qemu-system-x86 busybox:busybox-static cpio:cpio; do \
		command -v $${t%%:*} >/dev/null || { echo "test-qemu needs $${t#*:}: apt-get install qemu-system-x86 busybox-static cpio"; exit 1; }; \
	done

test-qemu: qemu-tools static kernel-6.1 kernel-6.12
	KSM_QEMU_TESTS=1 tests/run-tests '^it/qemu/'
