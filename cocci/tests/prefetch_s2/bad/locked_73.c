// SPDX-License-Identifier: GPL-2.0-only
/*
 * prefetch_s2.cocci must report each line that ends in an expect-warning
 * comment: 7.3's dispatch site in kvm_s2_fault_map(), with its test,
 * reached before kvm_fault_unlock() drops mmu_lock.
 */
static int kvm_s2_fault_map(const struct kvm_s2_fault_desc *s2fd,
			    const struct kvm_s2_fault_vma_info *s2vi,
			    enum kvm_pgtable_prot prot, void *memcache)
{
	struct kvm *kvm = s2fd->vcpu->kvm;
	int ret = 0;

	kvm_fault_lock(kvm);
	if (kvm_prefetch_may_open(kvm) && !ret)
		kvm_arm_prefetch(s2fd->vcpu, s2fd->memslot, PAGE_SIZE, s2vi->mmu_seq); /* expect-warning */
	kvm_fault_unlock(kvm);
	return ret;
}
