#!/bin/bash
# fetch-kernel.sh: download a Debian kernel image package and unpack it
# (dpkg-deb -x) into DEST (default build/kernels); nothing is installed into
# /boot.  PACKAGE is either a meta package (linux-image-amd64: the image
# package it depends on is fetched) or an image package itself
# (linux-image-6.12.117+deb12-amd64).  Prints what
# the kernel's config says about KSM, USERFAULTFD and PTE_MARKER_UFFD_WP, and
# the vmlinuz path as the last line.
#
# usage: tools/kernels/qemu/fetch-kernel.sh [DEST] [PACKAGE]

set -eu -o pipefail

DEST=${1:-build/kernels}
META=${2:-linux-image-amd64}

# msg: one prefixed line on stderr
msg() {
	echo "fetch-kernel: $*" >&2
}

# resolve_pkg: print the kernel image package: $META itself when it is an
# image package apt knows, else the image package the meta package depends on
resolve_pkg() {
	if [[ $META =~ ^linux-image-[0-9] ]]; then
		apt-cache show "$META" >/dev/null 2>&1 && echo "$META"
		return 0
	fi
	apt-cache depends "$META" 2>/dev/null |
		awk '$1 == "Depends:" && $2 ~ /^linux-image-[0-9]/ {print $2; exit}'
}

command -v apt-get >/dev/null || { msg "error: apt-get not found"; exit 1; }
PKG=$(resolve_pkg || true)
if [ -z "$PKG" ]; then
	msg "no candidate for $META yet; running apt-get update once"
	apt-get update -q >/dev/null || { msg "error: apt-get update failed"; exit 1; }
	PKG=$(resolve_pkg || true)
fi
[ -n "$PKG" ] || { msg "error: cannot resolve the image package of $META"; exit 1; }
VER=$(apt-cache show "$PKG" | awk '/^Version:/ {print $2; exit}')
[ "$PKG" = "$META" ] && msg "$PKG ($VER)" || msg "$META depends on $PKG ($VER)"

mkdir -p "$DEST/debs"
DEST=$(cd "$DEST" && pwd)
DIR="$DEST/$PKG"
if ! ls "$DEST/debs/${PKG}_"*.deb >/dev/null 2>&1; then
	(cd "$DEST/debs" && apt-get download -qq "$PKG") ||
		{ msg "error: apt-get download $PKG failed"; exit 1; }
fi
DEB=$(ls "$DEST/debs/${PKG}_"*.deb | tail -n 1)
if [ ! -d "$DIR/boot" ]; then
	rm -rf "$DIR.tmp"
	dpkg-deb -x "$DEB" "$DIR.tmp" || { msg "error: dpkg-deb -x $DEB failed"; exit 1; }
	mv "$DIR.tmp" "$DIR"
fi
VMLINUZ=$(ls "$DIR"/boot/vmlinuz-* | head -n 1)
CONFIG=$(ls "$DIR"/boot/config-* | head -n 1)
for opt in KSM USERFAULTFD PTE_MARKER_UFFD_WP; do
	val=$(grep -E "^(# )?CONFIG_$opt[= ]" "$CONFIG" || echo "CONFIG_$opt absent")
	msg "config: $val"
done
grep -q '^CONFIG_KSM=y$' "$CONFIG" || { msg "error: CONFIG_KSM is not y in $CONFIG"; exit 1; }
echo "$VMLINUZ"
