// SPDX-License-Identifier: GPL-2.0
/*
 * prefetch_apf - userfaultfd restores in the guests production VMMs run:
 * with an in-kernel irqchip and interrupts on, and with PV async page
 * faults (kvmtest's guest modes plain, irqchip and pv-apf).
 *
 * With an in-kernel LAPIC and IF=1, a guest fault whose host page is
 * missing does not wait in the vCPU thread: KVM's no-wait GUP fails (the
 * userfaultfd handler has not populated the chunk yet), KVM queues an
 * async #PF, a worker does the blocking GUP (which raises the event),
 * and on completion kvm_arch_async_page_ready() maps the page: fault
 * origin KVM_PREFETCH_ASYNC, the one the async policy prefetches on.
 * Meanwhile the vCPU halts (irqchip) or takes a "page not present" #PF
 * and waits for "page ready" (pv-apf).
 *
 * Each case restores 4 MiB through a handler populating C-byte chunks
 * (UFFDIO_COPY) while the guest writes every page once (kt_bench.h's
 * ktb_run()), for C in 8 KiB, 64 KiB, 2 MiB, every mode, and policies
 * none, manual, async and auto with nr_pages = C / 4K (async and auto
 * with gup nofault and fast). Asserted, exactly:
 *
 *  - every page's contents are right, events == chunks (each chunk
 *    populated once), the second pass takes no fault;
 *  - pf_taken == pages for none and manual in every mode, and for async
 *    in plain; pf_taken == chunks for async and auto in irqchip and
 *    pv-apf, and for auto in plain; plus, each, the guest faults on a
 *    page whose async #PF was still in flight (kvm_async_pf_repeated_fault,
 *    counted by its trace event: timing, not the policy);
 *  - prefetch_mapped == pages - pf_taken, prefetch_windows == chunks
 *    where prefetch applies, 0 where it does not;
 *  - async #PF took place, once per chunk: KVM's trace event
 *    kvm_async_pf_not_present fired chunks times in irqchip and pv-apf
 *    (never in plain), and in pv-apf the guest also counted chunks "page
 *    not present" faults and as many "page ready" interrupts.
 *
 * Last, on Debian's stock modules (kvm-reload stock), every mode takes
 * one fault per page, with the same events and async #PF counts.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <string.h>

#include "kvmtest.h"
#include "kt_sys.h"
#include "kt_bench.h"

#define SIZE	(4ULL << 20)
#define PAGES	(SIZE / KT_PAGE_SIZE)
#define APF_EVENT	"kvm/kvm_async_pf_not_present"
/*
 * A guest fault on a page whose async #PF is still in flight: KVM halts
 * the vCPU again (kvm_faultin_pfn(), every base).  What wakes the vCPU
 * meanwhile is timing: a loaded host made 27 of them in 1 of 9 runs of
 * "irqchip 8K auto" (7.3, 2026-12-07), each a guest fault of its own.
 */
#define REPEAT_EVENT	"kvm/kvm_async_pf_repeated_fault"

static char *src;

struct pcase {
	const char *policy;	/* NULL: stock modules */
	uint32_t gup;
};

/* Does @policy map the chunk's other pages in @mode? */
static bool prefetches(const char *policy, enum kt_guest_mode mode)
{
	if (!policy)
		return false;
	if (!strcmp(policy, "auto"))
		return true;
	return !strcmp(policy, "async") && mode != KT_GUEST_PLAIN;
}

