#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# DKMS PRE_BUILD: prepare the tree that packaging/dkms/build.sh builds,
# as "make modules" does: extract KVM from the linux-source of exactly
# this kernel's version, apply arch/x86/<base>/series, overlay our files and
# write the out-of-tree Kbuild (scripts/apply-series.sh, layout.sh,
# write-kbuild.sh), then add the package version to the modules.
#
# Usage, from the top of the DKMS build directory (a copy of
# /usr/src/kvm-prefetch-<version>):
#   prepare.sh <kernel release> <package version>
# packaging/dkms/src-paths lists the paths to extract (the Makefile's).
# DKMS ignores a PRE_BUILD failure: build.sh refuses to build without the
# build/.prepared this leaves.

set -eo pipefail
[ $# -eq 2 ] || { echo "usage: $0 <kernel release> <package version>" >&2; exit 2; }
KVER=$1
VERSION=$2
TREE=build/kvm
# shellcheck source=packaging/dkms/kernel-check.sh
. packaging/dkms/kernel-check.sh

rm -rf build
kp_check_kernel "$KVER"
base=$(kp_kernel_base "$KVER")
# The base's hook series and files (scripts/layout.sh).
export KP_BASE=$base
mkdir -p "$TREE" build/policy
# shellcheck disable=SC2046
tar -xJf "/usr/src/linux-source-$base.tar.xz" -C "$TREE" \
	--strip-components=1 $(sed "s|^|linux-source-$base/|" packaging/dkms/src-paths)
scripts/apply-series.sh "$TREE"
scripts/layout.sh overlay "$TREE"
scripts/write-kbuild.sh arch/x86/Kbuild.oot "$TREE/arch/x86/kvm/Makefile" \
	> "$TREE/arch/x86/kvm/Kbuild"

# The package version in all three modules.  dkms will not replace a
# module whose version equals the stock one's, and stock KVM has none.
{
	echo
	echo "# The package version (packaging/dkms/prepare.sh)."
	for m in kvm kvm-amd kvm-intel; do
		o=${m//-/_}_prefetch_version
		cp packaging/dkms/version.c "$TREE/arch/x86/kvm/$o.c"
		echo "$m-y += $o.o"
		echo "CFLAGS_$o.o := -DKVM_PREFETCH_VERSION='\"$VERSION\"'"
	done
} >> "$TREE/arch/x86/kvm/Kbuild"

cp -a kvm-policy/adaptive build/policy/adaptive
touch build/.prepared
echo "kvm-prefetch: KVM from linux-source-$base prepared for $KVER"
