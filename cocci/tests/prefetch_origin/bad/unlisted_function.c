// SPDX-License-Identifier: GPL-2.0-only
/*
 * prefetch_origin.cocci must report functions that take an enum
 * kvm_prefetch_type but are not in its ORIGIN_ARGS list (their callers
 * would go unchecked), and a listed function whose origin moved.
 */
int kvm_mmu_prefault_one(struct kvm_vcpu *vcpu, enum kvm_prefetch_type type); /* expect-warning */
int kvm_mmu_prefault_two(struct kvm_vcpu *vcpu, u64 gfn, enum kvm_prefetch_type); /* expect-warning */

static int prefault_three(struct kvm_vcpu *vcpu, enum kvm_prefetch_type type) /* expect-warning */
{
	return kvm_mmu_prefault_one(vcpu, type);
}

int kvm_mmu_do_page_fault(struct kvm_vcpu *vcpu, enum kvm_prefetch_type type, /* expect-warning */
			  gpa_t gpa, u32 err, int *emulation_type, u8 *level);
