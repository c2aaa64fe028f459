# tests/iface.mk: unit tests of the interface self-test and the page
# verdict (tests/unit/test-iface.c), fed the kernel-signal dumps recorded on
# three kernels (tests/data/kernel-signals/).  Included by the top-level
# Makefile; the test #includes stress-ksm-unmerge.c.
IFACE_TEST := tests/build/test-iface

TEST_TARGETS += $(IFACE_TEST)
CLEAN_FILES  += $(IFACE_TEST)

$(IFACE_TEST): tests/unit/test-iface.c $(STRESSOR).c core-shim/libshim.a $(SHIM_HDR) \
		$(wildcard tests/data/kernel-signals/*.txt)
	@mkdir -p tests/build
	$(CC) $(CFLAGS) $(LDFLAGS) -DT_SIGNALS_DIR='"$(CURDIR)/tests/data/kernel-signals"' \
		-o $@ $< core-shim/libshim.a -lcmocka $(LDLIBS)
