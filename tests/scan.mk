# tests/scan.mk: unit tests of the region scan's bounded scratch
# (tests/unit/test-scan.c #includes stress-ksm-unmerge.c and feeds
# stress-ksm-unmerge-verify.h synthetic pagemaps; its main() keeps
# core-runner.o out of the link).
SCAN_TEST := tests/build/test-scan

TEST_TARGETS += $(SCAN_TEST)
CLEAN_FILES  += $(SCAN_TEST)

$(SCAN_TEST): tests/unit/test-scan.c $(STRESSOR).c $(STRESSOR_HDR) \
		core-shim/libshim.a $(SHIM_HDR)
	@mkdir -p tests/build
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $< core-shim/libshim.a -lcmocka $(LDLIBS)
