// SPDX-License-Identifier: GPL-2.0-only
/*
 * prefetch_dispatch.cocci must report each line that ends in an
 * expect-warning comment: the engine run without a RET_PF_FIXED check,
 * from a second site, or from outside kvm_mmu_do_page_fault().
 */
#include "mmu_internal.h"

static inline int kvm_mmu_do_page_fault(struct kvm_vcpu *vcpu, gpa_t cr2_or_gpa,
					u32 err,
					enum kvm_prefetch_type prefetch_type,
					int *emulation_type, u8 *level)
{
	struct kvm_page_fault fault = { .addr = cr2_or_gpa };
	int r = kvm_mmu_page_fault_body(vcpu, &fault);

	if (r == RET_PF_FIXED && prefetch_type != KVM_PREFETCH_AUTO)
		kvm_mmu_prefetch(vcpu, &fault);
	if (r == RET_PF_FIXED)
		kvm_mmu_prefetch(vcpu, &fault); /* expect-warning */
	if (r == RET_PF_RETRY)
		kvm_mmu_prefetch(vcpu, &fault); /* expect-warning */
	kvm_mmu_prefetch(vcpu, &fault); /* expect-warning */
	return r;
}

void kvm_arch_async_page_ready(struct kvm_vcpu *vcpu, struct kvm_page_fault *fault)
{
	kvm_mmu_prefetch(vcpu, fault); /* expect-warning */
}
