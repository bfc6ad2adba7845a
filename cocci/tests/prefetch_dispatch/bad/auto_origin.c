// SPDX-License-Identifier: GPL-2.0-only
/*
 * prefetch_dispatch.cocci must report each line that ends in an
 * expect-warning comment: KVM_PREFETCH_AUTO produced outside the engine
 * (arch/x86/kvm/mmu/prefetch.c).
 */
#include "mmu_internal.h"

static const enum kvm_prefetch_type default_origin = KVM_PREFETCH_AUTO; /* expect-warning */

static enum kvm_prefetch_type origin_of(bool prefetch)
{
	return prefetch ? KVM_PREFETCH_AUTO : KVM_PREFETCH_GUEST_FAULT; /* expect-warning */
}

int kvm_mmu_prefault_neighbour(struct kvm_vcpu *vcpu, gpa_t gpa, u8 *level)
{
	enum kvm_prefetch_type type;

	type = KVM_PREFETCH_AUTO; /* expect-warning */
	kvm_mmu_do_page_fault(vcpu, gpa, 0, type, NULL, level);
	return kvm_mmu_do_page_fault(vcpu, gpa + 4096, 0, KVM_PREFETCH_AUTO, /* expect-warning */
				     NULL, level);
}

int tdp_page_fault_direct(struct kvm_vcpu *vcpu, gpa_t gpa)
{
	struct kvm_page_fault fault = {
		.addr = gpa,
		.prefetch_type = KVM_PREFETCH_AUTO, /* expect-warning */
	};

	return kvm_tdp_page_fault(vcpu, &fault);
}
