/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * What the x86 prefetch engine asks of the MMU, as Linux 6.12 answers it.
 * Included by mmu/prefetch.c after the MMU's headers.
 */
#ifndef __KVM_X86_MMU_PREFETCH_MMU_H
#define __KVM_X86_MMU_PREFETCH_MMU_H

/* Does the vCPU's current root belong to the TDP MMU? */
static inline bool kvm_mmu_prefetch_tdp_mmu(struct kvm_vcpu *vcpu)
{
	return tdp_mmu_enabled && vcpu->arch.mmu->root_role.direct;
}

/*
 * Is @gfn private (guest_memfd) memory?  An AUTO fault must not allocate
 * it; the fault path checks again under its mmu_invalidate_seq snapshot.
 */
static inline bool kvm_mmu_prefetch_private(struct kvm *kvm, gfn_t gfn)
{
	return kvm_mem_is_private(kvm, gfn);
}

#endif /* __KVM_X86_MMU_PREFETCH_MMU_H */
