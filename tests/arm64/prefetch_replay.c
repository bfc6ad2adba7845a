// SPDX-License-Identifier: GPL-2.0
/*
 * prefetch_replay: record and replay on arm64's stage 2.  KVM records the
 * order in which the guest first touches its pages (KVM_PREFETCH_ORDER:
 * RECORD_START/STOP/READ), and the replay policy maps that order on later
 * faults (REPLAY_LOAD) through the engine's next() windows, checked
 * exactly against a model (tests/vm/prefetch_replay.c's, for x86).
 *
 *  1. Recording: the guest touches 256 pages of an 8 MiB memslot in a
 *     deterministic shuffled order (every 8th touch goes on to the next
 *     3 pages, every 16th repeats an earlier page) under none: the order
 *     read out is exactly the first touches, coalesced into runs, and
 *     the guest took one stage-2 fault per first touch.
 *  2. Replay: a new VM loads that order and runs the same touches with
 *     replay at a budget of 64 pages: guest faults, pages prefetched and
 *     replay_pos are the model's, and every page reads its own gfn.  An
 *     order of 256 single, non-adjacent pages takes exactly one fault
 *     per 64 recorded pages: 4 faults, 252 pages prefetched.
 *  3. Memslots: an order that goes from the faulting memslot to a second
 *     one, across the first one's end into a hole, and into the hole: one
 *     fault maps every page of it that lies in a memslot, each window in
 *     its own memslot, and the guest then touches them all without a
 *     fault.
 *  4. A page the host does not have ends the replay's exit and stays its
 *     position, until the guest faults on it.
 *  5. Races: a thread reads the recording over and over while the guest
 *     records (each read a valid prefix of the final order); a thread
 *     loads new orders over and over while the guest runs under replay
 *     (every page still reads its own gfn, every load succeeds).
 *  6. Fuzz: random orders (long runs, runs across the slot's end, in
 *     the hole, far out, duplicates), budgets and touches, each case
 *     against the model.
 *  7. Bad input: a bad magic, reserved bits, more runs than the bound
 *     (-E2BIG), a size that does not match, non-zero flags, an unknown
 *     operation and a READ of no recording get their errno.
 *
 * The host fills the first word of each page with its gfn before the
 * guest runs: a guest read of a page proves the mapping it got.
 */
#include <errno.h>
#include <pthread.h>
#include <inttypes.h>
#include <stddef.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include "a64.h"
#include "../vm/lib/replay_model.h"

#define SLOT		1
#define GPA		0x10000000ULL
#define GFN0		(GPA / A64_PAGE)
#define SIZE		(8ULL << 20)
#define PAGES		(SIZE / A64_PAGE)
#define SLOT2		2
#define GPA2		(GPA + SIZE + (1ULL << 20))	/* a hole, then slot 2 */
#define GFN2		(GPA2 / A64_PAGE)
#define SIZE2		(1ULL << 20)
#define TOUCHES		256
#define BUDGET		64

static int order_op(struct a64_vm *vm, struct kvm_prefetch_order_op *op)
{
	return ioctl(vm->fd, KVM_PREFETCH_ORDER, op) ? -errno : 0;
}

static int simple_op(struct a64_vm *vm, uint32_t what,
		     struct kvm_prefetch_order_op *out)
{
	struct kvm_prefetch_order_op op = { .op = what };
	int r = order_op(vm, &op);

	if (out)
		*out = op;
	return r;
}

/* The recording as an order (malloc'ed); *@size its size. */
static struct kvm_prefetch_order *order_read(struct a64_vm *vm,
					     uint64_t *size)
{
	struct kvm_prefetch_order_op op = { .op = KVM_PREFETCH_RECORD_READ };
	struct kvm_prefetch_order *o;
	int r = order_op(vm, &op);

	A64_ASSERT(r == -E2BIG && op.size >= sizeof(*o),
		   "READ with no buffer: -E2BIG and the size (%d, %llu)", r,
		   (unsigned long long)op.size);
	o = malloc(op.size);
	A64_ASSERT(o, "malloc");
	op.addr = (uintptr_t)o;
	r = order_op(vm, &op);
	A64_ASSERT(!r, "READ (%d)", r);
	*size = op.size;
	return o;
}

static int order_load(struct a64_vm *vm, const struct kvm_prefetch_order *o,
		      uint64_t size)
{
	struct kvm_prefetch_order_op op = {
		.op = KVM_PREFETCH_REPLAY_LOAD, .addr = (uintptr_t)o,
		.size = size,
	};

	return order_op(vm, &op);
}

