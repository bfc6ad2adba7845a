/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * kvm-prefetch-adaptive: the stream logic, a pure function of one vCPU's
 * fault stream.  No locking, no allocation, no loop that is not bounded
 * by a constant: the same code builds into the module
 * (adaptive_stream.c), the userspace unit tests (tests/unit/
 * test_adaptive.c) and the BPF policy (kvm-policy/bpf/adaptive.bpf.c).
 *
 * The includer provides, before including this file:
 *   u64, u32, s64, bool, the struct kvm_prefetch_window type, and
 *   ADAPTIVE_ALIGNED_WINDOW(gfn, mapped_pages, nr, w): the core's aligned
 *   window (kvm_prefetch_aligned_window(), or kp_aligned_window() in BPF).
 *
 * The algorithm (see adaptive.c for the why):
 *
 *  - dense: a fault next to the last one (delta +-1 from the last fault's
 *    mapping), or at the end of the last dense window (forward: its end;
 *    backward: the page below its start), or inside it past the fault that
 *    opened it (the engine stopped there: the host did not have the page
 *    yet), is a hit.  The first hit opens a window of ADAPTIVE_INIT_PAGES,
 *    each further hit grows it (x4 while below max/4, then x2, up to the
 *    VM's nr_pages: readahead's ramp).  Forward the window is the core's
 *    aligned window (it holds the whole host chunk around a fault at the
 *    chunk's first page); backward it ends at the fault.
 *  - far jump while dense: a fault that is no hit.  With a window of at
 *    least ADAPTIVE_DENSE_PAGES (two hits seen) it opens the aligned
 *    window again at once, so in random chunk order the first fault of a
 *    chunk maps the whole chunk; the ADAPTIVE_PROBE_EVERY-th far jump
 *    opens nothing instead (a probe), and each probe that finds the
 *    stream still dense doubles the far jumps to the next one (up to
 *    ADAPTIVE_PROBE_MAX).  A smaller window drops to sparse.
 *  - probe: the fault after a probe decides: next to it (+-1) the stream
 *    is still dense; anywhere else the guest skips pages (a sparse touch
 *    that the windows were hiding) and the stream stops prefetching
 *    (window 0).
 *  - sparse: no window but for a stride.  The last ADAPTIVE_HIST deltas
 *    between faults are kept (Leap's history); a stride is the newest
 *    delta if it is seen twice in it, else a delta that is a majority (3
 *    of 4).  With a stride d (2 <= |d| <= nr_pages) the fault prefetches
 *    one page, gfn + d: the stream's next page and nothing in between,
 *    so no page is mapped that the stride does not touch.  The guest then
 *    skips that page and faults at gfn + 2d; the delta is taken from the
 *    prefetched page, so the stride stays d.
 */
#ifndef __KVM_PREFETCH_ADAPTIVE_LOGIC_H
#define __KVM_PREFETCH_ADAPTIVE_LOGIC_H

#define ADAPTIVE_HIST		4	/* deltas kept for the stride */
#define ADAPTIVE_INIT_PAGES	4	/* window after the first hit */
#define ADAPTIVE_DENSE_PAGES	16	/* far jumps open windows from here */
#define ADAPTIVE_PROBE_EVERY	4	/* far jumps to the first probe */
#define ADAPTIVE_PROBE_MAX	32	/* far jumps between probes, at most */
#define ADAPTIVE_EMPTY_MAX	2	/* empty windows before skipping */
#define ADAPTIVE_EMPTY_RETRY	8	/* then one window in this many */

/* What the last fault opened. */
enum {
	ADAPTIVE_NONE,		/* nothing (sparse, or the first fault) */
	ADAPTIVE_DENSE,		/* a dense window [lo, hi) */
	ADAPTIVE_STRIDE,	/* one page, at pref */
	ADAPTIVE_PROBE,		/* nothing, to see if the stream is dense */
};

/*
 * One vCPU's access stream.
 * @last: the last fault's gfn; @mlo, @mhi: that fault's own mapping
 * @lo, @hi: the last dense window as asked (before clipping)
 * @pref: the stride page the last fault prefetched
 * @hist: the last deltas, newest first (0: none yet)
 * @win: the dense window, 0 while the stream is not dense
 * @jumps: far jumps since the last probe
 * @gap: far jumps from one probe to the next
 * @empty: windows in a row that mapped nothing the stream wanted
 * @skipped: windows skipped since then
 * @dir: direction of the dense stream, 1 or -1
 * @kind: what the last fault opened (ADAPTIVE_*)
 * @valid: a fault has been seen
 */
struct adaptive_stream {
	u64 last, mlo, mhi;
	u64 lo, hi;
	u64 pref;
	s64 hist[ADAPTIVE_HIST];
	u32 win;
	u32 jumps;
	u32 gap;
	u32 empty;
	u32 skipped;
	int dir;
	u32 kind;
	u32 valid;
};

/* Readahead's ramp: the window after a hit, at most @max. */
static __always_inline u32 adaptive_next_size(u32 cur, u32 max)
{
	u32 n;

	if (!cur)
		n = ADAPTIVE_INIT_PAGES;
	else if (cur < max / 4)
		n = cur * 4;
	else
		n = cur * 2;
	return n < max ? n : max;
}

static __always_inline u32 adaptive_count(const struct adaptive_stream *s,
					  s64 d)
{
	return (s->hist[0] == d) + (s->hist[1] == d) + (s->hist[2] == d) +
	       (s->hist[3] == d);
}

/* The stream's stride from its history, 0 if none. */
static __always_inline s64 adaptive_stride(const struct adaptive_stream *s)
{
	if (s->hist[0] && adaptive_count(s, s->hist[0]) >= 2)
		return s->hist[0];
	if (s->hist[1] && adaptive_count(s, s->hist[1]) >= 3)
		return s->hist[1];
	if (s->hist[2] && adaptive_count(s, s->hist[2]) >= 3)
		return s->hist[2];
	return 0;
}

/*
 * adaptive_logic() - learn from a fault at @gfn whose own mapping spans
 * @mapped pages and fill in @w.  @max is the VM's nr_pages.
 * Return: true if @w should be prefetched.
 */
static __always_inline bool adaptive_logic(struct adaptive_stream *s, u64 gfn,
					   u32 mapped, u32 max,
					   struct kvm_prefetch_window *w)
{
	u64 mlo = gfn & ~((u64)mapped - 1), mhi = mlo + mapped, start;
	bool hit = false, far = false;
	s64 delta = 0, d;
	int dir = 1;

	if (!s->valid) {
		s->valid = 1;
		s->last = gfn;
		s->mlo = mlo;
		s->mhi = mhi;
		s->kind = ADAPTIVE_NONE;
		s->dir = 1;
		return false;
	}

	/* The distance from the last fault's mapping (from the stride page). */
	if (s->kind == ADAPTIVE_STRIDE && gfn != s->pref)
		delta = (s64)(gfn - s->pref);
	else if (gfn >= s->mhi)
		delta = (s64)(gfn - (s->mhi - 1));
	else if (gfn < s->mlo)
		delta = (s64)gfn - (s64)s->mlo;

	/*
	 * The last window mapped nothing where the stream went: the fault is
	 * its stride page, or right past the last fault's own mapping inside
	 * its dense window (the host had no page there, e.g. 4 KiB
	 * userfaultfd chunks).  A window costs an engine walk even when it
	 * maps nothing: after ADAPTIVE_EMPTY_MAX such windows in a row only
	 * one in ADAPTIVE_EMPTY_RETRY is opened, until one maps something.
	 */
	if ((s->kind == ADAPTIVE_STRIDE && gfn == s->pref) ||
	    (s->kind == ADAPTIVE_DENSE && gfn >= s->lo && gfn < s->hi &&
	     (gfn == s->mhi || gfn + 1 == s->mlo)))
		s->empty++;
	else if (s->kind == ADAPTIVE_STRIDE || s->kind == ADAPTIVE_DENSE)
		s->empty = 0;

	if (s->kind == ADAPTIVE_DENSE) {
		if (gfn == s->hi) {
			hit = true;
		} else if (gfn + 1 == s->lo) {
			hit = true;
			dir = -1;
		} else if (gfn >= s->lo && gfn < s->hi && gfn != s->last) {
			hit = true;	/* the engine stopped here */
			dir = s->dir;
		}
	}
	if (!hit && (delta == 1 || delta == -1)) {
		hit = true;
		dir = (int)delta;
	}

	if (hit) {
		if (!s->win)
			s->gap = ADAPTIVE_PROBE_EVERY;
		else if (s->kind == ADAPTIVE_PROBE && s->gap < ADAPTIVE_PROBE_MAX)
			s->gap *= 2;	/* dense again: probe less often */
		s->win = adaptive_next_size(s->win, max);
		s->dir = dir;
	} else if (s->kind == ADAPTIVE_PROBE) {
		s->win = 0;		/* the probe's neighbour went untouched */
	} else if (s->win) {
		far = true;
	}

	if (delta) {
		s->hist[3] = s->hist[2];
		s->hist[2] = s->hist[1];
		s->hist[1] = s->hist[0];
		s->hist[0] = delta;
	}
	s->last = gfn;
	s->mlo = mlo;
	s->mhi = mhi;
	s->kind = ADAPTIVE_NONE;

	if (s->win && far) {
		if (s->win < ADAPTIVE_DENSE_PAGES || s->win > max) {
			s->win = 0;	/* one hit is no stream yet */
		} else if (++s->jumps < s->gap) {
			s->dir = 1;	/* a chunk is entered at its start */
		} else {
			s->jumps = 0;
			s->kind = ADAPTIVE_PROBE;
			return false;
		}
	}

	if (s->empty >= ADAPTIVE_EMPTY_MAX &&
	    ++s->skipped % ADAPTIVE_EMPTY_RETRY)
		return false;

	if (s->win) {
		if (s->win > max)
			s->win = max;
		if (s->win <= 1)
			return false;
		if (s->dir > 0) {
			if (!ADAPTIVE_ALIGNED_WINDOW(gfn, mapped, s->win, w))
				return false;
		} else {
			start = mhi >= s->win ? mhi - s->win : 0;
			if (start >= mlo)
				return false;
			w->start = start;
			w->nr_pages = (u32)(mhi - start);
		}
		s->kind = ADAPTIVE_DENSE;
		s->lo = w->start;
		s->hi = w->start + w->nr_pages;
		if (s->hi < mhi)
			s->hi = mhi;
		return true;
	}

	d = adaptive_stride(s);
	if (d >= 2 && d <= (s64)max && gfn + (u64)d >= mhi) {
		start = gfn + (u64)d;
		if (start < gfn)
			return false;	/* past the last gfn */
	} else if (d <= -2 && -d <= (s64)max && gfn >= (u64)-d &&
		   gfn - (u64)-d < mlo) {
		start = gfn - (u64)-d;
	} else {
		return false;
	}
	s->kind = ADAPTIVE_STRIDE;
	s->pref = start;
	w->start = start;
	w->nr_pages = 1;
	return true;
}

#endif /* __KVM_PREFETCH_ADAPTIVE_LOGIC_H */
