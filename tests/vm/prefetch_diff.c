// SPDX-License-Identifier: GPL-2.0
/*
 * prefetch_diff - the batched engine installs, bit for bit, the SPTEs
 * that the per-page engine (one AUTO fault per page, through the fault
 * path's own make_spte() and level choice) installs for the same pages.
 *
 * The batch keeps private copies of fault-path decisions: a 4 KiB SPTE is
 * the batch's first one with another pfn, a page that is not compound is
 * mapped at 4 KiB without a walk of the host page tables, huge pages are
 * mapped where kvm_mmu_max_mapping_level() allows inside the window, and
 * its SPTE setter bypasses handle_changed_spte().  Any change of
 * make_spte(), of the A/D rules or of the level rules that the copies miss
 * shows here as a difference.
 *
 * Each case is random (seeded; kp.diff.seed=N and kp.diff.cases=N on the
 * kernel command line override the defaults): an 8 MiB slot of four
 * 2 MiB blocks, each block either 4 KiB host pages (some written, some
 * read once so that they map the zero page, some absent), a THP block, or
 * written pages shared with a child after fork (read-only in the host);
 * the slot read-only or not; a few guest accesses with policy none, then
 * a few with auto, a random window (1 to 2048 pages) and GUP mode; one
 * case in four puts THP blocks under a window of 1024 or 2048 pages, so
 * that huge pages are prefetched.  The
 * guest only touches pages the host has, so that nothing it does changes
 * the host's page tables.  The case runs once per engine in fresh VMs
 * over the same host memory, and the kvm_tdp_mmu_spte_changed trace event
 * (which both the fault path and the batch's setter emit) gives every
 * SPTE KVM wrote.  The final leaf SPTEs of the two runs must be equal, and
 * each must map the pfn that the host's page table has for its page
 * (/proc/self/pagemap), so that the fault path itself is checked against
 * the host too.
 *
 * The per-exit budget stops a window past 512 pages examined only for a
 * request that something waits for (an interrupt to inject, an obsolete
 * root), which this VM without an irqchip does not get: preemption, which
 * cut windows of the slower per-page engine on the debug kernel before
 * the engine stopped for any request, no longer does.
 * A case whose host pages moved between the two runs (pagemap changed:
 * compaction, reclaim) or whose runs differ is run again once; a
 * difference seen twice fails.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "kvmtest.h"
#include "kt_sys.h"

#define EVENT		"kvmmmu/kvm_tdp_mmu_spte_changed"
#define SLOT		1
#define GPA		0x40000000ULL		/* 1 GiB, 2 MiB aligned */
#define GFN0		(GPA >> 12)
#define BLOCK		(2ULL << 20)
#define BLOCK_PAGES	KTSYS_BLOCK_PAGES
#define NR_BLOCKS	4
#define SIZE		(NR_BLOCKS * BLOCK)
#define NR_PAGES	(SIZE / KT_PAGE_SIZE)
#define MAX_ACCESS	32
#define DEFAULT_SEED	20261203u
#define DEFAULT_CASES	24


enum block_kind { BLK_4K, BLK_THP, BLK_SHARED, NR_KINDS };
static const char *const kind_names[] = { "4k", "thp", "shared" };

enum page_state { PG_ABSENT, PG_WRITTEN, PG_ZERO };

struct access {
	uint32_t page;
	bool write;
};

struct dcase {
	enum block_kind kind[NR_BLOCKS];
	uint8_t state[NR_PAGES];
	bool ro_slot;
	uint32_t nr, gup;
	int npre, nauto;
	struct access pre[MAX_ACCESS], aut[MAX_ACCESS];
};

/* The final leaf SPTE over each page: the SPTE and its level (0: none). */
struct leaves {
	uint64_t spte[NR_PAGES];
	uint8_t level[NR_PAGES];
	long events, lost;
	uint64_t prefetched;	/* the vCPU's prefetch_mapped */
};

static unsigned int rnd_state;

static uint32_t rnd(uint32_t n)
{
	rnd_state = rnd_state * 1103515245u + 12345u;
	return ((rnd_state >> 8) & 0xffffff) % n;
}

static bool page_writable_host(const struct dcase *c, uint32_t page)
{
	return c->state[page] == PG_WRITTEN &&
	       c->kind[page / BLOCK_PAGES] != BLK_SHARED;
}

static void pick_accesses(const struct dcase *c, struct access *a, int n)
{
	int i;

	for (i = 0; i < n; i++) {
		uint32_t p;

		do
			p = rnd(NR_PAGES);
		while (c->state[p] == PG_ABSENT);
		a[i].page = p;
		/* Writes only where the host page is writable already. */
		a[i].write = !c->ro_slot && page_writable_host(c, p) &&
			     rnd(2);
	}
}

