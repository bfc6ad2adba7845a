#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The 7.3 base: a Debian 13 (trixie) build root and the kernel set, both
# from Debian 13's backports suite, without touching this machine's apt
# sources or its dpkg database.
#
# Debian builds 7.3 with gcc-14, whose options (-fmin-function-alignment)
# Debian 12's gcc-12 does not know; 7.3's linux-kbuild host tools need
# glibc 2.38 and its BTF pahole 1.26, and Debian 12 has neither.  So the
# module build of this base runs in a root of Debian 13's own toolchain
# (scripts/in-root.sh), and the kernel set is unpacked beside it:
#
#  - apt runs with a private source list (trixie, -updates, -security,
#    -backports, signed by the keys Debian 12's debian-archive-keyring
#    holds), a private state directory and an empty dpkg status, as in
#    scripts/qemu-current.sh;
#  - the image decides, as in scripts/kernel-set.sh: of the archive's
#    linux-image-<base>.<n>+<tag>-amd64 packages (7.3's is a metapackage
#    of linux-binary-<abi> (vmlinuz), linux-modules-<abi> and
#    linux-base-<abi> (the config)) the newest version is taken; its
#    ABI and Debian version are read from the archive, and
#    linux-source-<base>, linux-headers-<abi> and the image's packages
#    must all be of that version, or this stops and says what the archive
#    has;
#  - DIR/root: the dependency closure of gcc-14, binutils, make,
#    libc6-dev, libelf-dev, pahole, bc, kmod, the shell tools kbuild runs
#    and linux-headers-<abi> (with -common and linux-kbuild), unpacked
#    with dpkg-deb (no maintainer scripts) into a merged-/usr tree;
#  - DIR/kernel: linux-binary-, linux-modules- and linux-base-<abi> and
#    linux-source-<base>, unpacked (never installed on this machine);
#  - DIR/kernel-set: what the Makefile reads (abi, versions, paths).
#
# Nothing is fetched when DIR/kernel-set exists and its root and kernel
# are complete; TRIXIE_ROOT_REFRESH=1 resolves (and, for a newer kernel,
# fetches) again.  Nothing here knows a version.
#
# Usage: trixie-root.sh <base> DIR     e.g. trixie-root.sh 7.3 build/7.3
# Needs root (an unpacked tree owned by root, chroot later).

