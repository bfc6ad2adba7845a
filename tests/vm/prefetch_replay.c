// SPDX-License-Identifier: GPL-2.0
/*
 * prefetch_replay - KVM records the order in which the guest first
 * touches its pages (KVM_PREFETCH_ORDER: RECORD_START/STOP/READ), and the
 * replay policy maps the recorded order on later faults (REPLAY_LOAD),
 * checked exactly against a model, with each engine.
 *
 *  1. Recording: the guest touches 256 pages of 8 MiB in a shuffled
 *     order (some twice, some in runs of consecutive pages) under none:
 *     the order read out is exactly the first touches, coalesced into
 *     runs; a READ with too small a buffer gives -E2BIG and the size; a
 *     recording bounded to 8 runs keeps 8, flags itself truncated and
 *     counts the rest dropped; a memslot added after the start is not
 *     recorded (dropped); pages that fault again after a zap are not
 *     recorded again; under auto (window 16) a prefetched page the
 *     guest used is recorded at STOP and an unused one is not.
 *  2. Replay: a new VM loads the order and runs the same touches with
 *     replay at a budget of 64 pages: the guest faults once per 64
 *     recorded pages, the replay maps the rest, replay_pos reaches the
 *     end, and every page reads its own gfn (no wrong mapping); a run of
 *     2048 pages takes one fault per 64 of them.  Pages
 *     the host does not have stop the replay where they start, until the
 *     guest faults them in.  Runs in other memslots than the fault's are
 *     mapped in their own; a dirty-logged memslot's are stepped over.
 *  3. Bad input: malformed operations and orders get their errno; an
 *     order with runs outside any memslot, duplicates, unsorted runs, a
 *     run across the memslot's end and a run at the top of the gfn space
 *     maps only what the model says.
 *  4. Fuzz: random orders (outside, straddling, duplicate, 4096-page
 *     runs, far gfns) and budgets, random guest touches: faults, pages
 *     mapped and replay_pos are the model's in every case; a thread
 *     reading a recording while the guest writes it sees a valid prefix
 *     every time; a thread loading orders while the vCPU runs breaks
 *     nothing.
 *
 * Every replay of 2 to 4 is also checked leaf by leaf, as prefetch_fuzz
 * checks a hostile policy: the kvm_tdp_mmu_spte_changed trace event gives
 * every SPTE KVM wrote; the pages of the memslot mapped must be exactly
 * the model's, each on the pfn /proc/self/pagemap gives for its page, and
 * no leaf may go anywhere but the memslot and the touch program's.
 *
 * kp.replay.seed=N and kp.replay.cases=N replace the fuzz's defaults.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include "kvmtest.h"
#include "kt_sys.h"
#include "replay_model.h"

#define ENGINE_PATH	KTSYS_P_ENGINE
#define EVENT		"kvmmmu/kvm_tdp_mmu_spte_changed"
#define SLOT		1
#define SLOT2		2
#define GPA		0x40000000ULL
#define GFN0		(GPA >> 12)
#define SIZE		(8ULL << 20)
#define PAGES		(SIZE / KT_PAGE_SIZE)
#define GPA2		(GPA + SIZE + (1ULL << 20))	/* a hole, then slot 2 */
#define SIZE2		(1ULL << 20)
#define TOUCHES		256
#define BUDGET		64

static const char *const engines[] = { "fault", "batch" };

/* ---- helpers ------------------------------------------------------ */

static int order_op(struct kt_vm *vm, struct kvm_prefetch_order_op *op)
{
	return ioctl(vm->fd, KVM_PREFETCH_ORDER, op) ? -errno : 0;
}

static int simple_op(struct kt_vm *vm, uint32_t what,
		     struct kvm_prefetch_order_op *out)
{
	struct kvm_prefetch_order_op op = { .op = what };
	int r = order_op(vm, &op);

	if (out)
		*out = op;
	return r;
}

/* The recording as an order blob (malloc'ed); *@size its size. */
static struct kvm_prefetch_order *order_read(struct kt_vm *vm, uint64_t *size)
{
	struct kvm_prefetch_order_op op = { .op = KVM_PREFETCH_RECORD_READ };
	struct kvm_prefetch_order *o;
	int r = order_op(vm, &op);

	KT_ASSERT(r == -E2BIG && op.size >= sizeof(*o),
		  "READ with no buffer: -E2BIG and the size (%d, %llu)", r,
		  (unsigned long long)op.size);
	o = malloc(op.size + 64 * 8);	/* room for runs appended meanwhile */
	KT_ASSERT(o, "malloc");
	op.addr = (uintptr_t)o;
	op.size += 64 * 8;
	r = order_op(vm, &op);
	KT_ASSERT(!r, "READ (%d)", r);
	*size = op.size;
	return o;
}

static int order_load(struct kt_vm *vm, const struct kvm_prefetch_order *o,
		      uint64_t size)
{
	struct kvm_prefetch_order_op op = {
		.op = KVM_PREFETCH_REPLAY_LOAD, .addr = (uintptr_t)o,
		.size = size,
	};

	return order_op(vm, &op);
}

