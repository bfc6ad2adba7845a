#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Put qemu-plugin.h of exactly the installed qemu-system-x86 into DIR, for
# the instruction meter of "make cost" (tests/cost/meter.c).  Debian ships
# the header only in the qemu source package, so: make sure apt knows
# Debian 12's source packages (a deb-src copy of the system's Debian
# sources, then apt-get update), download that version of qemu's source
# (apt-get source --download-only) and extract the one header.  Nothing
# happens when DIR already holds the header of the installed version.
#
# Usage: qemu-plugin-header.sh DIR

set -eo pipefail
dir=${1:?usage: qemu-plugin-header.sh DIR}
apt_opts=(-o DPkg::Lock::Timeout=600 -qq)

ver=$(dpkg-query -W -f='${source:Version}' qemu-system-x86 2>/dev/null) || {
	echo "qemu-plugin-header: qemu-system-x86 is not installed" >&2
	exit 1
}
if [ -f "$dir/qemu-plugin.h" ] && [ "$(cat "$dir/version" 2>/dev/null)" = "$ver" ]; then
	exit 0
fi

have_source() {
	apt-cache showsrc qemu 2>/dev/null | grep -Fx "Version: $ver" >/dev/null
}

if ! have_source; then
	if [ "$(id -u)" != 0 ]; then
		echo "qemu-plugin-header: apt has no source of qemu $ver and we are not root" >&2
		exit 1
	fi
	# The system's own Debian suites, as deb-src (deb822 and one-line
	# formats), unless a previous run already wrote them.
	src=/etc/apt/sources.list.d/kvm-prefetch-deb-src
	if [ ! -e $src.sources ] && [ ! -e $src.list ]; then
		if [ -f /etc/apt/sources.list.d/debian.sources ]; then
			sed 's/^Types:.*/Types: deb-src/' \
				/etc/apt/sources.list.d/debian.sources > $src.sources
		fi
		if [ -f /etc/apt/sources.list ] &&
		   grep -q '^deb ' /etc/apt/sources.list; then
			sed -n 's/^deb /deb-src /p' /etc/apt/sources.list > $src.list
		fi
	fi
	echo "qemu-plugin-header: apt-get update (with deb-src entries)"
	apt-get "${apt_opts[@]}" update
	have_source || {
		echo "qemu-plugin-header: no source package qemu $ver in the configured suites" >&2
		exit 1
	}
fi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# apt downloads as _apt where it can.
chown _apt "$tmp" 2>/dev/null || true
echo "qemu-plugin-header: downloading the source of qemu $ver"
(cd "$tmp" && apt-get "${apt_opts[@]}" source --download-only "qemu=$ver" >/dev/null)
orig=$(ls "$tmp"/qemu_*.orig.tar.* | head -n1)
deb=$(ls "$tmp"/qemu_*.debian.tar.* | head -n1)
mkdir -p "$tmp/x"
tar -xf "$orig" -C "$tmp/x" --wildcards '*/include/qemu/qemu-plugin.h'
h=$(find "$tmp/x" -path '*/include/qemu/qemu-plugin.h' | head -n1)
[ -n "$h" ] || { echo "qemu-plugin-header: no include/qemu/qemu-plugin.h in $orig" >&2; exit 1; }
# Debian's patches: none touches the header today.  One that does would
# have to be applied, and it may touch files we did not extract.
tar -xf "$deb" -C "$tmp"
if grep -l 'include/qemu/qemu-plugin.h' "$tmp"/debian/patches/* 2>/dev/null; then
	echo "qemu-plugin-header: Debian's patches above change qemu-plugin.h; not handled" >&2
	exit 1
fi
mkdir -p "$dir"
cp "$h" "$dir/qemu-plugin.h"
echo "$ver" > "$dir/version"
echo "qemu-plugin-header: $dir/qemu-plugin.h (qemu $ver)"
