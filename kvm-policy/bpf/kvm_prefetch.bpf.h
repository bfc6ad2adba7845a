/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What a BPF prefetch policy sees of kvm.ko: the struct_ops type
 * kvm_prefetch_ops (<linux/kvm_prefetch.h>) and the structs its hooks
 * take.  The fields are relocated against kvm.ko's BTF when the object
 * is loaded (CO-RE), so only the fields a policy reads need to be here,
 * in any order.  The type is no stable ABI: it follows the kernel's
 * struct kvm_prefetch_ops.  KVM_SET_PREFETCH_POLICY and the parameters
 * are the stable interface.
 */
#ifndef __KVM_PREFETCH_BPF_H
#define __KVM_PREFETCH_BPF_H

#include <linux/types.h>
#include <linux/bpf.h>
#include <stdbool.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#define KVM_PREFETCH_POLICY_NAME_MAX	16
#define KVM_PREFETCH_MAX_PAGES		262144

enum kvm_prefetch_type {
	KVM_PREFETCH_GUEST_FAULT,
	KVM_PREFETCH_MANUAL,
	KVM_PREFETCH_ASYNC,
	KVM_PREFETCH_AUTO,
};

struct kvm;

struct kvm_prefetch_fault {
	enum kvm_prefetch_type origin;
	__u64 gfn;
	__u64 error_code;
	__u32 mapped_pages;
	unsigned int vcpu_idx;
} __attribute__((preserve_access_index));

struct kvm_prefetch_window {
	__u64 start;
	__u32 nr_pages;
} __attribute__((preserve_access_index));

struct kvm_prefetch_state {
	struct kvm *kvm;
	__u32 nr_pages;
	__u32 gup;
} __attribute__((preserve_access_index));

/* Matched member by member, by name, against kvm.ko's type. */
struct kvm_prefetch_ops {
	bool (*window)(const struct kvm_prefetch_state *st,
		       const struct kvm_prefetch_fault *f,
		       struct kvm_prefetch_window *w);
	int (*init)(struct kvm_prefetch_state *st);
	void (*release)(struct kvm_prefetch_state *st);
	__u32 default_nr_pages;
	char name[KVM_PREFETCH_POLICY_NAME_MAX];
};

/* The largest power of two not above @n (n >= 1, n <= 2^18). */
static __always_inline __u64 kp_rounddown_pow2(__u64 n)
{
	__u64 p = 1;
	int i;

	for (i = 0; i < 18; i++)
		if (p << 1 <= n)
			p <<= 1;
	return p;
}

/*
 * The built-in policies' window (kvm_prefetch_aligned_window()): @nr
 * pages starting at @gfn aligned down to the largest power of two not
 * above @nr; false if the fault's own mapping already covers it.
 */
static __always_inline bool kp_aligned_window(__u64 gfn, __u32 mapped_pages,
					      __u32 nr,
					      struct kvm_prefetch_window *w)
{
	__u64 mapped_start = gfn & ~((__u64)mapped_pages - 1);
	__u64 start;

	if (nr > KVM_PREFETCH_MAX_PAGES)
		nr = KVM_PREFETCH_MAX_PAGES;
	if (nr <= 1)
		return false;
	start = gfn & ~(kp_rounddown_pow2(nr) - 1);
	if (mapped_start <= start &&
	    start + nr <= mapped_start + mapped_pages)
		return false;
	w->start = start;
	w->nr_pages = nr;
	return true;
}

#endif /* __KVM_PREFETCH_BPF_H */
