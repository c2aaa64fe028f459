#!/bin/bash
# tests/it/tools/integrate/stress-ng-series.sh: the stress-ng series is cut from the one
# file as tools/integrate/stress-ng-series says, and every cut builds.  Needs no
# stress-ng tree (tests/it/build/stress-ng-series.sh checks the series
# itself in one).  tools/integrate/stress-ng-integrate --states writes the stressor as
# of each patch; it checks that
#  - there is one file per patch of the manifest, and the last is
#    stress-ksm-unmerge.c byte for byte (the series adds up to the file);
#  - each patch's racer table keeps the racers of the patches before it
#    and adds those its manifest entry names (the base and the feature
#    patches before the first racer have none: no racer table, no racer
#    loop);
#  - each cut compiles with gcc (with stress-ng's PEDANTIC=1 warnings) and
#    clang (when installed), -O2 -Wall -Wextra -Werror against core-shim,
#    and links with build/libshim.a;
#    the base cut runs (--ksm-unmerge 1 -t 3: exit 0);
#  - the base cut is at most 1,200 lines and no patch after it (features,
#    racers) adds over 600 lines of the file (the series' patches, with
#    their man page lines, are held to the same caps by
#    tests/it/build/stress-ng-series.sh);
#  - no stub is reported stale (its function changed since the stub's
#    fingerprint was taken);
#  - canaries: a manifest that leaves a racer out, or names one twice, a
#    stub of no function, a trim that matches no line or a sub whose lines
#    are gone is refused (exit 2), a stub with another fingerprint is
#    reported, and an unused static function in a cut fails the compile
#    (the -Werror check can fail).
. "$(dirname "$0")/../../lib/lib.sh"

[ -r "$TOP/build/libshim.a" ] || fail "build first: $TOP/build/libshim.a missing"
INTEG=$TOP/tools/integrate/stress-ng-integrate
MANIFEST=$TOP/tools/integrate/stress-ng-series
ST=$TMPD/states

"$INTEG" --states "$ST" >"$TMPD/states.log" 2>&1 || { cat "$TMPD/states.log"; fail "--states: exit $?"; }
cat "$TMPD/states.log"
npatch=$(grep -c '^patch ' "$MANIFEST")
files=$(ls "$ST"/[0-9][0-9]-*.c)
check [ "$(echo "$files" | wc -l)" = "$npatch" ] || fail "$(echo "$files" | wc -l) cuts for $npatch patches"
last=$(echo "$files" | tail -1)
check cmp -s "$last" "$TOP/stress-ksm-unmerge.c" || fail "the last cut $(basename "$last") is not stress-ksm-unmerge.c"

# the racer tables grow as the manifest says
slugs=$(sed -n 's/^patch //p' "$MANIFEST")
prev=""
n=0
for slug in $slugs; do
	n=$((n + 1))
	f=$ST/$(printf %02d $n)-$slug.c
	check [ -f "$f" ] || fail "no cut $f"
	have=$(sed -n "s/^stress-ng-integrate: $(basename "$f"): [0-9]* lines, racers //p" "$TMPD/states.log")
	[ "$have" = none ] && have=""
	adds=$(awk -v s="$slug" '/^patch / { p = ($2 == s) } p && /^racers / { $1 = ""; print }' "$MANIFEST")
	for r in $prev $adds; do
		check grep -qw -- "$r" <<<"$have" || fail "$slug: racer $r missing from its table ($have)"
	done
	check [ "$(wc -w <<<"$have")" = "$(wc -w <<<"$prev $adds")" ] || fail "$slug: racers '$have', want '$prev $adds'"
	prev="$prev $adds"
done

# every cut builds with gcc and clang, and links
CFL="-std=gnu11 -O2 -Wall -Wextra -Werror -D_GNU_SOURCE -I$TOP/core-shim -I$TOP"
# gcc also with the warnings of stress-ng's make PEDANTIC=1 (V0.22.00-32)
PEDANTIC="-Wcast-qual -Wfloat-equal -Wmissing-declarations -Wmissing-format-attribute -Wpacked
	-Wredundant-decls -Wshadow -Wno-missing-field-initializers -Wno-missing-braces -Wno-sign-compare
	-Warray-bounds=2 -Wstringop-overflow -Wformat-overflow -Wmaybe-uninitialized -Wdouble-promotion
	-Wcast-align=strict -Wduplicated-cond -Warith-conversion -Wduplicated-branches -Wrestrict
	-Wfloat-conversion"
compilers=gcc
command -v clang >/dev/null && compilers="gcc clang" || echo "note: clang not installed, gcc only"
prev_lines=0
n=0
for f in $files; do
	n=$((n + 1))
	for cc in $compilers; do
		# gcc with the PEDANTIC warnings, and the object linked below; clang's
		# warnings are its front end's: no object needed
		extra="-fsyntax-only"
		[ $cc = gcc ] && extra="$PEDANTIC -c -o $TMPD/$cc.o"
		# shellcheck disable=SC2086
		check $cc $CFL $extra "$f" 2>"$TMPD/cc.log" ||
			{ head -20 "$TMPD/cc.log"; fail "$cc: $(basename "$f") does not compile warning-free"; }
	done
	check gcc -o "$TMPD/bin-$n" "$TMPD/gcc.o" "$TOP/build/libshim.a" -lbsd -lpthread -lm ||
		fail "$(basename "$f") does not link"
	lines=$(wc -l <"$f")
	echo "$(basename "$f"): $lines lines (+$((lines - prev_lines)))"
	if [ $n -gt 1 ]; then
		check [ $((lines - prev_lines)) -le 600 ] || fail "$(basename "$f") adds $((lines - prev_lines)) lines (> 600)"
	else
		check [ "$lines" -le 1200 ] || fail "$(basename "$f"): the base cut is $lines lines (> 1200)"
	fi
	prev_lines=$lines
