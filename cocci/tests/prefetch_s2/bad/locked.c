// SPDX-License-Identifier: GPL-2.0-only
/*
 * prefetch_s2.cocci must report each line that ends in an expect-warning
 * comment: the arm64 engine's one dispatch site, with its test, reached
 * while user_mem_abort() holds mmu_lock on one path (the read lock).
 */
static int user_mem_abort(struct kvm_vcpu *vcpu, phys_addr_t fault_ipa,
			  struct kvm_memory_slot *memslot, unsigned long hva,
			  unsigned long fault_status)
{
	struct kvm *kvm = vcpu->kvm;
	bool use_read_lock = false, prefetch = false;
	unsigned long mmu_seq = kvm->mmu_invalidate_seq;
	int ret = 0;

	if (use_read_lock)
		read_lock(&kvm->mmu_lock);
	else
		write_lock(&kvm->mmu_lock);
	if (!use_read_lock)
		write_unlock(&kvm->mmu_lock);
	if (kvm_prefetch_may_open(kvm) && prefetch)
		kvm_arm_prefetch(vcpu, memslot, PAGE_SIZE, mmu_seq); /* expect-warning */
	if (use_read_lock)
		read_unlock(&kvm->mmu_lock);
	return ret;
}
