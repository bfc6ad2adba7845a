// SPDX-License-Identifier: GPL-2.0-only
/*
 * KVM_PRE_FAULT_MEMORY on arm64's stage 2 (hook patch 0005: backported to
 * 6.1, added on 7.3): the architecture's part of the generic loop
 * kvm_vcpu_pre_fault_memory() (6.1: virt/kvm/pre_fault.c of the series;
 * 7.3: kvm_main.c's own).  One call maps the piece of guest memory at
 * range->gpa as the guest's own read of it would: user_mem_abort() with
 * vcpu->arch.fault set up as a stage-2 translation fault at level 3 on a
 * data read from EL1, then restored.  The fault path does everything a
 * guest fault does (GUP that may fault the page in, a THP block where the
 * host has one, write permission if the host gave the page writable),
 * and its prefetch hook runs with the origin KVM_PREFETCH_MANUAL
 * (vcpu->arch.pre_fault), so the manual, async and auto policies open
 * their window.  It is not a guest fault: pf_taken does not count it.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/kvm_host.h>
#include <linux/sched/signal.h>
#include <asm/esr.h>
#include <asm/kvm_arm.h>
#include <asm/kvm_mmu.h>
#include <asm/kvm_pgtable.h>
#include <kvm/prefetch.h>

#include "prefetch_s2.h"
#include "prefetch_s2_base.h"

/* A data abort from EL1: stage-2 translation fault, level 3, a read. */
#define PRE_FAULT_ESR	(((u64)ESR_ELx_EC_DABT_LOW << ESR_ELx_EC_SHIFT) | \
			 ESR_ELx_IL | ESR_ELx_FSC_FAULT | 3)

/*
 * Bytes from @ipa to the end of the stage-2 mapping that holds it, or 0
 * if it is not mapped.
 */
static u64 pre_fault_mapped(struct kvm_vcpu *vcpu, phys_addr_t ipa)
{
	struct kvm *kvm = vcpu->kvm;
	prefetch_s2_level_t level = 0;
	kvm_pte_t pte = 0;
	u64 size = 0;

	read_lock(&kvm->mmu_lock);
	if (!kvm_pgtable_get_leaf(vcpu->arch.hw_mmu->pgt, ipa, &pte, &level) &&
	    kvm_pte_valid(pte)) {
		size = kvm_granule_size(level);
		size -= ipa & (size - 1);
	}
	read_unlock(&kvm->mmu_lock);
	return size;
}

/**
 * kvm_arch_vcpu_pre_fault_memory() - map the piece of guest memory at
 * range->gpa
 * @vcpu: the vCPU, loaded, with kvm->srcu held (the generic loop)
 * @range: what is left of the user's range (gpa and size page-aligned)
 *
 * Return: the bytes from range->gpa that are mapped now (to the end of
 * the mapping that holds it; the loop clips nothing, so never more than
 * range->size), or -ENOEXEC (the vCPU has had no KVM_ARM_VCPU_INIT, as
 * for KVM_RUN), -ENOENT (no memslot there, or beyond the IPA space),
 * -EAGAIN (the memslot is being deleted or moved), -EOPNOTSUPP (no
 * prefetch engine for this VM), -EINTR (a signal while the fault path
 * retried) or the fault path's -errno.
 */
long kvm_arch_vcpu_pre_fault_memory(struct kvm_vcpu *vcpu,
				    struct kvm_pre_fault_memory *range)
{
	struct kvm_vcpu_fault_info saved = vcpu->arch.fault;
	phys_addr_t ipa = range->gpa;
	struct kvm *kvm = vcpu->kvm;
	struct kvm_memory_slot *slot;
	unsigned long hva;
	bool writable;
	u64 size;
	int ret;

	if (!kvm_arch_prefetch_supported(kvm))
		return -EOPNOTSUPP;
	if (!prefetch_s2_vcpu_initialized(vcpu))
		return -ENOEXEC;
	/* A vCPU in a nested guest: its stage 2 is not the VM's. */
	if (!prefetch_s2_mmu_canonical(vcpu))
		return -EOPNOTSUPP;
	if (ipa >= prefetch_s2_phys_size(kvm))
		return -ENOENT;
	slot = gfn_to_memslot(kvm, ipa >> PAGE_SHIFT);
	if (!slot)
		return -ENOENT;
	if (slot->flags & KVM_MEMSLOT_INVALID)
		return -EAGAIN;
	hva = gfn_to_hva_memslot_prot(slot, ipa >> PAGE_SHIFT, &writable);
	if (kvm_is_error_hva(hva))
		return -ENOENT;

	for (;;) {
		size = pre_fault_mapped(vcpu, ipa);
		if (size)
			break;
		if (signal_pending(current))
			return -EINTR;
		vcpu->arch.fault.esr_el2 = PRE_FAULT_ESR;
		vcpu->arch.fault.far_el2 = 0;
		vcpu->arch.fault.hpfar_el2 = prefetch_s2_hpfar(ipa);
		vcpu->arch.pre_fault = true;
		ret = kvm_arm_user_mem_abort(vcpu, ipa, slot, hva);
		vcpu->arch.pre_fault = false;
		vcpu->arch.fault = saved;
		if (ret < 0)
			return ret;
		/* 0: mapped, or an invalidation raced it and it is retried. */
		cond_resched();
	}
	return min(size, range->size);
}
