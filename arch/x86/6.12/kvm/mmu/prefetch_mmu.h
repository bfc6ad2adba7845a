/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * What the x86 prefetch engine asks of the MMU, as Linux 6.12 and 7.3 answer it.
 * Included by mmu/prefetch.c and mmu/prefetch_batch.c after the MMU's
 * headers.
 */
#ifndef __KVM_X86_MMU_PREFETCH_MMU_H
#define __KVM_X86_MMU_PREFETCH_MMU_H

/* Does the vCPU's current root belong to the TDP MMU? */
static inline bool kvm_mmu_prefetch_tdp_mmu(struct kvm_vcpu *vcpu)
{
	return tdp_mmu_enabled && vcpu->arch.mmu->root_role.direct;
}

/* Does @kvm (or, for NULL, a VM created now) use the TDP MMU? */
static inline bool kvm_mmu_prefetch_tdp_mmu_vm(struct kvm *kvm)
{
	return tdp_mmu_enabled;
}

/*
 * Is @gfn private (guest_memfd) memory?  An AUTO fault must not allocate
 * it; the fault path checks again under its mmu_invalidate_seq snapshot.
 */
static inline bool kvm_mmu_prefetch_private(struct kvm *kvm, gfn_t gfn)
{
	return kvm_mem_is_private(kvm, gfn);
}

/* The root the vCPU walks, or NULL if it has none or it is obsolete. */
static inline struct kvm_mmu_page *kvm_mmu_prefetch_root(struct kvm_vcpu *vcpu)
{
	struct kvm_mmu_page *root;

	if (!VALID_PAGE(vcpu->arch.mmu->root.hpa))
		return NULL;
	root = root_to_sp(vcpu->arch.mmu->root.hpa);
	return root && !root->role.invalid ? root : NULL;
}

/* May a VM's gfns be private (guest_memfd)? */
static inline bool kvm_mmu_prefetch_may_be_private(struct kvm *kvm)
{
	return kvm_arch_has_private_mem(kvm);
}

/* An SPTE another thread has frozen while it changes it. */
static inline bool kvm_mmu_prefetch_spte_frozen(u64 spte)
{
	return is_frozen_spte(spte);
}

/* The fault path and the SPTE, as this base has them. */
#include "prefetch_fault.h"

#endif /* __KVM_X86_MMU_PREFETCH_MMU_H */
