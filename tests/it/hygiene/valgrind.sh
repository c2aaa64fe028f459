#!/bin/bash
# tests/it/hygiene/valgrind.sh: valgrind memcheck of a short real run of
# the stressor (parent, instance and every forked child; valgrind follows
# fork() and checks leaks at _exit too):
#   --ksm-unmerge 1 -t 4 --ksm-unmerge-bytes 4M --verify --metrics --ksm-unmerge-method madvise
# under /tmp/ksm-dev.lock (held by the whole script).  Fails on any memcheck error or definite leak in
# any process (--error-exitcode=99, and every per-pid log's "ERROR SUMMARY"
# must be 0), or if the run itself does not succeed.  A canary first
# proves that an invalid write in a forked child is reported.  The tests'
# dummy runner is covered by tests/it/runner/runner-valgrind.sh; this one runs the
# real stressor.  Skips (77) when valgrind is missing.
#
# Exit: 0 pass, 77 skip (reason printed), anything else fail.

. "$(dirname "$0")/../../lib/lib.sh"
cd "$TOP" || exit 2
command -v valgrind >/dev/null 2>&1 || skip "valgrind not installed (Debian: apt-get install valgrind)"
VG=(valgrind --tool=memcheck --trace-children=yes --child-silent-after-fork=no
	--error-exitcode=99 --leak-check=full --errors-for-leak-kinds=definite
	--show-leak-kinds=definite)

. "$(dirname "$0")/../../lib/lock.sh"

# the whole script holds /tmp/ksm-dev.lock (the knob snapshot too); re-exec
# under flock unless an ancestor (tests/run-tests) already holds it
if ! lock_held; then
	command -v flock >/dev/null 2>&1 || skip "flock(1) not installed"
	rm -rf "$TMPD"
	exec flock "$KSM_LOCK" bash "$0" "$@"
fi

# vg_errors PREFIX: print the logs of processes with errors, true if any
vg_errors() {
	local f bad=1
	for f in "$1".*; do
		[ -f "$f" ] || continue
		if ! grep -q 'ERROR SUMMARY: 0 errors' "$f"; then
			echo "--- $f"; grep -v '^==[0-9]*== *$' "$f" | head -60; bad=0
		fi
	done
	return $bad
}

# canary: an invalid write in a forked child must be reported
cat >"$TMPD/canary.c" <<'EOF'
#include <stdlib.h>
#include <unistd.h>
#include <sys/wait.h>
int main(void)
{
	if (fork() == 0) {
		char *p = malloc(8);
		p[8] = 1;
		free(p);
		_exit(0);
	}
	(void)wait(NULL);
	return 0;
}
EOF
gcc -O0 -g -o "$TMPD/canary" "$TMPD/canary.c" || fail "cannot build the valgrind canary"
"${VG[@]}" --log-file="$TMPD/canary.%p" "$TMPD/canary" >/dev/null 2>&1
vg_errors "$TMPD/canary" >/dev/null || fail "canary: memcheck missed an invalid write in a forked child"

require_ksm
before=$(knobs)
start=$SECONDS
timeout --kill-after=10 90 "${VG[@]}" --log-file="$TMPD/vg.%p" \
	"$STRESSOR" --ksm-unmerge 1 -t 4 --ksm-unmerge-bytes 4M --verify --metrics --ksm-unmerge-method madvise \
	>"$TMPD/out" 2>&1
rc=$?
secs=$((SECONDS - start))
nlogs=$(ls "$TMPD"/vg.* 2>/dev/null | wc -l)
if vg_errors "$TMPD/vg"; then
	echo "FAIL: memcheck errors (above), exit $rc"
	exit 1
fi
check [ "$rc" -eq 0 ] || { tail -15 "$TMPD/out"; fail "run under valgrind exited $rc"; }
check grep -q "successful run completed" "$TMPD/out" || { tail -10 "$TMPD/out"; fail "no 'successful run completed'"; }
check [ "$nlogs" -ge 2 ] || fail "only $nlogs valgrind log(s): the instance was not traced"
check [ "$(knobs)" = "$before" ] || fail "KSM knobs changed: $before -> $(knobs)"
unhandled=$(cat "$TMPD"/vg.* | grep -o 'unhandled amd64-linux syscall: [0-9]*' | sort -u | tr '\n' ' ')
[ -z "$unhandled" ] || echo "note: valgrind does not know: $unhandled"
echo "valgrind: $nlogs processes, 0 errors, 0 definite leaks ($secs s)"
checks_done
exit 0
