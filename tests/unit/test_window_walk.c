// SPDX-License-Identifier: GPL-2.0
/*
 * The engine's window walk (arch/x86/kvm/mmu/prefetch.c) against a
 * reference model, over thousands of random cases with a fixed seed.
 *
 * The rule the model states: after a guest fault, the engine maps only
 * pages of the policy's window clipped to the faulting memslot and to the
 * VM's nr_pages.  It walks the window outward from the fault where the
 * window contains the faulting page (forward from the faulting block to
 * the window's end, then backward to its start), and from the end nearest
 * to the fault otherwise; forward it steps over what is mapped, backward
 * the first mapped page ends the scan; in both directions the first page
 * the host does not have ends it.  Each page is mapped at the largest
 * level that the host backs it at, whose block lies inside the clipped
 * window and holds no page that is already mapped.
 *
 * Each case builds a memslot (its edges at random), host pages at 4 KiB,
 * 2 MiB or 1 GiB with holes, pages and huge pages already mapped, a guest
 * fault of the level the host allows, and a window above, below,
 * straddling or containing the fault; it runs with the per-page engine or
 * with the batched one stopping at a random point (the batched engine is
 * the shim's, which maps as the fault path does: see x86/prefetch_mmu.h).
 * Then the mapped set, level by level, and the stats must be the model's.
 *
 * KVM_PREFETCH_WALK_SEED in the environment replaces the seed; a failure
 * prints the seed and the case.
 */
#define SHIM_X86_ENGINE
#include "prefetch_internal.h"
#include "../../kvm-policy/prefetch.c"
#include "../../kvm-policy/prefetch_vm.c"
#include "../../kvm-policy/prefetch_pfn.c"
#include "x86/kvm_x86.h"
#undef pr_fmt
#include "../../arch/x86/kvm/mmu/prefetch.c"
#include "test.h"
#include "fixtures.h"

#define CASES		2000	/* per kind of window */
#define CASES_1G	40
#define DEFAULT_SEED	0x6b766d2d77616c6bULL
#define HOST_MARGIN	4096	/* host pages around the memslot */

static u64 seed, rng;
static struct kvm_memory_slot slot;
static struct kvm_mmu mmu;
static struct kvm_vcpu vcpu;

static u64 rnd(void)
{
	rng ^= rng >> 12;
	rng ^= rng << 25;
	rng ^= rng >> 27;
	return rng * 0x2545f4914f6cdd1dULL;
}

/* Uniform in [lo, hi]. */
static u64 rnd_in(u64 lo, u64 hi)
{
	return lo + rnd() % (hi - lo + 1);
}

static bool chance(int percent)
{
	return rnd() % 100 < (u64)percent;
}

static u64 pages_of(int level)
{
	return KVM_PAGES_PER_HPAGE(level);
}

/* ---- the case -------------------------------------------------------- */

enum kind {
	KIND_CONTAINS,		/* the window holds the faulting page */
	KIND_ABOVE,		/* it starts above the faulting page */
	KIND_BELOW,		/* it ends at or below the faulting page */
	KIND_STRADDLES,		/* it overlaps the fault's block, not the page */
	KIND_SLOT_EDGE,		/* it crosses an edge of the memslot */
	KIND_2M,		/* mostly 2 MiB host pages, large windows */
	KIND_1G,		/* 1 GiB host pages, two 1 GiB blocks */
};

static const char *const kind_names[] = {
	"contains", "above", "below", "straddles", "slot_edge", "2m", "1g",
};

struct wcase {
	enum kind kind;
	int nr;
	gfn_t base, npages;		/* the memslot */
	gfn_t host_lo, host_hi;		/* frames the host may have */
	gfn_t fault;
	int fault_level;
	gfn_t wstart;
	u32 wnr, vm_nr;
	bool batch;
	gfn_t batch_until;
};

/* ---- the model ------------------------------------------------------- */

static struct {
	u8 mapped[SIM_PAGES];
	u32 used_2m[SIM_PAGES / SIM_2M];
	u32 used_1g[SIM_PAGES / SIM_1G];
	gfn_t lo, hi;			/* what it mapped */
	u64 nr_mapped;			/* 4 KiB pages the walk mapped */
	unsigned int levels;		/* BIT() of each level it mapped at */
	gfn_t start, end;		/* the clipped window */
	bool window;			/* the engine runs a window */
} m;

