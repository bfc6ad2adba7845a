// SPDX-License-Identifier: GPL-2.0
/*
 * prefetch_budget - one exit examines at most 16384 pages, whatever the
 * window: the rest of a large window is left to the guest's next fault.
 *
 * A VM with auto, nr_pages 262144 (1 GiB, the largest window) reads a
 * populated 128 MiB slot of 4 KiB host pages (32768 pages) page by page,
 * with each engine.  Its first fault opens a window over the whole slot;
 * that exit maps at least the engine's minimum, 512 SPTEs (only a pending
 * request or the scheduler stop it earlier than the cap) and at most
 * 16384.  So the whole pass takes at least 2 guest faults (1 if the cap
 * were not there) and at most 64 (32768 / 512).  The exact counts are
 * printed: without an interruption they are 16384 and 2.
 *
 * Then the slot is mapped whole but for one hole near its start (the
 * host page zapped with MADV_DONTNEED and written again): the guest's
 * fault in the hole opens the 1 GiB window again, whose forward walk
 * finds only mapped pages.  The budget is charged for each page examined,
 * mapped or not, so that exit examines exactly 16384 pages
 * (prefetch_scanned) and maps none: it does not walk the whole window.
 * What the cap buys in latency is measured by "make bench-budget"
 * (tests/bench/bench_budget.c), not here.
 */
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>

#include "kvmtest.h"
#include "kt_sys.h"

#define ENGINE_PATH	"/sys/module/kvm/parameters/prefetch_engine"
#define SLOT		1
#define GPA		0x40000000ULL
#define SIZE		(128ULL << 20)
#define PAGES		(SIZE / KT_PAGE_SIZE)
#define CAP		16384
#define MIN		512

static const char *const engines[] = { "fault", "batch" };

static void run(const char *engine)
{
	uint64_t pf0, first, pf, mapped, sc0, sc, m0, pf1;
	struct kt_vcpu *vcpu;
	struct kt_vm *vm;
	char *mem;

	ktsys_set_engine(engine);
	mem = kt_populated(SIZE, GPA);
	vm = kt_vm_on(SLOT, GPA, SIZE, 0, mem, &vcpu);
	KT_ASSERT(!ktsys_set_policy(vm->fd, "auto", 262144,
				    KVM_PREFETCH_GUP_NOFAULT), "SET auto");

	pf0 = kt_vcpu_stat_get(vcpu, "pf_taken");
	kt_touch(vcpu, GPA, GPA + KT_PAGE_SIZE, 0, KT_TOUCH_READ);
	first = kt_vcpu_stat_get(vcpu, "prefetch_mapped");
	kt_touch(vcpu, GPA, GPA + SIZE, 0, KT_TOUCH_READ);
	pf = kt_vcpu_stat_get(vcpu, "pf_taken") - pf0;
	mapped = kt_vcpu_stat_get(vcpu, "prefetch_mapped");

	/* A hole at page 100 of a slot mapped whole. */
	KT_ASSERT(!madvise(mem + 100 * KT_PAGE_SIZE, KT_PAGE_SIZE,
			   MADV_DONTNEED), "MADV_DONTNEED");
	*(uint32_t *)(mem + 100 * KT_PAGE_SIZE) = (uint32_t)(GPA + 100 * KT_PAGE_SIZE);
	sc0 = kt_vcpu_stat_get(vcpu, "prefetch_scanned");
	m0 = kt_vcpu_stat_get(vcpu, "prefetch_mapped");
	pf1 = kt_vcpu_stat_get(vcpu, "pf_taken");
	kt_touch(vcpu, GPA + 100 * KT_PAGE_SIZE, GPA + 101 * KT_PAGE_SIZE, 0,
		 KT_TOUCH_READ);
	sc = kt_vcpu_stat_get(vcpu, "prefetch_scanned") - sc0;
	kt_info("%s: a fault in a hole of a mapped slot: %llu guest fault, %llu pages examined, %llu mapped",
		engine,
		(unsigned long long)(kt_vcpu_stat_get(vcpu, "pf_taken") - pf1),
		(unsigned long long)sc,
		(unsigned long long)(kt_vcpu_stat_get(vcpu, "prefetch_mapped") - m0));
	KT_EXPECT(sc == CAP && kt_vcpu_stat_get(vcpu, "prefetch_mapped") == m0,
		  "%s: one exit over a mapped 1 GiB window examines the budget, %d pages, and maps none (%llu)",
		  engine, CAP, (unsigned long long)sc);
	kt_vcpu_free(vcpu);
	kt_vm_free(vm);
	munmap(mem, SIZE);

	kt_info("%s: the first exit mapped %llu pages; %llu guest faults and %llu pages prefetched for %llu pages",
		engine, (unsigned long long)first, (unsigned long long)pf,
		(unsigned long long)mapped, (unsigned long long)PAGES);
	KT_EXPECT(first >= MIN && first <= CAP,
		  "%s: one exit maps between %d and %d SPTEs of a 1 GiB window (%llu)",
		  engine, MIN, CAP, (unsigned long long)first);
	KT_EXPECT(pf >= 2 && pf <= PAGES / MIN,
		  "%s: the rest of the window is left to later faults: 2 to %llu of them (%llu)",
		  engine, (unsigned long long)(PAGES / MIN),
		  (unsigned long long)pf);
	KT_EXPECT(pf + mapped == PAGES,
		  "%s: every page is a guest fault or a prefetch, once (%llu + %llu)",
		  engine, (unsigned long long)pf, (unsigned long long)mapped);
}

int main(void)
{
	char engine[32] = "";
	int e;

	kt_require_kvm();
	ktsys_require_prefetch();
	KT_REQUIRE(!ktsys_read_line(ENGINE_PATH, engine, sizeof(engine)),
		   "no %s", ENGINE_PATH);
	for (e = 0; e < 2; e++)
		run(engines[e]);
	KT_ASSERT(!ktsys_write(ENGINE_PATH, engine), "restore prefetch_engine");
	return kt_exit();
}
