# tests/lib/runner.sh: what the tests of the runner with the dummy stressor
# (tests/it/runner/*.sh) share.  Source it from the top of the tree: it
# sources checks.sh, sets R (tests/build/dummy-runner, which must be built)
# and errors, and defines fail(), which counts a failure and goes on.
. tests/lib/checks.sh
R=tests/build/dummy-runner
[ -x "$R" ] || { echo "$R not built"; exit 1; }
errors=0

fail() {
	echo "FAIL: $*"
	errors=$((errors + 1))
}
