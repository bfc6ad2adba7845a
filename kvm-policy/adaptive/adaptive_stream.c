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

/**
 * adaptive_stream_update() - learn from a fault and pick the next window
 * @s: the vCPU's stream
 * @gfn: the faulting gfn
 * @level_pages: pages the fault's own mapping spans
 * @max: the VM's nr_pages
 *
 * Return: the window size to prefetch with (0 or 1: none).  Also records
 * where that window starts and ends in @s.
 */
u32 adaptive_stream_update(struct adaptive_stream *s, u64 gfn,
			   u64 level_pages, u32 max)
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

	/* Where kvm_prefetch_aligned_window() will end the window. */
	if (s->win > level_pages)
		s->win_end = (gfn & ~((u64)rounddown_pow_of_two(s->win) - 1)) +
			     s->win;
	else
		s->win_end = (gfn & ~(level_pages - 1)) + level_pages;
	return s->win;
}
