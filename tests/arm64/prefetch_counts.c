// SPDX-License-Identifier: GPL-2.0
/*
 * prefetch_counts: the arm64 stage-2 engine's exact counts.  Each case is
 * a fresh VM with a 256-page data memslot of 4 KiB host pages
 * (MADV_NOHUGEPAGE), populated by the host (it writes every page first)
 * or not, and a policy set with KVM_SET_PREFETCH_POLICY.  The guest makes
 * one pass over the slot (a write pass, or a read pass first), then the
 * other; pf_taken, prefetch_windows and prefetch_mapped of the first pass
 * must be exactly what the core's rule gives, the second pass takes no
 * fault, and guest and host see the same contents.
 *
 * The rule (kvm_prefetch_aligned_window(), built-in policies): auto opens
 * a window of nr_pages after a guest fault, starting at the faulting gfn
 * aligned down to nr_pages (a power of two here); manual and none open
 * none after guest faults.  A sequential pass from an aligned start so
 * faults at the first page of each window, whose other nr_pages - 1
 * pages the engine maps if the host has them: 256 / nr_pages faults and
 * windows, 256 - 256 / nr_pages pages mapped.  If the host has none of
 * them (nothing populated) every page faults and each fault still opens
 * its window, which maps nothing: 256, 256, 0.  A dirty-logged memslot
 * gets no window: 256, 0, 0.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "a64.h"

#define DATA_SLOT	1
#define DATA_GPA	0x1000000ULL
#define NR_PAGES	256

#define NOFAULT		KVM_PREFETCH_GUP_NOFAULT
#define FAST		KVM_PREFETCH_GUP_FAST_ONLY

struct tcase {
	const char *policy;
	uint32_t nr_pages, gup;
	bool populate;		/* the host writes every page first */
	uint32_t flags;		/* memslot flags */
	bool read_first;	/* read pass, then write pass */
};

/* Host pattern of page @i, and what the guest writes to it. */
static uint32_t host_word(int i)
{
	return 0xa5000000u | (uint32_t)i;
}

static uint32_t guest_word(int i)
{
	return (uint32_t)(DATA_GPA + i * A64_PAGE);
}

/* The first pass's counts by the core's rule (see the top). */
static void expected(const struct tcase *t, uint64_t *pf, uint64_t *win,
		     uint64_t *mapped)
{
	bool opens = !strcmp(t->policy, "auto") && t->nr_pages > 1 &&
		     !(t->flags & KVM_MEM_LOG_DIRTY_PAGES);

	if (!opens) {
		*pf = NR_PAGES;
		*win = *mapped = 0;
	} else if (!t->populate) {
		*pf = *win = NR_PAGES;
		*mapped = 0;
	} else {
		*pf = *win = NR_PAGES / t->nr_pages;
		*mapped = NR_PAGES - NR_PAGES / t->nr_pages;
	}
}