static void make_case(struct dcase *c, bool huge)
{
	static const uint32_t windows[] = { 1, 2, 3, 8, 17, 64, 100, 256,
					    511, 512, 1024, 2048 };
	static const uint32_t gups[] = { KVM_PREFETCH_GUP_DEFAULT,
					 KVM_PREFETCH_GUP_NOFAULT,
					 KVM_PREFETCH_GUP_FAST_ONLY };
	/* Holes and zero pages per 1000 pages: a hole ends a window's scan. */
	static const uint32_t holes[] = { 0, 2, 20, 200 }, zeros[] = { 0, 10, 100 };
	uint32_t b, p;

	memset(c, 0, sizeof(*c));
	for (b = 0; b < NR_BLOCKS; b++) {
		uint32_t hole = holes[rnd(4)], zero = zeros[rnd(3)];

		c->kind[b] = rnd(NR_KINDS);
		for (p = b * BLOCK_PAGES; p < (b + 1) * BLOCK_PAGES; p++) {
			uint32_t r = rnd(1000);

			if (c->kind[b] == BLK_THP)
				c->state[p] = PG_WRITTEN;
			else if (r < hole)
				c->state[p] = PG_ABSENT;
			else if (c->kind[b] == BLK_4K && r < hole + zero)
				c->state[p] = PG_ZERO;
			else
				c->state[p] = PG_WRITTEN;
		}
	}
	c->ro_slot = !rnd(5);
	c->nr = windows[rnd(sizeof(windows) / sizeof(windows[0]))];
	c->gup = gups[rnd(3)];
	c->npre = rnd(MAX_ACCESS + 1);
	/* One case in four: THP blocks under a window larger than 2 MiB. */
	if (huge && !rnd(4)) {
		for (b = 0; b < NR_BLOCKS; b++)
			if (rnd(4)) {
				c->kind[b] = BLK_THP;
				for (p = b * BLOCK_PAGES; p < (b + 1) * BLOCK_PAGES; p++)
					c->state[p] = PG_WRITTEN;
			}
		c->nr = rnd(2) ? 1024 : 2048;
		c->npre = rnd(3);
	}
	c->nauto = 1 + rnd(6);
	pick_accesses(c, c->pre, c->npre);
	pick_accesses(c, c->aut, c->nauto);
}

