#!/bin/bash
# tests/it/tools/soak-log.sh: build/ksm-soak, the soak runner, on short runs.
#  1. a log that cannot be opened is refused before the binary starts
#     (exit 1, one stderr line, nothing run, knobs untouched)
#  2. --log /dev/full fails a 3 s run (exit 2): reported at once, and the
#     count of documents missing from the file at the end
#  3. a real run: one parseable document per interval (start, 1..N, final:
#     true with the exit status and the stressor's totals and racer lines),
#     cow_ksm moved, the instances' RSS and peak RSS, a progress line per
#     interval, the soak line
#  4. it drives stress-ng as well (Debian's, another stressor)
#  5. a full tmpfs: the documents that failed are cut off, retried and
#     written once space is back (all there, final: true, exit 0); a tmpfs
#     that stays full fails the run and never gets final: true
#  6. --stop-on-warn: a WARNING written to /dev/kmsg stops the run (SIGINT)
#     and the evidence (knobs, stacks, kernel-log tail) is in the log
#  7. hang evidence: a thread in break_ksm for 2 s (a long sparse unmerge
#     walk) while cow_ksm does not move is logged with its stack
# Injected WARNINGs fail any concurrent run: hold /tmp/ksm-dev.lock.
. "$(dirname "$0")/../../lib/lock.sh"
if ! lock_held; then
	command -v flock >/dev/null 2>&1 || { echo "SKIP: flock(1) not installed"; exit 77; }
	exec flock "$KSM_LOCK" bash "$0" "$@"
fi
. "$(dirname "$0")/../../lib/lib.sh"
require_ksm
command -v python3 >/dev/null || skip "python3 missing"
SOAK=$TOP/build/ksm-soak
[ -x "$SOAK" ] || fail "$SOAK not built"

MNT=$TMPD/mnt
mkdir -p "$MNT"
HOGS=
trap 'kill $HOGS 2>/dev/null; umount "$MNT" 2>/dev/null; rm -rf "$TMPD"' EXIT
before=$(knobs)

# docs FILE: every document parses; prints "kinds intervals-contiguous
# last-final exit-status"
docs() {
	python3 - "$1" <<'EOF'
import sys, yaml
d = [x for x in yaml.safe_load_all(open(sys.argv[1])) if x]
iv = [x['interval'] for x in d if x['ksm-soak'] == 'interval']
kinds = ','.join(x['ksm-soak'] for x in d) or 'none'
final = d[-1] if d and d[-1]['final'] else None
print(kinds, iv == list(range(1, len(iv) + 1)), bool(final), final['exit-status'] if final else '-')
EOF
}

# 1. refused before anything starts
cat >"$TMPD/marker" <<EOF
#!/bin/sh
touch "$TMPD/ran"
EOF
chmod +x "$TMPD/marker"
mount -t tmpfs -o size=8k,ro tmpfs "$MNT" || skip "cannot mount tmpfs"
for path in /nonexistent/dir/log.yaml "$TMPD" "$MNT/log.yaml"; do
	"$SOAK" --log "$path" -- "$TMPD/marker" >"$TMPD/out" 2>"$TMPD/err"
	rc=$?
	check [ "$rc" = 1 ] || fail "log $path: exit $rc, expected 1"
	check [ "$(wc -l <"$TMPD/err")" = 1 ] || { cat "$TMPD/err"; fail "log $path: not one stderr line"; }
	check grep -q "ksm-soak: option --log: cannot write soak log '$path'" "$TMPD/err" || fail "log $path: $(cat "$TMPD/err")"
	check [ ! -s "$TMPD/out" ] || fail "log $path: printed on stdout: $(head -1 "$TMPD/out")"
	check [ ! -e "$TMPD/ran" ] || fail "log $path: the binary ran"
done
umount "$MNT"
check [ ! -e /nonexistent/dir ] || fail "refused log created a directory"
"$SOAK" --log "$TMPD/x.yaml" --interval 0 -- "$TMPD/marker" >/dev/null 2>"$TMPD/err"
check [ $? = 1 ] && grep -q "option --interval: invalid value '0'" "$TMPD/err" || fail "--interval 0: $(cat "$TMPD/err")"
check [ "$(knobs)" = "$before" ] || fail "refused runs touched the knobs"

