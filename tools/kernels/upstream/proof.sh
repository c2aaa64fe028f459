#!/bin/bash
# tools/kernels/upstream/proof.sh: prove the ksm-fork-zero-pages series under
# tools/kernels/ksm-qemu: the test programs of tools/kernels/upstream/selftests.sh on the
# unpatched and patched 6.12.118 builds, on Debian's 6.12.117 and 6.1.192
# kernels and (--host) on this machine's; check that each fails exactly the
# tests it must, and print one table per program.
#
# usage: tools/kernels/upstream/proof.sh [--runs N] [--host] [--only PROGRAM]
#
#   --runs N        boot each guest N times (default 1)
#   --host          also run the race reproducer on this machine, under the
#                   KSM lock (on a kernel with the bug each run leaves the
#                   global ksm_zero_pages some 20,000 pages higher for good)
#   --only PROGRAM  one of kft-series, kft-base, migrate, repro
#
# What each run must give (test numbers of the TAP that must be "not ok";
# every other test must be "ok" or skipped; "may" tests are races that may
# fail, pass or skip on a kernel with the bug):
#
#   program     kernel       must fail   may fail   exit
#   kft-series  unpatched    11 12 13    -          1    the series' ksm_functional_tests
#   kft-series  debian-6.12  11 12 13    -          1
#   kft-series  patched      -           -          0
#   kft-base    unpatched    -           -          0    6.12.118's own ksm_functional_tests
#   kft-base    patched      -           -          0
#   migrate     unpatched    1           -          1    migrate_device_ksm_zero_pages
#   migrate     patched      -           -          0
#   repro       unpatched    4           1 2 3      1    ksm_fork_zero_pages (races)
#   repro       debian-6.12  4           1 2 3      1
#   repro       debian-6.1   -           -          4    (no ksm_zero_pages: skips)
#   repro       patched      -           -          0
#   repro       host         4           1 2 3      1    (--host)
#
# No guest may log a WARNING, BUG, Oops or lockup.  Outputs go to
# build/upstream/proof/<program>-<kernel>-<run>/ (tools/kernels/ksm-qemu's layout;
# stdout.txt is the TAP), the tables to build/upstream/proof/summary.md.
# Exit status: 0 when every run gave what it must, 1 otherwise.  Run it
# through 'make upstream-proof', which builds what it needs first.
# Environment: UPSTREAM_DIR, UPSTREAM_SELFTESTS (as selftests.sh),
# UPSTREAM_UNPATCHED / UPSTREAM_PATCHED (the build-kernel.sh variant names,
# default unpatched / patched), KSM_QEMU_KERNELS (Debian's kernels),
# UPSTREAM_PROOF (the output directory), UPSTREAM_QEMU_WRAP (a command put
# before each tools/kernels/ksm-qemu call, e.g. a CPU lock of a shared machine).

set -u -o pipefail

TOPDIR=$(cd "$(dirname "${BASH_SOURCE[0]}")/../../.." && pwd)
DIR=${UPSTREAM_DIR:-$TOPDIR/build/upstream}
TESTS=${UPSTREAM_SELFTESTS:-$DIR/selftests}
OUT=${UPSTREAM_PROOF:-$DIR/proof}
UNPATCHED=${UPSTREAM_UNPATCHED:-unpatched}
PATCHED=${UPSTREAM_PATCHED:-patched}
KERNELS=${KSM_QEMU_KERNELS:-$TOPDIR/build/kernels}
LOCK=${KSM_DEV_LOCK:-/tmp/ksm-dev.lock}
WRAP=${UPSTREAM_QEMU_WRAP:-}
KLOG_RE='WARNING:|BUG:|kernel BUG at|Oops|general protection fault|soft lockup|blocked for more than|Kernel panic'
RUNS=1
HOST=0
ONLY=""

# program kernel must-fail may-fail exit
PLAN=(
	"kft-series unpatched 11,12,13 - 1"
	"kft-series debian-6.12 11,12,13 - 1"
	"kft-series patched - - 0"
	"kft-base unpatched - - 0"
	"kft-base patched - - 0"
	"migrate unpatched 1 - 1"
	"migrate patched - - 0"
	"repro unpatched 4 1,2,3 1"
	"repro debian-6.12 4 1,2,3 1"
	"repro debian-6.1 - - 4"
	"repro patched - - 0"
	"repro host 4 1,2,3 1"
)

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