/* An order of @n runs, with its header. */
static struct kvm_prefetch_order *order_new(const uint64_t *runs, uint64_t n,
					    uint64_t *size)
{
	struct kvm_prefetch_order *o;
	uint64_t i;

	*size = sizeof(*o) + n * 8;
	o = calloc(1, *size);
	KT_ASSERT(o, "calloc");
	o->magic = KVM_PREFETCH_ORDER_MAGIC;
	o->version = KVM_PREFETCH_ORDER_VERSION;
	o->nr_runs = n;
	o->mem_pages = PAGES;
	for (i = 0; i < n; i++) {
		o->runs[i] = runs[i];
		o->nr_pages += KVM_PREFETCH_RUN_PAGES(runs[i]);
	}
	return o;
}

/* Write each page's gfn into its first dword: a read proves the mapping. */
static void fill_gfns(char *mem, uint64_t gpa, uint64_t size)
{
	uint64_t off;

	for (off = 0; off < size; off += KT_PAGE_SIZE)
		*(uint32_t *)(mem + off) = (uint32_t)((gpa + off) >> 12);
}

/* The guest reads page @gfn; it must read its own gfn. */
static bool touch(struct kt_vcpu *vcpu, uint64_t gfn)
{
	uint32_t gpa = (uint32_t)(gfn << 12);

	return kt_touch(vcpu, gpa, gpa + KT_PAGE_SIZE, KT_PAGE_SIZE,
			KT_TOUCH_READ) == (uint32_t)gfn;
}

/* The pages of @vm's memslots: @size of ours, the touch program's. */
static uint64_t mem_pages(struct kt_vm *vm, uint64_t size)
{
	return (size + vm->code_size) / KT_PAGE_SIZE;
}

/* The bound of a recording, and of an order, for @vm. */
static uint64_t max_runs(struct kt_vm *vm, uint64_t size)
{
	uint64_t m = mem_pages(vm, size);

	return m / 2 - m / 64;
}

static struct kt_vm *vm_new(struct kt_vcpu **vcpu, uint64_t size)
{
	struct kt_vm *vm = kt_vm_populated(SLOT, GPA, size, 0, vcpu);

	fill_gfns(kt_vm_gpa_to_hva(vm, GPA), GPA, size);
	return vm;
}

static uint64_t rnd_state;

static uint64_t rnd(void)
{
	return replay_rnd(&rnd_state);
}

struct counts {
	uint64_t pf, mapped;
};

static struct counts counts(struct kt_vcpu *vcpu)
{
	return (struct counts) {
		.pf = kt_vcpu_stat_get(vcpu, "pf_fixed"),
		.mapped = kt_vcpu_stat_get(vcpu, "prefetch_mapped"),
	};
}

/* ---- the leaves KVM wrote ------------------------------------------ */

struct leaves {
	uint64_t spte[REPLAY_MODEL_PAGES];
	uint8_t level[REPLAY_MODEL_PAGES];
	uint64_t npages, code_pages;
	long lost, outside;
};

static void leaf_line(const char *line, void *arg)
{
	struct leaves *l = arg;
	struct ktsys_spte_change c;

	if (!ktsys_spte_parse(line, &c, &l->lost))
		return;
	if ((c.new_spte & KTSYS_SPTE_PRESENT) &&
	    (c.level == 1 || (c.new_spte & KTSYS_SPTE_LARGE)) &&
	    c.gfn >= l->code_pages &&
	    (c.gfn < GFN0 || c.gfn >= GFN0 + l->npages))
		l->outside++;
	ktsys_spte_apply(&c, GFN0, l->npages, l->spte, l->level);
}

/*
 * The leaves of the trace since ktsys_trace_begin() against @m: the
 * number of differences, the first one described in @what.
 */
static unsigned int leaves_check(struct kt_vm *vm,
				 const struct replay_model *m,
				 char *what, size_t len)
{
	static uint64_t pm[REPLAY_MODEL_PAGES];
	static struct leaves l;
	unsigned int bad = 0;
	uint64_t i, pfn;
	long r;

	memset(&l, 0, sizeof(l));
	l.npages = m->npages;
	l.code_pages = vm->code_size / KT_PAGE_SIZE;
	r = ktsys_trace_lines(EVENT, leaf_line, &l);
	KT_ASSERT(r >= 0, "trace of %s: %ld", EVENT, r);
	ktsys_pagemap(kt_vm_gpa_to_hva(vm, GPA), m->npages, pm);
	snprintf(what, len, "every leaf the model's");
	for (i = 0; i < m->npages; i++) {
		if (!l.level[i] != !m->mapped[i]) {
			if (!bad++)
				snprintf(what, len, "page %llu %s",
					 (unsigned long long)i, l.level[i] ?
					 "mapped, not in the model" :
					 "not mapped, in the model");
			continue;
		}
		if (!l.level[i])
			continue;
		pfn = ktsys_leaf_pfn(l.spte[i], l.level[i], i);
		if (pfn != ktsys_pagemap_pfn(pm[i]) && !bad++)
			snprintf(what, len, "page %llu on pfn %#llx, the host's is %#llx",
				 (unsigned long long)i, (unsigned long long)pfn,
				 (unsigned long long)ktsys_pagemap_pfn(pm[i]));
	}
	if (l.outside && !bad++)
		snprintf(what, len, "%ld leaves outside the memslot", l.outside);
	if (l.lost && !bad++)
		snprintf(what, len, "the trace lost events (%ld)", l.lost);
	return bad;
}

