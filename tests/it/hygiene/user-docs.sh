#!/bin/bash
# tests/it/hygiene/user-docs.sh: the user docs (README.md and every .md
# under docs/) hold how-to and reference only; dated measurements and
# investigations live in records/.  A user doc must not name:
#   - an issue ("issue 30", "issues 19", "#12": the tracker is not the
#     reader's; history belongs in commits),
#   - "this machine" (the reader's machine is not the one a figure came from),
#   - the development lock file /tmp/ksm-dev.lock (a test-harness detail:
#     say "the KSM lock the tests take"),
#   - an ISO date (a dated figure is a record: records/).
# Canaries prove each rule flags a bad line and passes lines that only look
# alike (anchors, HTML entities, version numbers, years).
#
# Exit: 0 pass, anything else fail (never skips).
# run-tests: no KSM lock (it never touches the host's KSM)

cd "$(dirname "$0")/../../.." || exit 2
. tests/lib/checks.sh
tmp=$(mktemp -d /tmp/hyg-docs.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
errors=0

# RULES: "what<TAB>extended regex" (matched case-insensitively)
RULES=$(printf '%s\t%s\n' \
	"an issue number" '\bissues? +#?[0-9]+' \
	"an issue number" '(^|[^[:alnum:]_&/#])#[0-9]+\b' \
	"\"this machine\"" '\bthis +machine\b' \
	"the lock path" '/tmp/ksm-dev\.lock' \
	"a date" '\b(19|20)[0-9]{2}-(0[1-9]|1[0-2])-(0[1-9]|[12][0-9]|3[01])\b')

# offences FILE...: "FILE:LINE: names WHAT: text" per offending line and rule
offences() {
	local what re
	while IFS=$'\t' read -r what re; do
		grep -HniE -- "$re" "$@" | while IFS= read -r hit; do
			printf '%s: names %s: %s\n' "$(cut -d: -f1,2 <<<"$hit")" "$what" \
				"$(cut -d: -f3- <<<"$hit" | cut -c1-120)"
		done
	done <<<"$RULES"
}

# canaries: each bad line is flagged alone; the good file is not flagged
bad=(
	"Fixed in issue 30, item 4."
	"See Issues 19 and 20."
	"as discussed in #21."
	"Measured on this machine: 1.2 GB/s."
	"Run it under \`flock /tmp/ksm-dev.lock\`."
	"Measured 2026-12-01, 08:02 UTC."
)
for i in "${!bad[@]}"; do
	printf 'fine line\n%s\n' "${bad[$i]}" >"$tmp/bad-$i.md"
	out=$(offences "$tmp/bad-$i.md")
	check [ "$(grep -c . <<<"$out")" = 1 ] ||
		{ echo "FAIL: canary not flagged once: '${bad[$i]}': ${out:-nothing}"; errors=$((errors + 1)); }
done
cat >"$tmp/good.md" <<'GOOD'
See [KSM knobs](#ksm-knobs) and [design](docs/design.md#stopping-on-time).
A non-breaking&#160;space, a page at https://example.org/#12, a heading:
### 1. Setup
Debian 6.12.117+deb12-amd64, 6.1.192-3, 6.12.118-1~deb12u1; the 2025 change.
2 x 8 GiB, 10-26 %, -t 60m, pages 1276-2351, an issue tracker, any machine.
GOOD
out=$(offences "$tmp/good.md")
check [ -z "$out" ] || { echo "FAIL: a clean file is flagged:"; echo "$out"; errors=$((errors + 1)); }

docs=(README.md)
while IFS= read -r f; do docs+=("$f"); done < <(find docs -name '*.md' | sort)
check [ "${#docs[@]}" -gt 5 ] || { echo "FAIL: only ${#docs[@]} user docs found"; exit 1; }
out=$(offences "${docs[@]}")
check [ -z "$out" ] || {
	echo "FAIL: user docs name what belongs in records/ or commits:"
	echo "$out"
	errors=$((errors + 1))
}
echo "${#docs[@]} user docs checked against $(grep -c . <<<"$RULES") rules"
[ "$errors" = 0 ] || { echo "FAIL: $errors user-doc checks failed"; exit 1; }
checks_done
