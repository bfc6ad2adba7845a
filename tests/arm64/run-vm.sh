#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Build the arm64 test programs and initramfs, boot Image in
# qemu-system-aarch64 (-M virt,virtualization=on -cpu max: KVM runs on
# QEMU's emulated EL2), collect the console and judge the run.  The last
# line is "N passed, N failed, N skipped".
#
# Usage: run-vm.sh <Image> <outdir> [kernel args]
# BENCH=1: also build the benchmarks of tests/arm64/bench/ (make
# arm64-bench; select them with kp.tests=).
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
image=$1 out=$2
shift 2
CC=aarch64-linux-gnu-gcc
CFLAGS="-O2 -g -Wall -Wextra -Wno-unused-parameter -static -pthread -I$here/lib ${UAPI:+-I$UAPI}"
root=$out/root
rm -rf "$root"
mkdir -p "$root"/{proc,sys,dev,tmp,sbin,tests,lib/modules/extra}
$CC $CFLAGS -o "$root/init" "$here/init.c" || exit 1
for n in modprobe insmod rmmod; do ln -s ../init "$root/sbin/$n"; done
progs=("$here"/*.c)
[ -z "${BENCH:-}" ] || progs+=("$here"/bench/*.c)
for t in "${progs[@]}"; do
	n=$(basename "$t" .c)
	[ "$n" = init ] && continue
	$CC $CFLAGS -o "$root/tests/$n" "$t" "$here"/lib/*.c "$here"/lib/*.S || exit 1
done
[ -z "${MODULES:-}" ] || cp $MODULES "$root/lib/modules/extra/"
(cd "$root" && find . | LC_ALL=C sort | cpio -o -H newc --quiet) | gzip -1 > "$out/initramfs.cpio.gz"
log=$out/console.log
# The outer emulator, as tests/vm/run-vm.sh chooses x86's: KP_OUTER
# "current" (the default: Debian 13's QEMU, unpacked by
# scripts/qemu-current.sh into build/qemu-current, "make deps") or "7.2"
# (Debian 12's /usr/bin one); KP_TCG "multi" (the default: one host
# thread per vCPU, so the VM's vCPUs run at the same time) or "single".
# KP_SMP: vCPUs (default 2).
top=$(cd "$here/../.." && pwd)
case ${KP_OUTER:-current} in
current) qemu=$top/build/qemu-current/bin/qemu-system-aarch64 ;;
7.2) qemu=/usr/bin/qemu-system-aarch64 ;;
*) echo "run-vm.sh: KP_OUTER=$KP_OUTER: current or 7.2" >&2; exit 2 ;;
esac
tcg=${KP_TCG:-multi} smp=${KP_SMP:-2}
case $tcg in
single|multi) ;;
*) echo "run-vm.sh: KP_TCG=$tcg: single or multi" >&2; exit 2 ;;
esac
[ -x "$qemu" ] || { echo "run-vm.sh: no $qemu (make deps fetches it)" >&2; exit 2; }
echo "# outer: $("$qemu" --version | head -1), tcg thread=$tcg, $smp vCPUs"
start=$(date +%s)
timeout 900 "$qemu" -M virt,virtualization=on -cpu max \
	-accel "tcg,thread=$tcg" -smp "$smp" -m 1G -nographic -no-reboot \
	-kernel "$image" -initrd "$out/initramfs.cpio.gz" \
	-append "console=ttyAMA0 panic=-1 $*" < /dev/null > "$log" 2>&1
echo "# boot and run: $(( $(date +%s) - start )) s"
# The kernel banner (preemption model) and the CPUs it brought up.
tr -d '\r' < "$log" | sed -n -e 's/^\(Linux version .*\)/# \1/p' \
	-e 's/^\(SMP: Total of .*\)/# \1/p' | head -n 2
tr -d '\r' < "$log" | grep -E '^(PASS|FAIL|SKIP|# |@@)' | grep -v '^@@BEGIN'
pass=$(tr -d '\r' < "$log" | grep -c '^PASS: ')
fail=$(tr -d '\r' < "$log" | grep -c '^FAIL: ')
skip=$(tr -d '\r' < "$log" | grep -c '^SKIP: ')
# A program that exited non-zero without a FAIL line, or no @@DONE.
tr -d '\r' < "$log" | grep -q '^@@DONE' || { echo "FAIL: no @@DONE (hang or panic; $log)"; fail=$((fail + 1)); }
bad=$(tr -d '\r' < "$log" | grep -E '^@@END .* rc=([2-35-9]|[0-9][0-9]+)' | wc -l)
fail=$((fail + bad))
echo "$pass passed, $fail failed, $skip skipped"
[ "$fail" = 0 ]