static void model_map(gfn_t gfn, int level, bool count)
{
	gfn_t first = ALIGN_DOWN(gfn, pages_of(level)), g;

	for (g = first; g < first + pages_of(level); g++) {
		if (!m.mapped[g]) {
			m.used_2m[g / SIM_2M]++;
			m.used_1g[g / SIM_1G]++;
		}
		m.mapped[g] = level;
	}
	if (m.hi == m.lo || first < m.lo)
		m.lo = first;
	if (first + pages_of(level) > m.hi)
		m.hi = first + pages_of(level);
	if (count) {
		m.nr_mapped += pages_of(level);
		m.levels |= BIT(level);
	}
}

static bool model_block_used(gfn_t gfn, int level)
{
	if (level == PG_LEVEL_1G)
		return m.used_1g[gfn / SIM_1G];
	if (level == PG_LEVEL_2M)
		return m.used_2m[gfn / SIM_2M];
	return m.mapped[gfn];
}

/*
 * The level the walk maps an unmapped @gfn at: the host's, at most the
 * largest whose block lies in [m.start, m.end) and holds nothing mapped.
 */
static int model_level(gfn_t gfn)
{
	int level;

	for (level = x86_sim.host[gfn]; level > PG_LEVEL_4K; level--) {
		gfn_t first = ALIGN_DOWN(gfn, pages_of(level));

		if (first >= m.start && first + pages_of(level) <= m.end &&
		    !model_block_used(gfn, level))
			break;
	}
	return level;
}

static void model_walk(const struct wcase *c)
{
	u64 step = pages_of(c->fault_level), nr;
	gfn_t fs = ALIGN_DOWN(c->fault, step), g;
	int level;

	nr = min_t(u64, min_t(u64, c->wnr, c->vm_nr), KVM_PREFETCH_MAX_PAGES);
	m.start = max(c->wstart, c->base);
	m.end = min3(c->wstart + nr, c->base + c->npages,
		     (u64)x86_sim.max_gfn + 1);
	m.window = m.start < m.end;
	if (!m.window)
		return;

	/* Forward, from the faulting block or the window's start. */
	for (g = max(fs + step, m.start); g < m.end;) {
		level = m.mapped[g];
		if (!level) {
			if (!x86_sim.host[g])
				break;
			level = model_level(g);
			model_map(g, level, true);
		}
		g = ALIGN_DOWN(g, pages_of(level)) + pages_of(level);
	}
	/* Backward, from the faulting block or the window's end. */
	for (g = min(fs, m.end); g > m.start;) {
		if (m.mapped[g - 1] || !x86_sim.host[g - 1])
			break;
		level = model_level(g - 1);
		model_map(g - 1, level, true);
		g = ALIGN_DOWN(g - 1, pages_of(level));
	}
}

/* ---- building a case -------------------------------------------------- */

/* Both the simulation and the model start from nothing mapped. */
static void reset(void)
{
	gfn_t lo = min(x86_sim.lo, m.lo), hi = max(x86_sim.hi, m.hi);

	if (hi > lo) {
		memset(x86_sim.mapped + lo, 0, hi - lo);
		memset(m.mapped + lo, 0, hi - lo);
	}
	memset(x86_sim.mapped_2m, 0, sizeof(x86_sim.mapped_2m));
	memset(x86_sim.mapped_1g, 0, sizeof(x86_sim.mapped_1g));
	memset(m.used_2m, 0, sizeof(m.used_2m));
	memset(m.used_1g, 0, sizeof(m.used_1g));
	x86_sim.lo = x86_sim.hi = m.lo = m.hi = 0;
	m.nr_mapped = 0;
	m.levels = 0;
	x86_sim.nr_faults = 0;
	x86_sim.batch_calls = 0;
	x86_sim.batch_mapped = 0;
}

/* Map @gfn at @level in the simulation and the model alike. */
static void premap(gfn_t gfn, int level)
{
	x86_sim_map(gfn, level);
	model_map(gfn, level, false);
}

/*
 * Host pages over [c->host_lo, c->host_hi), block by block of 2 MiB (or
 * 1 GiB for KIND_1G): all 4 KiB pages, 4 KiB with holes, a huge page or
 * nothing.  Then some pages and huge pages already mapped.
 */
