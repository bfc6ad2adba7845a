// SPDX-License-Identifier: GPL-2.0
/*
 * prefetch_window - the engine maps a policy's window and nothing else,
 * wherever the window lies: containing the fault, right above or below it,
 * far above or below it, past the memslot's end or start, larger than the
 * VM's nr_pages.
 *
 * The policy is tests/vm/policy/kvm-prefetch-testpol.ko, whose window
 * starts "offset" pages from the faulting page and is "pages" long.  In a
 * fresh VM (nr_pages 512) with a populated 4 KiB-page memslot of N pages,
 * the guest writes one page: pf_taken must grow by 1, prefetch_windows by
 * 1 and prefetch_mapped by exactly the pages of the window that lie in the
 * memslot (capped at nr_pages), less the faulting page.  Then, with policy
 * none, a read pass over the window takes no fault and a read pass over
 * the rest of the memslot takes one per page: what was mapped is the
 * window, no page of the gap between the fault and the window is.  Both
 * read passes return the host's contents.
 *
 * On THP-backed memory the same holds: a 16-page window two huge pages
 * away from a fault that installed a 2 MiB mapping maps 16 pages with
 * 4 KiB mappings, not the huge pages around them.
 *
 * Every case runs with both engines (kvm.prefetch_engine=fault, batch).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "kvmtest.h"
#include "kt_sys.h"

#define ENGINE_PATH	"/sys/module/kvm/parameters/prefetch_engine"
#define TESTPOL_PARAM	"/sys/module/kvm_prefetch_testpol/parameters/"
#define THP_PATH	"/sys/kernel/mm/transparent_hugepage/enabled"
#define SLOT		1
#define GPA		0x40000000ULL		/* 1 GiB, 2 MiB aligned */
#define N_PAGES		4096LL
#define SIZE		(N_PAGES * KT_PAGE_SIZE)
#define VM_NR_PAGES	512
#define HUGE		(2ULL << 20)
#define HUGE_PAGES	512LL
#define THP_SIZE	(4 * HUGE)

static const char *const engines[] = { "fault", "batch" };

/* A window of @pages at @offset pages from a fault at page @fault. */
static const struct window_case {
	const char *name;
	long long fault, offset;
	unsigned int pages;
} cases[] = {
	{ "containing the fault",	2000,    -5,   16 },
	{ "right above the fault",	1000,     1,   16 },
	{ "64 pages above",		1000,    64,   16 },
	{ "1024 pages above",		1000,  1024,   16 },
	{ "right below the fault",	1000,   -16,   16 },
	{ "1024 pages below",		3000, -1024,   16 },
	{ "past the memslot's end",	4000,    90,   16 },
	{ "below the memslot's start",	  10,   -20,   16 },
	{ "larger than nr_pages",	 100,     1, 1000 },
};

static void set_param(const char *path, long long val)
{
	char buf[32];
	int r;

	snprintf(buf, sizeof(buf), "%lld", val);
	r = ktsys_write(path, buf);
	KT_ASSERT(!r, "%s=%s (%d)", path, buf, r);
}

static void set_window(long long offset, unsigned int pages)
{
	set_param(TESTPOL_PARAM "offset", offset);
	set_param(TESTPOL_PARAM "pages", pages);
}

/* Dword 0 of each page holds the page's GPA. */
static void fill(char *mem, uint64_t size)
{
	uint64_t off;

	for (off = 0; off < size; off += KT_PAGE_SIZE)
		*(uint32_t *)(mem + off) = (uint32_t)(GPA + off);
}

/* What a read pass over pages [from, to) must return. */
static uint32_t sum(long long from, long long to)
{
	uint32_t s = 0;

	for (; from < to; from++)
		s += (uint32_t)(GPA + from * KT_PAGE_SIZE);
	return s;
}