static void run_case(enum kt_guest_mode mode, uint64_t chunk,
		     const struct pcase *pc)
{
	struct ktb_config cfg = {
		.policy = pc->policy,
		.nr_pages = chunk / KT_PAGE_SIZE,
		.gup = pc->gup,
		.pin = true,
		.cpu = 0,
		.mode = mode,
	};
	uint64_t chunks = SIZE / chunk;
	bool pre = prefetches(pc->policy, mode);
	uint64_t want_pf = pre ? chunks : PAGES;
	struct ktb_result r;
	long apf = -1, rep = 0;
	char what[80];
	int ret, tr;

	snprintf(what, sizeof(what), "%s %lluK %s%s", kt_guest_mode_str(mode),
		 (unsigned long long)(chunk >> 10),
		 pc->policy ? pc->policy : "stock",
		 pc->gup == KVM_PREFETCH_GUP_FAST_ONLY ? " gup=fast" : "");

	tr = ktsys_trace_begin(APF_EVENT);
	/* (Clears the buffer again, and enables the second event.) */
	if (!tr)
		tr = ktsys_trace_begin(REPEAT_EVENT);
	ret = ktb_run(src, SIZE, chunk, &cfg, &r);
	KT_ASSERT(!ret, "%s: KVM_SET_PREFETCH_POLICY: %s", what,
		  strerror(-ret));
	if (!tr) {
		apf = ktsys_trace_end(APF_EVENT);
		rep = ktsys_trace_end(REPEAT_EVENT);
		KT_ASSERT(rep >= 0, "%s: trace of %s: %ld", what, REPEAT_EVENT,
			  rep);
	}
	kt_info("%-26s events %4llu pf_taken %4llu windows %4llu mapped %4llu async #PF %4ld (halt_wakeup %4llu) guest not-present %4llu ready %4llu (early %llu, spurious %llu) %7.1f ms",
		what, (unsigned long long)r.events,
		(unsigned long long)r.pf, (unsigned long long)r.windows,
		(unsigned long long)r.mapped, apf,
		(unsigned long long)r.halt_wakeup,
		(unsigned long long)r.apf_not_present,
		(unsigned long long)r.apf_ready,
		(unsigned long long)r.apf_early,
		(unsigned long long)r.apf_spurious, r.ms);

	KT_EXPECT(r.ok && r.events == chunks && !r.pf2,
		  "%s: all %llu pages right, %llu events for %llu chunks, second pass %llu faults%s%s",
		  what, (unsigned long long)PAGES,
		  (unsigned long long)r.events, (unsigned long long)chunks,
		  (unsigned long long)r.pf2, r.ok ? "" : ": ", r.err);
	KT_EXPECT(r.pf == want_pf + rep,
		  "%s: pf_taken %llu, want %llu + %ld repeated on an async #PF in flight",
		  what, (unsigned long long)r.pf, (unsigned long long)want_pf,
		  rep);
	if (r.have_prefetch)
		KT_EXPECT(r.mapped == PAGES - want_pf &&
			  r.windows == (pre ? chunks : 0),
			  "%s: prefetch_mapped %llu windows %llu, want %llu and %llu",
			  what, (unsigned long long)r.mapped,
			  (unsigned long long)r.windows,
			  (unsigned long long)(PAGES - want_pf),
			  (unsigned long long)(pre ? chunks : 0));
	if (apf < 0)
		kt_skip("%s: no tracefs: async #PFs not counted", what);
	else if (mode == KT_GUEST_PLAIN)
		KT_EXPECT(apf == 0, "%s: no async #PF (%ld)", what, apf);
	else
		KT_EXPECT(apf == (long)chunks,
			  "%s: %ld async #PFs (kvm_async_pf_not_present), want %llu",
			  what, apf, (unsigned long long)chunks);
	if (mode == KT_GUEST_PV_APF)
		KT_EXPECT(r.apf_not_present == chunks &&
			  r.apf_ready == chunks,
			  "%s: guest saw %llu \"page not present\" and %llu \"page ready\", want %llu each",
			  what, (unsigned long long)r.apf_not_present,
			  (unsigned long long)r.apf_ready,
			  (unsigned long long)chunks);
	else
		KT_EXPECT(!r.apf_not_present && !r.apf_ready,
			  "%s: no PV async #PF in the guest", what);
}

int main(void)
{
	static const uint64_t chunk_sizes[] = { 8 << 10, 64 << 10, 2 << 20 };
	const uint32_t nofault = KVM_PREFETCH_GUP_NOFAULT;
	const uint32_t fast = KVM_PREFETCH_GUP_FAST_ONLY;
	const struct pcase ours[] = {
		{ "none", nofault }, { "manual", nofault },
		{ "async", nofault }, { "async", fast },
		{ "auto", nofault }, { "auto", fast },
	};
	const struct pcase stock = { NULL, nofault };
	unsigned int m, c, p;
	int r;

	ktsys_guard(900);
	kt_require_kvm();
	ktsys_require_prefetch();
	src = ktb_src_alloc(SIZE);

	for (m = 0; m < KT_GUEST_NR_MODES; m++)
		for (c = 0; c < sizeof(chunk_sizes) / sizeof(chunk_sizes[0]); c++)
			for (p = 0; p < sizeof(ours) / sizeof(ours[0]); p++)
				run_case(m, chunk_sizes[c], &ours[p]);

	r = ktb_swap_modules("stock");
	KT_ASSERT(!r, "kvm-reload stock: %d", r);
	for (m = 0; m < KT_GUEST_NR_MODES; m++)
		for (c = 0; c < 2; c++)
			run_case(m, chunk_sizes[c], &stock);
	r = ktsys_restore();
	KT_EXPECT(!r, "kvm-reload ours: %d", r);

	ktb_src_free(src, SIZE);
	return kt_exit();
}
