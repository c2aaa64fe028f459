#!/bin/bash
# tests/it-fuzz-opts.sh: libFuzzer run (FUZZ_OPTS_TIME s, default 20) of the
# command line parser with the real stressor's option table
# (tests/fuzz-opts.c via "make fuzz-opts"), seeded with every line of
# tests/bad-input.tsv and some good command lines.  Fails on a crash,
# sanitizer report, leak, timeout or broken invariant (see fuzz-opts.c),
# or when the fuzzer ran suspiciously few inputs.  Skips (77) when clang
# cannot link -fsanitize=fuzzer.
#
#   tests/it-fuzz-opts.sh --seeds DIR TSV   (used by make) write the seeds
#
# Exit: 0 pass, 77 skip (reason printed), anything else fail.

cd "$(dirname "$0")/.." || exit 2

# seeds DIR TSV: one file per argv, elements NUL separated, and a libFuzzer
# dictionary DIR.dict of every option name and method/pattern word
seeds() {
	local dir=$1 tsv=$2 n=0 expect args w
	local -a argv
	mkdir -p "$dir" || exit 1
	while IFS=$'\t' read -r expect args; do
		case "$expect" in ''|'#'*) continue ;; esac
		eval "argv=($args)"
		n=$((n + 1))
		printf '%s\0' "${argv[@]}" >"$dir/bad-$n"
	done <"$tsv"
	n=0
	while read -r args; do
		eval "argv=($args)"
		n=$((n + 1))
		printf '%s\0' "${argv[@]}" >"$dir/good-$n"
	done <<-'EOF'
	--ksm-unmerge 1 -t 5 --verify --metrics --ksm-unmerge-bytes 8M
	--ksm-unmerge-method all --ksm-unmerge 2 -t 8
	--ksm-unmerge 0 --ksm-unmerge-ops 100 --ksm-unmerge-pattern mixed --metrics-brief -Y /tmp/x.yaml
	--ksm-unmerge 50% --timeout 1m --ksm-unmerge-bytes 5% --ksm-unmerge-method madvise,prctl,fork -K --times
	--ksm-unmerge=1 --timeout=2s --ksm-unmerge-no-klog --temp-path /tmp -v -q --log-brief --stderr
	--ksm-unmerge 1 --ksm-unmerge-hang-timeout 30 --ksm-unmerge-log /tmp/l.yaml --ksm-unmerge-pattern unique
	-qvKt 3 --ksm-unmerge 4096 --skip-silent --no-rand-seed
	-h
	EOF
	# dictionary: long option names from the sources, method/pattern words
	{
		grep -ho '"ksm-unmerge[a-z-]*' stress-ksm-unmerge.c | sed 's/^"/--/'
		sed -n 's/^	{ OPT_G_[a-z_]*, "\([a-z-]*\)".*/--\1/p' core-shim/core-opts.c
		for w in madvise prctl vmsplice gup uffd-wp mrelease fork mprotect \
			dontneed sparse thp all same few zero mixed unique \
			-t -Y -v -q -K -h = , % k m g s h d w y; do
			echo "$w"
		done
	} | sort -u | sed 's/.*/"&"/' >"$dir.dict"
}

if [ "$1" = "--seeds" ]; then
	seeds "$2" "$3"
	exit 0
fi

TIME=${FUZZ_OPTS_TIME:-10}
CC_FUZZ=${FUZZ_CC:-clang}
command -v "$CC_FUZZ" >/dev/null 2>&1 || { echo "SKIP: $CC_FUZZ not installed (Debian: apt-get install clang)"; exit 77; }
tmp=$(mktemp -d /tmp/fuzz-opts.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
echo 'int LLVMFuzzerTestOneInput(const unsigned char *d, unsigned long n) { (void)d; (void)n; return 0; }' >"$tmp/p.c"
if ! "$CC_FUZZ" -fsanitize=fuzzer,address,undefined -o "$tmp/p" "$tmp/p.c" >/dev/null 2>&1; then
	echo "SKIP: $CC_FUZZ cannot link -fsanitize=fuzzer (libFuzzer runtime missing)"
	exit 77
fi

log=$tmp/fuzz.log
start=$(date +%s)
if ! make --no-print-directory fuzz-opts FUZZ_CC="$CC_FUZZ" FUZZ_OPTS_TIME="$TIME" >"$log" 2>&1; then
	grep -E 'ERROR|SUMMARY|invariant|runtime error|Test unit written|==[0-9]+==' "$log" | head -30
	tail -5 "$log"
	echo "FAIL: fuzz-opts found a problem (see above; crash input in build/fuzz/)"
	exit 1
fi
runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")
rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log")
units=$(sed -n 's/^stat::new_units_added: *//p' "$log")
cov=$(grep -o 'cov: [0-9]*' "$log" | tail -1)
[ -n "$runs" ] && [ "$runs" -gt 1000 ] || { tail -5 "$log"; echo "FAIL: fuzzer ran only '${runs}' inputs"; exit 1; }
echo "fuzz-opts: $runs inputs in ${TIME}s ($rate/s), $cov, $units new units, no crash ($(( $(date +%s) - start ))s incl. build)"
exit 0
