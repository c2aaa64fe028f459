#!/bin/bash
# tests/it/cycle/patterns.sh: a short run per pattern and merge switch on the real
# kernel: exit 0, pages merged (none for unique), cow_ksm grew by at least
# the KSM pages unmerged, bogo ops > 0 and equal to the verified cycles,
# valid YAML, knobs as before.  (No racer forks here: no run of these can
# meet the kernel bug "KSM zero pages charged at fork", so each must pass.)
. "$(dirname "$0")/../../lib/lib.sh"
require_ksm
check python3 -c 'import yaml' 2>/dev/null || fail "python3-yaml missing (make deps)"

before=$(knobs)
for pattern in same few zero mixed unique; do
	for method in madvise prctl; do
		log=$TMPD/$pattern-$method.log
		yaml=$TMPD/$pattern-$method.yaml
		"$STRESSOR" --ksm-unmerge 1 -t 3 --metrics --verify --yaml "$yaml" \
			--ksm-unmerge-bytes 16M --ksm-unmerge-pattern $pattern \
			--ksm-unmerge-method $method > "$log" 2>&1
		rc=$?
		check [ $rc = 0 ] || { cat "$log"; fail "$pattern/$method exited $rc"; }
		ops=$(bogo_ops "$log")
		merged=$(total "$log" pages-merged)
		zero=$(total "$log" zero-pages)
		unmerged=$(total "$log" pages-unmerged)
		cow=$(total "$log" cow-ksm-delta)
		check [ -n "$ops" ] && [ "$ops" -gt 0 ] || { cat "$log"; fail "$pattern/$method: bogo ops '$ops'"; }
		if [ $pattern = unique ]; then
			check [ "$merged" = 0 ] || fail "unique/$method merged $merged pages"
			check grep -q "unmerge MB per sec" "$log" && fail "unique/$method printed a throughput"
		else
			check [ "$merged" -gt 0 ] || fail "$pattern/$method merged nothing"
			# KSM zero pages are unshared without a cow_ksm count
			check [ "$cow" -ge $((unmerged - zero)) ] || fail "$pattern/$method cow_ksm $cow < $((unmerged - zero))"
		fi
		case $pattern in
		zero) check [ "$zero" = "$merged" ] || fail "zero/$method: $zero of $merged are zero pages";;
		same|few) check [ "$zero" = 0 ] || fail "$pattern/$method: $zero zero pages";;
		esac
		check [ "$(total "$log" cycles)" = "$ops" ] || fail "$pattern/$method: cycles=$(total "$log" cycles), bogo ops $ops"
		check python3 - "$yaml" "$ops" <<'PY' || fail "$pattern/$method: bad YAML"
import sys, yaml
d = yaml.safe_load(open(sys.argv[1]))
m = d["metrics"][0]
assert m["stressor"] == "ksm-unmerge", m
assert m["bogo-ops"] == int(sys.argv[2]), (m["bogo-ops"], sys.argv[2])
PY
		after=$(knobs)
		check [ "$before" = "$after" ] || fail "$pattern/$method knobs changed: '$before' -> '$after'"
		echo "ok $pattern/$method ops=$ops merged=$merged zero=$zero cow=$cow"
	done
done
check [ -z "$(leftovers)" ] || fail "processes left: $(leftovers)"
checks_done
exit 0