static void build_host(struct wcase *c)
{
	gfn_t g, b, first, last;
	int kind, level;

	memset(x86_sim.host + c->host_lo, 0, c->host_hi - c->host_lo);
	for (b = ALIGN_DOWN(c->host_lo, SIM_2M); b < c->host_hi; b += SIM_2M) {
		kind = rnd() % 8;
		if (c->kind == KIND_2M)
			kind = kind < 2 ? kind : kind < 6 ? 5 : kind;
		first = max(b, c->host_lo);
		last = min(b + SIM_2M, c->host_hi);
		if (c->kind == KIND_1G && b / SIM_1G == 1)
			kind = 7;
		for (g = first; g < last; g++) {
			switch (kind) {
			case 0: case 1: case 2:
				level = PG_LEVEL_4K;
				break;
			case 3: case 4:		/* holes */
				level = chance(90) ? PG_LEVEL_4K : 0;
				break;
			case 5:
				level = PG_LEVEL_2M;
				break;
			case 6:
				level = chance(50) ? PG_LEVEL_2M : 0;
				level = g == first ? level : x86_sim.host[first];
				break;
			default:
				level = c->kind == KIND_1G ? PG_LEVEL_1G :
					PG_LEVEL_2M;
				break;
			}
			x86_sim.host[g] = level;
		}
	}

	for (g = c->host_lo; g < c->host_hi; g++) {
		level = x86_sim.host[g];
		if (!level || x86_sim.mapped[g] || level == PG_LEVEL_1G)
			continue;
		if (level == PG_LEVEL_4K && chance(3))
			premap(g, PG_LEVEL_4K);
		else if (level == PG_LEVEL_2M && g % SIM_2M == 0 && chance(20) &&
			 !x86_sim_block_used(g, PG_LEVEL_2M))
			premap(g, PG_LEVEL_2M);
		else if (level == PG_LEVEL_2M && g % SIM_2M == 0 && chance(10) &&
			 !x86_sim_block_used(g, PG_LEVEL_2M))
			/* A page table in a huge page's block. */
			premap(g + rnd_in(0, min_t(u64, SIM_2M, c->host_hi - g) - 1),
			       PG_LEVEL_4K);
	}
	/* In half the 1 GiB cases, a page table in the 1 GiB page. */
	if (c->kind == KIND_1G && chance(50))
		premap(SIM_1G + rnd_in(0, SIM_1G - 1), PG_LEVEL_4K);
}

/* A frame the guest can fault on: present on the host, not mapped. */
static bool pick_fault(struct wcase *c, gfn_t lo, gfn_t hi)
{
	int tries, level;

	for (tries = 0; tries < 200; tries++) {
		gfn_t g = rnd_in(lo, hi - 1);

		if (!x86_sim.host[g] || x86_sim.mapped[g])
			continue;
		/* The guest fault maps at the host's level, or smaller. */
		level = x86_sim.host[g];
		while (level > PG_LEVEL_4K && x86_sim_block_used(g, level))
			level--;
		if (chance(20))
			level = PG_LEVEL_4K;
		if (ALIGN_DOWN(g, pages_of(level)) < c->base ||
		    ALIGN_DOWN(g, pages_of(level)) + pages_of(level) >
		    c->base + c->npages)
			level = PG_LEVEL_4K;
		c->fault = g;
		c->fault_level = level;
		return true;
	}
	return false;
}

static const u32 vm_nrs[] = { 2, 8, 16, 64, 512, 1000, 4096, 262144 };

