# tests/klog.mk: tests of the standalone core's kernel-log check
# (klog/klog-check.c, -K/--klog-check).  Included by the top Makefile.
# None of them needs the stressor: test-klog links the shim with the dummy
# stressor, the others compile klog-check.c alone with silent stubs.
#
#   make tests/build/test-klog   cmocka tests (corpora, parser, taint, YAML,
#                                report lines, -K rule, live reader)
#   make fuzz-klog               libFuzzer run of parser + classifier
#                                (FUZZ_KLOG_TIME seconds, default 30; clang)
#   make tests/build/klog-normalise   the LKP key normaliser over 300,731
#                                fixed lines (tests/it/klog/normalise.sh;
#                                --time R: median CPU time of one pass)

KLOG_TEST_DIR   := tests/build
KLOG_TEST       := $(KLOG_TEST_DIR)/test-klog
KLOG_FUZZ       := $(KLOG_TEST_DIR)/fuzz-klog
KLOG_FUZZ_DIR   := $(KLOG_TEST_DIR)/fuzz-klog-corpus
KLOG_NORM       := $(KLOG_TEST_DIR)/klog-normalise
# the tests include klog-check.c itself (they look at its static state);
# KLOG_SRC is the top Makefile's
KLOG_CORPUS     := $(wildcard tests/data/corpus/klog/*.txt)
FUZZ_CC         ?= clang
FUZZ_KLOG_TIME  ?= 30
FUZZ_KLOG_FLAGS := -std=gnu11 -g -O1 -D_GNU_SOURCE -Icore-shim -I. \
		   -Wall -Wextra -Werror -fsanitize=fuzzer,address,undefined \
		   -fno-sanitize-recover=undefined

TEST_TARGETS += $(KLOG_TEST)
TEST_TARGETS += $(KLOG_NORM)
CLEAN_FILES  += $(KLOG_TEST) $(KLOG_FUZZ) $(KLOG_NORM)

.PHONY: fuzz-klog klog-tests

klog-tests: $(KLOG_TEST)
	./$(KLOG_TEST)

# the real shim (pr_*, YAML, /proc reads) with the dummy stressor; the
# test's copy of klog-check.c stands in for the library's klog-check.o
$(KLOG_TEST): tests/unit/test-klog.c tests/unit/test-shim-common.h $(KLOG_SRC) $(SHIM_HDR) $(KLOG_CORPUS) tests/build/dummy-stressor.o $(SHIM_LIB)
	@mkdir -p $(KLOG_TEST_DIR)
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ tests/unit/test-klog.c tests/build/dummy-stressor.o $(SHIM_LIB) $(SHIM_TEST_LDLIBS)

$(KLOG_NORM): tests/lib/klog-normalise.c tests/lib/klog-stubs.h $(KLOG_SRC) $(SHIM_HDR)
	@mkdir -p $(KLOG_TEST_DIR)
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ tests/lib/klog-normalise.c

$(KLOG_FUZZ): tests/fuzz/fuzz-klog.c tests/lib/klog-stubs.h $(KLOG_SRC) $(SHIM_HDR)
	@mkdir -p $(KLOG_TEST_DIR)
	$(FUZZ_CC) $(FUZZ_KLOG_FLAGS) -o $@ tests/fuzz/fuzz-klog.c

fuzz-klog: $(KLOG_FUZZ)
	@mkdir -p $(KLOG_FUZZ_DIR)
	./$(KLOG_FUZZ) -max_total_time=$(FUZZ_KLOG_TIME) -timeout=5 -rss_limit_mb=512 \
		-print_final_stats=1 $(KLOG_FUZZ_DIR) tests/data/corpus/klog

# the sanitizer build of test-klog (tests/hygiene.mk) includes klog-check.c
# too and links the dummy stressor like the shim tests
build/asan/tests/test-klog: $(KLOG_SRC)
build/asan/tests/test-klog: ASAN_TEST_OBJS = $(ASAN_DUMMY)