# 2. /dev/full: a 3 s run fails
"$SOAK" --log /dev/full -- "$STRESSOR" --ksm-unmerge 1 -t 3 >"$TMPD/full" 2>&1
rc=$?
check [ "$rc" = 2 ] || { cat "$TMPD/full"; fail "/dev/full: exit $rc, expected 2"; }
check grep -q '^ksm-soak: log /dev/full: 1 document(s) not written, errno=28' "$TMPD/full" ||
	fail "/dev/full: no report of the first failed document"
check grep -Eq '^ksm-soak: fail: soak log /dev/full: ([0-9]+) of \1 documents are not in the file' "$TMPD/full" ||
	{ cat "$TMPD/full"; fail "/dev/full: no fail line with the count"; }

# 3. a real run, one document a second
"$SOAK" --log "$TMPD/run.yaml" --interval 1 --progress -- "$STRESSOR" --ksm-unmerge 2 -t 5 >"$TMPD/run" 2>&1
rc=$?
check [ "$rc" = 0 ] || { cat "$TMPD/run"; fail "run: exit $rc"; }
read -r kinds contiguous final status < <(docs "$TMPD/run.yaml")
echo "run: documents $kinds"
check [ "$contiguous" = True ] && [ "$final" = True ] && [ "$status" = 0 ] ||
	fail "run: intervals contiguous=$contiguous final=$final exit-status=$status"
n=$(echo "$kinds" | tr , '\n' | grep -c '^interval$')
check [ "$n" -ge 4 ] && [ "$n" -le 6 ] || fail "run: $n interval documents in a 5 s run"
check [ "$(echo "$kinds" | cut -d, -f1)" = start ] || fail "run: first document is not the start one"
check [ "$(grep -c '^ksm-soak: progress: interval ' "$TMPD/run")" = "$n" ] || fail "run: not one progress line per interval"
check grep -Eq "^ksm-soak: soak: intervals-logged=$n/$n,intervals-lost=0,rss-growth-max-kb=[0-9]+,stop-latency-secs=-?[0-2]\\." "$TMPD/run" ||
	fail "run: soak line $(grep 'soak:' "$TMPD/run")"
python3 - "$TMPD/run.yaml" <<'EOF' || fail "run: log content"
import sys, yaml
d = [x for x in yaml.safe_load_all(open(sys.argv[1])) if x]
iv = [x for x in d if x['ksm-soak'] == 'interval']
fin = d[-1]
assert d[0]['knobs']['run'] in ('0', '1', '2'), d[0]['knobs']
assert d[0]['command'][1:3] == ['--ksm-unmerge', '2'], d[0]['command']
assert max(x['kernel']['cow-ksm'] for x in iv) > 0, 'cow_ksm never moved'
assert all(x['elapsed-secs'] <= x['elapsed-secs'] + x['remaining-secs'] <= 5.5 for x in iv)
# instances (depth 1) and their workers (depth 2), which hold the regions
inst = [p for x in iv for p in x['processes'] if p['depth'] >= 1 and p['comm'].startswith('stress-ng-ksm')]
assert inst and all(p['hwm-kb'] >= p['rss-kb'] > 0 for p in inst), inst
assert max(p['hwm-kb'] for p in inst) > 32768, 'no worker held its 32 MiB share of the 64 MiB region'
out = fin['output']
assert any(': totals: cycles=' in l for l in out), out
assert any(' racer ' in l for l in out), out
assert fin['stop-reason'] == 'timeout or ops' and fin['hangs'] == 0, fin
print('log: %d intervals, cow_ksm %d pages, instance peak RSS %d KiB, %d output lines'
      % (len(iv), iv[-1]['kernel']['cow-ksm'], max(p['hwm-kb'] for p in inst), len(out)))
EOF
checked

