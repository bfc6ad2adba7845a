// SPDX-License-Identifier: GPL-2.0
/*
 * prefetch_budget: the arm64 engine's per-exit budget.  A window is mapped
 * while the vCPU is out of the guest; once PREFETCH_EXIT_MAX_PAGES (16384)
 * pages are mapped the engine stops, whatever is left of the window, and
 * leaves the rest to the guest's next fault there (before that it may
 * stop early, after 512 pages, on a pending request or when the scheduler
 * wants the CPU, so the counts below are bounds, not exact).
 *
 * A fresh VM with a 128 MiB data memslot of 4 KiB host pages, populated by
 * the host, and auto with a window of 32768 pages, the whole slot.  The
 * guest writes the first page: one fault, one window, which maps forward
 * at least 512 and at most 16384 pages.  It then writes the first page
 * that window left, and so on to the slot's end: each window likewise
 * (the last may map just what is left).  A write pass over the slot then
 * takes no fault, and every page holds what the guest wrote.
 */
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "a64.h"

#define DATA_SLOT	1
#define DATA_GPA	0x10000000ULL
#define SLOT_PAGES	32768ULL
#define SLOT_SIZE	(SLOT_PAGES * A64_PAGE)
#define EXIT_MIN	512
#define EXIT_MAX	16384

int main(void)
{
	uint64_t pf0, w0, m0, pf1, w1, m1, pf2, i, next, k = 0;
	uint64_t nwin = 0, capped = 0, nbad = 0;
	struct a64_vcpu *vcpu;
	struct a64_vm *vm;
	char *mem;
	int r, bad;

	a64_require_prefetch();
	vm = a64_vm_create();
	r = a64_vm_set_prefetch(vm, "auto", SLOT_PAGES, KVM_PREFETCH_GUP_NOFAULT);
	A64_ASSERT(!r, "KVM_SET_PREFETCH_POLICY auto-%llu: %s", SLOT_PAGES,
		   strerror(-r));
	mem = a64_vm_add_slot(vm, DATA_SLOT, DATA_GPA, SLOT_SIZE, 0, NULL, false);
	for (i = 0; i < SLOT_PAGES; i++)
		mem[i * A64_PAGE] = 1;
	vcpu = a64_vcpu_add(vm, 0);
	/* The code page's own fault (and its window) first. */
	a64_touch(vcpu, DATA_GPA, DATA_GPA, 0, A64_TOUCH_WRITE);
	pf0 = a64_vcpu_stat_get(vcpu, "pf_taken");
	w0 = a64_vcpu_stat_get(vcpu, "prefetch_windows");
	m0 = a64_vcpu_stat_get(vcpu, "prefetch_mapped");

	/*
	 * Fault at the first page no window has mapped yet, one window at a
	 * time: a window maps forward from its fault, contiguously, and
	 * stops backward at once (the page before its fault is mapped).
	 */
	for (next = 0; next < SLOT_PAGES && nwin < SLOT_PAGES / EXIT_MIN + 1;
	     next += 1 + k, nwin++) {
		bool last;

		a64_touch(vcpu, DATA_GPA + next * A64_PAGE,
			  DATA_GPA + (next + 1) * A64_PAGE, 0, A64_TOUCH_WRITE);
		pf1 = a64_vcpu_stat_get(vcpu, "pf_taken");
		w1 = a64_vcpu_stat_get(vcpu, "prefetch_windows");
		m1 = a64_vcpu_stat_get(vcpu, "prefetch_mapped");
		k = m1 - m0;
		last = next + 1 + k >= SLOT_PAGES;
		a64_info("fault at page %" PRIu64 ": pf_taken %" PRIu64
			 ", prefetch_windows %" PRIu64 ", prefetch_mapped %" PRIu64,
			 next, pf1 - pf0, w1 - w0, k);
		/* One PASS or FAIL for all windows, however many there are. */
		if (pf1 - pf0 != 1 || w1 - w0 != 1 || k > EXIT_MAX ||
		    (!last && k < EXIT_MIN)) {
			a64_info("BAD: fault at page %" PRIu64 ": want 1 fault, 1 window, %d..%d pages",
				 next, last ? 0 : EXIT_MIN, EXIT_MAX);
			nbad++;
		}
		capped += k == EXIT_MAX;
		pf0 = pf1, w0 = w1, m0 = m1;
	}
	A64_EXPECT(!nbad,
		   "%" PRIu64 " windows, one fault each, each mapping at least %d pages (the last: what is left) and at most %d; %" PRIu64 " of them cut at %d (%" PRIu64 " bad)",
		   nwin, EXIT_MIN, EXIT_MAX, capped, EXIT_MAX, nbad);
	A64_EXPECT(next == SLOT_PAGES,
		   "the windows map the slot to its end (page %" PRIu64 " of %llu)",
		   next, SLOT_PAGES);
	a64_touch(vcpu, DATA_GPA, DATA_GPA + SLOT_SIZE, 0, A64_TOUCH_WRITE);
	pf2 = a64_vcpu_stat_get(vcpu, "pf_taken");
	A64_EXPECT(pf2 == pf0, "a write pass over the slot then takes 0 faults (%" PRIu64 ")",
		   pf2 - pf0);
	for (bad = 0, i = 0; i < SLOT_PAGES; i++) {
		uint32_t v;

		memcpy(&v, mem + i * A64_PAGE, 4);
		bad += v != (uint32_t)(DATA_GPA + i * A64_PAGE);
	}
	A64_EXPECT(!bad, "the host reads what the guest wrote (%d pages wrong)", bad);
	a64_vcpu_free(vcpu);
	a64_vm_free(vm);
	return a64_exit();
}
