// SPDX-License-Identifier: GPL-2.0
/*
 * prefetch_engine - the two prefetch engines, kvm.prefetch_engine=batch
 * (batched, with faults where it cannot) and fault (one AUTO fault per
 * page), map exactly the same pages, the right ones; and what a
 * prefetched page costs with each, in one boot.
 *
 * On host-populated memory (4 KiB pages, each holding its own pattern),
 * for each engine: the guest first reads every 8th page of a 2 MiB block
 * (policy none), then one fault with auto, window 512, maps exactly the
 * pages that are missing and none that is mapped (prefetch_mapped and
 * pages_4k agree), writable (the guest then writes the block without a
 * fault) and with the right contents.  A second window is opened in the
 * middle of the next block, so both scan directions and several batches
 * run.  Both engines must give the same counts.
 *
 * On host pages that only a fault would make writable (anonymous memory
 * shared with a child after fork), gup nofault maps a window read-only
 * and gup fast maps nothing, with both engines alike; the batch does it
 * without the faults of the per-page engine, which the
 * kvm_mmu_spte_requested trace event (one per fault, guest's or AUTO)
 * counts.
 *
 * Every page reference an engine takes is dropped: after a VM that
 * prefetched all of a populated 32 MiB slot is gone and the memory is
 * unmapped, the memory is free again (MemFree and the allocator's per-CPU
 * lists; a leaked reference would keep its page allocated).
 *
 * Then the timing (printed, not asserted: times under TCG vary): a 16 MiB
 * host-populated slot read linearly with policy none and with auto 512,
 * each engine twice, alternating, in fresh VMs.  A guest fault costs
 * (t_none - t_mapped) / faults; a prefetched page costs
 * (t_auto - t_mapped - faults_auto * fault cost) / pages prefetched.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "kvmtest.h"
#include "kt_sys.h"

#define ENGINE_PATH	"/sys/module/kvm/parameters/prefetch_engine"
#define FAULT_EVENT	"kvmmmu/kvm_mmu_spte_requested"
#define SLOT		1
#define GPA		0x40000000ULL		/* 1 GiB, 2 MiB aligned */
#define BLOCK		(2ULL << 20)
#define BLOCK_PAGES	512
#define SIZE		(2 * BLOCK)
#define BENCH_SIZE	(16ULL << 20)
#define LEAK_SIZE	(32ULL << 20)
#define BENCH_ROUNDS	3

static const char *const engines[] = { "fault", "batch" };

struct counts {
	uint64_t pf, mapped, p4k;
};

static struct counts counts(struct kt_vm *vm, struct kt_vcpu *vcpu)
{
	struct counts c;

	c.pf = kt_vcpu_stat_get(vcpu, "pf_taken");
	c.mapped = kt_vcpu_stat_get(vcpu, "prefetch_mapped");
	KT_ASSERT(!kt_vm_stat(vm, "pages_4k", &c.p4k), "VM stat pages_4k");
	return c;
}

/* What changed from @a to @b. */
static struct counts delta(struct counts a, struct counts b)
{
	return (struct counts){ b.pf - a.pf, b.mapped - a.mapped,
				b.p4k - a.p4k };
}

#define ANY	UINT64_MAX	/* expect_step(): a count not checked */

/*
 * @d is what one step of @engine changed: expect @pf guest faults,
 * @mapped pages prefetched and @p4k new 4 KiB leaves (ANY: any number).
 */
static void expect_step(const char *engine, const char *what,
			struct counts d, uint64_t pf, uint64_t mapped,
			uint64_t p4k)
{
	KT_EXPECT((pf == ANY || d.pf == pf) &&
		  (mapped == ANY || d.mapped == mapped) &&
		  (p4k == ANY || d.p4k == p4k),
		  "%s: %s (pf %llu, mapped %llu, 4k %llu)", engine, what,
		  (unsigned long long)d.pf, (unsigned long long)d.mapped,
		  (unsigned long long)d.p4k);
}


