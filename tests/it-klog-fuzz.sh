#!/bin/bash
# tests/it-klog-fuzz.sh: run the libFuzzer target for the kernel-log
# watcher's record parser + classifier for ~20 s (FUZZ_KLOG_TIME).
# Skips (77) when clang cannot build -fsanitize=fuzzer binaries.
# Exit: 0 pass, 77 skip, else fail (a crash, leak or trapped invariant).

cd "$(dirname "$0")/.." || exit 2
TIME=${FUZZ_KLOG_TIME:-10}
CC_FUZZ=${FUZZ_CC:-clang}

command -v "$CC_FUZZ" >/dev/null 2>&1 || { echo "SKIP: $CC_FUZZ not installed (Debian: apt-get install clang)"; exit 77; }
probe=$(mktemp -d /tmp/klog-fuzz-probe.XXXXXX)
trap 'rm -rf "$probe"' EXIT
echo 'int LLVMFuzzerTestOneInput(const unsigned char *d, unsigned long n) { (void)d; (void)n; return 0; }' > "$probe/p.c"
if ! "$CC_FUZZ" -fsanitize=fuzzer,address,undefined -o "$probe/p" "$probe/p.c" >/dev/null 2>&1; then
	echo "SKIP: $CC_FUZZ cannot link -fsanitize=fuzzer (libFuzzer runtime missing)"
	exit 77
fi

log="$probe/fuzz.log"
if ! make --no-print-directory fuzz-klog FUZZ_CC="$CC_FUZZ" FUZZ_KLOG_TIME="$TIME" >"$log" 2>&1; then
	grep -E 'ERROR|SUMMARY|Assertion|trap|==[0-9]+==' "$log" | head -20
	tail -5 "$log"
	echo "FAIL: fuzz-klog found a problem (see above)"
	exit 1
fi
runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")
rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log")
units=$(sed -n 's/^stat::new_units_added: *//p' "$log")
[ -n "$runs" ] && [ "$runs" -gt 1000 ] || { tail -5 "$log"; echo "FAIL: fuzzer ran only '${runs}' inputs"; exit 1; }
echo "fuzz-klog: $runs inputs in ${TIME}s ($rate/s), $units new units, no crash"
exit 0
