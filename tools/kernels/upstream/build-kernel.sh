#!/bin/bash
# tools/kernels/upstream/build-kernel.sh: build a small x86_64 kernel from Debian's
# linux-source-6.12 (apt), unpatched or with our patches, for tools/kernels/ksm-qemu.
#
# usage: tools/kernels/upstream/build-kernel.sh NAME [PATCH...]
#        tools/kernels/upstream/build-kernel.sh --fetch-only
#        tools/kernels/upstream/build-kernel.sh --configure-only TREE OBJ
#
#   NAME     the variant: the tree is build/upstream/src-NAME (the pristine
#            tree itself when no PATCH is given), the objects go to
#            build/upstream/obj-NAME, the image is
#            build/upstream/obj-NAME/arch/x86/boot/bzImage (printed last)
#   PATCH    git format-patch files applied in order (patch -p1)
#
# Every variant gets the same config: x86_64 tinyconfig, then the fragment
# docs/upstream/ksm-fork-zero-pages/kernel.config (merge_config.sh), then
# olddefconfig; the script fails if a line of the fragment did not stick.
# The build time is printed and appended to build/upstream/build-times.txt.
#
# Environment: UPSTREAM_DIR (build/upstream), UPSTREAM_JOBS (nproc),
# UPSTREAM_FRAGMENT (the fragment above), UPSTREAM_SRC_PKG (linux-source-6.12).
# Needs: apt-get (download only), dpkg-deb, xz, gcc, make, flex, bison, bc,
# libelf-dev, libssl-dev.  Nothing is installed and nothing outside
# build/upstream is written.

set -u -o pipefail

TOPDIR=$(cd "$(dirname "${BASH_SOURCE[0]}")/../../.." && pwd)
DIR=${UPSTREAM_DIR:-$TOPDIR/build/upstream}
JOBS=${UPSTREAM_JOBS:-$(nproc)}
FRAGMENT=${UPSTREAM_FRAGMENT:-$TOPDIR/docs/upstream/ksm-fork-zero-pages/kernel.config}
PKG=${UPSTREAM_SRC_PKG:-linux-source-6.12}
PRISTINE=$DIR/linux-6.12

# msg: one line on stderr, prefixed with the tool name
msg() {
	echo "build-kernel: $*" >&2
}

# die: print an error line and exit 1
die() {
	msg "error: $*"
	exit 1
}

# need_tools: fail early, naming the Debian package of a missing tool
need_tools() {
	local t
	for t in apt-get:apt dpkg-deb:dpkg xz:xz-utils gcc:gcc make:make flex:flex \
		bison:bison bc:bc; do
		command -v "${t%%:*}" >/dev/null 2>&1 ||
			die "no ${t%%:*} (apt-get install ${t#*:})"
	done
	[ -f /usr/include/libelf.h ] || die "no libelf.h (apt-get install libelf-dev)"
	[ -f /usr/include/openssl/ssl.h ] || die "no openssl/ssl.h (apt-get install libssl-dev)"
}

# fetch_source: the pristine tree from Debian's linux-source package
fetch_source() {
	local deb tarball
	[ -f "$PRISTINE/Makefile" ] && return 0
	mkdir -p "$DIR/debs" || die "cannot create $DIR/debs"
	if ! ls "$DIR/debs/${PKG}_"*.deb >/dev/null 2>&1; then
		msg "apt-get download $PKG"
		(cd "$DIR/debs" && apt-get download -qq "$PKG") ||
			die "apt-get download $PKG failed (apt-get update first?)"
	fi
	deb=$(ls "$DIR/debs/${PKG}_"*.deb | tail -n 1)
	msg "unpacking $(basename "$deb")"
	rm -rf "$DIR/unpack" "$PRISTINE.tmp"
	mkdir -p "$DIR/unpack" || die "cannot create $DIR/unpack"
	dpkg-deb -x "$deb" "$DIR/unpack" || die "dpkg-deb -x $deb failed"
	tarball=$(ls "$DIR"/unpack/usr/src/linux-source-*.tar.xz 2>/dev/null | head -n 1)
	[ -n "$tarball" ] || die "no linux-source-*.tar.xz in $deb"
	mkdir -p "$PRISTINE.tmp" &&
		tar -xJf "$tarball" -C "$PRISTINE.tmp" --strip-components=1 ||
		die "unpacking $tarball failed"
	mv "$PRISTINE.tmp" "$PRISTINE" && rm -rf "$DIR/unpack"
}

