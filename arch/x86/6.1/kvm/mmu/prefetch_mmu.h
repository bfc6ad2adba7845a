/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * What the x86 prefetch engine asks of the MMU, as Linux 6.1 answers it.
 * Included by mmu/prefetch.c and mmu/prefetch_batch.c after the MMU's
 * headers.
 */
#ifndef __KVM_X86_MMU_PREFETCH_MMU_H
#define __KVM_X86_MMU_PREFETCH_MMU_H

/* Does the vCPU's current root belong to the TDP MMU? */
static inline bool kvm_mmu_prefetch_tdp_mmu(struct kvm_vcpu *vcpu)
{
	return is_tdp_mmu(vcpu->arch.mmu);
}

/*
 * Does @kvm use the TDP MMU?  6.1's kvm.tdp_mmu is writable and each VM
 * takes it at creation, but only tdp_mmu.c sees it: for no VM (NULL, the
 * system's KVM_CHECK_EXTENSION), answer for TDP alone.
 */
static inline bool kvm_mmu_prefetch_tdp_mmu_vm(struct kvm *kvm)
{
	return !kvm || is_tdp_mmu_enabled(kvm);
}

/* Is @gfn private (guest_memfd) memory?  6.1 has none. */
static inline bool kvm_mmu_prefetch_private(struct kvm *kvm, gfn_t gfn)
{
	return false;
}

/* The root the vCPU walks, or NULL if it has none or it is obsolete. */
static inline struct kvm_mmu_page *kvm_mmu_prefetch_root(struct kvm_vcpu *vcpu)
{
	struct kvm_mmu_page *root;

	if (!VALID_PAGE(vcpu->arch.mmu->root.hpa))
		return NULL;
	root = to_shadow_page(vcpu->arch.mmu->root.hpa);
	return root && !root->role.invalid ? root : NULL;
}

/* May a VM's gfns be private (guest_memfd)?  6.1 has no private memory. */
static inline bool kvm_mmu_prefetch_may_be_private(struct kvm *kvm)
{
	return false;
}

/* An SPTE another thread has frozen while it changes it. */
static inline bool kvm_mmu_prefetch_spte_frozen(u64 spte)
{
	return is_removed_spte(spte);
}

/* The fault path and the SPTE, as this base has them. */
#include "prefetch_fault.h"

#endif /* __KVM_X86_MMU_PREFETCH_MMU_H */
