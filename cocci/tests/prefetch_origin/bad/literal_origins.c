// SPDX-License-Identifier: GPL-2.0-only
/*
 * prefetch_origin.cocci must report each line that ends in an
 * expect-warning comment: origins given as bool or integer literals,
 * comparisons and values of other types.
 */
#include "mmu_internal.h"

void kvm_arch_async_page_ready(struct kvm_vcpu *vcpu, struct kvm_async_pf *work)
{
	kvm_mmu_do_page_fault(vcpu, work->cr2_or_gpa, 0, true, NULL, NULL); /* expect-warning */
}

int guest_fault(struct kvm_vcpu *vcpu, gpa_t gpa, u64 error_code, int *emul)
{
	return kvm_mmu_do_page_fault(vcpu, gpa, error_code, false, emul, NULL); /* expect-warning */
}

int other_origins(struct kvm_vcpu *vcpu, struct kvm_page_fault *fault,
		  bool manual, u8 *level)
{
	enum kvm_prefetch_type type = fault->prefetch_type;
	int r;

	r = kvm_mmu_do_page_fault(vcpu, 0, 0, 0, NULL, level); /* expect-warning */
	r = kvm_mmu_do_page_fault(vcpu, 0, 0, 3, NULL, level); /* expect-warning */
	r = kvm_mmu_do_page_fault(vcpu, 0, 0, manual, NULL, level); /* expect-warning */
	r = kvm_mmu_do_page_fault(vcpu, 0, 0, fault->prefetch, NULL, level); /* expect-warning */
	r = kvm_mmu_do_page_fault(vcpu, 0, 0, /* expect-warning */
				  type == KVM_PREFETCH_MANUAL, NULL, level);
	r = kvm_mmu_do_page_fault(vcpu, 0, 0, !type, NULL, level); /* expect-warning */
	r = kvm_mmu_do_page_fault(vcpu, 0, 0, /* expect-warning */
				  KVM_PREFETCH_GUP_NOFAULT, NULL, level);
	return r;
}
