// SPDX-License-Identifier: GPL-2.0
/*
 * Must not load: its window() writes 4 bytes past the window's nr_pages
 * (tests/vm/prefetch_bpf).
 */
#include "kvm_prefetch.bpf.h"

char _license[] SEC("license") = "GPL";

SEC("struct_ops/window")
bool BPF_PROG(bad_oob_window, const struct kvm_prefetch_state *st,
	      const struct kvm_prefetch_fault *f, struct kvm_prefetch_window *w)
{
	*(__u32 *)((char *)&w->nr_pages + 4) = 1;
	return false;
}

SEC(".struct_ops.link")
struct kvm_prefetch_ops bad_oob = {
	.window	= (void *)bad_oob_window,
	.name	= "bad_oob",
};