/* Where the window lies, for the kinds that place it around the fault. */
static void place_window(struct wcase *c)
{
	u64 step = pages_of(c->fault_level);
	gfn_t fs = ALIGN_DOWN(c->fault, step), off;

	c->wnr = chance(70) ? rnd_in(1, min_t(u64, c->vm_nr, 2048)) :
			      rnd_in(1, 4096);
	if (chance(20))		/* huge-aligned windows */
		c->wnr = ALIGN(c->wnr, SIM_2M);
	switch (c->kind) {
	case KIND_CONTAINS:
		/* Within what the VM's nr_pages leaves of the window. */
		c->wstart = c->fault -
			    rnd_in(0, min_t(u64, c->wnr, c->vm_nr) - 1);
		break;
	case KIND_ABOVE:
		off = chance(30) ? 1 : rnd_in(1, 3 * SIM_2M);
		c->wstart = c->fault + off;
		break;
	case KIND_BELOW:
		/* It ends at the faulting page or below it. */
		off = chance(30) ? 0 : rnd_in(0, 3 * SIM_2M);
		off = min(off, c->fault - 1);
		c->wstart = c->fault - off >= c->wnr ? c->fault - off - c->wnr : 0;
		c->wnr = min_t(u64, c->wnr, c->fault - off - c->wstart);
		break;
	case KIND_STRADDLES:
		/* Over the fault block's start or its end, not the page. */
		if (chance(50)) {
			c->wstart = fs + step - rnd_in(0, min_t(u64, step, c->wnr));
			if (c->wstart <= c->fault)
				c->wstart = c->fault + 1;
		} else {
			c->wstart = fs + rnd_in(0, step) - c->wnr;
			if (c->wstart + c->wnr > c->fault)
				c->wstart = c->fault - c->wnr;
		}
		break;
	case KIND_SLOT_EDGE:
		if (chance(50))
			c->wstart = c->base - rnd_in(0, c->wnr);
		else
			c->wstart = c->base + c->npages - rnd_in(0, c->wnr);
		break;
	case KIND_2M:
		c->wnr = rnd_in(SIM_2M, 4 * SIM_2M);
		if (chance(30))
			c->wnr = ALIGN(c->wnr, SIM_2M);
		c->wstart = c->fault + rnd_in(0, 2 * c->wnr) - c->wnr;
		if (chance(30))
			c->wstart = ALIGN_DOWN(c->wstart, SIM_2M);
		break;
	case KIND_1G:
		c->wstart = SIM_1G - rnd_in(0, 2 * SIM_2M);
		if (chance(30))
			c->wstart = SIM_1G;
		c->wnr = chance(50) ? SIM_1G : rnd_in(1, SIM_1G);
		break;
	}
	if (c->wstart > SIM_PAGES)	/* wrapped below 0 */
		c->wstart = 0;
}

static bool build_case(struct wcase *c, enum kind kind, int nr)
{
	memset(c, 0, sizeof(*c));
	c->kind = kind;
	c->nr = nr;
	reset();
	if (kind == KIND_1G) {
		c->base = 0;
		c->npages = SIM_PAGES;
		c->vm_nr = KVM_PREFETCH_MAX_PAGES;
	} else {
		c->base = rnd_in(HOST_MARGIN + 3 * SIM_2M, SIM_1G);
		if (chance(30))
			c->base = ALIGN_DOWN(c->base, SIM_2M);
		c->npages = chance(20) ? rnd_in(1, 64) : rnd_in(64, 8192);
		if (kind == KIND_2M)
			c->npages = rnd_in(4 * SIM_2M, 16 * SIM_2M);
		c->vm_nr = vm_nrs[rnd() % (ARRAY_SIZE(vm_nrs) - 1)];
		if (kind == KIND_2M)
			c->vm_nr = vm_nrs[ARRAY_SIZE(vm_nrs) - 1 - rnd() % 3];
	}
	c->host_lo = c->base > HOST_MARGIN ? c->base - HOST_MARGIN : 0;
	c->host_hi = min_t(u64, c->base + c->npages + HOST_MARGIN, SIM_PAGES);
	build_host(c);

	if (kind == KIND_1G) {
		if (!pick_fault(c, SIM_1G - 4 * SIM_2M, SIM_1G))
			return false;
	} else if (kind == KIND_SLOT_EDGE && chance(50)) {
		if (!pick_fault(c, c->base,
				c->base + min_t(u64, c->npages, 16)) &&
		    !pick_fault(c, c->base, c->base + c->npages))
			return false;
	} else if (!pick_fault(c, c->base, c->base + c->npages)) {
		return false;
	}
	place_window(c);

	c->batch = chance(50);
	switch (rnd() % 3) {
	case 0:
		c->batch_until = 0;
		break;
	case 1:
		c->batch_until = rnd_in(c->fault, c->fault + 4096);
		break;
	default:
		c->batch_until = ~0ULL;
		break;
	}
	return true;
}

/* ---- running it --------------------------------------------------------- */

static void print_case(const struct wcase *c)
{
	printf("# seed %#llx, %s case %d: memslot [%#llx, %#llx), fault %#llx at level %d, window [%#llx, +%u), VM nr_pages %u, %s engine",
	       (unsigned long long)seed, kind_names[c->kind], c->nr,
	       (unsigned long long)c->base,
	       (unsigned long long)(c->base + c->npages),
	       (unsigned long long)c->fault, c->fault_level,
	       (unsigned long long)c->wstart, c->wnr, c->vm_nr,
	       c->batch ? "batch" : "fault");
	if (c->batch)
		printf(" up to %#llx", (unsigned long long)c->batch_until);
	printf("; clipped window [%#llx, %#llx)\n",
	       (unsigned long long)m.start, (unsigned long long)m.end);
}

