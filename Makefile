# stress-ksm-unmerge: standalone build of the stress-ng ksm-unmerge stressor
#
# make            build build/stress-ksm-unmerge (stressor + core-shim + klog)
# make deps       install missing Debian packages (tools/make/debian-packages)
# make run        the main job: a default 60 s run on every CPU with metrics
# make racers     list the racers (the stressor's racer table)
# make test       unit + integration tests (root, KSM) -- see README.md
# make static     static binary build/stress-ksm-unmerge-static (initramfs,
#                 other kernels)
# make bench      benchmark (see bench/)
#
# Sub-makefiles (tests/*.mk, tools/make/*.mk, bench/*.mk) add their own targets
# and append to TEST_TARGETS / ALL_TARGETS.  Every output goes under build/
# (tests' own under tests/build/): the source folders stay clean.

CC      ?= gcc
CFLAGS  ?= -O2 -g
CFLAGS  += -std=gnu11 -Wall -Wextra -Werror -D_GNU_SOURCE -Icore-shim -I.
LDLIBS  += -lbsd -lpthread -lm
STATIC_LDFLAGS = -static

BUILD    := build
OBJ_DIR  := $(BUILD)/obj
SHIM_SRC := $(sort $(wildcard core-shim/*.c))
# the kernel-log check (klog/): the always-on kernel warning check and -K,
# linked into the same library as the core it plugs into
KLOG_SRC := klog/klog-check.c
LIB_SRC  := $(SHIM_SRC) $(KLOG_SRC)
SHIM_OBJ := $(patsubst %.c,$(OBJ_DIR)/%.o,$(LIB_SRC))
SHIM_HDR := $(wildcard core-shim/*.h)
SHIM_LIB := $(BUILD)/libshim.a
# STRESSOR names the source (stress-ksm-unmerge.c); STRESSOR_BIN the binary
STRESSOR        := stress-ksm-unmerge
STRESSOR_OBJ    := $(OBJ_DIR)/$(STRESSOR).o
STRESSOR_BIN    := $(BUILD)/$(STRESSOR)
STRESSOR_STATIC := $(BUILD)/$(STRESSOR)-static

ALL_TARGETS  := $(STRESSOR_BIN)
TEST_TARGETS :=

.PHONY: all clean test build-tests static deps run print-unit-tests

all: build-all

$(SHIM_LIB): $(SHIM_OBJ)
	@rm -f $@
	$(AR) rcs $@ $^

$(OBJ_DIR)/core-shim/%.o: core-shim/%.c $(SHIM_HDR)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -c -o $@ $<

$(OBJ_DIR)/klog/%.o: klog/%.c $(SHIM_HDR)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -c -o $@ $<

$(STRESSOR_OBJ): $(STRESSOR).c $(SHIM_HDR)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -c -o $@ $<

$(STRESSOR_BIN): $(STRESSOR_OBJ) $(SHIM_LIB)
	$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)

static: $(STRESSOR_STATIC)

$(STRESSOR_STATIC): $(STRESSOR_OBJ) $(SHIM_LIB)
	$(CC) $(LDFLAGS) $(STATIC_LDFLAGS) -o $@ $^ $(LDLIBS)

-include $(sort $(wildcard tests/*.mk tools/make/*.mk bench/*.mk))

build-all: $(ALL_TARGETS)

deps:
	./tools/make/deps

run: $(STRESSOR_BIN)
	./$(STRESSOR_BIN) --ksm-unmerge 0 --metrics --timeout 60

test: build-tests
	./tests/run-tests

# what make test builds, without running the tests
build-tests: build-all $(TEST_TARGETS)

# the cmocka unit binaries of TEST_TARGETS (tests/run-tests runs them all
# and fails the ones that are missing)
print-unit-tests:
	@echo $(filter tests/build/test-%,$(TEST_TARGETS))

clean:
	rm -rf $(OBJ_DIR)
	rm -f $(STRESSOR_BIN) $(STRESSOR_STATIC) $(SHIM_LIB)
	rm -f $(CLEAN_FILES)
