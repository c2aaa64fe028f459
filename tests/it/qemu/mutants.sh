#!/bin/bash
# tests/it/qemu/mutants.sh: make mutants' parts that need no kernel build:
#   1. tools/kernels/mutants/matrix classifies runs as the kill matrix says
#      (docs/mutants.md): an unknown stressor fail line, a panic, a hang, a
#      signal and a selftest "not ok" kill; a known-bug fail line, a
#      selftest line the unmutated kernel fails too, skipped and not-run
#      commands do not; the summary counts the issue's figures;
#   2. every tools/kernels/mutants/*.patch has the one-line header and names one
#      of the stressor's racers;
#   3. tools/kernels/ksm-mutants rejects bad input with one line and exit 64.
# Boots nothing: runs under make test.

cd "$(dirname "$0")/../../.." || exit 1
. tests/lib/checks.sh
T=$(mktemp -d /tmp/it-mutants.XXXXXX) || exit 1
trap 'rm -rf "$T"' EXIT
PASS=0
FAIL=0

ok() { echo "ok   $*"; PASS=$((PASS + 1)); }
bad() { echo "FAIL $*"; FAIL=$((FAIL + 1)); }

# run KERNEL BOOT NAME VERDICT STATUS SECS TEXT: one fake run
run() {
	mkdir -p "$T/o/$1/boot-$2/$3"
	printf '%s\n' "$7" > "$T/o/$1/boot-$2/$3/stress.txt"
	[ -f "$T/o/$1/runs.tsv" ] || printf 'boot\tname\tstatus\tverdict\tsecs\n' > "$T/o/$1/runs.tsv"
	printf '%s\t%s\t%s\t%s\t%s\n' "$2" "$3" "$5" "$4" "$6" >> "$T/o/$1/runs.tsv"
}

mkdir -p "$T/o"
echo 'KSM zero pages charged at fork' > "$T/o/known-re"
{
	printf 'kernel\tpatch\tracer\tbreaks\texpect\tbuild\n'
	printf 'base\t-\t\tunmutated: Linux 6.12.118\t-\tbuilt in 1 s\n'
	printf 'mA\tA.patch\tthp\tmm/ksm.c f(): breaks A\tkillable: x\tbuilt in 1 s\n'
	printf 'mB\tB.patch\tgup\tmm/gup.c g(): breaks B\tkillable: y\tbuilt in 1 s\n'
	printf 'mC\tC.patch\tthp\tmm/ksm.c h(): breaks C\texpected equivalent: z\tbuilt in 1 s\n'
	printf 'mD\tD.patch\tgup\tmm/gup.c i(): breaks D\tkillable: w\tbuilt in 1 s\n'
} > "$T/o/kernels.tsv"
KNOWN='stress-ng: fail:  [1] ksm-unmerge: KSM zero pages charged at fork: a child was charged 3 but maps 0'
run base 1 default.1 passed 2 60 "$KNOWN"
run base 1 default.2 passed 0 60 'stress-ng: info: ok'
run base 1 kft.1 passed 0 40 'ok 1 Pages were unmerged'
run base 1 cow.1 failed 1 90 'not ok 7 vmsplice() + unmap in child'
# mA: the default job kills twice (a fail line; a hang), racer once
run mA 1 default.1 failed 2 20 'stress-ng: fail:  [5] ksm-unmerge: page 3 is still a KSM page after unmerge'
run mA 1 default.2 no-result - - ''
mkdir -p "$T/o/mA/boot-1" && echo 'BUG: soft lockup - CPU#0 stuck for 22s!' > "$T/o/mA/boot-1/console.log"
run mA 2 racer.1 passed 0 30 ''
run mA 2 racer.2 failed 2 12 'stress-ng: fail:  [5] ksm-unmerge: thp racer: chunk 1 still has KSM pages'
run mA 2 racer.3 passed 0 30 ''
run mA 2 kft.1 passed 0 40 'ok 1 Pages were unmerged'
# mB: only known lines in the default job (not a kill); cow's base failure
# is no kill, a new cow line is; the racer is killed by a signal
run mB 1 default.1 passed 2 60 "$KNOWN"
run mB 1 default.2 passed 2 60 "$KNOWN"
run mB 1 default.3 passed 0 60 ''
run mB 1 racer.1 failed 137 5 'killed'
run mB 1 racer.2 failed 139 5 'segv'
run mB 1 racer.3 skipped 0 0 ''
run mB 1 kft.1 passed 0 40 'ok 1'
run mB 1 cow.1 failed 1 90 "$(printf 'not ok 7 vmsplice() + unmap in child\nnot ok 9 R/O pin of a KSM page')"
# mC: expected equivalent, survives; mD: panics under kft
run mC 1 default.1 passed 0 60 ''
run mC 1 zero.1 passed 3 31 'stress-ng: info:  [7] ksm-unmerge: no merge/unmerge cycle verified: the run ended during the page scan'
run mD 1 default.1 failed 2 20 'stress-ng: fail:  [5] ksm-unmerge: gup racer: page 2 still KSM while pinned'
run mD 1 kft.1 panic - - ''
mkdir -p "$T/o/mD/boot-1" && echo 'kernel BUG at mm/gup.c:909!' > "$T/o/mD/boot-1/console.log"

if tools/kernels/mutants/matrix "$T/o" > "$T/m.md" 2> "$T/m.err"; then
	ok "matrix: ran"
else
	bad "matrix: failed: $(head -n 3 "$T/m.err")"