/*
 * A VM of @size bytes with policy replay at @budget and the order @runs
 * loaded; the guest touches @t; the faults, the pages mapped and
 * replay_pos must be the model's, every touch must read its gfn, and the
 * leaves KVM wrote must be the model's pages on the host's pfns.
 */
static void replay_check(const char *what, const uint64_t *runs, uint64_t nr,
			 const uint64_t *t, unsigned int n, uint32_t budget,
			 uint64_t size, bool quiet)
{
	static struct replay_model m;
	struct kvm_prefetch_order_op st;
	struct kvm_prefetch_order *o;
	struct counts c0, c1;
	struct kt_vcpu *vcpu;
	struct kt_vm *vm;
	uint64_t osize;
	unsigned int i, bad = 0, sbad;
	char leaf[96];
	int r;

	vm = vm_new(&vcpu, size);
	KT_ASSERT(!ktsys_set_policy(vm->fd, "replay", budget,
				    KVM_PREFETCH_GUP_NOFAULT), "SET replay");
	o = order_new(runs, nr, &osize);
	r = order_load(vm, o, osize);
	KT_ASSERT(!r, "%s: LOAD (%d)", what, r);
	free(o);

	replay_model_init(&m, GFN0, size / KT_PAGE_SIZE, budget);
	r = ktsys_trace_begin(EVENT);
	KT_ASSERT(!r, "trace event %s: %d", EVENT, r);
	c0 = counts(vcpu);
	for (i = 0; i < n; i++) {
		bad += !touch(vcpu, t[i]);
		replay_model_touch(&m, runs, nr, t[i]);
	}
	c1 = counts(vcpu);
	KT_ASSERT(!simple_op(vm, KVM_PREFETCH_ORDER_STATUS, &st), "STATUS");
	sbad = leaves_check(vm, &m, leaf, sizeof(leaf));
	if (!quiet || bad || sbad || c1.pf - c0.pf != m.faults ||
	    c1.mapped - c0.mapped != m.prefetched ||
	    st.replay_pos != m.pos >> 12)
		KT_EXPECT(!bad && !sbad && c1.pf - c0.pf == m.faults &&
			  c1.mapped - c0.mapped == m.prefetched &&
			  st.replay_pos == m.pos >> 12 &&
			  (st.state & KVM_PREFETCH_STATE_LOADED),
			  "%s: %llu faults, %llu prefetched, pos %llu (model %llu, %llu, %llu), %u wrong reads, SPTEs: %s (%u off)",
			  what, (unsigned long long)(c1.pf - c0.pf),
			  (unsigned long long)(c1.mapped - c0.mapped),
			  (unsigned long long)st.replay_pos,
			  (unsigned long long)m.faults,
			  (unsigned long long)m.prefetched,
			  (unsigned long long)(m.pos >> 12), bad, leaf, sbad);
	kt_vcpu_free(vcpu);
	kt_vm_free(vm);
}

/* ---- 1. recording ------------------------------------------------- */

static uint64_t T[TOUCHES], FIRST[TOUCHES], RUNS[TOUCHES];
static unsigned int NT, NFIRST, NRUNS;

