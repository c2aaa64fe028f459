#!/bin/bash
# tests/it/runner/runner-valgrind.sh: the dummy runner (parent, instances and klog
# reader) has no valgrind memcheck errors and no definite leaks for a
# metrics+YAML+times run, a klog-check run, a skipped run, a SIGTERM stop
# and a bad command line.

cd "$(dirname "$0")/../../.." || exit 1
. tests/lib/runner.sh
command -v valgrind >/dev/null || { echo "valgrind not installed"; exit 77; }
tmp=$(mktemp -d /tmp/it-valgrind.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
VG="valgrind -q --tool=memcheck --trace-children=yes --child-silent-after-fork=no
	--leak-check=full --errors-for-leak-kinds=definite --error-exitcode=99"

# vg NAME EXPECTED-RC ARGS...: run under valgrind, check rc and log
vg() {
	local name=$1 want=$2 rc
	shift 2
	checked
	$VG --log-file="$tmp/vg-$name.%p" "$R" "$@" >"$tmp/out-$name" 2>&1
	rc=$?
	if [ "$rc" -ne "$want" ]; then
		echo "FAIL: $name: exit $rc, expected $want"
		cat "$tmp"/vg-"$name".* 2>/dev/null | head -40
		errors=$((errors + 1))
	elif grep -q '==[0-9]*==' "$tmp"/vg-"$name".* 2>/dev/null; then
		echo "FAIL: $name: valgrind reports:"
		cat "$tmp"/vg-"$name".* | head -40
		errors=$((errors + 1))
	else
		echo "$name: clean"
	fi
}

DUMMY_METRICS=1 vg metrics 0 --ksm-unmerge 2 -t 2 --metrics --times -Y "$tmp/o.yaml"
vg klog 0 --ksm-unmerge 1 -t 1 -K --metrics-brief
DUMMY_MODE=skip vg skip 0 --ksm-unmerge 2 -t 1
DUMMY_MODE=fail DUMMY_INSTANCE=0 vg fail 2 --ksm-unmerge 2 -t 1
vg badinput 1 --ksm-unmerge 1 --timeout 5x
vg help 0 -h

# SIGTERM mid-run
$VG --log-file="$tmp/vg-term.%p" "$R" --ksm-unmerge 2 -t 60 >"$tmp/out-term" 2>&1 &
pid=$!
sleep 3
kill -TERM "$pid"
wait "$pid"
rc=$?
checked
if [ "$rc" -ne 0 ] || grep -q '==[0-9]*==' "$tmp"/vg-term.* 2>/dev/null; then
	echo "FAIL: term: exit $rc"; cat "$tmp"/vg-term.* | head -40
	errors=$((errors + 1))
else
	echo "term: clean"
fi

[ "$errors" -eq 0 ] || { echo "$errors valgrind run(s) failed"; exit 1; }
echo "no memcheck errors"
checks_done
