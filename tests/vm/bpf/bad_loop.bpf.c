// SPDX-License-Identifier: GPL-2.0
/*
 * Must not load: its window() calls bpf_loop(), which the
 * kvm_prefetch_ops type refuses: window() runs in the vCPU's fault path
 * (tests/vm/prefetch_bpf).
 */
#include "kvm_prefetch.bpf.h"

char _license[] SEC("license") = "GPL";

static long bad_loop_step(__u32 i, void *ctx)
{
	return 0;
}

SEC("struct_ops/window")
bool BPF_PROG(bad_loop_window, const struct kvm_prefetch_state *st,
	      const struct kvm_prefetch_fault *f, struct kvm_prefetch_window *w)
{
	bpf_loop(1 << 20, bad_loop_step, NULL, 0);
	return false;
}

SEC(".struct_ops.link")
struct kvm_prefetch_ops bad_loop = {
	.window	= (void *)bad_loop_window,
	.name	= "bad_loop",
};
