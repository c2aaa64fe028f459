# tools/make/upstream.mk: the kernel series in docs/upstream/ksm-fork-zero-pages/
# and its proof under tools/kernels/ksm-qemu (docs/upstream/README.md)
#
# make upstream-kernels     two small 6.12.118 kernels from Debian's
#                           linux-source-6.12, same config: unpatched and with
#                           the series (build/upstream/obj-{unpatched,patched}/;
#                           15-25 minutes each on 2 vCPUs the first time)
# make upstream-selftests   the static test programs: the kernel's
#                           ksm_functional_tests with and without the series'
#                           selftest patches, and the two programs of the
#                           directory (build/upstream/selftests/)
# make upstream-checkpatch  the series signed off as the sender would, through
#                           scripts/checkpatch.pl --strict
# make upstream-proof       every program on both builds and Debian's 6.12.117
#                           and 6.1.192 under tools/kernels/ksm-qemu; fails unless
#                           each fails exactly the tests it must; tables in
#                           build/upstream/proof/summary.md.
#                           UPSTREAM_PROOF_ARGS='--runs 3 --host' repeats the
#                           guests and adds this machine's kernel.
#
# Not part of make test.

UPSTREAM_CASE       := docs/upstream/ksm-fork-zero-pages
UPSTREAM_PATCHES    := $(filter-out %/0000-cover-letter.patch,$(sort $(wildcard $(UPSTREAM_CASE)/0*.patch)))
UPSTREAM_PROOF_ARGS ?=

.PHONY: upstream-kernels upstream-kernel-unpatched upstream-kernel-patched \
	upstream-selftests upstream-checkpatch upstream-proof

upstream-kernels: upstream-kernel-unpatched upstream-kernel-patched

upstream-kernel-unpatched:
	tools/kernels/upstream/build-kernel.sh unpatched

upstream-kernel-patched:
	tools/kernels/upstream/build-kernel.sh patched $(UPSTREAM_PATCHES)

# the pristine tree comes with the kernels (build-kernel.sh unpacks it)
upstream-selftests: upstream-kernel-unpatched
	tools/kernels/upstream/selftests.sh

upstream-checkpatch: upstream-kernel-unpatched
	tools/kernels/upstream/checkpatch.sh

upstream-proof: qemu-tools upstream-kernels upstream-selftests kernel-6.1 kernel-6.12
	tools/kernels/upstream/proof.sh $(UPSTREAM_PROOF_ARGS)
