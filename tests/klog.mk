# tests/klog.mk: kernel-log watcher tests.  Included by the top Makefile.
#
#   make tests/build/test-klog   cmocka tests (corpora, parser, taint, YAML)
#   make fuzz-klog               libFuzzer run of parser + classifier
#                                (FUZZ_KLOG_TIME seconds, default 30; clang)

KLOG_TEST_DIR   := tests/build
KLOG_TEST       := $(KLOG_TEST_DIR)/test-klog
KLOG_FUZZ       := $(KLOG_TEST_DIR)/fuzz-klog
KLOG_FUZZ_DIR   := $(KLOG_TEST_DIR)/fuzz-klog-corpus
# The watcher section of the stressor, cut out between its begin/end marker
# comments, so the tests can fake the few core functions it calls
KLOG_SRC        := $(KLOG_TEST_DIR)/klog-part.c
KLOG_CORPUS     := $(wildcard tests/corpus/klog/*.txt)
FUZZ_CC         ?= clang
FUZZ_KLOG_TIME  ?= 30
FUZZ_KLOG_FLAGS := -std=gnu11 -g -O1 -D_GNU_SOURCE -Icore-shim -I. \
		   -Wall -Wextra -Werror -fsanitize=fuzzer,address,undefined \
		   -fno-sanitize-recover=undefined

TEST_TARGETS += $(KLOG_TEST)
CLEAN_FILES  += $(KLOG_TEST) $(KLOG_FUZZ) $(KLOG_SRC)

.PHONY: fuzz-klog klog-tests

klog-tests: $(KLOG_TEST)
	./$(KLOG_TEST)

$(KLOG_SRC): $(STRESSOR).c $(STRESSOR_HDR)
	@mkdir -p $(KLOG_TEST_DIR)
	sed -n '/^\/\* Kernel-log watcher (begin) \*\//,/^\/\* Kernel-log watcher (end) \*\//p' $< > $@
	@grep -q 'Kernel-log watcher (end)' $@ || { echo "klog markers missing in $<"; rm -f $@; exit 1; }

# the shim's syscall wrappers are real; pr_*, the clock and YAML are faked
$(KLOG_TEST): tests/test-klog.c $(KLOG_SRC) $(SHIM_HDR) $(KLOG_CORPUS) core-shim/core-shim.c
	@mkdir -p $(KLOG_TEST_DIR)
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ tests/test-klog.c core-shim/core-shim.c -lcmocka

$(KLOG_FUZZ): tests/fuzz-klog.c $(KLOG_SRC) $(SHIM_HDR)
	@mkdir -p $(KLOG_TEST_DIR)
	$(FUZZ_CC) $(FUZZ_KLOG_FLAGS) -o $@ tests/fuzz-klog.c

fuzz-klog: $(KLOG_FUZZ)
	@mkdir -p $(KLOG_FUZZ_DIR)
	./$(KLOG_FUZZ) -max_total_time=$(FUZZ_KLOG_TIME) -timeout=5 -rss_limit_mb=512 \
		-print_final_stats=1 $(KLOG_FUZZ_DIR) tests/corpus/klog

# the sanitizer build of test-klog (tests/hygiene.mk) needs the section too
build/asan/tests/test-klog: $(KLOG_SRC)
