#!/bin/bash
# tests/it/hygiene/fuzz-opts.sh: libFuzzer run (FUZZ_OPTS_TIME s, default 20) of the
# command line parser with the real stressor's option table
# (tests/fuzz/fuzz-opts.c via "make fuzz-opts"), seeded with every line of
# tests/data/bad-input.tsv and some good command lines.  Fails on a crash,
# sanitizer report, leak, timeout or broken invariant (see fuzz-opts.c),
# or when the fuzzer ran suspiciously few inputs.  Skips (77) when clang
# cannot link -fsanitize=fuzzer.
#
#   tests/it/hygiene/fuzz-opts.sh --seeds DIR TSV   (used by make) write the seeds
#
# Exit: 0 pass, 77 skip (reason printed), anything else fail.
# run-tests: no KSM lock (it never touches the host's KSM)

cd "$(dirname "$0")/../../.." || exit 2

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
	--ksm-unmerge 50% --timeout 1m --ksm-unmerge-bytes 5% --ksm-unmerge-method fork-zero -K --times
	--ksm-unmerge=1 --timeout=2s --ksm-unmerge-method=prctl --temp-path /tmp -v -q --log-brief --stderr
	--ksm-unmerge 1 --ksm-unmerge-sparse 64G --ksm-unmerge-method sparse --ksm-unmerge-pattern unique
	-qvKt 3 --ksm-unmerge 4096 --skip-silent --no-rand-seed
	-h
	EOF
	# dictionary: long option names from the sources, the method names
	# (the racer table: build/ksm-racers, or its rows' names in the source
	# when the tool is not built yet) and pattern words
	{
		echo --ksm-unmerge; echo --ksm-unmerge-ops
		sed -n 's/.*{ OPT_ksm_unmerge_[a-z_]*, *"\([a-z-]*\)".*/--\1/p' stress-ksm-unmerge.c
		sed -n 's/^	{ OPT_G_[a-z_]*, "\([a-z-]*\)".*/--\1/p' core-shim/core-opts.c
		if [ -x build/ksm-racers ]; then
			build/ksm-racers | cut -f1
		else
			sed -n 's/.*{ \.name = "\([a-z-]*\)".*/\1/p' stress-ksm-unmerge.c
		fi
		for w in all madvise prctl same few zero mixed unique \
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
. tests/lib/fuzz.sh
fuzz_require
fuzz_run fuzz-opts "$TIME" FUZZ_OPTS_TIME="$TIME"
checks_done
exit 0
