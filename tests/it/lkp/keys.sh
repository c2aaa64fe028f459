#!/bin/bash
# LKP's stress-ng parse rules (lkp.md §3.2: programs/stress-ng/parse and
# LKP::Stats.normalize, re-implemented here in python3) applied to
#  1. fixture copies of ksm-unmerge output (parse rules unit-tested, no KSM)
#  2. REAL output of ./build/stress-ksm-unmerge with lkp's own command line
# asserting ksm-unmerge.ops, .ops_per_sec, one key per misc metric, no
# .fail key and no key with whitespace (dump-stat would abort).
set -u
ROOT=$(cd "$(dirname "$0")/../../.." && pwd)
FX=$ROOT/tests/data/fixtures/report/lkp
TMP=$(mktemp -d /tmp/it-lkp-keys.XXXXXX)
trap 'rm -rf "$TMP"' EXIT
fails=0

command -v python3 >/dev/null || { echo "skip: python3 not installed"; exit 77; }

cat >"$TMP/lkp-parse.py" <<'PY'
import re
import sys


def normalize(s):
    # LKP::Stats.normalize: runs of whitespace , " _ [ ] ( ) : -> one '_'
    return re.sub(r'[\s,"_\[\]():]+', '_', s).strip('_')


def parse(lines):
    out = []
    started = False
    misc = re.compile(r'stress-ng: (info|metrc):.*\((average|geometr?ic mean|harmonic mean|total)')
    for line in lines:
        line = line.rstrip('\n')
        if 'this stressor is not implemented on this system' in line or \
           'No stress workers invoked' in line:
            sys.stderr.write('warning: ' + line + '\n')
            break
        if 'all bogo-op counters are zero, data may be incorrect' in line:
            continue
        if re.search(r'stress-ng: fail:.*sigaction signal', line):
            out.append(('sigaction.fail', '1'))
            break
        if re.search(r'fail:|warn:', line):
            continue
        if re.search(r'\(secs\)\s+\(secs\)\s+\(secs\)', line):
            started = True
            continue
        if 'run time:' in line:
            break
        if not started:
            continue
        if misc.search(line):
            line = re.sub(r'\s*\((average|geometr?ic mean|harmonic mean|total)[^)]*\)\s*$', '', line)
            f = line.split()
            name, value, desc = f[3], f[4], normalize('_'.join(f[5:]))
            if value in ('0', '0.00'):
                out.append(('%s.%s.fail' % (name, desc), '1'))
            else:
                out.append(('%s.%s.pass' % (name, desc), '1'))
                out.append(('%s.%s' % (name, desc), value))
            continue
        f = line.split()
        if len(f) not in (10, 12):
            continue
        if f[4] == '0':
            out.append(('%s.fail' % f[3], '1'))
        else:
            out.append(('%s.pass' % f[3], '1'))
            out.append(('%s.ops' % f[3], f[4]))
            out.append(('%s.ops_per_sec' % f[3], f[8]))
    return out


for k, v in parse(open(sys.argv[1], errors='replace')):
    print('%s: %s' % (k, v))
PY

. "$(dirname "$0")/../../lib/lock.sh"
# lib.sh for expect_ok (and checks.sh); its temp dir goes with ours;
# this script's check NAME CMD... replaces the one of tests/lib/checks.sh
. "$(dirname "$0")/../../lib/lib.sh"
trap 'rm -rf "$TMP" "$TMPD"' EXIT
check() {
	local name=$1
	shift
	checked
	if "$@"; then echo "ok: $name"; else echo "FAIL: $name"; fails=$((fails + 1)); fi
}

