# tools/make/kernels-report.mk: the 0-day-style report across real kernels
#
# make kernels-report   3 LKP-style runs (--timeout 60 ... --ksm-unmerge 2) on
#                       Debian 6.1 and 6.12 under tools/kernels/ksm-qemu, one guest at a
#                       time, and 3 on this machine's kernel (under the KSM
#                       lock); rewrites the generated part of records/kernels.md
#                       and records/kernels-*.svg.  Takes about 12 minutes (TCG);
#                       not part of make test.
#                       KERNELS_REPORT_ARGS='--timeout 30' shortens the runs,
#                       '--compare-only' re-renders from build/kernels-report.

KERNELS_REPORT_ARGS ?=

.PHONY: kernels-report

kernels-report: qemu-tools static kernel-6.1 kernel-6.12 $(STRESSOR_BIN) $(KSM_REPORT)
	tools/kernels/kernels-report $(KERNELS_REPORT_ARGS)
