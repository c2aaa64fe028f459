#!/bin/bash
# tests/it/runner/klog-check.sh: stress-ng 0.22 --klog-check semantics of the
# shim (dummy runner): a user-space "<3>" record (facility 1) is ignored;
# a real kernel level-3 error (ext4 mount of a zeroed loop file) fails
# the run with exit 2 and the verdict after the final line; without -K
# the same error does not fail the run (the standalone default checks
# kernel splats only, tests/it/klog/inject.sh); a user who cannot read
# /dev/kmsg gets one line and the run goes on.  Needs root, /dev/kmsg,
# losetup.

cd "$(dirname "$0")/../../.." || exit 1
. tests/lib/runner.sh
[ "$(id -u)" = 0 ] || { echo "needs root"; exit 77; }
[ -r /dev/kmsg ] && [ -w /dev/kmsg ] || { echo "/dev/kmsg not accessible"; exit 77; }
command -v losetup >/dev/null || { echo "losetup not installed"; exit 77; }
grep -qw ext4 /proc/filesystems || { echo "no ext4 in kernel"; exit 77; }
tmp=$(mktemp -d /tmp/it-klog.XXXXXX)
loopdev=""
cleanup() {
	umount "$tmp/mnt" 2>/dev/null
	[ -n "$loopdev" ] && losetup -d "$loopdev" 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT
mkdir "$tmp/mnt"
truncate -s 1M "$tmp/zero.img"

# kernel_error: make the kernel log "EXT4-fs (loopN): VFS: Can't find ext4 filesystem" (level 3)
kernel_error() {
	loopdev=$(losetup -f --show "$tmp/zero.img") || return 1
	mount -t ext4 -o ro "$loopdev" "$tmp/mnt" 2>/dev/null
	losetup -d "$loopdev"
	loopdev=""
}

# run_with ACTION ARGS...: 3 s dummy run, ACTION after 1 s
run_with() {
	local action=$1 pid
	shift
	"$R" --ksm-unmerge 1 -t 3 "$@" >"$tmp/out" 2>&1 &
	pid=$!
	sleep 1
	$action
	wait "$pid"
}

user_record() {
	echo "<3>it-cli-klog-check: user space level 3 record, must be ignored" >/dev/kmsg
}

run_with user_record -K
rc=$?
check [ "$rc" -eq 0 ] || fail "user <3> record: exit $rc, expected 0"
check grep -q 'klog-check: error' "$tmp/out" && fail "user <3> record reported as kernel error"

run_with kernel_error -K
rc=$?
check [ "$rc" -eq 2 ] || fail "kernel error: exit $rc, expected 2"
check grep -q "klog-check: error: \[[0-9]*\.[0-9]\{6\}\] 'EXT4-fs (loop[0-9]*): VFS: Can't find ext4 filesystem'" "$tmp/out" ||
	fail "kernel error line missing"
check grep -q 'klog-check: kernel cmdline:' "$tmp/out" || fail "no kernel cmdline line"
last=$(tail -n 1 "$tmp/out")
checked; echo "$last" | grep -q '\] klog-check: detected 1 kernel error messages$' ||
	fail "verdict is not the last line: $last"
checked; tail -n 2 "$tmp/out" | head -n 1 | grep -q 'successful run completed' ||
	fail "verdict does not follow the final run line"

run_with kernel_error
rc=$?
check [ "$rc" -eq 0 ] || fail "kernel error without -K: exit $rc, expected 0"
check grep -q 'klog-check' "$tmp/out" && fail "kernel error without -K: a klog-check line"

# no permission to read the kernel log: one line, the run goes on
if [ "$(cat /proc/sys/kernel/dmesg_restrict 2>/dev/null)" = 1 ] && command -v setpriv >/dev/null; then
	chmod 755 "$tmp"
	cp "$R" "$tmp/runner"	# the tree may not be reachable for uid 65534
	(cd "$tmp" && setpriv --reuid=65534 --regid=65534 --clear-groups \
		./runner --ksm-unmerge 1 -t 1 -K) >"$tmp/out" 2>&1
	rc=$?
	check [ "$rc" -eq 0 ] || fail "unprivileged -K run: exit $rc, expected 0"
	n=$(grep -c 'klog-check' "$tmp/out")
	check [ "$n" -eq 1 ] || fail "unprivileged -K run: $n klog-check lines, expected 1"
	check grep -q '^stress-ng: info:  \[[0-9]*\] klog-check: cannot open /dev/kmsg, errno=[0-9]* ([^)]*), the kernel log is not checked$' "$tmp/out" ||
		fail "unprivileged -K run: no 'cannot open /dev/kmsg' line"
else
	echo "unprivileged run not checked: dmesg_restrict is not 1 or no setpriv"
fi

[ "$errors" -eq 0 ] || { cat "$tmp/out"; echo "$errors check(s) failed"; exit 1; }
echo "klog-check semantics OK"
checks_done
