#!/bin/bash
# tests/it/cli/soak-log.sh: the soak log is part of the result.  A log path that
# cannot be written is refused before anything starts (exit 1, one line,
# knobs untouched, no file created); on /dev/full every interval fails, is
# reported at once and the run fails with the count; on a full 8 KiB tmpfs
# the failed intervals are cut off the file, retried and written once space
# is back (every interval in the file, final: true, exit 0); a tmpfs that
# stays full fails the run and never gets final: true.
. "$(dirname "$0")/../../lib/lib.sh"
require_ksm
command -v python3 >/dev/null || skip "python3 missing"

MNT=$TMPD/mnt
mkdir -p "$MNT"
trap 'umount "$MNT" 2>/dev/null; rm -rf "$TMPD"' EXIT
before=$(knobs)

# refused: missing directory, a directory, a read-only file system
mount -t tmpfs -o size=8k,ro tmpfs "$MNT" || skip "cannot mount tmpfs"
for path in /nonexistent/dir/log.yaml "$TMPD" "$MNT/log.yaml"; do
	"$STRESSOR" --ksm-unmerge 1 -t 2 --ksm-unmerge-log "$path" >"$TMPD/out" 2>"$TMPD/err"
	rc=$?
	check [ "$rc" = 1 ] || fail "log $path: exit $rc, expected 1"
	check [ "$(wc -l <"$TMPD/err")" = 1 ] || { cat "$TMPD/err"; fail "log $path: not one stderr line"; }
	check grep -q "ksm-unmerge-log: cannot write soak log '$path'" "$TMPD/err" || fail "log $path: $(cat "$TMPD/err")"
	[ -s "$TMPD/out" ] && fail "log $path: printed on stdout: $(head -1 "$TMPD/out")"
	check [ "$(knobs)" = "$before" ] || fail "log $path: knobs touched"
done
umount "$MNT"
[ -e /nonexistent/dir ] && fail "refused log created a directory"

# /dev/full: each interval reported at once, the run fails with the count
"$STRESSOR" --ksm-unmerge 1 -t 3 --ksm-unmerge-progress 1 --ksm-unmerge-log /dev/full >"$TMPD/full" 2>&1
rc=$?
check [ "$rc" = 2 ] || { cat "$TMPD/full"; fail "/dev/full: exit $rc, expected 2"; }
check grep -q 'soak log /dev/full: 1 interval(s) not written, errno=28' "$TMPD/full" || fail "/dev/full: no report at the first interval"
check grep -Eq 'fail: .*soak log /dev/full: [0-9]+ of [0-9]+ intervals are not in the file' "$TMPD/full" ||
	{ cat "$TMPD/full"; fail "/dev/full: no fail line with the count"; }
check grep -q 'unsuccessful run completed' "$TMPD/full" || fail "/dev/full: run not unsuccessful"

# full_tmpfs: an 8 KiB tmpfs with no block left
full_tmpfs() {
	mount -t tmpfs -o size=8k tmpfs "$MNT" || fail "cannot mount tmpfs"
	dd if=/dev/zero of="$MNT/fill" bs=1k count=64 2>/dev/null
	: >"$MNT/log.yaml"
}

# docs FILE: every document parses; prints "count last-final gaps"
docs() {
	python3 - "$1" <<'EOF'
import sys, yaml
d = [x for x in yaml.safe_load_all(open(sys.argv[1])) if x]
el = [x['intervals-elapsed'] for x in d if not x['final']]
gaps = sum(1 for i, e in enumerate(el) if e != i + 1)
print(len(d), d[-1]['final'] if d else 'none', gaps)
EOF
}

# space comes back: the backlog is written, nothing is lost, final: true
full_tmpfs
"$STRESSOR" --ksm-unmerge 1 -t 6 --ksm-unmerge-progress 1 --ksm-unmerge-log "$MNT/log.yaml" >"$TMPD/retry" 2>&1 &
pid=$!
for i in $(seq 1 100); do grep -q 'interval(s) not written' "$TMPD/retry" && break; sleep 0.1; done
check grep -q "soak log $MNT/log.yaml: 1 interval(s) not written, errno=28" "$TMPD/retry" ||
	{ kill $pid; cat "$TMPD/retry"; fail "tmpfs: first failed interval not reported"; }
sleep 1
rm -f "$MNT/fill"
wait $pid
rc=$?
check [ "$rc" = 0 ] || { cat "$TMPD/retry"; fail "tmpfs retry: exit $rc, expected 0"; }
check grep -q 'delayed interval(s) written' "$TMPD/retry" || fail "tmpfs retry: no delayed write line"
read -r n final gaps < <(docs "$MNT/log.yaml")
elapsed=$(grep -o 'intervals-logged=[0-9]*/[0-9]*' "$TMPD/retry" | sed 's/.*=//')
echo "tmpfs retry: $n documents, last final=$final, gaps=$gaps, logged/elapsed $elapsed"
check [ "$final" = True ] || fail "tmpfs retry: last document not final: true"
check [ "$gaps" = 0 ] || fail "tmpfs retry: intervals missing from the file"
check [ "${elapsed%/*}" = "${elapsed#*/}" ] || fail "tmpfs retry: logged/elapsed $elapsed"
umount "$MNT"

# stays full: the run fails, the file holds no half document and no final: true
full_tmpfs
"$STRESSOR" --ksm-unmerge 1 -t 3 --ksm-unmerge-progress 1 --ksm-unmerge-log "$MNT/log.yaml" >"$TMPD/stuck" 2>&1
rc=$?
check [ "$rc" = 2 ] || { cat "$TMPD/stuck"; fail "tmpfs full: exit $rc, expected 2"; }
check grep -q 'intervals are not in the file' "$TMPD/stuck" || fail "tmpfs full: no count of lost intervals"
read -r n final gaps < <(docs "$MNT/log.yaml")
[ "$final" = True ] && fail "tmpfs full: final: true written"
umount "$MNT"
check [ "$(knobs)" = "$before" ] || fail "knobs '$(knobs)' != '$before'"
echo "ok: refused paths, /dev/full, full tmpfs retried and kept full"
checks_done
exit 0
