#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# A current QEMU for the test VM's outer emulator, next to (not instead
# of) Debian 12's own QEMU 7.2, which stays installed as the L1 VMM the
# QEMU rig tests.  Debian 13 (trixie) builds it, from its backports suite
# by default: QEMU 10.2 made the vCPU thread's updates of
# cs->interrupt_request atomic (cpu_set_interrupt()), and the plain
# read-modify-write in helper_vmrun() that 7.2 and Debian 13's own 10.0
# still have loses wake-ups of the test VM (sysfs-docs/testing.rst, "The
# outer emulator").  QEMU_CURRENT_SUITE=trixie takes Debian 13's 10.0
# instead, for comparison.  This machine's apt sources are not touched:
#
#  - apt runs with a private source list (trixie, trixie-updates,
#    trixie-security, trixie-backports, signed by the trixie keys Debian
#    12's debian-archive-keyring already holds), a private state directory
#    and an empty dpkg status, so it resolves the whole dependency closure
#    of the packages asked for (from the suite asked for where it has
#    them, from trixie otherwise), C library included, and only downloads
#    it;
#  - every .deb is unpacked (dpkg-deb -x, no maintainer scripts) into
#    DIR/root;
#  - DIR/bin/qemu-system-* start the binaries through that root's own
#    dynamic loader and libraries, with QEMU's module and firmware
#    directories pointed into the root, so no library of the host is
#    mixed in.
#
# The version is whatever trixie serves that day (never hard-coded); it is
# written to DIR/version and run-vm.sh logs it with every boot.  Nothing
# is fetched when DIR/version exists and names the packages asked for;
# QEMU_CURRENT_REFRESH=1 fetches again.
#
# Usage: qemu-current.sh DIR [PACKAGE...]   (default: qemu-system-x86)

set -eo pipefail
dir=${1:?usage: qemu-current.sh DIR [PACKAGE...]}
shift
mkdir -p "$dir"
dir=$(cd "$dir" && pwd)
pkgs=("${@:-qemu-system-x86}")
suite=${QEMU_CURRENT_SUITE:-trixie-backports}
# shellcheck source=scripts/trixie-apt.sh
. "$(dirname "$0")/trixie-apt.sh"

if [ -z "${QEMU_CURRENT_REFRESH:-}" ] && [ -x "$dir/bin/qemu-system-x86_64" ] &&
   [ "$(sed -n 's/^packages: //p' "$dir/version" 2>/dev/null)" = "${pkgs[*]}" ] &&
   [ "$(sed -n 's/^suite: //p' "$dir/version" 2>/dev/null)" = "$suite" ]; then
	exit 0
fi

apt_dir=$dir/apt
rm -rf "$dir/root" "$dir/bin" "$dir/version" "$apt_dir/cache"
mkdir -p "$dir/root" "$dir/bin"
kp_trixie_apt "$apt_dir"

echo "qemu-current: resolving ${pkgs[*]} in Debian 13 ($suite)"
apt-get "${apt_opts[@]}" update
apt-get "${apt_opts[@]}" install -y --download-only --no-install-recommends -t "$suite" \
	"${pkgs[@]}" > /dev/null
for deb in "$apt_dir"/cache/archives/*.deb; do
	dpkg-deb -x "$deb" "$dir/root"
done

R=$(cd "$dir/root" && pwd)
libdir=$R/usr/lib/x86_64-linux-gnu
loader=$libdir/ld-linux-x86-64.so.2
[ -x "$loader" ] || { echo "qemu-current: no dynamic loader in $R" >&2; exit 1; }
# Firmware: QEMU finds its data directory relative to its own binary,
# which here is the loader, so name every directory the packages filled.
datadirs=""
for d in qemu seabios ipxe/qemu qemu-efi-aarch64 AAVMF; do
	[ -d "$R/usr/share/$d" ] && datadirs="$datadirs -L $R/usr/share/$d"
done
for bin in "$R"/usr/bin/qemu-system-*; do
	name=$(basename "$bin")
	cat > "$dir/bin/$name" <<-EOF
	#!/bin/sh
	# Debian 13's $name, run on its own libraries (scripts/qemu-current.sh).
	QEMU_MODULE_DIR=$libdir/qemu
	export QEMU_MODULE_DIR
	case "\$1" in --version|-version|-h|--help) exec $loader --library-path $libdir $bin "\$@" ;; esac
	exec $loader --library-path $libdir $bin$datadirs "\$@"
	EOF
	chmod +x "$dir/bin/$name"
done

ver=$(dpkg-deb -f "$(ls "$apt_dir"/cache/archives/"${pkgs[0]}"_*.deb)" Version)
"$dir/bin/qemu-system-x86_64" --version | head -1 | grep -q 'QEMU emulator version' || {
	echo "qemu-current: the unpacked QEMU does not start" >&2
	exit 1
}
{
	echo "packages: ${pkgs[*]}"
	echo "suite: $suite"
	echo "version: $ver"
} > "$dir/version"
# The .debs are not needed once unpacked.
rm -rf "$apt_dir/cache"
echo "qemu-current: ${pkgs[*]} $ver ($suite) in $dir"
