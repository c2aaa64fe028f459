# tests/racers-b.mk: unit tests of the mrelease, fork, mprotect and sparse
# racers' verifiers (in stress-ksm-unmerge.c).  Included by the
# top-level Makefile.  The test #includes stress-ksm-unmerge.c, so it links
# the shim library (its main() lives in core-runner.o, which the test's own
# main() keeps out of the link).
RACERS_B_TEST := tests/build/test-racers-b

TEST_TARGETS += $(RACERS_B_TEST)
CLEAN_FILES  += $(RACERS_B_TEST)

$(RACERS_B_TEST): tests/test-racers-b.c tests/test-env.h $(STRESSOR).c \
		core-shim/libshim.a $(SHIM_HDR)
	@mkdir -p tests/build
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $< core-shim/libshim.a -lcmocka $(LDLIBS)
