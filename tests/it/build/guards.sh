#!/bin/bash
# tests/it/build/guards.sh: every feature guard compiles.  The stressor is built once
# per HAVE_* turned off (core-shim: -DSTRESS_NO_HAVE_X), -O0, in parallel,
# into this script's temp dir (never the main binary).  Each build must list
# the racers the guard removes as "not built: reason" and every other racer
# as built (--ksm-unmerge-method which); a short --verify cycle with a
# removed racer must pass and report it "skipped: not built".  A guard that
# removes the stressor itself (HAVE_MADVISE, HAVE_SYS_PRCTL_H) must still
# build, list no racer and run as "not implemented".
. "$(dirname "$0")/../../lib/lib.sh"

# GUARD:racers it removes (comma list, "-" none, "all" the whole stressor)
GUARDS="VMSPLICE:vmsplice LINUX_USERFAULTFD_H:uffd-wp,uffd-minor LINUX_IO_URING_H:- SYS_VFS_H:- SPLICE:- MADVISE:all SYS_PRCTL_H:all"

[ -r "$TOP/core-shim/libshim.a" ] || fail "build first: $TOP/core-shim/libshim.a missing"
CFLAGS_GUARD="-O0 -std=gnu11 -Wall -Wextra -Werror -D_GNU_SOURCE -I$TOP/core-shim -I$TOP"

# build GUARD: the stressor with HAVE_GUARD off, into $TMPD/GUARD/
build() {
	mkdir -p "$TMPD/$1"
	cc $CFLAGS_GUARD -DSTRESS_NO_HAVE_"$1" -c -o "$TMPD/$1/stress-ksm-unmerge.o" \
		"$TOP/stress-ksm-unmerge.c" >"$TMPD/$1/build.log" 2>&1 &&
	cc -o "$TMPD/$1/stress-ksm-unmerge" "$TMPD/$1/stress-ksm-unmerge.o" \
		"$TOP/core-shim/libshim.a" -lbsd -lpthread -lm >>"$TMPD/$1/build.log" 2>&1
}

pids=""
for g in $GUARDS; do
	build "${g%%:*}" & pids="$pids $!"
done
for p in $pids; do wait "$p"; done
ALL=$(racer_list | awk '{ print $1 }')

for g in $GUARDS; do
	guard=${g%%:*} gone=${g#*:}
	bin=$TMPD/$guard/stress-ksm-unmerge
	check [ -x "$bin" ] || { cat "$TMPD/$guard/build.log"; fail "build with HAVE_$guard off failed"; }
	list=$("$bin" --ksm-unmerge-method which)
	if [ "$gone" = all ]; then
		check grep -q "^no racers: built without" <<<"$list" || fail "HAVE_$guard off: which printed '$list'"
		out=$("$bin" --ksm-unmerge 1 -t 1 2>&1)
		check grep -q "not implemented\|unimplemented\|built without" <<<"$out" ||
			fail "HAVE_$guard off: no 'not implemented' line: $out"
		echo "HAVE_$guard off: builds, stressor not implemented"
		continue
	fi
	for r in $ALL; do
		case ",$gone," in
		*",$r,"*) check grep -q "^$r [a-z-]* not built: ." <<<"$list" ||
				fail "HAVE_$guard off: $r not listed 'not built': $(grep "^$r " <<<"$list")";;
		*) check grep -q "^$r [a-z-]* built$" <<<"$list" ||
				fail "HAVE_$guard off: $r not listed built: $(grep "^$r " <<<"$list")";;
		esac
	done
	[ "$gone" = - ] && { echo "HAVE_$guard off: builds, every racer built"; continue; }
	require_ksm
	before=$(knobs)
	log=$TMPD/$guard/run.log
	"$bin" --ksm-unmerge 1 -t 3 --verify --ksm-unmerge-bytes 8M \
		--ksm-unmerge-method "madvise,$gone" >"$log" 2>&1
	rc=$?
	check [ "$rc" = 0 ] || { cat "$log"; fail "HAVE_$guard off: run exited $rc"; }
	for r in ${gone//,/ }; do
		check grep -q "racer $r skipped: not built: ." "$log" ||
			{ grep racer "$log"; fail "HAVE_$guard off: racer $r not reported 'not built'"; }
	done
	check [ "$(knobs)" = "$before" ] || fail "HAVE_$guard off: KSM knobs changed"
	echo "HAVE_$guard off: $(grep -o "racer [a-z-]* skipped: not built: .*" "$log" | head -1)"
done
checks_done
