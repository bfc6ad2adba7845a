// SPDX-License-Identifier: GPL-2.0-only
/*
 * kvm-prefetch-adaptive: the stream logic (adaptive_logic.h, shared with
 * the BPF policy), a pure function of the fault stream (no locking, no
 * KVM), so the unit tests can drive it directly.
 */
#include "adaptive.h"

/**
 * adaptive_stream_window() - learn from a fault and pick the window to map
 * @s: the vCPU's stream
 * @f: the fault
 * @max: the VM's nr_pages
 * @w: the window, filled in if the function returns true
 *
 * Every origin feeds the stream: with async #PF the first fault of a
 * userfaultfd chunk reaches the policy as its completion (ASYNC), not as
 * a guest fault, and it is the fault that matters most.
 *
 * Return: true if @w should be prefetched.
 */
bool adaptive_stream_window(struct adaptive_stream *s,
			    const struct kvm_prefetch_fault *f, u32 max,
			    struct kvm_prefetch_window *w)
{
	return adaptive_logic(s, f->gfn, f->mapped_pages ? f->mapped_pages : 1,
			      max, w);
}