/*
 * Free memory in KiB: MemFree of /proc/meminfo plus the pages the page
 * allocator keeps on its per-CPU lists (the "count:" lines of
 * /proc/zoneinfo's pagesets), which MemFree leaves out and which can hold
 * megabytes right after a large munmap (6.12 tunes their size).
 */
static uint64_t mem_free_kib(void)
{
	unsigned long long kib = 0, pcp = 0, n;
	char line[128];
	FILE *f = fopen("/proc/meminfo", "r");

	KT_ASSERT(f, "/proc/meminfo: %s", strerror(errno));
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "MemFree: %llu kB", &kib) == 1)
			break;
	fclose(f);
	KT_ASSERT(kib, "no MemFree in /proc/meminfo");
	f = fopen("/proc/zoneinfo", "r");
	KT_ASSERT(f, "/proc/zoneinfo: %s", strerror(errno));
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, " count: %llu", &n) == 1)
			pcp += n;
	fclose(f);
	return kib + pcp * (KT_PAGE_SIZE / 1024);
}

/*
 * A VM with auto, window 512, reads all of a populated LEAK_SIZE slot, so
 * that the engine maps all but one page in 512; then the VM goes and the
 * memory is unmapped.  Its pages must be free again: the engine took a
 * reference on every page it mapped, and one it did not drop keeps the
 * page.  A quarter of the slot is left for the allocator's per-CPU lists
 * and the kernel's own allocations in between.
 */
static void no_leak(const char *engine)
{
	uint64_t before, after, mapped, lost;
	struct kt_vcpu *vcpu;
	struct kt_vm *vm;
	char *mem;

	ktsys_set_engine(engine);
	before = mem_free_kib();
	mem = kt_populated(LEAK_SIZE, GPA);
	vm = kt_vm_on(SLOT, GPA, LEAK_SIZE, 0, mem, &vcpu);
	KT_ASSERT(!ktsys_set_policy(vm->fd, "auto", BLOCK_PAGES, 0),
		  "SET auto");
	kt_touch(vcpu, GPA, GPA + LEAK_SIZE, 0, KT_TOUCH_READ);
	mapped = kt_vcpu_stat_get(vcpu, "prefetch_mapped");
	kt_vcpu_free(vcpu);
	kt_vm_free(vm);
	munmap(mem, LEAK_SIZE);
	after = mem_free_kib();
	lost = before > after ? before - after : 0;
	KT_EXPECT(mapped == LEAK_SIZE / KT_PAGE_SIZE / BLOCK_PAGES *
			    (BLOCK_PAGES - 1),
		  "%s: the VM prefetched all but one page in %d (%llu)",
		  engine, BLOCK_PAGES, (unsigned long long)mapped);
	KT_EXPECT(lost < LEAK_SIZE / 4 / 1024,
		  "%s: the memory is free again after the VM (%llu KiB of %llu not free)",
		  engine, (unsigned long long)lost,
		  (unsigned long long)(LEAK_SIZE / 1024));
}

/* What a read pass over [from, to) of the slot must return. */
static uint32_t sum(char *mem, uint64_t from, uint64_t to)
{
	uint32_t s = 0;

	for (; from < to; from += KT_PAGE_SIZE)
		s += *(uint32_t *)(mem + from);
	return s;
}

/*
 * Read, then write, the first block: the guest must read the host's
 * contents.  The counts after.
 */
static struct counts read_write_block(const char *engine, const char *what,
				      struct kt_vm *vm, struct kt_vcpu *vcpu,
				      char *mem)
{
	uint32_t got = kt_touch(vcpu, GPA, GPA + BLOCK, 0, KT_TOUCH_READ);

	kt_touch(vcpu, GPA, GPA + BLOCK, 0, KT_TOUCH_WRITE);
	KT_EXPECT(got == sum(mem, 0, BLOCK),
		  "%s: %sthe guest reads the host's pages (sum 0x%x, want 0x%x)",
		  engine, what, got, sum(mem, 0, BLOCK));
	return counts(vm, vcpu);
}

