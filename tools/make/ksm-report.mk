# tools/make/ksm-report.mk: ksm-report (run + LKP-style compare) and its tests
KSM_REPORT        := $(BUILD)/ksm-report
KSM_REPORT_CFLAGS := $(shell pkg-config --cflags yaml-0.1 2>/dev/null)
KSM_REPORT_LIBS   := $(shell pkg-config --libs yaml-0.1 2>/dev/null || echo -lyaml) -lm
KSM_REPORT_TESTS  := $(patsubst tests/unit/%.c,tests/build/%,$(wildcard tests/unit/test-report-*.c))

ALL_TARGETS  += $(KSM_REPORT)
TEST_TARGETS += $(KSM_REPORT) $(KSM_REPORT_TESTS)
CLEAN_FILES  += $(KSM_REPORT) $(KSM_REPORT_TESTS)

$(KSM_REPORT): tools/user/ksm-report.c
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $(KSM_REPORT_CFLAGS) -o $@ $< $(KSM_REPORT_LIBS)

tests/build/test-report-%: tests/unit/test-report-%.c tools/user/ksm-report.c
	@mkdir -p tests/build
	$(CC) $(CFLAGS) $(KSM_REPORT_CFLAGS) -DKSM_REPORT_NO_MAIN -o $@ $< \
		-DKR_FIXTURES=\"$(CURDIR)/tests/data/fixtures/report\" $(KSM_REPORT_LIBS) -lcmocka