fi
row() { grep "^| $1 |" "$T/m.md"; }
row base | grep -q 'survived 0/2' && row base | grep -q 'survived 0/1 (90 s) |' &&
	grep -q 'base\*\* cow fails on the unmutated kernel (not counted against the mutants): `not ok vmsplice' "$T/m.md" &&
	ok "base: a known-bug line is not a kill; its selftest failures are listed" || bad "base row: $(row base)"
row mA | grep -q '\*\*killed\*\* 2/2' && row mA | grep -q '`thp`: \*\*killed\*\* 1/3' &&
	ok "mA: a fail line and a hang kill the default job; the racer 1 of 3" || bad "mA row: $(row mA)"
grep -q 'mA\*\* default: `stress-ng: fail:  \[5\] ksm-unmerge: page 3' "$T/m.md" &&
	ok "mA: the first fail line is quoted" || bad "mA: fail line missing"
row mC | grep -q 'survived 0/1 (60 s) | `thp`: - | - |' &&
	grep -q '^- mC zero.1: exit status 3, no verdict: ksm-unmerge: no merge/unmerge cycle verified' "$T/m.md" &&
	ok "mC: a run that verified nothing (exit 3) is neither kill nor survival, and is listed" ||
	bad "mC: exit 3: $(row mC); $(grep '^- mC' "$T/m.md")"
row mB | grep -q 'survived 0/3' && row mB | grep -q '`gup`: \*\*killed\*\* 2/2' &&
	ok "mB: known lines survive, signals kill, a skipped run does not count" || bad "mB row: $(row mB)"
grep -q 'mB\*\* cow: `not ok R/O pin of a KSM page`' "$T/m.md" && ! grep -q 'mB\*\* cow: `not ok vmsplice' "$T/m.md" &&
	ok "mB: a selftest line that fails on base too is not a kill" || bad "mB cow: $(grep 'mB\*\* cow' "$T/m.md")"
grep -q 'mD\*\* kft: `kernel panic: kernel BUG at mm/gup.c:909!`' "$T/m.md" &&
	ok "mD: a panic under a selftest kills, with the crash line" || bad "mD kft: $(grep 'mD\*\*' "$T/m.md")"
grep -q 'default job kills in >= 1 run: 2 of 3 non-equivalent (67 %); survivors: mB' "$T/m.md" &&
	grep -q 'kills in >= 2 runs: 2 of 3 (67 %); the others: mD' "$T/m.md" &&
	grep -q '1 expected equivalent: mC' "$T/m.md" &&
	grep -q 'gup: 1 of 1 (mB killed)' "$T/m.md" && grep -q 'ksm_functional_tests 1 (of 3 it ran on)' "$T/m.md" &&
	ok "summary: the done-when figures" || { bad "summary:"; sed -n '/^Summary/,$p' "$T/m.md" | sed 's/^/     | /'; }
awk -F'\t' '$1 == "mA" && $3 == "default.2" && $4 == 1' "$T/o/results.tsv" | grep -q . &&
	ok "results.tsv: one row per run" || bad "results.tsv: no mA default.2 kill row"

# 2. the mutants' headers
n=0
racers=$(sed -n '/^static const stress_ksm_unmerge_racer_t stress_ksm_unmerge_racers\[/,/^};/p' \
	stress-ksm-unmerge.c | sed -n 's/.*{ \.name = "\([a-z-]*\)".*/\1/p' | tr '\n' ' ')
[ "$(wc -w <<< "$racers")" -ge 14 ] || bad "the racers table yields only '$racers'"
for p in tools/kernels/mutants/*.patch; do
	h=$(head -n 1 "$p")
	r=$(sed -n 's/.*| racer: \([a-z-]*\) |.*/\1/p' <<< "$h")
	if ! [[ $h =~ ^$(basename "$p" .patch):\ breaks:\ [^|]+\ \|\ racer:\ [a-z-]+\ \|\ expect:\ .+ ]] ||
	   ! [[ " $racers " == *" $r "* ]] || ! grep -q '^+++ b/' "$p"; then
		bad "$p: header '$h' (want 'NAME: breaks: ... | racer: <one of: $racers> | expect: ...')"
	fi
	n=$((n + 1))
done
[ "$n" -ge 20 ] && ok "$n mutant patches with a header naming a racer" || bad "only $n mutant patches"
covered=0
for r in $racers; do
	grep -lq "| racer: $r |" tools/kernels/mutants/*.patch && covered=$((covered + 1)) ||
		bad "no mutant is aimed at racer $r"
done
[ "$covered" -eq "$(wc -w <<< "$racers")" ] && ok "every racer ($covered) has a mutant aimed at it"

# 3. bad input
for args in "--bogus" "--mutant $T/none.patch" "--only" "--out"; do
	# shellcheck disable=SC2086
	tools/kernels/ksm-mutants $args > "$T/out" 2> "$T/err"
	rc=$?
	[ "$rc" -eq 64 ] && [ "$(wc -l < "$T/err")" -eq 1 ] && grep -q '^ksm-mutants: error: ' "$T/err" &&
		ok "ksm-mutants $args: exit 64, one line: $(cat "$T/err")" ||
		bad "ksm-mutants $args: exit $rc, $(wc -l < "$T/err") line(s)"
done
MUTANTS_RUNS=x tools/kernels/ksm-mutants > "$T/out" 2> "$T/err"
[ $? -eq 64 ] && grep -q "malformed RUNS 'x'" "$T/err" && ok "MUTANTS_RUNS=x: exit 64" ||
	bad "MUTANTS_RUNS=x: $(cat "$T/err")"

echo "it/qemu/mutants.sh: $PASS passed, $FAIL failed"
checked $((PASS + FAIL))
checks_done
[ "$FAIL" -eq 0 ]
