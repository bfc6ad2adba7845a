#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# DKMS MAKE: build the tree packaging/dkms/prepare.sh prepared against
# the kernel's headers: kvm.ko, kvm-amd.ko and kvm-intel.ko, then the
# adaptive policy like a third party's module, against kvm.ko's exports.
#
# Usage, from the top of the DKMS build directory: build.sh <kernel release>

set -eo pipefail
[ $# -eq 1 ] || { echo "usage: $0 <kernel release>" >&2; exit 2; }
KDIR=/lib/modules/$1/build
TOP=$PWD

if [ ! -e build/.prepared ]; then
	echo "kvm-prefetch: no prepared tree for $1: the pre-build step failed (its message is above, or in dkms build's output)" >&2
	exit 1
fi
make -C "$KDIR" M="$TOP/build/kvm/arch/x86/kvm" -j"$(nproc)" modules
make -C "$KDIR" M="$TOP/build/policy/adaptive" \
	KVM_PREFETCH_INCLUDE="$TOP/build/kvm/include" \
	KBUILD_EXTRA_SYMBOLS="$TOP/build/kvm/arch/x86/kvm/Module.symvers" \
	modules
