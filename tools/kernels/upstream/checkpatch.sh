#!/bin/bash
# tools/kernels/upstream/checkpatch.sh: check the ksm-fork-zero-pages series as its
# sender will mail it: apply the shipped patches with git am, sign them off
# the way docs/upstream/README.md tells the sender to (git rebase --exec
# 'git commit --amend --no-edit --reset-author --signoff'), format them
# again, and run the kernel's scripts/checkpatch.pl --strict on the result.
#
# usage: tools/kernels/upstream/checkpatch.sh
#
# Fails unless checkpatch reports nothing on the signed patches but
# UNKNOWN_COMMIT_ID (the Fixes: ids: Debian's source has no git history),
# and nothing on the shipped, unsigned ones but that and MISSING_SIGN_OFF
# (the sender signs); unless every signed patch carries exactly one
# Signed-off-by, its author's; and unless the cover letter is at most 80
# lines.  The sender's identity here is a placeholder too.  Works in
# build/upstream/checkpatch/ (UPSTREAM_DIR) on a git repository of only the
# files the series touches, taken from the pristine tree.
# Environment: UPSTREAM_DIR, UPSTREAM_CHECKPATCH (the work directory),
# UPSTREAM_CASE_DIR (the series, docs/upstream/ksm-fork-zero-pages).

set -u -o pipefail

TOPDIR=$(cd "$(dirname "${BASH_SOURCE[0]}")/../../.." && pwd)
DIR=${UPSTREAM_DIR:-$TOPDIR/build/upstream}
CASE=${UPSTREAM_CASE_DIR:-$TOPDIR/docs/upstream/ksm-fork-zero-pages}
PRISTINE=$DIR/linux-6.12
WORK=${UPSTREAM_CHECKPATCH:-$DIR/checkpatch}
SENDER_NAME="Proof Sender"
SENDER_EMAIL="proof.sender@example.invalid"

# msg: one line on stderr, prefixed with the tool name
msg() {
	echo "checkpatch: $*" >&2
}

# die: print an error line and exit 1
die() {
	msg "error: $*"
	exit 1
}

# checkpatch_types FILE...: the message types checkpatch --strict reports
checkpatch_types() {
	"$PRISTINE/scripts/checkpatch.pl" --strict --show-types --no-summary --quiet "$@" |
		sed -n 's/^\(WARNING\|ERROR\|CHECK\):\([A-Z_]*\):.*/\2/p' | sort | uniq -c
}

# only_types ALLOWED TYPES: fail unless every counted type is in ALLOWED
only_types() {
	local allowed=$1 counts=$2 bad
	bad=$(echo "$counts" | awk -v ok="$allowed" 'NF == 2 && index(" " ok " ", " " $2 " ") == 0')
	[ -z "$bad" ]
}

# scratch_repo: a git repository of the pristine files the series touches
scratch_repo() {
	local f
	rm -rf "$WORK"
	mkdir -p "$WORK/repo" || die "cannot create $WORK"
	for f in $(sed -n 's|^+++ b/||p' "${PATCHES[@]}" | sort -u); do
		mkdir -p "$WORK/repo/$(dirname "$f")"
		cp "$PRISTINE/$f" "$WORK/repo/$f" || die "no $f in $PRISTINE"
	done
	git -C "$WORK/repo" init -q &&
		git -C "$WORK/repo" add -A &&
		git -C "$WORK/repo" -c user.name=Pristine -c user.email=pristine@example.invalid \
			commit -q -m "Linux 6.12.118: the files the series touches" ||
		die "cannot make the scratch repository"
}

# sign_as_sender: git am, then the sender's sign-off of README.md
sign_as_sender() {
	local base
	base=$(git -C "$WORK/repo" rev-parse HEAD)
	git -C "$WORK/repo" -c user.name="$SENDER_NAME" -c user.email="$SENDER_EMAIL" \
		am -q "${PATCHES[@]}" || die "git am of the series failed"
	git -C "$WORK/repo" -c user.name="$SENDER_NAME" -c user.email="$SENDER_EMAIL" \
		rebase -q --exec 'git commit -q --amend --no-edit --reset-author --signoff' "$base" \
		>/dev/null 2>&1 || die "the sender's rebase --exec failed"
	git -C "$WORK/repo" format-patch -q -o "$WORK/signed" "$base" ||
		die "git format-patch failed"
}

main() {
	local counts f n bad=0 sob cover
	[ -x "$PRISTINE/scripts/checkpatch.pl" ] ||
		die "no $PRISTINE/scripts/checkpatch.pl (make upstream-kernels first)"
	mapfile -t PATCHES < <(ls "$CASE"/0*.patch | grep -v '/0000-cover-letter\.patch$')
	[ ${#PATCHES[@]} -gt 0 ] || die "no patches in $CASE"
	command -v git >/dev/null || die "no git (apt-get install git)"

	counts=$(checkpatch_types "${PATCHES[@]}")
	msg "shipped patches (unsigned): $(echo $counts)"
	only_types "UNKNOWN_COMMIT_ID MISSING_SIGN_OFF" "$counts" ||
		{ msg "unexpected checkpatch findings in the shipped patches"; bad=1; }

	scratch_repo
	sign_as_sender
	counts=$(checkpatch_types "$WORK"/signed/*.patch)
	msg "as the sender mails them (signed): $(echo $counts)"
	only_types "UNKNOWN_COMMIT_ID" "$counts" ||
		{ msg "unexpected checkpatch findings in the signed patches"; bad=1; }
	for f in "$WORK"/signed/*.patch; do
		sob=$(grep -c "^Signed-off-by: $SENDER_NAME <$SENDER_EMAIL>$" "$f")
		n=$(grep -c '^Signed-off-by:' "$f")
		grep -q "^From: $SENDER_NAME <$SENDER_EMAIL>$" "$f" && [ "$sob" = 1 ] && [ "$n" = 1 ] ||
			{ msg "$(basename "$f"): not authored and signed off once by the sender"; bad=1; }
	done

	cover=$CASE/0000-cover-letter.patch
	if [ ! -f "$cover" ]; then
		msg "no cover letter $cover"; bad=1
	elif [ "$(wc -l < "$cover")" -gt 80 ]; then
		msg "the cover letter has $(wc -l < "$cover") lines (80 at most)"; bad=1
	fi
	[ "$bad" = 0 ] && msg "clean: only unknown commit ids (and, unsigned, the missing sign-off)"
	return "$bad"
}

main "$@"