# 4. stress-ng, when installed (here: a different stressor, same log)
if command -v stress-ng >/dev/null; then
	"$SOAK" --log "$TMPD/sng.yaml" --interval 1 -- stress-ng --vm 1 --vm-bytes 16M -t 3 >"$TMPD/sng" 2>&1
	rc=$?
	read -r kinds contiguous final status < <(docs "$TMPD/sng.yaml")
	check [ "$rc" = 0 ] && [ "$final" = True ] && [ "$status" = 0 ] ||
		{ cat "$TMPD/sng"; fail "stress-ng: exit $rc, final $final, status $status"; }
	check grep -q "comm: 'stress-ng-vm'" "$TMPD/sng.yaml" || fail "stress-ng: its workers not in the log"
else
	echo "note: stress-ng not installed, not driven"
fi

# full_tmpfs: a 128 KiB tmpfs with no block left
full_tmpfs() {
	mount -t tmpfs -o size=128k tmpfs "$MNT" || fail "cannot mount tmpfs"
	dd if=/dev/zero of="$MNT/fill" bs=1k count=256 2>/dev/null
	: >"$MNT/log.yaml"
}

# 5a. space comes back: the backlog is written, nothing is lost
full_tmpfs
"$SOAK" --log "$MNT/log.yaml" --interval 1 -- "$STRESSOR" --ksm-unmerge 1 -t 6 >"$TMPD/retry" 2>&1 &
pid=$!
log_wait "$TMPD/retry" 'document(s) not written' || { kill $pid; fail "tmpfs: first failed document not reported"; }
sleep 2
rm -f "$MNT/fill"
wait $pid
rc=$?
check [ "$rc" = 0 ] || { cat "$TMPD/retry"; fail "tmpfs retry: exit $rc, expected 0"; }
check grep -q 'delayed document(s) written' "$TMPD/retry" || fail "tmpfs retry: no delayed write line"
read -r kinds contiguous final status < <(docs "$MNT/log.yaml")
echo "tmpfs retry: $kinds"
check [ "$final" = True ] && [ "$contiguous" = True ] || fail "tmpfs retry: final=$final contiguous=$contiguous"
n=$(echo "$kinds" | tr , '\n' | grep -c '^interval$')
check grep -q "intervals-logged=$n/$n,intervals-lost=0" "$TMPD/retry" || fail "tmpfs retry: $(grep soak: "$TMPD/retry")"
umount "$MNT"

# 5b. stays full: the run fails, no half document, no final: true
full_tmpfs
"$SOAK" --log "$MNT/log.yaml" --interval 1 -- "$STRESSOR" --ksm-unmerge 1 -t 3 >"$TMPD/stuck" 2>&1
rc=$?
check [ "$rc" = 2 ] || { cat "$TMPD/stuck"; fail "tmpfs full: exit $rc, expected 2"; }
check grep -q 'documents are not in the file' "$TMPD/stuck" || fail "tmpfs full: no count of missing documents"
read -r kinds contiguous final status < <(docs "$MNT/log.yaml")
check [ "$final" != True ] || fail "tmpfs full: final: true written"
umount "$MNT"

# 6. --stop-on-warn on an injected WARNING
"$SOAK" --log "$TMPD/warn.yaml" --interval 1 --stop-on-warn -- "$STRESSOR" --ksm-unmerge 1 -t 60 >"$TMPD/warn" 2>&1 &
pid=$!
log_wait "$TMPD/warn" 'dispatching hogs' || { kill $pid; fail "stop-on-warn: the run did not start"; }
sleep 2
t0=$(date +%s%N)
printf '<4>WARNING: CPU: 0 PID: %d at mm/ksm.c:3012 break_ksm+0x1a2/0x1c0 (FAKE: ksm-soak test)\n' $$ >/dev/kmsg ||
	fail "cannot write /dev/kmsg"
wait $pid
rc=$?
ms=$(( ($(date +%s%N) - t0) / 1000000 ))
echo "stop-on-warn: exit $rc, ${ms} ms after the injection"
check [ "$rc" = 2 ] || { cat "$TMPD/warn"; fail "stop-on-warn: exit $rc, expected 2"; }
check [ "$ms" -lt 10000 ] || fail "stop-on-warn: run ended ${ms} ms after the warning"
check grep -q '^ksm-soak: stopping the run at the first kernel warning (--stop-on-warn)' "$TMPD/warn" ||
	fail "stop-on-warn: no stop line"
