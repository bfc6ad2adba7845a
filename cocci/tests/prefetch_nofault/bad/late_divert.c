// SPDX-License-Identifier: GPL-2.0-only
/*
 * prefetch_nofault.cocci must report each line that ends in an
 * expect-warning comment: kvm_faultin_pfn() doing a waiting lookup on a
 * path that has not yet diverted AUTO faults.
 */
#include "mmu_internal.h"

static int kvm_faultin_pfn(struct kvm_vcpu *vcpu, struct kvm_page_fault *fault)
{
	struct kvm_memory_slot *slot = fault->slot;
	bool async = false;

	if (!fault->prefetch)
		fault->pfn = __gfn_to_pfn_memslot(slot, fault->gfn, false, &async, /* expect-warning */
						  fault->write,
						  &fault->map_writable,
						  &fault->hva);

	if (fault->prefetch_type == KVM_PREFETCH_AUTO)
		return kvm_mmu_prefetch_faultin_pfn(vcpu, fault);

	fault->pfn = __gfn_to_pfn_memslot(slot, fault->gfn, false, NULL,
					  fault->write, &fault->map_writable,
					  &fault->hva);
	return RET_PF_CONTINUE;
}
