# tools/upstream.mk: the kernel bugs we report upstream, their reproducer,
# and the proof that our patches fix them (docs/upstream/)
#
# make upstream-repro    the static ksm_fork_zero_pages reproducer
#                        (build/upstream/ksm_fork_zero_pages)
# make upstream-kernels  two small kernels from Debian's linux-source-6.12
#                        (6.12.117), same config: unpatched and with
#                        docs/upstream/ksm-fork-zero-pages/*.patch
#                        (build/upstream/obj-{unpatched,patched}/; about
#                        8 minutes each on 2 vCPUs the first time)
# make upstream-proof    the reproducer on this machine (under the KSM lock)
#                        and, under tools/ksm-qemu, on Debian 6.12.117 and
#                        6.1.192 and both builds; fails unless each gives its
#                        expected exit status; table in
#                        build/upstream/proof/summary.md.
#                        UPSTREAM_PROOF_ARGS='--runs 3 --no-host' repeats the
#                        guests and leaves this machine's KSM alone.
#
# See docs/upstream/README.md.  Not part of make test.

UPSTREAM_DIR       ?= build/upstream
UPSTREAM_CASE      := docs/upstream/ksm-fork-zero-pages
UPSTREAM_CC        ?= gcc
UPSTREAM_REPRO     := $(UPSTREAM_DIR)/ksm_fork_zero_pages
UPSTREAM_PATCHES   := $(sort $(wildcard $(UPSTREAM_CASE)/*.patch))
UPSTREAM_PROOF_ARGS ?=

.PHONY: upstream-repro upstream-kernels upstream-kernel-unpatched \
	upstream-kernel-patched upstream-proof

upstream-repro: $(UPSTREAM_REPRO)

# plain gcc, static (it runs in tools/ksm-qemu's initramfs)
$(UPSTREAM_REPRO): $(UPSTREAM_CASE)/ksm_fork_zero_pages.c
	@mkdir -p $(UPSTREAM_DIR)
	$(UPSTREAM_CC) -static -O2 -Wall -Wextra -Werror -pthread -o $@ $<

upstream-kernels: upstream-kernel-unpatched upstream-kernel-patched

upstream-kernel-unpatched:
	tools/upstream/build-kernel.sh unpatched

upstream-kernel-patched:
	tools/upstream/build-kernel.sh patched $(UPSTREAM_PATCHES)

upstream-proof: qemu-tools upstream-repro upstream-kernels kernel-6.1 kernel-6.12
	tools/upstream/proof.sh $(UPSTREAM_PROOF_ARGS)
