// SPDX-License-Identifier: GPL-2.0-only
/*
 * The x86 part of KVM_PRE_FAULT_MEMORY, backported to 6.1: map the start
 * of a range with a fault of origin KVM_PREFETCH_MANUAL through the
 * regular TDP fault path.  Kernels with the native ioctl have this in
 * arch/x86/kvm/mmu/mmu.c.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/kvm_host.h>
#include <linux/sched/signal.h>

#include "mmu.h"
#include "mmu_internal.h"

/**
 * kvm_arch_vcpu_pre_fault_memory() - map the start of a range (x86)
 * @vcpu: the vCPU, loaded, with kvm->srcu held
 * @range: what is left to map; not modified
 *
 * Return: the number of bytes from range->gpa now mapped (> 0), or
 * -EOPNOTSUPP (not TDP), -ENOENT (no memslot), -EAGAIN (memslot being
 * deleted or moved), -EINTR (signal) or another -errno.
 */
long kvm_arch_vcpu_pre_fault_memory(struct kvm_vcpu *vcpu,
				    struct kvm_pre_fault_memory *range)
{
	u8 level = PG_LEVEL_4K;
	u64 end;
	int r;

	if (!tdp_enabled)
		return -EOPNOTSUPP;
	if (vcpu->arch.mmu->page_fault != kvm_tdp_page_fault)
		return -EOPNOTSUPP;

	for (;;) {
		r = kvm_mmu_pre_fault_begin(vcpu, range->gpa);
		if (r)
			return r;
		r = kvm_mmu_do_page_fault(vcpu, range->gpa, 0,
					  KVM_PREFETCH_MANUAL, NULL, &level);
		if (r != RET_PF_RETRY)
			break;
		if (signal_pending(current))
			return -EINTR;
		cond_resched();
	}

	if (r < 0)
		return r;
	if (r != RET_PF_FIXED && r != RET_PF_SPURIOUS)
		return -ENOENT;

	end = (range->gpa & KVM_HPAGE_MASK(level)) + KVM_HPAGE_SIZE(level);
	return min(range->size, end - range->gpa);
}
