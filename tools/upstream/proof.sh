#!/bin/bash
# tools/upstream/proof.sh: run the ksm_fork_zero_pages reproducer on this
# machine's kernel and, under tools/ksm-qemu, on Debian's 6.12.117 and 6.1.192
# and on the unpatched and patched 6.12.117 builds; check each exit status
# against what the kernel should give and print one table of every test.
#
# usage: tools/upstream/proof.sh [--runs N] [--no-host] [--only NAME]
#
#   --runs N    boot each qemu kernel N times (default 1)
#   --no-host   leave this machine's kernel out (it changes host KSM state:
#               on a kernel with the bug each run leaves the global
#               ksm_zero_pages about 20,000 higher for good)
#   --only NAME one of host, debian-6.12, debian-6.1, unpatched, patched
#
# Expected exit statuses (kselftest): host 1 and debian-6.12 1 (the bugs are
# there), debian-6.1 4 (no ksm_zero_pages: skipped), unpatched 1, patched 0.
# The outputs go to build/upstream/proof/<name>-<run>/ (tools/ksm-qemu's
# layout; stdout.txt is the TAP) and the table to build/upstream/proof/summary.md.
# Exit status: 0 when every run gave its expected status, 1 otherwise.
# Run it through 'make upstream-proof', which builds what it needs first.

set -u -o pipefail

TOPDIR=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
DIR=${UPSTREAM_DIR:-$TOPDIR/build/upstream}
OUT=$DIR/proof
REPRO=$DIR/ksm_fork_zero_pages
KERNELS=${KSM_QEMU_KERNELS:-$TOPDIR/build/kernels}
LOCK=${KSM_DEV_LOCK:-/tmp/ksm-dev.lock}
RUNS=1
HOST=1
ONLY=""

. "$TOPDIR/tests/lib/lock.sh"

# msg: one line on stderr, prefixed with the tool name
msg() {
	echo "proof: $*" >&2
}

# die: print an error line and exit 1
die() {
	msg "error: $*"
	exit 1
}

# kernel_of NAME: print the image to boot for a qemu variant
kernel_of() {
	case $1 in
	debian-6.12) ls "$KERNELS"/linux-image-6.12.117*/boot/vmlinuz-* 2>/dev/null | head -n 1 ;;
	debian-6.1)  ls "$KERNELS"/linux-image-6.1.0-*/boot/vmlinuz-* 2>/dev/null | head -n 1 ;;
	unpatched|patched) echo "$DIR/obj-$1/arch/x86/boot/bzImage" ;;
	esac
}

# expected NAME: the exit status the reproducer must give there
expected() {
	case $1 in
	host|debian-6.12|unpatched) echo 1 ;;
	debian-6.1) echo 4 ;;
	patched) echo 0 ;;
	esac
}

# knobs: the KSM knobs the reproducer writes, on one line
knobs() {
	local k
	for k in run pages_to_scan sleep_millisecs use_zero_pages advisor_mode; do
		[ -r "/sys/kernel/mm/ksm/$k" ] && printf '%s=%s ' "$k" "$(cat "/sys/kernel/mm/ksm/$k")"
	done
}

# host_inner RUNDIR: with the KSM lock held, the reproducer on this machine;
# the knobs must read the same before and after it
host_inner() {
	local d=$1 before after rc
	before=$(knobs)
	"$REPRO" > "$d/stdout.txt" 2> "$d/stderr.txt"
	rc=$?
	after=$(knobs)
	uname -r > "$d/uname.txt"
	echo "$rc" > "$d/exit-status"
	if [ "$before" != "$after" ]; then
		msg "host: the KSM knobs changed: before '$before', after '$after'"
		echo 99 > "$d/exit-status"
	fi
}

# run_host RUNDIR: host_inner under the KSM lock (unless an ancestor holds it)
run_host() {
	local d=$1
	mkdir -p "$d"
	if KSM_LOCK=$LOCK lock_held; then
		host_inner "$d"
	else
		(
			flock 9 || exit 1
			host_inner "$d"
		) 9>> "$LOCK"
	fi
}

