#!/bin/bash
# tests/it/klog/fuzz.sh: run the libFuzzer target for the kernel-log check
# (klog/klog-check.c) record parser, classifier and -K level rule for
# FUZZ_KLOG_TIME seconds (10).
# Skips (77) when clang cannot build -fsanitize=fuzzer binaries.
# Exit: 0 pass, 77 skip, else fail (a crash, leak or trapped invariant).

cd "$(dirname "$0")/../../.." || exit 2
TIME=${FUZZ_KLOG_TIME:-10}
. tests/lib/fuzz.sh
fuzz_require
fuzz_run fuzz-klog "$TIME" FUZZ_KLOG_TIME="$TIME"
checks_done
exit 0
