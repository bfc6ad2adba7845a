/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The batched engine of mmu/prefetch_batch.c, for the window walk of
 * mmu/prefetch.c.
 */
#ifndef __KVM_X86_MMU_PREFETCH_BATCH_H
#define __KVM_X86_MMU_PREFETCH_BATCH_H

u64 kvm_mmu_prefetch_batch(struct kvm_vcpu *vcpu, u64 start, u64 gfn,
			   u64 end, u32 max, u64 *mapped, u32 *scanned);
void kvm_mmu_prefetch_window(struct kvm_vcpu *vcpu, bool open);

/**
 * struct kvm_prefetch_backoff - a vCPU's windows that mapped nothing
 * @empty: guest-fault windows in a row that mapped nothing (saturates at
 *	PREFETCH_EMPTY_MIN, mmu/prefetch.c)
 * @skip: guest faults still to go without a window
 * @shift: log2 of the guest faults to go without a window after the next
 *	window that maps nothing
 *
 * Only the vCPU's own thread uses it, in kvm_mmu_prefetch().
 */
struct kvm_prefetch_backoff {
	u32 empty;
	u32 skip;
	u32 shift;
};

/*
 * The record is the first member of the vCPU's struct kvm_prefetch_batch
 * (prefetch_batch.c asserts it), so that every guest fault reaches it
 * without a call.
 */
static inline struct kvm_prefetch_backoff *
kvm_mmu_prefetch_backoff(struct kvm_vcpu *vcpu)
{
	return (struct kvm_prefetch_backoff *)vcpu->arch.prefetch_batch;
}

/*
 * A prefetch SPTE as the engine installs it: make_spte()'s, but not dirty
 * where the SPTE has A/D bits.  The CPU sets the dirty bit at the guest's
 * first write, and only then does zapping the SPTE dirty the host page.
 * make_spte() makes every writable SPTE dirty, so that each page of a
 * window mapped writable would be dirtied at zap time whether the guest
 * wrote it or not: writeback of MAP_SHARED file pages the guest only
 * read, MADV_FREE pages that can no longer be discarded.  Without A/D bits
 * (or where writes are tracked by write protection) the writable bit is
 * the dirty state: the SPTE stays as made.
 */
static inline u64 kvm_mmu_prefetch_clean_spte(u64 spte)
{
	if (spte_ad_enabled(spte) && !spte_ad_need_write_protect(spte))
		spte &= ~shadow_dirty_mask;
	return spte;
}

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
