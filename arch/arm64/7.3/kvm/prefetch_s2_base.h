/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The stage-2 calls of the arm64 engine (prefetch.c, pre_fault.c) whose
 * names or signatures differ between the base kernels, as Linux 7.3 has
 * them: levels are signed (LPA2's level -1), the page-table walker takes
 * walk flags, the memory cache and IPA size are the stage-2 MMU's, and
 * folios are marked dirty, not pfns.
 */
#ifndef __ARM64_KVM_PREFETCH_S2_BASE_H
#define __ARM64_KVM_PREFETCH_S2_BASE_H

#include <linux/bitfield.h>
#include <linux/kvm_host.h>
#include <linux/page-flags.h>
#include <asm/cpufeature.h>
#include <asm/kvm_mmu.h>
#include <asm/kvm_pgtable.h>
#include <asm/sysreg.h>

/* A stage-2 level, as kvm_pgtable_get_leaf() gives it. */
typedef s8 prefetch_s2_level_t;
/* The level of a 4 KiB page's entry. */
#define PREFETCH_S2_LAST_LEVEL	KVM_PGTABLE_LAST_LEVEL

/*
 * Map under mmu_lock held for write: an exclusive walk (no
 * KVM_PGTABLE_WALK_SHARED), with no fault path mapping beside it.
 */
static inline int prefetch_s2_map(struct kvm_pgtable *pgt, u64 addr, u64 size,
				  u64 phys, enum kvm_pgtable_prot prot,
				  struct kvm_mmu_memory_cache *mc)
{
	return kvm_pgtable_stage2_map(pgt, addr, size, phys, prot, mc, 0);
}

#define prefetch_s2_cache_min_pages(kvm)  kvm_mmu_cache_min_pages(&(kvm)->arch.mmu)
#define prefetch_s2_phys_size(kvm)	  kvm_phys_size(&(kvm)->arch.mmu)
#define prefetch_s2_have_dic()	cpus_have_final_cap(ARM64_HAS_CACHE_DIC)
#define prefetch_s2_vcpu_initialized(vcpu)	kvm_vcpu_initialized(vcpu)
/* HPFAR_EL2 of a stage-2 fault at @ipa (kvm_vcpu_get_fault_ipa()) */
#define prefetch_s2_hpfar(ipa)	(FIELD_PREP(HPFAR_EL2_FIPA, (ipa) >> 12) | \
				 HPFAR_EL2_NS)

/*
 * A page mapped writable: stage 2 has no dirty bit, so mark it dirty
 * now, as kvm_release_faultin_page() does for the fault's own page
 * (kvm_main.c's kvm_set_page_dirty(), which is static).
 */
static inline void prefetch_s2_set_pfn_dirty(kvm_pfn_t pfn)
{
	struct page *page = pfn_to_page(pfn);

	if (!PageReserved(page))
		SetPageDirty(page);
}

/* The vCPU runs on its VM's own stage 2, not a nested guest's shadow. */
static inline bool prefetch_s2_mmu_canonical(struct kvm_vcpu *vcpu)
{
	return !kvm_is_nested_s2_mmu(vcpu->kvm, vcpu->arch.hw_mmu);
}

/* Memory only guest_memfd holds: gmem_abort()'s, no GUP of its address. */
static inline bool prefetch_s2_slot_gmem(struct kvm_memory_slot *slot)
{
	return kvm_slot_has_gmem(slot);
}

#endif /* __ARM64_KVM_PREFETCH_S2_BASE_H */