static void run_case(const struct tcase *t)
{
	uint64_t size = NR_PAGES * A64_PAGE, want_pf, want_win, want_mapped;
	uint64_t pf0, pf1, pf2, w0, w1, m0, m1;
	struct a64_vcpu *vcpu;
	struct a64_vm *vm;
	uint32_t sum, want;
	char name[96];
	char *mem;
	int i, bad, r;

	snprintf(name, sizeof(name), "%s-%u %s, %s%s%s", t->policy,
		 t->nr_pages, t->gup == FAST ? "fast" : "nofault",
		 t->populate ? "populated" : "unpopulated",
		 t->flags & KVM_MEM_LOG_DIRTY_PAGES ? ", dirty log" : "",
		 t->read_first ? ", read first" : "");
	expected(t, &want_pf, &want_win, &want_mapped);

	vm = a64_vm_create();
	r = a64_vm_set_prefetch(vm, t->policy, t->nr_pages, t->gup);
	if (!A64_EXPECT(!r, "%s: KVM_SET_PREFETCH_POLICY: %s", name,
			r ? strerror(-r) : "ok")) {
		a64_vm_free(vm);
		return;
	}
	mem = a64_vm_add_slot(vm, DATA_SLOT, DATA_GPA, size, t->flags, NULL,
			      false);
	if (t->populate)
		for (i = 0; i < NR_PAGES; i++)
			memcpy(mem + i * A64_PAGE, &(uint32_t){ host_word(i) },
			       4);
	vcpu = a64_vcpu_add(vm, 0);
	/* The code page's own fault (and its window) first. */
	a64_touch(vcpu, DATA_GPA, DATA_GPA, 0, A64_TOUCH_WRITE);
	pf0 = a64_vcpu_stat_get(vcpu, "pf_taken");
	w0 = a64_vcpu_stat_get(vcpu, "prefetch_windows");
	m0 = a64_vcpu_stat_get(vcpu, "prefetch_mapped");

	if (t->read_first) {
		sum = a64_touch(vcpu, DATA_GPA, DATA_GPA + size, 0,
				A64_TOUCH_READ);
		for (want = 0, i = 0; i < NR_PAGES; i++)
			want += t->populate ? host_word(i) : 0;
		A64_EXPECT(sum == want,
			   "%s: the guest reads what the host wrote (sum %#x, want %#x)",
			   name, sum, want);
	} else {
		a64_touch(vcpu, DATA_GPA, DATA_GPA + size, 0, A64_TOUCH_WRITE);
	}
	pf1 = a64_vcpu_stat_get(vcpu, "pf_taken");
	w1 = a64_vcpu_stat_get(vcpu, "prefetch_windows");
	m1 = a64_vcpu_stat_get(vcpu, "prefetch_mapped");
	a64_info("%s: pf_taken %llu, prefetch_windows %llu, prefetch_mapped %llu",
		 name, (unsigned long long)(pf1 - pf0),
		 (unsigned long long)(w1 - w0), (unsigned long long)(m1 - m0));
	A64_EXPECT(pf1 - pf0 == want_pf, "%s: pf_taken %llu == %llu", name,
		   (unsigned long long)(pf1 - pf0),
		   (unsigned long long)want_pf);
	A64_EXPECT(w1 - w0 == want_win, "%s: prefetch_windows %llu == %llu",
		   name, (unsigned long long)(w1 - w0),
		   (unsigned long long)want_win);
	A64_EXPECT(m1 - m0 == want_mapped, "%s: prefetch_mapped %llu == %llu",
		   name, (unsigned long long)(m1 - m0),
		   (unsigned long long)want_mapped);

	/* The other pass: everything is mapped (writable), no fault. */
	if (t->read_first)
		a64_touch(vcpu, DATA_GPA, DATA_GPA + size, 0, A64_TOUCH_WRITE);
	for (bad = 0, want = 0, i = 0; i < NR_PAGES; i++) {
		uint32_t v;

		memcpy(&v, mem + i * A64_PAGE, 4);
		bad += v != guest_word(i);
		want += guest_word(i);
	}
	A64_EXPECT(!bad, "%s: the host reads what the guest wrote (%d pages wrong)",
		   name, bad);
	if (!t->read_first) {
		sum = a64_touch(vcpu, DATA_GPA, DATA_GPA + size, 0,
				A64_TOUCH_READ);
		A64_EXPECT(sum == want, "%s: read pass sum %#x (want %#x)",
			   name, sum, want);
	}
	pf2 = a64_vcpu_stat_get(vcpu, "pf_taken");
	A64_EXPECT(pf2 == pf1, "%s: %s pass after it takes 0 faults (%llu)",
		   name, t->read_first ? "write" : "read",
		   (unsigned long long)(pf2 - pf1));
	a64_vcpu_free(vcpu);
	a64_vm_free(vm);
}

/* A fresh VM with the data slot, populated by the host, and its vCPU. */
static struct a64_vcpu *setup(struct a64_vm **vmp, uint32_t flags, char **mem)
{
	struct a64_vcpu *vcpu;
	int i;

