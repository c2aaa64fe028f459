# tests/fakeproc.mk: tests/build/fakeproc.so, the LD_PRELOAD library
# tests/it/cycle/iface.sh runs the stressor under to fake other kernels'
# KSM interfaces (tests/lib/fakeproc.c).  Built for the tests only: the
# stressor has no test hook.
FAKEPROC_SO := tests/build/fakeproc.so

TEST_TARGETS += $(FAKEPROC_SO)
CLEAN_FILES  += $(FAKEPROC_SO)

$(FAKEPROC_SO): tests/lib/fakeproc.c
	@mkdir -p tests/build
	$(CC) -O2 -g -std=gnu11 -Wall -Wextra -Werror -fPIC -shared -o $@ $< -ldl