# run_qemu NAME RUNDIR: the reproducer in a guest
run_qemu() {
	local name=$1 d=$2 k
	k=$(kernel_of "$name")
	[ -n "$k" ] && [ -f "$k" ] || die "no kernel for $name (make upstream-kernels kernel-6.1 kernel-6.12)"
	rm -rf "$d"
	"$TOPDIR/tools/ksm-qemu" --kernel "$k" --program "$REPRO" --out "$d" \
		--mem 1G --cpus 2 --timeout 900 > "$d.log" 2>&1
	[ -f "$d/exit-status" ] || echo 125 > "$d/exit-status"
}

# result_of RUNDIR N: ok / FAIL / skip for test N of a run's TAP
result_of() {
	local line
	line=$(grep -E "^(not )?ok $2 " "$1/stdout.txt" 2>/dev/null | head -n 1)
	case $line in
	"not ok"*) echo "FAIL" ;;
	*"# SKIP"*) echo "skip" ;;
	ok*) echo "ok" ;;
	*) grep -q '^1\.\.0 # SKIP' "$1/stdout.txt" 2>/dev/null && echo "skip" || echo "-" ;;
	esac
}

# summary: the markdown table of every run
summary() {
	local d n names=() titles
	for d in "$OUT"/*-[0-9]*/; do
		[ -f "$d/exit-status" ] && names+=("$(basename "$d")")
	done
	titles=$(grep -hoE '^(not )?ok [0-9]+ - [^:#]*' "$OUT"/*/stdout.txt 2>/dev/null |
		sed -E 's/^(not )?ok ([0-9]+) - /\2 /' | sort -n -u -k1,1)
	{
		printf '| test |'
		for d in "${names[@]}"; do printf ' %s |' "$d"; done
		printf '\n|---|'
		for d in "${names[@]}"; do printf -- '---|'; done
		printf '\n'
		while read -r n rest; do
			[ -n "$n" ] || continue
			printf '| %s %s |' "$n" "$rest"
			for d in "${names[@]}"; do printf ' %s |' "$(result_of "$OUT/$d" "$n")"; done
			printf '\n'
		done <<< "$titles"
		printf '| kernel |'
		for d in "${names[@]}"; do printf ' %s |' "$(cat "$OUT/$d/uname.txt" 2>/dev/null || echo '?')"; done
		printf '\n| exit status (expected) |'
		for d in "${names[@]}"; do
			printf ' %s (%s) |' "$(cat "$OUT/$d/exit-status")" "$(expected "${d%-*}")"
		done
		printf '\n'
	} > "$OUT/summary.md"
	cat "$OUT/summary.md"
}

main() {
	local names=(host debian-6.12 debian-6.1 unpatched patched) name run d bad=0 got want
	while [ $# -gt 0 ]; do
		case $1 in
		--runs) [[ ${2:-} =~ ^[1-9][0-9]?$ ]] || die "malformed --runs '${2:-}'"; RUNS=$2; shift 2 ;;
		--no-host) HOST=0; shift ;;
		--only) [ -n "$(expected "${2:-}")" ] || die "unknown --only '${2:-}'"; ONLY=$2; shift 2 ;;
		*) die "unknown option '$1'" ;;
		esac
	done
	[ -x "$REPRO" ] || die "no $REPRO (make upstream-repro)"
	mkdir -p "$OUT" || die "cannot create $OUT"
	rm -f "$OUT/summary.md"
	if [ -n "$(cmp "$DIR/obj-unpatched/.config" "$DIR/obj-patched/.config" 2>&1)" ]; then
		msg "warning: the unpatched and patched builds' .config differ"
		bad=1
	fi
	for name in "${names[@]}"; do
		[ -z "$ONLY" ] || [ "$ONLY" = "$name" ] || continue
		[ "$name" = host ] && [ "$HOST" = 0 ] && continue
		rm -rf "$OUT/$name"-[0-9]*
		for run in $(seq 1 "$RUNS"); do
			[ "$name" = host ] && [ "$run" -gt 1 ] && break
			d=$OUT/$name-$run
			msg "$name run $run"
			if [ "$name" = host ]; then
				run_host "$d"
			else
				run_qemu "$name" "$d"
			fi
			got=$(cat "$d/exit-status")
			want=$(expected "$name")
			if [ "$got" = "$want" ]; then
				msg "$name run $run: exit $got, as expected"
			else
				msg "$name run $run: exit $got, expected $want"
				bad=1
			fi
		done
	done
	summary
	[ "$bad" = 0 ] && msg "every kernel gave the expected result" ||
		msg "some kernel did not give the expected result"
	return "$bad"
}

main "$@"
