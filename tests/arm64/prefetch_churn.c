// SPDX-License-Identifier: GPL-2.0
/*
 * prefetch_churn - the stage-2 engine under concurrent invalidation:
 * tests/vm/prefetch_churn.c's checks on arm64.
 *
 * Policy auto, windows of 64..512 pages and both GUP modes (changed while
 * the guest runs), and for RUN_SECONDS:
 *
 *  - ZAP_VCPUS vCPU threads each own a range of slot 1 and loop: the host
 *    writes a fresh tag T into the first word of every page of the range;
 *    the guest reads every page (any value other than T is reported); the
 *    guest writes T' into every page; the host reads every page.  A
 *    zapper thread meanwhile invalidates random ranges of slot 1's host
 *    memory, of up to a vCPU's range, 0-2 ms into that vCPU's guest
 *    read pass (x86's are up to 32 pages anywhere: here a zap must more
 *    often meet the engine while it gets a window's pages), by
 *    MADV_DONTNEED or by mapping fresh anonymous memory over them (mmap
 *    MAP_FIXED: an munmap and a new mapping), both of which then read
 *    0.  The guest may see T or 0, the host T' or 0, and 0
 *    only if a zap of that page started after the last zap of it that
 *    had completed before the host (or the guest) wrote it.  Anything
 *    else (an old tag, T instead of T') is a stage-2 entry that outlived
 *    an invalidation: the engine got the page before the zap and mapped
 *    it after.  After the churn every vCPU does one quiet round, in which
 *    no 0 is legal.
 *  - One vCPU thread reads slot 2 page by page, every value reported,
 *    while a thread deletes slot 2 and adds it back on new host memory
 *    holding the next generation's tag.  Each read must be an MMIO exit
 *    (legal only if a delete had started and the re-add had not
 *    finished before that KVM_RUN) or the tag of a generation not yet
 *    deleted when that KVM_RUN began and whose add had begun when it
 *    returned.
 *
 * The guest program (churn_code, below the library's touch program in
 * the code page; the stage-1 MMU off): x0 start, x1 end, x2 stride,
 * x3 mode (0 write w4, 1 read and report != w4, 2 report every value),
 * x4 value; a report is an MMIO write to PORT_REPORT with x0 the
 * address, the end of a pass one to A64_DONE_GPA.  The KVM_RUN after an
 * MMIO exit completes it by stepping the PC over the access, even when
 * the VMM set the PC since: so the program starts with a nop.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include "a64.h"

#define ZAP_VCPUS	2
#define RANGE_PAGES	128ULL			/* per vCPU, 512 KiB */
#define RANGE_SIZE	(RANGE_PAGES * A64_PAGE)
#define ZAP_SLOT	1
#define ZAP_GPA		0x2000000ULL
#define ZAP_SIZE	(ZAP_VCPUS * RANGE_SIZE)
#define ZAP_PAGES	(ZAP_SIZE / A64_PAGE)
#define MOVE_SLOT	2
#define MOVE_GPA	0x4000000ULL
#define MOVE_SIZE	(256ULL << 10)
#define MOVE_PAGES	(MOVE_SIZE / A64_PAGE)

#define CHURN_PC	0x800ULL		/* in the code page */
#define PORT_REPORT	(A64_DONE_GPA + 8)
#define MODE_WRITE	0
#define MODE_CHECK	1
#define MODE_REPORT	2
#define MMIO_MARK	0xdeadbeefu
#define GEN_TAG(g)	(0x70000000u | ((uint32_t)(g) & 0xffffff))
#define RUN_SECONDS	10
#define MAX_REPORTS	8			/* FAIL lines per thread */
#define STOP_SECONDS	120			/* for the threads to stop */