python3 - "$TMPD/warn.yaml" <<'EOF' || fail "stop-on-warn: evidence"
import sys, yaml
d = [x for x in yaml.safe_load_all(open(sys.argv[1])) if x]
ev = [x for x in d if x['ksm-soak'] == 'evidence']
assert len(ev) >= 1, [x['ksm-soak'] for x in d]
e = ev[0]
assert 'FAKE: ksm-soak test' in e['trigger'] or 'WARNING' in e['trigger'], e['trigger']
assert 'run' in e['knobs'] and 'pages_to_scan' in e['knobs']
tasks = [t for p in e['processes'] for t in p['tasks']]
assert e['processes'] and any(t['stack'] for t in tasks), e['processes']
assert all('wchan' in t for t in tasks)
assert any('FAKE: ksm-soak test' in r[2] for r in e['kernel-log-tail']), e['kernel-log-tail']
fin = d[-1]
assert fin['final'] and fin['stop-reason'] == 'stop-on-warn', fin
assert fin['stop-latency-secs'] < 5, fin['stop-latency-secs']
print('evidence: %d processes, %d threads, tail of %d records; stop latency %.3f s'
      % (len(e['processes']), len(tasks), len(e['kernel-log-tail']), fin['stop-latency-secs']))
EOF
checked
sleep 0.5
check [ "$(knobs)" = "$before" ] || fail "stop-on-warn: knobs '$(knobs)' != '$before'"

# 7. hang evidence: a long sparse unmerge walk (1 TiB reserved, one page
# per GiB) keeps break_ksm on the stack while cow_ksm does not move; two
# CPU hogs keep the walker preempted, so its stack can be read
if command -v cc >/dev/null; then
	cat >"$TMPD/walk.c" <<'EOF'
#include <sys/mman.h>
#include <stdio.h>
int main(void)
{
	const size_t sz = 1UL << 40;
	char *p = mmap(NULL, sz, PROT_READ | PROT_WRITE,
		MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);

	if (p == MAP_FAILED)
		return perror("mmap"), 1;
	for (size_t o = 0; o < sz; o += 1UL << 30)
		p[o] = 1;
	for (;;)
		if (madvise(p, sz, MADV_MERGEABLE) || madvise(p, sz, MADV_UNMERGEABLE))
			return perror("madvise"), 1;
}
EOF
	cc -O2 -o "$TMPD/walk" "$TMPD/walk.c" || fail "cannot build the walker"
	for i in 1 2; do sh -c 'while :; do :; done' & HOGS="$HOGS $!"; done
	timeout 120 "$SOAK" --log "$TMPD/hang.yaml" --interval 1 --hang-secs 2 --stop-on-warn -- "$TMPD/walk" >"$TMPD/hang" 2>&1
	rc=$?
	kill $HOGS 2>/dev/null
	HOGS=
	cat "$TMPD/hang"
	check [ "$rc" = 2 ] || fail "hang: exit $rc, expected 2"
	check grep -Eq '^ksm-soak: hang: pid [0-9]+ thread [0-9]+ in [a-z_]*ksm[a-z_]* for [2-9] s while cow_ksm stayed at' "$TMPD/hang" ||
		fail "hang: no hang line"
	python3 - "$TMPD/hang.yaml" <<'EOF' || fail "hang: evidence"
import sys, yaml
d = [x for x in yaml.safe_load_all(open(sys.argv[1])) if x]
e = [x for x in d if x['ksm-soak'] == 'evidence'][0]
assert e['evidence'] == 'hang', e['evidence']
# the sample that proved the hang; the snapshot of every process may find
# the walker on a CPU, whose stack reads empty
assert any('ksm' in l for l in e['trigger-stack']), e['trigger-stack']
assert any(p['tasks'] for p in e['processes']), e['processes']
assert d[-1]['hangs'] == 1 and d[-1]['stop-reason'] == 'stop-on-warn', d[-1]
EOF
	checked
else
	echo "note: no C compiler, hang evidence not tested"
fi
check [ "$(knobs)" = "$before" ] || fail "knobs '$(knobs)' != '$before'"
echo "ok: refused logs, /dev/full, real run, stress-ng, full tmpfs, stop-on-warn, hang evidence"
checks_done
exit 0