/* An order of @n runs, with its header; *@size its size. */
static struct kvm_prefetch_order *order_new(const uint64_t *runs, uint64_t n,
					    uint64_t *size)
{
	struct kvm_prefetch_order *o;
	uint64_t i;

	*size = sizeof(*o) + n * 8;
	o = calloc(1, *size);
	A64_ASSERT(o, "calloc");
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

/* Each page's first word is its gfn. */
static void fill_gfns(char *mem, uint64_t gpa, uint64_t size)
{
	uint64_t off;

	for (off = 0; off < size; off += A64_PAGE)
		*(uint32_t *)(mem + off) = (uint32_t)((gpa + off) / A64_PAGE);
}

/*
 * What the guest reads in page @gfn's first word.  The sum register (x4)
 * is zeroed first: the KVM_RUN after the touch program's MMIO exit steps
 * the PC over the access, past the program's own "mov w4, #0".
 */
static uint32_t guest_read(struct a64_vcpu *vcpu, uint64_t gfn)
{
	uint64_t gpa = gfn * A64_PAGE, zero = 0;
	struct kvm_one_reg reg = {
		.id = KVM_REG_ARM64 | KVM_REG_SIZE_U64 | KVM_REG_ARM_CORE |
		      (offsetof(struct kvm_regs, regs.regs[4]) / sizeof(__u32)),
		.addr = (uintptr_t)&zero,
	};

	A64_ASSERT(!ioctl(vcpu->fd, KVM_SET_ONE_REG, &reg),
		   "KVM_SET_ONE_REG x4: %s", strerror(errno));
	return a64_touch(vcpu, gpa, gpa + A64_PAGE, A64_PAGE, A64_TOUCH_READ);
}

/* The guest reads page @gfn; it must read its own gfn. */
static bool touch(struct a64_vcpu *vcpu, uint64_t gfn)
{
	return guest_read(vcpu, gfn) == (uint32_t)gfn;
}

/*
 * A VM with policy @policy (@nr_pages), slot 1 (and slot 2 if @two)
 * filled, vCPU 0 past the code page's fault.
 */
static struct a64_vm *vm_new(const char *policy, uint32_t nr_pages, bool two,
			     struct a64_vcpu **vcpu)
{
	struct a64_vm *vm = a64_vm_with_policy(policy, nr_pages,
					       KVM_PREFETCH_GUP_NOFAULT);
	char *mem;

	mem = a64_vm_add_slot(vm, SLOT, GPA, SIZE, 0, NULL, false);
	fill_gfns(mem, GPA, SIZE);
	if (two) {
		mem = a64_vm_add_slot(vm, SLOT2, GPA2, SIZE2, 0, NULL, false);
		fill_gfns(mem, GPA2, SIZE2);
	}
	*vcpu = a64_vcpu_ready(vm, GPA);
	return vm;
}

static uint64_t rnd_state;

static uint64_t rnd(void)
{
	return replay_rnd(&rnd_state);
}

/*
 * A new VM with replay at BUDGET and @runs loaded; the guest touches @t:
 * faults, pages mapped and replay_pos must be the model's, every touch
 * read its own gfn.  Return the model.
 */
static void replay_check_budget(const char *what, const uint64_t *runs,
				uint64_t nr, const uint64_t *t, unsigned int n,
				uint32_t budget, struct replay_model *m, bool quiet)
{
	struct kvm_prefetch_order_op st;
	struct kvm_prefetch_order *o;
	struct a64_counts c0, c1;
	struct a64_vcpu *vcpu;
	struct a64_vm *vm;
	unsigned int i, bad = 0;
	uint64_t osize;
	int r;

	vm = vm_new("replay", budget, false, &vcpu);
	o = order_new(runs, nr, &osize);
	r = order_load(vm, o, osize);
	A64_ASSERT(!r, "%s: REPLAY_LOAD (%d)", what, r);
	free(o);

	replay_model_init(m, GFN0, PAGES, budget);
	c0 = a64_vcpu_counts(vcpu);
	for (i = 0; i < n; i++) {
		bad += !touch(vcpu, t[i]);
		replay_model_touch(m, runs, nr, t[i]);
	}
	c1 = a64_vcpu_counts(vcpu);
	r = simple_op(vm, KVM_PREFETCH_ORDER_STATUS, &st);
	if (quiet) {
		/* The fuzz: one line per bad case, one PASS for all. */
		if (r || c1.pf - c0.pf != m->faults ||
		    c1.mapped - c0.mapped != m->prefetched ||
		    st.replay_pos != m->pos >> 12 || bad) {
			a64_info("BAD %s: %" PRIu64 " faults, %" PRIu64 " pages, replay_pos %llu, %u wrong (model %" PRIu64 ", %" PRIu64 ", %" PRIu64 ")",
				 what, c1.pf - c0.pf, c1.mapped - c0.mapped,
				 (unsigned long long)st.replay_pos, bad,
				 m->faults, m->prefetched, m->pos >> 12);
			m->faults = ~0ULL;	/* tells the caller */
		}
		a64_vcpu_free(vcpu);
		a64_vm_free(vm);
		return;
	}
	A64_EXPECT(!r && c1.pf - c0.pf == m->faults &&
		   c1.mapped - c0.mapped == m->prefetched &&
		   st.replay_runs == nr && st.replay_pos == m->pos >> 12 &&
		   (st.state & KVM_PREFETCH_STATE_LOADED),
		   "%s: %u touches, %" PRIu64 " runs: %" PRIu64 " guest faults, %" PRIu64 " pages prefetched, replay_pos %llu (model %" PRIu64 ", %" PRIu64 ", %" PRIu64 "; STATUS %d)",
		   what, n, nr, c1.pf - c0.pf, c1.mapped - c0.mapped,
		   (unsigned long long)st.replay_pos, m->faults, m->prefetched,
		   m->pos >> 12, r);
	A64_EXPECT(!bad, "%s: every page reads its own gfn (%u wrong)", what,
		   bad);
	a64_vcpu_free(vcpu);
	a64_vm_free(vm);
}

static void replay_check(const char *what, const uint64_t *runs, uint64_t nr,
			 const uint64_t *t, unsigned int n, struct replay_model *m)
{
	replay_check_budget(what, runs, nr, t, n, BUDGET, m, false);
}

/* ---- 1 and 2: record, then replay ------------------------------------- */

static void record_and_replay(void)
{
	static uint64_t t[TOUCHES], first[TOUCHES];
	static uint64_t want[TOUCHES];
	struct kvm_prefetch_order_op st;
	struct kvm_prefetch_order *o;
	unsigned int n, nfirst, i, bad = 0;
	uint64_t nwant, size, pf0, pf1;
	struct a64_vcpu *vcpu;
	struct a64_vm *vm;
	struct replay_model m;
	int r;

	n = TOUCHES;
	replay_make_touches(&rnd_state, GFN0, PAGES, TOUCHES, t, first,
			    &nfirst);
	nwant = replay_to_runs(first, nfirst, want);

	vm = vm_new("none", 0, false, &vcpu);
	r = simple_op(vm, KVM_PREFETCH_RECORD_START, &st);
	A64_ASSERT(!r && (st.state & KVM_PREFETCH_STATE_RECORDING),
		   "RECORD_START under none (%d, state %#x)", r, st.state);
	pf0 = a64_vcpu_faults(vcpu);
	for (i = 0; i < n; i++)
		bad += !touch(vcpu, t[i]);
	pf1 = a64_vcpu_faults(vcpu);
	r = simple_op(vm, KVM_PREFETCH_RECORD_STOP, &st);
	A64_EXPECT(!r && !(st.state & KVM_PREFETCH_STATE_RECORDING) &&
		   st.rec_runs == nwant && st.rec_pages == nfirst &&
		   !st.rec_dropped,
		   "RECORD_STOP: %llu runs, %llu pages, %llu dropped (want %" PRIu64 ", %u, 0; %d)",
		   (unsigned long long)st.rec_runs,
		   (unsigned long long)st.rec_pages,
		   (unsigned long long)st.rec_dropped, nwant, nfirst, r);
	A64_EXPECT(pf1 - pf0 == nfirst && !bad,
		   "recording: %u touches took %" PRIu64 " guest faults, one per first touch (%u); %u pages read wrong",
		   n, pf1 - pf0, nfirst, bad);

	o = order_read(vm, &size);
	A64_EXPECT(o->magic == KVM_PREFETCH_ORDER_MAGIC &&
		   o->version == KVM_PREFETCH_ORDER_VERSION &&
		   o->nr_runs == nwant && o->nr_pages == nfirst && !o->flags &&
		   size == sizeof(*o) + nwant * 8 &&
		   !memcmp(o->runs, want, nwant * 8),
		   "READ: the order is exactly the %u first touches as %" PRIu64 " runs (got %llu runs, %llu pages, flags %#x, %" PRIu64 " bytes)",
		   nfirst, nwant, (unsigned long long)o->nr_runs,
		   (unsigned long long)o->nr_pages, o->flags, size);
	a64_vcpu_free(vcpu);
	a64_vm_free(vm);

	/* Replay what was read, with the same touches. */
	/* The order as read out; __u64 and uint64_t are the same 64 bits. */
	replay_check("replay of the recording", (const uint64_t *)o->runs,
		     o->nr_runs, t, n, &m);
	A64_EXPECT(m.faults < nfirst / 8 && m.pos >> 12 == o->nr_runs,
		   "the model: %" PRIu64 " faults for %u first touches, replay_pos at the end",
		   m.faults, nfirst);
	free(o);

	/*
	 * Single, non-adjacent pages: each fault maps the next BUDGET runs
	 * (its own page among them), and next() is asked after the last
	 * one too, so the position moves past it: one fault per BUDGET.
	 */
	rnd_state = 0xa64a64ULL;
	memset(first, 0, sizeof(first));
	for (i = 0; i < TOUCHES; i++) {
		uint64_t p;
		unsigned int j;

		do {
			p = GFN0 + 2 * (rnd() % (PAGES / 2));
			for (j = 0; j < i && first[j] != p; j++)
				;
		} while (j < i);
		first[i] = p;
		want[i] = KVM_PREFETCH_RUN(p, 1);
	}
	replay_check("single pages", want, TOUCHES, first, TOUCHES, &m);
	A64_EXPECT(m.faults == (TOUCHES + BUDGET - 1) / BUDGET &&
		   m.prefetched == TOUCHES - m.faults &&
		   m.pos >> 12 == TOUCHES,
		   "single pages: one fault per %d recorded pages (model %" PRIu64 " faults, %" PRIu64 " prefetched)",
		   BUDGET, m.faults, m.prefetched);
}

/* ---- 3: windows in their own memslots --------------------------------- */

static void memslots(void)
{
	uint64_t osize, i, nr = 0, want = 0, pf0, pf1;
	uint64_t runs[64];
	struct kvm_prefetch_order_op st;
	struct kvm_prefetch_order *o;
	struct a64_counts c0, c1;
	struct a64_vcpu *vcpu;
	struct a64_vm *vm;
	unsigned int bad = 0;
	int r;

	vm = vm_new("replay", BUDGET, true, &vcpu);
	/* The faulting page itself, then 20 single pages of slot 2. */
	runs[nr++] = KVM_PREFETCH_RUN(GFN0 + 100, 1);
	for (i = 0; i < 20; i++, want++)
		runs[nr++] = KVM_PREFETCH_RUN(GFN2 + 3 * i, 1);
	/* Across slot 1's end: its last 2 pages, then 2 of the hole. */
	runs[nr++] = KVM_PREFETCH_RUN(GFN0 + PAGES - 2, 4);
	want += 2;
	/* In the hole: stepped over. */
	runs[nr++] = KVM_PREFETCH_RUN(GFN0 + PAGES + 8, 1);
	/* Slot 1 again, then slot 2's last page. */
	for (i = 0; i < 10; i++, want++)
		runs[nr++] = KVM_PREFETCH_RUN(GFN0 + 200 + 5 * i, 1);
	runs[nr++] = KVM_PREFETCH_RUN(GFN2 + SIZE2 / A64_PAGE - 1, 1);
	want++;
	o = order_new(runs, nr, &osize);
	r = order_load(vm, o, osize);
	A64_ASSERT(!r, "memslots: REPLAY_LOAD (%d)", r);
	free(o);

	c0 = a64_vcpu_counts(vcpu);
	bad += !touch(vcpu, GFN0 + 100);
	c1 = a64_vcpu_counts(vcpu);
	r = simple_op(vm, KVM_PREFETCH_ORDER_STATUS, &st);
	A64_EXPECT(!r && c1.pf - c0.pf == 1 && c1.win - c0.win == 1 &&
		   c1.mapped - c0.mapped == want && st.replay_pos == nr,
		   "memslots: one fault maps the %" PRIu64 " pages of the order that lie in a memslot, each in its own (%" PRIu64 " faults, %" PRIu64 " windows, %" PRIu64 " pages, replay_pos %llu of %" PRIu64 ")",
		   want, c1.pf - c0.pf, c1.win - c0.win,
		   c1.mapped - c0.mapped, (unsigned long long)st.replay_pos, nr);

	pf0 = a64_vcpu_faults(vcpu);
	for (i = 0; i < nr; i++) {
		uint64_t g = KVM_PREFETCH_RUN_GFN(runs[i]), k;

		for (k = 0; k < KVM_PREFETCH_RUN_PAGES(runs[i]); k++) {
			uint64_t p = g + k;

			if (p >= GFN0 + PAGES && p < GFN2)
				continue;	/* the hole: MMIO */
			bad += !touch(vcpu, p);
		}
	}
	pf1 = a64_vcpu_faults(vcpu);
	A64_EXPECT(pf1 == pf0 && !bad,
		   "memslots: the guest then reads every page of both memslots without a fault (%" PRIu64 " faults, %u pages read wrong)",
		   pf1 - pf0, bad);
	a64_vcpu_free(vcpu);
	a64_vm_free(vm);
}

/* ---- 4: a page the host does not have --------------------------------- */

/*
 * An order of 10 single pages whose 6th the host has dropped
 * (MADV_DONTNEED): the first fault maps the 4 after its own and stops
 * at the 6th, which stays the position; the guest's fault there (a
 * zero page from the host) lets the replay map the 4 after it.
 */
static void absent(void)
{
	uint64_t osize, i, g[10];
	struct kvm_prefetch_order_op st;
	struct kvm_prefetch_order *o;
	struct a64_counts c0, c1, c2;
	struct a64_vcpu *vcpu;
	struct a64_vm *vm;
	unsigned int bad = 0;
	uint64_t runs[10];
	char *hole;
	int r;

	vm = vm_new("replay", BUDGET, false, &vcpu);
	for (i = 0; i < 10; i++) {
		g[i] = GFN0 + 1000 + 7 * i;
		runs[i] = KVM_PREFETCH_RUN(g[i], 1);
	}
	hole = (char *)vm->slots[SLOT].hva + (g[5] - GFN0) * A64_PAGE;
	A64_ASSERT(!madvise(hole, A64_PAGE, MADV_DONTNEED),
		   "MADV_DONTNEED: %s", strerror(errno));
	o = order_new(runs, 10, &osize);
	r = order_load(vm, o, osize);
	A64_ASSERT(!r, "absent: REPLAY_LOAD (%d)", r);
	free(o);

	c0 = a64_vcpu_counts(vcpu);
	bad += !touch(vcpu, g[0]);
	c1 = a64_vcpu_counts(vcpu);
	r = simple_op(vm, KVM_PREFETCH_ORDER_STATUS, &st);
	A64_EXPECT(!r && c1.pf - c0.pf == 1 && c1.mapped - c0.mapped == 4 &&
		   st.replay_pos == 5,
		   "absent: the replay stops at the page the host lacks (%" PRIu64 " faults, %" PRIu64 " pages, replay_pos %llu; want 1, 4, 5)",
		   c1.pf - c0.pf, c1.mapped - c0.mapped,
		   (unsigned long long)st.replay_pos);
	/* The guest's fault there: the host's fresh page reads 0. */
	bad += guest_read(vcpu, g[5]) != 0;
	c2 = a64_vcpu_counts(vcpu);
	r = simple_op(vm, KVM_PREFETCH_ORDER_STATUS, &st);
	A64_EXPECT(!r && c2.pf - c1.pf == 1 && c2.mapped - c1.mapped == 4 &&
		   st.replay_pos == 10,
		   "absent: its fault lets the replay go on (%" PRIu64 " faults, %" PRIu64 " pages, replay_pos %llu; want 1, 4, 10)",
		   c2.pf - c1.pf, c2.mapped - c1.mapped,
		   (unsigned long long)st.replay_pos);
	for (i = 0; i < 10; i++)
		if (i != 5)
			bad += !touch(vcpu, g[i]);
	A64_EXPECT(a64_vcpu_counts(vcpu).pf == c2.pf && !bad,
		   "absent: the other pages read their gfns without a fault (%u wrong)",
		   bad);
	a64_vcpu_free(vcpu);
	a64_vm_free(vm);
}

/* ---- 5: races ---------------------------------------------------------- */

#define RACE_PAGES	512
#define MAX_SNAPS	64

struct racer {
	struct a64_vm *vm;
	volatile int stop;
	int reads, loads, errors;
	/* The recording race's snapshots (malloc'ed orders). */
	struct kvm_prefetch_order *snaps[MAX_SNAPS];
	int nsnaps;
};

static void *reader_fn(void *arg)
{
	struct racer *rc = arg;
	uint64_t size = sizeof(struct kvm_prefetch_order) + RACE_PAGES * 8;

	while (!rc->stop) {
		struct kvm_prefetch_order_op op = {
			.op = KVM_PREFETCH_RECORD_READ, .size = size,
		};
		struct kvm_prefetch_order *o = malloc(size);

		if (!o)
			break;
		op.addr = (uintptr_t)o;
		if (order_op(rc->vm, &op)) {
			rc->errors++;
			free(o);
			continue;
		}
		rc->reads++;
		if (rc->nsnaps < MAX_SNAPS && rc->reads % 256 == 1)
			rc->snaps[rc->nsnaps++] = o;
		else
			free(o);
	}
	return NULL;
}

/* Is @o a prefix of @fin: every run but its last the same, that one grown? */
static bool order_prefix(const struct kvm_prefetch_order *o,
			 const struct kvm_prefetch_order *fin)
{
	uint64_t i, n = o->nr_runs, pages = 0;

	if (o->magic != KVM_PREFETCH_ORDER_MAGIC || n > fin->nr_runs)
		return false;
	for (i = 0; i < n; i++) {
		pages += KVM_PREFETCH_RUN_PAGES(o->runs[i]);
		if (i + 1 < n ? o->runs[i] != fin->runs[i] :
		    KVM_PREFETCH_RUN_GFN(o->runs[i]) !=
		    KVM_PREFETCH_RUN_GFN(fin->runs[i]) ||
		    KVM_PREFETCH_RUN_PAGES(o->runs[i]) >
		    KVM_PREFETCH_RUN_PAGES(fin->runs[i]))
			return false;
	}
	return pages == o->nr_pages;
}

static void *loader_fn(void *arg)
{
	struct racer *rc = arg;
	uint64_t runs[64];
	uint64_t size, i, seed = 0x10adULL;

	while (!rc->stop) {
		struct kvm_prefetch_order *o;
		uint64_t n = 1 + (seed >> 7) % 64;

		for (i = 0; i < n; i++) {
			seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
			/* Mostly in slot 1, some past its end, some far out. */
			runs[i] = KVM_PREFETCH_RUN(GFN0 + (seed >> 33) % (PAGES + 64) +
						   (i % 16 == 15 ? (1ULL << 30) : 0),
						   1 + (seed >> 20) % 8);
		}
		o = order_new(runs, n, &size);
		if (order_load(rc->vm, o, size))
			rc->errors++;
		else
			rc->loads++;
		free(o);
	}
	return NULL;
}

static void races(void)
{
	static uint64_t t[RACE_PAGES];
	struct kvm_prefetch_order *fin;
	struct a64_vcpu *vcpu;
	struct racer rc;
	pthread_t th;
	uint64_t size, i, j;
	unsigned int bad = 0, nbad = 0;
	int r;

	/* A shuffle of the first RACE_PAGES pages of slot 1. */
	rnd_state = 0xace5ULL;
	for (i = 0; i < RACE_PAGES; i++)
		t[i] = GFN0 + i;
	for (i = RACE_PAGES - 1; i > 0; i--) {
		uint64_t x;

		j = rnd() % (i + 1);
		x = t[i], t[i] = t[j], t[j] = x;
	}

	memset(&rc, 0, sizeof(rc));
	rc.vm = vm_new("none", 0, false, &vcpu);
	r = simple_op(rc.vm, KVM_PREFETCH_RECORD_START, NULL);
	A64_ASSERT(!r, "races: RECORD_START (%d)", r);
	A64_ASSERT(!pthread_create(&th, NULL, reader_fn, &rc), "pthread_create");
	for (i = 0; i < RACE_PAGES; i++)
		bad += !touch(vcpu, t[i]);
	rc.stop = 1;
	pthread_join(th, NULL);
	r = simple_op(rc.vm, KVM_PREFETCH_RECORD_STOP, NULL);
	fin = order_read(rc.vm, &size);
	for (i = 0; i < (uint64_t)rc.nsnaps; i++) {
		nbad += !order_prefix(rc.snaps[i], fin);
		free(rc.snaps[i]);
	}
	A64_EXPECT(!r && !rc.errors && !nbad && !bad &&
		   fin->nr_pages == RACE_PAGES,
		   "races: %d READs while the guest recorded %u pages: %d failed, %u of %d kept not a prefix of the final order (%llu pages); %u pages read wrong",
		   rc.reads, RACE_PAGES, rc.errors, nbad, rc.nsnaps,
		   (unsigned long long)fin->nr_pages, bad);
	free(fin);
	a64_vcpu_free(vcpu);
	a64_vm_free(rc.vm);

	memset(&rc, 0, sizeof(rc));
	bad = 0;
	rc.vm = vm_new("replay", BUDGET, false, &vcpu);
	A64_ASSERT(!pthread_create(&th, NULL, loader_fn, &rc), "pthread_create");
	/* A load takes a grace period: let the first land before the pass. */
	for (i = 0; i < 10000 && !rc.loads && !rc.errors; i++)
		usleep(1000);
	j = rc.loads;
	for (i = 0; i < RACE_PAGES; i++)
		bad += !touch(vcpu, t[i]);
	rc.stop = 1;
	pthread_join(th, NULL);
	A64_EXPECT(!rc.errors && j > 0 && !bad,
		   "races: REPLAY_LOADs while the guest ran under replay: %llu before its pass, %d in all, %d failed; %u pages read wrong",
		   (unsigned long long)j, rc.loads, rc.errors, bad);
	a64_vcpu_free(vcpu);
	a64_vm_free(rc.vm);
}

/* ---- 6: fuzz against the model --------------------------------------- */

#define FUZZ_CASES	40
#define FUZZ_RUNS	96
#define FUZZ_TOUCHES	48

/*
 * Random orders (runs in the slot of 1 to 4096 pages, across its end,
 * in the hole after it, far out, duplicates of earlier runs), random
 * budgets (1 to 512) and random guest touches: faults, pages mapped and
 * replay_pos must be the model's in every case.
 */
static void fuzz(void)
{
	static uint64_t runs[FUZZ_RUNS];
	static uint64_t t[FUZZ_TOUCHES];
	static struct replay_model m;
	unsigned int c, i, nbad = 0;
	uint64_t faults = 0, pages = 0;
	char what[64];

	rnd_state = 0xf022ULL;
	for (c = 0; c < FUZZ_CASES; c++) {
		uint64_t nr = 1 + rnd() % FUZZ_RUNS;
		uint32_t budget = 1 + rnd() % 512;

		for (i = 0; i < nr; i++) {
			uint64_t kind = rnd() % 16, g, n;

			n = kind == 0 ? 1 + rnd() % 4096 : 1 + rnd() % 8;
			if (kind == 1)		/* across the slot's end */
				g = GFN0 + PAGES - 1 - rnd() % 4;
			else if (kind == 2)	/* in the hole after it */
				g = GFN0 + PAGES + rnd() % 64;
			else if (kind == 3)	/* far out */
				g = (1ULL << 40) + rnd() % 1000;
			else if (kind == 4 && i)	/* a duplicate */
				g = KVM_PREFETCH_RUN_GFN(runs[rnd() % i]);
			else
				g = GFN0 + rnd() % PAGES;
			runs[i] = KVM_PREFETCH_RUN(g, n);
		}
		for (i = 0; i < FUZZ_TOUCHES; i++)
			t[i] = i < 8 && rnd() % 2 ?
			       KVM_PREFETCH_RUN_GFN(runs[rnd() % nr]) :
			       GFN0 + rnd() % PAGES;
		/* Touches only inside the slot. */
		for (i = 0; i < FUZZ_TOUCHES; i++)
			if (t[i] < GFN0 || t[i] >= GFN0 + PAGES)
				t[i] = GFN0 + rnd() % PAGES;
		snprintf(what, sizeof(what), "fuzz case %u (%llu runs, budget %u)",
			 c, (unsigned long long)nr, budget);
		replay_check_budget(what, runs, nr, t, FUZZ_TOUCHES, budget,
				    &m, true);
		if (m.faults == ~0ULL) {
			nbad++;
			continue;
		}
		faults += m.faults;
		pages += m.prefetched;
	}
	A64_EXPECT(!nbad,
		   "fuzz: %d cases of random orders, budgets and touches: faults, pages and replay_pos the model's (%u bad; %" PRIu64 " faults, %" PRIu64 " pages prefetched in the good ones)",
		   FUZZ_CASES, nbad, faults, pages);
}

/* ---- 7: bad input ----------------------------------------------------- */

static void bad_order(struct a64_vm *vm, const char *what,
		      const struct kvm_prefetch_order *o, uint64_t size,
		      int want)
{
	int r = order_load(vm, o, size);

	A64_EXPECT(r == want, "REPLAY_LOAD of an order %s: %d (%s), want %d",
		   what, r, strerror(-r), want);
}

static void bad_op(struct a64_vm *vm, const char *what,
		   struct kvm_prefetch_order_op op, int want)
{
	int r = order_op(vm, &op);

	A64_EXPECT(r == want, "KVM_PREFETCH_ORDER %s: %d (%s), want %d", what,
		   r, strerror(-r), want);
}

static void bad_input(void)
{
	uint64_t runs[4] = {
		KVM_PREFETCH_RUN(GFN0, 1), KVM_PREFETCH_RUN(GFN0 + 2, 2),
	};
	struct kvm_prefetch_order *o;
	struct kvm_prefetch_order_op st;
	struct a64_vcpu *vcpu;
	struct a64_vm *vm;
	uint64_t size, m, bound;
	char *big;
	int r;

	vm = vm_new("replay", BUDGET, false, &vcpu);
	bad_op(vm, "unknown operation",
	       (struct kvm_prefetch_order_op){ .op = 99 }, -EINVAL);
	bad_op(vm, "with flags", (struct kvm_prefetch_order_op){
		.op = KVM_PREFETCH_ORDER_STATUS, .flags = 1 }, -EINVAL);
	bad_op(vm, "with reserved set", (struct kvm_prefetch_order_op){
		.op = KVM_PREFETCH_ORDER_STATUS, .reserved[2] = 1 }, -EINVAL);
	bad_op(vm, "READ with no recording", (struct kvm_prefetch_order_op){
		.op = KVM_PREFETCH_RECORD_READ }, -ENOENT);

	o = order_new(runs, 2, &size);
	o->magic ^= 1;
	bad_order(vm, "with a bad magic", o, size, -EINVAL);
	o->magic ^= 1;
	o->version = 2;
	bad_order(vm, "of version 2", o, size, -EINVAL);
	o->version = KVM_PREFETCH_ORDER_VERSION;
	o->reserved[1] = 1;
	bad_order(vm, "with reserved set", o, size, -EINVAL);
	o->reserved[1] = 0;
	o->pad = 1;
	bad_order(vm, "with pad set", o, size, -EINVAL);
	o->pad = 0;
	o->flags = 2;
	bad_order(vm, "with an unknown flag", o, size, -EINVAL);
	o->flags = 0;
	bad_order(vm, "one run short of its size", o, size - 8, -EINVAL);
	o->nr_pages++;
	bad_order(vm, "whose nr_pages is not its runs'", o, size, -EINVAL);
	o->nr_pages--;
	bad_order(vm, "shorter than its header", o, sizeof(*o) - 1, -EINVAL);

	/* More runs than the bound (pages / 2 - pages / 64): -E2BIG. */
	m = PAGES + 1;	/* slot 1 and the code page */
	bound = m / 2 - m / 64;
	o->nr_runs = bound + 1;
	bad_order(vm, "longer than the bound", o, size, -E2BIG);
	o->nr_runs = 1ULL << 60;
	bad_order(vm, "of 2^60 runs", o, size, -E2BIG);
	o->nr_runs = 2;

	/* At the bound: loaded (runs of one page, all in slot 1). */
	size = sizeof(*o) + bound * 8;
	big = calloc(1, size);
	A64_ASSERT(big, "calloc");
	memcpy(big, o, sizeof(*o));
	free(o);
	o = (struct kvm_prefetch_order *)big;
	o->nr_runs = bound;
	o->nr_pages = bound;
	for (m = 0; m < bound; m++)
		o->runs[m] = KVM_PREFETCH_RUN(GFN0 + m, 1);
	r = order_load(vm, o, size);
	A64_EXPECT(!r, "REPLAY_LOAD of an order at the bound (%" PRIu64 " runs): %d",
		   bound, r);
	r = simple_op(vm, KVM_PREFETCH_ORDER_STATUS, &st);
	A64_EXPECT(!r && st.replay_runs == bound && !st.replay_pos &&
		   (st.state & KVM_PREFETCH_STATE_LOADED),
		   "STATUS: %llu runs loaded, replay_pos %llu",
		   (unsigned long long)st.replay_runs,
		   (unsigned long long)st.replay_pos);
	free(o);
	a64_vcpu_free(vcpu);
	a64_vm_free(vm);
}

int main(void)
{
	a64_require_prefetch();
	record_and_replay();
	memslots();
	absent();
	races();
	fuzz();
	bad_input();
	return a64_exit();
}