# check_keys TEXT KEYS: the assertions on a good ksm-unmerge run
check_keys() {
	local txt=$1 keys=$2 nmisc nkeys
	check "$3: ksm-unmerge.ops" grep -qE '^ksm-unmerge\.ops: [0-9.]+$' "$keys"
	check "$3: ksm-unmerge.ops_per_sec" grep -qE '^ksm-unmerge\.ops_per_sec: [0-9.]+$' "$keys"
	check "$3: ksm-unmerge.pass" grep -qx 'ksm-unmerge.pass: 1' "$keys"
	# misc rows inside the table (between the "(secs)" header and "run time:")
	nmisc=$(awk '/\(secs\)[ \t]+\(secs\)[ \t]+\(secs\)/ { s = 1; next }
		/run time:/ { exit }
		s && /stress-ng: (info|metrc):.*\((average|geometr?ic mean|harmonic mean|total)/ { n++ }
		END { print n + 0 }' "$txt")
	nkeys=$(grep -E '^ksm-unmerge\.[^:]+\.pass: 1$' "$keys" | wc -l)
	check "$3: one key per misc metric ($nmisc rows, $nkeys keys)" \
		bash -c "[ $nmisc -gt 0 ] && [ $nmisc -eq $nkeys ]"
	check "$3: no .fail key" bash -c "! grep -q '\.fail:' '$keys'"
	check "$3: no key with whitespace" bash -c "! grep -qE '^[^:]*[[:space:]][^:]*: ' '$keys'"
	check "$3: no MAXIMUM misc rows (lkp drops or misparses them)" bash -c "! grep -q '(maximum of' '$txt'"
	check "$3: exactly one ops row (no bogus 10/12-field row)" [ "$(grep -c '^ksm-unmerge\.ops:' "$keys")" -eq 1 ]
}

# 1. parse rules on fixtures
python3 "$TMP/lkp-parse.py" "$FX/ksm-unmerge-metrics.txt" >"$TMP/fx.keys"
check "fixture parse: exact key list" diff -u - "$TMP/fx.keys" <<'KEYS'
ksm-unmerge.pass: 1
ksm-unmerge.ops: 42
ksm-unmerge.ops_per_sec: 8.38
ksm-unmerge.MB_per_sec_unmerge_rate.pass: 1
ksm-unmerge.MB_per_sec_unmerge_rate: 2345.67
ksm-unmerge.pages_unmerged_per_sec.pass: 1
ksm-unmerge.pages_unmerged_per_sec: 600491.52
ksm-unmerge.merge_wait_millisecs_per_cycle.pass: 1
ksm-unmerge.merge_wait_millisecs_per_cycle: 812.40
ksm-unmerge.pages_merged_per_cycle.pass: 1
ksm-unmerge.pages_merged_per_cycle: 16382.00
ksm-unmerge.vmsplice_ops_per_sec.pass: 1
ksm-unmerge.vmsplice_ops_per_sec: 120.50
ksm-unmerge.uffd-wp_ops_per_sec.pass: 1
ksm-unmerge.uffd-wp_ops_per_sec: 80.25
ksm-unmerge.nanosecs_per_sparse_page.pass: 1
ksm-unmerge.nanosecs_per_sparse_page: 410.00
KEYS
check_keys "$FX/ksm-unmerge-metrics.txt" "$TMP/fx.keys" fixture
# a verbatim copy of real ./build/stress-ksm-unmerge output (its "(total 64MB of
# ...)" info line precedes the table header, so it must not become a key)
python3 "$TMP/lkp-parse.py" "$FX/ksm-unmerge-real.txt" >"$TMP/copy.keys"
check_keys "$FX/ksm-unmerge-real.txt" "$TMP/copy.keys" "real-output copy"
check "real-output copy: pre-header info line ignored" bash -c "! grep -q '64MB' '$TMP/copy.keys'"
check "real-output copy: 4 metrics + ops/ops_per_sec/pass" [ "$(wc -l <"$TMP/copy.keys")" -eq 11 ]
# zero bogo ops and a 0.00 metric become .fail; a MAXIMUM row with a
# three-word description splits into 12 fields and is misread as a main row
python3 "$TMP/lkp-parse.py" "$FX/ksm-unmerge-zero.txt" >"$TMP/zero.keys"
check "zero fixture: exact key list" diff -u - "$TMP/zero.keys" <<'KEYS'
ksm-unmerge.fail: 1
ksm-unmerge.MB_per_sec_unmerge_rate.fail: 1
ksm-unmerge.pass: 1
ksm-unmerge.ops: 16.00
ksm-unmerge.ops_per_sec: (maximum
KEYS
printf 'stress-ng: info:  [1] x stressor will be skipped, it is not implemented on this system\n' >"$TMP/ni.txt"
check "0.22 unimplemented wording: no stats" bash -c "[ -z \"\$(python3 '$TMP/lkp-parse.py' '$TMP/ni.txt')\" ]"
cat >"$TMP/n.txt" <<'TXT'
stress-ng: metrc: [1]                           (secs)    (secs)    (secs)
stress-ng: metrc: [1] s   1.5 a/b  c-d: e% (f) [g],"h"__i (total of 2 instances)
TXT
check "normalize keeps / - %, folds the rest" \
	[ "$(python3 "$TMP/lkp-parse.py" "$TMP/n.txt" | tail -1)" = 's.a/b_c-d_e%_f_g_h_i: 1.5' ]

# 1b. lkp's own parser agrees with this re-implementation (LKP_TREE: an
# lkp-tests clone, ruby and ruby-activesupport installed)
lkp_parse() {
	LKP_SRC=$LKP_TREE ruby "$LKP_TREE/programs/stress-ng/parse" <"$1" 2>/dev/null
}
if [ -n "${LKP_TREE:-}" ] && [ -x "${LKP_TREE}/programs/stress-ng/parse" ] &&
	command -v ruby >/dev/null && ruby -e 'require "active_support"' 2>/dev/null; then
	LKP_REAL=1
	for fx in metrics real zero; do
		check "lkp's programs/stress-ng/parse = re-implementation on fixture $fx" \
			diff -u <(lkp_parse "$FX/ksm-unmerge-$fx.txt") \
			<(python3 "$TMP/lkp-parse.py" "$FX/ksm-unmerge-$fx.txt")
	done
else
	LKP_REAL=0
	echo "note: LKP_TREE (an lkp-tests clone) and ruby not both there: lkp's own parser not compared"
fi

# 2. real output
BIN=${KSM_STRESSOR:-$ROOT/build/stress-ksm-unmerge}
if [ ! -x "$BIN" ] && ! make -C "$ROOT" -s build/stress-ksm-unmerge >/dev/null 2>&1; then
	echo "note: real-output part skipped: ./build/stress-ksm-unmerge does not build yet"
elif [ ! -w /sys/kernel/mm/ksm/run ]; then
	echo "note: real-output part skipped: KSM not available (/sys/kernel/mm/ksm/run)"
else
	# lkp's programs/stress-ng/run: --<test>-method all only when --help
	# has a line matching its own expression (the old "..., thp or all
	# (comma list)" form did not, so lkp ran no racer)
	"$BIN" --help >"$TMP/help.txt" 2>&1
	method_opt=""
	if grep -Eq "^ +--ksm-unmerge-method .*(\[.*all|all,)" "$TMP/help.txt"; then
		method_opt="--ksm-unmerge-method all"
	fi
	check "lkp detects the all method in --help" [ -n "$method_opt" ]
	# stress-ng prints a help row's description wrapped to the terminal
	# (80 columns under lkp's pipe: 30 for the option, then lines broken
	# at the last space before 50 characters) and lkp greps line by line,
	# so the "all" choice must be on the row's first line
	first=$(awk '/^ +--ksm-unmerge-method / {
		d = substr($0, 31); n = 0; sp = 0
		for (i = 1; i <= length(d); i++) {
			if (substr(d, i, 1) == " ") sp = i
			if (++n >= 50) { print substr($0, 1, 30) substr(d, 1, sp - 1); exit }
		}
		print; exit }' "$TMP/help.txt")
	echo "    stress-ng's first help line: $first"
	check "lkp detects the all method on stress-ng's first (wrapped) help line" \
		bash -c "echo '$first' | grep -Eq '^ +--ksm-unmerge-method .*(\[.*all|all,)'"
	check "lkp's expression rejects the old help form" bash -c "! echo '      --ksm-unmerge-method M  merge switch and racers: madvise, prctl, sparse, thp or all (comma list)' | grep -Eq '^ +--ksm-unmerge-method .*(\[.*all|all,)'"
	# shellcheck disable=SC2086 # method_opt is two words or none, as in lkp
	locked timeout 50 "$BIN" --timeout 5 --times --verify --metrics --no-rand-seed \
		$method_opt --ksm-unmerge 1 >"$TMP/real.txt" 2>&1
	rc=$?
	check "real run exit 0 (got $rc)" \
		expect_ok "$TMP/real.txt" "$rc"
	python3 "$TMP/lkp-parse.py" "$TMP/real.txt" >"$TMP/real.keys"
	sed 's/^/    /' "$TMP/real.keys"
	check_keys "$TMP/real.txt" "$TMP/real.keys" real
	check "real: the unmerge rate's key" grep -qE '^ksm-unmerge\.unmerge_MB_per_sec: [0-9.]+$' "$TMP/real.keys"
	check "real: every MB rate key ends in _per_sec (LKP's higher-is-better rates)" \
		bash -c "! grep -E '^ksm-unmerge\.[^:]*MB[^:]*: ' '$TMP/real.keys' | grep -vqE '^[^:]*_per_sec(\.pass)?: '"
	[ "$LKP_REAL" = 1 ] && check "lkp's programs/stress-ng/parse = re-implementation on the real run" \
		diff -u <(lkp_parse "$TMP/real.txt") "$TMP/real.keys"
	[ "$fails" -eq 0 ] || sed 's/^/    | /' "$TMP/real.txt"
fi

echo "it/lkp/keys.sh: $fails failure(s)"
checks_done
[ "$fails" -eq 0 ]