static void record(const char *engine)
{
	struct kvm_prefetch_order_op st;
	struct kvm_prefetch_order *o;
	struct kt_vcpu *vcpu;
	struct kt_vm *vm;
	uint64_t size, i, pages = 0;
	unsigned int k, bad = 0;
	int r;

	vm = vm_new(&vcpu, SIZE);
	r = simple_op(vm, KVM_PREFETCH_RECORD_READ, NULL);
	KT_EXPECT(r == -ENOENT, "%s: READ before any recording: -ENOENT (%d)",
		  engine, r);
	KT_ASSERT(!simple_op(vm, KVM_PREFETCH_RECORD_START, &st), "START");
	KT_EXPECT(st.state == KVM_PREFETCH_STATE_RECORDING &&
		  st.rec_max_runs == max_runs(vm, SIZE),
		  "%s: recording, bound %llu runs (state %#x)", engine,
		  (unsigned long long)st.rec_max_runs, st.state);
	/* A memslot added now is not recorded. */
	fill_gfns(kt_vm_add_slot(vm, SLOT2, GPA2, SIZE2, 0, NULL), GPA2, SIZE2);
	for (k = 0; k < NT; k++)
		bad += !touch(vcpu, T[k]);
	for (k = 0; k < 5; k++)
		bad += !touch(vcpu, (GPA2 >> 12) + k);
	/*
	 * Pages recorded already fault again once their host pages go
	 * (the MMU notifier zaps their SPTEs): not recorded again.
	 */
	for (k = 0; k < 16; k++) {
		char *hva = kt_vm_gpa_to_hva(vm, FIRST[k] << 12);

		KT_ASSERT(!madvise(hva, KT_PAGE_SIZE, MADV_DONTNEED),
			  "DONTNEED");
		*(uint32_t *)hva = (uint32_t)FIRST[k];
	}
	for (k = 0; k < 16; k++)
		bad += !touch(vcpu, FIRST[k]);
	KT_EXPECT(!bad, "%s: every touch read its own gfn", engine);
	KT_ASSERT(!simple_op(vm, KVM_PREFETCH_RECORD_STOP, &st), "STOP");
	KT_EXPECT(st.state == 0 && st.rec_runs == NRUNS &&
		  st.rec_pages == NFIRST && st.rec_dropped == 5,
		  "%s: stopped with %llu runs, %llu pages, %llu dropped (want %u, %u, 5)",
		  engine, (unsigned long long)st.rec_runs,
		  (unsigned long long)st.rec_pages,
		  (unsigned long long)st.rec_dropped, NRUNS, NFIRST);
	o = order_read(vm, &size);
	for (i = 0; i < o->nr_runs && i < NRUNS; i++)
		if (o->runs[i] != RUNS[i])
			break;
	for (k = 0; k < o->nr_runs; k++)
		pages += KVM_PREFETCH_RUN_PAGES(o->runs[k]);
	KT_EXPECT(o->magic == KVM_PREFETCH_ORDER_MAGIC &&
		  o->version == KVM_PREFETCH_ORDER_VERSION &&
		  o->nr_runs == NRUNS && i == NRUNS && o->nr_pages == NFIRST &&
		  pages == NFIRST && o->mem_pages == mem_pages(vm, SIZE) && !o->flags &&
		  size == sizeof(*o) + NRUNS * 8,
		  "%s: the order read out is the first touches, %u runs (%llu match)",
		  engine, NRUNS, (unsigned long long)i);
	free(o);
	/* Touches after STOP are not recorded. */
	touch(vcpu, GFN0 + PAGES - 1);
	KT_ASSERT(!simple_op(vm, KVM_PREFETCH_ORDER_STATUS, &st), "STATUS");
	KT_EXPECT(st.rec_pages == NFIRST, "%s: nothing recorded after STOP",
		  engine);

	kt_vcpu_free(vcpu);
	kt_vm_free(vm);

	/* A bounded recording. */
	vm = vm_new(&vcpu, SIZE);
	KT_ASSERT(!ioctl(vm->fd, KVM_PREFETCH_ORDER,
			 &(struct kvm_prefetch_order_op) {
				.op = KVM_PREFETCH_RECORD_START, .max_runs = 8 }),
		  "START max_runs=8");
	for (k = 0; k < 40; k++)
		touch(vcpu, GFN0 + PAGES - 2 - 2 * k);	/* never coalesced */
	KT_ASSERT(!simple_op(vm, KVM_PREFETCH_RECORD_STOP, &st), "STOP");
	KT_EXPECT(st.rec_runs == 8 && st.rec_pages == 8 &&
		  st.rec_dropped == 32 && st.rec_max_runs == 8 &&
		  st.state == KVM_PREFETCH_STATE_TRUNCATED,
		  "%s: bounded to 8 runs: %llu runs, %llu dropped, state %#x",
		  engine, (unsigned long long)st.rec_runs,
		  (unsigned long long)st.rec_dropped, st.state);
	kt_vcpu_free(vcpu);
	kt_vm_free(vm);

	/* Under auto: a prefetched page used is recorded at STOP. */
	vm = vm_new(&vcpu, SIZE);
	KT_ASSERT(!ktsys_set_policy(vm->fd, "auto", 16,
				    KVM_PREFETCH_GUP_NOFAULT), "SET auto");
	KT_ASSERT(!simple_op(vm, KVM_PREFETCH_RECORD_START, NULL), "START");
	touch(vcpu, GFN0 + 32);		/* a fault, a window of 16 */
	touch(vcpu, GFN0 + 40);		/* prefetched, used */
	touch(vcpu, GFN0 + 64);		/* a fault */
	KT_ASSERT(!simple_op(vm, KVM_PREFETCH_RECORD_STOP, NULL), "STOP");
	o = order_read(vm, &size);
	KT_EXPECT(o->nr_runs == 3 &&
		  o->runs[0] == KVM_PREFETCH_RUN(GFN0 + 32, 1) &&
		  o->runs[1] == KVM_PREFETCH_RUN(GFN0 + 64, 1) &&
		  o->runs[2] == KVM_PREFETCH_RUN(GFN0 + 40, 1),
		  "%s: under auto, the faults in order, then the used prefetched page (%llu runs)",
		  engine, (unsigned long long)o->nr_runs);
	free(o);
	kt_vcpu_free(vcpu);
	kt_vm_free(vm);
}

/* ---- 2. replay ---------------------------------------------------- */

