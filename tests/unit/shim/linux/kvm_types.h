/* SPDX-License-Identifier: GPL-2.0 */
/*
 * <kvm/prefetch.h> includes <linux/kvm_types.h>; in the unit tests its
 * contents come from kernel_copies.h, which the shim's prefetch_internal.h
 * includes first.
 */
#ifndef __KVM_PREFETCH_INTERNAL_H
#error "include the shim's prefetch_internal.h first"
#endif
