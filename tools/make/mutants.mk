# tools/make/mutants.mk: kernel mutation testing of the stressor (docs/mutants.md)
#
# make mutants                    build the small 6.12 kernel unmutated and
#                                 once per tools/kernels/mutants/*.patch (one object
#                                 directory, incremental), boot each under
#                                 tools/kernels/ksm-qemu (TCG) and write the kill
#                                 matrix: build/mutants/matrix.md
# make mutants MUTANT=my.patch    the same matrix for any other patch
#                                 against Debian's linux-source-6.12
#
# Not part of make test (about 90 minutes on a 2-vCPU machine).  Needs
# qemu-system-x86, busybox-static, cpio (the guests), flex, bison, bc,
# libelf-dev, libssl-dev (the kernels), liburing-dev (cow), rsync
# (headers_install).

MUTANTS_OUT ?= build/mutants
MUTANT ?=

.PHONY: mutants

mutants: qemu-tools static
	tools/kernels/ksm-mutants --out $(MUTANTS_OUT) $(if $(MUTANT),--mutant $(MUTANT))
