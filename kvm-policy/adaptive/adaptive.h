/* SPDX-License-Identifier: GPL-2.0-only */
/* kvm-prefetch-adaptive: the stream logic, shared with the unit tests. */
#ifndef __KVM_PREFETCH_ADAPTIVE_H
#define __KVM_PREFETCH_ADAPTIVE_H

#include <linux/kvm_prefetch.h>
#include <linux/minmax.h>
#include <linux/types.h>

#define ADAPTIVE_STREAMS	64	/* per VM; vCPUs beyond share */
#define ADAPTIVE_INIT_PAGES	4	/* first window of a stream */
#define ADAPTIVE_FULL_TO_GROW	4	/* full windows before growing past a chunk */
/*
 * The most the window grows to unless the VMM caps it: 2 MiB, the largest
 * chunk restore handlers populate at once and the size of a huge page, so
 * one fault per chunk is reachable without anyone knowing the chunk size.
 */
#define ADAPTIVE_MAX_PAGES	512

/*
 * One vCPU's access stream.  @last is the gfn of the last fault, @win_end
 * the end of the window it opened, @win the window size, @chunk the host
 * chunk size learnt from a window that stopped early (0 if none) and
 * @full the full windows seen since.
 */
struct adaptive_stream {
	u64 last;
	u64 win_end;
	u32 win;
	u32 chunk;
	u32 full;
};

u32 adaptive_next_size(u32 cur, u32 max);
bool adaptive_stream_window(struct adaptive_stream *s,
			    const struct kvm_prefetch_fault *f, u32 max,
			    struct kvm_prefetch_window *w);

#endif /* __KVM_PREFETCH_ADAPTIVE_H */