done

# the base cut runs
(cd "$TMPD" && timeout 60 "$TMPD/bin-1" --ksm-unmerge 1 -t 3) \
	>"$TMPD/run.log" 2>&1
rc=$?
check [ $rc = 0 ] || { tail -20 "$TMPD/run.log"; fail "the base cut: --ksm-unmerge 1 -t 3: exit $rc"; }

# canaries: a racer left out, a racer twice, an unused function
first=$(awk '/^racers / { print $2; exit }' "$MANIFEST")
sed "s/^racers $first\$/racers/; s/^racers $first /racers /" "$MANIFEST" >"$TMPD/m.left"
"$INTEG" --states "$TMPD/c1" --manifest "$TMPD/m.left" >"$TMPD/c1.log" 2>&1
check [ $? = 2 ] && grep -q "racers in no patch: $first" "$TMPD/c1.log" ||
	{ cat "$TMPD/c1.log"; fail "a manifest without racer $first was not refused"; }
{ cat "$MANIFEST"; printf 'patch twice\nracers %s\nsubject x\nbody\nx\n.\n' "$first"; } >"$TMPD/m.twice"
"$INTEG" --states "$TMPD/c2" --manifest "$TMPD/m.twice" >"$TMPD/c2.log" 2>&1
check [ $? = 2 ] && grep -q "racer $first is in two patches" "$TMPD/c2.log" ||
	{ cat "$TMPD/c2.log"; fail "a manifest naming racer $first twice was not refused"; }
{ cat "$MANIFEST"; printf 'patch canary\nstub stress_ksm_unmerge_no_such\nstatic void x(void)\n{\n}\n.\nsubject x\nbody\nx\n.\n'; } >"$TMPD/m.stub"
"$INTEG" --states "$TMPD/c3" --manifest "$TMPD/m.stub" >"$TMPD/c3.log" 2>&1
check [ $? = 2 ] && grep -q "stub stress_ksm_unmerge_no_such' names no definition" "$TMPD/c3.log" ||
	{ cat "$TMPD/c3.log"; fail "a stub of no function was not refused"; }
{ cat "$MANIFEST"; printf 'patch canary\ntrim stress_ksm_unmerge_cycle no_such_statement\nsubject x\nbody\nx\n.\n'; } >"$TMPD/m.trim"
"$INTEG" --states "$TMPD/c4" --manifest "$TMPD/m.trim" >"$TMPD/c4.log" 2>&1
check [ $? = 2 ] && grep -q "trim stress_ksm_unmerge_cycle /no_such_statement/ matches no line" "$TMPD/c4.log" ||
	{ cat "$TMPD/c4.log"; fail "a trim that matches nothing was not refused"; }
{ cat "$MANIFEST"; printf 'patch canary\nsub stress_ksm_unmerge_cycle\n\tno_such_line;\n=>\n.\nsubject x\nbody\nx\n.\n'; } >"$TMPD/m.sub"
"$INTEG" --states "$TMPD/c5" --manifest "$TMPD/m.sub" >"$TMPD/c5.log" 2>&1
check [ $? = 2 ] && grep -q "sub stress_ksm_unmerge_cycle: its 1 line(s) before '=>' occur 0 times" "$TMPD/c5.log" ||
	{ cat "$TMPD/c5.log"; fail "a sub whose lines are gone was not refused"; }
# a stub written against another version of its function is reported
stub=$(awk '/^stub [a-z_]+ [0-9a-f]+$/ { print $2; exit }' "$MANIFEST")
sed -E "s/^stub $stub [0-9a-f]{12}\$/stub $stub 000000000000/" "$MANIFEST" >"$TMPD/m.stale"
"$INTEG" --states "$TMPD/c6" --manifest "$TMPD/m.stale" >"$TMPD/c6.log" 2>&1
check grep -q "stale stub? patch [a-z-]*: stub $stub: written against another version" "$TMPD/c6.log" ||
	{ cat "$TMPD/c6.log"; fail "a stub of another version of $stub was not reported"; }
checked
grep "stale stub" "$TMPD/states.log" && fail "a stub's function changed since the stub was written (above)"
{ cat "$ST/01-base.c"; printf 'static int stress_ksm_unmerge_canary(void)\n{\n\treturn 0;\n}\n'; } >"$TMPD/canary.c"
checked
gcc $CFL -c -o "$TMPD/canary.o" "$TMPD/canary.c" 2>/dev/null &&
	fail "an unused static function compiled: the cut's -Werror check cannot fail"

echo "it/tools/integrate/stress-ng-series.sh: ok ($npatch cuts)"
checks_done
