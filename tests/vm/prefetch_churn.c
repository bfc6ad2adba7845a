// SPDX-License-Identifier: GPL-2.0
/*
 * prefetch_churn - prefetch under concurrent invalidation.
 *
 * Policy auto with large windows (nr_pages changed among 64..512 while
 * the guest runs) and, for about 12 s:
 *
 *  - ZAP_VCPUS vCPU threads each own a range of slot 1 and loop: the host
 *    writes a fresh tag T into dword 0 of every page of the range; the
 *    guest reads every page (any value other than T exits to the host);
 *    the guest writes T' into every page; the host reads every page.
 *    Meanwhile a zapper thread MADV_DONTNEEDs random ranges of slot 1's
 *    host memory (which then reads 0). Exact check: the guest may see T
 *    or 0, the host may see T' or 0, and 0 only if a zap of that page
 *    started after the last zap of it that had completed before the host
 *    (or the guest) wrote it (per-page started/completed counters).
 *    Anything else (an old tag, T instead of T', garbage) means a stale
 *    or wrong mapping. After the churn every vCPU does one quiet round,
 *    in which no 0 is legal.
 *  - One vCPU thread reads slot 2 page by page, one exit per page, while
 *    a thread deletes slot 2 and adds it back on new host memory holding
 *    the next generation's tag. Each read must be an MMIO exit (only
 *    legal if a delete had started and the re-add had not finished
 *    before that KVM_RUN) or the tag of a generation that was not yet
 *    deleted when that KVM_RUN began and whose add had begun when it
 *    returned.
 *
 * The guest program (32-bit, see churn_code) lives at CHURN_RIP in the
 * library's code page. Registers: esi start, edi end, ecx stride,
 * edx value, ebx mode (0 write edx, 1 read and report != edx on port
 * 0x7d, 2 report every value on port 0x7c); port 0x7e ends a pass.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>

#include "kvmtest.h"
#include "kt_sys.h"

#define ZAP_VCPUS	3
#define RANGE_PAGES	128ULL			/* per vCPU, 512 KiB */
#define RANGE_SIZE	(RANGE_PAGES * KT_PAGE_SIZE)
#define ZAP_SLOT	1
#define ZAP_GPA		0x400000ULL
#define ZAP_SIZE	(ZAP_VCPUS * RANGE_SIZE)
#define ZAP_PAGES	(ZAP_SIZE / KT_PAGE_SIZE)
#define MOVE_SLOT	2
#define MOVE_GPA	0x1000000ULL		/* 16 MiB */
#define MOVE_SIZE	(256ULL << 10)
#define MOVE_PAGES	(MOVE_SIZE / KT_PAGE_SIZE)

#define CHURN_RIP	0x100ULL
#define PORT_REPORT	0x7c
#define PORT_BAD	0x7d
#define MODE_WRITE	0
#define MODE_CHECK	1
#define MODE_REPORT	2
#define MMIO_MARK	0xdeadbeefu
#define GEN_TAG(g)	(0x70000000u | ((uint32_t)(g) & 0xffffff))
#define RUN_SECONDS	12
/*
 * A loaded host runs the test VM slower: past RUN_SECONDS the churn goes
 * on until it has done what check_results() calls churn, for at most
 * this long, so that the verdict counts work, not seconds.
 */
#define RUN_MAX_SECONDS	90
#define MAX_REPORTS	8			/* FAIL lines per thread */

