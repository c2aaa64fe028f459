#!/bin/bash
# tests/it/klog/normalise.sh: equivalence test of the kernel-log check's
# LKP key normaliser (the regex rule table in klog/klog-check.c).
# tests/build/klog-normalise runs it over a fixed set of 300,731 lines
# (tests/data/corpus/klog and seeded mutations of it); the output must hash to
# tests/data/fixtures/klog/normalise.sha256, the output of the hand-written
# scanners the table replaced.  After a deliberate rule change, diff the
# old and new outputs (klog-normalise tests/data/corpus/klog) line by line,
# check each changed key against LKP, then update the digest.
# Exit: 0 pass, else fail.

cd "$(dirname "$0")/../../.." || exit 2
. tests/lib/checks.sh
BIN=tests/build/klog-normalise
make -s "$BIN" >/dev/null || { echo "FAIL: cannot build $BIN"; exit 1; }
tmp=$(mktemp /tmp/it-klog-normalise.XXXXXX)
trap 'rm -f "$tmp"' EXIT
if ! check ./"$BIN" tests/data/corpus/klog >"$tmp"; then
	echo "FAIL: $BIN exited $?"
	exit 1
fi
lines=$(wc -l <"$tmp")
want=$(cat tests/data/fixtures/klog/normalise.sha256)
got=$(sha256sum <"$tmp" | cut -d' ' -f1)
echo "normaliser: $lines lines, sha256 $got"
if ! check [ "$lines" -eq 300731 ]; then
	echo "FAIL: $lines output lines, expected 300731"
	exit 1
fi
if ! check [ "$got" = "$want" ]; then
	echo "FAIL: normaliser output differs from the reference (sha256 $want)"
	exit 1
fi
echo "PASS: identical keys on 300731 lines"
checks_done
