// SPDX-License-Identifier: GPL-2.0-only
/*
 * prefetch_dispatch.cocci must accept KVM_PREFETCH_AUTO faults issued by
 * the engine (this file's path ends in arch/x86/kvm/mmu/prefetch.c).
 */
#include "mmu_internal.h"

static u64 prefetch_range(struct kvm_vcpu *vcpu, gfn_t start, gfn_t end)
{
	u64 mapped = 0;
	gfn_t gfn;
	u8 level;

	for (gfn = start; gfn < end; gfn++) {
		if (kvm_mmu_do_page_fault(vcpu, gfn_to_gpa(gfn), 0,
					  KVM_PREFETCH_AUTO, NULL,
					  &level) == RET_PF_FIXED)
			mapped++;
	}
	return mapped;
}