struct tally {
	int cases, failed, outside, over_nr;
	u64 worst_outside;		/* most pages mapped outside in a case */
	int huge[PG_LEVEL_1G + 1];	/* cases that mapped at each level */
	int batched;			/* cases where the batch mapped some */
};

/* Run @c; compare with the model.  Return false (and say why) if it differs. */
static bool run_case(struct wcase *c, struct tally *t, bool verbose)
{
	struct kvm_page_fault f = {
		.addr = gfn_to_gpa(c->fault), .error_code = 0x6,
		.prefetch_type = KVM_PREFETCH_GUEST_FAULT, .is_tdp = true,
		.goal_level = c->fault_level, .gfn = c->fault, .slot = &slot,
	};
	u64 windows0 = vcpu.stat.prefetch_windows;
	u64 mapped0 = vcpu.stat.prefetch_mapped, got, outside = 0;
	gfn_t lo, hi, g, bad = ~0ULL;
	int level;
	bool ok;

	slot.base_gfn = c->base;
	slot.npages = c->npages;
	if (vm_set(vcpu.kvm, "test", c->vm_nr, 0))
		test_fail(__FILE__, __LINE__, "set nr_pages %u", c->vm_nr);
	prefetch_engine = c->batch ? PREFETCH_ENGINE_BATCH :
				     PREFETCH_ENGINE_FAULT;
	x86_sim.batch_until = c->batch_until;
	rec.window_ret = true;
	rec.window_out = (struct kvm_prefetch_window){ c->wstart, c->wnr };

	/*
	 * Each case is a first window: the vCPU has no record of earlier
	 * ones (the model has no back-off; tests/vm/prefetch_backoff.c
	 * checks it).
	 */
	memset(&x86_sim_backoff, 0, sizeof(x86_sim_backoff));

	/* The guest fault, then the engine; the model does the same. */
	premap(c->fault, c->fault_level);
	model_walk(c);
	kvm_mmu_prefetch(&vcpu, &f);

	got = vcpu.stat.prefetch_mapped - mapped0;
	lo = min(x86_sim.lo, m.lo);
	hi = max(x86_sim.hi, m.hi);
	for (g = lo; g < hi; g++) {
		if (x86_sim.mapped[g] != m.mapped[g] && bad == ~0ULL)
			bad = g;
		if (x86_sim.mapped[g] && !m.mapped[g] &&
		    (g < m.start || g >= m.end))
			outside++;
	}
	ok = bad == ~0ULL && got == m.nr_mapped &&
	     vcpu.stat.prefetch_windows - windows0 == m.window;

	t->cases++;
	for (level = PG_LEVEL_4K; level <= PG_LEVEL_1G; level++)
		if (m.levels & BIT(level))
			t->huge[level]++;
	if (x86_sim.batch_mapped)
		t->batched++;
	if (outside) {
		t->outside++;
		t->worst_outside = max(t->worst_outside, outside);
	}
	if (got > c->vm_nr)
		t->over_nr++;
	if (ok)
		return true;
	if (t->failed++ < 3 || verbose) {
		print_case(c);
		printf("#   prefetch_mapped %llu (model %llu), prefetch_windows +%llu (model %d), %llu pages mapped outside the window",
		       (unsigned long long)got,
		       (unsigned long long)m.nr_mapped,
		       (unsigned long long)(vcpu.stat.prefetch_windows -
					    windows0), m.window,
		       (unsigned long long)outside);
		if (bad != ~0ULL)
			printf(", first difference at %#llx: level %d (model %d)",
			       (unsigned long long)bad, x86_sim.mapped[bad],
			       m.mapped[bad]);
		printf("\n");
	}
	return false;
}

static void run_kind(enum kind kind, int nr_cases)
{
	struct tally t = { 0 };
	struct wcase c;
	int i, built = 0;

	for (i = 0; built < nr_cases && i < 4 * nr_cases; i++) {
		if (!build_case(&c, kind, built))
			continue;
		built++;
		run_case(&c, &t, false);
	}
	reset();
	printf("# %s: %d cases (4 KiB/2 MiB/1 GiB mappings in %d/%d/%d, batched %d), %d differ from the model, %d map pages outside the window (at most %llu in one), %d map more than nr_pages\n",
	       kind_names[kind], t.cases, t.huge[PG_LEVEL_4K],
	       t.huge[PG_LEVEL_2M], t.huge[PG_LEVEL_1G], t.batched, t.failed,
	       t.outside, (unsigned long long)t.worst_outside, t.over_nr);
	if (built < nr_cases)
		test_fail(__FILE__, __LINE__, "built %d cases of %d", built,
			  nr_cases);
	if (t.failed)
		test_fail(__FILE__, __LINE__,
			  "%d of %d cases differ from the model (seed %#llx)",
			  t.failed, t.cases, (unsigned long long)seed);
}

