// SPDX-License-Identifier: GPL-2.0-only
/*
 * prefetch_dispatch.cocci must accept this kvm_mmu_do_page_fault(): one
 * dispatch site, after a RET_PF_FIXED check, and KVM_PREFETCH_AUTO only
 * compared against.
 */
#include "mmu_internal.h"

static inline int kvm_mmu_do_page_fault(struct kvm_vcpu *vcpu, gpa_t cr2_or_gpa,
					u32 err,
					enum kvm_prefetch_type prefetch_type,
					int *emulation_type, u8 *level)
{
	struct kvm_page_fault fault = {
		.addr = cr2_or_gpa,
		.error_code = err,
		.prefetch_type = prefetch_type,
		.prefetch = prefetch_type != KVM_PREFETCH_GUEST_FAULT,
	};
	int r;

	r = kvm_mmu_page_fault_body(vcpu, &fault);
	if (level)
		*level = fault.goal_level;

	/* The single dispatch site of prefetch policies. */
	if (r == RET_PF_FIXED && prefetch_type != KVM_PREFETCH_AUTO)
		kvm_mmu_prefetch(vcpu, &fault);
	return r;
}

static int kvm_faultin_pfn(struct kvm_vcpu *vcpu, struct kvm_page_fault *fault)
{
	if (fault->prefetch_type == KVM_PREFETCH_AUTO)
		return kvm_mmu_prefetch_faultin_pfn(vcpu, fault);
	return kvm_faultin_pfn_slow(vcpu, fault);
}

static const char *origin_name(const struct kvm_page_fault *fault)
{
	switch (fault->prefetch_type) {
	case KVM_PREFETCH_GUEST_FAULT:
		return "guest";
	case KVM_PREFETCH_AUTO:
		return "prefetch";
	default:
		return "other";
	}
}

static bool policy_wants(const struct kvm_prefetch_fault *f)
{
	return BIT(f->origin) & ~BIT(KVM_PREFETCH_AUTO);
}