set -eo pipefail
[ $# -eq 2 ] || { echo "usage: $0 <base> DIR" >&2; exit 2; }
BASE=$1
mkdir -p "$2"
dir=$(cd "$2" && pwd)
me=trixie-root
suite=${TRIXIE_ROOT_SUITE:-trixie-backports}
# shellcheck source=scripts/trixie-apt.sh
. "$(dirname "$0")/trixie-apt.sh"
set_file=$dir/kernel-set
root=$dir/root
kdir=$dir/kernel
apt_dir=$dir/apt

# The root's packages besides the headers.  kbuild runs sh, sed, awk,
# grep, find, cmp, xz, ...; Essential packages are not pulled in by a
# closure resolved against an empty status, so they are named.
ROOT_PKGS=(gcc-14 binutils make libc6-dev libelf-dev dwarves bc kmod
	bash dash coreutils sed grep mawk findutils diffutils tar gzip xz-utils
	util-linux uuid-dev)

kv() { sed -n "s/^$1: //p" "$set_file" 2>/dev/null; }

# Complete: the set file, the root's marker of the same headers, the image,
# the modules and the source tarball.
complete() {
	local abi
	abi=$(kv abi)
	[ -n "$abi" ] &&
	[ "$(cat "$root/.kp-root" 2>/dev/null)" = "linux-headers-$abi $(kv version) ${ROOT_PKGS[*]}" ] &&
	[ -d "$root/usr/src/linux-headers-$abi" ] &&
	[ -f "$(kv kimage)" ] && [ -d "$(kv kmoddir)/kernel" ] && [ -f "$(kv src_tarball)" ]
}
if [ -z "${TRIXIE_ROOT_REFRESH:-}" ] && complete; then
	echo "$me: base $BASE: linux-image-$(kv abi), linux-headers-$(kv abi), linux-source-$BASE, all $(kv version) (in $dir)"
	exit 0
fi
[ "$(id -u)" = 0 ] || { echo "$me: base $BASE is not set up in $dir and this is not root (make deps KERNEL=$BASE)" >&2; exit 1; }
t0=$(date +%s)

mkdir -p "$apt_dir/get"
kp_trixie_apt "$apt_dir"
acache() { apt-cache "${apt_opts[@]}" "$@"; }
field() {	# field <package> <Field>: of the candidate version
	acache show --no-all-versions "$1" 2>/dev/null | sed -n "s/^$2: //p" | head -n1
}
avail() {	# the versions of <package> the archive has, one per line
	acache madison "$1" 2>/dev/null |
		awk -F'|' '{ gsub(/[[:space:]]/, "", $2); if ($2 != "") print $2 }' || true
}

echo "$me: base $BASE: resolving in Debian 13 ($suite)"
apt-get "${apt_opts[@]}" update

# The image decides: the newest linux-image-<base>.<n>+<tag>-amd64 (not
# -cloud-, -rt-, -dbg) of the archive.
ABI= VERSION=
for p in $(acache pkgnames "linux-image-$BASE" |
		grep -E "^linux-image-${BASE//./\\.}(\.[0-9]+)*\+[a-z0-9]+-amd64$"); do
	for v in $(avail "$p"); do
		if [ -z "$VERSION" ] || dpkg --compare-versions "$v" gt "$VERSION"; then
			ABI=${p#linux-image-} VERSION=$v
		fi
	done
done
[ -n "$ABI" ] || { echo "$me: the archive has no linux-image-$BASE.*-amd64 (Debian 13's $suite)" >&2; exit 1; }
IMG_DEPS=$(acache show "linux-image-$ABI=$VERSION" 2>/dev/null | sed -n 's/^Depends: //p' | head -n1)
# 7.3's image is a metapackage of linux-{binary,modules,base}-<abi>;
# an image that is a real package has none of them and is fetched itself.
IMG_PKGS=()
for p in binary modules base; do
	case $IMG_DEPS in *"linux-$p-$ABI (= $VERSION)"*) IMG_PKGS+=("linux-$p-$ABI") ;; esac
done
[ ${#IMG_PKGS[@]} -gt 0 ] || IMG_PKGS=("linux-image-$ABI")
SET=("${IMG_PKGS[@]}" "linux-headers-$ABI" "linux-source-$BASE")
found="" missing=""
for p in "${SET[@]}"; do
	v=$(avail "$p" | tr '\n' ' ' | sed 's/ $//')
	found="$found; $p ${v:-(none)}"
	avail "$p" | grep -qxF "$VERSION" || missing="$missing $p"
done
[ -z "$missing" ] || {
	echo "$me: no consistent kernel set for base $BASE: linux-image-$ABI $VERSION is the newest image, but the archive has no$missing of that version; it has:${found#;} (mid-update? try again later)" >&2
	exit 1
}
echo "$me: base $BASE: linux-image-$ABI $VERSION (${IMG_PKGS[*]})"

# ---- the kernel set: downloaded and unpacked into DIR/kernel
get=$apt_dir/get
log=$apt_dir/fetched
: > "$log"
getdeb() {	# getdeb <package> <version>: the .deb's path, downloaded if needed
	local f
	f=$(ls "$get/$1_"*.deb 2>/dev/null | head -n1 || true)
	if [ -z "$f" ] || [ "$(dpkg-deb -f "$f" Version)" != "$2" ]; then
		rm -f "$get/$1_"*.deb
		(cd "$get" && apt-get "${apt_opts[@]}" download "$1=$2" 2>&1 |
			grep -v "^W: Download is performed unsandboxed" >&2 || true)
		f=$(ls "$get/$1_"*.deb 2>/dev/null | head -n1 || true)
		[ -n "$f" ] || { echo "$me: could not download $1 $2" >&2; exit 1; }
		echo "$1 $2 ($(du -h "$f" | cut -f1))" >> "$log"
	fi
	echo "$f"
}
# A refresh that finds the set already unpacked keeps it.
if [ "$(kv abi)" = "$ABI" ] && [ "$(kv version)" = "$VERSION" ] &&
   [ -f "$(kv kimage)" ] && [ -d "$(kv kmoddir)/kernel" ] && [ -f "$(kv src_tarball)" ]; then
	kimage=$(kv kimage) kmod=$(kv kmoddir) tarball=$(kv src_tarball) src_version=$(kv src_version)
else
	rm -rf "$kdir.new"
	mkdir -p "$kdir.new"
	for p in "${IMG_PKGS[@]}" "linux-source-$BASE"; do
		f=$(getdeb "$p" "$VERSION")
		dpkg-deb -x "$f" "$kdir.new"
		case $p in linux-source-*) src_version=$(dpkg-deb -f "$f" Version) ;; esac
	done
	# 7.3's packages put the image beside its modules (usr/lib/modules/<abi>/
	# vmlinuz; /boot is filled by maintainer scripts), older ones in /boot.
	kmod=$(ls -d "$kdir.new"/usr/lib/modules/"$ABI" "$kdir.new"/lib/modules/"$ABI" 2>/dev/null | head -n1 || true)
	kimage=$(ls "$kmod/vmlinuz" "$kdir.new/boot/vmlinuz-$ABI" 2>/dev/null | head -n1 || true)
	tarball=$(ls "$kdir.new/usr/src/linux-source-$BASE.tar.xz" 2>/dev/null || true)
	[ -n "$kmod" ] && [ -n "$kimage" ] && [ -n "$tarball" ] || {
		echo "$me: the unpacked set lacks vmlinuz-$ABI, modules/$ABI or linux-source-$BASE.tar.xz" >&2
		exit 1
	}
	rm -rf "$kdir"
	mv "$kdir.new" "$kdir"
	kimage=$kdir${kimage#"$kdir.new"}
	kmod=$kdir${kmod#"$kdir.new"}
	tarball=$kdir${tarball#"$kdir.new"}
fi

# ---- the build root: the closure, unpacked into a merged-/usr tree
if [ "$(cat "$root/.kp-root" 2>/dev/null)" != "linux-headers-$ABI $VERSION ${ROOT_PKGS[*]}" ] ||
   [ ! -d "$root/usr/src/linux-headers-$ABI" ]; then
	rm -rf "$root" "$apt_dir/cache/archives/"*.deb
	apt-get "${apt_opts[@]}" install -y --download-only --no-install-recommends \
		-t "$suite" "${ROOT_PKGS[@]}" "linux-headers-$ABI=$VERSION" > /dev/null
	mkdir -p "$root"/usr/{bin,sbin,lib,lib64} "$root"/{dev,proc,tmp,etc}
	chmod 1777 "$root/tmp"
	for d in bin sbin lib lib64; do ln -s "usr/$d" "$root/$d"; done
	n=0
	for deb in "$apt_dir"/cache/archives/*.deb; do
		dpkg-deb --fsys-tarfile "$deb" |
			tar -x --keep-directory-symlink --no-same-owner -C "$root"
		n=$((n + 1))
	done
	# What maintainer scripts and alternatives would have made.
	[ -e "$root/usr/bin/sh" ] || ln -s dash "$root/usr/bin/sh"
	[ -e "$root/usr/bin/awk" ] || ln -s mawk "$root/usr/bin/awk"
	for t in gcc cc; do [ -e "$root/usr/bin/$t" ] || ln -s gcc-14 "$root/usr/bin/$t"; done
	[ -e "$root/usr/bin/cpp" ] || ln -s cpp-14 "$root/usr/bin/cpp"
	echo "root:x:0:0:root:/root:/bin/sh" > "$root/etc/passwd"
	echo "root:x:0:" > "$root/etc/group"
	hv=$(dpkg-deb -f "$(ls "$apt_dir"/cache/archives/linux-headers-"$ABI"_*.deb)" Version)
	versions=""
	for p in gcc-14 binutils dwarves make libc6; do
		versions="$versions $p $(dpkg-deb -f "$(ls "$apt_dir"/cache/archives/"$p"_*.deb | head -n1)" Version),"
	done
	echo "the root: $n packages ($(du -csh "$apt_dir"/cache/archives/*.deb | tail -1 | cut -f1)):${versions%,}" >> "$log"
	rm -rf "$apt_dir/cache/archives/"*.deb
	# The toolchain must run in the root.
	chroot "$root" gcc --version > /dev/null &&
	chroot "$root" pahole --version > /dev/null || {
		echo "$me: the unpacked root does not run gcc or pahole" >&2
		exit 1
	}
	echo "linux-headers-$ABI $VERSION ${ROOT_PKGS[*]}" > "$root/.kp-root"
else
	hv=$VERSION
fi

{
	echo "base: $BASE"
	echo "abi: $ABI"
	echo "version: $VERSION"
	echo "suite: $suite"
	echo "img_version: $VERSION"
	echo "src_version: $src_version"
	echo "hdr_version: $hv"
	echo "kimage: $kimage"
	echo "kmoddir: $kmod"
	echo "src_tarball: $tarball"
	echo "kheaders: /usr/src/linux-headers-$ABI"
	echo "root: $root"
	echo "gcc: $(chroot "$root" gcc --version | head -n1)"
	echo "pahole: $(chroot "$root" pahole --version)"
} > "$set_file"
# The downloaded set is not needed once unpacked.
rm -rf "$get"
sed "s/^/$me: fetched /" "$log"
echo "$me: toolchain: $(kv gcc); pahole $(kv pahole)"
echo "$me: base $BASE: linux-image-$ABI, linux-headers-$ABI, linux-source-$BASE, all $VERSION (in $dir, $(( $(date +%s) - t0 )) s)"
