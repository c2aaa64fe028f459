#!/bin/bash
# tests/it/build/guards.sh: every feature guard compiles.  The stressor is built once
# per HAVE_* turned off (core-shim: -DSTRESS_NO_HAVE_X) and once per libc
# macro a racer's guard tests turned off (O_DIRECT, MADV_HUGEPAGE: a wrapper
# translation unit includes the shim's stress-ng.h, which pulls in the libc
# headers, #undefs the macro, then #includes stress-ksm-unmerge.c; the libc
# headers' include guards keep it undefined), -O0, in parallel,
# into this script's temp dir (never the main binary).  Each build must list
# the racers the guard removes as "not built: reason" and every other racer
# as built (--ksm-unmerge-method which); a short --verify cycle with a
# removed racer must pass and report it "skipped: not built".  A guard that
# removes the stressor itself (HAVE_MADVISE, HAVE_SYS_PRCTL_H) must still
# build, list no racer and run as "not implemented".
. "$(dirname "$0")/../../lib/lib.sh"

# GUARD:racers it removes (comma list, "-" none, "all" the whole stressor);
# HAVE_X is the shim's config macro, any other name a libc macro
GUARDS="HAVE_VMSPLICE:vmsplice HAVE_LINUX_USERFAULTFD_H:uffd-wp,uffd-minor HAVE_LINUX_IO_URING_H:-
	HAVE_SYS_VFS_H:- HAVE_SPLICE:- HAVE_MADVISE:all HAVE_SYS_PRCTL_H:all O_DIRECT:gup MADV_HUGEPAGE:thp"

[ -r "$TOP/core-shim/libshim.a" ] || fail "build first: $TOP/core-shim/libshim.a missing"
CFLAGS_GUARD="-O0 -std=gnu11 -Wall -Wextra -Werror -D_GNU_SOURCE -I$TOP/core-shim -I$TOP"

# build GUARD: the stressor with GUARD off, into $TMPD/GUARD/
build() {
	local src=$TOP/stress-ksm-unmerge.c def=-DSTRESS_NO_$1

	mkdir -p "$TMPD/$1"
	if [ "${1#HAVE_}" = "$1" ]; then
		src=$TMPD/$1/wrap.c def=
		printf '#include "stress-ng.h"\n#undef %s\n#include "stress-ksm-unmerge.c"\n' "$1" >"$src"
	fi
	cc $CFLAGS_GUARD $def -c -o "$TMPD/$1/stress-ksm-unmerge.o" \
		"$src" >"$TMPD/$1/build.log" 2>&1 &&
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
	check [ -x "$bin" ] || { cat "$TMPD/$guard/build.log"; fail "build with $guard off failed"; }
	list=$("$bin" --ksm-unmerge-method which)
	if [ "$gone" = all ]; then
		check grep -q "^no racers: built without" <<<"$list" || fail "$guard off: which printed '$list'"
		out=$("$bin" --ksm-unmerge 1 -t 1 2>&1)
		check grep -q "not implemented\|unimplemented\|built without" <<<"$out" ||
			fail "$guard off: no 'not implemented' line: $out"
		echo "$guard off: builds, stressor not implemented"
		continue
	fi
	for r in $ALL; do
		case ",$gone," in
		*",$r,"*) check grep -q "^$r [a-z-]* not built: ." <<<"$list" ||
				fail "$guard off: $r not listed 'not built': $(grep "^$r " <<<"$list")";;
		*) check grep -q "^$r [a-z-]* built$" <<<"$list" ||
				fail "$guard off: $r not listed built: $(grep "^$r " <<<"$list")";;
		esac
	done
	[ "$gone" = - ] && { echo "$guard off: builds, every racer built"; continue; }
	require_ksm
	before=$(knobs)
	log=$TMPD/$guard/run.log
	"$bin" --ksm-unmerge 1 -t 3 --verify --ksm-unmerge-bytes 8M \
		--ksm-unmerge-method "madvise,$gone" >"$log" 2>&1
	rc=$?
	check [ "$rc" = 0 ] || { cat "$log"; fail "$guard off: run exited $rc"; }
	for r in ${gone//,/ }; do
		check grep -q "racer $r skipped: not built: ." "$log" ||
			{ grep racer "$log"; fail "$guard off: racer $r not reported 'not built'"; }
	done
	check [ "$(knobs)" = "$before" ] || fail "$guard off: KSM knobs changed"
	echo "$guard off: $(grep -o "racer [a-z-]* skipped: not built: .*" "$log" | head -1)"
done
checks_done