/* The case's host memory, 2 MiB aligned; a child holds the shared blocks. */
static char *make_memory(const struct dcase *c, char **rawp, pid_t *child,
			 int *pipe_wr)
{
	char *raw, *mem, c1;
	bool shared = false;
	int pfd[2];
	uint32_t b, p;

	raw = mmap(NULL, SIZE + BLOCK, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	KT_ASSERT(raw != MAP_FAILED, "mmap: %s", strerror(errno));
	mem = (char *)(((uintptr_t)raw + BLOCK - 1) & ~(BLOCK - 1));
	*rawp = raw;
	for (b = 0; b < NR_BLOCKS; b++) {
		char *blk = mem + b * BLOCK;

		madvise(blk, BLOCK, c->kind[b] == BLK_THP ? MADV_HUGEPAGE :
							    MADV_NOHUGEPAGE);
		if (c->kind[b] == BLK_SHARED)
			shared = true;
		else
			madvise(blk, BLOCK, MADV_DONTFORK);
	}
	for (p = 0; p < NR_PAGES; p++) {
		volatile uint32_t *w = (uint32_t *)(mem + p * KT_PAGE_SIZE);

		if (c->state[p] == PG_WRITTEN)
			*w = (uint32_t)(GPA + p * KT_PAGE_SIZE) ^ rnd_state;
		else if (c->state[p] == PG_ZERO)
			(void)*w;
	}
	*child = -1;
	*pipe_wr = -1;
	if (shared) {
		KT_ASSERT(!pipe(pfd), "pipe: %s", strerror(errno));
		*child = fork();
		KT_ASSERT(*child >= 0, "fork: %s", strerror(errno));
		if (!*child) {
			close(pfd[1]);
			_exit(read(pfd[0], &c1, 1) < 0);
		}
		close(pfd[0]);
		*pipe_wr = pfd[1];
	}
	return mem;
}

/* Did a page come or go, or change its pfn (flags like soft-dirty aside)? */
static bool pages_moved(const uint64_t *a, const uint64_t *b)
{
	const uint64_t keep = (1ULL << 63) | ((1ULL << 55) - 1);
	uint32_t i;

	for (i = 0; i < NR_PAGES; i++)
		if ((a[i] & keep) != (b[i] & keep))
			return true;
	return false;
}

/* Apply one trace line to the leaves @arg. */
static void trace_line(const char *line, void *arg)
{
	struct leaves *l = arg;
	struct ktsys_spte_change c;

	if (ktsys_spte_parse(line, &c, &l->lost) &&
	    c.gfn >= GFN0 && c.gfn < GFN0 + NR_PAGES &&
	    ktsys_spte_apply(&c, GFN0, NR_PAGES, l->spte, l->level))
		l->events++;
}

static void read_trace(struct leaves *l)
{
	long r = ktsys_trace_lines(EVENT, trace_line, l);

	KT_ASSERT(r >= 0, "trace of %s: %ld", EVENT, r);
}

static void run_accesses(struct kt_vcpu *vcpu, const struct access *a, int n)
{
	int i;

	for (i = 0; i < n; i++) {
		uint32_t gpa = (uint32_t)(GPA + a[i].page * KT_PAGE_SIZE);

		kt_touch(vcpu, gpa, gpa + KT_PAGE_SIZE, 0,
			 a[i].write ? KT_TOUCH_WRITE : KT_TOUCH_READ);
	}
}

/* One run of @c with @engine over @mem: the leaf SPTEs KVM left. */
static void run_case(const struct dcase *c, char *mem, const char *engine,
		     struct leaves *l)
{
	struct kt_vcpu *vcpu;
	struct kt_vm *vm;
	int r;

	memset(l, 0, sizeof(*l));
	ktsys_set_engine(engine);
	vm = kt_vm_on(SLOT, GPA, SIZE, c->ro_slot ? KVM_MEM_READONLY : 0, mem,
		      &vcpu);
	KT_ASSERT(!ktsys_set_policy(vm->fd, "none", 0, 0), "SET none");
	r = ktsys_trace_begin(EVENT);
	KT_ASSERT(!r, "trace event %s: %d", EVENT, r);
	run_accesses(vcpu, c->pre, c->npre);
	KT_ASSERT(!ktsys_set_policy(vm->fd, "auto", c->nr, c->gup),
		  "SET auto %u gup %u", c->nr, c->gup);
	run_accesses(vcpu, c->aut, c->nauto);
	read_trace(l);
	l->prefetched = kt_vcpu_stat_get(vcpu, "prefetch_mapped");
	kt_vcpu_free(vcpu);
	kt_vm_free(vm);
}

static void describe(const struct dcase *c, char *buf, size_t len)
{
	snprintf(buf, len, "blocks %s/%s/%s/%s, %s slot, auto %u gup %s, %d+%d accesses",
		 kind_names[c->kind[0]], kind_names[c->kind[1]],
		 kind_names[c->kind[2]], kind_names[c->kind[3]],
		 c->ro_slot ? "read-only" : "writable", c->nr,
		 ktsys_gup_str(c->gup), c->npre, c->nauto);
}

/* Pages where @a and @b differ; prints the first few. */
static long compare(const struct leaves *a, const struct leaves *b,
		    bool print)
{
	long diff = 0;
	uint32_t i;

	for (i = 0; i < NR_PAGES; i++) {
		if (a->level[i] == b->level[i] && a->spte[i] == b->spte[i])
			continue;
		if (print && diff < 4)
			kt_info("  gfn %llx: batch level %d spte %016llx, fault level %d spte %016llx",
				(unsigned long long)(GFN0 + i), a->level[i],
				(unsigned long long)a->spte[i], b->level[i],
				(unsigned long long)b->spte[i]);
		diff++;
	}
	return diff;
}

/*
 * Leaves whose pfn is not the host's for their page (a 2 MiB leaf maps its
 * block from the pfn of the block's first page); prints the first few.
 */
static long against_host(const struct leaves *l, const uint64_t *pm,
			 const char *engine, bool print)
{
	long bad = 0;
	uint32_t i;

	for (i = 0; i < NR_PAGES; i++) {
		uint64_t want, got;

		if (!l->level[i])
			continue;
		want = ktsys_pagemap_pfn(pm[i]);
		got = ktsys_leaf_pfn(l->spte[i], l->level[i], i);
		if (got == want)
			continue;
		if (print && bad < 4)
			kt_info("  %s: gfn %llx level %d maps pfn %llx, the host has %llx",
				engine, (unsigned long long)(GFN0 + i),
				l->level[i], (unsigned long long)got,
				(unsigned long long)want);
		bad++;
	}
	return bad;
}

static long mapped(const struct leaves *l, int level)
{
	long n = 0;
	uint32_t i;

	for (i = 0; i < NR_PAGES; i++)
		n += l->level[i] == level;
	return n;
}

/* 2 MiB leaves over blocks that no guest access touched: prefetched. */
static long huge_prefetched(const struct dcase *c, const struct leaves *l)
{
	long n = 0;
	uint32_t b;
	int i;

	for (b = 0; b < NR_BLOCKS; b++) {
		bool touched = false;

		for (i = 0; i < c->npre; i++)
			touched |= c->pre[i].page / BLOCK_PAGES == b;
		for (i = 0; i < c->nauto; i++)
			touched |= c->aut[i].page / BLOCK_PAGES == b;
		n += !touched && l->level[b * BLOCK_PAGES] == 2;
	}
	return n;
}

struct totals {
	long cases, retried, pages_4k, pages_2m, huge_cases;
	uint64_t max_prefetched;
	long huge_prefetched;
};

static void one_case(int idx, bool huge, struct totals *t)
{
	static uint64_t pm_before[NR_PAGES], pm_after[NR_PAGES];
	static struct leaves lb, lf;
	struct dcase c;
	char what[160];
	int pipe_wr, status, attempt;
	long diff = 0, hb = 0, hf = 0;
	bool moved = false;
	char *mem, *raw;
	pid_t child;

	make_case(&c, huge);
	describe(&c, what, sizeof(what));
	mem = make_memory(&c, &raw, &child, &pipe_wr);
	for (attempt = 0; attempt < 2; attempt++) {
		bool last = attempt == 1;

		ktsys_pagemap(mem, NR_PAGES, pm_before);
		run_case(&c, mem, "batch", &lb);
		run_case(&c, mem, "fault", &lf);
		ktsys_pagemap(mem, NR_PAGES, pm_after);
		moved = pages_moved(pm_before, pm_after);
		diff = compare(&lb, &lf, last && !moved);
		hb = against_host(&lb, pm_after, "batch", last && !moved);
		hf = against_host(&lf, pm_after, "fault", last && !moved);
		if (!moved && !diff && !hb && !hf && !lb.lost && !lf.lost)
			break;
		if (!last) {
			kt_info("case %d (%s): %s, run again", idx, what,
				moved ? "host pages moved" :
				lb.lost || lf.lost ? "trace events lost" :
				"the runs differ");
			t->retried++;
		}
	}
	if (moved || lb.lost || lf.lost) {
		kt_skip("case %d (%s): host pages moved or trace events lost twice",
			idx, what);
	} else {
		KT_EXPECT(!diff && !hb && !hf && lb.events > 0 &&
			  lb.prefetched == lf.prefetched,
			  "case %d (%s): batch and per-page engine leave the same SPTEs, the host's pfns (%ld/%ld leaves 4k/2m, %llu/%llu pages prefetched; %ld pages differ, %ld/%ld not the host's)",
			  idx, what, mapped(&lb, 1), mapped(&lb, 2) / BLOCK_PAGES,
			  (unsigned long long)lb.prefetched,
			  (unsigned long long)lf.prefetched, diff, hb, hf);
		if (lb.prefetched > t->max_prefetched)
			t->max_prefetched = lb.prefetched;
		t->pages_4k += mapped(&lb, 1);
		t->pages_2m += mapped(&lb, 2) / BLOCK_PAGES;
		t->huge_cases += mapped(&lb, 2) > 0;
		t->huge_prefetched += huge_prefetched(&c, &lb);
	}
	t->cases++;
	if (child > 0) {
		close(pipe_wr);
		waitpid(child, &status, 0);
	}
	munmap(raw, SIZE + BLOCK);
}

int main(void)
{
	unsigned long seed = DEFAULT_SEED, cases = DEFAULT_CASES, i;
	struct totals t = { 0 };
	char engine[16], thp_was[64];
	bool huge;

	ktsys_start_random(1800, "diff", engine, sizeof(engine), &seed, &cases);
	/* THP for the MADV_HUGEPAGE blocks. */
	huge = ktsys_thp_madvise(thp_was, sizeof(thp_was));
	kt_info("seed %lu, %lu cases, THP %s", seed, cases,
		huge ? "madvise" : "unavailable");
	rnd_state = (unsigned int)seed;
	for (i = 0; i < cases; i++)
		one_case((int)i, huge, &t);
	kt_info("%ld cases, %ld run again; leaves compared: %ld 4 KiB, %ld 2 MiB (%ld cases with a huge leaf, %ld huge leaves prefetched)",
		t.cases, t.retried, t.pages_4k, t.pages_2m, t.huge_cases,
		t.huge_prefetched);
	KT_EXPECT(t.max_prefetched > 2 * 64,
		  "some run prefetched more than two batches of 64 pages (%llu)",
		  (unsigned long long)t.max_prefetched);
	if (huge) {
		KT_EXPECT(t.huge_prefetched > 0,
			  "some case compared a prefetched 2 MiB leaf (%ld)",
			  t.huge_prefetched);
		ktsys_thp_restore(thp_was);
	}
	ktsys_set_engine(engine);
	return kt_exit();
}
