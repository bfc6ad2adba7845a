/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The one kernel call of the prefetch core whose signature differs between
 * the base kernels, as Linux 6.1 has it.  Included by prefetch_internal.h
 * after the kernel headers.
 */
#ifndef __KVM_PREFETCH_GUP_H
#define __KVM_PREFETCH_GUP_H

/* GUP of the one page at @addr, with mmap_lock held for read. */
static inline long kvm_prefetch_get_user_page(unsigned long addr,
					      unsigned int gup_flags,
					      struct page **page)
{
	return get_user_pages(addr, 1, gup_flags, page, NULL);
}

#endif /* __KVM_PREFETCH_GUP_H */
