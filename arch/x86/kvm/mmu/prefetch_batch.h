/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The batched engine of mmu/prefetch_batch.c, for the window walk of
 * mmu/prefetch.c.
 */
#ifndef __KVM_X86_MMU_PREFETCH_BATCH_H
#define __KVM_X86_MMU_PREFETCH_BATCH_H

u64 kvm_mmu_prefetch_batch(struct kvm_vcpu *vcpu, u64 start, u64 gfn,
			   u64 end, u64 *mapped, u32 *sptes);

/*
 * The largest level at which a prefetch may map @gfn of the window
 * [@start, @end): the level of the largest block holding @gfn that lies
 * inside the window.  Both engines map no page outside the window.
 */
static inline int kvm_mmu_prefetch_max_level(u64 gfn, u64 start, u64 end)
{
	int level;

	for (level = KVM_MAX_HUGEPAGE_LEVEL; level > PG_LEVEL_4K; level--) {
		u64 pages = KVM_PAGES_PER_HPAGE(level);
		u64 first = ALIGN_DOWN(gfn, pages);

		if (first >= start && first + pages <= end)
			break;
	}
	return level;
}

#endif /* __KVM_X86_MMU_PREFETCH_BATCH_H */