extern const char churn_code[], churn_code_end[];
/* Global: a local symbol's GOT entry would be the section's (+ no addend). */
asm(".pushsection .rodata\n"
	".balign 4\n"
	".globl churn_code, churn_code_end\n"
	"churn_code:\n"
	"	nop\n"		/* skipped by the KVM_RUN completing an MMIO exit */
	"1:	cmp x0, x1\n"
	"	b.hs 5f\n"
	"	cbz x3, 2f\n"
	"	ldr w5, [x0]\n"
	"	cmp x3, #1\n"
	"	b.ne 3f\n"
	"	cmp w5, w4\n"
	"	b.eq 4f\n"
	"3:	str w5, [x6, #8]\n"			/* report */
	"	b 4f\n"
	"2:	str w4, [x0]\n"				/* write */
	"4:	add x0, x0, x2\n"
	"	b 1b\n"
	"5:	str w4, [x6]\n"				/* done */
	"6:	b 6b\n"
	"churn_code_end:\n"
	".popsection\n");

static struct a64_vm *vm;
static char *zap_mem;
static int stop, stopped;

/* Per page of slot 1: zaps started and completed. */
static uint32_t zap_started[ZAP_PAGES], zap_done[ZAP_PAGES];
static uint64_t nr_zaps, nr_remaps, nr_zapped_pages, nr_policy_changes;

/* Slot 2's generations (see header comment). */
static uint64_t gen_del_started, gen_del_done, gen_add_started, gen_add_done;
static uint64_t nr_generations;

static bool stopping(void)
{
	return __atomic_load_n(&stop, __ATOMIC_SEQ_CST);
}

static uint64_t load64(uint64_t *p)
{
	return __atomic_load_n(p, __ATOMIC_SEQ_CST);
}

static void store64(uint64_t *p, uint64_t v)
{
	__atomic_store_n(p, v, __ATOMIC_SEQ_CST);
}

static uint32_t rnd(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return (uint32_t)(*s >> 11);
}

/* ---- the guest program ------------------------------------------ */

#define XREG(n)	(KVM_REG_ARM64 | KVM_REG_SIZE_U64 | KVM_REG_ARM_CORE | \
		 KVM_REG_ARM_CORE_REG(regs.regs[n]))
#define PCREG	(KVM_REG_ARM64 | KVM_REG_SIZE_U64 | KVM_REG_ARM_CORE | \
		 KVM_REG_ARM_CORE_REG(regs.pc))

static void one_reg(struct a64_vcpu *vcpu, unsigned long op, uint64_t id,
		    uint64_t *val)
{
	struct kvm_one_reg reg = { .id = id, .addr = (uintptr_t)val };

	A64_ASSERT(!ioctl(vcpu->fd, op, &reg), "vcpu %d ONE_REG %#llx: %s",
		   vcpu->id, (unsigned long long)id, strerror(errno));
}

static void guest_setup(struct a64_vcpu *vcpu, uint64_t start, uint64_t end,
			uint32_t value, uint32_t mode)
{
	uint64_t r[] = { start, end, A64_PAGE, mode, value, 0, A64_DONE_GPA };
	uint64_t pc = CHURN_PC;
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(r); i++)
		one_reg(vcpu, KVM_SET_ONE_REG, XREG(i), &r[i]);
	one_reg(vcpu, KVM_SET_ONE_REG, PCREG, &pc);
}

static uint64_t guest_x0(struct a64_vcpu *vcpu)
{
	uint64_t x0;

	one_reg(vcpu, KVM_GET_ONE_REG, XREG(0), &x0);
	return x0;
}

enum churn_exit { EXIT_DONE, EXIT_REPORT, EXIT_MMIO_READ };

/* KVM_RUN until the program ends a pass, reports (*@v) or reads MMIO. */
static enum churn_exit guest_run(struct a64_vcpu *vcpu, uint32_t *v)
{
	struct kvm_run *run = vcpu->run;

	for (;;) {
		if (ioctl(vcpu->fd, KVM_RUN, 0) < 0) {
			A64_ASSERT(errno == EINTR, "vcpu %d KVM_RUN: %s",
				   vcpu->id, strerror(errno));
			continue;
		}
		A64_ASSERT(run->exit_reason == KVM_EXIT_MMIO &&
			   run->mmio.len == 4,
			   "vcpu %d: unexpected exit %u (mmio %#llx)", vcpu->id,
			   run->exit_reason,
			   (unsigned long long)run->mmio.phys_addr);
		if (!run->mmio.is_write)
			return EXIT_MMIO_READ;
		memcpy(v, run->mmio.data, 4);
		if (run->mmio.phys_addr == A64_DONE_GPA)
			return EXIT_DONE;
		A64_ASSERT(run->mmio.phys_addr == PORT_REPORT,
			   "vcpu %d: MMIO write to %#llx", vcpu->id,
			   (unsigned long long)run->mmio.phys_addr);
		return EXIT_REPORT;
	}
}

