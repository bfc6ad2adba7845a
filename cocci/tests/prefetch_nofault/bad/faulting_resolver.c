// SPDX-License-Identifier: GPL-2.0-only
/*
 * prefetch_nofault.cocci must report each line that ends in an
 * expect-warning comment: pfn lookups that can wait for I/O or fault a
 * page in, reached from the AUTO path's entry points.
 */
#include "mmu_internal.h"

static struct page *resolver_gup_nowait(unsigned long addr)
{
	struct page *page = NULL;

	mmap_read_lock(current->mm);
	if (get_user_pages(addr, 1, FOLL_NOWAIT, &page, NULL) != 1) /* expect-warning */
		page = NULL;
	mmap_read_unlock(current->mm);
	return page;
}

static struct page *resolver_remote(unsigned long addr, unsigned int flags)
{
	struct page *page = NULL;

	/* FOLL_NOFAULT may or may not be in flags: not provably safe. */
	get_user_pages_remote(current->mm, addr, 1, flags, &page, NULL, NULL); /* expect-warning */
	pin_user_pages_unlocked(addr, 1, &page, FOLL_WRITE); /* expect-warning */
	return page;
}

static kvm_pfn_t resolver_slow(struct kvm_memory_slot *slot, gfn_t gfn,
			       bool *writable)
{
	unsigned long addr = gfn_to_hva_memslot(slot, gfn);

	if (fixup_user_fault(current->mm, addr, FAULT_FLAG_WRITE, NULL)) /* expect-warning */
		return KVM_PFN_ERR_FAULT;
	handle_mm_fault(find_vma(current->mm, addr), addr, 0, NULL); /* expect-warning */
	return hva_to_pfn(addr, false, NULL, true, writable); /* expect-warning */
}

kvm_pfn_t kvm_prefetch_gfn_to_pfn(struct kvm_memory_slot *slot, gfn_t gfn,
				  u32 gup, bool *writable, hva_t *hva)
{
	unsigned long addr = gfn_to_hva_memslot(slot, gfn);
	struct page *page;

	*hva = addr;
	if (gup == 2)
		return gfn_to_pfn_memslot(slot, gfn); /* expect-warning */
	if (gup == 3)
		return resolver_slow(slot, gfn, writable);
	page = resolver_gup_nowait(addr);
	if (!page)
		page = resolver_remote(addr, 0);
	return page ? page_to_pfn(page) : KVM_PFN_ERR_FAULT;
}

int kvm_mmu_prefetch_faultin_pfn(struct kvm_vcpu *vcpu,
				 struct kvm_page_fault *fault)
{
	bool async = false;

	fault->pfn = __gfn_to_pfn_memslot(fault->slot, fault->gfn, false, &async, /* expect-warning */
					  false, &fault->map_writable,
					  &fault->hva);
	if (is_error_noslot_pfn(fault->pfn))
		fault->pfn = kvm_vcpu_gfn_to_pfn(vcpu, fault->gfn); /* expect-warning */
	return RET_PF_CONTINUE;
}
