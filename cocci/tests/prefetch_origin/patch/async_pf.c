// SPDX-License-Identifier: GPL-2.0-only
/*
 * prefetch_origin.cocci in patch mode: the bool origins of Debian's 6.1
 * callers become enumerators (async_pf.res is the expected result); a
 * true outside kvm_arch_async_page_ready() is ambiguous and stays.
 */
#include "mmu_internal.h"

void kvm_arch_async_page_ready(struct kvm_vcpu *vcpu, struct kvm_async_pf *work)
{
	kvm_mmu_do_page_fault(vcpu, work->cr2_or_gpa, 0, true, NULL, NULL);
}

int kvm_mmu_page_fault(struct kvm_vcpu *vcpu, gpa_t cr2_or_gpa, u64 error_code)
{
	int emulation_type = 0;

	return kvm_mmu_do_page_fault(vcpu, cr2_or_gpa, (u32)error_code, false,
				     &emulation_type, NULL);
}

int ambiguous(struct kvm_vcpu *vcpu, gpa_t gpa)
{
	return kvm_mmu_do_page_fault(vcpu, gpa, 0, true, NULL, NULL);
}
