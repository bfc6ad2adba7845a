/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The batched engine of mmu/prefetch_batch.c, for the window walk of
 * mmu/prefetch.c.
 */
#ifndef __KVM_X86_MMU_PREFETCH_BATCH_H
#define __KVM_X86_MMU_PREFETCH_BATCH_H

u64 kvm_mmu_prefetch_batch(struct kvm_vcpu *vcpu, u64 gfn, u64 end,
			   u64 *mapped);

#endif /* __KVM_X86_MMU_PREFETCH_BATCH_H */
