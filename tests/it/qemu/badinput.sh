#!/bin/bash
# tests/it/qemu/badinput.sh: tools/kernels/ksm-qemu rejects bad input with one clear
# "ksm-qemu: error: ..." line and exit status 64, before booting anything.
# Needs no qemu, kernel or busybox: it uses fake stand-ins for them.

cd "$(dirname "$0")/../../.." || exit 1
. tests/lib/checks.sh
TOOL=tools/kernels/ksm-qemu
T=$(mktemp -d /tmp/it-qemu-badinput.XXXXXX) || exit 1
trap 'rm -rf "$T"' EXIT
PASS=0
FAIL=0

# fake_bzimage: write a file that carries the bzImage "HdrS" magic at 0x202
fake_bzimage() {
	head -c 1024 /dev/zero > "$1"
	printf 'HdrS' | dd of="$1" bs=1 seek=514 conv=notrunc 2>/dev/null
}

# expect_bad: run the tool with the given env/args; it must exit 64 and print
# exactly one stderr line "ksm-qemu: error: ..." containing $1
expect_bad() {
	local want=$1 name=$2 rc lines
	shift 2
	env "$@" > "$T/out" 2> "$T/err" < /dev/null
	rc=$?
	lines=$(wc -l < "$T/err")
	if [ "$rc" -eq 64 ] && [ "$lines" -eq 1 ] && [ ! -s "$T/out" ] &&
	   grep -q "^ksm-qemu: error: .*$want" "$T/err"; then
		echo "ok   $name: $(cat "$T/err")"
		PASS=$((PASS + 1))
	else
		echo "FAIL $name: rc=$rc (want 64), $lines stderr line(s) (want 1), want '$want'"
		sed 's/^/     | /' "$T/err" "$T/out"
		FAIL=$((FAIL + 1))
	fi
}

fake_bzimage "$T/bzImage"
head -c 1024 /dev/zero > "$T/notbz"
printf 'int main(void) { return 0; }\n' > "$T/s.c"
if ! gcc -static -o "$T/static" "$T/s.c" 2> "$T/gcc.err"; then
	echo "FAIL cannot build a static test binary: $(head -n 1 "$T/gcc.err")"
	exit 1
fi
GOOD=(KSM_QEMU_BIN=/bin/true "$TOOL" --kernel "$T/bzImage" --stressor "$T/static")
AVAIL=$(awk '/^MemAvailable:/ {print int($2 / 1024)}' /proc/meminfo)

expect_bad "does not exist" "missing kernel" \
	"$TOOL" --kernel "$T/nope" -- --ksm-unmerge 1
expect_bad "is required" "no --kernel" \
	"$TOOL" -- --ksm-unmerge 1
expect_bad "not an x86 bzImage" "kernel without HdrS" \
	"$TOOL" --kernel "$T/notbz" -- --ksm-unmerge 1
expect_bad "not an x86 bzImage" "kernel is a short file" \
	"$TOOL" --kernel "$T/s.c" -- --ksm-unmerge 1
expect_bad "not a readable file" "kernel is a directory" \
	"$TOOL" --kernel "$T" -- --ksm-unmerge 1
expect_bad "no qemu binary" "no qemu" \
	KSM_QEMU_BIN=/nonexistent/qemu-system-x86_64 "$TOOL" --kernel "$T/bzImage" -- --ksm-unmerge 1
expect_bad "larger than the host's MemAvailable" "--mem > MemAvailable" \
	"${GOOD[@]}" --mem "$((AVAIL + 1024))M" -- --ksm-unmerge 1
expect_bad "larger than the host's MemAvailable" "--mem in G > MemAvailable" \
	"${GOOD[@]}" --mem "$((AVAIL / 1024 + 2))G" -- --ksm-unmerge 1
for m in abc 1T 0 -1G 1.5G ""; do
	expect_bad "malformed --mem" "--mem '$m'" \
		"${GOOD[@]}" --mem "$m" -- --ksm-unmerge 1
done
expect_bad "too small" "--mem 16M" \
	"${GOOD[@]}" --mem 16M -- --ksm-unmerge 1
expect_bad "unknown option '--frobnicate'" "unknown option" \
	"${GOOD[@]}" --frobnicate -- --ksm-unmerge 1
expect_bad "unknown option '--ksm-unmerge'" "stressor option before --" \
	"${GOOD[@]}" --ksm-unmerge 1
