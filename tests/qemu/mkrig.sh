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
# and the test VM's kernel), RIG (output directory).
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

(cd "$root" && find . | LC_ALL=C sort | cpio -o -H newc --quiet) |
	gzip -1 > "$RIG/initramfs.cpio.gz"
echo "qemu rig: $RIG/initramfs.cpio.gz ($(du -h "$RIG/initramfs.cpio.gz" | cut -f1))"
