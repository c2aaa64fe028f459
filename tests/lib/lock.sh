# tests/lib/lock.sh: helpers for /tmp/ksm-dev.lock, the lock every KSM run
# holds.  tests/run-tests runs every it/<group>/*.sh under that flock, and a nested
# flock on the same file would wait forever.  Source it.
KSM_LOCK=/tmp/ksm-dev.lock

# lock_held: true if this shell or an ancestor holds the lock
lock_held() {
	local ino p=$$ h holders
	[ -e "$KSM_LOCK" ] || : >"$KSM_LOCK"
	ino=$(stat -c %i "$KSM_LOCK")
	holders=$(awk -v ino="$ino" '$2 == "FLOCK" { n = split($6, a, ":"); if (a[n] == ino) print $5 }' /proc/locks)
	while [ -n "$p" ] && [ "$p" -gt 1 ]; do
		for h in $holders; do
			[ "$h" = "$p" ] && return 0
		done
		p=$(awk '{ print $4 }' "/proc/$p/stat" 2>/dev/null)
	done
	return 1
}

# locked CMD...: run CMD holding the lock, unless an ancestor holds it
locked() {
	if lock_held; then "$@"; else flock "$KSM_LOCK" "$@"; fi
}
