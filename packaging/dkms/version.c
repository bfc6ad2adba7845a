// SPDX-License-Identifier: GPL-2.0
/*
 * The package's version in a DKMS-built kvm.ko, kvm-amd.ko and kvm-intel.ko
 * (/sys/module/kvm/version); packaging/dkms/prepare.sh adds a copy of this
 * file to each module's objects.
 */
#include <linux/module.h>

MODULE_VERSION(KVM_PREFETCH_VERSION);
