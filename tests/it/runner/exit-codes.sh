#!/bin/bash
# tests/it/runner/exit-codes.sh: runner behaviour with the dummy stressor
# (tests/build/dummy-runner): exit codes and summary lines per stressor
# outcome, init/deinit called exactly once, --ksm-unmerge-ops split,
# default timeout line, help, and the 0-day command line.

cd "$(dirname "$0")/../../.." || exit 1
. tests/lib/runner.sh
tmp=$(mktemp -d /tmp/it-exit.XXXXXX)
trap 'rm -rf "$tmp"' EXIT

# expect MODE RC SUMMARY-REGEX [args...]: run dummy in MODE, check rc,
# a line matching the regex, init/deinit once each
expect() {
	local mode=$1 want=$2 re=$3 rc
	shift 3
	: >"$tmp/trace"
	DUMMY_MODE=$mode DUMMY_INSTANCE=0 DUMMY_TRACE="$tmp/trace" \
		timeout 30 "$R" --ksm-unmerge 2 -t 1 "$@" >"$tmp/out" 2>&1
	rc=$?
	check [ "$rc" -eq "$want" ] || fail "$mode: exit $rc, expected $want"
	check grep -Eq -- "$re" "$tmp/out" || fail "$mode: no line matching '$re'"
	if [ "$mode" = skip ]; then
		check [ -s "$tmp/trace" ] && fail "skip: init or run called"
	else
		check [ "$(grep -c '^init 2$' "$tmp/trace")" = 1 ] || fail "$mode: init not called once"
		check [ "$(grep -c '^deinit' "$tmp/trace")" = 1 ] || fail "$mode: deinit not called once"
	fi
	checked; grep -Eq "(successful|unsuccessful) run completed in" "$tmp/out" || fail "$mode: no final line"
}

expect ok 0 '\] passed: 2: ksm-unmerge \(2\)$'
expect fail 2 'terminated with an error, exit status=2 \(stressor failed\)$'
expect fail 2 '\] failed: 1: ksm-unmerge \(1\)$'
expect fail 2 '\] unsuccessful run completed in'
expect skip 0 '\] skipped: 2: ksm-unmerge \(2\)$'
expect skip 0 '\] dispatching hogs:$'
expect noresource 3 'aborted early, no system resources$'
expect noresource 3 '\] skipped: 2: ksm-unmerge \(2\)$'
expect notimpl 0 '\] skipped: 2: ksm-unmerge \(2\)$'
expect notready 7 '\] metrics untrustworthy: 2: ksm-unmerge \(2\)$'
expect notready 7 'bogo-ops counter in non-ready state'
expect early 0 'WARNING: finished prematurely after just'
# a SIGKILLed instance passes, as in stress-ng (stress_wait_status()): said
# only at debug level; the stressor must make a kill it did not want fail
expect kill 0 '\] passed: 2: ksm-unmerge \(2\)$'
expect kill 0 'debug: \[[0-9]+\] ksm-unmerge: \[[0-9]+\] possibly killed by the OOM killer$' -v
expect kill 0 'debug: \[[0-9]+\] ksm-unmerge: \[[0-9]+\] terminated on signal 9 .SIGKILL.$' -v
DUMMY_MODE=kill DUMMY_INSTANCE=0 timeout 30 "$R" --ksm-unmerge 2 -t 1 >"$tmp/out" 2>&1
check grep -q 'OOM killer\|SIGKILL' "$tmp/out" && fail "kill: a debug line printed without -v"
expect segv 2 '\] failed: 1: ksm-unmerge \(1\)$'
expect ok 0 '^stress-ng: info:  \[[0-9]+\] setting to a 1 sec run per stressor$'
expect ok 0 '^stress-ng: info:  \[[0-9]+\] dispatching hogs: 2 ksm-unmerge$'

# ops: totals split exactly across instances, no timeout: default 1 day
DUMMY_SLEEP_US=100 timeout 30 "$R" --ksm-unmerge 3 --ksm-unmerge-ops 100 \
	--metrics-brief -Y "$tmp/ops.yaml" >"$tmp/out" 2>&1 || fail "ops run exit $?"
