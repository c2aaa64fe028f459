#!/bin/bash
# tests/it/build/guards.sh: every feature guard compiles.  The stressor is built once
# per HAVE_* turned off (core-shim: -DSTRESS_NO_HAVE_X) and once per libc
# macro a racer's guard tests turned off (O_DIRECT, MADV_HUGEPAGE, ...: a
# wrapper translation unit includes the shim's stress-ng.h, which pulls in
# the libc headers, #undefs the macro, then #includes stress-ksm-unmerge.c;
# the libc headers' include guards keep it undefined), -O0, two at a time,
# into this script's temp dir (never the main binary), together with
# build/ksm-racers built the same way (the racer table that build has).
# Each table must list the racers the guard removes as "not built: reason"
# and every other racer as built; a short --verify run of each removed
# racer (--ksm-unmerge-method NAME) must pass and report it "skipped: not
# built".  A guard that removes the stressor itself (HAVE_MADVISE,
# HAVE_SYS_PRCTL_H, HAVE_LIB_PTHREAD) must still build and run as "not
# implemented" (it has no racer table).  Every guard is tried; the builds
# that fail are listed together.
. "$(dirname "$0")/../../lib/lib.sh"

# GUARD:racers it removes (comma list, "-" none, "all" the whole stressor);
# HAVE_X is the shim's config macro, any other name a libc macro
GUARDS="HAVE_VMSPLICE:vmsplice HAVE_SYS_UIO_H:vmsplice HAVE_LINUX_USERFAULTFD_H:uffd-wp,uffd-minor
	HAVE_POLL_H:uffd-wp,uffd-minor HAVE_MEMFD_CREATE:uffd-minor HAVE_PTRACE:prctl-exec HAVE_SYS_FILE_H:thp
	HAVE_LINUX_IO_URING_H:- HAVE_PROCESS_VM_READV:- HAVE_SYS_VFS_H:- HAVE_SYS_UTSNAME_H:- HAVE_SCHED_H:-
	HAVE_SCHED_SETAFFINITY:- HAVE_MADVISE:all
	HAVE_SYS_PRCTL_H:all
	HAVE_LIB_PTHREAD:all O_DIRECT:gup MADV_HUGEPAGE:thp MADV_WIPEONFORK:-"

[ -r "$TOP/build/libshim.a" ] || fail "build first: $TOP/build/libshim.a missing"
CFLAGS_GUARD="-O0 -std=gnu11 -Wall -Wextra -Werror -D_GNU_SOURCE -I$TOP/core-shim -I$TOP"

# build GUARD: the stressor and build/ksm-racers with GUARD off, into
# $TMPD/GUARD/ (the table tool only where the stressor is built)
build() {
	local src=$TOP/stress-ksm-unmerge.c tool=$TOP/tools/user/ksm-racers.c def=-DSTRESS_NO_$1

	mkdir -p "$TMPD/$1"
	if [ "${1#HAVE_}" = "$1" ]; then
		src=$TMPD/$1/wrap.c tool=$TMPD/$1/wrap-racers.c def=
		printf '#include "stress-ng.h"\n#undef %s\n#include "stress-ksm-unmerge.c"\n' "$1" >"$src"
		printf '#include "stress-ng.h"\n#undef %s\n#include "tools/user/ksm-racers.c"\n' "$1" >"$tool"
	fi
	cc $CFLAGS_GUARD $def -c -o "$TMPD/$1/stress-ksm-unmerge.o" \
		"$src" >"$TMPD/$1/build.log" 2>&1 &&
	cc -o "$TMPD/$1/stress-ksm-unmerge" "$TMPD/$1/stress-ksm-unmerge.o" \
		"$TOP/build/libshim.a" -lbsd -lpthread -lm >>"$TMPD/$1/build.log" 2>&1 || return
	case " $ALL_GONE " in *" $1 "*) return;; esac
	cc $CFLAGS_GUARD $def -o "$TMPD/$1/ksm-racers" "$tool" \
		"$TOP/build/libshim.a" -lbsd -lpthread -lm >>"$TMPD/$1/build.log" 2>&1
}

ALL_GONE=$(for g in $GUARDS; do [ "${g#*:}" = all ] && echo "${g%%:*}"; done | tr '\n' ' ')
pids=""
for g in $GUARDS; do
	build "${g%%:*}" & pids="$pids $!"
	# two at a time: the compiles are the slow part, and 2 CPUs
	[ $(jobs -r | wc -l) -ge 2 ] && wait -n
done
wait
ALL=$(racer_names)
broken=""

for g in $GUARDS; do
	guard=${g%%:*} gone=${g#*:}
	bin=$TMPD/$guard/stress-ksm-unmerge
	if ! check [ -x "$bin" ]; then
		grep -m3 'error' "$TMPD/$guard/build.log"
		echo "FAIL: build with $guard off failed"
		broken="$broken $guard"
		continue
	fi
	if [ "$gone" = all ]; then
		out=$("$bin" --ksm-unmerge 1 -t 1 2>&1)
		check grep -q "not implemented\|unimplemented\|built without" <<<"$out" ||
			fail "$guard off: no 'not implemented' line: $out"
		echo "$guard off: builds, stressor not implemented"
		continue
	fi
	if ! check [ -x "$TMPD/$guard/ksm-racers" ]; then
		grep -m3 'error' "$TMPD/$guard/build.log"
		echo "FAIL: build/ksm-racers with $guard off failed"
		broken="$broken $guard"
		continue
	fi
	list=$("$TMPD/$guard/ksm-racers" | cut -f1,3)
	for r in $ALL; do
		case ",$gone," in
		*",$r,"*) check grep -q "^$r	not built: ." <<<"$list" ||
				fail "$guard off: $r not listed 'not built': $(grep "^$r	" <<<"$list")";;
		*) check grep -q "^$r	built$" <<<"$list" ||
				fail "$guard off: $r not listed built: $(grep "^$r	" <<<"$list")";;
		esac
	done
	[ "$gone" = - ] && { echo "$guard off: builds, every racer built"; continue; }
	require_ksm
	before=$(knobs)
	for r in ${gone//,/ }; do
		log=$TMPD/$guard/run-$r.log
		"$bin" --ksm-unmerge 1 -t 2 --verify --ksm-unmerge-bytes 8M --ksm-unmerge-method "$r" >"$log" 2>&1
		rc=$?
		check [ "$rc" = 0 ] || { cat "$log"; fail "$guard off: run of racer $r exited $rc"; }
		check grep -q "racer $r skipped: not built: ." "$log" ||
			{ grep racer "$log"; fail "$guard off: racer $r not reported 'not built'"; }
	done
	check [ "$(knobs)" = "$before" ] || fail "$guard off: KSM knobs changed"
	echo "$guard off: $(grep -o "racer [a-z-]* skipped: not built: .*" "$log" | head -1)"
done
[ -z "$broken" ] || fail "the build with these guards off failed:$broken"
checks_done
