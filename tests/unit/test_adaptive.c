// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests of the adaptive policy's stream logic
 * (kvm-policy/adaptive/adaptive_stream.c): the window ramp on sequential
 * faults, learning the host chunk from windows that stop early, and
 * falling back on reverse, strided and random fault streams.
 *
 * simulate() plays a guest touching pages in a given order against a host
 * that has populated only some pages (a userfaultfd handler filling chunks
 * on demand), applying each window the way the engine does: map the
 * window's pages that the host has, stop counting at none.  It returns the
 * guest faults taken and the pages prefetched.
 */
#include "prefetch_internal.h"
#include "../../kvm-policy/prefetch.c"
#include "../../kvm-policy/adaptive/adaptive_stream.c"
#include "test.h"

#define MAXP	4096

struct sim {
	bool host[MAXP];	/* page populated on the host */
	bool mapped[MAXP];	/* page mapped for the guest */
	u64 chunk;		/* handler chunk in pages, 0: all present */
	u64 faults, prefetched;
};

/* Map what the host has of window @w, as the engine does. */
static void apply_window(struct sim *s, u64 gfn,
			 const struct kvm_prefetch_window *w)
{
	u64 i;

	for (i = w->start; i < w->start + w->nr_pages && i < MAXP; i++) {
		if (i == gfn || s->mapped[i] || !s->host[i])
			continue;
		s->mapped[i] = true;
		s->prefetched++;
	}
}

static void touch(struct sim *s, struct adaptive_stream *st, u64 gfn, u32 max)
{
	struct kvm_prefetch_window w;
	u64 c, i;

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
	if (adaptive_stream_window(st, &(struct kvm_prefetch_fault){
					.gfn = gfn, .mapped_pages = 1 },
				   max, &w))
		apply_window(s, gfn, &w);
}

/*
 * One fault at @gfn whose mapping spans @mapped pages.  Return: the size
 * of the window it opens, or the stream's size if it opens none (1).
 */
static u32 update(struct adaptive_stream *st, u64 gfn, u32 mapped, u32 max)
{
	struct kvm_prefetch_fault f = { .gfn = gfn, .mapped_pages = mapped };
	struct kvm_prefetch_window w;

	if (adaptive_stream_window(st, &f, max, &w))
		return w.nr_pages;
	return st->win;
}

static struct sim *sim_new(u64 chunk)
{
	struct sim *s = calloc(1, sizeof(*s));
	u64 i;

	s->chunk = chunk;
	for (i = 0; i < MAXP; i++)
		s->host[i] = chunk == 0;
	return s;
}

TEST(next_size_ramps_like_readahead)
{
	ASSERT_EQ(adaptive_next_size(4, 512), 16);
	ASSERT_EQ(adaptive_next_size(16, 512), 64);
	ASSERT_EQ(adaptive_next_size(64, 512), 128);
	ASSERT_EQ(adaptive_next_size(256, 512), 512);
	ASSERT_EQ(adaptive_next_size(512, 512), 512);
	ASSERT_EQ(adaptive_next_size(300, 512), 512);
}

TEST(first_fault_opens_the_initial_window)
{
	struct adaptive_stream st = {};

	ASSERT_EQ(update(&st, 100, 1, 512), ADAPTIVE_INIT_PAGES);
	ASSERT_EQ(st.win_end, 104);
	ASSERT_EQ(st.last, 100);
}

TEST(window_is_capped_by_the_vm_nr_pages)
{
	struct adaptive_stream st = {};

	ASSERT_EQ(update(&st, 0, 1, 2), 2);
	ASSERT_EQ(update(&st, 2, 1, 2), 2);
	ASSERT_EQ(update(&st, 0, 1, 1), 1);
}

TEST(sequential_populated_memory_ramps_up)
{
	struct adaptive_stream st = {};
	struct sim *s = sim_new(0);
	u64 i;

	for (i = 0; i < 2048; i++)
		touch(s, &st, i, 512);
	/* 0, 4, 16, 64, 128, 256 open windows of 4..512, then 512 each. */
	ASSERT_EQ(s->faults, 6 + (2048 - 512) / 512);
	ASSERT_EQ(s->prefetched, 2048 - s->faults);
	ASSERT_EQ(st.win, 512);
	free(s);
}

