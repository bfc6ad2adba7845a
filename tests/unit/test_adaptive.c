// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests of the adaptive policy's stream logic
 * (kvm-policy/adaptive/adaptive_logic.h through adaptive_stream.c): exact
 * windows on deterministic fault sequences for each rule (the dense ramp
 * forward and backward, far jumps and probes, the stride page, the
 * fall-back to nothing on sparse and random streams), and whole access
 * patterns played against a simulated host and engine for the issue's
 * targets (faults per chunk, pages prefetched and never used).
 *
 * simulate: a guest touching pages in a given order against a host that
 * has populated only some pages (a userfaultfd handler filling aligned
 * chunks on demand); each window is applied the way the engine does it
 * (include/linux/kvm_prefetch.h): outward from the faulting page if the
 * window holds it, else from the window's end nearest to the fault;
 * forward it steps over mapped pages, backward a mapped page ends the
 * scan, and in either direction a page the host does not have ends it.
 *
 * Planted bugs each of which these tests were seen to catch (2026-12-07,
 * one at a time in adaptive_logic.h, reverted after):
 *  - no shrink after a probe miss: far_jumps_probe_and_miss_stops,
 *    dense_then_sparse_stops_within_a_probe;
 *  - no probes: the same two;
 *  - stride delta taken from the last fault, not the prefetched page:
 *    stride_prefetches_the_next_page_only, stride_backward_and_large,
 *    empty_windows_exact, stride_halves_faults_inside_chunks;
 *  - far jumps open nothing (v1's behaviour):
 *    far_jumps_probe_and_miss_stops,
 *    dense_random_chunk_order_faults_per_chunk;
 *  - no back-off from empty windows: empty_windows_back_off,
 *    empty_windows_exact;
 *  - a stride window spanning the stride (gfn + 1 .. gfn + d):
 *    sparse_patterns_waste_at_most_10_percent and four more;
 *  - no ramp (first hit opens nr_pages): the five exact-window tests of
 *    the ramp.
 */
#include "prefetch_internal.h"
#include "../../kvm-policy/prefetch.c"
#include "../../kvm-policy/adaptive/adaptive_stream.c"
#include "test.h"

#define MAXP	8192

struct sim {
	bool host[MAXP];	/* page populated on the host */
	bool mapped[MAXP];	/* page mapped for the guest */
	bool used[MAXP];	/* page touched by the guest */
	u64 chunk;		/* handler chunk in pages, 0: all present */
	u64 faults, prefetched, windows;
	struct adaptive_stream st;
	u32 max;
};

static void map_fwd(struct sim *s, u64 from, u64 end)
{
	for (; from < end && from < MAXP; from++) {
		if (s->mapped[from])
			continue;
		if (!s->host[from])
			return;
		s->mapped[from] = true;
		s->prefetched++;
	}
}

static void map_bwd(struct sim *s, u64 from, u64 start)
{
	for (;; from--) {
		if (from >= MAXP || s->mapped[from] || !s->host[from])
			return;
		s->mapped[from] = true;
		s->prefetched++;
		if (from == start)
			return;
	}
}

/* Map what the host has of window @w, as the engine does. */
static void apply_window(struct sim *s, u64 gfn,
			 const struct kvm_prefetch_window *w)
{
	u64 start = w->start, end = w->start + w->nr_pages;

	s->windows++;
	if (gfn >= start && gfn < end) {
		map_fwd(s, gfn + 1, end);
		if (gfn > start)
			map_bwd(s, gfn - 1, start);
	} else if (start > gfn) {
		map_fwd(s, start, end);
	} else {
		map_bwd(s, end - 1, start);
	}
}

static void touch(struct sim *s, u64 gfn)
{
	struct kvm_prefetch_window w;
	u64 c, i;

	s->used[gfn] = true;
	if (s->mapped[gfn])
		return;
	s->faults++;
	if (!s->host[gfn]) {
		/* The handler populates the chunk around gfn. */
		c = s->chunk ? s->chunk : 1;
		for (i = gfn & ~(c - 1); i < (gfn & ~(c - 1)) + c; i++)
			s->host[i] = true;
	}
	s->mapped[gfn] = true;
	w = (struct kvm_prefetch_window){ gfn, 0 };
	if (adaptive_stream_window(&s->st, &(struct kvm_prefetch_fault){
					.gfn = gfn, .mapped_pages = 1 },
				   s->max, &w))
		apply_window(s, gfn, &w);
}

/* Prefetched pages the guest never touched. */
static u64 unused(const struct sim *s)
{
	u64 i, n = 0;

	for (i = 0; i < MAXP; i++)
		n += s->mapped[i] && !s->used[i];
	return n;
}

static struct sim *sim_new(u64 chunk)
{
	struct sim *s = calloc(1, sizeof(*s));
	u64 i;

	s->chunk = chunk;
	s->max = ADAPTIVE_MAX_PAGES;
	for (i = 0; i < MAXP; i++)
		s->host[i] = chunk == 0;
	return s;
}

/*
 * One fault at @gfn whose mapping spans @mapped pages: 0 if it opens no
 * window, else the window's start in *@start and its size.
 */
static u32 fault(struct adaptive_stream *st, u64 gfn, u32 mapped, u32 max,
		 u64 *start)
{
	struct kvm_prefetch_fault f = { .gfn = gfn, .mapped_pages = mapped };
	struct kvm_prefetch_window w = { gfn, 0 };

	if (!adaptive_stream_window(st, &f, max, &w))
		return 0;
	*start = w.start;
	return w.nr_pages;
}

#define EXPECT_WIN(st, gfn, wstart, wnr) do {				\
	u64 __s = ~0ULL;						\
	u32 __n = fault(st, gfn, 1, 512, &__s);				\
	ASSERT_EQ(__n, (u32)(wnr));					\
	if (wnr)							\
		ASSERT_EQ(__s, (u64)(wstart));				\
} while (0)

