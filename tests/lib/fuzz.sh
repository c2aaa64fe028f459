# tests/lib/fuzz.sh: shared steps of the libFuzzer scripts (it/hygiene/fuzz-opts.sh,
# it/klog/fuzz.sh).  Source it from the top of the tree; it sets CC_FUZZ
# (FUZZ_CC, default clang) and FUZZ_TMP (removed on exit).
. tests/lib/checks.sh
CC_FUZZ=${FUZZ_CC:-clang}
FUZZ_TMP=$(mktemp -d /tmp/fuzz.XXXXXX)
trap 'rm -rf "$FUZZ_TMP"' EXIT

# fuzz_require: skip (77) unless $CC_FUZZ links a -fsanitize=fuzzer binary
fuzz_require() {
	command -v "$CC_FUZZ" >/dev/null 2>&1 ||
		{ echo "SKIP: $CC_FUZZ not installed (Debian: apt-get install clang)"; exit 77; }
	echo 'int LLVMFuzzerTestOneInput(const unsigned char *d, unsigned long n) { (void)d; (void)n; return 0; }' \
		>"$FUZZ_TMP/p.c"
	"$CC_FUZZ" -fsanitize=fuzzer,address,undefined -o "$FUZZ_TMP/p" "$FUZZ_TMP/p.c" >/dev/null 2>&1 ||
		{ echo "SKIP: $CC_FUZZ cannot link -fsanitize=fuzzer (libFuzzer runtime missing)"; exit 77; }
}

# fuzz_run TARGET SECS MAKEVARS...: make TARGET (a bounded libFuzzer run);
# fail (exit 1) on a finding or fewer than 1000 inputs, else print its stats
fuzz_run() {
	local target=$1 secs=$2 log=$FUZZ_TMP/$1.log start runs rate units cov
	shift 2
	start=$(date +%s)
	if ! make --no-print-directory "$target" FUZZ_CC="$CC_FUZZ" "$@" >"$log" 2>&1; then
		grep -E 'ERROR|SUMMARY|Assertion|trap|invariant|runtime error|Test unit written|==[0-9]+==' "$log" | head -30
		tail -5 "$log"
		echo "FAIL: $target found a problem (see above; crash input in build/fuzz/)"
		exit 1
	fi
	runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")
	rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log")
	units=$(sed -n 's/^stat::new_units_added: *//p' "$log")
	cov=$(grep -o 'cov: [0-9]*' "$log" | tail -1)
	[ -n "$runs" ] && [ "$runs" -gt 1000 ] || { tail -5 "$log"; echo "FAIL: $target ran only '${runs}' inputs"; exit 1; }
	# two checks: no finding, enough inputs
	checked 2
	echo "$target: $runs inputs in ${secs}s ($rate/s), ${cov:-cov: ?}, $units new units, no crash ($(( $(date +%s) - start ))s incl. build)"
}
