# tests/lib/checks.sh: count the assertions an integration script makes, so
# tests/run-tests can refuse a script that passed without checking anything.
# Source it (tests/lib/lib.sh does).  Prefix an assertion with "check":
#     check [ "$rc" = 0 ] || fail "exit $rc"
# count a loop's assertions with "checked N", and end a passing script with
# "checks_done", which prints the line run-tests requires: "checks: N".
CHECKS=0

# check CMD...: run one assertion, count it, return its status
check() {
	CHECKS=$((CHECKS + 1))
	"$@"
}

# checked N: count N assertions made elsewhere (a loop, a python block)
checked() {
	CHECKS=$((CHECKS + ${1:-1}))
}

# checks_done: print "checks: N" (tests/run-tests fails a passing script
# that printed no such line, or N = 0)
checks_done() {
	echo "checks: $CHECKS"
}
