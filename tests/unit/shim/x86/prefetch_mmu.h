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

static inline bool kvm_mmu_prefetch_private(struct kvm *kvm, gfn_t gfn)
{
	return x86_sim_gfn_ok(gfn, "kvm_mmu_prefetch_private") &&
	       x86_sim.private_mem[gfn];
}