# source_tree NAME PATCH...: print the tree for the variant; a patched tree
# is a hard-linked copy of the pristine one with the patched files unlinked
# first, so that the pristine tree never changes
source_tree() {
	local name=$1 tree stamp want f
	shift
	if [ $# -eq 0 ]; then
		echo "$PRISTINE"
		return 0
	fi
	tree=$DIR/src-$name
	want=$(cat "$@" | sha256sum | cut -d' ' -f1)
	stamp=$tree/.patches-sha256
	if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ]; then
		echo "$tree"
		return 0
	fi
	rm -rf "$tree"
	cp -al "$PRISTINE" "$tree" || die "cp -al $PRISTINE $tree failed"
	for f in $(sed -n 's|^+++ b/||p' "$@" | sort -u); do
		[ -f "$tree/$f" ] || continue
		cp "$tree/$f" "$tree/$f.unlink" && mv "$tree/$f.unlink" "$tree/$f" ||
			die "cannot unlink $f in $tree"
	done
	for f in "$@"; do
		msg "applying $(basename "$f")"
		patch -d "$tree" -p1 --batch --forward --quiet < "$f" ||
			die "$(basename "$f") does not apply to $PKG"
	done
	echo "$want" > "$stamp"
	echo "$tree"
}

# configure TREE OBJ: tinyconfig + fragment + olddefconfig, checked
configure() {
	local tree=$1 obj=$2 line missing=0
	mkdir -p "$obj" || die "cannot create $obj"
	make -s -C "$tree" O="$obj" ARCH=x86_64 tinyconfig >/dev/null ||
		die "make tinyconfig failed"
	"$tree/scripts/kconfig/merge_config.sh" -m -O "$obj" "$obj/.config" "$FRAGMENT" \
		>/dev/null || die "merge_config.sh failed"
	make -s -C "$tree" O="$obj" ARCH=x86_64 olddefconfig >/dev/null ||
		die "make olddefconfig failed"
	while IFS= read -r line; do
		case $line in
		CONFIG_*)
			if ! grep -qx "$line" "$obj/.config"; then
				msg "config: '$line' did not stick"
				missing=1
			fi ;;
		esac
	done < "$FRAGMENT"
	[ "$missing" = 0 ] || die "the config fragment $FRAGMENT does not fit $PKG"
}

# build TREE OBJ NAME: make bzImage, timed
build() {
	local tree=$1 obj=$2 name=$3 t0 t1 rel line
	t0=$(date +%s.%N)
	msg "make -j$JOBS bzImage ($name; log: $obj/build.log)"
	if ! make -C "$tree" O="$obj" ARCH=x86_64 -j"$JOBS" bzImage > "$obj/build.log" 2>&1; then
		tail -n 20 "$obj/build.log" >&2
		die "the $name kernel does not build"
	fi
	t1=$(date +%s.%N)
	rel=$(cat "$obj/include/config/kernel.release" 2>/dev/null)
	line=$(awk -v a="$t0" -v b="$t1" -v n="$name" -v j="$JOBS" -v r="$rel" \
		-v c="$(nproc)" -v d="$(date -u +%Y-%m-%dT%H:%M:%SZ)" \
		'BEGIN { printf "%s %s: %s, make -j%s on %s CPUs, %.0f s wall\n", d, n, r, j, c, b - a }')
	echo "$line" >> "$DIR/build-times.txt"
	msg "$line"
}

main() {
	local name=${1:-} tree obj
	# for tools/kernels/ksm-mutants: fetch the pristine tree, or configure a tree
	# and object directory, the same way as a variant here
	case $name in
	--fetch-only)
		need_tools; mkdir -p "$DIR" || die "cannot create $DIR"
		fetch_source; return ;;
	--configure-only)
		[ $# -eq 3 ] || die "usage: $0 --configure-only TREE OBJ"
		[ -f "$FRAGMENT" ] || die "no config fragment $FRAGMENT"
		unset MAKEFLAGS MFLAGS MAKELEVEL MAKEOVERRIDES
		configure "$2" "$3"; return ;;
	esac
	[ -n "$name" ] || die "usage: $0 NAME [PATCH...]"
	[[ $name =~ ^[a-z0-9-]+$ ]] || die "malformed NAME '$name' (a-z 0-9 -)"
	shift
	[ -f "$FRAGMENT" ] || die "no config fragment $FRAGMENT"
	for f in "$@"; do
		[ -f "$f" ] || die "no patch $f"
	done
	# a make that runs this script must not leak its flags into kbuild
	unset MAKEFLAGS MFLAGS MAKELEVEL MAKEOVERRIDES
	need_tools
	mkdir -p "$DIR" || die "cannot create $DIR"
	fetch_source
	msg "$PKG: Linux $(make -s -C "$PRISTINE" kernelversion 2>/dev/null)"
	tree=$(source_tree "$name" "$@") || exit 1
	obj=$DIR/obj-$name
	configure "$tree" "$obj"
	build "$tree" "$obj" "$name"
	echo "$obj/arch/x86/boot/bzImage"
}

main "$@"
