// SPDX-License-Identifier: GPL-2.0
/*
 * BPF policies that answer out of contract, for tests/vm/prefetch_bpf:
 * the verifier puts no range on an int or bool a struct_ops program
 * returns, so the engine's own checks are all that stands between them
 * and the host.
 *
 *	bpf_init1, bpf_init4096, bpf_init_m5000, bpf_init_min
 *		init() returns 1, 4096, -5000, INT_MIN: KVM_SET_PREFETCH_POLICY
 *		fails with EINVAL, a new VM with one as the default starts on
 *		none
 *	bpf_wrap	window() answers a window past gfn 2^64 - 1: ejected
 *	bpf_nowrite	window() returns true without writing the window
 */
#include "kvm_prefetch.bpf.h"

char _license[] SEC("license") = "GPL";

SEC("struct_ops/window")
bool BPF_PROG(hostile_no_window, const struct kvm_prefetch_state *st,
	      const struct kvm_prefetch_fault *f, struct kvm_prefetch_window *w)
{
	return false;
}

#define HOSTILE_INIT(fn, val)						\
SEC("struct_ops/init")							\
int BPF_PROG(fn, struct kvm_prefetch_state *st)			\
{									\
	return val;							\
}

HOSTILE_INIT(hostile_init1, 1)
HOSTILE_INIT(hostile_init4096, 4096)
HOSTILE_INIT(hostile_init_m5000, -5000)
HOSTILE_INIT(hostile_init_min, -2147483647 - 1)

SEC("struct_ops/window")
bool BPF_PROG(hostile_wrap_window, const struct kvm_prefetch_state *st,
	      const struct kvm_prefetch_fault *f, struct kvm_prefetch_window *w)
{
	w->start = ~0ULL - 3;
	w->nr_pages = 8;
	return true;
}

SEC("struct_ops/window")
bool BPF_PROG(hostile_nowrite_window, const struct kvm_prefetch_state *st,
	      const struct kvm_prefetch_fault *f, struct kvm_prefetch_window *w)
{
	return true;
}

SEC(".struct_ops.link")
struct kvm_prefetch_ops bpf_init1 = {
	.window	= (void *)hostile_no_window,
	.init	= (void *)hostile_init1,
	.name	= "bpf_init1",
};

SEC(".struct_ops.link")
struct kvm_prefetch_ops bpf_init4096 = {
	.window	= (void *)hostile_no_window,
	.init	= (void *)hostile_init4096,
	.name	= "bpf_init4096",
};

SEC(".struct_ops.link")
struct kvm_prefetch_ops bpf_init_m5000 = {
	.window	= (void *)hostile_no_window,
	.init	= (void *)hostile_init_m5000,
	.name	= "bpf_init_m5000",
};

SEC(".struct_ops.link")
struct kvm_prefetch_ops bpf_init_min = {
	.window	= (void *)hostile_no_window,
	.init	= (void *)hostile_init_min,
	.name	= "bpf_init_min",
};

SEC(".struct_ops.link")
struct kvm_prefetch_ops bpf_wrap = {
	.window	= (void *)hostile_wrap_window,
	.name	= "bpf_wrap",
};

SEC(".struct_ops.link")
struct kvm_prefetch_ops bpf_nowrite = {
	.window	= (void *)hostile_nowrite_window,
	.name	= "bpf_nowrite",
};