/* ---- slot 1: DONTNEED and remap churn ---------------------------- */

struct zap_worker {
	pthread_t thread;
	struct a64_vcpu *vcpu;
	int idx, phase;
	uint64_t iterations, zeros_guest, zeros_host, bad;
	uint32_t snap[RANGE_PAGES];
};

static struct zap_worker zw[ZAP_VCPUS];

static void zw_bad(struct zap_worker *w, const char *what, uint64_t page,
		   uint32_t val, uint32_t want)
{
	if (w->bad++ < MAX_REPORTS)
		a64_fail("vcpu %d iteration %llu: %s: page %llu (gpa 0x%llx) holds 0x%x, want 0x%x%s",
			 w->vcpu->id, (unsigned long long)w->iterations, what,
			 (unsigned long long)page,
			 (unsigned long long)(ZAP_GPA + page * A64_PAGE),
			 val, want, val ? "" : " (0, but no zap of the page since)");
}

/* 0 is legal at @page iff a zap started after the snapshot's completions. */
static bool zero_ok(struct zap_worker *w, uint64_t page)
{
	if (page < w->idx * RANGE_PAGES || page >= (w->idx + 1) * RANGE_PAGES)
		return false;
	return __atomic_load_n(&zap_started[page], __ATOMIC_SEQ_CST) !=
	       w->snap[page - w->idx * RANGE_PAGES];
}

static void snapshot(struct zap_worker *w)
{
	uint64_t i, first = w->idx * RANGE_PAGES;

	for (i = 0; i < RANGE_PAGES; i++)
		w->snap[i] = __atomic_load_n(&zap_done[first + i],
					     __ATOMIC_SEQ_CST);
}

/* One write / guest check / guest write / host check round. */
static void zap_iteration(struct zap_worker *w)
{
	uint32_t t = 0x40000000u | ((uint32_t)w->idx << 24) |
		     (uint32_t)(w->iterations & 0xffffff);
	uint32_t t2 = t ^ 0x80000000u, v;
	enum churn_exit e;
	uint64_t first = w->idx * RANGE_PAGES, i;
	uint64_t gpa0 = ZAP_GPA + first * A64_PAGE;

	/* Host writes T. */
	__atomic_store_n(&w->phase, 0, __ATOMIC_SEQ_CST);
	snapshot(w);
	for (i = 0; i < RANGE_PAGES; i++)
		*(volatile uint32_t *)(zap_mem + (first + i) * A64_PAGE) = t;

	/* Guest reads: T, or 0 after a zap. */
	__atomic_store_n(&w->phase, 1, __ATOMIC_SEQ_CST);
	guest_setup(w->vcpu, gpa0, gpa0 + RANGE_SIZE, t, MODE_CHECK);
	while ((e = guest_run(w->vcpu, &v)) != EXIT_DONE) {
		uint64_t page = (guest_x0(w->vcpu) - ZAP_GPA) / A64_PAGE;

		A64_ASSERT(e == EXIT_REPORT, "vcpu %d: MMIO read at %#llx",
			   w->vcpu->id,
			   (unsigned long long)w->vcpu->run->mmio.phys_addr);
		if (v == 0 && zero_ok(w, page))
			w->zeros_guest++;
		else
			zw_bad(w, "guest read", page, v, t);
	}

	/* Guest writes T'; host reads: T', or 0 after a zap. */
	__atomic_store_n(&w->phase, 2, __ATOMIC_SEQ_CST);
	snapshot(w);
	guest_setup(w->vcpu, gpa0, gpa0 + RANGE_SIZE, t2, MODE_WRITE);
	A64_ASSERT(guest_run(w->vcpu, &v) == EXIT_DONE, "write pass");
	for (i = 0; i < RANGE_PAGES; i++) {
		v = *(volatile uint32_t *)(zap_mem + (first + i) * A64_PAGE);
		if (v == t2)
			continue;
		if (v == 0 && zero_ok(w, first + i))
			w->zeros_host++;
		else
			zw_bad(w, "host read after guest write", first + i, v,
			       t2);
	}
	w->iterations++;
}

