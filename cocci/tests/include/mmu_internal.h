/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * A stand-in for Debian's arch/x86/kvm/mmu/mmu_internal.h as the hook
 * series patches it: only what spatch needs to know the types in the
 * fixtures (the rules that run with --no-includes need none of it, and
 * RET_PF_* are plain identifiers to it).  Fixtures are parsed, never
 * compiled; what is ours they take from the real headers in include/.
 */
#ifndef __COCCI_MMU_INTERNAL_H
#define __COCCI_MMU_INTERNAL_H

#include <kvm/prefetch.h>

/* The fields the dispatch and origin fixtures use. */
struct kvm_page_fault {
	const gpa_t addr;
	const u32 error_code;
	const enum kvm_prefetch_type prefetch_type;
	const bool prefetch;
	u8 goal_level;
};

int kvm_tdp_page_fault(struct kvm_vcpu *vcpu, struct kvm_page_fault *fault);
int kvm_mmu_do_page_fault(struct kvm_vcpu *vcpu, gpa_t cr2_or_gpa, u32 err,
			  enum kvm_prefetch_type prefetch_type,
			  int *emulation_type, u8 *level);
void kvm_mmu_prefetch(struct kvm_vcpu *vcpu, struct kvm_page_fault *fault);
int kvm_mmu_prefetch_faultin_pfn(struct kvm_vcpu *vcpu,
				 struct kvm_page_fault *fault);

#endif /* __COCCI_MMU_INTERNAL_H */