/* ---- the rules, exact windows ---------------------------------------- */

TEST(next_size_ramps_like_readahead)
{
	ASSERT_EQ(adaptive_next_size(0, 512), 4);
	ASSERT_EQ(adaptive_next_size(4, 512), 16);
	ASSERT_EQ(adaptive_next_size(16, 512), 64);
	ASSERT_EQ(adaptive_next_size(64, 512), 256);	/* x4 below max/4 */
	ASSERT_EQ(adaptive_next_size(128, 512), 256);	/* then x2 */
	ASSERT_EQ(adaptive_next_size(256, 512), 512);
	ASSERT_EQ(adaptive_next_size(512, 512), 512);
	ASSERT_EQ(adaptive_next_size(0, 2), 2);
}

TEST(first_fault_opens_nothing)
{
	struct adaptive_stream st = {};

	EXPECT_WIN(&st, 100, 0, 0);
}

/* Dense forward: each hit at the window's end grows it x4, then x2. */
TEST(dense_forward_ramp_exact)
{
	struct adaptive_stream st = {};

	EXPECT_WIN(&st, 0, 0, 0);
	EXPECT_WIN(&st, 1, 0, 4);	/* next door: first window */
	EXPECT_WIN(&st, 4, 0, 16);	/* at its end: x4 */
	EXPECT_WIN(&st, 16, 0, 64);
	EXPECT_WIN(&st, 64, 0, 256);
	EXPECT_WIN(&st, 256, 0, 512);	/* x2 from max/4 */
	EXPECT_WIN(&st, 512, 512, 512);
	/* The engine stopped at 700 (host chunk): a hit, stays at max. */
	EXPECT_WIN(&st, 700, 512, 512);
	EXPECT_WIN(&st, 1024, 1024, 512);
}

/* Dense backward: windows end at the fault. */
TEST(dense_reverse_ramp_exact)
{
	struct adaptive_stream st = {};

	EXPECT_WIN(&st, 1000, 0, 0);
	EXPECT_WIN(&st, 999, 996, 4);	/* [996, 1000) */
	EXPECT_WIN(&st, 995, 980, 16);	/* just below it: [980, 996) */
	EXPECT_WIN(&st, 979, 916, 64);
	/* Stopped inside (host chunk at 960): still backward. */
	EXPECT_WIN(&st, 959, 704, 256);
}

TEST(window_is_capped_by_the_vm_nr_pages)
{
	struct adaptive_stream st = {};
	u64 s;

	ASSERT_EQ(fault(&st, 0, 1, 2, &s), 0);
	ASSERT_EQ(fault(&st, 1, 1, 2, &s), 2);
	ASSERT_EQ(fault(&st, 2, 1, 2, &s), 2);
	ASSERT_EQ(fault(&st, 4, 1, 1, &s), 0);
}

