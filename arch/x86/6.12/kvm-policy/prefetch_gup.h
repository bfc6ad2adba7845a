/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The one kernel call of the prefetch core whose signature differs between
 * the base kernels, as Linux 6.12 and 7.3 have it.  Included by prefetch_internal.h
 * after the kernel headers.
 */
#ifndef __KVM_PREFETCH_GUP_H
#define __KVM_PREFETCH_GUP_H

/* GUP of @nr pages from @addr, with mmap_lock held for read. */
static inline long kvm_prefetch_get_user_pages(unsigned long addr,
					       unsigned long nr,
					       unsigned int gup_flags,
					       struct page **pages)
{
	return get_user_pages(addr, nr, gup_flags, pages);
}

#endif /* __KVM_PREFETCH_GUP_H */