static void setup(void)
{
	const char *env = getenv("KVM_PREFETCH_WALK_SEED");
	struct kvm *kvm;

	seed = env ? strtoull(env, NULL, 0) : DEFAULT_SEED;
	rng = seed | 1;
	fixture_setup(true);
	memset(&x86_sim, 0, sizeof(x86_sim));
	memset(&m, 0, sizeof(m));
	x86_sim.fault_type = KVM_PREFETCH_AUTO;
	x86_sim.max_gfn = SIM_PAGES - 1;
	tdp_enabled = true;
	slot = (struct kvm_memory_slot){
		.userspace_addr = 0x7f0000000000UL, .id = 1,
	};
	x86_sim.slot = &slot;
	mmu = (struct kvm_mmu){
		.page_fault = kvm_tdp_page_fault, .tdp_mmu_root = true,
	};
	if (kvm_prefetch_register(&test_ops))
		test_fail(__FILE__, __LINE__, "register the test policy");
	kvm = vm_create();
	memset(&x86_sim_backoff, 0, sizeof(x86_sim_backoff));
	vcpu = (struct kvm_vcpu){ .kvm = kvm, .arch.mmu = &mmu,
				  .arch.prefetch_batch = X86_SIM_BATCH };
}

static void teardown(void)
{
	prefetch_engine = PREFETCH_ENGINE_BATCH;
	vms_destroy_all();
	registry_reset();
}

TEST(window_contains_fault)	{ run_kind(KIND_CONTAINS, CASES); }
TEST(window_above_fault)	{ run_kind(KIND_ABOVE, CASES); }
TEST(window_below_fault)	{ run_kind(KIND_BELOW, CASES); }
TEST(window_straddles_fault_block) { run_kind(KIND_STRADDLES, CASES); }
TEST(window_crosses_memslot_edge) { run_kind(KIND_SLOT_EDGE, CASES); }
TEST(window_over_2m_host_pages)	{ run_kind(KIND_2M, CASES); }
TEST(window_over_1g_host_pages)	{ run_kind(KIND_1G, CASES_1G); }

/* The model itself, on cases worked out by hand. */
TEST(model_by_hand)
{
	struct wcase c = {
		.base = 0x1000, .npages = 0x1000, .fault = 0x1400,
		.fault_level = PG_LEVEL_4K, .wstart = 0x1800, .wnr = 16,
		.vm_nr = 4096,
	};
	gfn_t g;

	reset();
	for (g = 0x1000; g < 0x2000; g++)
		x86_sim.host[g] = PG_LEVEL_4K;
	model_walk(&c);
	ASSERT_EQ(m.nr_mapped, 16);
	ASSERT_EQ(m.lo, 0x1800);
	ASSERT_EQ(m.hi, 0x1810);

	/* Below the fault, the first mapped page ends the backward scan. */
	reset();
	premap(0x1308, PG_LEVEL_4K);
	c.wstart = 0x1300;
	model_walk(&c);
	ASSERT_EQ(m.nr_mapped, 7);

	/* A 2 MiB host page inside the window is one mapping; one that is
	 * not wholly inside is mapped 4 KiB by 4 KiB. */
	reset();
	for (g = 0x1600; g < 0x1800; g++)
		x86_sim.host[g] = PG_LEVEL_2M;
	c.wstart = 0x1600;
	c.wnr = 0x210;
	model_walk(&c);
	ASSERT_EQ(m.nr_mapped, 0x210);
	ASSERT_EQ(m.mapped[0x1600], PG_LEVEL_2M);
	ASSERT_EQ(m.mapped[0x1800], PG_LEVEL_4K);
	reset();
	c.wstart = 0x1601;
	c.wnr = 0x200;
	model_walk(&c);
	ASSERT_EQ(m.nr_mapped, 0x200);
	ASSERT_EQ(m.mapped[0x1601], PG_LEVEL_4K);
	ASSERT_EQ(m.mapped[0x1600], 0);
	for (g = 0x1000; g < 0x2000; g++)
		x86_sim.host[g] = 0;
	reset();
}

int main(void)
{
	return test_run_all(setup, teardown);
}
