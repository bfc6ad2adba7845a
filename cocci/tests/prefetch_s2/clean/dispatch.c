// SPDX-License-Identifier: GPL-2.0-only
/*
 * prefetch_s2.cocci must report nothing here: user_mem_abort() in the
 * shape of hook patch 0004, the engine run once after mmu_lock is dropped
 * under the VM's flag; the fault path's own stage-2 map (not the
 * engine's file) is none of the rule's business.
 */
static int user_mem_abort(struct kvm_vcpu *vcpu, phys_addr_t fault_ipa,
			  struct kvm_memory_slot *memslot, unsigned long hva,
			  unsigned long fault_status)
{
	struct kvm *kvm = vcpu->kvm;
	bool use_read_lock = false, prefetch = false, device = false;
	unsigned long mmu_seq = kvm->mmu_invalidate_seq;
	struct kvm_pgtable *pgt = vcpu->arch.hw_mmu->pgt;
	long vma_pagesize = PAGE_SIZE;
	int ret = 0;

	if (use_read_lock)
		read_lock(&kvm->mmu_lock);
	else
		write_lock(&kvm->mmu_lock);
	if (mmu_invalidate_retry(kvm, mmu_seq))
		goto out_unlock;
	if (fault_status == FSC_PERM) {
		ret = kvm_pgtable_stage2_relax_perms(pgt, fault_ipa, 0);
	} else {
		ret = kvm_pgtable_stage2_map(pgt, fault_ipa, vma_pagesize, 0, 0,
					     NULL);
		prefetch = !ret && fault_status != FSC_PERM && !device;
	}
out_unlock:
	if (use_read_lock)
		read_unlock(&kvm->mmu_lock);
	else
		write_unlock(&kvm->mmu_lock);
	if (kvm_prefetch_may_open(kvm) && prefetch)
		kvm_arm_prefetch(vcpu, memslot, vma_pagesize, mmu_seq);
	return ret != -EAGAIN ? ret : 0;
}
