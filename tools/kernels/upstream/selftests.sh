#!/bin/bash
# tools/kernels/upstream/selftests.sh: build the static test programs that prove the
# ksm-fork-zero-pages series under tools/kernels/ksm-qemu, from Debian's
# linux-source-6.12 (the pristine tree tools/kernels/upstream/build-kernel.sh unpacks).
#
# usage: tools/kernels/upstream/selftests.sh
#
# Writes to build/upstream/selftests/ (UPSTREAM_SELFTESTS, or selftests/ in
# UPSTREAM_DIR):
#   base/ksm_functional_tests    the kernel's own ksm_functional_tests
#   series/ksm_functional_tests  the same with the series' selftest patches
#                                (the 000N patches that touch
#                                tools/testing/selftests)
#   migrate_device_ksm_zero_pages, ksm_fork_zero_pages
#                                docs/upstream/ksm-fork-zero-pages/*.c, built
#                                against the kernel's kselftest.h and vm_util
# Each ksm_functional_tests keeps its name: test_prctl_fork_exec() execs
# "./ksm_functional_tests", so run it from its own directory.
#
# Both ksm_functional_tests get one upstream fix that 6.12.118 lacks: the
# NULL that ends execv()'s argv in test_prctl_fork_exec() (Donet Tom, June
# 2025, lore 20250616160632.35250-4-aboorvad@linux.ibm.com).  Without it the
# exec fails when the word after the array is not NULL; the child then runs
# the remaining tests as a second process, both print TAP, the plan is off.
#
# Static, plain gcc, the kernel's uapi headers (make headers_install) first
# on the include path.  Needs: gcc, make, patch, and the pristine tree
# (make upstream-kernels, or tools/kernels/upstream/build-kernel.sh NAME).

set -u -o pipefail

TOPDIR=$(cd "$(dirname "${BASH_SOURCE[0]}")/../../.." && pwd)
DIR=${UPSTREAM_DIR:-$TOPDIR/build/upstream}
CASE=$TOPDIR/docs/upstream/ksm-fork-zero-pages
PRISTINE=$DIR/linux-6.12
OUT=${UPSTREAM_SELFTESTS:-$DIR/selftests}
CC=${UPSTREAM_CC:-gcc}

# msg: one line on stderr, prefixed with the tool name
msg() {
	echo "selftests: $*" >&2
}

# die: print an error line and exit 1
die() {
	msg "error: $*"
	exit 1
}

# selftest_patches: the series' patches that touch tools/testing/selftests
selftest_patches() {
	local p
	for p in "$CASE"/0*.patch; do
		[ "$(basename "$p")" = 0000-cover-letter.patch ] && continue
		grep -q '^+++ b/tools/testing/selftests/' "$p" && echo "$p"
	done
}

# selftests_tree NAME [PATCH...]: a copy of the pristine selftests with the
# patches applied and the argv fix; prints its mm/ directory
selftests_tree() {
	local name=$1 t=$OUT/src-$1 p
	shift
	rm -rf "$t"
	mkdir -p "$t/tools/testing" || die "cannot create $t"
	cp -r "$PRISTINE/tools/testing/selftests" "$t/tools/testing/" || die "cp selftests failed"
	for p in "$@"; do
		patch -d "$t" -p1 --batch --quiet < "$p" || die "$(basename "$p") does not apply"
	done
	sed -i 's/{ prg_name, FORK_EXEC_CHILD_PRG_NAME };/{ prg_name, FORK_EXEC_CHILD_PRG_NAME, NULL };/' \
		"$t/tools/testing/selftests/mm/ksm_functional_tests.c"
	grep -q 'FORK_EXEC_CHILD_PRG_NAME, NULL }' "$t/tools/testing/selftests/mm/ksm_functional_tests.c" ||
		die "the execv() argv fix did not apply ($name)"
	echo "$t/tools/testing/selftests/mm"
}

# build OUTPUT SOURCES...: one static program
build() {
	local out=$1
	shift
	mkdir -p "$(dirname "$out")"
	"$CC" -static -O2 -Wall -pthread -isystem "$OUT/usr/include" "$@" -o "$out" -lrt -lm ||
		die "cannot build $out"
	msg "built $out"
}

main() {
	local mm
	[ -f "$PRISTINE/Makefile" ] ||
		die "no pristine tree $PRISTINE (make upstream-kernels first)"
	unset MAKEFLAGS MFLAGS MAKELEVEL MAKEOVERRIDES
	mkdir -p "$OUT" || die "cannot create $OUT"
	if [ ! -f "$OUT/usr/include/linux/userfaultfd.h" ]; then
		make -s -C "$PRISTINE" O="$OUT/hdr-obj" ARCH=x86_64 headers_install \
			INSTALL_HDR_PATH="$OUT/usr" >/dev/null || die "make headers_install failed"
	fi
	mm=$(selftests_tree base) || exit 1
	build "$OUT/base/ksm_functional_tests" "$mm/ksm_functional_tests.c" "$mm/vm_util.c" \
		"$mm/thp_settings.c"
	# shellcheck disable=SC2046
	mm=$(selftests_tree series $(selftest_patches)) || exit 1
	build "$OUT/series/ksm_functional_tests" "$mm/ksm_functional_tests.c" "$mm/vm_util.c" \
		"$mm/thp_settings.c"
	build "$OUT/migrate_device_ksm_zero_pages" -I "$PRISTINE/tools/testing/selftests" \
		-I "$PRISTINE/lib" "$CASE/migrate_device_ksm_zero_pages.c"
	build "$OUT/ksm_fork_zero_pages" -I "$mm" "$CASE/ksm_fork_zero_pages.c" "$mm/vm_util.c"
}

main "$@"
