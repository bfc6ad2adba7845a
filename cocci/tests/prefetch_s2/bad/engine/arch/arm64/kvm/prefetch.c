// SPDX-License-Identifier: GPL-2.0-only
/*
 * prefetch_s2.cocci must report each line that ends in an expect-warning
 * comment: the engine maps without mmu_lock, after dropping it, without
 * the mmu_notifier retry test, or with the test made before the lock.
 */
static int map_unlocked(struct kvm *kvm, struct kvm_pgtable *pgt, u64 gpa,
			u64 pa, struct kvm_mmu_memory_cache *mc)
{
	return kvm_pgtable_stage2_map(pgt, gpa, PAGE_SIZE, pa, 0, mc); /* expect-warning */
}

static int map_after_unlock(struct kvm *kvm, struct kvm_pgtable *pgt, u64 gpa,
			    u64 pa, struct kvm_mmu_memory_cache *mc,
			    unsigned long seq)
{
	int ret;

	write_lock(&kvm->mmu_lock);
	if (mmu_invalidate_retry(kvm, seq)) {
		write_unlock(&kvm->mmu_lock);
		return -EAGAIN;
	}
	write_unlock(&kvm->mmu_lock);
	ret = kvm_pgtable_stage2_map(pgt, gpa, PAGE_SIZE, pa, 0, mc); /* expect-warning */
	return ret;
}

static int map_unchecked(struct kvm *kvm, struct kvm_pgtable *pgt, u64 gpa,
			 u64 pa, struct kvm_mmu_memory_cache *mc,
			 unsigned long seq)
{
	int ret;

	if (mmu_invalidate_retry(kvm, seq))
		return -EAGAIN;
	write_lock(&kvm->mmu_lock);
	ret = kvm_pgtable_stage2_map(pgt, gpa, PAGE_SIZE, pa, 0, mc); /* expect-warning */
	write_unlock(&kvm->mmu_lock);
	return ret;
}

static int map_some_paths(struct kvm *kvm, struct kvm_pgtable *pgt, u64 gpa,
			  u64 pa, struct kvm_mmu_memory_cache *mc,
			  unsigned long seq, bool locked)
{
	int ret;

	if (!locked)
		write_lock(&kvm->mmu_lock);
	if (mmu_invalidate_retry(kvm, seq))
		ret = -EAGAIN;
	else
		ret = kvm_pgtable_stage2_map(pgt, gpa, PAGE_SIZE, pa, 0, mc); /* expect-warning */
	write_unlock(&kvm->mmu_lock);
	return ret;
}
