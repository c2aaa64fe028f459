# tools/make/ksm-soak.mk: ksm-soak, the soak runner (per-interval fsynced YAML log,
# progress, stop-on-warn, hang evidence) for either binary, and its unit test
KSM_SOAK      := $(BUILD)/ksm-soak
KSM_SOAK_TEST := tests/build/test-soak

ALL_TARGETS  += $(KSM_SOAK)
TEST_TARGETS += $(KSM_SOAK) $(KSM_SOAK_TEST)
CLEAN_FILES  += $(KSM_SOAK) $(KSM_SOAK_TEST)

$(KSM_SOAK): tools/user/ksm-soak.c
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -o $@ $<

$(KSM_SOAK_TEST): tests/unit/test-soak.c tools/user/ksm-soak.c
	@mkdir -p tests/build
	$(CC) $(CFLAGS) -o $@ $< -lcmocka
