# tests/racers.mk: unit tests of the racers' verifiers, one binary per
# racer (tests/unit/test-racer-<name>.c; the
# dontneed racer has no verifier of its own), test-racer-common (helpers
# every racer uses) and test-check-counters (stress-ksm-unmerge-check-*.h).
# Included by the top-level Makefile.  Each test includes the shared
# fixture tests/unit/test-racer.h, which #includes stress-ksm-unmerge.c;
# its own main() keeps core-runner.o out of the link.
RACER_TEST_NAMES := $(patsubst tests/unit/%.c,%,$(wildcard tests/unit/test-racer-*.c)) \
		    test-check-counters
RACERS_TESTS := $(addprefix tests/build/,$(RACER_TEST_NAMES))

TEST_TARGETS += $(RACERS_TESTS)
CLEAN_FILES  += $(RACERS_TESTS)

$(RACERS_TESTS): tests/build/%: tests/unit/%.c tests/unit/test-racer.h tests/unit/test-env.h \
		$(STRESSOR).c $(STRESSOR_HDR) core-shim/libshim.a $(SHIM_HDR)
	@mkdir -p tests/build
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $< core-shim/libshim.a -lcmocka $(LDLIBS)