expect_bad "needs a value" "option without value" \
	"${GOOD[@]}" --mem
expect_bad "malformed --cpus" "--cpus x" \
	"${GOOD[@]}" --cpus x -- --ksm-unmerge 1
expect_bad "malformed --timeout" "--timeout 0" \
	"${GOOD[@]}" --timeout 0 -- --ksm-unmerge 1
expect_bad "malformed --accel" "--accel xen" \
	"${GOOD[@]}" --accel xen -- --ksm-unmerge 1
expect_bad "no stressor arguments" "nothing after --" \
	"${GOOD[@]}" --
expect_bad "missing or not executable" "no stressor binary" \
	KSM_QEMU_BIN=/bin/true "$TOOL" --kernel "$T/bzImage" --stressor "$T/nope" -- --ksm-unmerge 1
if command -v readelf > /dev/null && readelf -l /bin/ls | grep -q 'program interpreter'; then
	expect_bad "dynamically linked" "dynamic stressor" \
		KSM_QEMU_BIN=/bin/true "$TOOL" --kernel "$T/bzImage" --stressor /bin/ls -- --ksm-unmerge 1
else
	echo "skip dynamic stressor: no readelf or /bin/ls is not dynamic"
fi
expect_bad "program '$T/nope' is missing" "no --program binary" \
	KSM_QEMU_BIN=/bin/true "$TOOL" --kernel "$T/bzImage" --program "$T/nope"
if command -v readelf > /dev/null && readelf -l /bin/ls | grep -q 'program interpreter'; then
	expect_bad "dynamically linked" "dynamic --program" \
		KSM_QEMU_BIN=/bin/true "$TOOL" --kernel "$T/bzImage" --program /bin/ls
fi
cp "$T/static" "$T/bad name"
expect_bad "has characters other than" "--program name with a space" \
	KSM_QEMU_BIN=/bin/true "$TOOL" --kernel "$T/bzImage" --program "$T/bad name"
expect_bad "busybox" "no busybox" \
	KSM_QEMU_BUSYBOX=/nonexistent/busybox "${GOOD[@]}" -- --ksm-unmerge 1

# --batch and its options
printf 'a.1 true\n' > "$T/batch.ok"
expect_bad "batch file '$T/none' is missing" "--batch without the file" \
	"${GOOD[@]}" --batch "$T/none"
printf '# only a comment\n\n' > "$T/batch.empty"
expect_bad "has no command" "--batch file without a command" \
	"${GOOD[@]}" --batch "$T/batch.empty"
printf 'a/b true\n' > "$T/batch.name"
expect_bad "malformed command name 'a/b'" "--batch command name with a slash" \
	"${GOOD[@]}" --batch "$T/batch.name"
printf 'a.1\n' > "$T/batch.nocmd"
expect_bad "command 'a.1' has no command line" "--batch name without a command" \
	"${GOOD[@]}" --batch "$T/batch.nocmd"
printf 'a.1 true\na.1 false\n' > "$T/batch.dup"
expect_bad "a command name is used twice" "--batch name used twice" \
	"${GOOD[@]}" --batch "$T/batch.dup"
expect_bad "takes no arguments after --" "--batch with stressor arguments" \
	"${GOOD[@]}" --batch "$T/batch.ok" -- --ksm-unmerge 1
expect_bad "exclude each other" "--batch with --init-cmd" \
	"${GOOD[@]}" --batch "$T/batch.ok" --init-cmd true
expect_bad "malformed --group-kills" "--group-kills x" \
	"${GOOD[@]}" --batch "$T/batch.ok" --group-kills x
expect_bad "malformed --group-passes" "--group-passes racer" \
	"${GOOD[@]}" --batch "$T/batch.ok" --group-passes racer
expect_bad "malformed --stop-after" "--stop-after -1" \
	"${GOOD[@]}" --batch "$T/batch.ok" --stop-after -1
expect_bad "malformed --cmd-timeout" "--cmd-timeout 1.5" \
	"${GOOD[@]}" --batch "$T/batch.ok" --cmd-timeout 1.5
expect_bad "more than one --program without --batch" "two --program without --batch" \
	KSM_QEMU_BIN=/bin/true "$TOOL" --kernel "$T/bzImage" --program "$T/static" --program "$T/static"

echo "it/qemu/badinput.sh: $PASS passed, $FAIL failed"
checked $((PASS + FAIL))
checks_done
[ "$FAIL" -eq 0 ]
