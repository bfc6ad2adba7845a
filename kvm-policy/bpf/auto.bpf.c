// SPDX-License-Identifier: GPL-2.0
/*
 * bpf_auto - the built-in "auto" policy, in BPF: after any fault (a guest
 * fault, an async #PF completion or KVM_PRE_FAULT_MEMORY), the VM's
 * nr_pages pages around it, aligned.  It opens the same windows as the
 * built-in one, so it takes the same faults and prefetches the same
 * pages (tests/vm/prefetch_bpf checks it).
 *
 *	kvm-prefetch bpf load auto.bpf.o	# registers "bpf_auto"
 */
#include "kvm_prefetch.bpf.h"

char _license[] SEC("license") = "GPL";

SEC("struct_ops/window")
bool BPF_PROG(bpf_auto_window, const struct kvm_prefetch_state *st,
	      const struct kvm_prefetch_fault *f, struct kvm_prefetch_window *w)
{
	if (f->origin > KVM_PREFETCH_ASYNC)
		return false;
	return kp_aligned_window(f->gfn, f->mapped_pages, st->nr_pages, w);
}

SEC(".struct_ops.link")
struct kvm_prefetch_ops bpf_auto = {
	.window	= (void *)bpf_auto_window,
	.name	= "bpf_auto",
};
