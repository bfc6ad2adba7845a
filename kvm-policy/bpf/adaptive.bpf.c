// SPDX-License-Identifier: GPL-2.0
/*
 * bpf_adaptive - the adaptive policy (kvm-policy/adaptive/, module
 * kvm-prefetch-adaptive) as a BPF struct_ops policy: the same stream
 * logic, compiled from the same header (adaptive_logic.h), with one
 * stream per (VM, vCPU) in an LRU hash map instead of the module's
 * hashed table.
 *
 *	kvm-prefetch bpf load adaptive.bpf.o	# registers "bpf_adaptive"
 *
 * On a fault stream both give the same windows (tests/vm/prefetch_bpf.c
 * compares them), but for vCPUs past KP_ADAPTIVE_VCPUS, which open
 * nothing here.
 */
#include "kvm_prefetch.bpf.h"

typedef __u64 u64;
typedef __u32 u32;
typedef __s64 s64;

#define ADAPTIVE_ALIGNED_WINDOW(gfn, mapped, nr, w) \
	kp_aligned_window(gfn, mapped, nr, w)
#include "../adaptive/adaptive_logic.h"

char _license[] SEC("license") = "GPL";

#define KP_ADAPTIVE_VCPUS	64

struct kp_adaptive_key {
	__u64 kvm;
	__u32 vcpu;
	__u32 pad;
};

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 4096);
	__type(key, struct kp_adaptive_key);
	__type(value, struct adaptive_stream);
} kp_adaptive SEC(".maps");

SEC("struct_ops/window")
bool BPF_PROG(bpf_adaptive_window, const struct kvm_prefetch_state *st,
	      const struct kvm_prefetch_fault *f, struct kvm_prefetch_window *w)
{
	struct kp_adaptive_key key = {};
	struct adaptive_stream *s, fresh = {};
	__u32 nr = st->nr_pages, mapped = f->mapped_pages;

	if (f->origin == KVM_PREFETCH_AUTO || f->vcpu_idx >= KP_ADAPTIVE_VCPUS)
		return false;
	if (nr > KVM_PREFETCH_MAX_PAGES)
		nr = KVM_PREFETCH_MAX_PAGES;
	if (!mapped)
		mapped = 1;

	key.kvm = (__u64)st->kvm;
	key.vcpu = f->vcpu_idx;
	s = bpf_map_lookup_elem(&kp_adaptive, &key);
	if (!s) {
		bpf_map_update_elem(&kp_adaptive, &key, &fresh, BPF_ANY);
		s = bpf_map_lookup_elem(&kp_adaptive, &key);
		if (!s)
			return false;
	}
	return adaptive_logic(s, f->gfn, mapped, nr, w);
}

/* A new VM may reuse a gone one's address: forget its streams. */
SEC("struct_ops/init")
int BPF_PROG(bpf_adaptive_init, struct kvm_prefetch_state *st)
{
	struct kp_adaptive_key key = {};
	__u32 i;

	key.kvm = (__u64)st->kvm;
	for (i = 0; i < KP_ADAPTIVE_VCPUS; i++) {
		key.vcpu = i;
		bpf_map_delete_elem(&kp_adaptive, &key);
	}
	return 0;
}

SEC(".struct_ops.link")
struct kvm_prefetch_ops bpf_adaptive = {
	.window	= (void *)bpf_adaptive_window,
	.init	= (void *)bpf_adaptive_init,
	.default_nr_pages = 512,
	.name	= "bpf_adaptive",
};
