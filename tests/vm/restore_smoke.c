// SPDX-License-Identifier: GPL-2.0
/*
 * restore_smoke - the quick smoke mode of the restore benchmark (make
 * bench), part of make check.
 *
 * Runs the benchmark core (tests/vm/lib/kt_bench.c) on one small
 * configuration: 4 MiB restored through a userfaultfd handler populating
 * 64 KiB chunks (64 chunks, 1024 pages), the guest writing every page
 * once, three runs each of
 *
 *  - Debian's stock modules,
 *  - ours with policy none,
 *  - ours with policy auto, nr_pages = 64 KiB / 4 KiB = 16 (gup nofault).
 *
 * and asserts, for every run: every page's contents right, userfaultfd
 * events == chunks (each chunk populated exactly once), a second pass
 * over the mapped memory takes no guest fault; stock and none: pf_taken
 * == pages, none: no prefetch window, nothing prefetched; auto:
 * pf_taken == chunks, prefetch_windows == chunks, prefetch_mapped ==
 * pages - chunks. The time ratios (median of the three runs) are
 * printed, not asserted: they are what make bench measures.
 *
 * Then the random-access workload of make bench, small: the guest writes
 * 256 of 1024 populated pages in a seeded random order under none, auto
 * nr 8 and adaptive (nr 512, autoloaded). Asserted: contents right; none
 * maps nothing and takes a fault per page; auto-8 prefetches something;
 * adaptive maps no more pages than auto-8 (issue 8's random target).
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <string.h>

#include "kvmtest.h"
#include "kt_sys.h"
#include "kt_bench.h"

#define SIZE	(4ULL << 20)
#define CHUNK	(64ULL << 10)
#define RUNS	3

static char *src;

/* RUNS runs of @cfg; checks each; returns the median time in ms. */
static double run_cfg(const char *what, const struct ktb_config *cfg)
{
	const uint64_t pages = SIZE / KT_PAGE_SIZE, chunks = SIZE / CHUNK;
	bool prefetch = cfg->policy && !strcmp(cfg->policy, "auto");
	double ms[RUNS];
	struct ktb_result r;
	unsigned int i;
	int ret;

	for (i = 0; i < RUNS; i++) {
		ret = ktb_run(src, SIZE, CHUNK, cfg, &r);
		KT_ASSERT(!ret, "%s: KVM_SET_PREFETCH_POLICY: %s", what,
			  strerror(-ret));
		ms[i] = r.ms;
		kt_info("%-8s run %u: %7.1f ms (limit %5.1f ms) events %llu (dup %llu) pf_taken %llu windows %llu mapped %llu",
			what, i + 1, r.ms, r.limit_ms,
			(unsigned long long)r.events,
			(unsigned long long)r.dup, (unsigned long long)r.pf,
			(unsigned long long)r.windows,
			(unsigned long long)r.mapped);

		KT_EXPECT(r.ok, "%s run %u: contents of all %llu pages verified%s%s",
			  what, i + 1, (unsigned long long)pages,
			  r.ok ? "" : ": ", r.err);
		KT_EXPECT(r.events == chunks,
			  "%s run %u: userfaultfd events %llu, want %llu (one per chunk)",
			  what, i + 1, (unsigned long long)r.events,
			  (unsigned long long)chunks);
		KT_EXPECT(r.pf2 == 0,
			  "%s run %u: second pass pf_taken %llu, want 0",
			  what, i + 1, (unsigned long long)r.pf2);
		if (!prefetch) {
			KT_EXPECT(r.pf == pages,
				  "%s run %u: pf_taken %llu, want %llu", what,
				  i + 1, (unsigned long long)r.pf,
				  (unsigned long long)pages);
			KT_EXPECT(!cfg->policy ||
				  (r.have_prefetch && !r.windows && !r.mapped),
				  "%s run %u: prefetch_windows %llu mapped %llu, want 0 and 0",
				  what, i + 1, (unsigned long long)r.windows,
				  (unsigned long long)r.mapped);
			continue;
		}
		/*
		 * One guest fault per chunk, its window mapping the other
		 * pages (the handler populates the faulting page last, so
		 * the window never finds half a chunk: kt_uffd.c).
		 */
		KT_EXPECT(r.pf == chunks,
			  "%s run %u: pf_taken %llu, want %llu", what, i + 1,
			  (unsigned long long)r.pf,
			  (unsigned long long)chunks);
		KT_EXPECT(r.have_prefetch && r.windows == chunks &&
			  r.mapped == pages - chunks,
			  "%s run %u: prefetch_windows %llu mapped %llu, want %llu and %llu",
			  what, i + 1, (unsigned long long)r.windows,
			  (unsigned long long)r.mapped,
			  (unsigned long long)chunks,
			  (unsigned long long)(pages - chunks));
	}
	return ktb_median(ms, RUNS);
}

