# tests/racers-a.mk: unit tests of the vmsplice, gup, uffd-wp and thp
# racers' verifiers (in stress-ksm-unmerge.c).  Included by the
# top-level Makefile.  The test #includes stress-ksm-unmerge.c and links
# the shim library; its own main() keeps core-runner.o out of the link.
RACERS_A_TEST := tests/build/test-racers-a

TEST_TARGETS += $(RACERS_A_TEST)
CLEAN_FILES  += $(RACERS_A_TEST)

$(RACERS_A_TEST): tests/test-racers-a.c tests/test-env.h $(STRESSOR).c \
		core-shim/libshim.a $(SHIM_HDR)
	@mkdir -p tests/build
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $< core-shim/libshim.a -lcmocka $(LDLIBS)
