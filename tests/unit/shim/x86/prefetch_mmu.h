/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The engine's per-base "prefetch_mmu.h" (arch/x86/<base>/kvm/mmu/), as
 * the simulated MMU of kvm_x86.h answers it.
 */
#ifndef __SHIM_KVM_X86_H
#error "include the shim's x86/kvm_x86.h first"
#endif

/* The real engine's, for the batch below: kvm_mmu_prefetch_max_level(). */
#include "../../../../arch/x86/kvm/mmu/prefetch_batch.h"

/*
 * The vCPU's batch, of which the engine uses only the back-off record
 * that starts it: a test's setup points vcpu.arch.prefetch_batch here,
 * cleared.
 */
static struct kvm_prefetch_backoff x86_sim_backoff;
#define X86_SIM_BATCH	((struct kvm_prefetch_batch *)&x86_sim_backoff)

static inline bool kvm_mmu_prefetch_tdp_mmu(struct kvm_vcpu *vcpu)
{
	return is_tdp_mmu(vcpu->arch.mmu);
}

static inline bool kvm_mmu_prefetch_tdp_mmu_vm(struct kvm *kvm)
{
	return !x86_sim.legacy_mmu;
}

/* As the bases before 7.3 have it (prefetch_fault.h). */
static inline int kvm_mmu_prefetch_auto_fault(struct kvm_vcpu *vcpu, gfn_t gfn,
					      u8 *level)
{
	return kvm_mmu_do_page_fault(vcpu, gfn_to_gpa(gfn), 0, KVM_PREFETCH_AUTO,
				     NULL, level);
}

static inline void kvm_mmu_prefetch_fault_page(struct kvm_page_fault *fault,
					       hva_t hva)
{
	fault->hva = hva;
}

/* 6.1 has no memslot that only guest_memfd backs. */
static inline bool kvm_mmu_prefetch_gmem_only(const struct kvm_memory_slot *slot)
{
	return false;
}

static inline int kvm_mmu_prefetch_gmem_faultin(struct kvm_vcpu *vcpu,
						struct kvm_page_fault *fault)
{
	return RET_PF_RETRY;
}

static inline bool kvm_mmu_prefetch_private(struct kvm *kvm, gfn_t gfn)
{
	return x86_sim_gfn_ok(gfn, "kvm_mmu_prefetch_private") &&
	       x86_sim.private_mem[gfn];
}

/*
 * The batched engine walks real page tables and is tested in the guest
 * (tests/vm/, with both engines).  Here it maps as the fault path would,
 * up to x86_sim.batch_until (a test's setting, none by default): each
 * page at the host's level, at most at the largest level whose block lies
 * in the window [@start, @end) and holds nothing mapped; it stops where
 * the host does not have a page, leaving the rest to the per-page engine,
 * whose window walk these tests check.  Like the real one it does one
 * batch of at most 64 gfns (and @max) per call, and charges the leaves
 * it found mapped or mapped.
 */
u64 kvm_mmu_prefetch_batch(struct kvm_vcpu *vcpu, u64 start, u64 gfn,
			   u64 end, u32 max, u64 *mapped, u32 *scanned)
{
	u64 until = min_t(u64, end, x86_sim.batch_until), pages;
	u32 leaves = 0;
	int level;

	if (!max)
		shim_violation(__FILE__, __LINE__, "batch with no budget left");
	until = min_t(u64, until, gfn + min_t(u32, 64, max));

	x86_sim.batch_calls++;
	if (gfn < start || gfn >= end)
		shim_violation(__FILE__, __LINE__,
			       "batch at %#llx, outside [%#llx, %#llx)",
			       (unsigned long long)gfn,
			       (unsigned long long)start,
			       (unsigned long long)end);
	while (gfn < until && x86_sim_gfn_ok(gfn, "batch")) {
		level = x86_sim.mapped[gfn];
		if (!level) {
			if (!x86_sim.host[gfn] || x86_sim.private_mem[gfn])
				break;
			level = min_t(int, x86_sim.host[gfn],
				    kvm_mmu_prefetch_max_level(gfn, start, end));
			while (level > PG_LEVEL_4K &&
			       x86_sim_block_used(gfn, level))
				level--;
			pages = KVM_PAGES_PER_HPAGE(level);
			x86_sim_map(gfn, level);
			*mapped += pages;
			x86_sim.batch_mapped += pages;
		}
		gfn = ALIGN_DOWN(gfn, KVM_PAGES_PER_HPAGE(level)) +
		      KVM_PAGES_PER_HPAGE(level);
		leaves++;
	}
	*scanned += leaves;
	return gfn;
}

/* The real one marks the vCPU; here the tests check it is balanced. */
void kvm_mmu_prefetch_window(struct kvm_vcpu *vcpu, bool open)
{
	x86_sim.window_open += open ? 1 : -1;
}
