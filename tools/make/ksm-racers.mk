# tools/make/ksm-racers.mk: build/ksm-racers (from tools/user/ksm-racers.c) prints the
# stressor's racer table (the only list of racers) as TSV for the man page,
# ksm-report and tests.
KSM_RACERS_TOOL := $(BUILD)/ksm-racers

ALL_TARGETS += $(KSM_RACERS_TOOL)
CLEAN_FILES += $(KSM_RACERS_TOOL)

$(KSM_RACERS_TOOL): tools/user/ksm-racers.c $(STRESSOR).c $(SHIM_LIB) $(SHIM_HDR)
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $< $(SHIM_LIB) $(LDLIBS)

.PHONY: racers

# make racers: the racer table for a reader (name, evidence counter, built, path)
racers: $(KSM_RACERS_TOOL)
	@{ printf 'racer\tevidence\tbuilt\tkernel path\n'; ./$(KSM_RACERS_TOOL); } | \
		awk -F'\t' '{ printf "%-11s %-22s %-6s %s\n", $$1, $$2, $$3, $$4 }'