# kernel_of NAME: the image to boot for a guest kernel
kernel_of() {
	case $1 in
	debian-6.12) ls "$KERNELS"/linux-image-6.12.117*/boot/vmlinuz-* 2>/dev/null | head -n 1 ;;
	debian-6.1)  ls "$KERNELS"/linux-image-6.1.0-*/boot/vmlinuz-* 2>/dev/null | head -n 1 ;;
	unpatched)   echo "$DIR/obj-$UNPATCHED/arch/x86/boot/bzImage" ;;
	patched)     echo "$DIR/obj-$PATCHED/arch/x86/boot/bzImage" ;;
	esac
}

# binary_of PROGRAM: the static program to run
binary_of() {
	case $1 in
	kft-series) echo "$TESTS/series/ksm_functional_tests" ;;
	kft-base)   echo "$TESTS/base/ksm_functional_tests" ;;
	migrate)    echo "$TESTS/migrate_device_ksm_zero_pages" ;;
	repro)      echo "$TESTS/ksm_fork_zero_pages" ;;
	esac
}

# run_host DIR: the race reproducer on this machine, under the KSM lock
run_host() {
	local d=$1 rc
	mkdir -p "$d"
	uname -r > "$d/uname.txt"
	if KSM_LOCK=$LOCK lock_held; then
		"$(binary_of repro)" > "$d/stdout.txt" 2> "$d/stderr.txt"
		rc=$?
	else
		flock "$LOCK" "$(binary_of repro)" > "$d/stdout.txt" 2> "$d/stderr.txt"
		rc=$?
	fi
	echo "$rc" > "$d/exit-status"
	: > "$d/dmesg.txt"
}

# run_guest PROGRAM KERNEL DIR: one boot; ksm_functional_tests runs from its
# own directory (test_prctl_fork_exec() execs ./ksm_functional_tests)
run_guest() {
	local prog=$1 kernel=$2 d=$3 k bin init=()
	k=$(kernel_of "$kernel")
	[ -n "$k" ] && [ -f "$k" ] || die "no $kernel kernel (make upstream-kernels kernel-6.1 kernel-6.12)"
	bin=$(binary_of "$prog")
	case $prog in
	kft-*) init=(--init-cmd "cd /ksmq/bin && ./$(basename "$bin")") ;;
	esac
	rm -rf "$d"
	# shellcheck disable=SC2086
	$WRAP "$TOPDIR/tools/kernels/ksm-qemu" --kernel "$k" --program "$bin" "${init[@]}" --out "$d" \
		--mem 1G --cpus 2 --timeout 900 > "$d.log" 2>&1
	[ -f "$d/exit-status" ] || echo 125 > "$d/exit-status"
}

# failed_tests DIR: the numbers of the "not ok" tests, comma-separated
failed_tests() {
	sed -n 's/^not ok \([0-9]*\) .*/\1/p' "$1/stdout.txt" 2>/dev/null | paste -sd, -
}

# judge DIR MUST MAY EXIT: 0 when the run gave what it must (reasons on stderr)
judge() {
	local d=$1 must=$2 may=$3 want=$4 got failed t ok=0
	got=$(cat "$d/exit-status")
	failed=$(failed_tests "$d")
	[ "$got" = "$want" ] || { msg "$d: exit $got, must be $want"; ok=1; }
	for t in ${must//,/ }; do
		[ "$t" = - ] && continue
		[[ ,$failed, == *,$t,* ]] || { msg "$d: test $t must fail"; ok=1; }
	done
	for t in ${failed//,/ }; do
		[[ ,$must,$may, == *,$t,* ]] || { msg "$d: test $t must not fail"; ok=1; }
	done
	if grep -Eq "$KLOG_RE" "$d/dmesg.txt" 2>/dev/null; then
		msg "$d: the kernel logged: $(grep -Em1 "$KLOG_RE" "$d/dmesg.txt")"
		ok=1
	fi
	return "$ok"
}

# result_of DIR N: ok / FAIL / skip / - for test N of a run's TAP
result_of() {
	local line
	line=$(grep -E "^(not )?ok $2( |$)" "$1/stdout.txt" 2>/dev/null | head -n 1)
	case $line in
	"not ok"*) echo "FAIL" ;;
	*"# SKIP"*) echo "skip" ;;
	ok*) echo "ok" ;;
	*) grep -q '^1\.\.0 # SKIP' "$1/stdout.txt" 2>/dev/null && echo "skip" || echo "-" ;;
	esac
}