static void *zap_worker_fn(void *arg)
{
	struct zap_worker *w = arg;

	while (!stopping())
		zap_iteration(w);
	__atomic_add_fetch(&stopped, 1, __ATOMIC_SEQ_CST);
	return NULL;
}

static int set_policy(uint32_t nr, uint32_t gup)
{
	return a64_vm_set_prefetch(vm, "auto", nr, gup);
}

static void *zapper_fn(void *arg)
{
	static const uint32_t nrs[] = { 64, 128, 256, 512 };
	uint64_t seed = 0x123456789abcdefULL, n = 0;

	while (!stopping()) {
		struct zap_worker *w = &zw[rnd(&seed) % ZAP_VCPUS];
		uint64_t len = 1 + rnd(&seed) % RANGE_PAGES;
		uint64_t first = rnd(&seed) % RANGE_PAGES, i;
		char *p;
		int spin;

		/*
		 * Into a vCPU's guest read pass, when its faults open windows
		 * of the pages the host has just written: the engine is then
		 * getting pages.  A page it mapped after this zap is read 0 by
		 * the host after the guest's write, with no zap since.
		 */
		for (spin = 0; spin < 200 &&
		     __atomic_load_n(&w->phase, __ATOMIC_SEQ_CST) != 1; spin++)
			usleep(50);
		usleep(rnd(&seed) % 2000);
		first += w->idx * RANGE_PAGES;
		if (len > (w->idx + 1) * RANGE_PAGES - first)
			len = (w->idx + 1) * RANGE_PAGES - first;
		p = zap_mem + first * A64_PAGE;
		for (i = first; i < first + len; i++)
			__atomic_add_fetch(&zap_started[i], 1, __ATOMIC_SEQ_CST);
		if (rnd(&seed) % 4) {
			A64_ASSERT(!madvise(p, len * A64_PAGE, MADV_DONTNEED),
				   "MADV_DONTNEED: %s", strerror(errno));
		} else {
			A64_ASSERT(mmap(p, len * A64_PAGE,
					PROT_READ | PROT_WRITE,
					MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED,
					-1, 0) == p, "mmap MAP_FIXED: %s",
				   strerror(errno));
			madvise(p, len * A64_PAGE, MADV_NOHUGEPAGE);
			nr_remaps++;
		}
		for (i = first; i < first + len; i++)
			__atomic_add_fetch(&zap_done[i], 1, __ATOMIC_SEQ_CST);
		nr_zaps++;
		nr_zapped_pages += len;

		/* Now and then, a new window or GUP mode for the running VM. */
		if (!(++n % 16)) {
			uint32_t gup = (n / 64) % 2 ? KVM_PREFETCH_GUP_FAST_ONLY :
						      KVM_PREFETCH_GUP_NOFAULT;
			int r = set_policy(nrs[(n / 16) % 4], gup);

			if (r)
				a64_fail("KVM_SET_PREFETCH_POLICY while running: %s",
					 strerror(-r));
			nr_policy_changes++;
		}
	}
	__atomic_add_fetch(&stopped, 1, __ATOMIC_SEQ_CST);
	return NULL;
}

/* ---- slot 2: delete / re-add churn ------------------------------ */

struct move_worker {
	pthread_t thread;
	struct a64_vcpu *vcpu;
	uint64_t reads, mmio, passes, bad;
	uint64_t tags_seen_min_gen, tags_seen_max_gen;
};