extern const uint8_t churn_code[], churn_code_end[];
asm(".pushsection .rodata\n"
	"churn_code:\n"
	".code32\n"
	"1:\n"
	"	cmp %edi, %esi\n"
	"	jae 5f\n"
	"	cmp $1, %ebx\n"
	"	je 2f\n"
	"	ja 3f\n"
	"	mov %edx, (%esi)\n"			/* write */
	"	jmp 4f\n"
	"2:\n"
	"	mov (%esi), %eax\n"			/* check */
	"	cmp %edx, %eax\n"
	"	je 4f\n"
	"	out %eax, $0x7d\n"
	"	jmp 4f\n"
	"3:\n"
	"	mov (%esi), %eax\n"			/* report */
	"	out %eax, $0x7c\n"
	"4:\n"
	"	add %ecx, %esi\n"
	"	jmp 1b\n"
	"5:\n"
	"	out %eax, $0x7e\n"
	"	jmp 1b\n"
	".code64\n"
	"churn_code_end:\n"
	".popsection\n");

static struct kt_vm *vm;
static char *zap_mem;
static int stop;

/* Per page of slot 1: zaps started and completed. */
static uint32_t zap_started[ZAP_PAGES], zap_done[ZAP_PAGES];
static uint64_t nr_zaps, nr_zapped_pages, nr_policy_changes;

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

static int set_policy_auto(uint32_t nr)
{
	return ktsys_set_policy(vm->fd, "auto", nr, KVM_PREFETCH_GUP_NOFAULT);
}

static void guest_setup(struct kt_vcpu *vcpu, uint64_t start, uint64_t end,
			uint32_t stride, uint32_t value, uint32_t mode)
{
	kt_vcpu_setup_loop(vcpu, CHURN_RIP, start, end, stride, mode, value);
}

static uint64_t guest_esi(struct kt_vcpu *vcpu)
{
	struct kvm_regs regs;

	KT_ASSERT(!ioctl(vcpu->fd, KVM_GET_REGS, &regs), "KVM_GET_REGS: %s",
		  strerror(errno));
	return regs.rsi;
}

static void unexpected_exit(struct kt_vcpu *vcpu, const char *what)
{
	kt_vcpu_dump_exit(vcpu);
	kt_fail("vcpu %d (%s): unexpected exit %s", vcpu->id, what,
		kt_exit_reason_str(vcpu->run->exit_reason));
	exit(kt_exit());
}

/* ---- slot 1: DONTNEED churn ------------------------------------- */

struct zap_worker {
	pthread_t thread;
	struct kt_vcpu *vcpu;
	int idx;
	uint64_t iterations, zeros_guest, zeros_host, bad;
	uint32_t snap[RANGE_PAGES];
};