# summary_of PROGRAM: the markdown table of every run of one program
summary_of() {
	local prog=$1 d n t titles line p k dirs=()
	# columns in the plan's order: unpatched, Debian, patched, host
	for line in "${PLAN[@]}"; do
		read -r p k _ <<< "$line"
		[ "$p" = "$prog" ] || continue
		for d in "$OUT/$prog-$k"-[0-9]*; do
			[ -f "$d/exit-status" ] && dirs+=("$d")
		done
	done
	[ ${#dirs[@]} -gt 0 ] || return 0
	titles=$(cat "${dirs[@]/%//stdout.txt}" 2>/dev/null |
		sed -n 's/^\(not \)\{0,1\}ok \([0-9][0-9]*\) \(- \)\{0,1\}\([^#]*\)$/\2 \4/p' |
		sort -n -u -k1,1)
	printf '\n%s (%s)\n\n| test |' "$prog" "$(basename "$(binary_of "$prog")")"
	for d in "${dirs[@]}"; do printf ' %s |' "${d#"$OUT/$prog"-}"; done
	printf '\n|---|'
	for d in "${dirs[@]}"; do printf -- '---|'; done
	printf '\n'
	while read -r n t; do
		[ -n "$n" ] || continue
		printf '| %s %s |' "$n" "$t"
		for d in "${dirs[@]}"; do printf ' %s |' "$(result_of "$d" "$n")"; done
		printf '\n'
	done <<< "$titles"
	printf '| kernel |'
	for d in "${dirs[@]}"; do printf ' %s |' "$(cat "$d/uname.txt" 2>/dev/null || echo '?')"; done
	printf '\n| exit status |'
	for d in "${dirs[@]}"; do printf ' %s |' "$(cat "$d/exit-status")"; done
	printf '\n'
}

main() {
	local line prog kernel must may want run d bad=0
	while [ $# -gt 0 ]; do
		case $1 in
		--runs) [[ ${2:-} =~ ^[1-9][0-9]?$ ]] || die "malformed --runs '${2:-}'"; RUNS=$2; shift 2 ;;
		--host) HOST=1; shift ;;
		--only) [ -n "$(binary_of "${2:-}")" ] || die "unknown --only '${2:-}'"; ONLY=$2; shift 2 ;;
		*) die "unknown option '$1'" ;;
		esac
	done
	for prog in kft-series kft-base migrate repro; do
		[ -x "$(binary_of "$prog")" ] || die "no $(binary_of "$prog") (make upstream-selftests)"
	done
	if [ -n "$(cmp "$DIR/obj-$UNPATCHED/.config" "$DIR/obj-$PATCHED/.config" 2>&1)" ]; then
		msg "the unpatched and patched builds' .config differ"
		bad=1
	fi
	mkdir -p "$OUT" || die "cannot create $OUT"
	for line in "${PLAN[@]}"; do
		read -r prog kernel must may want <<< "$line"
		[ -z "$ONLY" ] || [ "$ONLY" = "$prog" ] || continue
		[ "$kernel" = host ] && [ "$HOST" = 0 ] && continue
		rm -rf "$OUT/$prog-$kernel"-[0-9]*
		for run in $(seq 1 "$RUNS"); do
			[ "$kernel" = host ] && [ "$run" -gt 1 ] && break
			d=$OUT/$prog-$kernel-$run
			msg "$prog on $kernel, run $run"
			if [ "$kernel" = host ]; then
				run_host "$d"
			else
				run_guest "$prog" "$kernel" "$d"
			fi
			if judge "$d" "$must" "$may" "$want"; then
				msg "$prog on $kernel, run $run: as it must (exit $(cat "$d/exit-status"), not ok: $(failed_tests "$d"))"
			else
				bad=1
			fi
		done
	done
	{
		echo "# proof of docs/upstream/ksm-fork-zero-pages ($(date -u +%Y-%m-%dT%H:%MZ))"
		for prog in kft-series kft-base migrate repro; do
			summary_of "$prog"
		done
	} > "$OUT/summary.md"
	cat "$OUT/summary.md"
	if [ "$bad" = 0 ]; then
		msg "every run gave what it must"
	else
		msg "some run did not give what it must"
	fi
	return "$bad"
}

main "$@"
