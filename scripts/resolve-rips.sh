#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Name the code each vCPU of a wedged test VM was in: read the RIPs (and
# IF, HLT, RBX) from the "info registers -a" dump that tests/vm/run-vm.sh
# saves next to a log (LOG.qemu-state), and look them up with addr2line
# in the vmlinux of Debian's debug-symbol package of the image that ran
# (linux-image-<ABI>-dbg, about 860 MB: downloaded once into DIR and only
# the vmlinux is kept).  The test VM boots with nokaslr, so the core
# kernel's addresses are those of the file.  A RIP in kvm.ko or
# kvm-amd.ko is looked up from the last "@@MODTEXT" line (tests/vm/
# kvm-reload prints where the modules' .text went) in the log next to
# the state file, in our modules (MODDIR, default build/modules) or
# Debian's stock ones.
#
# Usage: resolve-rips.sh STATE-FILE ABI [DIR]   (DIR: build/dbg)

set -eo pipefail
state=${1:?usage: resolve-rips.sh STATE-FILE ABI [DIR]}
abi=${2:?usage: resolve-rips.sh STATE-FILE ABI [DIR]}
dir=${3:-build/dbg}
vmlinux=$dir/vmlinux-$abi

if [ ! -f "$vmlinux" ]; then
	mkdir -p "$dir"
	(cd "$dir" && apt-get download -qq "linux-image-$abi-dbg" 2>/dev/null)
	deb=$(ls "$dir"/linux-image-"$abi"-dbg_*.deb)
	dpkg-deb --fsys-tarfile "$deb" |
		tar -xO "./usr/lib/debug/boot/vmlinux-$abi" > "$vmlinux.tmp"
	mv "$vmlinux.tmp" "$vmlinux"
	rm -f "$deb"
fi

log=${state%.qemu-state}
moddir=${MODDIR:-build/modules}
modtext=""
# (Firmware output may precede the first one on its line.)
[ -f "$log" ] && modtext=$(tr -d '\r' < "$log" | { grep -ao '@@MODTEXT .*' || true; } | tail -n 1)
# "@@MODTEXT ours|stock kvm:.text=0x... kvm_amd:.noinstr.text=0x... ..."
which=$(awk '{ print $2 }' <<< "$modtext")

# addr2line for a RIP inside one of the modules' sections, or nothing:
# the section whose start is the closest below the RIP.
in_module() {
	# (Bash's arithmetic is signed: kernel addresses are negative, and
	# compare the right way among themselves.)
	local rip=$((16#$1)) best="" bestsec="" tok mod sec addr ko off

	for tok in $modtext; do
		case $tok in *:*=0x*) ;; *) continue ;; esac
		addr=$((${tok#*=}))
		if [ "$addr" -le "$rip" ] && { [ -z "$best" ] || [ "$addr" -gt "$best" ]; }; then
			best=$addr
			bestsec=${tok%%=*}
		fi
	done
	[ -n "$bestsec" ] || return 1
	mod=${bestsec%%:*}
	sec=${bestsec#*:}
	ko=${mod/_/-}.ko
	if [ "$which" = stock ]; then
		ko=/lib/modules/$abi/kernel/arch/x86/kvm/$ko
	else
		ko=$moddir/$ko
	fi
	off=$(printf '0x%x' $((rip - best)))
	printf '%s(%s)%s+%s: ' "$mod" "$which" "$sec" "$off"
	addr2line -f -i -j "$sec" -e "$ko" "$off" | paste -sd' '
}

awk '/^CPU#[0-9]+/ { cpu = $1 }
     /RBX=/ { match($0, /RBX=[0-9a-f]+/); rbx = substr($0, RSTART + 4, RLENGTH - 4) }
     /^RIP=/ {
	split($1, r, "="); rip = r[2]
	match($0, /RFL=[0-9a-f]+/); rfl = substr($0, RSTART + 4, RLENGTH - 4)
	hlt = ($0 ~ /HLT=1/) ? 1 : 0
	print cpu, rip, rfl, hlt, rbx
     }' "$state" |
while read -r cpu rip rfl hlt rbx; do
	if_on=$(( (16#$rfl >> 9) & 1 ))
	if [ $((16#$rip)) -ge $((16#ffffffffc0000000)) ] && where=$(in_module "$rip"); then
		:
	else
		where=$(addr2line -f -i -e "$vmlinux" "0x$rip" | paste -sd' ' |
			sed 's#debian/build/build_amd64_none_amd64/##g')
	fi
	echo "$cpu RIP $rip IF=$if_on HLT=$hlt RBX $rbx: $where"
done
