// SPDX-License-Identifier: GPL-2.0
/*
 * prefetch_huge - prefetch over huge host pages (THP and hugetlbfs).
 *
 * A fault that installs a 2 MiB mapping opens a window only if the window
 * is larger than 2 MiB; prefetch then steps by 2 MiB, maps whole huge
 * pages (prefetch_mapped counts 512 each) and leaves mappings that are
 * there alone: the VM's pages_2m/pages_4k counts show no split and no
 * overwrite.  hugetlbfs pages are found by the fast GUP path even in
 * nofault mode (which never uses slow GUP on hugetlb).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "kvmtest.h"
#include "kt_sys.h"

#define SLOT		1
#define GPA		0x40000000ULL		/* 1 GiB, 2 MiB aligned */
#define HUGE		(2ULL << 20)
#define NR_HUGE		8
#define SIZE		(NR_HUGE * HUGE)
#define PAGES_PER_HUGE	512
#define THP_PATH	"/sys/kernel/mm/transparent_hugepage/enabled"

/* Host memory of SIZE, 2 MiB aligned, backed by huge pages, populated. */
static char *huge_memory(bool hugetlb)
{
	char *mem;

	if (!hugetlb)
		return kt_thp_memory(SIZE, 0x6b);
	mem = mmap(NULL, SIZE, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS | MAP_HUGETLB, -1, 0);
	if (mem == MAP_FAILED)
		return NULL;
	memset(mem, 0x6b, SIZE);
	return mem;
}

static void check_contents(char *mem, uint64_t from, uint64_t to)
{
	uint64_t off, bad = 0;

	for (off = from; off < to; off += KT_PAGE_SIZE)
		if (*(uint32_t *)(mem + off) != (uint32_t)(GPA + off))
			bad++;
	KT_EXPECT(bad == 0, "guest-written pages hold their pattern (%llu wrong)",
		  (unsigned long long)bad);
}

/*
 * The VM's usage stats (prefetch-api.rst): a prefetched huge SPTE counts
 * its 512 pages, used once the guest touched it, and avoided one fault.
 * Nothing to check where KVM has no such stats.
 */
static void usage_expect(struct kt_vm *vm, const char *what, const char *when,
			 uint64_t used, uint64_t untouched, uint64_t avoided)
{
	uint64_t u, t, a;

	if (kt_vm_stat(vm, "prefetch_used", &u))
		return;
	KT_ASSERT(!kt_vm_stat(vm, "prefetch_untouched", &t) &&
		  !kt_vm_stat(vm, "prefetch_avoided", &a), "usage stats");
	KT_EXPECT(u == used && t == untouched && a == avoided,
		  "%s: usage, %s: used %llu untouched %llu avoided %llu (want %llu %llu %llu)",
		  what, when, (unsigned long long)u, (unsigned long long)t,
		  (unsigned long long)a, (unsigned long long)used,
		  (unsigned long long)untouched, (unsigned long long)avoided);
}

static void run(bool hugetlb)
{
	const char *what = hugetlb ? "hugetlbfs" : "THP";
	struct kt_vcpu *vcpu;
	struct kt_counts a, b;
	struct kt_vm *vm;
	char *mem;

	mem = huge_memory(hugetlb);
	if (!mem) {
		kt_skip("%s: no huge pages (%s)", what, strerror(errno));
		return;
	}
	vm = kt_vm_on(SLOT, GPA, SIZE, KT_SLOT_THP, mem, &vcpu);

	/* A window of 2 MiB is covered by the fault's own mapping. */
	KT_ASSERT(!ktsys_set_policy(vm->fd, "auto", PAGES_PER_HUGE, 0),
		  "SET auto 512");
	a = kt_counts_read(vm, vcpu);
	kt_touch(vcpu, GPA, GPA + HUGE, 0, KT_TOUCH_WRITE);
	b = kt_counts_read(vm, vcpu);
	kt_counts_info(&a, &b, "%s, nr 512, first 2 MiB", what);
	if (b.p2m == a.p2m) {
		kt_skip("%s: the guest fault did not get a 2 MiB mapping", what);
		goto out;
	}
	KT_EXPECT(b.pf - a.pf == 1 && b.p2m - a.p2m == 1 &&
		  b.mapped == a.mapped,
		  "%s: one fault maps 2 MiB, nothing prefetched (pf %llu, 2m %llu, mapped %llu)",
		  what, (unsigned long long)(b.pf - a.pf),
		  (unsigned long long)(b.p2m - a.p2m),
		  (unsigned long long)(b.mapped - a.mapped));

	/*
	 * A window of 8 MiB, [0, 8 MiB) of the slot: one fault in the second
	 * huge page maps it, prefetch maps the third and fourth (2 x 512
	 * pages) and skips the first, which stays one 2 MiB mapping.
	 */
	KT_ASSERT(!ktsys_set_policy(vm->fd, "auto", 4 * PAGES_PER_HUGE, 0),
		  "SET auto 2048");
	a = b;
	kt_touch(vcpu, GPA + HUGE, GPA + 2 * HUGE, 0, KT_TOUCH_WRITE);
	b = kt_counts_read(vm, vcpu);
	kt_counts_info(&a, &b, "%s, nr 2048, second 2 MiB", what);
	KT_EXPECT(b.pf - a.pf == 1, "%s: one guest fault (%llu)", what,
		  (unsigned long long)(b.pf - a.pf));
	KT_EXPECT(b.mapped - a.mapped == 2 * PAGES_PER_HUGE,
		  "%s: window [0, 8 MiB) prefetches huge pages 3 and 4 (%llu pages)",
		  what, (unsigned long long)(b.mapped - a.mapped));
	KT_EXPECT(b.p2m - a.p2m == 3 && b.p4k == a.p4k,
		  "%s: 3 new 2 MiB mappings, no 4 KiB ones (no split): 2m +%llu 4k +%lld",
		  what, (unsigned long long)(b.p2m - a.p2m),
		  (long long)(b.p4k - a.p4k));

	usage_expect(vm, what, "prefetched, not used yet", 0, 2 * PAGES_PER_HUGE, 0);

	/* The guest's writes to the prefetched huge pages take no fault. */
	a = b;
	kt_touch(vcpu, GPA + 2 * HUGE, GPA + 4 * HUGE, 0, KT_TOUCH_WRITE);
	b = kt_counts_read(vm, vcpu);
	KT_EXPECT(b.pf == a.pf, "%s: no fault on prefetched huge pages (%llu)",
		  what, (unsigned long long)(b.pf - a.pf));
	check_contents(mem, 0, 4 * HUGE);
	usage_expect(vm, what, "used", 2 * PAGES_PER_HUGE, 0, 2);
out:
	kt_vcpu_free(vcpu);
	kt_vm_free(vm);
	munmap(mem, SIZE);
}

int main(void)
{
	int r;

	kt_require_kvm();
	ktsys_require_prefetch();

	/* The test VM runs with THP off (see init); this test needs it. */
	r = ktsys_write(THP_PATH, "madvise");
	KT_ASSERT(!r, "THP madvise mode (%d)", r);
	run(false);
	ktsys_write(THP_PATH, "never");

	r = ktsys_write("/proc/sys/vm/nr_hugepages", "16");
	KT_ASSERT(!r, "reserve hugetlb pages (%d)", r);
	run(true);
	ktsys_write("/proc/sys/vm/nr_hugepages", "0");
	return kt_exit();
}
