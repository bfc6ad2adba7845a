// SPDX-License-Identifier: GPL-2.0-only
/*
 * prefetch_origin.cocci must accept every origin here: enumerators and
 * values of type enum kvm_prefetch_type (locals, struct fields, function
 * results).  Functions that take the enum as a parameter are reported
 * unless listed in ORIGIN_ARGS, so none here does.
 */
#include "mmu_internal.h"

static enum kvm_prefetch_type pick_origin(bool manual)
{
	return manual ? KVM_PREFETCH_MANUAL : KVM_PREFETCH_GUEST_FAULT;
}

int all_origins(struct kvm_vcpu *vcpu, struct kvm_page_fault *fault,
		u8 *level)
{
	enum kvm_prefetch_type type = fault->prefetch_type;
	enum kvm_prefetch_type local = KVM_PREFETCH_ASYNC;
	int r;

	r = kvm_mmu_do_page_fault(vcpu, 0, 0, KVM_PREFETCH_GUEST_FAULT, NULL, level);
	r = kvm_mmu_do_page_fault(vcpu, 0, 0, KVM_PREFETCH_MANUAL, NULL, level);
	r = kvm_mmu_do_page_fault(vcpu, 0, 0, KVM_PREFETCH_ASYNC, NULL, level);
	r = kvm_mmu_do_page_fault(vcpu, 0, 0, KVM_PREFETCH_AUTO, NULL, level);
	r = kvm_mmu_do_page_fault(vcpu, 0, 0, type, NULL, level);
	r = kvm_mmu_do_page_fault(vcpu, 0, 0, local, NULL, level);
	r = kvm_mmu_do_page_fault(vcpu, 0, 0, fault->prefetch_type, NULL, level);
	r = kvm_mmu_do_page_fault(vcpu, 0, 0, pick_origin(r > 0), NULL, level);
	return r;
}
