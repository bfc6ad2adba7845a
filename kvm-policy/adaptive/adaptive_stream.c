// SPDX-License-Identifier: GPL-2.0-only
/*
 * kvm-prefetch-adaptive: the stream logic, a pure function of the fault
 * stream (no locking, no KVM), so the unit tests can drive it directly.
 */
#include "adaptive.h"

/**
 * adaptive_next_size() - the window after a full one (readahead's ramp)
 * @cur: the current window in pages
 * @max: the VM's nr_pages
 *
 * Return: the next window size, at most @max.
 */
u32 adaptive_next_size(u32 cur, u32 max)
{
	if (cur < max / 16)
		return cur * 4;
	if (cur <= max / 2)
		return cur * 2;
	return max;
}

/* Learn from a fault at @gfn; return the next window size (1: none). */
static u32 adaptive_stream_update(struct adaptive_stream *s, u64 gfn, u32 max)
{
	if (s->win && gfn == s->win_end) {
		/* The last window was used up: keep going, maybe bigger. */
		if (!s->chunk || s->win < s->chunk ||
		    ++s->full >= ADAPTIVE_FULL_TO_GROW) {
			s->win = adaptive_next_size(s->win, max);
			s->full = 0;
		}
	} else if (s->win && gfn > s->last && gfn < s->win_end) {
		/* Prefetch stopped at gfn: the host fills chunks this big. */
		s->chunk = gfn - s->last;
		s->win = s->chunk;
		s->full = 0;
	} else {
		/* A new stream, or random access. */
		s->win = ADAPTIVE_INIT_PAGES;
		s->chunk = 0;
		s->full = 0;
	}
	s->win = clamp_t(u32, s->win, 1, max);
	s->last = gfn;
	return s->win;
}

/**
 * adaptive_stream_window() - learn from a fault and pick the window to map
 * @s: the vCPU's stream
 * @f: the fault
 * @max: the VM's nr_pages
 * @w: the window, filled in if the function returns true
 *
 * The window is the core's aligned window of the stream's size; @s records
 * where it ends (or, without a window, where the fault's own mapping
 * ends), since a fault there means it was used up.
 *
 * Return: true if @w should be prefetched.
 */
bool adaptive_stream_window(struct adaptive_stream *s,
			    const struct kvm_prefetch_fault *f, u32 max,
			    struct kvm_prefetch_window *w)
{
	u32 nr_pages = adaptive_stream_update(s, f->gfn, max);
	u64 mapped = f->mapped_pages;

	if (kvm_prefetch_aligned_window(f->gfn, f->mapped_pages, nr_pages, w)) {
		s->win_end = w->start + w->nr_pages;
		return true;
	}
	s->win_end = (f->gfn & ~(mapped - 1)) + mapped;
	return false;
}