/*
 * Far jumps of a dense stream open the aligned window at once; the
 * ADAPTIVE_PROBE_EVERY-th opens nothing, a probe that finds the stream
 * dense doubles the gap to the next, and a probe whose neighbour is not
 * touched next stops the stream (the miss shrinks it to nothing).
 */
TEST(far_jumps_probe_and_miss_stops)
{
	struct adaptive_stream st = {};
	u64 i;

	EXPECT_WIN(&st, 0, 0, 0);
	EXPECT_WIN(&st, 1, 0, 4);
	EXPECT_WIN(&st, 4, 0, 16);
	EXPECT_WIN(&st, 16, 0, 64);		/* chunk 0..63 done */
	EXPECT_WIN(&st, 1024, 1024, 64);	/* far jump 1 */
	EXPECT_WIN(&st, 2048, 2048, 64);	/* 2 */
	EXPECT_WIN(&st, 3072, 3072, 64);	/* 3 */
	EXPECT_WIN(&st, 4096, 0, 0);		/* 4: the probe */
	EXPECT_WIN(&st, 4097, 4096, 256);	/* dense: goes on, grows */
	ASSERT_EQ(st.gap, 2 * ADAPTIVE_PROBE_EVERY);
	for (i = 1; i < 2 * ADAPTIVE_PROBE_EVERY; i++)
		EXPECT_WIN(&st, 8192 + i * 1024, 8192 + i * 1024, 256);
	EXPECT_WIN(&st, 30000, 0, 0);		/* probe */
	EXPECT_WIN(&st, 30008, 0, 0);		/* +8: a miss, window gone */
	ASSERT_EQ(st.win, 0);
	EXPECT_WIN(&st, 20000, 0, 0);		/* and far jumps open nothing */
	ASSERT_EQ(st.win, 0);
}

/* One adjacent pair is no stream: a far jump after it opens nothing. */
TEST(one_hit_then_far_opens_nothing)
{
	struct adaptive_stream st = {};

	EXPECT_WIN(&st, 500, 0, 0);
	EXPECT_WIN(&st, 501, 500, 4);
	EXPECT_WIN(&st, 3000, 0, 0);
	ASSERT_EQ(st.win, 0);
	EXPECT_WIN(&st, 7000, 0, 0);
}

/*
 * A stride: the third fault at the same distance prefetches one page,
 * the stream's next; the guest skips it, and the delta to the next fault
 * counts from it, so the stride holds.
 */
TEST(stride_prefetches_the_next_page_only)
{
	struct adaptive_stream st = {};

	EXPECT_WIN(&st, 0, 0, 0);
	EXPECT_WIN(&st, 8, 0, 0);		/* one delta: no stride yet */
	EXPECT_WIN(&st, 16, 24, 1);
	EXPECT_WIN(&st, 32, 40, 1);		/* used 24, faulted at 32 */
	EXPECT_WIN(&st, 48, 56, 1);
	/* The prefetch failed (host did not have 56): fault there. */
	EXPECT_WIN(&st, 56, 64, 1);
	/* A jump (new chunk): the majority of the history keeps 8. */
	EXPECT_WIN(&st, 4000, 4008, 1);
	EXPECT_WIN(&st, 4016, 4024, 1);
}

TEST(stride_backward_and_large)
{
	struct adaptive_stream st = {};

	EXPECT_WIN(&st, 5000, 0, 0);
	EXPECT_WIN(&st, 4936, 0, 0);
	EXPECT_WIN(&st, 4872, 4808, 1);		/* stride -64 */
	EXPECT_WIN(&st, 4744, 4680, 1);
	/* A stride beyond the VM's nr_pages opens nothing. */
	st = (struct adaptive_stream){};
	EXPECT_WIN(&st, 0, 0, 0);
	EXPECT_WIN(&st, 1000, 0, 0);
	EXPECT_WIN(&st, 2000, 0, 0);
}

TEST(random_stream_opens_nothing)
{
	struct adaptive_stream st = {};
	u64 i, x = 12345, s;
	u32 wins = 0;

	for (i = 0; i < 3000; i++) {
		x = x * 6364136223846793005ULL + 1442695040888963407ULL;
		wins += fault(&st, (x >> 33) % 100000, 1, 512, &s) > 0;
	}
	printf("# random: %u of 3000 faults opened a window\n", wins);
	ASSERT_TRUE(wins <= 10);
}

