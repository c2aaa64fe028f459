#!/bin/bash
# tests/it/hygiene/cppcheck.sh: static checks of the stressor,
# core-shim/*.c, klog/*.c, tools/*/*.c, tests/fuzz/fuzz-opts.c and tests/lib/fakeproc.c:
#   1. cppcheck --enable=warning,performance,portability, clean.  The
#      Linux build configuration is checked (-D__linux__ -DMADV_MERGEABLE
#      -DMADV_UNMERGEABLE: without system headers cppcheck would otherwise
#      only see the "unimplemented" #else branch of the stressor).  False
#      positives: inline in files we own, else tests/cppcheck.suppress.
#   2. clang -Wall -Wextra -Werror -fsyntax-only of the same files (a
#      second compiler's warnings; "make CC=clang" must build).
# A canary with a known out-of-bounds write proves cppcheck reports errors
# with these options.  Skips (77) when cppcheck is missing; step 2 is
# skipped (noted) when clang is missing.
#
# Exit: 0 pass, 77 skip (reason printed), anything else fail.
# run-tests: no KSM lock (it never touches the host's KSM)

cd "$(dirname "$0")/../../.." || exit 2
. tests/lib/checks.sh
command -v cppcheck >/dev/null 2>&1 || { echo "SKIP: cppcheck not installed (Debian: apt-get install cppcheck)"; exit 77; }
tmp=$(mktemp -d /tmp/hyg-cppcheck.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
start=$SECONDS
SRC="stress-ksm-unmerge.c $(ls core-shim/*.c klog/*.c tools/*/*.c 2>/dev/null) tests/fuzz/fuzz-opts.c tests/lib/fakeproc.c"
CPPCHECK=(cppcheck --enable=warning,performance,portability --error-exitcode=1
	--inline-suppr -I core-shim -I . --std=c11 --suppress=missingIncludeSystem
	--suppressions-list=tests/cppcheck.suppress -q
	-D__linux__ -DMADV_MERGEABLE=12 -DMADV_UNMERGEABLE=13)
errors=0

# canary: cppcheck must flag an obvious out-of-bounds write
cat >"$tmp/canary.c" <<'EOF'
int canary(void)
{
	char buf[4];

	buf[4] = 0;
	return buf[0];
}
EOF
if "${CPPCHECK[@]}" "$tmp/canary.c" >"$tmp/canary.out" 2>&1 ||
   ! grep -q arrayIndexOutOfBounds "$tmp/canary.out"; then
	cat "$tmp/canary.out"
	echo "FAIL: cppcheck canary: out-of-bounds write not reported"
	exit 1
fi
checked

# 1. cppcheck
checked
# shellcheck disable=SC2086
if ! "${CPPCHECK[@]}" $SRC >"$tmp/cppcheck.out" 2>&1; then
	cat "$tmp/cppcheck.out"
	echo "cppcheck: $(grep -c '^[^ ].*: \(error\|warning\|performance\|portability\):' "$tmp/cppcheck.out") finding(s)"
	errors=$((errors + 1))
else
	echo "cppcheck: clean ($(echo $SRC | wc -w) files, $((SECONDS - start)) s)"
fi

# 2. clang -Werror
if command -v clang >/dev/null 2>&1; then
	n=0
	for f in $SRC; do
		checked
		clang -std=gnu11 -D_GNU_SOURCE -Icore-shim -I. -Wall -Wextra -Werror \
			-fsyntax-only "$f" >>"$tmp/clang.out" 2>&1 || n=$((n + 1))
	done
	if [ "$n" -ne 0 ]; then
		grep -E 'error:' "$tmp/clang.out" | head -20
		echo "clang -Werror: $n file(s) do not compile"
		errors=$((errors + 1))
	else
		echo "clang -Wall -Wextra -Werror: clean"
	fi
else
	echo "clang not installed: clang -Werror check skipped"
fi

[ "$errors" -eq 0 ] || { echo "FAIL: static checks found problems (above)"; exit 1; }
echo "static checks: clean ($((SECONDS - start)) s)"
checks_done
exit 0
