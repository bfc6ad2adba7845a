/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The architecture's hooks, answering as control.h's switches say.  Tests
 * of the x86 engine (arch/x86/kvm/mmu/prefetch.c) define SHIM_X86_ENGINE
 * and get the engine's own hooks instead.
 */
#ifndef __SHIM_ARCH_FAKE_H
#define __SHIM_ARCH_FAKE_H

/* The architecture, as the tests want it to be. */
bool kvm_arch_prefetch_supported(struct kvm *kvm)
{
	return shim.arch_prefetch_supported;
}

long kvm_arch_vcpu_pre_fault_memory(struct kvm_vcpu *vcpu,
				    struct kvm_pre_fault_memory *range)
{
	if (!shim.arch_pre_fault)
		return -EOPNOTSUPP;
	return shim.arch_pre_fault(vcpu, range);
}

#endif /* __SHIM_ARCH_FAKE_H */
