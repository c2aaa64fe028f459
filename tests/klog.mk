# tests/klog.mk: kernel-log watcher tests.  Included by the top Makefile.
#
#   make tests/build/test-klog   cmocka tests (corpora, parser, taint, YAML)
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
# The watcher is the stressor's private header; the tests include it
# directly and fake the few core functions it calls
KLOG_SRC        := $(STRESSOR)-klog.h
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

# the shim's syscall wrappers are real; pr_*, the clock and YAML are faked
$(KLOG_TEST): tests/unit/test-klog.c $(KLOG_SRC) $(SHIM_HDR) $(KLOG_CORPUS) core-shim/core-shim.c
	@mkdir -p $(KLOG_TEST_DIR)
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ tests/unit/test-klog.c core-shim/core-shim.c -lcmocka

$(KLOG_NORM): tests/unit/klog-normalise.c tests/unit/klog-stubs.h $(KLOG_SRC) $(SHIM_HDR) core-shim/core-shim.c
	@mkdir -p $(KLOG_TEST_DIR)
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ tests/unit/klog-normalise.c core-shim/core-shim.c

$(KLOG_FUZZ): tests/unit/fuzz-klog.c tests/unit/klog-stubs.h $(KLOG_SRC) $(SHIM_HDR)
	@mkdir -p $(KLOG_TEST_DIR)
	$(FUZZ_CC) $(FUZZ_KLOG_FLAGS) -o $@ tests/unit/fuzz-klog.c

fuzz-klog: $(KLOG_FUZZ)
	@mkdir -p $(KLOG_FUZZ_DIR)
	./$(KLOG_FUZZ) -max_total_time=$(FUZZ_KLOG_TIME) -timeout=5 -rss_limit_mb=512 \
		-print_final_stats=1 $(KLOG_FUZZ_DIR) tests/data/corpus/klog

# the sanitizer build of test-klog (tests/hygiene.mk) includes the header too
build/asan/tests/test-klog: $(KLOG_SRC)
