#!/bin/bash
# tests/it/hygiene/build-outputs.sh: every build output goes under build/
# (the tests' own under tests/build/), never into a source folder.  A copy
# of the tree's tracked files (as a clean clone has them, with the working
# tree's edits) is built with what make, make test and make static build
# (make build-tests static build/unmerge-ref); then every file in the copy
# that git does not track must lie under build/ or tests/build/.
# Canaries: an object dropped into core-shim/ of the copy is flagged, one
# under build/ is not.
#
# Exit: 0 pass, 77 skip (not a git checkout), anything else fail.
# run-tests: no KSM lock (it never touches the host's KSM)

cd "$(dirname "$0")/../../.." || exit 2
. tests/lib/checks.sh
command -v git >/dev/null && git rev-parse --is-inside-work-tree >/dev/null 2>&1 ||
	{ echo "SKIP: not a git checkout"; exit 77; }
tmp=$(mktemp -d /tmp/hyg-outputs.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
errors=0

# tracked files present in the working tree, copied with their edits
git ls-files -z | xargs -0 -I{} sh -c '[ -e "$1" ] && printf "%s\0" "$1"' _ {} >"$tmp/list"
tr '\0' '\n' <"$tmp/list" | sort >"$tmp/tracked"

# strays DIR: files in DIR that are neither tracked nor under build/ or
# tests/build/
strays() {
	(cd "$1" && find . -type f -printf '%P\n' | sort) |
		comm -23 - "$tmp/tracked" | grep -vE '^(build|tests/build)/' || true
}

mkdir "$tmp/tree" && tar --null -T "$tmp/list" -cf - | tar -xf - -C "$tmp/tree" -o ||
	{ echo "FAIL: cannot copy the tracked files"; exit 1; }
check make -C "$tmp/tree" -s -j2 build-tests static build/unmerge-ref >"$tmp/make.log" 2>&1 ||
	{ echo "FAIL: the build failed:"; grep -v 'statically linked' "$tmp/make.log" | tail -20; exit 1; }
out=$(strays "$tmp/tree")
check [ -z "$out" ] || {
	echo "FAIL: the build wrote outside build/ and tests/build/:"
	echo "$out"
	errors=$((errors + 1))
}
check [ -x "$tmp/tree/build/stress-ksm-unmerge" ] ||
	{ echo "FAIL: no build/stress-ksm-unmerge after the build"; errors=$((errors + 1)); }

# canaries, in the built copy
: >"$tmp/tree/core-shim/canary.o"
: >"$tmp/tree/build/canary.o"
out=$(strays "$tmp/tree")
check [ "$out" = "core-shim/canary.o" ] ||
	{ echo "FAIL: canaries: expected core-shim/canary.o alone, got: ${out:-nothing}"; errors=$((errors + 1)); }

echo "build of $(grep -c . "$tmp/tracked") tracked files: $(cd "$tmp/tree" && find build tests/build -type f | wc -l) outputs under build/ and tests/build/"
[ "$errors" = 0 ] || { echo "FAIL: $errors build-output checks failed"; exit 1; }
checks_done
