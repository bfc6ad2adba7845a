/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The engine's per-base "prefetch_mmu.h" (arch/x86/<base>/kvm/mmu/), as
 * the simulated MMU of kvm_x86.h answers it.
 */
#ifndef __SHIM_KVM_X86_H
#error "include the shim's x86/kvm_x86.h first"
#endif

static inline bool kvm_mmu_prefetch_tdp_mmu(struct kvm_vcpu *vcpu)
{
	return is_tdp_mmu(vcpu->arch.mmu);
}

static inline bool kvm_mmu_prefetch_tdp_mmu_vm(struct kvm *kvm)
{
	return !x86_sim.legacy_mmu;
}

static inline bool kvm_mmu_prefetch_private(struct kvm *kvm, gfn_t gfn)
{
	return x86_sim_gfn_ok(gfn, "kvm_mmu_prefetch_private") &&
	       x86_sim.private_mem[gfn];
}

/*
 * The batched engine walks real page tables and is tested in the guest
 * (tests/vm/, with both engines).  Here it maps up to x86_sim.batch_until
 * (a test's setting, none by default) and leaves the rest to the per-page
 * engine, whose window walk these tests check.
 */
u64 kvm_mmu_prefetch_batch(struct kvm_vcpu *vcpu, u64 gfn, u64 end,
			   u64 *mapped)
{
	x86_sim.batch_calls++;
	if (gfn >= x86_sim.batch_until)
		return gfn;
	end = x86_sim.batch_until < end ? x86_sim.batch_until : end;
	*mapped += end - gfn;
	return end;
}
