/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * What the x86 prefetch engine asks of the MMU, as Linux 6.1 answers it.
 * Included by mmu/prefetch.c after the MMU's headers.
 */
#ifndef __KVM_X86_MMU_PREFETCH_MMU_H
#define __KVM_X86_MMU_PREFETCH_MMU_H

/* Does the vCPU's current root belong to the TDP MMU? */
static inline bool kvm_mmu_prefetch_tdp_mmu(struct kvm_vcpu *vcpu)
{
	return is_tdp_mmu(vcpu->arch.mmu);
}

/* Is @gfn private (guest_memfd) memory?  6.1 has none. */
static inline bool kvm_mmu_prefetch_private(struct kvm *kvm, gfn_t gfn)
{
	return false;
}

#endif /* __KVM_X86_MMU_PREFETCH_MMU_H */
