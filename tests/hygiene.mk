# tests/hygiene.mk: build hygiene -- sanitizer build, option-parser fuzzer,
# cppcheck.  Included by the top-level Makefile.  See docs/hygiene.md.
#
#   make asan       ASan+UBSan build of the stressor and of every cmocka
#                   unit test tests/unit/test-*.c, in build/asan/ (objects never
#                   mixed with the normal build); run: tests/it/hygiene/asan.sh
#   make fuzz-opts  libFuzzer run of the option parser (clang), FUZZ_OPTS_TIME
#                   seconds (default 20), seeded from tests/data/bad-input.tsv
#   make cppcheck   cppcheck of the stressor (+ fragments), core-shim, klog, tools
#
# The tests (tests/it/hygiene/*.sh) build what they
# need themselves, so none of this is added to TEST_TARGETS: a plain
# "make test" on a machine without clang/valgrind still works.

# ---------------------------------------------------------------- asan
ASAN_DIR      := build/asan
ASAN_CC       ?= $(CC)
SAN_FLAGS     := -fsanitize=address,undefined -fno-omit-frame-pointer \
		 -fno-sanitize-recover=undefined
# no -Werror here: -fsanitize changes gcc's value ranges and so its
# -Wformat-truncation/-Wclobbered verdicts; the normal build is the
# -Werror gate, tests/it/hygiene/asan.sh lists these warnings
ASAN_CFLAGS   := -O1 -g -std=gnu11 -Wall -Wextra -D_GNU_SOURCE \
		 -Icore-shim -I. $(SAN_FLAGS) -MMD -MP
ASAN_LDLIBS   := -lcmocka -lyaml $(LDLIBS)
ASAN_SHIM_OBJ := $(patsubst %.c,$(ASAN_DIR)/%.o,$(LIB_SRC))
ASAN_SHIM_LIB := $(ASAN_DIR)/libshim.a
ASAN_STRESSOR := $(ASAN_DIR)/$(STRESSOR)
ASAN_DUMMY    := $(ASAN_DIR)/tests/dummy-stressor.o
ASAN_TESTS    := $(patsubst tests/unit/%.c,$(ASAN_DIR)/tests/%,$(wildcard tests/unit/test-*.c))

# per-test link extras: the shim tests link the dummy stressor; the report
# tests compile tools/user/ksm-report.c without its main (as tools/make/ksm-report.mk)
$(ASAN_DIR)/tests/test-shim-%: ASAN_TEST_OBJS = $(ASAN_DUMMY)
$(filter $(ASAN_DIR)/tests/test-shim-%,$(ASAN_TESTS)): $(ASAN_DUMMY)
$(ASAN_DIR)/tests/test-report-%: ASAN_TEST_DEFS = -DKSM_REPORT_NO_MAIN \
	-DKR_FIXTURES=\"$(CURDIR)/tests/data/fixtures/report\"
# the stressor's tests (tests/stressor.mk; -MMD records their #include of
# stress-ksm-unmerge.c): test-iface reads the recorded kernel-signal dumps
$(ASAN_DIR)/tests/test-iface: ASAN_TEST_DEFS = \
	-DT_SIGNALS_DIR=\"$(CURDIR)/tests/data/kernel-signals\"

# ("-r": the top Makefile runs rm -f $(CLEAN_FILES); GNU rm takes it anywhere)
CLEAN_FILES += -r $(ASAN_DIR)

.PHONY: asan asan-tests fuzz-opts cppcheck

asan: $(ASAN_STRESSOR) asan-tests

asan-tests: $(ASAN_TESTS)

$(ASAN_DIR)/core-shim/%.o: core-shim/%.c
	@mkdir -p $(@D)
	$(ASAN_CC) $(ASAN_CFLAGS) -c -o $@ $<

$(ASAN_DIR)/klog/%.o: klog/%.c
	@mkdir -p $(@D)
	$(ASAN_CC) $(ASAN_CFLAGS) -c -o $@ $<

$(ASAN_SHIM_LIB): $(ASAN_SHIM_OBJ)
	@rm -f $@
	$(AR) rcs $@ $^

$(ASAN_DIR)/$(STRESSOR).o: $(STRESSOR).c
	@mkdir -p $(@D)
	$(ASAN_CC) $(ASAN_CFLAGS) -c -o $@ $<

$(ASAN_STRESSOR): $(ASAN_DIR)/$(STRESSOR).o $(ASAN_SHIM_LIB)
	$(ASAN_CC) $(SAN_FLAGS) $(LDFLAGS) -o $@ $^ $(LDLIBS)

$(ASAN_DUMMY): tests/lib/dummy-stressor.c
	@mkdir -p $(@D)
	$(ASAN_CC) $(ASAN_CFLAGS) -c -o $@ $<

$(ASAN_DIR)/tests/test-%: tests/unit/test-%.c $(ASAN_SHIM_LIB)
	@mkdir -p $(@D)
	$(ASAN_CC) $(ASAN_CFLAGS) $(ASAN_TEST_DEFS) $(LDFLAGS) -o $@ $< \
		$(ASAN_TEST_OBJS) $(ASAN_SHIM_LIB) $(ASAN_LDLIBS)