TEST(huge_mapping_end_counts_as_next_door)
{
	struct adaptive_stream st = {};

	/* A 2 MiB mapping at 512..1023, then faults past its end. */
	ASSERT_EQ(fault(&st, 600, 512, 512, &(u64){0}), 0);
	ASSERT_EQ(st.mhi, 1024);
	EXPECT_WIN(&st, 1024, 1024, 4);
}

/* ---- whole patterns against the simulated host ------------------------ */

static u32 rng(u64 *x)
{
	*x = *x * 6364136223846793005ULL + 1442695040888963407ULL;
	return *x >> 33;
}

enum pat { P_SEQ, P_RAND, P_SEQ_SPARSE, P_RAND_SPARSE, P_STRIDE2,
	   P_STRIDE64, P_REVERSE, P_HOTSET };
static const char *const pat_names[] = { "seq", "rand", "seq-sparse",
	"rand-sparse", "stride2", "stride64", "reverse", "hotset" };

/* Play pattern @p over MAXP pages in chunks of @chunk pages. */
static struct sim *play(enum pat p, u64 chunk)
{
	static u32 order[MAXP];
	struct sim *s = sim_new(chunk);
	u64 n = MAXP / chunk, i, j, k, x = 42, t;

	for (i = 0; i < n; i++)
		order[i] = i;
	if (p == P_RAND || p == P_RAND_SPARSE)
		for (i = n - 1; i > 0; i--) {
			j = rng(&x) % (i + 1);
			t = order[i];
			order[i] = order[j];
			order[j] = t;
		}
	switch (p) {
	case P_SEQ:
	case P_RAND:
	case P_SEQ_SPARSE:
	case P_RAND_SPARSE:
		k = p == P_SEQ || p == P_RAND ? 1 : 8;
		for (i = 0; i < n; i++)
			for (j = 0; j < chunk; j++)
				if ((order[i] * chunk + j) % k == 0)
					touch(s, order[i] * chunk + j);
		break;
	case P_STRIDE2:
	case P_STRIDE64:
		k = p == P_STRIDE2 ? 2 : 64;
		for (i = 0; i < MAXP; i += k)
			touch(s, i);
		break;
	case P_REVERSE:
		for (i = MAXP; i-- > 0;)
			touch(s, i);
		break;
	case P_HOTSET:
		/* 1 page in 8, hashed, in a random order, three passes. */
		for (t = 0; t < 3; t++)
			for (i = 0; i < MAXP; i++) {
				j = (i * 2654435761u + t * 977) % MAXP;
				if ((j * 40503u >> 3) % 8 == 0)
					touch(s, j);
			}
		break;
	}
	return s;
}

/* Dense patterns: random chunk order takes at most 1.5 faults a chunk. */
TEST(dense_random_chunk_order_faults_per_chunk)
{
	static const u64 chunks[] = { 1, 16, 128, 512 };
	unsigned int c;

	for (c = 0; c < ARRAY_SIZE(chunks); c++) {
		struct sim *s = play(P_RAND, chunks[c]);
		u64 n = MAXP / chunks[c];

		printf("# rand chunk %llu: %llu faults for %llu chunks (%.2f), %llu unused\n",
		       (unsigned long long)chunks[c],
		       (unsigned long long)s->faults, (unsigned long long)n,
		       (double)s->faults / n, (unsigned long long)unused(s));
		ASSERT_TRUE(s->faults * 2 <= n * 3);
		ASSERT_EQ(unused(s), 0);
		free(s);
	}
}

/* Dense linear and reverse: one fault per chunk, plus the ramp. */
TEST(dense_linear_and_reverse_one_fault_per_chunk)
{
	static const u64 chunks[] = { 16, 128, 512 };
	unsigned int c, p;

	for (p = 0; p < 2; p++)
		for (c = 0; c < ARRAY_SIZE(chunks); c++) {
			struct sim *s = play(p ? P_REVERSE : P_SEQ, chunks[c]);
			u64 n = MAXP / chunks[c];

			printf("# %s chunk %llu: %llu faults for %llu chunks\n",
			       p ? "reverse" : "seq",
			       (unsigned long long)chunks[c],
			       (unsigned long long)s->faults,
			       (unsigned long long)n);
			ASSERT_TRUE(s->faults <= n + 6);
			ASSERT_EQ(unused(s), 0);
			free(s);
		}
}

/*
 * Sparse patterns: at most 10% of the prefetched pages go unused, and
 * never more faults than without prefetch.
 */