#define RND_SIZE	(4ULL << 20)
#define RND_TOUCHES	256
#define RND_SEED	7

static struct ktb_result run_random(const char *what,
				    const struct ktb_config *cfg)
{
	struct ktb_result r;
	int ret;

	ret = ktb_run_random(src, RND_SIZE, RND_TOUCHES, RND_SEED, cfg, &r);
	KT_ASSERT(!ret, "random %s: KVM_SET_PREFETCH_POLICY: %s", what,
		  strerror(-ret));
	kt_info("random %-8s: %7.1f ms, pf_taken %llu windows %llu mapped %llu",
		what, r.ms, (unsigned long long)r.pf,
		(unsigned long long)r.windows, (unsigned long long)r.mapped);
	KT_EXPECT(r.ok, "random %s: contents of all pages verified%s%s", what,
		  r.ok ? "" : ": ", r.err);
	KT_EXPECT(r.pf + r.mapped >= RND_TOUCHES && r.pf <= RND_TOUCHES,
		  "random %s: pf_taken %llu + mapped %llu cover the %d touched pages, pf_taken <= %d",
		  what, (unsigned long long)r.pf, (unsigned long long)r.mapped,
		  RND_TOUCHES, RND_TOUCHES);
	return r;
}

static void random_access(void)
{
	struct ktb_config none = { .policy = "none" };
	struct ktb_config auto8 = {
		.policy = "auto", .nr_pages = 8,
		.gup = KVM_PREFETCH_GUP_NOFAULT,
	};
	struct ktb_config adaptive = {
		.policy = "adaptive", .nr_pages = 512,
		.gup = KVM_PREFETCH_GUP_NOFAULT,
	};
	struct ktb_result rn, r8, ra;

	rn = run_random("none", &none);
	r8 = run_random("auto-8", &auto8);
	ra = run_random("adaptive", &adaptive);
	KT_EXPECT(rn.pf == RND_TOUCHES && rn.windows == 0 && rn.mapped == 0,
		  "random none: pf_taken %llu (want %d), windows %llu, mapped %llu (want 0)",
		  (unsigned long long)rn.pf, RND_TOUCHES,
		  (unsigned long long)rn.windows,
		  (unsigned long long)rn.mapped);
	KT_EXPECT(r8.mapped > 0, "random auto-8 prefetched %llu pages (want > 0)",
		  (unsigned long long)r8.mapped);
	KT_EXPECT(ra.mapped <= r8.mapped,
		  "random: adaptive mapped %llu, auto-8 mapped %llu (want adaptive <= auto-8)",
		  (unsigned long long)ra.mapped,
		  (unsigned long long)r8.mapped);
}

int main(void)
{
	struct ktb_config stock = { .policy = NULL };
	struct ktb_config none = { .policy = "none" };
	struct ktb_config autoc = {
		.policy = "auto",
		.nr_pages = CHUNK / KT_PAGE_SIZE,
		.gup = KVM_PREFETCH_GUP_NOFAULT,
	};
	double t_stock, t_none, t_auto;

	kt_require_kvm();
	ktsys_require_prefetch();
	ktsys_guard(300);
	src = ktb_src_alloc(SIZE);
	kt_info("%llu MiB, %llu KiB chunks: %llu chunks, %llu pages; %d runs each",
		(unsigned long long)(SIZE >> 20),
		(unsigned long long)(CHUNK >> 10),
		(unsigned long long)(SIZE / CHUNK),
		(unsigned long long)(SIZE / KT_PAGE_SIZE), RUNS);

	KT_ASSERT(!ktb_swap_modules("stock"), "kvm-reload stock");
	t_stock = run_cfg("stock", &stock);
	KT_ASSERT(!ktb_swap_modules("ours"), "kvm-reload ours");
	t_none = run_cfg("none", &none);
	t_auto = run_cfg("auto-16", &autoc);
	random_access();
	KT_EXPECT(!ktsys_restore(), "kvm-reload ours (restore)");

	kt_info("median: stock %.1f ms, none %.1f ms (%+.1f%%), auto nr 16 %.1f ms (%+.1f%%, ratio %.2f)",
		t_stock, t_none, (t_none / t_stock - 1) * 100, t_auto,
		(t_auto / t_stock - 1) * 100, t_auto / t_stock);
	ktb_src_free(src, SIZE);
	return kt_exit();
}