static void replay(const char *engine)
{
	uint64_t runs[TOUCHES], single[TOUCHES];
	struct kvm_prefetch_order_op st;
	struct kvm_prefetch_order *o;
	struct counts c0, c1;
	struct kt_vcpu *vcpu;
	struct kt_vm *vm;
	unsigned int k;
	uint64_t size;
	char what[64];
	char *mem;

	snprintf(what, sizeof(what), "%s: replay of the recording", engine);
	replay_check(what, RUNS, NRUNS, T, NT, BUDGET, SIZE, false);

	/* Single-page runs: one fault per BUDGET pages, exactly. */
	for (k = 0; k < NFIRST; k++)
		single[k] = KVM_PREFETCH_RUN(FIRST[k], 1);
	snprintf(what, sizeof(what), "%s: one-page runs", engine);
	replay_check(what, single, NFIRST, FIRST, NFIRST, BUDGET, SIZE, false);

	/*
	 * A run longer than the budget: each fault goes on where the last
	 * one's budget ended, one fault per 64 pages of it.
	 */
	{
		static uint64_t t[PAGES];
		uint64_t r[] = { KVM_PREFETCH_RUN(GFN0, PAGES) };

		for (k = 0; k < PAGES; k++)
			t[k] = GFN0 + k;
		snprintf(what, sizeof(what), "%s: a run of %llu pages", engine,
			 (unsigned long long)PAGES);
		replay_check(what, r, 1, t, PAGES, BUDGET, SIZE, false);
	}

	/* Pages the host does not have stop the replay. */
	vm = vm_new(&vcpu, SIZE);
	mem = kt_vm_gpa_to_hva(vm, GPA);
	KT_ASSERT(!ktsys_set_policy(vm->fd, "replay", BUDGET,
				    KVM_PREFETCH_GUP_NOFAULT), "SET replay");
	for (k = 0; k < 32; k++)
		runs[k] = KVM_PREFETCH_RUN(GFN0 + 100 + 2 * k, 1);
	/* Runs 10..31 lose their host pages. */
	for (k = 10; k < 32; k++)
		KT_ASSERT(!madvise(mem + (100 + 2 * k) * KT_PAGE_SIZE,
				   KT_PAGE_SIZE, MADV_DONTNEED), "DONTNEED");
	o = order_new(runs, 32, &size);
	KT_ASSERT(!order_load(vm, o, size), "LOAD");
	free(o);
	c0 = counts(vcpu);
	touch(vcpu, GFN0 + 100);
	c1 = counts(vcpu);
	KT_ASSERT(!simple_op(vm, KVM_PREFETCH_ORDER_STATUS, &st), "STATUS");
	KT_EXPECT(c1.pf - c0.pf == 1 && c1.mapped - c0.mapped == 9 &&
		  st.replay_pos == 10 && st.replay_runs == 32,
		  "%s: the replay stops at the first page the host lacks: %llu mapped, pos %llu",
		  engine, (unsigned long long)(c1.mapped - c0.mapped),
		  (unsigned long long)st.replay_pos);
	/* The guest faults it in (a zero page now): the replay goes on. */
	kt_touch(vcpu, (uint32_t)((GFN0 + 120) << 12),
		 (uint32_t)((GFN0 + 120) << 12) + KT_PAGE_SIZE, 0,
		 KT_TOUCH_WRITE);
	KT_ASSERT(!simple_op(vm, KVM_PREFETCH_ORDER_STATUS, &st), "STATUS");
	KT_EXPECT(st.replay_pos == 11,
		  "%s: past it once the guest faulted it in (pos %llu)", engine,
		  (unsigned long long)st.replay_pos);
	kt_vcpu_free(vcpu);
	kt_vm_free(vm);
}

/*
 * Runs in other memslots than the fault's are mapped in their own; a
 * dirty-logged memslot's are stepped over.
 */
static void replay_slots(const char *engine)
{
	const uint64_t g2 = GPA2 >> 12, g3 = (GPA2 + SIZE2) >> 12;
	uint64_t runs[] = {
		KVM_PREFETCH_RUN(g2 + 8, 4),		/* slot 2 */
		KVM_PREFETCH_RUN(g3 + 8, 4),		/* slot 3, dirty-logged */
		KVM_PREFETCH_RUN(GFN0 + 8, 4),		/* slot 1 */
		KVM_PREFETCH_RUN(g2 + 64, 2),		/* slot 2 */
	};
	struct kvm_prefetch_order_op st;
	struct kvm_prefetch_order *o;
	struct counts c0, c1;
	struct kt_vcpu *vcpu;
	struct kt_vm *vm;
	uint64_t size;
	unsigned int k, bad = 0;

	vm = vm_new(&vcpu, SIZE);
	fill_gfns(kt_vm_add_slot(vm, SLOT2, GPA2, SIZE2, 0, NULL), GPA2, SIZE2);
	fill_gfns(kt_vm_add_slot(vm, SLOT2 + 1, GPA2 + SIZE2, SIZE2,
				 KVM_MEM_LOG_DIRTY_PAGES, NULL),
		  GPA2 + SIZE2, SIZE2);
	KT_ASSERT(!ktsys_set_policy(vm->fd, "replay", BUDGET,
				    KVM_PREFETCH_GUP_NOFAULT), "SET replay");
	o = order_new(runs, 4, &size);
	KT_ASSERT(!order_load(vm, o, size), "LOAD");
	free(o);
	c0 = counts(vcpu);
	bad += !touch(vcpu, GFN0 + 100);
	c1 = counts(vcpu);
	KT_ASSERT(!simple_op(vm, KVM_PREFETCH_ORDER_STATUS, &st), "STATUS");
	KT_EXPECT(c1.pf - c0.pf == 1 && c1.mapped - c0.mapped == 10 &&
		  st.replay_pos == 4,
		  "%s: runs mapped in their own memslots, none in a dirty-logged one: %llu mapped, pos %llu",
		  engine, (unsigned long long)(c1.mapped - c0.mapped),
		  (unsigned long long)st.replay_pos);
	/* The runs of slots 1 and 2 take no fault; slot 3's do. */
	for (k = 0; k < 4; k++) {
		bad += !touch(vcpu, g2 + 8 + k);
		bad += !touch(vcpu, GFN0 + 8 + k);
	}
	c0 = counts(vcpu);
	KT_EXPECT(!bad && c0.pf == c1.pf,
		  "%s: the guest reads them without a fault (%llu faults)",
		  engine, (unsigned long long)(c0.pf - c1.pf));
	kt_vcpu_free(vcpu);
	kt_vm_free(vm);
}

