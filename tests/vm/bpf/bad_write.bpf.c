// SPDX-License-Identifier: GPL-2.0
/*
 * Must not load: its window() writes the fault it is given, which the
 * kvm_prefetch_ops verifier allows for struct kvm_prefetch_window only
 * (tests/vm/prefetch_bpf).  bad_oob.bpf.c writes past the window.
 */
#include "kvm_prefetch.bpf.h"

char _license[] SEC("license") = "GPL";

SEC("struct_ops/window")
bool BPF_PROG(bad_write_window, const struct kvm_prefetch_state *st,
	      struct kvm_prefetch_fault *f, struct kvm_prefetch_window *w)
{
	f->gfn = 0;
	return false;
}

SEC(".struct_ops.link")
struct kvm_prefetch_ops bad_write = {
	.window	= (void *)bad_write_window,
	.name	= "bad_write",
};
