# tests/lock.sh: locked CMD... runs CMD holding /tmp/ksm-dev.lock, unless an
# ancestor already holds it (tests/run-tests runs every it-*.sh under that
# flock; a nested flock on the same file would wait forever).  Source it.
locked() {
	local lock=/tmp/ksm-dev.lock ino p=$$ h holders
	[ -e "$lock" ] || : >"$lock"
	ino=$(stat -c %i "$lock")
	holders=$(awk -v ino="$ino" '$2 == "FLOCK" { n = split($6, a, ":"); if (a[n] == ino) print $5 }' /proc/locks)
	while [ -n "$p" ] && [ "$p" -gt 1 ]; do
		for h in $holders; do
			[ "$h" = "$p" ] && { "$@"; return; }
		done
		p=$(awk '{ print $4 }' "/proc/$p/stat" 2>/dev/null)
	done
	flock "$lock" "$@"
}
