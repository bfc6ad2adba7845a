/* SPDX-License-Identifier: GPL-2.0 */
/*
 * <kvm/prefetch.h> includes <linux/moduleparam.h> for struct
 * kernel_param_ops; in the unit tests it comes from kernel_stubs.h, which
 * the shim's prefetch_internal.h includes first.
 */
#ifndef __KVM_PREFETCH_INTERNAL_H
#error "include the shim's prefetch_internal.h first"
#endif
