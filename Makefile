# stress-ksm-unmerge: standalone build of the stress-ng ksm-unmerge stressor
#
# make            build ./stress-ksm-unmerge (stressor + core-shim)
# make deps       install missing Debian packages (tools/debian-packages)
# make run        the main job: a default 60 s run on every CPU with metrics
# make racers     list the racers (the stressor's racer table)
# make test       unit + integration tests (root, KSM) -- see README.md
# make static     static binary (for initramfs / other kernels)
# make bench      benchmark (see bench/)
#
# Sub-makefiles (tests/*.mk, tools/*.mk, bench/*.mk) add their own targets
# and append to TEST_TARGETS / ALL_TARGETS.

CC      ?= gcc
CFLAGS  ?= -O2 -g
CFLAGS  += -std=gnu11 -Wall -Wextra -Werror -D_GNU_SOURCE -Icore-shim -I.
LDLIBS  += -lbsd -lpthread -lm
STATIC_LDFLAGS = -static

SHIM_SRC := $(sort $(wildcard core-shim/*.c))
SHIM_OBJ := $(SHIM_SRC:.c=.o)
SHIM_HDR := $(wildcard core-shim/*.h)
STRESSOR := stress-ksm-unmerge
# the stressor's private headers (stress-ksm-unmerge-klog.h, ...): any change
# to one, or a new one, rebuilds the stressor
STRESSOR_HDR := $(wildcard $(STRESSOR)-*.h)

ALL_TARGETS  := $(STRESSOR)
TEST_TARGETS :=

.PHONY: all clean test static deps run print-unit-tests

all: build-all

core-shim/libshim.a: $(SHIM_OBJ)
	$(AR) rcs $@ $^

core-shim/%.o: core-shim/%.c $(SHIM_HDR)
	$(CC) $(CFLAGS) -c -o $@ $<

$(STRESSOR).o: $(STRESSOR).c $(STRESSOR_HDR) $(SHIM_HDR)
	$(CC) $(CFLAGS) -c -o $@ $<

$(STRESSOR): $(STRESSOR).o core-shim/libshim.a
	$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)

static: $(STRESSOR).o core-shim/libshim.a
	$(CC) $(LDFLAGS) $(STATIC_LDFLAGS) -o $(STRESSOR)-static $^ $(LDLIBS)

-include $(sort $(wildcard tests/*.mk tools/*.mk bench/*.mk))

build-all: $(ALL_TARGETS)

deps:
	./tools/deps

run: $(STRESSOR)
	./$(STRESSOR) --ksm-unmerge 0 --metrics --timeout 60

test: build-all $(TEST_TARGETS)
	./tests/run-tests

# the cmocka unit binaries of TEST_TARGETS (tests/run-tests runs them all
# and fails the ones that are missing)
print-unit-tests:
	@echo $(filter tests/build/test-%,$(TEST_TARGETS))

clean:
	rm -f $(STRESSOR) $(STRESSOR)-static *.o core-shim/*.o core-shim/libshim.a
	rm -f $(CLEAN_FILES)
