/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The stage-2 calls of the arm64 engine (prefetch.c, pre_fault.c) whose
 * names or signatures differ between the base kernels, as Linux 6.1 has
 * them.
 */
#ifndef __ARM64_KVM_PREFETCH_S2_BASE_H
#define __ARM64_KVM_PREFETCH_S2_BASE_H

#include <linux/kvm_host.h>
#include <asm/cpufeature.h>
#include <asm/kvm_mmu.h>
#include <asm/kvm_pgtable.h>

/* A stage-2 level, as kvm_pgtable_get_leaf() gives it. */
typedef u32 prefetch_s2_level_t;
/* The level of a 4 KiB page's entry. */
#define PREFETCH_S2_LAST_LEVEL	(KVM_PGTABLE_MAX_LEVELS - 1)

/* Map under mmu_lock held for write. */
static inline int prefetch_s2_map(struct kvm_pgtable *pgt, u64 addr, u64 size,
				  u64 phys, enum kvm_pgtable_prot prot,
				  struct kvm_mmu_memory_cache *mc)
{
	return kvm_pgtable_stage2_map(pgt, addr, size, phys, prot, mc);
}

#define prefetch_s2_cache_min_pages(kvm)	kvm_mmu_cache_min_pages(kvm)
#define prefetch_s2_phys_size(kvm)		kvm_phys_size(kvm)
#define prefetch_s2_have_dic()	cpus_have_const_cap(ARM64_HAS_CACHE_DIC)
/* A page mapped writable: stage 2 has no dirty bit. */
#define prefetch_s2_set_pfn_dirty(pfn)		kvm_set_pfn_dirty(pfn)
/* arm.c's kvm_vcpu_initialized(), which is static there */
#define prefetch_s2_vcpu_initialized(vcpu)	((vcpu)->arch.target >= 0)
/* HPFAR_EL2 of a stage-2 fault at @ipa */
#define prefetch_s2_hpfar(ipa)			(((ipa) >> 12) << 4)

/* 6.1 has no nested stage 2 and no guest_memfd. */
static inline bool prefetch_s2_mmu_canonical(struct kvm_vcpu *vcpu)
{
	return true;
}

static inline bool prefetch_s2_slot_gmem(struct kvm_memory_slot *slot)
{
	return false;
}

#endif /* __ARM64_KVM_PREFETCH_S2_BASE_H */