/* A read pass over pages [from, to); its faults. */
static uint64_t read_pass(struct kt_vcpu *vcpu, long long from, long long to,
			  const char *what, const char *engine,
			  const char *name)
{
	uint64_t pf = kt_vcpu_stat_get(vcpu, "pf_taken");
	uint32_t got;

	if (from >= to)
		return 0;
	got = kt_touch(vcpu, GPA + from * KT_PAGE_SIZE, GPA + to * KT_PAGE_SIZE,
		       0, KT_TOUCH_READ);
	KT_EXPECT(got == sum(from, to),
		  "%s, %s: %s holds the host's contents (sum 0x%x, want 0x%x)",
		  engine, name, what, got, sum(from, to));
	return kt_vcpu_stat_get(vcpu, "pf_taken") - pf;
}

static void run_case(const char *engine, const struct window_case *c)
{
	long long start = c->fault + c->offset, end, want, gap;
	unsigned int nr = c->pages < VM_NR_PAGES ? c->pages : VM_NR_PAGES;
	struct kt_vcpu *vcpu;
	struct kt_counts a, b;
	uint64_t pf_win, pf_rest;
	struct kt_vm *vm;
	char *mem;
	int r;

	/* The window the engine may map: clipped to the memslot. */
	end = start + nr;
	start = start < 0 ? 0 : start;
	end = end > N_PAGES ? N_PAGES : end;
	want = end - start;
	if (c->fault >= start && c->fault < end)
		want--;

	vm = kt_vm_create();
	mem = kt_vm_add_slot(vm, SLOT, GPA, SIZE, 0, NULL);
	fill(mem, SIZE);
	vcpu = kt_vcpu_add(vm, 0);
	kt_touch(vcpu, 0, 0, 0, KT_TOUCH_WRITE);
	r = ktsys_set_policy(vm->fd, "testpol", VM_NR_PAGES, 0);
	KT_ASSERT(!r, "SET testpol %d: %s", VM_NR_PAGES, strerror(-r));
	set_window(c->offset, c->pages);

	a = kt_counts_read(vm, vcpu);
	kt_touch(vcpu, GPA + c->fault * KT_PAGE_SIZE,
		 GPA + (c->fault + 1) * KT_PAGE_SIZE, 0, KT_TOUCH_WRITE);
	b = kt_counts_read(vm, vcpu);
	kt_counts_info(&a, &b,
		       "%s, %s: fault at %lld, window [%lld, %lld) of %u (want pf 1, windows 1, mapped %lld)",
		       engine, c->name, c->fault, c->fault + c->offset,
		       c->fault + c->offset + c->pages, c->pages, want);
	KT_EXPECT(b.pf - a.pf == 1 && b.windows - a.windows == 1,
		  "%s, %s: one guest fault, one window (pf %llu, windows %llu)",
		  engine, c->name, (unsigned long long)(b.pf - a.pf),
		  (unsigned long long)(b.windows - a.windows));
	KT_EXPECT(b.mapped - a.mapped == (uint64_t)want &&
		  b.p4k - a.p4k == (uint64_t)want + 1,
		  "%s, %s: prefetch maps the %lld pages of [%lld, %lld) (prefetch_mapped %llu, pages_4k %llu)",
		  engine, c->name, want, start, end,
		  (unsigned long long)(b.mapped - a.mapped),
		  (unsigned long long)(b.p4k - a.p4k - 1));

	/* Which pages: the window's are mapped, all others are not. */
	r = ktsys_set_policy(vm->fd, "none", 0, 0);
	KT_ASSERT(!r, "SET none: %s", strerror(-r));
	pf_win = read_pass(vcpu, start, end, "the window", engine, c->name);
	pf_rest = read_pass(vcpu, 0, start, "below the window", engine,
			    c->name) +
		  read_pass(vcpu, end, N_PAGES, "above the window", engine,
			    c->name);
	gap = N_PAGES - (end - start);
	if (c->fault < start || c->fault >= end)
		gap--;
	KT_EXPECT(pf_win == 0 && pf_rest == (uint64_t)gap,
		  "%s, %s: the window is mapped (%llu faults in it), no page outside it is (%llu faults outside, want %lld)",
		  engine, c->name, (unsigned long long)pf_win,
		  (unsigned long long)pf_rest, gap);

	kt_vcpu_free(vcpu);
	kt_vm_free(vm);
}