TEST(sparse_patterns_waste_at_most_10_percent)
{
	static const enum pat pats[] = { P_SEQ_SPARSE, P_RAND_SPARSE,
					 P_STRIDE2, P_STRIDE64, P_HOTSET };
	static const u64 chunks[] = { 1, 16, 128, 512 };
	unsigned int p, c;

	for (p = 0; p < ARRAY_SIZE(pats); p++)
		for (c = 0; c < ARRAY_SIZE(chunks); c++) {
			struct sim *s = play(pats[p], chunks[c]);
			u64 touched = 0, i;

			for (i = 0; i < MAXP; i++)
				touched += s->used[i];
			printf("# %s chunk %llu: %llu faults for %llu pages touched, %llu prefetched, %llu unused\n",
			       pat_names[pats[p]],
			       (unsigned long long)chunks[c],
			       (unsigned long long)s->faults,
			       (unsigned long long)touched,
			       (unsigned long long)s->prefetched,
			       (unsigned long long)unused(s));
			ASSERT_TRUE(unused(s) * 10 <= s->prefetched);
			ASSERT_TRUE(s->faults <= touched);
			free(s);
		}
}

/*
 * 4 KiB chunks: no window can map anything.  After ADAPTIVE_EMPTY_MAX
 * empty windows in a row only one in ADAPTIVE_EMPTY_RETRY is opened.
 */
TEST(empty_windows_back_off)
{
	static const enum pat pats[] = { P_SEQ, P_REVERSE, P_SEQ_SPARSE,
					 P_STRIDE2 };
	unsigned int p;

	for (p = 0; p < ARRAY_SIZE(pats); p++) {
		struct sim *s = play(pats[p], 1);

		printf("# %s chunk 1: %llu faults, %llu windows\n",
		       pat_names[pats[p]], (unsigned long long)s->faults,
		       (unsigned long long)s->windows);
		ASSERT_EQ(s->prefetched, 0);
		ASSERT_TRUE(s->windows <= s->faults / ADAPTIVE_EMPTY_RETRY + 4);
		free(s);
	}
}

TEST(empty_windows_exact)
{
	struct adaptive_stream st = {};
	u64 i;

	EXPECT_WIN(&st, 0, 0, 0);
	EXPECT_WIN(&st, 8, 0, 0);
	EXPECT_WIN(&st, 16, 24, 1);
	EXPECT_WIN(&st, 24, 32, 1);		/* 24 not there: empty 1 */
	EXPECT_WIN(&st, 32, 0, 0);		/* empty 2: skip */
	for (i = 1; i < ADAPTIVE_EMPTY_RETRY - 1; i++)
		EXPECT_WIN(&st, 32 + 8 * i, 0, 0);
	/* The retry maps 96, the guest faults at 104: works again. */
	EXPECT_WIN(&st, 88, 96, 1);
	EXPECT_WIN(&st, 104, 112, 1);
	EXPECT_WIN(&st, 120, 128, 1);
}

/* The stride page halves the faults of a stride inside a chunk. */
TEST(stride_halves_faults_inside_chunks)
{
	struct sim *s = play(P_SEQ_SPARSE, 128);

	/* 1024 pages touched; after the first three, every other faults. */
	ASSERT_TRUE(s->faults <= 1024 / 2 + 4);
	ASSERT_EQ(unused(s), 0);
	free(s);
}

/*
 * A sparse stream after a dense one: the probe finds it within
 * ADAPTIVE_PROBE_EVERY far jumps, so at most that many chunk windows go
 * unused.
 */
TEST(dense_then_sparse_stops_within_a_probe)
{
	struct sim *s = sim_new(128);
	u64 c, i, before;

	for (i = 0; i < 128; i++)
		touch(s, i);
	before = s->prefetched;
	/* Then the first page of every 8 of 32 chunks, in a spread order. */
	for (c = 0; c < 32; c++)
		for (i = 0; i < 128; i += 8)
			touch(s, ((c * 13) % 56 + 8) * 128 + i);
	printf("# dense then sparse: %llu prefetched after, %llu unused\n",
	       (unsigned long long)(s->prefetched - before),
	       (unsigned long long)unused(s));
	ASSERT_TRUE(unused(s) <= (ADAPTIVE_PROBE_EVERY - 1) * 127);
	ASSERT_EQ(s->st.win, 0);
	free(s);
}

int main(void)
{
	return test_run_all(NULL, NULL);
}
