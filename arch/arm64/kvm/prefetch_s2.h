/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The arm64 prefetch engine (prefetch.c), as user_mem_abort() calls it.
 */
#ifndef __ARM64_KVM_PREFETCH_S2_H
#define __ARM64_KVM_PREFETCH_S2_H

#include <linux/kvm_host.h>
#include <kvm/prefetch.h>

#ifdef CONFIG_KVM_GENERIC_PREFETCH
/* user_mem_abort() for a translation fault (mmu.c, hook patch 0005) */
int kvm_arm_user_mem_abort(struct kvm_vcpu *vcpu, phys_addr_t fault_ipa,
			   struct kvm_memory_slot *memslot, unsigned long hva);
void kvm_arm_prefetch(struct kvm_vcpu *vcpu, struct kvm_memory_slot *slot,
		      unsigned long mapped_size, unsigned long mmu_seq);
#else
static inline void kvm_arm_prefetch(struct kvm_vcpu *vcpu,
				    struct kvm_memory_slot *slot,
				    unsigned long mapped_size,
				    unsigned long mmu_seq) {}
#endif

#endif /* __ARM64_KVM_PREFETCH_S2_H */
