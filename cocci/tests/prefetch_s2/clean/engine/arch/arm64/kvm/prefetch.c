// SPDX-License-Identifier: GPL-2.0-only
/*
 * prefetch_s2.cocci must report nothing here: the engine's batch in the
 * shape of arch/arm64/kvm/prefetch.c, every map after write_lock() and
 * the retry test, the lock dropped only after the last one.
 */
static int prefetch_batch(struct kvm *kvm, struct kvm_pgtable *pgt, u64 gpa,
			  u64 *pa, int nr, struct kvm_mmu_memory_cache *mc,
			  unsigned long seq)
{
	int res = 0, done;

	write_lock(&kvm->mmu_lock);
	if (mmu_invalidate_retry(kvm, seq)) {
		res = -EAGAIN;
		goto out_unlock;
	}
	for (done = 0; done < nr; done++) {
		if (kvm_pgtable_stage2_map(pgt, gpa + done * PAGE_SIZE,
					   PAGE_SIZE, pa[done], 0, mc)) {
			res = -ENOMEM;
			goto out_unlock;
		}
	}
out_unlock:
	write_unlock(&kvm->mmu_lock);
	return res;
}
