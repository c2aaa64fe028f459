#!/bin/bash
# tests/it/format/yaml.sh: --yaml output of a short run loads with libyaml
# (python3 yaml.CSafeLoader) and has the stress-ng 0.22 layout: ---,
# build-info, system-info (quoted strings), metrics with per-instance
# entries, times, extra sections after metrics, and a final "...".
# The real stressor runs its default job, which passes (expect_ok: a known
# kernel bug is named, not failed).
# BIN=<binary> overrides; default ./build/stress-ksm-unmerge, else the dummy.

cd "$(dirname "$0")/../../.." || exit 1
. tests/lib/lib.sh
if [ -n "$BIN" ]; then :;
elif [ -x ./build/stress-ksm-unmerge ]; then BIN=./build/stress-ksm-unmerge;
else BIN=tests/build/dummy-runner; fi
[ -x "$BIN" ] || { echo "binary $BIN not built"; exit 1; }
python3 -c 'import yaml; yaml.CSafeLoader' 2>/dev/null ||
	{ echo "python3-yaml with libyaml not installed"; exit 77; }
tmp=$TMPD

timeout 60 "$BIN" --ksm-unmerge 2 -t 4 --metrics --times \
	-Y "$tmp/out.yaml" >"$tmp/out" 2>&1
rc=$?
checked; expect_ok "$tmp/out" "$rc" >"$tmp/why" || { cat "$tmp/why"; echo "run failed: exit $rc"; exit 1; }

check python3 - "$tmp/out.yaml" "$BIN" <<'PYEOF' || exit 1
import re, sys, yaml
path, binary = sys.argv[1], sys.argv[2]
text = open(path).read()
errors = []
if not text.startswith('---\n'):
    errors.append('does not start with ---')
if not text.endswith('\n...\n'):
    errors.append('does not end with ...')
d = yaml.load(text, Loader=yaml.CSafeLoader)
keys = list(d.keys())
if keys[:3] != ['build-info', 'system-info', 'metrics']:
    errors.append('top-level keys start %r' % keys[:3])
if 'times' not in keys:
    errors.append('no times section')
if not re.search(r"^      stress-ng-version: '[^']+'$", text, re.M):
    errors.append('stress-ng-version not quoted')
if not isinstance(d['system-info']['cpus-online'], int):
    errors.append('cpus-online not an int')
m = d['metrics'][0]
if m['stressor'] != 'ksm-unmerge':
    errors.append('stressor %r' % m['stressor'])
for k in ('bogo-ops', 'bogo-ops-per-second-real-time', 'wall-clock-time', 'max-rss'):
    if k not in m:
        errors.append('metrics lacks %s' % k)
inst = m.get('instances', [])
if [i['instance'] for i in inst] != [0, 1]:
    errors.append('instances %r' % [i.get('instance') for i in inst])
if sum(i['bogo-ops'] for i in inst) != m['bogo-ops']:
    errors.append('instance bogo-ops do not sum to the total')
for k in m:
    if not re.match(r'^[a-z0-9-]{1,39}$', k) and k != 'instances':
        errors.append('bad metric key %r' % k)
if 'dummy-runner' in binary:
    if keys[-1] != 'dummy-extra' or d['dummy-extra']['deinit-called'] is not True:
        errors.append('extra section missing or misplaced: %r' % keys)
    for k in ('nanosecs-per-dummy-op', 'dummy-percent-maximum', 'dummy-always-zero'):
        if k not in m:
            errors.append('metric key %s missing' % k)
if errors:
    print('\n'.join(errors))
    sys.exit(1)
print('YAML loads with libyaml, keys %s' % keys)
PYEOF
checks_done