/* ---- 3. bad input ------------------------------------------------- */

static void bad_op(struct kt_vm *vm, const char *what,
		   struct kvm_prefetch_order_op op, int want)
{
	int r = order_op(vm, &op);

	KT_EXPECT(r == want, "%s: %s (%d)", what, strerror(-want), r);
}

static void bad_order(struct kt_vm *vm, const char *what,
		      struct kvm_prefetch_order *o, uint64_t size, int want)
{
	int r = order_load(vm, o, size);

	KT_EXPECT(r == want, "LOAD %s: %s (%d)", what, strerror(-want), r);
}

static void bad_input(void)
{
	uint64_t runs[8] = {
		KVM_PREFETCH_RUN(GFN0 + 1, 2), KVM_PREFETCH_RUN(GFN0 + 9, 1),
	};
	struct kvm_prefetch_order_op st;
	struct kvm_prefetch_order *o;
	struct kt_vcpu *vcpu;
	struct kt_vm *vm;
	uint64_t size, *big, max;

	vm = vm_new(&vcpu, SIZE);
	bad_op(vm, "unknown operation", (struct kvm_prefetch_order_op){ .op = 99 }, -EINVAL);
	bad_op(vm, "operation 0", (struct kvm_prefetch_order_op){ .op = 0 }, -EINVAL);
	bad_op(vm, "flags", (struct kvm_prefetch_order_op){
		.op = KVM_PREFETCH_ORDER_STATUS, .flags = 1 }, -EINVAL);
	bad_op(vm, "pad", (struct kvm_prefetch_order_op){
		.op = KVM_PREFETCH_ORDER_STATUS, .pad = 1 }, -EINVAL);
	bad_op(vm, "reserved", (struct kvm_prefetch_order_op){
		.op = KVM_PREFETCH_ORDER_STATUS, .reserved[2] = 1 }, -EINVAL);
	bad_op(vm, "max_runs but for START", (struct kvm_prefetch_order_op){
		.op = KVM_PREFETCH_RECORD_STOP, .max_runs = 1 }, -EINVAL);
	KT_EXPECT(ioctl(vm->fd, KVM_PREFETCH_ORDER, (void *)8) && errno == EFAULT,
		  "a bad argument pointer: EFAULT");

	o = order_new(runs, 2, &size);
	bad_order(vm, "from a NULL address", NULL, size, -EFAULT);
	bad_order(vm, "shorter than its header", o, 8, -EINVAL);
	bad_order(vm, "of a wrong size", o, size + 8, -EINVAL);
	o->magic++;
	bad_order(vm, "with a wrong magic", o, size, -EINVAL);
	o->magic--;
	o->version = 2;
	bad_order(vm, "of version 2", o, size, -EINVAL);
	o->version = KVM_PREFETCH_ORDER_VERSION;
	o->flags = 2;
	bad_order(vm, "with unknown flags", o, size, -EINVAL);
	o->flags = 0;
	o->reserved[1] = 1;
	bad_order(vm, "with reserved set", o, size, -EINVAL);
	o->reserved[1] = 0;
	o->nr_pages++;
	bad_order(vm, "whose pages do not add up", o, size, -EINVAL);
	o->nr_pages--;
	o->runs[1] = KVM_PREFETCH_RUN((1ULL << KVM_PREFETCH_RUN_GFN_BITS) - 2, 3);
	o->nr_pages = 5;
	bad_order(vm, "with a run past gfn 2^52", o, size, -EINVAL);
	free(o);
	KT_ASSERT(!simple_op(vm, KVM_PREFETCH_ORDER_STATUS, &st), "STATUS");
	KT_EXPECT(!(st.state & KVM_PREFETCH_STATE_LOADED),
		  "no bad order was loaded (state %#x)", st.state);

	/* More runs than the bound: -E2BIG, before anything is copied. */
	max = max_runs(vm, SIZE);
	big = calloc(max + 1, 8);
	KT_ASSERT(big, "calloc");
	for (size = 0; size <= max; size++)
		big[size] = KVM_PREFETCH_RUN(GFN0, 1);
	o = order_new(big, max, &size);
	KT_EXPECT(!order_load(vm, o, size), "LOAD at the bound, %llu runs",
		  (unsigned long long)max);
	free(o);
	o = order_new(big, max + 1, &size);
	bad_order(vm, "longer than the bound", o, size, -E2BIG);
	o->nr_runs = 1ULL << 60;
	bad_order(vm, "of 2^60 runs", o, size, -E2BIG);
	free(o);
	free(big);
	KT_ASSERT(!simple_op(vm, KVM_PREFETCH_ORDER_STATUS, &st), "STATUS");
	KT_EXPECT(st.replay_runs == max,
		  "an order refused leaves the loaded one (%llu runs)",
		  (unsigned long long)st.replay_runs);
	kt_vcpu_free(vcpu);
	kt_vm_free(vm);

	/*
	 * Outside any memslot (below, in the hole, far above), duplicates,
	 * unsorted, across the memslot's end, at the top of the gfn space.
	 */
	{
		uint64_t r[] = {
			KVM_PREFETCH_RUN(GFN0 - 8, 4),
			KVM_PREFETCH_RUN(GFN0 + 50, 3),
			KVM_PREFETCH_RUN(GFN0 + 50, 3),
			KVM_PREFETCH_RUN(GFN0 + 20, 2),
			KVM_PREFETCH_RUN(GFN0 + 4, 1),
			KVM_PREFETCH_RUN(GFN0 + PAGES - 2, 8),
			KVM_PREFETCH_RUN(GFN0 + PAGES + 16, 4),
			KVM_PREFETCH_RUN((1ULL << KVM_PREFETCH_RUN_GFN_BITS) - 4096, 4096),
			KVM_PREFETCH_RUN(GFN0 + 60, 1),
		};
		uint64_t t[] = { GFN0 + 200, GFN0 + 60, GFN0 + 4, GFN0 + 300 };

		replay_check("outside, duplicate, unsorted and straddling runs",
			     r, sizeof(r) / 8, t, 4, 8192, SIZE, false);
		replay_check("the same at a budget of 5", r, sizeof(r) / 8, t,
			     4, 5, SIZE, false);
	}
	/* An order of a VM four times this one's size. */
	{
		static uint64_t r[512];
		uint64_t t[] = { GFN0 + 1, GFN0 + 2000, GFN0 + 700 };
		unsigned int k;

		for (k = 0; k < 512; k++)
			r[k] = KVM_PREFETCH_RUN(GFN0 + (k * 61) % (4 * PAGES), 1);
		replay_check("an order of a VM four times larger", r, 512, t, 3,
			     256, SIZE, false);
	}
}

