# bench/bench.mk: `make bench` -- the stressor's unmerge rate against the
# kernel's own ksm_tests -D (built from Debian's linux-source-6.12) at 64 MiB
# to 8 GiB, merge wait and sparse walk against bench/unmerge-ref (stressor
# runs use --ksm-unmerge-method madvise: plain cycles, no racer), noise, CPU
# split and memory (see docs/bench.md).
# Not part of `make` or `make test`: the benchmark needs a quiet machine
# and up to 2 x 8 GiB of memory; its packages are not in tools/make/debian-packages.
UNMERGE_REF := $(BUILD)/unmerge-ref
KSM_TESTS := build/ksm_tests

CLEAN_FILES += $(UNMERGE_REF)

.PHONY: bench bench-quick ksm-tests $(KSM_TESTS)

$(UNMERGE_REF): bench/unmerge-ref.c
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -o $@ $< -lm

# the peer: installs linux-source-6.12 and libnuma-dev if missing, then
# builds once (about 30 s; build/ksm_tests.log has the times)
$(KSM_TESTS):
	./bench/build-ksm-tests

ksm-tests: $(KSM_TESTS)

bench: $(STRESSOR_BIN) $(UNMERGE_REF) $(KSM_TESTS)
	./bench/run-bench $(BENCH_ARGS)

# short dry run of the whole pipeline (2 pairs, 3 s runs, 64 and 256 MiB)
bench-quick: $(STRESSOR_BIN) $(UNMERGE_REF) $(KSM_TESTS)
	./bench/run-bench --quick $(BENCH_ARGS)