static void zw_bad(struct zap_worker *w, const char *fmt, uint64_t page,
		   uint32_t val, uint32_t want)
{
	if (w->bad++ < MAX_REPORTS)
		kt_fail("vcpu %d iteration %llu: %s: page %llu (gpa 0x%llx) holds 0x%x, want 0x%x%s",
			w->vcpu->id, (unsigned long long)w->iterations, fmt,
			(unsigned long long)page,
			(unsigned long long)(ZAP_GPA + page * KT_PAGE_SIZE),
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
	uint32_t t2 = t ^ 0x80000000u;
	uint64_t first = w->idx * RANGE_PAGES, i;
	uint64_t gpa0 = ZAP_GPA + first * KT_PAGE_SIZE;

	/* Host writes T. */
	snapshot(w);
	for (i = 0; i < RANGE_PAGES; i++)
		*(volatile uint32_t *)(zap_mem + (first + i) *
				       KT_PAGE_SIZE) = t;

	/* Guest reads: T, or 0 after a zap. */
	guest_setup(w->vcpu, gpa0, gpa0 + RANGE_SIZE, KT_PAGE_SIZE, t,
		    MODE_CHECK);
	for (;;) {
		uint32_t v;
		uint64_t page;

		kt_vcpu_run(w->vcpu);
		if (kt_vcpu_out32(w->vcpu, KT_DONE_PORT, NULL))
			break;
		if (!kt_vcpu_out32(w->vcpu, PORT_BAD, &v))
			unexpected_exit(w->vcpu, "check pass");
		page = (guest_esi(w->vcpu) - ZAP_GPA) / KT_PAGE_SIZE;
		if (v == 0 && zero_ok(w, page))
			w->zeros_guest++;
		else
			zw_bad(w, "guest read", page, v, t);
	}

	/* Guest writes T'; host reads: T', or 0 after a zap. */
	snapshot(w);
	guest_setup(w->vcpu, gpa0, gpa0 + RANGE_SIZE, KT_PAGE_SIZE, t2,
		    MODE_WRITE);
	kt_vcpu_run(w->vcpu);
	if (!kt_vcpu_out32(w->vcpu, KT_DONE_PORT, NULL))
		unexpected_exit(w->vcpu, "write pass");
	for (i = 0; i < RANGE_PAGES; i++) {
		uint32_t v = *(volatile uint32_t *)
			(zap_mem + (first + i) * KT_PAGE_SIZE);

		if (v == t2)
			continue;
		if (v == 0 && zero_ok(w, first + i))
			w->zeros_host++;
		else
			zw_bad(w, "host read after guest write",
			       first + i, v, t2);
	}
	w->iterations++;
}

static void *zap_worker_fn(void *arg)
{
	struct zap_worker *w = arg;

	while (!stopping())
		zap_iteration(w);
	return NULL;
}

static void *zapper_fn(void *arg)
{
	static const uint32_t nrs[] = { 64, 128, 256, 512 };
	uint64_t seed = 0x123456789abcdefULL, n = 0;

	while (!stopping()) {
		uint64_t len = 1 + rnd(&seed) % 32;
		uint64_t first = rnd(&seed) % ZAP_PAGES, i;

		if (first + len > ZAP_PAGES)
			len = ZAP_PAGES - first;
		for (i = first; i < first + len; i++)
			__atomic_add_fetch(&zap_started[i], 1, __ATOMIC_SEQ_CST);
		KT_ASSERT(!madvise(zap_mem + first * KT_PAGE_SIZE,
				   len * KT_PAGE_SIZE, MADV_DONTNEED),
			  "MADV_DONTNEED: %s", strerror(errno));
		for (i = first; i < first + len; i++)
			__atomic_add_fetch(&zap_done[i], 1, __ATOMIC_SEQ_CST);
		nr_zaps++;
		nr_zapped_pages += len;

		/* Now and then, a new window for the running VM. */
		if (!(++n % 32)) {
			int r = set_policy_auto(nrs[(n / 32) % 4]);

			if (r)
				kt_fail("KVM_SET_PREFETCH_POLICY while running: %s",
					strerror(-r));
			nr_policy_changes++;
		}
		usleep(2000 + rnd(&seed) % 4000);
	}
	return NULL;
}

/* ---- slot 2: delete / re-add churn ------------------------------ */

struct move_worker {
	pthread_t thread;
	struct kt_vcpu *vcpu;
	uint64_t reads, mmio, passes, bad;
	uint64_t tags_seen_min_gen, tags_seen_max_gen;
};

/*
 * Host memory for slot 2 holding generation @gen's tag in every page,
 * written before the slot is added on it (the library's own memory
 * would be added empty).  The test unmaps it after the slot's delete.
 */
static char *new_move_mem(uint64_t gen)
{
	char *p = mmap(NULL, MOVE_SIZE, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	uint64_t i;

	KT_ASSERT(p != MAP_FAILED, "mmap: %s", strerror(errno));
	KT_ASSERT(!madvise(p, MOVE_SIZE, MADV_NOHUGEPAGE), "madvise: %s",
		  strerror(errno));
	for (i = 0; i < MOVE_PAGES; i++)
		*(uint32_t *)(p + i * KT_PAGE_SIZE) = GEN_TAG(gen);
	return p;
}

static char *move_mem;

static void *mover_fn(void *arg)
{
	uint64_t seed = 0xfeedfacecafebeefULL, g;

	for (g = 1; !stopping(); g++) {
		char *next = new_move_mem(g + 1);

		store64(&gen_del_started, g);
		kt_vm_delete_slot(vm, MOVE_SLOT);
		store64(&gen_del_done, g);
		usleep(rnd(&seed) % 3000);
		store64(&gen_add_started, g + 1);
		kt_vm_add_slot(vm, MOVE_SLOT, MOVE_GPA, MOVE_SIZE, 0, next);
		store64(&gen_add_done, g + 1);
		munmap(move_mem, MOVE_SIZE);
		move_mem = next;
		nr_generations++;
		usleep(2000 + rnd(&seed) % 20000);
	}
	return NULL;
}

static void *move_worker_fn(void *arg)
{
	struct move_worker *w = arg;
	struct kvm_run *run = w->vcpu->run;

	w->tags_seen_min_gen = ~0ULL;
	while (!stopping()) {
		guest_setup(w->vcpu, MOVE_GPA, MOVE_GPA + MOVE_SIZE,
			    KT_PAGE_SIZE, 0, MODE_REPORT);
		for (;;) {
			uint64_t del_done0, add_done0, del_started1, add_started1;
			uint64_t gen;
			uint32_t v;

			del_done0 = load64(&gen_del_done);
			add_done0 = load64(&gen_add_done);
			kt_vcpu_run(w->vcpu);
			del_started1 = load64(&gen_del_started);
			add_started1 = load64(&gen_add_started);

			if (kt_vcpu_out32(w->vcpu, KT_DONE_PORT, NULL))
				break;
			if (run->exit_reason == KVM_EXIT_MMIO &&
			    !run->mmio.is_write && run->mmio.len == 4 &&
			    run->mmio.phys_addr >= MOVE_GPA &&
			    run->mmio.phys_addr < MOVE_GPA + MOVE_SIZE) {
				/* Legal only if the slot may have been absent. */
				if (del_started1 < add_done0 &&
				    w->bad++ < MAX_REPORTS)
					kt_fail("MMIO exit at gpa 0x%llx but slot 2 was present throughout (gen %llu)",
						(unsigned long long)run->mmio.phys_addr,
						(unsigned long long)add_done0);
				w->mmio++;
				*(uint32_t *)run->mmio.data = MMIO_MARK;
				/* Completed on re-entry; the guest reports it. */
				kt_vcpu_run(w->vcpu);
				if (!kt_vcpu_out32(w->vcpu, PORT_REPORT, &v) ||
				    v != MMIO_MARK)
					unexpected_exit(w->vcpu, "after MMIO");
				continue;
			}
			if (!kt_vcpu_out32(w->vcpu, PORT_REPORT, &v))
				unexpected_exit(w->vcpu, "report pass");
			w->reads++;
			gen = v & 0xffffff;
			if ((v & 0xff000000u) != 0x70000000u ||
			    gen <= del_done0 || gen > add_started1) {
				if (w->bad++ < MAX_REPORTS)
					kt_fail("slot 2 gpa 0x%llx read 0x%x: want the tag of generation %llu..%llu",
						(unsigned long long)guest_esi(w->vcpu),
						v, (unsigned long long)(del_done0 + 1),
						(unsigned long long)add_started1);
				continue;
			}
			if (gen < w->tags_seen_min_gen)
				w->tags_seen_min_gen = gen;
			if (gen > w->tags_seen_max_gen)
				w->tags_seen_max_gen = gen;
		}
		w->passes++;
	}
	return NULL;
}

static struct zap_worker zw[ZAP_VCPUS];
static struct move_worker mw;
static struct kt_vcpu *vcpus[ZAP_VCPUS + 1];

/*
 * The VM: policy auto 512, the churn program in the code page, slot 1
 * and slot 2 (generation 1), a vCPU per zap worker and one for slot 2.
 */
static void setup(void)
{
	uint8_t *code;
	int i, r;

	vm = kt_vm_create();
	KT_REQUIRE(kt_vm_check_ext(vm, KVM_CAP_PREFETCH_POLICY) > 0,
		   "no KVM_CAP_PREFETCH_POLICY");
	r = set_policy_auto(512);
	KT_ASSERT(!r, "KVM_SET_PREFETCH_POLICY auto 512: %s", strerror(-r));

	code = kt_vm_gpa_to_hva(vm, CHURN_RIP);
	KT_ASSERT(churn_code_end - churn_code < 0x400, "guest code too big");
	memcpy(code, churn_code, churn_code_end - churn_code);

	zap_mem = kt_vm_add_slot(vm, ZAP_SLOT, ZAP_GPA, ZAP_SIZE, 0, NULL);
	move_mem = new_move_mem(1);
	store64(&gen_add_started, 1);
	kt_vm_add_slot(vm, MOVE_SLOT, MOVE_GPA, MOVE_SIZE, 0, move_mem);
	store64(&gen_add_done, 1);

	for (i = 0; i <= ZAP_VCPUS; i++)
		vcpus[i] = kt_vcpu_add(vm, i);
}

/* While the threads run: has each done as much as check_results() wants? */
static bool churned_enough(void)
{
	int i;

	for (i = 0; i < ZAP_VCPUS; i++)
		if (__atomic_load_n(&zw[i].iterations, __ATOMIC_RELAXED) < 2)
			return false;
	return __atomic_load_n(&nr_zaps, __ATOMIC_RELAXED) > 100 &&
	       __atomic_load_n(&mw.passes, __ATOMIC_RELAXED) > 3 &&
	       __atomic_load_n(&nr_generations, __ATOMIC_RELAXED) > 10;
}

/*
 * All threads for RUN_SECONDS, or until they churned enough (at most
 * RUN_MAX_SECONDS): the workers, the zapper and the mover.
 */
static void churn(void)
{
	pthread_t zapper, mover;
	int i;

	for (i = 0; i < ZAP_VCPUS; i++) {
		memset(&zw[i], 0, sizeof(zw[i]));
		zw[i].vcpu = vcpus[i];
		zw[i].idx = i;
		KT_ASSERT(!pthread_create(&zw[i].thread, NULL, zap_worker_fn,
					  &zw[i]), "pthread_create");
	}
	memset(&mw, 0, sizeof(mw));
	mw.vcpu = vcpus[ZAP_VCPUS];
	KT_ASSERT(!pthread_create(&mw.thread, NULL, move_worker_fn, &mw),
		  "pthread_create");
	KT_ASSERT(!pthread_create(&zapper, NULL, zapper_fn, NULL),
		  "pthread_create");
	KT_ASSERT(!pthread_create(&mover, NULL, mover_fn, NULL),
		  "pthread_create");

	sleep(RUN_SECONDS);
	for (i = RUN_SECONDS; i < RUN_MAX_SECONDS && !churned_enough(); i++)
		sleep(1);
	__atomic_store_n(&stop, 1, __ATOMIC_SEQ_CST);
	pthread_join(zapper, NULL);
	pthread_join(mover, NULL);
	for (i = 0; i < ZAP_VCPUS; i++)
		pthread_join(zw[i].thread, NULL);
	pthread_join(mw.thread, NULL);
}

/* Once more with everything quiet: no zero is legal now. */
static void check_quiet_rounds(void)
{
	int i;

	for (i = 0; i < ZAP_VCPUS; i++) {
		uint64_t zeros = zw[i].zeros_guest + zw[i].zeros_host;
		uint64_t bad0 = zw[i].bad;

		zap_iteration(&zw[i]);
		KT_EXPECT(zw[i].bad == bad0 &&
			  zw[i].zeros_guest + zw[i].zeros_host == zeros,
			  "vcpu %d: quiet round after the churn sees exactly the tags written",
			  i);
	}
}

/* Stat @name summed over all vCPUs. */
static uint64_t sum_stat(const char *name)
{
	uint64_t sum = 0;
	int i;

	for (i = 0; i <= ZAP_VCPUS; i++)
		sum += kt_vcpu_stat_get(vcpus[i], name);
	return sum;
}

/* What the run did, as "# " lines. */
static void log_run(double secs)
{
	int i;

	kt_info("%.1f s: %llu zaps (%llu pages), %llu policy changes, %llu slot 2 generations",
		secs, (unsigned long long)nr_zaps,
		(unsigned long long)nr_zapped_pages,
		(unsigned long long)nr_policy_changes,
		(unsigned long long)nr_generations);
	for (i = 0; i < ZAP_VCPUS; i++)
		kt_info("vcpu %d: %llu iterations, zeros seen by guest %llu, by host %llu, bad %llu",
			i, (unsigned long long)zw[i].iterations,
			(unsigned long long)zw[i].zeros_guest,
			(unsigned long long)zw[i].zeros_host,
			(unsigned long long)zw[i].bad);
	kt_info("vcpu %d: %llu passes over slot 2, %llu reads (generations %llu..%llu), %llu MMIO exits, bad %llu",
		ZAP_VCPUS, (unsigned long long)mw.passes,
		(unsigned long long)mw.reads,
		(unsigned long long)(mw.reads ? mw.tags_seen_min_gen : 0),
		(unsigned long long)mw.tags_seen_max_gen,
		(unsigned long long)mw.mmio, (unsigned long long)mw.bad);
	kt_info("all vcpus: pf_taken %llu prefetch_mapped %llu prefetch_windows %llu",
		(unsigned long long)sum_stat("pf_taken"),
		(unsigned long long)sum_stat("prefetch_mapped"),
		(unsigned long long)sum_stat("prefetch_windows"));
}

/* No bad read anywhere, and the run exercised what it claims to. */
static void check_results(void)
{
	uint64_t bad = 0, min_iter = ~0ULL, zeros_total = 0;
	uint64_t mapped = sum_stat("prefetch_mapped");
	int i;

	for (i = 0; i < ZAP_VCPUS; i++) {
		if (zw[i].iterations < min_iter)
			min_iter = zw[i].iterations;
		zeros_total += zw[i].zeros_guest;
		bad += zw[i].bad;
	}

	KT_EXPECT(!bad, "DONTNEED churn: guest and host only ever saw the right tag or 0 after a zap (%llu bad)",
		  (unsigned long long)bad);
	KT_EXPECT(!mw.bad, "memslot churn: every read of slot 2 was a live generation's tag or a legal MMIO exit (%llu bad)",
		  (unsigned long long)mw.bad);
	KT_EXPECT(nr_zaps > 100 && min_iter >= 2 && zeros_total > 0 &&
		  mw.passes > 3 && mw.mmio > 0 && nr_generations > 10 &&
		  mapped > 0,
		  "churn happened: %llu zaps, >= %llu rounds per vcpu, %llu zeros seen by guests, %llu slot-2 passes, %llu MMIO exits, %llu generations, %llu pages prefetched",
		  (unsigned long long)nr_zaps, (unsigned long long)min_iter,
		  (unsigned long long)zeros_total,
		  (unsigned long long)mw.passes,
		  (unsigned long long)mw.mmio,
		  (unsigned long long)nr_generations,
		  (unsigned long long)mapped);
}

int main(void)
{
	uint64_t t0;
	int i;

	kt_require_kvm();
	setup();
	t0 = kt_now_ns();
	churn();
	check_quiet_rounds();
	log_run((kt_now_ns() - t0) / 1e9);
	check_results();

	for (i = 0; i <= ZAP_VCPUS; i++)
		kt_vcpu_free(vcpus[i]);
	kt_vm_delete_slot(vm, MOVE_SLOT);
	munmap(move_mem, MOVE_SIZE);
	kt_vm_free(vm);
	return kt_exit();
}