/* ---- 4. fuzz and races -------------------------------------------- */

#define FZ_SIZE		(2ULL << 20)
#define FZ_PAGES	(FZ_SIZE / KT_PAGE_SIZE)

static void fuzz(unsigned long seed, unsigned long cases)
{
	static const uint32_t budgets[] = { 2, 3, 7, 64, 512, 2048 };
	static uint64_t runs[256], t[64];
	unsigned long c, fails = 0;
	char what[96];

	for (c = 0; c < cases; c++) {
		unsigned int nr, nt, k;
		uint32_t budget;

		rnd_state = seed * 0x9e3779b97f4a7c15ULL + c + 1;
		nr = 1 + rnd() % 200;
		nt = 1 + rnd() % 64;
		budget = budgets[rnd() % 6];
		for (k = 0; k < nr; k++) {
			unsigned int kind = rnd() % 16;
			uint64_t g, p = 1 + rnd() % 8;

			if (kind == 0)		/* outside, below */
				g = GFN0 - 1 - rnd() % 64;
			else if (kind == 1)	/* across the end */
				g = GFN0 + FZ_PAGES - 1 - rnd() % 4;
			else if (kind == 2)	/* a long run */
				g = GFN0 + rnd() % FZ_PAGES,
				p = KVM_PREFETCH_RUN_MAX_PAGES;
			else if (kind == 3)	/* far */
				g = (1ULL << KVM_PREFETCH_RUN_GFN_BITS) - p -
				    rnd() % 1024;
			else if (kind == 4 && k)	/* a duplicate */
				g = KVM_PREFETCH_RUN_GFN(runs[rnd() % k]);
			else
				g = GFN0 + rnd() % FZ_PAGES;
			runs[k] = KVM_PREFETCH_RUN(g, p);
		}
		for (k = 0; k < nt; k++)
			t[k] = GFN0 + rnd() % FZ_PAGES;
		snprintf(what, sizeof(what),
			 "fuzz seed %lu case %lu (%u runs, budget %u, %u touches)",
			 seed, c, nr, budget, nt);
		{
			long before = kt_failures();

			replay_check(what, runs, nr, t, nt, budget, FZ_SIZE, true);
			fails += kt_failures() != before;
		}
	}
	KT_EXPECT(!fails, "fuzz: %lu cases of seed %lu match the model (%lu failed)",
		  cases, seed, fails);
}

struct reader {
	struct kt_vm *vm;
	volatile int stop;
	unsigned long reads, bad;
};

