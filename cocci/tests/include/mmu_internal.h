/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * A stand-in for Debian's arch/x86/kvm/mmu/mmu_internal.h as the hook
 * series patches it: only the declarations the fixtures use, so that
 * spatch knows their types.  Fixtures are parsed, never compiled; what is
 * ours they take from the real headers in include/ of the repository.
 */
#ifndef __COCCI_MMU_INTERNAL_H
#define __COCCI_MMU_INTERNAL_H

#include <kvm/prefetch.h>

struct kvm_page_fault {
	const gpa_t addr;
	const u32 error_code;
	const enum kvm_prefetch_type prefetch_type;
	const bool prefetch;
	const bool write;
	u8 goal_level;
	gfn_t gfn;
	struct kvm_memory_slot *slot;
	kvm_pfn_t pfn;
	hva_t hva;
	bool map_writable;
};

enum {
	RET_PF_CONTINUE = 0,
	RET_PF_RETRY,
	RET_PF_EMULATE,
	RET_PF_INVALID,
	RET_PF_FIXED,
	RET_PF_SPURIOUS,
};

int kvm_tdp_page_fault(struct kvm_vcpu *vcpu, struct kvm_page_fault *fault);
int kvm_mmu_do_page_fault(struct kvm_vcpu *vcpu, gpa_t cr2_or_gpa, u32 err,
			  enum kvm_prefetch_type prefetch_type,
			  int *emulation_type, u8 *level);
void kvm_mmu_prefetch(struct kvm_vcpu *vcpu, struct kvm_page_fault *fault);
int kvm_mmu_prefetch_faultin_pfn(struct kvm_vcpu *vcpu,
				 struct kvm_page_fault *fault);

#endif /* __COCCI_MMU_INTERNAL_H */
