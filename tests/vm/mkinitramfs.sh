#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Build the busybox initramfs the test VM boots: busybox, our modules,
# Debian's stock kvm modules (for comparisons), the dependencies from the
# linux-image package and the static in-VM test programs.
#
# Environment: BUILD (build directory), VMDIR (output, default
# $BUILD/vm), KMODDIR (/lib/modules/<abi>, or for 7.3 the modules
# directory unpacked by scripts/trixie-root.sh: its stock modules are
# .ko.xz and it has no modules.dep, neither of which matters here),
# SELFTESTS_BIN (optional).
set -euo pipefail

: "${BUILD:?}" "${KMODDIR:?}"
here=$(cd "$(dirname "$0")" && pwd)
vmdir=${VMDIR:-$BUILD/vm}
root=$vmdir/root
out=$vmdir/initramfs.cpio.gz

rm -rf "$root"
mkdir -p "$root"/{bin,sbin,proc,sys,dev,tmp,mnt,lib/modules/{ours,stock,deps}}
cp /bin/busybox "$root/bin/busybox"
ln -s busybox "$root/bin/sh"

# A module from the linux-image package, decompressed if Debian shipped it
# compressed.
stock_module() {
	local name=$1 dst=$2 f
	f=$(find "$KMODDIR/kernel" \( -name "$name.ko" -o -name "$name.ko.xz" \) | head -n1)
	[ -n "$f" ] || { echo "mkinitramfs: $name.ko not found in $KMODDIR" >&2; exit 1; }
	case $f in
	*.xz) xz -dc "$f" > "$dst/$name.ko" ;;
	*) cp "$f" "$dst/$name.ko" ;;
	esac
}
stock_module irqbypass "$root/lib/modules/deps"
stock_module ccp "$root/lib/modules/deps"
stock_module kvm "$root/lib/modules/stock"
stock_module kvm-amd "$root/lib/modules/stock"

for m in kvm kvm-amd kvm-intel; do
	cp "$BUILD/modules/$m.ko" "$root/lib/modules/ours/"
done

# Policy modules go where modprobe looks, so that selecting a policy by
# name autoloads it (request_module("kvm-prefetch-<name>")).
abi=$(basename "$KMODDIR")
extra=$root/lib/modules/$abi/extra
mkdir -p "$extra"
: > "$root/lib/modules/$abi/modules.dep"
for m in "$BUILD"/modules/kvm-prefetch-*.ko; do
	[ -e "$m" ] || continue
	cp "$m" "$extra/"
	echo "extra/$(basename "$m"):" >> "$root/lib/modules/$abi/modules.dep"
done
ln -s ../bin/busybox "$root/sbin/modprobe"

mkdir -p "$root/tests"
# SELFTESTS_BIN (tests/selftests/selftests.mk): a VM for KVM's own
# selftests, which go to /selftests instead of our test programs.
if [ -n "${SELFTESTS_BIN:-}" ]; then
	mkdir -p "$root/selftests"
	cp "$SELFTESTS_BIN"/* "$root/selftests/"
else
	cp "$vmdir"/tests/* "$root/tests/"
fi
# BPF policies (the 6.12 base, tests/vm/prefetch_bpf): the objects, and
# the operator command built with the BPF loader.
if [ -d "$vmdir/bpf" ]; then
	mkdir -p "$root/bpf"
	cp "$vmdir"/bpf/*.bpf.o "$root/bpf/"
fi
if [ -x "$vmdir/bin/kvm-prefetch" ]; then
	cp "$vmdir/bin/kvm-prefetch" "$root/bin/kvm-prefetch"
fi
cp "$here/init" "$root/init"
cp "$here/kvm-reload" "$root/bin/kvm-reload"
chmod 0755 "$root/init"

(cd "$root" && find . | LC_ALL=C sort | cpio -o -H newc --quiet) | gzip -1 > "$out"
echo "initramfs: $out ($(du -h "$out" | cut -f1))"
