#!/bin/bash
# tests/it/format/conformance.sh: our metrics table must match stress-ng's.
# Runs Debian's stress-ng (0.15.06 logs to stderr) with --vm-splice and
# our binary with --metrics-brief and --metrics, then checks the header
# lines are identical and the rows split into the same number of fields
# (10 / 12 with the log prefix) ending in the same columns.  Also checks
# the misc metric rows against lkp's parser rules and the --times block.
# The real stressor runs its default job (every racer), which passes
# (expect_ok: a known kernel bug is named, not failed).
# BIN=<binary> overrides; default ./build/stress-ksm-unmerge, else the dummy.

cd "$(dirname "$0")/../../.." || exit 1
. tests/lib/lib.sh
if [ -n "$BIN" ]; then :;
elif [ -x ./build/stress-ksm-unmerge ]; then BIN=./build/stress-ksm-unmerge;
else BIN=tests/build/dummy-runner; fi
[ -x "$BIN" ] || { echo "binary $BIN not built"; exit 1; }
command -v stress-ng >/dev/null || { echo "Debian stress-ng not installed"; exit 77; }
tmp=$TMPD

for mode in metrics-brief metrics; do
	stress-ng --vm-splice 1 -t 2 --$mode >"$tmp/ref-$mode" 2>&1 ||
		{ echo "stress-ng --vm-splice failed: $(tail -1 "$tmp/ref-$mode")"; exit 1; }
	timeout 60 "$BIN" --ksm-unmerge 1 -t 4 --$mode --times \
		>"$tmp/our-$mode" 2>&1
	rc=$?
	checked; expect_ok "$tmp/our-$mode" "$rc" >"$tmp/why" || { cat "$tmp/why"; echo "$BIN --$mode exit $rc"; exit 1; }
done

check python3 - "$tmp" <<'PYEOF' || exit 1
import re, sys
tmp = sys.argv[1]
errors = []
prefix = re.compile(r'^stress-ng: (metrc|info): +\[\d+\] ')

def table(path, name):
    """header lines and the stressor row, prefix stripped, plus raw row"""
    lines = open(path).read().splitlines()
    hdr = [i for i, l in enumerate(lines) if prefix.sub('', l).startswith('stressor ')]
    if not hdr:
        errors.append('%s: no metrics header' % path)
        return None
    i = hdr[0]
    rows = [l for l in lines[i + 2:] if prefix.sub('', l).split()[:1] == [name]]
    if not rows:
        errors.append('%s: no %s row' % (path, name))
        return None
    return (prefix.sub('', lines[i]), prefix.sub('', lines[i + 1]),
            prefix.sub('', rows[0]), rows[0], lines)

def ends(row):
    return [m.end() for m in re.finditer(r'\S+', row)]

for mode, nf in (('metrics-brief', 10), ('metrics', 12)):
    ref = table('%s/ref-%s' % (tmp, mode), 'vm-splice')
    our = table('%s/our-%s' % (tmp, mode), 'ksm-unmerge')
    if not ref or not our:
        continue
    for k in (0, 1):
        if ref[k] != our[k]:
            errors.append('%s header line %d differs:\n  ref %r\n  our %r' % (mode, k + 1, ref[k], our[k]))
    if len(our[3].split()) != nf:
        errors.append('%s: our row has %d fields, expected %d: %r' % (mode, len(our[3].split()), nf, our[3]))
    if len(ref[3].split()) != nf:
        errors.append('%s: stress-ng row has %d fields: %r' % (mode, len(ref[3].split()), ref[3]))
    if ends(ref[2])[1:] != ends(our[2])[1:]:
        errors.append('%s: field end columns differ:\n  ref %s %r\n  our %s %r' % (mode, ends(ref[2]), ref[2], ends(our[2]), our[2]))
    lines = our[4]
    misc = [l for l in lines if re.search(r'\((average|geometric mean|harmonic mean|total|maximum) of \d+ instances?\)$', l)]
    if mode == 'metrics-brief' and (misc or any('miscellaneous metrics:' in l for l in lines)):
        errors.append('metrics-brief printed misc metrics')
    for l in misc:
        f = prefix.sub('', l).split()
        if f[0] != 'ksm-unmerge' or not re.match(r'^\d+\.\d\d$', f[1]):
            errors.append('bad misc row %r' % l)
        if f[1] in ('0', '0.00'):
            errors.append('zero misc metric printed: %r' % l)
        if '(maximum of' not in l and not re.search(r'stress-ng: (info|metrc):.*\((average|geometr?ic mean|harmonic mean|total)', l):
            errors.append('misc row not matched by lkp regex: %r' % l)
    t = [i for i, l in enumerate(lines) if 'run time:' in l]
    if not t:
        errors.append('%s: no --times "run time:" line' % mode)
    elif misc and lines.index(misc[-1]) > t[0]:
        errors.append('%s: misc metrics after the run time: line' % mode)

if errors:
    print('\n'.join(errors))
    sys.exit(1)
print('metrics table format matches stress-ng (10/12 fields, same columns)')
PYEOF
checks_done