/* Host memory for slot 2 holding generation @gen's tag in every page. */
static char *new_move_mem(uint64_t gen)
{
	char *p = mmap(NULL, MOVE_SIZE, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	uint64_t i;

	A64_ASSERT(p != MAP_FAILED, "mmap: %s", strerror(errno));
	madvise(p, MOVE_SIZE, MADV_NOHUGEPAGE);
	for (i = 0; i < MOVE_PAGES; i++)
		*(uint32_t *)(p + i * A64_PAGE) = GEN_TAG(gen);
	return p;
}

static char *move_mem;

static void *mover_fn(void *arg)
{
	uint64_t seed = 0xfeedfacecafebeefULL, g;

	for (g = 1; !stopping(); g++) {
		char *next = new_move_mem(g + 1);

		store64(&gen_del_started, g);
		a64_vm_delete_slot(vm, MOVE_SLOT);
		store64(&gen_del_done, g);
		usleep(rnd(&seed) % 3000);
		store64(&gen_add_started, g + 1);
		a64_vm_add_slot(vm, MOVE_SLOT, MOVE_GPA, MOVE_SIZE, 0, next,
				false);
		store64(&gen_add_done, g + 1);
		munmap(move_mem, MOVE_SIZE);
		move_mem = next;
		nr_generations++;
		usleep(2000 + rnd(&seed) % 20000);
	}
	__atomic_add_fetch(&stopped, 1, __ATOMIC_SEQ_CST);
	return NULL;
}

static void move_bad(struct move_worker *w, const char *fmt, uint64_t a,
		     uint32_t v, uint64_t lo, uint64_t hi)
{
	if (w->bad++ < MAX_REPORTS)
		a64_fail(fmt, (unsigned long long)a, v,
			 (unsigned long long)lo, (unsigned long long)hi);
}

static void *move_worker_fn(void *arg)
{
	struct move_worker *w = arg;
	struct kvm_run *run = w->vcpu->run;

	w->tags_seen_min_gen = ~0ULL;
	while (!stopping()) {
		guest_setup(w->vcpu, MOVE_GPA, MOVE_GPA + MOVE_SIZE, 0,
			    MODE_REPORT);
		for (;;) {
			uint64_t del_done0, add_done0, del_started1, add_started1;
			enum churn_exit e;
			uint64_t gen;
			uint32_t v = 0;

			del_done0 = load64(&gen_del_done);
			add_done0 = load64(&gen_add_done);
			e = guest_run(w->vcpu, &v);
			del_started1 = load64(&gen_del_started);
			add_started1 = load64(&gen_add_started);

			if (e == EXIT_DONE)
				break;
			if (e == EXIT_MMIO_READ) {
				/* Legal only if the slot may have been absent. */
				if (del_started1 < add_done0)
					move_bad(w, "MMIO read at gpa 0x%llx (0x%x) but slot 2 was present throughout (gen %llu..%llu)",
						 run->mmio.phys_addr, 0,
						 add_done0, add_done0);
				w->mmio++;
				memcpy(run->mmio.data, &(uint32_t){ MMIO_MARK },
				       4);
				/* Completed on re-entry; the guest reports it. */
				if (guest_run(w->vcpu, &v) != EXIT_REPORT ||
				    v != MMIO_MARK)
					move_bad(w, "after the MMIO read at 0x%llx: 0x%x reported (gen %llu..%llu)",
						 guest_x0(w->vcpu), v, 0, 0);
				continue;
			}
			w->reads++;
			gen = v & 0xffffff;
			if ((v & 0xff000000u) != 0x70000000u ||
			    gen <= del_done0 || gen > add_started1) {
				move_bad(w, "slot 2 gpa 0x%llx read 0x%x: want the tag of generation %llu..%llu",
					 guest_x0(w->vcpu), v, del_done0 + 1,
					 add_started1);
				continue;
			}
			if (gen < w->tags_seen_min_gen)
				w->tags_seen_min_gen = gen;
			if (gen > w->tags_seen_max_gen)
				w->tags_seen_max_gen = gen;
		}
		w->passes++;
	}
	__atomic_add_fetch(&stopped, 1, __ATOMIC_SEQ_CST);
	return NULL;
}

static struct move_worker mw;
static struct a64_vcpu *vcpus[ZAP_VCPUS + 1];

static void setup(void)
{
	int i, r;

	vm = a64_vm_create();
	A64_REQUIRE(a64_vm_check_ext(vm, KVM_CAP_PREFETCH_POLICY) > 0,
		    "no KVM_CAP_PREFETCH_POLICY");
	r = set_policy(512, KVM_PREFETCH_GUP_NOFAULT);
	A64_ASSERT(!r, "KVM_SET_PREFETCH_POLICY auto 512: %s", strerror(-r));
	A64_ASSERT(CHURN_PC + (churn_code_end - churn_code) <= A64_PAGE,
		   "guest code too big");
	memcpy((char *)vm->slots[A64_CODE_SLOT].hva + CHURN_PC, churn_code,
	       churn_code_end - churn_code);

	zap_mem = a64_vm_add_slot(vm, ZAP_SLOT, ZAP_GPA, ZAP_SIZE, 0, NULL,
				  false);
	move_mem = new_move_mem(1);
	store64(&gen_add_started, 1);
	a64_vm_add_slot(vm, MOVE_SLOT, MOVE_GPA, MOVE_SIZE, 0, move_mem,
			false);
	store64(&gen_add_done, 1);

	for (i = 0; i <= ZAP_VCPUS; i++)
		vcpus[i] = a64_vcpu_add(vm, i);
}

static void churn(void)
{
	pthread_t zapper, mover;
	int i;

	for (i = 0; i < ZAP_VCPUS; i++) {
		zw[i].vcpu = vcpus[i];
		zw[i].idx = i;
		A64_ASSERT(!pthread_create(&zw[i].thread, NULL, zap_worker_fn,
					   &zw[i]), "pthread_create");
	}
	mw.vcpu = vcpus[ZAP_VCPUS];
	A64_ASSERT(!pthread_create(&mw.thread, NULL, move_worker_fn, &mw),
		   "pthread_create");
	A64_ASSERT(!pthread_create(&zapper, NULL, zapper_fn, NULL),
		   "pthread_create");
	A64_ASSERT(!pthread_create(&mover, NULL, mover_fn, NULL),
		   "pthread_create");

	sleep(RUN_SECONDS);
	__atomic_store_n(&stop, 1, __ATOMIC_SEQ_CST);
	/* A vCPU that never comes back is a FAIL, not a hung run. */
	for (i = 0; i < STOP_SECONDS &&
	     __atomic_load_n(&stopped, __ATOMIC_SEQ_CST) < ZAP_VCPUS + 3; i++)
		sleep(1);
	if (i == STOP_SECONDS) {
		for (i = 0; i < ZAP_VCPUS; i++)
			a64_info("vcpu %d: %llu iterations, in phase %d",
				 i, (unsigned long long)zw[i].iterations,
				 zw[i].phase);
		a64_info("vcpu %d: %llu passes, %llu reads, %llu MMIO; %llu zaps, %llu generations",
			 ZAP_VCPUS, (unsigned long long)mw.passes,
			 (unsigned long long)mw.reads,
			 (unsigned long long)mw.mmio,
			 (unsigned long long)nr_zaps,
			 (unsigned long long)nr_generations);
		a64_fail("the churn's threads did not stop %d s after being told (%d of %d did)",
			 STOP_SECONDS, stopped, ZAP_VCPUS + 3);
		fflush(stdout);
		_exit(A64_EXIT_FAIL);
	}
	pthread_join(zapper, NULL);
	pthread_join(mover, NULL);
	for (i = 0; i < ZAP_VCPUS; i++)
		pthread_join(zw[i].thread, NULL);
	pthread_join(mw.thread, NULL);
}

/* Stat @name summed over all vCPUs. */
static uint64_t sum_stat(const char *name)
{
	uint64_t sum = 0;
	int i;

	for (i = 0; i <= ZAP_VCPUS; i++)
		sum += a64_vcpu_stat_get(vcpus[i], name);
	return sum;
}

int main(void)
{
	uint64_t t0, bad = 0, min_iter = ~0ULL, zeros = 0, mapped;
	int i, cpus = sysconf(_SC_NPROCESSORS_ONLN);

	a64_require_kvm();
	setup();
	t0 = a64_now_ns();
	churn();

	/* Once more with everything quiet: no zero is legal now. */
	for (i = 0; i < ZAP_VCPUS; i++) {
		uint64_t z = zw[i].zeros_guest + zw[i].zeros_host;
		uint64_t bad0 = zw[i].bad;

		zap_iteration(&zw[i]);
		A64_EXPECT(zw[i].bad == bad0 &&
			   zw[i].zeros_guest + zw[i].zeros_host == z,
			   "vcpu %d: quiet round after the churn sees exactly the tags written",
			   i);
	}

	a64_info("%.1f s on %d CPUs: %llu zaps (%llu by mmap over them, %llu pages), %llu policy changes, %llu slot 2 generations",
		 (a64_now_ns() - t0) / 1e9, cpus, (unsigned long long)nr_zaps,
		 (unsigned long long)nr_remaps,
		 (unsigned long long)nr_zapped_pages,
		 (unsigned long long)nr_policy_changes,
		 (unsigned long long)nr_generations);
	for (i = 0; i < ZAP_VCPUS; i++) {
		a64_info("vcpu %d: %llu iterations, zeros seen by guest %llu, by host %llu, bad %llu",
			 i, (unsigned long long)zw[i].iterations,
			 (unsigned long long)zw[i].zeros_guest,
			 (unsigned long long)zw[i].zeros_host,
			 (unsigned long long)zw[i].bad);
		if (zw[i].iterations < min_iter)
			min_iter = zw[i].iterations;
		zeros += zw[i].zeros_guest;
		bad += zw[i].bad;
	}
	a64_info("vcpu %d: %llu passes over slot 2, %llu reads (generations %llu..%llu), %llu MMIO exits, bad %llu",
		 ZAP_VCPUS, (unsigned long long)mw.passes,
		 (unsigned long long)mw.reads,
		 (unsigned long long)(mw.reads ? mw.tags_seen_min_gen : 0),
		 (unsigned long long)mw.tags_seen_max_gen,
		 (unsigned long long)mw.mmio, (unsigned long long)mw.bad);
	mapped = sum_stat("prefetch_mapped");
	a64_info("all vcpus: pf_taken %llu prefetch_mapped %llu prefetch_windows %llu",
		 (unsigned long long)sum_stat("pf_taken"),
		 (unsigned long long)mapped,
		 (unsigned long long)sum_stat("prefetch_windows"));

	A64_EXPECT(!bad, "invalidation churn: guest and host only ever saw the right tag or 0 after a zap (%llu bad)",
		   (unsigned long long)bad);
	A64_EXPECT(!mw.bad, "memslot churn: every read of slot 2 was a live generation's tag or a legal MMIO exit (%llu bad)",
		   (unsigned long long)mw.bad);
	A64_EXPECT(nr_zaps > 20 && nr_remaps > 0 && min_iter >= 2 &&
		   zeros > 0 && mw.passes > 3 && mw.mmio > 0 &&
		   nr_generations > 10 && mapped > 0,
		   "churn happened: %llu zaps, >= %llu rounds per vcpu, %llu zeros seen by guests, %llu slot-2 passes, %llu MMIO exits, %llu generations, %llu pages prefetched",
		   (unsigned long long)nr_zaps, (unsigned long long)min_iter,
		   (unsigned long long)zeros, (unsigned long long)mw.passes,
		   (unsigned long long)mw.mmio,
		   (unsigned long long)nr_generations,
		   (unsigned long long)mapped);
	A64_EXPECT(cpus >= 2, "the test VM runs %d CPUs (2 wanted: vCPU threads and the zapper in parallel)",
		   cpus);

	for (i = 0; i <= ZAP_VCPUS; i++)
		a64_vcpu_free(vcpus[i]);
	a64_vm_delete_slot(vm, MOVE_SLOT);
	munmap(move_mem, MOVE_SIZE);
	a64_vm_free(vm);
	return a64_exit();
}
