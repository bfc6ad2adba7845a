// SPDX-License-Identifier: GPL-2.0-only
/*
 * prefetch_nofault.cocci must accept this AUTO path: fast-only GUP, GUP
 * with FOLL_NOFAULT, an atomic __gfn_to_pfn_memslot(), the divert before
 * kvm_faultin_pfn()'s waiting lookup, and waiting lookups in functions
 * the AUTO path does not reach.
 */
#include "mmu_internal.h"

static struct page *resolver_gup_nofault(unsigned long addr)
{
	struct page *page = NULL;

	mmap_read_lock(current->mm);
	if (get_user_pages(addr, 1, FOLL_NOFAULT | FOLL_HWPOISON, &page,
			   NULL) != 1)
		page = NULL;
	mmap_read_unlock(current->mm);
	return page;
}

kvm_pfn_t kvm_prefetch_gfn_to_pfn(struct kvm_memory_slot *slot, gfn_t gfn,
				  u32 gup, bool *writable, hva_t *hva)
{
	unsigned long addr = gfn_to_hva_memslot(slot, gfn);
	struct page *page;

	*hva = addr;
	if (get_user_page_fast_only(addr, FOLL_WRITE, &page))
		return page_to_pfn(page);
	if (get_user_pages_fast_only(addr, 1, 0, &page) == 1)
		return page_to_pfn(page);
	if (gup != KVM_PREFETCH_GUP_NOFAULT)
		return KVM_PFN_ERR_FAULT;
	page = resolver_gup_nofault(addr);
	return page ? page_to_pfn(page) : KVM_PFN_ERR_FAULT;
}

int kvm_mmu_prefetch_faultin_pfn(struct kvm_vcpu *vcpu,
				 struct kvm_page_fault *fault)
{
	fault->pfn = kvm_prefetch_gfn_to_pfn(fault->slot, fault->gfn, 1,
					     &fault->map_writable,
					     &fault->hva);
	if (is_error_noslot_pfn(fault->pfn))
		fault->pfn = __gfn_to_pfn_memslot(fault->slot, fault->gfn,
						  true, NULL, false,
						  &fault->map_writable,
						  &fault->hva);
	return RET_PF_CONTINUE;
}

/* Not on the AUTO path: a guest fault may wait. */
static kvm_pfn_t guest_fault_pfn(struct kvm_memory_slot *slot, gfn_t gfn)
{
	return gfn_to_pfn_memslot(slot, gfn);
}

static int kvm_faultin_pfn(struct kvm_vcpu *vcpu, struct kvm_page_fault *fault)
{
	struct kvm_memory_slot *slot = fault->slot;
	bool async;

	if (slot && (slot->flags & KVM_MEMSLOT_INVALID))
		return RET_PF_RETRY;

	if (fault->prefetch_type == KVM_PREFETCH_AUTO)
		return kvm_mmu_prefetch_faultin_pfn(vcpu, fault);

	async = false;
	fault->pfn = __gfn_to_pfn_memslot(slot, fault->gfn, false, &async,
					  fault->write, &fault->map_writable,
					  &fault->hva);
	if (!async)
		return RET_PF_CONTINUE;
	fault->pfn = guest_fault_pfn(slot, fault->gfn);
	return RET_PF_CONTINUE;
}
