# tests/stressor.mk: unit tests of the stressor's own logic (tests/unit/test-stressor.c
# #includes stress-ksm-unmerge.c and links the shim library; its main() keeps
# core-runner.o out of the link).
STRESSOR_TEST := tests/build/test-stressor

TEST_TARGETS += $(STRESSOR_TEST)
CLEAN_FILES  += $(STRESSOR_TEST)

$(STRESSOR_TEST): tests/unit/test-stressor.c tests/unit/test-env.h $(STRESSOR).c $(STRESSOR_HDR) \
		core-shim/libshim.a $(SHIM_HDR)
	@mkdir -p tests/build
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $< core-shim/libshim.a -lcmocka $(LDLIBS)