	*vmp = a64_vm_create();
	*mem = a64_vm_add_slot(*vmp, DATA_SLOT, DATA_GPA, NR_PAGES * A64_PAGE,
			       flags, NULL, false);
	for (i = 0; i < NR_PAGES; i++)
		memcpy(*mem + i * A64_PAGE, &(uint32_t){ host_word(i) }, 4);
	vcpu = a64_vcpu_add(*vmp, 0);
	a64_touch(vcpu, DATA_GPA, DATA_GPA, 0, A64_TOUCH_WRITE);
	return vcpu;
}

/* Counts since @c0 are exactly @pf, @win, @mapped. */
static void expect_counts(struct a64_vcpu *vcpu, const struct a64_counts *c0,
			  const char *what, uint64_t pf, uint64_t win,
			  uint64_t mapped)
{
	struct a64_counts c = a64_vcpu_counts(vcpu);

	A64_EXPECT(c.pf - c0->pf == pf && c.win - c0->win == win &&
		   c.mapped - c0->mapped == mapped,
		   "%s: pf_taken %llu, prefetch_windows %llu, prefetch_mapped %llu (want %llu, %llu, %llu)",
		   what, (unsigned long long)(c.pf - c0->pf),
		   (unsigned long long)(c.win - c0->win),
		   (unsigned long long)(c.mapped - c0->mapped),
		   (unsigned long long)pf, (unsigned long long)win,
		   (unsigned long long)mapped);
}

static uint64_t page_gpa(int i)
{
	return DATA_GPA + i * A64_PAGE;
}

/* One page's fault under auto-@nr (nofault), and its counts. */
static void touch_one(struct a64_vcpu *vcpu, int page, uint32_t nr,
		      uint64_t mapped)
{
	struct a64_counts c0 = a64_vcpu_counts(vcpu);
	char what[64];
	int r;

	r = a64_vm_set_prefetch(vcpu->vm, "auto", nr, NOFAULT);
	A64_ASSERT(!r, "KVM_SET_PREFETCH_POLICY auto-%u: %s", nr, strerror(-r));
	a64_touch(vcpu, page_gpa(page), page_gpa(page + 1), 0, A64_TOUCH_WRITE);
	snprintf(what, sizeof(what), "scan: auto-%u, a write to page %d", nr,
		 page);
	expect_counts(vcpu, &c0, what, 1, 1, mapped);
}

/*
 * The scan's rule (design.rst, "The engine"), on populated memory:
 * forward from the fault to the window's end stepping over what is
 * mapped, then backward until the first mapped page.
 *   auto-8 at page 9: window [8, 16), forward 10-15, backward 8: 7;
 *   auto-32 at page 20: [0, 32), forward 21-31 (11), backward 19-16
 *	(4), stopped by 15 (mapped): 15;
 *   auto-64 at page 1: [0, 64), forward 2-7 (6), 8-31 stepped over,
 *	32-63 (32), backward 0 (1): 39;
 *   then a write pass over all: faults at 64, 128, 192 only, each
 *	window mapping 63: 3 faults, 189 mapped.
 */
static void run_scan(void)
{
	struct a64_vcpu *vcpu;
	struct a64_counts c0;
	struct a64_vm *vm;
	int i, bad = 0;
	char *mem;

	vcpu = setup(&vm, 0, &mem);
	touch_one(vcpu, 9, 8, 7);
	touch_one(vcpu, 20, 32, 15);
	touch_one(vcpu, 1, 64, 39);
	c0 = a64_vcpu_counts(vcpu);
	a64_touch(vcpu, DATA_GPA, page_gpa(NR_PAGES), 0, A64_TOUCH_WRITE);
	expect_counts(vcpu, &c0, "scan: auto-64, then a write pass", 3, 3, 189);
	c0 = a64_vcpu_counts(vcpu);
	a64_touch(vcpu, DATA_GPA, page_gpa(NR_PAGES), 0, A64_TOUCH_READ);
	expect_counts(vcpu, &c0, "scan: a read pass after it", 0, 0, 0);
	for (i = 0; i < NR_PAGES; i++) {
		uint32_t v;

		memcpy(&v, mem + i * A64_PAGE, 4);
		bad += v != guest_word(i);
	}
	A64_EXPECT(!bad, "scan: the host reads what the guest wrote (%d pages wrong)",
		   bad);
	a64_vcpu_free(vcpu);
	a64_vm_free(vm);
}