# header and fragment dependencies from -MMD
-include $(wildcard $(ASAN_DIR)/*.d $(ASAN_DIR)/*/*.d)

# ---------------------------------------------------------------- fuzzing
# Generic libFuzzer pattern: tests/fuzz/fuzz-NAME.c is linked with the shim and
# the stressor built with coverage + ASan/UBSan (core-runner.o, which holds
# main(), is left out: libFuzzer supplies main), into build/fuzz/fuzz-NAME.
# "make fuzz-NAME" style runs use FUZZ_RUN (corpus dir, seeds dir, time).
# (tests/klog.mk builds fuzz-klog its own way, from one source file; it
# could use $(FUZZ_DIR)/fuzz-klog and FUZZ_RUN unchanged.)
FUZZ_DIR        := build/fuzz
FUZZ_CC         ?= clang
FUZZ_SAN        := -fsanitize=address,undefined -fno-sanitize-recover=undefined \
		   -fno-omit-frame-pointer
FUZZ_CFLAGS     := -std=gnu11 -g -O1 -D_GNU_SOURCE -Icore-shim -I. \
		   -Wall -Wextra -Werror -MMD -MP $(FUZZ_SAN)
# library objects: clang-only warnings are shown but do not stop fuzzing
# (tests/it/hygiene/cppcheck.sh gates them with clang -Werror)
FUZZ_LIB_CFLAGS := $(FUZZ_CFLAGS) -Wno-error -fsanitize=fuzzer-no-link
FUZZ_SHIM_OBJ   := $(patsubst %.c,$(FUZZ_DIR)/%.o,\
		   $(filter-out core-shim/core-runner.c,$(LIB_SRC)))
FUZZ_LIB        := $(FUZZ_DIR)/libfuzzshim.a
FUZZ_OPTS       := $(FUZZ_DIR)/fuzz-opts
FUZZ_OPTS_TIME  ?= 20
FUZZ_OPTS_SEEDS := $(FUZZ_DIR)/fuzz-opts-seeds
FUZZ_OPTS_CORPUS := $(FUZZ_DIR)/fuzz-opts-corpus

CLEAN_FILES += -r $(FUZZ_DIR)

$(FUZZ_DIR)/core-shim/%.o: core-shim/%.c
	@mkdir -p $(@D)
	$(FUZZ_CC) $(FUZZ_LIB_CFLAGS) -c -o $@ $<

$(FUZZ_DIR)/klog/%.o: klog/%.c
	@mkdir -p $(@D)
	$(FUZZ_CC) $(FUZZ_LIB_CFLAGS) -c -o $@ $<

$(FUZZ_DIR)/$(STRESSOR).o: $(STRESSOR).c
	@mkdir -p $(@D)
	$(FUZZ_CC) $(FUZZ_LIB_CFLAGS) -c -o $@ $<

$(FUZZ_LIB): $(FUZZ_SHIM_OBJ) $(FUZZ_DIR)/$(STRESSOR).o
	@rm -f $@
	$(AR) rcs $@ $^

$(FUZZ_DIR)/fuzz-%: tests/fuzz/fuzz-%.c $(FUZZ_LIB)
	$(FUZZ_CC) $(FUZZ_CFLAGS) -fsanitize=fuzzer -o $@ $< $(FUZZ_LIB) $(LDLIBS)

-include $(wildcard $(FUZZ_DIR)/*.d $(FUZZ_DIR)/*/*.d)

# FUZZ_RUN(binary,corpus-dir,seed-dir,seconds,extra-flags): bounded
# libFuzzer run; new inputs go to corpus-dir (kept between runs), crash
# inputs to build/fuzz/crash-*
define FUZZ_RUN
	@mkdir -p $(2)
	./$(1) -max_total_time=$(4) -timeout=5 -rss_limit_mb=1024 \
		-artifact_prefix=$(FUZZ_DIR)/ -print_final_stats=1 $(5) $(2) $(3)
endef

# seeds: one file per tests/data/bad-input.tsv line and per good command line,
# argv elements NUL separated (the format tests/fuzz/fuzz-opts.c reads)
$(FUZZ_OPTS_SEEDS): tests/data/bad-input.tsv tests/it/hygiene/fuzz-opts.sh
	@rm -rf $@ && mkdir -p $@
	bash tests/it/hygiene/fuzz-opts.sh --seeds $@ tests/data/bad-input.tsv

fuzz-opts: $(FUZZ_OPTS) $(FUZZ_OPTS_SEEDS)
	$(call FUZZ_RUN,$(FUZZ_OPTS),$(FUZZ_OPTS_CORPUS),$(FUZZ_OPTS_SEEDS),$(FUZZ_OPTS_TIME),\
		-max_len=512 -dict=$(FUZZ_OPTS_SEEDS).dict)

# ---------------------------------------------------------------- cppcheck
# the file list, options and suppressions live in the test script
cppcheck:
	bash tests/it/hygiene/cppcheck.sh
