#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The initramfs of the QEMU rig (tests/qemu/): the test VM's usual one
# (tests/vm/mkinitramfs.sh: busybox, our modules and Debian's stock ones)
# with Debian's qemu-system-x86_64, the libraries it links, its firmware,
# Debian's kernel as the guest and the guest's own initramfs (busybox,
# tests/qemu/l2-init, l2work).  The test VM also gets the rig's drivers
# (qemu_guests, qemu_life, qemu_postcopy, qemu_cli, and lib.sh, the shell
# they share, as /lib/qemu-rig.sh), a QMP client (qmp), asuser, l2work
# (for the sums a pass must read) and the kvm-prefetch command built from
# packaging/.
#
# Environment: BUILD, KMODDIR (/lib/modules/<abi>), KIMAGE (the guest's
# and the test VM's kernel), RIG (output directory), L1DIR (the second L1
# VMM's scripts/qemu-current.sh directory, default $BUILD/qemu-l1).
set -euo pipefail
: "${BUILD:?}" "${KMODDIR:?}" "${KIMAGE:?}" "${RIG:?}"
here=$(cd "$(dirname "$0")" && pwd)

rm -rf "$RIG"
mkdir -p "$RIG/tests" "$RIG/l2root"/{bin,proc,sys,dev,tmp}

# The guest's initramfs.
gcc -O2 -Wall -static -o "$RIG/l2work" "$here/l2work.c"
cp /bin/busybox "$RIG/l2root/bin/busybox"
ln -s busybox "$RIG/l2root/bin/sh"
cp "$here/l2-init" "$RIG/l2root/init"
cp "$RIG/l2work" "$RIG/l2root/l2work"
chmod 0755 "$RIG/l2root/init"
(cd "$RIG/l2root" && find . | LC_ALL=C sort | cpio -o -H newc --quiet) |
	gzip -1 > "$RIG/l2-initrd.gz"

# The test VM's initramfs, with the rig's drivers as its only tests.
cp "$here/qemu_guests" "$here/qemu_life" "$here/qemu_postcopy" "$here/qemu_cli" "$RIG/tests/"
gcc -O2 -Wall -Wextra -static -o "$RIG/qmp" "$here/qmp.c"
gcc -O2 -Wall -Wextra -static -o "$RIG/asuser" "$here/asuser.c"
gcc -O2 -Wall -Wextra -Wno-unused-parameter -static -I"$BUILD/uapi" \
	-DKP_VERSION='"rig"' -o "$RIG/kvm-prefetch" \
	"$here/../../packaging/kvm-prefetch/kvm-prefetch.c"
BUILD=$BUILD VMDIR=$RIG KMODDIR=$KMODDIR "$here/../vm/mkinitramfs.sh" > /dev/null
root=$RIG/root
mkdir -p "$root/l2" "$root/usr/bin" "$root/usr/share"
cp "$KIMAGE" "$root/l2/vmlinuz"
# The same kernel uncompressed (an ELF with a PVH entry note), for
# QEMU's PVH boot (kp.qemu.kernel=pvh): no decompressor in the guest.
# The bzImage's payload is one xz stream; xz complains of what follows it.
python3 - "$KIMAGE" "$RIG/vmlinux.xz" <<'PY'
import sys
d = open(sys.argv[1], "rb").read()
off = d.find(b"\xfd7zXZ\x00")
if off < 0:
    sys.exit("mkrig: no xz stream in " + sys.argv[1])
open(sys.argv[2], "wb").write(d[off:])
PY
xz -dc "$RIG/vmlinux.xz" > "$root/l2/vmlinux" 2>/dev/null || true
rm -f "$RIG/vmlinux.xz"
[ "$(head -c4 "$root/l2/vmlinux" | od -An -c | tr -d ' ')" = '177ELF' ] ||
	{ echo "mkrig: no ELF kernel from $KIMAGE" >&2; exit 1; }
cp "$RIG/l2-initrd.gz" "$root/l2/initrd.gz"
cp /usr/bin/qemu-system-x86_64 "$root/usr/bin/"
ln -s ../usr/bin/qemu-system-x86_64 "$root/bin/qemu-system-x86_64"
cp "$RIG/qmp" "$RIG/asuser" "$RIG/kvm-prefetch" "$RIG/l2work" "$root/bin/"
mkdir -p "$root/lib"
cp "$here/lib.sh" "$root/lib/qemu-rig.sh"
for lib in $(ldd /usr/bin/qemu-system-x86_64 | grep -o '/[^ ]*'); do
	mkdir -p "$root$(dirname "$lib")"
	cp -L "$lib" "$root$lib"
