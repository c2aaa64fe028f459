# bench/bench.mk: `make bench` -- reference vs stressor unmerge throughput
# (stressor runs use --ksm-unmerge-method madvise: plain cycles, no racer),
# noise, merge wait, CPU split and memory (see docs/bench.md).
# Not part of `make` or `make test`: the benchmark needs a quiet machine.
UNMERGE_REF := bench/unmerge-ref

CLEAN_FILES += $(UNMERGE_REF)

.PHONY: bench bench-quick

$(UNMERGE_REF): bench/unmerge-ref.c
	$(CC) $(CFLAGS) -o $@ $< -lm

bench: $(STRESSOR) $(UNMERGE_REF)
	./bench/run-bench $(BENCH_ARGS)

# short dry run of the whole pipeline (2 pairs, 3 s runs, no 1 GiB point)
bench-quick: $(STRESSOR) $(UNMERGE_REF)
	./bench/run-bench --quick $(BENCH_ARGS)