/*
 * A read-only memslot: prefetch maps its pages, read-only.  The read
 * pass counts as a writable slot's; a write to a prefetched page then
 * exits to userspace as MMIO (as for any write to a read-only memslot)
 * and leaves the host page alone.
 */
static void run_readonly(void)
{
	struct a64_vcpu *vcpu;
	struct a64_vm *vm;
	struct a64_counts c0;
	uint32_t sum, want = 0, v;
	char *mem;
	int i, r;

	vcpu = setup(&vm, KVM_MEM_READONLY, &mem);
	r = a64_vm_set_prefetch(vm, "auto", 8, NOFAULT);
	A64_ASSERT(!r, "KVM_SET_PREFETCH_POLICY: %s", strerror(-r));
	c0 = a64_vcpu_counts(vcpu);
	sum = a64_touch(vcpu, DATA_GPA, page_gpa(NR_PAGES), 0, A64_TOUCH_READ);
	for (i = 0; i < NR_PAGES; i++)
		want += host_word(i);
	expect_counts(vcpu, &c0, "read-only slot, auto-8 nofault, read pass",
		      NR_PAGES / 8, NR_PAGES / 8, NR_PAGES - NR_PAGES / 8);
	A64_EXPECT(sum == want, "read-only slot: read pass sum %#x (want %#x)",
		   sum, want);
	r = a64_touch_run(vcpu, page_gpa(1), page_gpa(2), 0, A64_TOUCH_WRITE,
			  &sum);
	A64_EXPECT(r == KVM_EXIT_MMIO && vcpu->run->mmio.is_write &&
		   vcpu->run->mmio.phys_addr == page_gpa(1),
		   "read-only slot: a write to prefetched page 1 exits as MMIO (exit %d, %#llx)",
		   r, (unsigned long long)vcpu->run->mmio.phys_addr);
	memcpy(&v, mem + A64_PAGE, 4);
	A64_EXPECT(v == host_word(1), "read-only slot: page 1 unchanged (%#x)",
		   v);
	a64_vcpu_free(vcpu);
	a64_vm_free(vm);
}

static const struct tcase cases[] = {
	/* policy  nr  gup      populate  memslot flags  read first */
	{ "none",   8, NOFAULT, true,  0,                       false },
	{ "manual", 8, NOFAULT, true,  0,                       false },
	{ "auto",   8, NOFAULT, true,  0,                       false },
	{ "auto",   8, FAST,    true,  0,                       false },
	{ "auto",  16, NOFAULT, true,  0,                       false },
	{ "auto",   8, NOFAULT, true,  0,                       true },
	{ "none",   8, NOFAULT, false, 0,                       false },
	{ "auto",   8, NOFAULT, false, 0,                       false },
	{ "auto",   8, FAST,    false, 0,                       false },
	{ "auto",   8, NOFAULT, true,  KVM_MEM_LOG_DIRTY_PAGES, false },
};

int main(void)
{
	unsigned int i;
	int cap;

	a64_require_kvm();
	cap = a64_prefetch_cap();
	A64_EXPECT(cap > 0, "KVM_CAP_PREFETCH_POLICY %d", cap);
	for (i = 0; i < ARRAY_SIZE(cases); i++)
		run_case(&cases[i]);
	run_scan();
	run_readonly();
	return a64_exit();
}
