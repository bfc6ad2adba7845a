/* SPDX-License-Identifier: GPL-2.0-only */
/* kvm-prefetch-adaptive: the stream logic, shared with the unit tests. */
#ifndef __KVM_PREFETCH_ADAPTIVE_H
#define __KVM_PREFETCH_ADAPTIVE_H

#include <linux/kvm_prefetch.h>
#include <linux/compiler.h>
#include <linux/types.h>

#define ADAPTIVE_STREAMS	64	/* per VM; vCPUs beyond share */
/*
 * The most the window grows to unless the VMM caps it: 2 MiB, the largest
 * chunk restore handlers populate at once and the size of a huge page, so
 * one fault per chunk is reachable without anyone knowing the chunk size.
 */
#define ADAPTIVE_MAX_PAGES	512

#define ADAPTIVE_ALIGNED_WINDOW(gfn, mapped, nr, w) \
	kvm_prefetch_aligned_window(gfn, mapped, nr, w)
#include "adaptive_logic.h"

bool adaptive_stream_window(struct adaptive_stream *s,
			    const struct kvm_prefetch_fault *f, u32 max,
			    struct kvm_prefetch_window *w);

#endif /* __KVM_PREFETCH_ADAPTIVE_H */
