/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The reference model of record and replay (KVM_PREFETCH_ORDER, the
 * replay policy), shared by tests/vm/prefetch_replay.c (x86) and
 * tests/arm64/prefetch_replay.c: the touches of a recording, the order
 * the recording makes of them, and what the replay maps on each guest
 * fault.  Header only, as prefetch_model.h; needs <stdint.h>,
 * <string.h> and the uapi <linux/kvm.h> (KVM_PREFETCH_RUN*) first.
 */
#ifndef REPLAY_MODEL_H
#define REPLAY_MODEL_H

/* The most pages of the one memslot the model follows. */
#define REPLAY_MODEL_PAGES	2048

/* A xorshift step of *@state. */
static inline uint64_t replay_rnd(uint64_t *state)
{
	*state ^= *state << 13;
	*state ^= *state >> 7;
	*state ^= *state << 17;
	return *state;
}

/*
 * The touches of a recording of the @pages pages from @gfn0: a shuffled
 * order of pages, where every 8th touch goes on to the next 3 pages (a
 * run) and every 16th repeats an earlier page; @touches of them in @t.
 * @first gets the first-touch order (distinct), *@nfirst its length.
 * Seeds *@state and leaves it where the draws left it.
 */
static inline void replay_make_touches(uint64_t *state, uint64_t gfn0,
				       uint64_t pages, unsigned int touches,
				       uint64_t *t, uint64_t *first,
				       unsigned int *nfirst)
{
	static uint8_t seen[REPLAY_MODEL_PAGES];
	unsigned int i, k = 0, f = 0;

	memset(seen, 0, sizeof(seen));
	*state = 0x5eed5eedULL;
	for (i = 0; k < touches; i++) {
		uint64_t p = replay_rnd(state) % (pages - 4), j;
		unsigned int len = (i % 8 == 7) ? 4 : 1;

		if (i % 16 == 15 && f) {
			t[k++] = first[replay_rnd(state) % f];
			continue;
		}
		for (j = 0; j < len && k < touches; j++) {
			t[k++] = gfn0 + p + j;
			if (!seen[p + j]) {
				seen[p + j] = 1;
				first[f++] = gfn0 + p + j;
			}
		}
	}
	*nfirst = f;
}

/* Coalesce a first-touch order into runs, as the recording does. */
static inline uint64_t replay_to_runs(const uint64_t *first, unsigned int n,
				      uint64_t *runs)
{
	uint64_t nr = 0, i;

	for (i = 0; i < n; i++) {
		if (nr) {
			uint64_t g = KVM_PREFETCH_RUN_GFN(runs[nr - 1]);
			uint64_t p = KVM_PREFETCH_RUN_PAGES(runs[nr - 1]);

			if (g + p == first[i] && p < KVM_PREFETCH_RUN_MAX_PAGES) {
				runs[nr - 1] = KVM_PREFETCH_RUN(g, p + 1);
				continue;
			}
		}
		runs[nr++] = KVM_PREFETCH_RUN(first[i], 1);
	}
	return nr;
}

/* The replay of one memslot [base, base + npages), every host page present. */
struct replay_model {
	uint8_t mapped[REPLAY_MODEL_PAGES];
	uint64_t base, npages;
	uint64_t pos;		/* run << 12 | page within the run */
	uint64_t faults, prefetched;
	uint32_t budget;
};

/* A model of nothing mapped yet; npages at most REPLAY_MODEL_PAGES. */
static inline void replay_model_init(struct replay_model *m, uint64_t base,
				     uint64_t npages, uint32_t budget)
{
	memset(m, 0, sizeof(*m));
	m->base = base;
	m->npages = npages;
	m->budget = budget;
}

/*
 * One guest touch of @gfn (in the memslot): a fault if it is not mapped,
 * then the replay's windows from the position, one run (or what is left
 * of it) each, until the budget is spent.  next() is asked after every
 * window mapped through, also when the budget is spent (its answer then
 * dropped): the position moves past the exit's last window, and a run
 * the budget cut short is gone on with where the cut was.  A window lies
 * in the memslot of its start, if any.
 */
static inline void replay_model_touch(struct replay_model *m,
				      const uint64_t *runs, uint64_t nr,
				      uint64_t gfn)
{
	uint64_t used = 0, cursor = 0, last = 0, pos, idx, page, g, n, s, e;

	if (m->mapped[gfn - m->base])
		return;
	m->mapped[gfn - m->base] = 1;
	m->faults++;
	for (;;) {
		if (cursor) {
			idx = (cursor - 1) >> 12;
			page = ((cursor - 1) & 4095) + last;
			if (idx < nr && page >= KVM_PREFETCH_RUN_PAGES(runs[idx])) {
				idx++;
				page = 0;
			}
			pos = idx << 12 | page;
			if (m->pos < pos)
				m->pos = pos;
		} else {
			pos = m->pos;
		}
		idx = pos >> 12;
		page = pos & 4095;
		if (idx >= nr || page >= KVM_PREFETCH_RUN_PAGES(runs[idx]) ||
		    used >= m->budget)
			break;
		g = KVM_PREFETCH_RUN_GFN(runs[idx]) + page;
		n = KVM_PREFETCH_RUN_PAGES(runs[idx]) - page;
		cursor = pos + 1;
		if (n > m->budget - used)
			n = m->budget - used;
		used += n;
		last = n;
		if (g - m->base >= m->npages)
			continue;
		s = g;
		e = g + n < m->base + m->npages ? g + n : m->base + m->npages;
		for (; s < e; s++)
			if (!m->mapped[s - m->base]) {
				m->mapped[s - m->base] = 1;
				m->prefetched++;
			}
	}
}

#endif /* REPLAY_MODEL_H */