static void knob(void)
{
	char buf[32];
	int r;

	KT_EXPECT(!ktsys_read_line(ENGINE_PATH, buf, sizeof(buf)) &&
		  (!strcmp(buf, "batch") || !strcmp(buf, "fault")),
		  "prefetch_engine reads batch or fault (%s)", buf);
	r = ktsys_write(ENGINE_PATH, "bogus");
	KT_EXPECT(r == -EINVAL, "prefetch_engine=bogus is EINVAL (%d)", r);
}

/* The scenario of the header with @engine; its counts go to @out[4]. */
static void exact(const char *engine, char *mem, struct counts *out)
{
	struct kt_vcpu *vcpu;
	struct counts a, b;
	struct kt_vm *vm;
	uint32_t got;

	ktsys_set_engine(engine);
	vm = kt_vm_on(SLOT, GPA, SIZE, 0, mem, &vcpu);

	/* Every 8th page of the first block: 64 guest faults, no window. */
	KT_ASSERT(!ktsys_set_policy(vm->fd, "none", 0, 0), "SET none");
	a = counts(vm, vcpu);
	kt_touch(vcpu, GPA, GPA + BLOCK, 8 * KT_PAGE_SIZE, KT_TOUCH_READ);
	b = counts(vm, vcpu);
	out[0] = delta(a, b);
	expect_step(engine, "64 faults map every 8th page", out[0], 64, ANY, 64);

	/*
	 * A fault at page 1 opens [0, 512): forward 2..511 less the 63
	 * mapped ones; backward, page 0 is mapped.
	 */
	KT_ASSERT(!ktsys_set_policy(vm->fd, "auto", BLOCK_PAGES, 0),
		  "SET auto 512");
	a = b;
	kt_touch(vcpu, GPA + KT_PAGE_SIZE, GPA + 2 * KT_PAGE_SIZE, 0,
		 KT_TOUCH_READ);
	b = counts(vm, vcpu);
	out[1] = delta(a, b);
	expect_step(engine,
		    "one fault, 447 missing pages prefetched, none mapped twice",
		    out[1], 1, 447, 448);

	/* All of it is there, writable, with the host's contents. */
	a = b;
	b = read_write_block(engine, "", vm, vcpu, mem);
	out[2] = delta(a, b);
	expect_step(engine, "reading and writing the block takes no fault",
		    out[2], 0, ANY, ANY);

	/* A fault at page 600 opens [512, 1024): 423 forward, 88 backward. */
	a = b;
	kt_touch(vcpu, GPA + 600 * KT_PAGE_SIZE, GPA + 601 * KT_PAGE_SIZE, 0,
		 KT_TOUCH_READ);
	got = kt_touch(vcpu, GPA + BLOCK, GPA + SIZE, 0, KT_TOUCH_READ);
	b = counts(vm, vcpu);
	out[3] = delta(a, b);
	expect_step(engine, "a window from its middle maps the rest of the block",
		    out[3], 1, 511, 512);
	KT_EXPECT(got == sum(mem, BLOCK, SIZE),
		  "%s: the second block holds the host's pages (sum 0x%x, want 0x%x)",
		  engine, got, sum(mem, BLOCK, SIZE));

	kt_vcpu_free(vcpu);
	kt_vm_free(vm);
}

/*
 * The read-only scenario of the header with @engine; its counts go to
 * @out[3].  @mem is shared with a child (fork) that holds it until the
 * end, so that every PTE of it is write-protected.
 */
