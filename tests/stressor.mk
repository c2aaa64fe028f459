# tests/stressor.mk: cmocka unit tests of the stressor (tests/unit/test-NAME.c
# for NAME in STRESSOR_TESTS).  Each #includes stress-ksm-unmerge.c and links
# the shim library; its own main() keeps core-runner.o out of the link.
#   test-stressor  names, methods, patterns, counter parser, report lines
#   test-iface     interface self-test, page verdict, region scan, fed the
#                  kernel-signal dumps of tests/data/kernel-signals/
#   test-racers    the racers' and the kernel checks' pure verdicts
#   test-knobs     knob save/set/restore, state file, run lock: in a private
#                  mount namespace over fake knobs (skipped where unshare fails)
STRESSOR_TESTS    := stressor iface racers knobs
STRESSOR_TEST_BIN := $(addprefix tests/build/test-,$(STRESSOR_TESTS))
T_SIGNALS_DIR     := $(CURDIR)/tests/data/kernel-signals

TEST_TARGETS += $(STRESSOR_TEST_BIN)
CLEAN_FILES  += $(STRESSOR_TEST_BIN)

.PHONY: stressor-tests

stressor-tests: $(STRESSOR_TEST_BIN)

tests/build/test-iface: $(wildcard tests/data/kernel-signals/*.txt)

$(STRESSOR_TEST_BIN): tests/build/test-%: tests/unit/test-%.c $(STRESSOR).c $(SHIM_LIB) $(SHIM_HDR)
	@mkdir -p tests/build
	$(CC) $(CFLAGS) $(LDFLAGS) -DT_SIGNALS_DIR='"$(T_SIGNALS_DIR)"' -o $@ $< \
		$(SHIM_LIB) -lcmocka $(LDLIBS)
