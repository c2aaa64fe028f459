# tools/ksm-racers.mk: tools/ksm-racers prints the stressor's racer table
# (the only list of racers) as TSV for the man page, ksm-report and tests.
KSM_RACERS_TOOL := tools/ksm-racers

ALL_TARGETS += $(KSM_RACERS_TOOL)
CLEAN_FILES += $(KSM_RACERS_TOOL)

$(KSM_RACERS_TOOL): tools/ksm-racers.c $(STRESSOR).c core-shim/libshim.a $(SHIM_HDR)
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $< core-shim/libshim.a $(LDLIBS)

.PHONY: racers

# make racers: the racer table for a reader (name, evidence counter, built, path)
racers: $(KSM_RACERS_TOOL)
	@{ printf 'racer\tevidence\tbuilt\tkernel path\n'; ./$(KSM_RACERS_TOOL); } | \
		awk -F'\t' '{ printf "%-11s %-22s %-6s %s\n", $$1, $$2, $$3, $$4 }'
