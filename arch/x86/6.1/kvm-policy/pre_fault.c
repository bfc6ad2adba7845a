// SPDX-License-Identifier: GPL-2.0-only
/*
 * KVM_PRE_FAULT_MEMORY, backported to 6.1 with upstream's ABI: map a range
 * of guest physical memory as a read fault would, before the guest runs.
 * The architecture maps one piece at a time; this file loops over the
 * range, stops for signals and reports what is left.
 */
#define pr_fmt(fmt) "kvm-prefetch: " fmt

#include "prefetch_internal.h"

/* Upstream checks flags only: padding is ignored, as it is there. */
static int pre_fault_check(const struct kvm_pre_fault_memory *range)
{
	if (range->flags)
		return -EINVAL;
	if (!PAGE_ALIGNED(range->gpa) || !PAGE_ALIGNED(range->size) ||
	    !range->size || range->gpa + range->size <= range->gpa)
		return -EINVAL;
	return 0;
}

/* Caller holds vcpu->mutex. */
static long __pre_fault_memory(struct kvm_vcpu *vcpu,
			       struct kvm_pre_fault_memory *range)
{
	u64 full_size = range->size;
	long ret;
	int idx;

	vcpu_load(vcpu);
	idx = srcu_read_lock(&vcpu->kvm->srcu);
	do {
		if (signal_pending(current)) {
			ret = -EINTR;
			break;
		}
		ret = kvm_arch_vcpu_pre_fault_memory(vcpu, range);
		if (ret < 0)
			break;
		if (WARN_ON_ONCE(!ret || ret > range->size)) {
			ret = -EIO;
			break;
		}
		range->gpa += ret;
		range->size -= ret;
		cond_resched();
	} while (range->size);
	srcu_read_unlock(&vcpu->kvm->srcu, idx);
	vcpu_put(vcpu);

	/* Progress is success; the caller sees what is left in @range. */
	return range->size < full_size ? 0 : ret;
}

/**
 * kvm_vcpu_pre_fault_memory() - the KVM_PRE_FAULT_MEMORY vCPU ioctl
 * @vcpu: the vCPU, its mutex held
 * @argp: the user's struct kvm_pre_fault_memory, updated to what is left
 *
 * Return: 0 if at least one page was processed, otherwise -EINVAL (bad
 * arguments), -ENOENT (no memslot at gpa), -EINTR (signal pending),
 * -EAGAIN (memslot deleted or moved meanwhile), -EOPNOTSUPP (no TDP),
 * -EFAULT or another -errno from the fault path.
 */
long kvm_vcpu_pre_fault_memory(struct kvm_vcpu *vcpu, void __user *argp)
{
	struct kvm_pre_fault_memory range;
	long ret;

	if (copy_from_user(&range, argp, sizeof(range)))
		return -EFAULT;
	ret = pre_fault_check(&range);
	if (ret)
		return ret;

	ret = __pre_fault_memory(vcpu, &range);
	if (copy_to_user(argp, &range, sizeof(range)))
		return -EFAULT;
	return ret;
}
