#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Print the Kbuild that builds an extracted arch/x86/kvm as external
# modules against a linux-headers package: the out-of-tree glue
# (arch/x86/Kbuild.oot), then the tree's own arch/x86/kvm/Makefile with
# its $(srctree) references pointed into the copied tree.
#
# Usage: write-kbuild.sh <Kbuild.oot> <arch/x86/kvm/Makefile> > .../Kbuild

set -eo pipefail
[ $# -eq 2 ] || { echo "usage: $0 <Kbuild.oot> <arch Makefile>" >&2; exit 2; }

cat "$1"
# shellcheck disable=SC2016
sed -e 's|$(srctree)/arch/x86/kvm|$(src)|g' \
    -e 's|$(srctree)/virt/kvm|$(KVM_TREE)/virt/kvm|g' \
    "$2"