done
# x86 firmware only: SeaBIOS, the option ROMs -kernel needs, keymaps.
mkdir -p "$root/usr/share/qemu" "$root/usr/share/seabios"
cp -L /usr/share/seabios/* "$root/usr/share/seabios/" 2>/dev/null || true
for f in linuxboot_dma.bin linuxboot.bin kvmvapic.bin multiboot_dma.bin pvh.bin \
	 bios-256k.bin vgabios-stdvga.bin efi-e1000.rom; do
	[ -e "/usr/share/qemu/$f" ] && cp -L "/usr/share/qemu/$f" "$root/usr/share/qemu/"
done
cp -a /usr/share/qemu/keymaps "$root/usr/share/qemu/" 2>/dev/null || true

# The second L1 VMM (kp.qemu.l1=current): Debian 13's own QEMU (10.0,
# trixie: what Debian 13 hosts run; not the backports' QEMU of the outer
# emulator), unpacked by scripts/qemu-current.sh into $L1DIR/root
# (qemu.mk: build/qemu-l1), in /opt/qemu-current beside 7.2: the binary, the libraries its own loader
# lists (Debian 13's C library and loader included: Debian 12's are too
# old for it), and the x86 firmware it loads.  Its program interpreter is
# rewritten to /opt/qemu-current/ld.so, so that it runs as a host runs
# it (its pid, /proc/<pid>/exe and comm "qemu-system-x86" its own, not
# the loader's, as kvm-prefetch vms and set --pid see them); the wrapper
# /bin/qemu-current points it at its libraries and firmware.  No module
# directory: the modules are display, audio and USB backends a
# -nodefaults -display none guest never loads.
L1DIR=${L1DIR:-$BUILD/qemu-l1}
cur=$L1DIR/root
if [ -x "$cur/usr/bin/qemu-system-x86_64" ]; then
	o=$root/opt/qemu-current
	curlib=$cur/usr/lib/x86_64-linux-gnu
	mkdir -p "$o/lib" "$o/share/qemu" "$o/share/seabios"
	cp "$curlib/ld-linux-x86-64.so.2" "$o/ld.so"
	"$o/ld.so" --library-path "$curlib" --list "$cur/usr/bin/qemu-system-x86_64" |
		sed -n 's/.* => \([^ ]*\) (0x.*/\1/p' | grep -v ld-linux |
		while read -r lib; do cp -L "$lib" "$o/lib/"; done
	python3 "$here/setinterp.py" "$cur/usr/bin/qemu-system-x86_64" \
		/opt/qemu-current/ld.so "$o/qemu-system-x86_64"
	for f in bios-256k.bin; do cp -L "$cur/usr/share/seabios/$f" "$o/share/seabios/"; done
	# (linuxboot_dma.bin, not linuxboot.bin: QEMU 10 has fw_cfg DMA only)
	for f in linuxboot_dma.bin kvmvapic.bin multiboot_dma.bin pvh.bin; do
		cp -L "$cur/usr/share/qemu/$f" "$o/share/qemu/"
	done
	sed -n 's/^version: //p' "$L1DIR/version" > "$o/version"
	cat > "$root/bin/qemu-current" <<-'EOF'
	#!/bin/sh
	# Debian 13's qemu-system-x86_64 (tests/qemu/mkrig.sh), on its own
	# libraries and firmware.
	LD_LIBRARY_PATH=/opt/qemu-current/lib QEMU_MODULE_DIR=/opt/qemu-current/modules
	export LD_LIBRARY_PATH QEMU_MODULE_DIR
	case "$1" in --version|-version|-h|--help) exec /opt/qemu-current/qemu-system-x86_64 "$@" ;; esac
	exec /opt/qemu-current/qemu-system-x86_64 -L /opt/qemu-current/share/qemu \
		-L /opt/qemu-current/share/seabios "$@"
	EOF
	chmod 0755 "$root/bin/qemu-current"
	"$cur/../bin/qemu-system-x86_64" --version | head -n1 | sed 's/^/qemu rig: current L1: /'
else
	echo "qemu rig: no $cur: no current L1 (scripts/qemu-current.sh; kp.qemu.l1=current will fail)" >&2
fi

(cd "$root" && find . | LC_ALL=C sort | cpio -o -H newc --quiet) |
	gzip -1 > "$RIG/initramfs.cpio.gz"
echo "qemu rig: $RIG/initramfs.cpio.gz ($(du -h "$RIG/initramfs.cpio.gz" | cut -f1))"