/* THP: a 16-page window in the third huge page, the fault in the first. */
static void run_thp(const char *engine)
{
	struct kt_vcpu *vcpu;
	struct kt_counts a, b;
	struct kt_vm *vm;
	char *mem;
	int r;

	mem = kt_thp_memory(THP_SIZE, 0x6b);
	fill(mem, THP_SIZE);

	vm = kt_vm_on(SLOT, GPA, THP_SIZE, KT_SLOT_THP, mem, &vcpu);
	r = ktsys_set_policy(vm->fd, "testpol", VM_NR_PAGES, 0);
	KT_ASSERT(!r, "SET testpol %d: %s", VM_NR_PAGES, strerror(-r));
	set_window(2 * HUGE_PAGES + 100, 16);

	a = kt_counts_read(vm, vcpu);
	kt_touch(vcpu, GPA, GPA + KT_PAGE_SIZE, 0, KT_TOUCH_WRITE);
	b = kt_counts_read(vm, vcpu);
	kt_counts_info(&a, &b,
		       "%s, THP: fault at 0, window [1124, 1140) (want pf 1, mapped 16, 4k 16, 2m 1)",
		       engine);
	if (b.p2m - a.p2m == 0) {
		kt_skip("%s, THP: the guest fault did not get a 2 MiB mapping",
			engine);
	} else {
		KT_EXPECT(b.pf - a.pf == 1 && b.mapped - a.mapped == 16 &&
			  b.p2m - a.p2m == 1 && b.p4k - a.p4k == 16,
			  "%s, THP: the window's 16 pages are mapped at 4 KiB, no huge page around them (pf %llu, mapped %llu, 2m +%llu, 4k +%llu)",
			  engine, (unsigned long long)(b.pf - a.pf),
			  (unsigned long long)(b.mapped - a.mapped),
			  (unsigned long long)(b.p2m - a.p2m),
			  (unsigned long long)(b.p4k - a.p4k));
		r = ktsys_set_policy(vm->fd, "none", 0, 0);
		KT_ASSERT(!r, "SET none: %s", strerror(-r));
		KT_EXPECT(read_pass(vcpu, 2 * HUGE_PAGES + 100,
				    2 * HUGE_PAGES + 116, "the window", engine,
				    "THP") == 0,
			  "%s, THP: reading the window takes no fault", engine);
	}

	kt_vcpu_free(vcpu);
	kt_vm_free(vm);
	munmap(mem, THP_SIZE);
}

int main(void)
{
	char engine[32] = "";
	size_t i;
	int e, r;

	kt_require_kvm();
	ktsys_require_prefetch();
	KT_REQUIRE(!ktsys_read_line(ENGINE_PATH, engine, sizeof(engine)),
		   "no %s", ENGINE_PATH);

	for (e = 0; e < 2; e++) {
		r = ktsys_write(ENGINE_PATH, engines[e]);
		KT_ASSERT(!r, "prefetch_engine=%s (%d)", engines[e], r);
		for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
			run_case(engines[e], &cases[i]);
	}

	/* The test VM runs with THP off (see init); this part needs it. */
	r = ktsys_write(THP_PATH, "madvise");
	KT_ASSERT(!r, "THP madvise mode (%d)", r);
	for (e = 0; e < 2; e++) {
		ktsys_write(ENGINE_PATH, engines[e]);
		run_thp(engines[e]);
	}
	ktsys_write(THP_PATH, "never");

	set_window(1, 0);
	ktsys_write(ENGINE_PATH, engine);
	if (system("rmmod kvm_prefetch_testpol 2>/dev/null"))
		kt_info("kvm_prefetch_testpol stays loaded");
	return kt_exit();
}