check grep -q '\] defaulting to a 1 day run per stressor$' "$tmp/out" || fail "no default timeout line"
row=$(grep -E '\] ksm-unmerge +[0-9]+ ' "$tmp/out")
checked; [ "$(echo "$row" | awk '{print $5}')" = 100 ] || fail "ops total not 100: $row"
check grep -q 'finished prematurely' "$tmp/out" && fail "ops run warned about premature finish"
ops=$(python3 -c 'import sys,yaml; d=yaml.load(open(sys.argv[1]), Loader=yaml.CSafeLoader); print(sorted(i["bogo-ops"] for i in d["metrics"][0]["instances"]))' "$tmp/ops.yaml")
check [ "$ops" = "[33, 33, 34]" ] || fail "per-instance ops $ops, expected [33, 33, 34]"

# the lkp/0-day command line (with an ops limit so it ends quickly)
DUMMY_SLEEP_US=100 timeout 30 "$R" --timeout 60 --times --verify --metrics --no-rand-seed \
	--ksm-unmerge-method all --ksm-unmerge 2 --ksm-unmerge-ops 20 >"$tmp/out" 2>&1 ||
	fail "0-day line exit $?"
check grep -q '\] setting to a 1 min run per stressor$' "$tmp/out" || fail "0-day: no setting line"
check grep -q '\] for a [0-9.]*s run time:$' "$tmp/out" || fail "0-day: no --times block"

# help
"$R" -h >"$tmp/out" 2>&1 || fail "help exit $?"
for o in --timeout --metrics-brief --yaml --klog-check --ksm-unmerge-ops --ksm-unmerge-method; do
	check grep -q -- "$o" "$tmp/out" || fail "help lacks $o"
done

# --quiet: nothing on stdout for a good run; --stderr moves log lines
"$R" --ksm-unmerge 1 -t 1 -q >"$tmp/out" 2>&1 || fail "quiet exit $?"
check [ -s "$tmp/out" ] && fail "--quiet printed: $(head -1 "$tmp/out")"
"$R" --ksm-unmerge 1 -t 1 --stderr >"$tmp/out" 2>"$tmp/err" || fail "stderr exit $?"
check [ -s "$tmp/out" ] && fail "--stderr still wrote stdout"
check grep -q 'successful run completed' "$tmp/err" || fail "--stderr: no summary on stderr"

# --status S: stress-ng's status line every S seconds; --log-file F: every
# message also in F (appended)
echo "line before the run" >"$tmp/log"
"$R" --ksm-unmerge 2 -t 3 --status 1 --log-file "$tmp/log" >"$tmp/out" 2>&1 ||
	fail "status/log-file exit $?"
n=$(grep -cE '\] status: 2 run, 0 exit, 0 reap, 0 fail, 0 SIGALRM, [0-9]+ secs?$' "$tmp/out")
[ "$n" -ge 2 ] || fail "--status 1 in a 3 s run: $n status lines"
[ "$(head -1 "$tmp/log")" = "line before the run" ] || fail "--log-file truncated the file"
[ "$(tail -n +2 "$tmp/log")" = "$(cat "$tmp/out")" ] || fail "--log-file content differs from stdout"

# a stress-ng option the shim does not implement is refused by name
for o in "--sequential 2" "--ksm" "-x cpu" "--timestamp" "--job=f"; do
	# shellcheck disable=SC2086 # o is an option and its value
	"$R" --ksm-unmerge 1 -t 1 $o >"$tmp/out" 2>&1
	rc=$?
	name=$(echo "$o" | sed 's/^-x.*/-x (--exclude)/; s/^\(--[a-z]*\)[ =].*/\1/')
	[ "$rc" = 1 ] || fail "$o: exit $rc"
	[ "$(wc -l <"$tmp/out")" = 1 ] && grep -q "option $name is a stress-ng option this standalone build does not implement" "$tmp/out" ||
		fail "$o: $(cat "$tmp/out")"
done

[ "$errors" -eq 0 ] || { echo "$errors check(s) failed"; exit 1; }
echo "runner exit codes and summaries OK"
checks_done