/* One fault per chunk once the chunk is learnt, for every chunk size. */
TEST(learns_the_userfaultfd_chunk)
{
	static const u64 chunks[] = { 2, 4, 16, 128, 512 };
	unsigned int k;

	for (k = 0; k < sizeof(chunks) / sizeof(chunks[0]); k++) {
		struct adaptive_stream st = {};
		struct sim *s = sim_new(chunks[k]);
		u64 i, n = 4096 / chunks[k];

		for (i = 0; i < 4096; i++)
			touch(s, &st, i, 512);
		/* Best possible is one fault per chunk; allow the ramp. */
		printf("# chunk %llu pages: %llu faults for %llu chunks\n",
		       (unsigned long long)chunks[k],
		       (unsigned long long)s->faults, (unsigned long long)n);
		ASSERT_TRUE(s->faults <= n + 6);
		ASSERT_EQ(s->faults + s->prefetched, 4096);
		free(s);
	}
}

TEST(four_kib_chunks_mostly_skip_prefetch)
{
	struct adaptive_stream st = {};
	u32 wins = 0;
	u64 i;

	for (i = 0; i < 1000; i++)
		wins += update(&st, i, 1, 512) > 1;
	/*
	 * After learning a chunk of 1 page, a window is tried again only
	 * after ADAPTIVE_FULL_TO_GROW faults at the end of the last one.
	 */
	printf("# chunk 1: %u of 1000 faults opened a window\n", wins);
	ASSERT_TRUE(wins <= 1000 / ADAPTIVE_FULL_TO_GROW + 2);
}

TEST(reverse_stream_stays_small)
{
	struct adaptive_stream st = {};
	u64 gfn;

	for (gfn = 4000; gfn > 3000; gfn--)
		ASSERT_EQ(update(&st, gfn, 1, 512),
			  ADAPTIVE_INIT_PAGES);
}

TEST(strided_stream_stays_small)
{
	struct adaptive_stream st = {};
	u64 gfn;

	/* Every 64th page: never at the window end, never inside it. */
	for (gfn = 0; gfn < 64 * 500; gfn += 64)
		ASSERT_EQ(update(&st, gfn, 1, 512),
			  ADAPTIVE_INIT_PAGES);
}

TEST(random_stream_maps_less_than_auto_8)
{
	struct adaptive_stream st = {};
	struct sim *a = sim_new(0), *b = sim_new(0);
	struct kvm_prefetch_window w;
	u64 i, gfn, x = 12345;

	for (i = 0; i < 3000; i++) {
		x = x * 6364136223846793005ULL + 1442695040888963407ULL;
		gfn = (x >> 33) % MAXP;
		touch(a, &st, gfn, 512);
		/* auto nr 8 on the same stream */
		if (!b->mapped[gfn]) {
			b->faults++;
			b->mapped[gfn] = true;
			if (kvm_prefetch_aligned_window(gfn, 1, 8, &w))
				apply_window(b, gfn, &w);
		}
	}
	printf("# random: adaptive prefetched %llu, auto 8 %llu\n",
	       (unsigned long long)a->prefetched,
	       (unsigned long long)b->prefetched);
	ASSERT_TRUE(a->prefetched <= b->prefetched);
	free(a);
	free(b);
}

TEST(huge_mapping_end_counts_as_window_end)
{
	struct adaptive_stream st = {};

	/* A 2 MiB mapping at 512 with a window of 4: ends at 1024. */
	update(&st, 600, 512, 512);
	ASSERT_EQ(st.win_end, 1024);
	/* The next fault at 1024 continues the stream. */
	ASSERT_EQ(update(&st, 1024, 1, 512), 16);
}

int main(void)
{
	return test_run_all(NULL, NULL);
}
