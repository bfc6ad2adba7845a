/* SPDX-License-Identifier: GPL-2.0 */
/*
 * <linux/minmax.h>, which adaptive.h includes: min()/max() come from
 * tools/include, min3() and clamp_t() from kernel_copies.h, all through
 * the shim's prefetch_internal.h, included first.
 */
#ifndef __KVM_PREFETCH_INTERNAL_H
#error "include the shim's prefetch_internal.h first"
#endif
