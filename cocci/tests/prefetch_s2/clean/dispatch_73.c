// SPDX-License-Identifier: GPL-2.0-only
/*
 * prefetch_s2.cocci must report nothing here: 7.3's kvm_s2_fault_map() in
 * the shape of its hook patch 0004, the engine run once after
 * kvm_fault_unlock() under the VM's flag.
 */
static int kvm_s2_fault_map(const struct kvm_s2_fault_desc *s2fd,
			    const struct kvm_s2_fault_vma_info *s2vi,
			    enum kvm_pgtable_prot prot, void *memcache)
{
	struct kvm *kvm = s2fd->vcpu->kvm;
	struct kvm_pgtable *pgt = s2fd->vcpu->arch.hw_mmu->pgt;
	long perm_fault_granule = 0, mapping_size = s2vi->vma_pagesize;
	bool prefetch = false;
	int ret;

	kvm_fault_lock(kvm);
	ret = -EAGAIN;
	if (mmu_invalidate_retry(kvm, s2vi->mmu_seq))
		goto out_unlock;
	ret = kvm_pgtable_stage2_map(pgt, s2fd->fault_ipa, mapping_size, 0,
				     prot, memcache, 0);
	prefetch = !ret && !perm_fault_granule && !s2vi->device &&
		   !s2fd->nested;
out_unlock:
	kvm_fault_unlock(kvm);
	if (kvm_prefetch_may_open(kvm) && prefetch)
		kvm_arm_prefetch(s2fd->vcpu, s2fd->memslot, mapping_size,
				 s2vi->mmu_seq);
	if (ret != -EAGAIN)
		return ret;
	return 0;
}