/* A recording read while it is written: always a valid prefix. */
static void *reader_fn(void *arg)
{
	struct reader *rd = arg;
	static uint64_t buf[(sizeof(struct kvm_prefetch_order) / 8) + TOUCHES + 64];
	struct kvm_prefetch_order *o = (void *)buf;
	uint64_t k, pages;

	while (!rd->stop) {
		struct kvm_prefetch_order_op op = {
			.op = KVM_PREFETCH_RECORD_READ, .addr = (uintptr_t)buf,
			.size = sizeof(buf),
		};

		if (order_op(rd->vm, &op)) {
			rd->bad++;
			continue;
		}
		rd->reads++;
		pages = 0;
		for (k = 0; k < o->nr_runs; k++) {
			pages += KVM_PREFETCH_RUN_PAGES(o->runs[k]);
			/* Final runs are the model's; the last may be shorter. */
			if (k + 1 < o->nr_runs ? o->runs[k] != RUNS[k] :
			    KVM_PREFETCH_RUN_GFN(o->runs[k]) !=
			    KVM_PREFETCH_RUN_GFN(RUNS[k]) ||
			    KVM_PREFETCH_RUN_PAGES(o->runs[k]) >
			    KVM_PREFETCH_RUN_PAGES(RUNS[k]))
				rd->bad++;
		}
		if (pages != o->nr_pages || o->nr_runs > NRUNS)
			rd->bad++;
	}
	return NULL;
}

struct loader {
	struct kt_vm *vm;
	volatile int stop;
	unsigned long loads, bad;
};

static void *loader_fn(void *arg)
{
	struct loader *ld = arg;
	uint64_t runs[64], size, k, i = 0;
	struct kvm_prefetch_order *o;

	while (!ld->stop) {
		for (k = 0; k < 64; k++)
			runs[k] = KVM_PREFETCH_RUN(GFN0 + (i * 131 + k * 17) % PAGES,
						   1 + k % 4);
		o = order_new(runs, 64, &size);
		if (order_load(ld->vm, o, size))
			ld->bad++;
		ld->loads++;
		free(o);
		i++;
	}
	return NULL;
}

static void races(void)
{
	struct kt_vcpu *vcpu;
	struct kt_vm *vm;
	struct reader rd = {};
	struct loader ld = {};
	pthread_t th;
	unsigned int k, bad = 0;

	vm = vm_new(&vcpu, SIZE);
	rd.vm = vm;
	KT_ASSERT(!simple_op(vm, KVM_PREFETCH_RECORD_START, NULL), "START");
	KT_ASSERT(!pthread_create(&th, NULL, reader_fn, &rd), "reader");
	for (k = 0; k < NT; k++)
		bad += !touch(vcpu, T[k]);
	rd.stop = 1;
	KT_ASSERT(kt_join_within(th, 30), "reader joins");
	KT_EXPECT(!bad && !rd.bad && rd.reads > 0,
		  "a recording read %lu times while written: always a prefix (%lu bad)",
		  rd.reads, rd.bad);
	kt_vcpu_free(vcpu);
	kt_vm_free(vm);

	vm = vm_new(&vcpu, SIZE);
	ld.vm = vm;
	KT_ASSERT(!ktsys_set_policy(vm->fd, "replay", BUDGET,
				    KVM_PREFETCH_GUP_NOFAULT), "SET replay");
	KT_ASSERT(!pthread_create(&th, NULL, loader_fn, &ld), "loader");
	for (k = 0; k < NT; k++)
		bad += !touch(vcpu, T[k]);
	for (k = 0; k < PAGES; k += 7)
		bad += !touch(vcpu, GFN0 + k);
	ld.stop = 1;
	KT_ASSERT(kt_join_within(th, 30), "loader joins");
	KT_EXPECT(!bad && !ld.bad && ld.loads > 0,
		  "%lu orders loaded while the vCPU ran: every read right (%u wrong)",
		  ld.loads, bad);
	kt_vcpu_free(vcpu);
	kt_vm_free(vm);
}

int main(void)
{
	unsigned long seed = ktsys_cmdline_ulong("kp.replay.seed", 1);
	unsigned long cases = ktsys_cmdline_ulong("kp.replay.cases", 60);
	char engine[32] = "";
	int e;

	kt_require_kvm();
	ktsys_require_prefetch();
	{
		struct kt_vcpu *vcpu;
		struct kt_vm *vm = kt_vm_populated(SLOT, GPA, 1 << 20, 0, &vcpu);
		int r = simple_op(vm, KVM_PREFETCH_ORDER_STATUS, NULL);

		kt_vcpu_free(vcpu);
		kt_vm_free(vm);
		if (r == -ENOTTY || r == -EINVAL) {
			kt_skip("this kernel's KVM has no KVM_PREFETCH_ORDER (%d)", r);
			return kt_exit();
		}
	}
	KT_REQUIRE(!ktsys_read_line(ENGINE_PATH, engine, sizeof(engine)),
		   "no %s", ENGINE_PATH);
	NT = TOUCHES;
	replay_make_touches(&rnd_state, GFN0, PAGES, TOUCHES, T, FIRST,
			    &NFIRST);
	NRUNS = replay_to_runs(FIRST, NFIRST, RUNS);
	kt_info("%u touches, %u first touches, %u runs", NT, NFIRST, NRUNS);
	for (e = 0; e < 2; e++) {
		ktsys_set_engine(engines[e]);
		record(engines[e]);
		replay(engines[e]);
		replay_slots(engines[e]);
	}
	bad_input();
	fuzz(seed, cases);
	races();
	KT_ASSERT(!ktsys_write(ENGINE_PATH, engine), "restore prefetch_engine");
	return kt_exit();
}
