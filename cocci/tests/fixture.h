/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The few declarations the fixtures need from the kernel and from
 * <linux/kvm_prefetch.h>, so that spatch knows their types (fixtures are
 * parsed, never compiled).
 */
#ifndef __COCCI_FIXTURE_H
#define __COCCI_FIXTURE_H

enum kvm_prefetch_type {
	KVM_PREFETCH_NONE,
	KVM_PREFETCH_MANUAL,
	KVM_PREFETCH_ASYNC,
	KVM_PREFETCH_AUTO,
};

#define KVM_PREFETCH_GUP_NOFAULT	1

struct kvm_page_fault {
	const gpa_t addr;
	const u32 error_code;
	const enum kvm_prefetch_type prefetch_type;
	const bool prefetch;
	gfn_t gfn;
	struct kvm_memory_slot *slot;
	kvm_pfn_t pfn;
	hva_t hva;
	bool write;
	bool map_writable;
};

struct kvm_prefetch_fault {
	enum kvm_prefetch_type origin;
	u64 gfn;
};

struct kvm_prefetch_window {
	u64 start;
	u32 nr_pages;
};

struct kvm_prefetch_state {
	const struct kvm_prefetch_ops *ops;
	void *priv;
	u32 nr_pages;
};

struct kvm_prefetch_ops {
	bool (*window)(const struct kvm_prefetch_state *st,
		       const struct kvm_prefetch_fault *f,
		       struct kvm_prefetch_window *w);
	int (*init)(struct kvm_prefetch_state *st);
	void (*release)(struct kvm_prefetch_state *st);
	char name[16];
	struct module *owner;
};

int kvm_mmu_do_page_fault(struct kvm_vcpu *vcpu, gpa_t cr2_or_gpa, u32 err,
			  enum kvm_prefetch_type prefetch_type,
			  int *emulation_type, u8 *level);
void kvm_mmu_prefetch(struct kvm_vcpu *vcpu, struct kvm_page_fault *fault);
int kvm_prefetch_register(struct kvm_prefetch_ops *ops);
void kvm_prefetch_unregister(struct kvm_prefetch_ops *ops);

#endif /* __COCCI_FIXTURE_H */