static void readonly(const char *engine, char *mem, struct counts *out)
{
	const uint32_t nofault = KVM_PREFETCH_GUP_NOFAULT;
	struct kt_vcpu *vcpu;
	struct counts a, b;
	struct kt_vm *vm;
	long faults;
	int tr;

	ktsys_set_engine(engine);
	vm = kt_vm_on(SLOT, GPA, SIZE, 0, mem, &vcpu);

	/*
	 * nofault: a read at page 1 opens [0, 512); the 510 pages after it
	 * and page 0 before it are there, read-only.  The batch maps the
	 * 510 without a fault; the per-page engine takes one per page.
	 */
	KT_ASSERT(!ktsys_set_policy(vm->fd, "auto", BLOCK_PAGES, nofault),
		  "SET auto 512 nofault");
	a = counts(vm, vcpu);
	tr = ktsys_trace_begin(FAULT_EVENT);
	kt_touch(vcpu, GPA + KT_PAGE_SIZE, GPA + 2 * KT_PAGE_SIZE, 0,
		 KT_TOUCH_READ);
	faults = tr ? tr : ktsys_trace_end(FAULT_EVENT);
	b = counts(vm, vcpu);
	out[0] = delta(a, b);
	expect_step(engine,
		    "read-only host pages: one fault, nofault prefetches the other 511",
		    out[0], 1, 511, 512);
	if (!strcmp(engine, "batch"))
		KT_EXPECT(faults == 2,
			  "batch: the guest's fault and one AUTO fault (page 0, backward), the 510 forward in batches (%ld faults)",
			  faults);
	else
		KT_EXPECT(faults == 512,
			  "fault: the guest's fault and an AUTO fault per prefetched page (%ld faults)",
			  faults);

	/*
	 * Read-only, with the host's contents: each first write faults (at
	 * least once: the fault's own GUP breaks the host's COW, and the
	 * invalidation that follows makes KVM retry it).
	 */
	KT_ASSERT(!ktsys_set_policy(vm->fd, "none", 0, 0), "SET none");
	a = b;
	b = read_write_block(engine, "read-only host pages: ", vm, vcpu, mem);
	out[1] = delta(a, b);
	KT_EXPECT(b.pf - a.pf >= BLOCK_PAGES,
		  "%s: read-only host pages are mapped read-only: every first write faults (%llu faults, %d pages)",
		  engine, (unsigned long long)(b.pf - a.pf), BLOCK_PAGES);

	/* gup fast: the same pages in the next block are not prefetched. */
	KT_ASSERT(!ktsys_set_policy(vm->fd, "auto", BLOCK_PAGES,
				    KVM_PREFETCH_GUP_FAST_ONLY),
		  "SET auto 512 fast");
	a = b;
	kt_touch(vcpu, GPA + BLOCK + KT_PAGE_SIZE,
		 GPA + BLOCK + 2 * KT_PAGE_SIZE, 0, KT_TOUCH_READ);
	b = counts(vm, vcpu);
	out[2] = delta(a, b);
	expect_step(engine, "read-only host pages: gup fast prefetches none",
		    out[2], 1, 0, ANY);

	kt_vcpu_free(vcpu);
	kt_vm_free(vm);
}

/* Run readonly() with @engine on populated memory shared with a child. */
static void readonly_shared(const char *engine, struct counts *out)
{
	char *mem = kt_populated(SIZE, GPA);
	struct kt_sharer sh;

	kt_share_begin(&sh);
	readonly(engine, mem, out);
	kt_share_end(&sh);
	munmap(mem, SIZE);
}

struct timing {
	uint64_t ns, ns_mapped, pf, mapped;
};

/* Read BENCH_SIZE of @mem linearly in a fresh VM with @policy, twice. */
static struct timing timed(char *mem, const char *policy, uint32_t nr)
{
	struct kt_vcpu *vcpu;
	struct counts a, b;
	struct timing t;
	struct kt_vm *vm;
	uint64_t t0;

