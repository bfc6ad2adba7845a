/* SPDX-License-Identifier: GPL-2.0 */
/*
 * <linux/kvm_prefetch.h> includes <linux/kvm_types.h>; in the unit tests its
 * contents come from the shim (kernel_stubs.h, kernel_copies.h), which prefetch_internal.h
 * includes first.
 */
#ifndef __KVM_PREFETCH_INTERNAL_H
#error "include the shim's prefetch_internal.h first"
#endif
