#!/bin/bash
# tests/it/hygiene/asan.sh: ASan+UBSan+LSan build ("make asan", build/asan/)
# of the stressor and of every cmocka unit test; runs the unit tests, then
# two short real runs under /tmp/ksm-dev.lock:
#   1. --ksm-unmerge 1 -t 5 --verify --metrics --ksm-unmerge-bytes 8M --ksm-unmerge-method madvise
#      (must also succeed: exit 0, "successful run completed")
#   2. --ksm-unmerge-method all --ksm-unmerge 2 -t 8 --ksm-unmerge-bytes 8M
#      (every racer; exit 0 or 2 -- racer verdicts are the racer tests' job)
# Fails on any sanitizer report in any process (parent, instances, racer
# children, klog reader): reports go to per-pid files via log_path, and the
# output is grepped too.  A canary program first proves that a leak in the
# parent and a UBSan error in a forked child are caught by these settings.
#
# LSan note: instances and racer children leave with _exit(), which skips
# LSan's atexit check, so leaks are checked in the parent (runner) only;
# detect_leaks=1 is harmless in the children.  ASan/UBSan errors are caught
# in every process.
#
# ASAN_HYG_FAST=1 skips run 2.  Exit: 0 pass, 77 skip, anything else fail.
# run-tests: no KSM lock (the real runs take it: tests/lib/lock.sh)

. "$(dirname "$0")/../../lib/lib.sh"
cd "$TOP" || exit 2
ASAN=$TOP/build/asan
PATTERN='ERROR: AddressSanitizer|runtime error:|LeakSanitizer|ERROR: UndefinedBehaviorSanitizer'
LOG=$TMPD/san
export ASAN_OPTIONS="detect_leaks=1:abort_on_error=0:log_path=$LOG:log_exe_name=1"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1:log_path=$LOG:log_exe_name=1"
export LSAN_OPTIONS="log_path=$LOG:log_exe_name=1"
errors=0

. "$(dirname "$0")/../../lib/lock.sh"

# san_reports OUT: print sanitizer reports (files and OUT), true if any
san_reports() {
	local found=1 f
	for f in "$LOG".*; do
		[ -s "$f" ] || continue
		echo "--- $f"; head -40 "$f"; found=0
	done
	if grep -Eq "$PATTERN" "$1"; then
		grep -E -A20 "$PATTERN" "$1" | head -40; found=0
	fi
	return $found
}

# canary: a parent leak and a child UBSan error must both be reported
canary() {
	cat >"$TMPD/canary.c" <<-'EOF'
	#include <stdlib.h>
	#include <string.h>
	#include <unistd.h>
	#include <sys/wait.h>
	static void *keep;
	int main(int argc, char **argv)
	{
		if (argc > 1 && !strcmp(argv[1], "leak")) {
			keep = malloc(77);
			keep = NULL;
			return 0;
		}
		if (fork() == 0) {
			volatile int x = 0x7fffffff;
			x = x + argc;
			_exit(x == 0);
		}
		(void)wait(NULL);
		return 0;
	}
	EOF
	gcc -O0 -g -fsanitize=address,undefined -fno-omit-frame-pointer \
		-fno-sanitize-recover=undefined -o "$TMPD/canary" "$TMPD/canary.c" ||
		fail "cannot build the sanitizer canary"
	"$TMPD/canary" leak >"$TMPD/c1" 2>&1
	san_reports "$TMPD/c1" >/dev/null || fail "canary: LeakSanitizer missed a parent leak"
	rm -f "$LOG".*
	"$TMPD/canary" >"$TMPD/c2" 2>&1
	san_reports "$TMPD/c2" >/dev/null || fail "canary: UBSan missed an error in a forked child"
	rm -f "$LOG".*
}

# unit_tests: every asan cmocka test passes with no report
unit_tests() {
	local t n=0 rc
	for t in "$ASAN"/tests/test-*; do
		case $t in *.d|*.o) continue ;; esac
		[ -x "$t" ] || continue
		n=$((n + 1))
		timeout 120 "$t" >"$TMPD/unit.out" 2>&1
		rc=$?
		if san_reports "$TMPD/unit.out"; then
			echo "FAIL: $(basename "$t"): sanitizer report (above)"
			errors=$((errors + 1))
		elif [ "$rc" -ne 0 ]; then
			tail -5 "$TMPD/unit.out"
			echo "FAIL: $(basename "$t"): exit $rc"
			errors=$((errors + 1))
		fi
		rm -f "$LOG".*
	done
	check [ "$n" -gt 0 ] || fail "no asan unit tests were built"
	echo "asan unit tests: $n run"
}

# real_run NAME OK-RCS ARGS...: a locked run of the asan stressor
real_run() {
	local name=$1 ok=$2 rc s=$SECONDS
	shift 2
	locked timeout --kill-after=10 60 "$ASAN/stress-ksm-unmerge" "$@" >"$TMPD/$name.out" 2>&1
	rc=$?
	if san_reports "$TMPD/$name.out"; then
		echo "FAIL: $name: sanitizer report (above): $*"
		errors=$((errors + 1))
	elif ! echo " $ok " | grep -q " $rc "; then
		tail -15 "$TMPD/$name.out"
		echo "FAIL: $name: exit $rc (allowed: $ok): $*"
		errors=$((errors + 1))
	elif [ "$rc" = 0 ] && ! grep -q "successful run completed" "$TMPD/$name.out"; then
		tail -5 "$TMPD/$name.out"
		echo "FAIL: $name: no 'successful run completed'"
		errors=$((errors + 1))
	else
		echo "$name: exit $rc, no sanitizer report ($((SECONDS - s)) s)"
	fi
	rm -f "$LOG".*
}

start=$SECONDS
make --no-print-directory -s -j"$(nproc)" asan >"$TMPD/build.out" 2>&1 ||
	{ tail -20 "$TMPD/build.out"; fail "make asan failed"; }
grep -E 'warning:' "$TMPD/build.out" | sed 's/^/build: /' | head -10
echo "asan build: $((SECONDS - start)) s"
canary
unit_tests
require_ksm
check [ -x "$ASAN/stress-ksm-unmerge" ] || fail "asan stressor not built"
real_run verify 0 --ksm-unmerge 1 -t 5 --verify --metrics --ksm-unmerge-bytes 8M --ksm-unmerge-method madvise
grep -q "passed: 1" "$TMPD/verify.out" || { echo "FAIL: verify: instance did not pass"; errors=$((errors + 1)); }
if [ -z "$ASAN_HYG_FAST" ]; then
	real_run all "0 2" --ksm-unmerge-method all --ksm-unmerge 2 -t 8 --ksm-unmerge-bytes 8M --metrics
fi
[ "$errors" -eq 0 ] || { echo "FAIL: $errors asan check(s) failed"; exit 1; }
echo "asan: clean ($((SECONDS - start)) s)"
checks_done
exit 0
