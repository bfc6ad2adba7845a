/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * How the x86 prefetch engine faults, makes and installs SPTEs and drops
 * host pages, as Linux 6.1 to 6.12 has it.  Included by prefetch_mmu.h.
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
	return kvm_mmu_do_page_fault(vcpu, gfn_to_gpa(gfn), 0, KVM_PREFETCH_AUTO,
				     NULL, level);
}

/*
 * What an AUTO fault keeps of the host page kvm_prefetch_gfn_to_pfn() got
 * for it, at @hva, with fault->pfn set: the hva, which the
 * fault path uses to find the host mapping level.
 */
static inline void kvm_mmu_prefetch_fault_page(struct kvm_page_fault *fault,
					       hva_t hva)
{
	fault->hva = hva;
}

/*
 * Is a page the batch got and mapped writable marked dirty when its
 * reference is dropped (kvm_prefetch_put_page())?  No: this kernel marks the page
 * dirty when a dirty SPTE goes, and a prefetch SPTE is clean.
 */
#define KVM_MMU_PREFETCH_DIRTY_ON_MAP	false

/*
 * The level the fault path would map @gfn at, at most @max_level, with
 * mmu_lock held.
 */
static inline int kvm_mmu_prefetch_mapping_level(struct kvm *kvm,
						 const struct kvm_memory_slot *slot,
						 gfn_t gfn, int max_level)
{
	return kvm_mmu_max_mapping_level(kvm, slot, gfn, max_level);
}

/*
 * May the page of @gfn be mapped writable, as make_spte() asks of write
 * tracking for a prefetch?  false if it must stay read-only.
 */
static inline bool kvm_mmu_prefetch_unsync(struct kvm *kvm,
					   const struct kvm_memory_slot *slot,
					   gfn_t gfn)
{
	return !mmu_try_to_unsync_pages(kvm, slot, gfn, true, true);
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
	return make_spte(vcpu, sp, slot, ACC_ALL, gfn, pfn, old_spte, true, true,
			 host_writable, spte);
}

/* Does the memory type make_spte() puts in an SPTE depend on the pfn? */
static inline bool kvm_mmu_prefetch_memtype_per_pfn(void)
{
	return shadow_memtype_mask;
}

/* Does only guest_memfd hold @slot's memory?  Never before Linux 6.18. */
static inline bool kvm_mmu_prefetch_gmem_only(const struct kvm_memory_slot *slot)
{
	return false;
}

/* An AUTO fault's page from guest_memfd: none on this base. */
static inline int kvm_mmu_prefetch_gmem_faultin(struct kvm_vcpu *vcpu,
						struct kvm_page_fault *fault)
{
	return RET_PF_RETRY;
}

/*
 * Walk the SPTEs of [@start, @end) under @root, down to 4 KiB.  This
 * base's walk does not take the VM.
 */
#define for_each_prefetch_tdp_pte(iter, kvm, root, start, end) \
	for_each_tdp_pte(iter, ((void)(kvm), (root)), start, end)

/*
 * May a harvest of prefetch usage walk @root, an entry of the TDP MMU's
 * list of roots?  The valid roots of address space 0.
 */
static inline bool kvm_mmu_prefetch_harvest_root(struct kvm_mmu_page *root)
{
	return !root->role.invalid && kvm_mmu_page_as_id(root) == 0;
}

#endif /* __KVM_X86_MMU_PREFETCH_FAULT_H */
