# tests/shim.mk: core-shim unit tests (cmocka) and the dummy runner.
# Included by the top-level Makefile.
#
#   make shim-tests     build tests/build/test-shim-* and tests/build/dummy-runner

SHIM_TEST_DIR    := tests/build
SHIM_TEST_NAMES  := opts metrics yaml exit klog
SHIM_TEST_BINS   := $(addprefix $(SHIM_TEST_DIR)/test-shim-,$(SHIM_TEST_NAMES))
SHIM_DUMMY       := $(SHIM_TEST_DIR)/dummy-runner
SHIM_TEST_LDLIBS := -lcmocka -lyaml $(LDLIBS)

TEST_TARGETS += $(SHIM_TEST_BINS) $(SHIM_DUMMY)
CLEAN_FILES  += $(SHIM_TEST_BINS) $(SHIM_DUMMY) $(SHIM_TEST_DIR)/dummy-stressor.o

.PHONY: shim-tests

shim-tests: $(SHIM_TEST_BINS) $(SHIM_DUMMY)

$(SHIM_TEST_DIR):
	mkdir -p $@

$(SHIM_TEST_DIR)/dummy-stressor.o: tests/lib/dummy-stressor.c $(SHIM_HDR) | $(SHIM_TEST_DIR)
	$(CC) $(CFLAGS) -c -o $@ $<

$(SHIM_DUMMY): $(SHIM_TEST_DIR)/dummy-stressor.o $(SHIM_LIB) | $(SHIM_TEST_DIR)
	$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)

$(SHIM_TEST_DIR)/test-shim-%: tests/unit/test-shim-%.c tests/unit/test-shim-common.h $(SHIM_TEST_DIR)/dummy-stressor.o $(SHIM_LIB) $(SHIM_HDR) | $(SHIM_TEST_DIR)
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $< $(SHIM_TEST_DIR)/dummy-stressor.o $(SHIM_LIB) $(SHIM_TEST_LDLIBS)
