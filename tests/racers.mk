# tests/racers.mk: unit tests of the racers' verifiers (in
# stress-ksm-unmerge.c): test-racers-a (vmsplice, gup, uffd-wp, thp) and
# test-racers-b (mrelease, fork, mprotect, sparse), test-racers-c (the
# checks and racers of stress-ksm-unmerge-*.h).  Included by the
# top-level Makefile.  Each test #includes stress-ksm-unmerge.c and links
# the shim library; its own main() keeps core-runner.o out of the link.
RACERS_TESTS := tests/build/test-racers-a tests/build/test-racers-b tests/build/test-racers-c

TEST_TARGETS += $(RACERS_TESTS)
CLEAN_FILES  += $(RACERS_TESTS)

$(RACERS_TESTS): tests/build/test-racers-%: tests/unit/test-racers-%.c tests/unit/test-env.h \
		$(STRESSOR).c $(STRESSOR_HDR) core-shim/libshim.a $(SHIM_HDR)
	@mkdir -p tests/build
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $< core-shim/libshim.a -lcmocka $(LDLIBS)
