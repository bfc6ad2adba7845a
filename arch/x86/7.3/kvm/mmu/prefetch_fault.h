/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * How the x86 prefetch engine faults, makes and installs SPTEs and drops
 * host pages, as Linux 7.3 has it.  Included by prefetch_mmu.h.
 */
#ifndef __KVM_X86_MMU_PREFETCH_FAULT_H
#define __KVM_X86_MMU_PREFETCH_FAULT_H

/*
 * The AUTO fault of the per-page engine (mmu/prefetch.c) for @gfn, mapping
 * at most at *@level and returning there the level it mapped at.
 */
static inline int kvm_mmu_prefetch_auto_fault(struct kvm_vcpu *vcpu, gfn_t gfn,
					      u8 *level)
{
	return kvm_mmu_prefetch_fault(vcpu, gfn_to_gpa(gfn), level);
}

/*
 * What an AUTO fault keeps of the host page kvm_prefetch_gfn_to_pfn() got
 * for it, at @hva, with fault->pfn set: the page
 * reference, which kvm_mmu_finish_page_fault() drops.
 */
static inline void kvm_mmu_prefetch_fault_page(struct kvm_page_fault *fault,
					       hva_t hva)
{
	fault->refcounted_page = pfn_to_page(fault->pfn);
}

/*
 * Is a page the batch got and mapped writable marked dirty when its
 * reference is dropped (kvm_prefetch_put_page())?  Yes: this kernel marks a
 * folio dirty when KVM maps it writable (as its own prefetch does), not
 * when the SPTE goes.
 */
#define KVM_MMU_PREFETCH_DIRTY_ON_MAP	true

/*
 * The level the fault path would map @gfn at, at most @max_level, with
 * mmu_lock held.
 */
static inline int kvm_mmu_prefetch_mapping_level(struct kvm *kvm,
						 const struct kvm_memory_slot *slot,
						 gfn_t gfn, int max_level)
{
	return min(max_level, kvm_mmu_max_mapping_level(kvm, NULL, slot, gfn));
}

/*
 * May the page of @gfn be mapped writable, as make_spte() asks of write
 * tracking for a prefetch?  false if it must stay read-only.
 */
static inline bool kvm_mmu_prefetch_unsync(struct kvm *kvm,
					   const struct kvm_memory_slot *slot,
					   gfn_t gfn)
{
	return !mmu_try_to_unsync_pages(kvm, slot, gfn, false, true);
}

/*
 * make_spte() for a prefetch SPTE of @pfn at @gfn under @sp, writable if
 * @host_writable allows.  Return true if write tracking made it read-only.
 */
static inline bool kvm_mmu_prefetch_make_spte(struct kvm_vcpu *vcpu,
					      struct kvm_mmu_page *sp,
					      const struct kvm_memory_slot *slot,
					      gfn_t gfn, kvm_pfn_t pfn,
					      u64 old_spte, bool host_writable,
					      u64 *spte)
{
	return make_spte(vcpu, sp, slot, ACC_ALL, gfn, pfn, old_spte, true, false,
			 host_writable, spte);
}

/* Does the memory type make_spte() puts in an SPTE depend on the pfn? */
static inline bool kvm_mmu_prefetch_memtype_per_pfn(void)
{
	return kvm_x86_ops.get_mt_mask;
}

/* Does only guest_memfd hold @slot's memory? */
static inline bool kvm_mmu_prefetch_gmem_only(const struct kvm_memory_slot *slot)
{
	return kvm_memslot_is_gmem_only(slot);
}

/*
 * An AUTO fault's page from guest_memfd, for a memslot that only
 * guest_memfd backs: the page the file has, never one it would allocate
 * (kvm_gmem_get_pfn_nocreate()).  RET_PF_RETRY (do not map) if it has
 * none, or its folio is locked, or the memory is private.
 */
static inline int kvm_mmu_prefetch_gmem_faultin(struct kvm_vcpu *vcpu,
						struct kvm_page_fault *fault)
{
	int max_order;

	if (kvm_gmem_get_pfn_nocreate(vcpu->kvm, fault->slot, fault->gfn,
				      &fault->pfn, &fault->refcounted_page,
				      &max_order))
		return RET_PF_RETRY;
	fault->map_writable = !(fault->slot->flags & KVM_MEM_READONLY);
	/* guest_memfd's folios are of order 0 here (no huge pages yet). */
	if (!max_order)
		fault->max_level = PG_LEVEL_4K;
	return RET_PF_CONTINUE;
}

/* Walk the SPTEs of [@start, @end) under @root, down to 4 KiB. */
#define for_each_prefetch_tdp_pte(iter, kvm, root, start, end) \
	for_each_tdp_pte(iter, kvm, root, start, end)

/*
 * May a harvest of prefetch usage walk @root, an entry of the TDP MMU's
 * list of roots?  The valid roots of address space 0, not mirrors.
 */
static inline bool kvm_mmu_prefetch_harvest_root(struct kvm_mmu_page *root)
{
	return !root->role.invalid && kvm_mmu_page_as_id(root) == 0 &&
	       !is_mirror_sp(root);
}

#endif /* __KVM_X86_MMU_PREFETCH_FAULT_H */