	vm = kt_vm_on(SLOT, GPA, BENCH_SIZE, 0, mem, &vcpu);
	KT_ASSERT(!ktsys_set_policy(vm->fd, policy, nr, 0), "SET %s", policy);
	a = counts(vm, vcpu);
	t0 = kt_now_ns();
	kt_touch(vcpu, GPA, GPA + BENCH_SIZE, 0, KT_TOUCH_READ);
	t.ns = kt_now_ns() - t0;
	b = counts(vm, vcpu);
	t0 = kt_now_ns();
	kt_touch(vcpu, GPA, GPA + BENCH_SIZE, 0, KT_TOUCH_READ);
	t.ns_mapped = kt_now_ns() - t0;
	t.pf = b.pf - a.pf;
	t.mapped = b.mapped - a.mapped;
	kt_vcpu_free(vcpu);
	kt_vm_free(vm);
	return t;
}

static void bench(void)
{
	char *mem = kt_populated(BENCH_SIZE, GPA);
	double fault_us, page_us[2] = { 1e30, 1e30 };
	struct timing none, t;
	uint64_t mapped[2] = { 0, 0 };
	int round, e;

	none = timed(mem, "none", 0);
	fault_us = (double)(none.ns - none.ns_mapped) / 1000.0 / none.pf;
	for (round = 0; round < BENCH_ROUNDS; round++) {
		for (e = 0; e < 2; e++) {
			double us;

			ktsys_set_engine(engines[e]);
			t = timed(mem, "auto", BLOCK_PAGES);
			us = ((double)(t.ns - t.ns_mapped) / 1000.0 -
			      t.pf * fault_us) / t.mapped;
			kt_info("bench %s round %d: %llu faults, %llu prefetched, %.1f ms (mapped pass %.1f ms): %.2f us per prefetched page",
				engines[e], round, (unsigned long long)t.pf,
				(unsigned long long)t.mapped, t.ns / 1e6,
				t.ns_mapped / 1e6, us);
			if (us < page_us[e])
				page_us[e] = us;
			mapped[e] = t.mapped;
		}
	}
	kt_info("bench: guest fault %.1f us (none: %llu faults, %.1f ms)",
		fault_us, (unsigned long long)none.pf, none.ns / 1e6);
	kt_info("bench: per prefetched page, best of %d: fault %.2f us, batch %.2f us; batch/fault %.1f%%; per guest fault: fault %.1f%%, batch %.1f%%",
		BENCH_ROUNDS, page_us[0], page_us[1],
		100.0 * page_us[1] / page_us[0], 100.0 * page_us[0] / fault_us,
		100.0 * page_us[1] / fault_us);
	KT_EXPECT(mapped[0] == mapped[1] && mapped[0] > 0,
		  "bench: both engines prefetch the same pages (%llu, %llu)",
		  (unsigned long long)mapped[0], (unsigned long long)mapped[1]);
	munmap(mem, BENCH_SIZE);
}

int main(void)
{
	struct counts c[2][4];
	char engine[32] = "";
	char *mem;
	int e;

	kt_require_kvm();
	ktsys_require_prefetch();
	KT_REQUIRE(!ktsys_read_line(ENGINE_PATH, engine, sizeof(engine)),
		   "no %s", ENGINE_PATH);

	knob();
	for (e = 0; e < 2; e++) {
		mem = kt_populated(SIZE, GPA);
		exact(engines[e], mem, c[e]);
		munmap(mem, SIZE);
	}
	KT_EXPECT(!memcmp(c[0], c[1], sizeof(c[0])),
		  "both engines give the same counts at every step");
	for (e = 0; e < 2; e++)
		readonly_shared(engines[e], c[e]);
	KT_EXPECT(!memcmp(c[0], c[1], sizeof(c[0][0]) * 3),
		  "read-only host pages: both engines give the same counts at every step");
	for (e = 0; e < 2; e++)
		no_leak(engines[e]);
	bench();
	ktsys_set_engine(engine);
	return kt_exit();
}
