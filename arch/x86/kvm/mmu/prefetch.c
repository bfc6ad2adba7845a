// SPDX-License-Identifier: GPL-2.0-only
/*
 * The x86 prefetch engine: after a fault is fixed, ask the VM's prefetch
 * policy for a window and map it with faults of origin KVM_PREFETCH_AUTO
 * through the regular fault path, so that locking, mmu_notifier retry and
 * memslot checks are the fault path's own.  The batched engine
 * (prefetch_batch.c) maps runs of the window in one go where it can do
 * exactly what those faults would; the prefetch_engine parameter selects
 * it ("batch", the default) or the faults alone ("fault").
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/kvm_host.h>
#include <kvm/prefetch.h>
#include <linux/sched/signal.h>

#include "mmu.h"		/* and the register cache: is_guest_mode() */
#include "mmu_internal.h"
#include "spte.h"
#include "tdp_iter.h"
#include "tdp_mmu.h"
#include "prefetch_mmu.h"
#include "prefetch_batch.h"

enum prefetch_engine {
	PREFETCH_ENGINE_BATCH,
	PREFETCH_ENGINE_FAULT,
};

static const char *const prefetch_engine_names[] = {
	[PREFETCH_ENGINE_BATCH]	= "batch",
	[PREFETCH_ENGINE_FAULT]	= "fault",
};

static u32 prefetch_engine = PREFETCH_ENGINE_BATCH;

static const struct kvm_prefetch_param_choice prefetch_engine_choice = {
	.names	= prefetch_engine_names,
	.nr	= ARRAY_SIZE(prefetch_engine_names),
	.val	= &prefetch_engine,
};
module_param_cb(prefetch_engine, &kvm_prefetch_param_choice_ops,
		(void *)&prefetch_engine_choice, 0644);
MODULE_PARM_DESC(prefetch_engine,
		 "How prefetch maps a window: batch or fault (one per page)");

/**
 * kvm_arch_prefetch_supported() - can prefetch run for a VM?
 * @kvm: the VM, or NULL for KVM_CHECK_EXTENSION on /dev/kvm
 *
 * Only the TDP MMU prefetches: with the legacy MMU, or without TDP, the
 * capability is 0 and KVM_SET_PREFETCH_POLICY fails.
 *
 * Return: true if @kvm uses two-dimensional paging (NPT/EPT) with the TDP
 * MMU (for NULL, if a VM created now would; see prefetch_mmu.h).
 */
bool kvm_arch_prefetch_supported(struct kvm *kvm)
{
	return tdp_enabled && kvm_mmu_prefetch_tdp_mmu_vm(kvm);
}

/*
 * Level of the present leaf SPTE mapping @gfn, or 0 if there is none.  Then
 * *@free is the level of the first SPTE on @gfn's path that is not
 * present: a mapping of @gfn at that level or below replaces nothing.
 */
static int prefetch_mapped_level(struct kvm_vcpu *vcpu, gfn_t gfn, int *free)
{
	u64 sptes[PT64_ROOT_MAX_LEVEL + 1];
	int root_level, leaf;

	kvm_tdp_mmu_walk_lockless_begin();
	leaf = kvm_tdp_mmu_get_walk(vcpu, gfn_to_gpa(gfn), sptes, &root_level);
	kvm_tdp_mmu_walk_lockless_end();

	/* No root: let the fault find out. */
	*free = leaf < PG_LEVEL_4K ? KVM_MAX_HUGEPAGE_LEVEL :
		min(leaf, KVM_MAX_HUGEPAGE_LEVEL);
	if (leaf < PG_LEVEL_4K || !is_shadow_present_pte(sptes[leaf]) ||
	    !is_last_spte(sptes[leaf], leaf))
		return 0;
	return leaf;
}

/* What prefetch_gfn() found or did at one guest frame. */
enum prefetch_step {
	PREFETCH_PRESENT,	/* already mapped, at *level */
	PREFETCH_MAPPED,	/* mapped now, at *level */
	PREFETCH_SKIPPED,	/* not mapped for another reason (*level, or 0) */
	PREFETCH_ABSENT,	/* the host does not have the page */
	PREFETCH_STOP,		/* the vCPU has something better to do */
};

/*
 * The vCPU requests that end a window early, past the per-exit minimum:
 * those that something outside the vCPU waits for.
 *  - KVM_REQ_EVENT, KVM_REQ_NMI: an interrupt or NMI to inject;
 *  - KVM_REQ_MMU_FREE_OBSOLETE_ROOTS: a memslot update or a zap made the
 *    root obsolete; every AUTO fault on it only retries, and the update
 *    waits in synchronize_srcu() for this exit;
 *  - KVM_REQ_VM_DEAD: nothing is worth mapping any more.
 * Not the others, and in particular not KVM_REQ_STEAL_UPDATE, which every
 * vcpu_load() after a preemption raises: being preempted while mapping a
 * window is a reason to yield (prefetch_exit_due() does), not to give up
 * the rest of the window.
 */
static bool prefetch_request_pending(struct kvm_vcpu *vcpu)
{
	return kvm_test_request(KVM_REQ_EVENT, vcpu) ||
	       kvm_test_request(KVM_REQ_NMI, vcpu) ||
	       kvm_test_request(KVM_REQ_MMU_FREE_OBSOLETE_ROOTS, vcpu) ||
	       kvm_test_request(KVM_REQ_VM_DEAD, vcpu);
}

/*
 * Map @gfn of the window [@start, @end) with an AUTO fault unless a
 * lockless walk finds it mapped.  The fault maps at most at the level
 * whose block lies in the window and replaces nothing.  *@mapped counts
 * the 4 KiB pages it maps.
 */
static enum prefetch_step prefetch_gfn(struct kvm_vcpu *vcpu, gfn_t gfn,
				       gfn_t start, gfn_t end, u8 *level,
				       u64 *mapped)
{
	int r, free;

	*level = 0;
	/* An AUTO fault must not allocate private (guest_memfd) memory. */
	if (kvm_mmu_prefetch_private(vcpu->kvm, gfn))
		return PREFETCH_SKIPPED;

	*level = prefetch_mapped_level(vcpu, gfn, &free);
	if (*level)
		return PREFETCH_PRESENT;

	/* In: the largest level the fault may map; out: the one it chose. */
	*level = min(free, kvm_mmu_prefetch_max_level(gfn, start, end));
	r = kvm_mmu_prefetch_auto_fault(vcpu, gfn, level);
	if (r == RET_PF_FIXED) {
		*mapped += KVM_PAGES_PER_HPAGE(*level);
		/*
		 * After the fault: a zap in between leaves its pages
		 * marked, and a harvest counts them unused.
		 */
		kvm_prefetch_usage_mark(vcpu->kvm,
					ALIGN_DOWN(gfn, KVM_PAGES_PER_HPAGE(*level)),
					KVM_PAGES_PER_HPAGE(*level));
	}

	/*
	 * Leave the rest to later faults if the vCPU has something better
	 * to do: a signal, or a request (e.g. to reload a root a memslot
	 * update made obsolete, which is why AUTO faults keep retrying).
	 */
	if (r < 0 || signal_pending(current) ||
	    (r == RET_PF_RETRY && prefetch_request_pending(vcpu)))
		return PREFETCH_STOP;
	if (r == RET_PF_FIXED)
		return PREFETCH_MAPPED;
	/* AUTO faults return RETRY when the host page is not there. */
	return r == RET_PF_RETRY ? PREFETCH_ABSENT : PREFETCH_SKIPPED;
}

/*
 * The per-exit budget.  A window is mapped while the vCPU is out of the
 * guest and holds kvm->srcu: an interrupt to inject waits for it, and so
 * does a memslot update (synchronize_srcu()).  The budget is charged for
 * every guest page the engine examines, whatever it finds: a leaf that is
 * mapped already (at any level, one charge), a page it skips, a page the
 * batch gets from the host, a page it maps; so that a window that is
 * mapped but for a few holes costs no more than one that is all holes.
 * The engine stops between two batches or faults
 *  - on a signal, at once;
 *  - once it has examined PREFETCH_EXIT_MIN pages, when the vCPU has a
 *    request that something waits for (prefetch_request_pending());
 *  - once it has examined PREFETCH_EXIT_MAX pages, in any case; the last
 *    batch is cut to it.
 * Before that it yields the CPU when the scheduler asks, and goes on.
 * The minimum is one 2 MiB block of 4 KiB pages: a window of up to 2 MiB
 * (a restore's chunk) is mapped whole whatever the timing of interrupts.
 * The maximum bounds the exit where nothing reports a waiter, e.g. a
 * memslot being created, to 16384 pages examined (each one step of a
 * walk and at most one SPTE; a huge leaf, charged once, also the at most
 * 64 pages the batch got for it), a sixteenth of the largest window.  The rest of
 * a window is left to the guest's next fault there, which opens the next
 * window.
 */
#define PREFETCH_EXIT_MIN	512
#define PREFETCH_EXIT_MAX	16384

static __always_inline bool prefetch_exit_due(struct kvm_vcpu *vcpu,
					      u32 scanned)
{
	if (signal_pending(current) || scanned >= PREFETCH_EXIT_MAX)
		return true;
	cond_resched();
	return scanned >= PREFETCH_EXIT_MIN && prefetch_request_pending(vcpu);
}

/* The 4 KiB pages to step over after prefetch_gfn() reported @level. */
static u64 prefetch_step_pages(u8 level)
{
	return level ? KVM_PAGES_PER_HPAGE(level) : 1;
}

/*
 * Map what is missing of the window [start, end), which the caller
 * clipped, and nothing outside it.  The walk goes outward from the block
 * [fault_start, fault_start + step) that the fault installed, or from the
 * window's end nearest to it if the window does not hold it: first
 * forward to @end, stepping over what is mapped at the level it is mapped
 * at, then backward to @start until the first mapped page (the guest, or
 * an earlier window, came from there).  In both directions the first page
 * the host does not have ends the scan: a restore populates memory in
 * chunks, so the rest of the window would only fail the same way, one
 * GUP at a time.  Each page is mapped at the largest level that the host
 * and the memslot allow, whose block lies in the window and holds nothing
 * mapped.  The batched engine, if selected, does the forward scan where
 * it can, one batch at a time; the backward one, rare in a restore, is
 * always by faults.  Between two batches or faults the walk stops when
 * the per-exit budget says so (prefetch_exit_due()).  With @absent set
 * the caller's probe found the host page where the forward scan starts
 * absent (prefetch_host_absent()): the scan would end there, so only the
 * backward one runs.  Return the number of 4 KiB pages newly mapped;
 * *@scanned is the budget used, *@done whether the forward scan went
 * through to @end.  Inlined into both callers, as it was into its only
 * one before next() windows: a call costs a window 1% of its
 * instructions (make cost).
 */
static __always_inline u64 prefetch_range(struct kvm_vcpu *vcpu, gfn_t start,
					  gfn_t end, gfn_t fault_start,
					  u64 step, bool absent,
					  u32 *scanned, bool *done)
{
	bool batch = READ_ONCE(prefetch_engine) == PREFETCH_ENGINE_BATCH;
	enum prefetch_step res = PREFETCH_SKIPPED;
	u64 mapped = 0, pages;
	gfn_t gfn, next;
	u8 level;

	/* @absent: the probe found the forward scan's first page absent. */
	*done = false;
	for (gfn = absent ? end : max(fault_start + step, start); gfn < end;) {
		if (prefetch_exit_due(vcpu, *scanned))
			return mapped;
		/* A batch if it can; else a fault does the next gfn. */
		if (batch) {
			next = kvm_mmu_prefetch_batch(vcpu, start, gfn, end,
						      PREFETCH_EXIT_MAX - *scanned,
						      &mapped, scanned);
			if (next != gfn) {
				gfn = next;
				continue;
			}
		}
		res = prefetch_gfn(vcpu, gfn, start, end, &level, &mapped);
		(*scanned)++;
		if (res == PREFETCH_ABSENT || res == PREFETCH_STOP)
			break;
		pages = prefetch_step_pages(level);
		gfn = ALIGN_DOWN(gfn, pages) + pages;
	}
	if (res == PREFETCH_STOP)
		return mapped;
	*done = gfn >= end && !absent;

	for (gfn = min(fault_start, end); gfn > start;) {
		if (prefetch_exit_due(vcpu, *scanned))
			break;
		res = prefetch_gfn(vcpu, gfn - 1, start, end, &level, &mapped);
		(*scanned)++;
		if (res != PREFETCH_MAPPED && res != PREFETCH_SKIPPED)
			break;
		gfn = ALIGN_DOWN(gfn - 1, prefetch_step_pages(level));
	}
	return mapped;
}

/*
 * The back-off.  On memory the host has not populated yet (a boot, a
 * restore that demand-pages its memory in), each guest fault finds its
 * host page absent and faults it in, and so does every neighbour the
 * window would map: each window maps nothing, at the cost of a policy
 * call, a batch and an AUTO fault that only retries, as much again as the
 * guest fault itself.  So after PREFETCH_EMPTY_MIN guest-fault windows in
 * a row that mapped nothing, a vCPU lets its next guest faults go
 * without a window: 1, then after each further window that maps nothing
 * twice as many, up to 1 << PREFETCH_SKIP_MAX_SHIFT.  A window that maps
 * anything ends it: the next guest fault opens a window, and the back-off
 * starts again only after PREFETCH_EMPTY_MIN more empty ones.  At worst a
 * restore whose chunks start to arrive after a cold phase loses the
 * windows of 256 guest faults, one exit per page, before a window maps
 * a chunk again; a boot loses the pages its skipped windows would have
 * mapped now and then.  The cap makes windows that map nothing cost
 * under 1% of a guest fault's instructions in KVM on cold memory (make
 * cost, cold-auto-*).  Only guest faults back off: KVM_PRE_FAULT_MEMORY
 * and async #PF completions always open their window, and do not count.
 * The record is the vCPU's, whatever the VM's policy: a policy selected
 * while the vCPU backs off starts with what is left of it.
 */
#define PREFETCH_EMPTY_MIN	8
#define PREFETCH_SKIP_MAX_SHIFT	8

static void prefetch_backoff_update(struct kvm_prefetch_backoff *bo,
				    u64 mapped)
{
	if (mapped) {
		bo->empty = 0;
		bo->shift = 0;
		return;
	}
	if (bo->empty < PREFETCH_EMPTY_MIN && ++bo->empty < PREFETCH_EMPTY_MIN)
		return;
	bo->skip = 1U << bo->shift;
	if (bo->shift < PREFETCH_SKIP_MAX_SHIFT)
		bo->shift++;
}

/*
 * The first-page probe, after a window that mapped nothing: is the host
 * page of @gfn, where the forward scan starts, absent as the scan would
 * find it (the batch gets no page, the AUTO fault only retries)?  The
 * same lookup the AUTO fault does, then a lockless walk, as the scan
 * steps over a gfn mapped already.  Never for a private gfn or a
 * guest_memfd-only memslot, whose pages do not come from GUP.
 */
static bool prefetch_host_absent(struct kvm_vcpu *vcpu,
				 struct kvm_memory_slot *slot, gfn_t gfn)
{
	bool writable;
	kvm_pfn_t pfn;
	hva_t hva;
	int free;

	if (kvm_mmu_prefetch_gmem_only(slot) ||
	    kvm_mmu_prefetch_private(vcpu->kvm, gfn))
		return false;
	pfn = kvm_prefetch_gfn_to_pfn(slot, gfn, kvm_prefetch_vm_gup(vcpu->kvm),
				      &writable, &hva);
	if (!is_error_noslot_pfn(pfn)) {
		kvm_prefetch_put_pfn(pfn);
		return false;
	}
	return !prefetch_mapped_level(vcpu, gfn, &free);
}

/*
 * The next windows of a policy with a next() hook (the replay policy), as
 * long as the engine maps each through to its end: each in the memslot
 * that holds its start.  One in no memslot, or in one prefetch may not
 * map, is stepped over as if mapped.  Return the pages newly mapped.
 */
static u64 prefetch_next_windows(struct kvm_vcpu *vcpu,
				 const struct kvm_prefetch_fault *f,
				 struct kvm_prefetch_window *w, u32 used,
				 u32 *scanned)
{
	struct kvm_memory_slot *slot;
	u64 start, end, mapped = 0;
	bool done;

	/* Asked after each window mapped through, the last one too. */
	while (kvm_prefetch_next(vcpu->kvm, f, w, &used) &&
	       !prefetch_exit_due(vcpu, *scanned)) {
		slot = kvm_vcpu_gfn_to_memslot(vcpu, w->start);
		if (!slot || !kvm_prefetch_slot_allowed(slot) ||
		    !kvm_prefetch_clip_window(w, slot->base_gfn, slot->npages,
					      kvm_mmu_max_gfn(), &start, &end))
			continue;
		mapped += prefetch_range(vcpu, start, end, start, 0, false,
					 scanned, &done);
		if (!done)
			break;
	}
	return mapped;
}

/*
 * Open the window of @fault, if the policy asks for one, and map it; then
 * the policy's next windows, if it has a next() hook and the window was
 * mapped through.  @bo is the vCPU's back-off record for a guest fault,
 * else NULL.  Not inlined: a fault that backs off does not pay for this
 * frame.
 */
static noinline void prefetch_open(struct kvm_vcpu *vcpu,
				   struct kvm_page_fault *fault,
				   struct kvm_prefetch_backoff *bo)
{
	struct kvm_memory_slot *slot = fault->slot;
	struct kvm_prefetch_window w;
	struct kvm_prefetch_fault f;
	u64 start, end, step, mapped = 0;
	bool absent = false, done = true;
	u32 scanned = 0;

	/* Only plain, direct TDP faults of not-present pages. */
	if (fault->present || fault->rsvd || !fault->is_tdp ||
	    is_guest_mode(vcpu) || !kvm_mmu_prefetch_tdp_mmu(vcpu) ||
	    !kvm_prefetch_slot_allowed(slot))
		return;

	f = (struct kvm_prefetch_fault) {
		.origin		= fault->prefetch_type,
		.gfn		= fault->gfn,
		.error_code	= fault->error_code,
		.mapped_pages	= KVM_PAGES_PER_HPAGE(fault->goal_level),
		.vcpu_idx	= vcpu->vcpu_idx,
	};
	if (!kvm_prefetch_decide(vcpu->kvm, &f, &w))
		return;

	/* nr_pages 0: no window, but a policy with a next() hook. */
	if (!kvm_prefetch_clip_window(&w, slot->base_gfn, slot->npages,
				      kvm_mmu_max_gfn(), &start, &end)) {
		if (w.nr_pages)
			return;
		start = fault->gfn;
		end = start;
	}

	step = KVM_PAGES_PER_HPAGE(fault->goal_level);
	/* The probe examines the page the forward scan would start at. */
	if (bo && bo->empty && start < end) {
		gfn_t first = max(ALIGN_DOWN(fault->gfn, step) + step, start);

		absent = first < end && prefetch_host_absent(vcpu, slot, first);
		scanned = absent;
	}
	vcpu->stat.prefetch_windows++;
	kvm_mmu_prefetch_window(vcpu, true);
	if (start < end)
		mapped = prefetch_range(vcpu, start, end,
					ALIGN_DOWN(fault->gfn, step), step,
					absent, &scanned, &done);
	if (done && w.more)
		mapped += prefetch_next_windows(vcpu, &f, &w, w.nr_pages,
						&scanned);
	kvm_mmu_prefetch_window(vcpu, false);
	vcpu->stat.prefetch_mapped += mapped;
	vcpu->stat.generic.prefetch_scanned += scanned;
	if (bo)
		prefetch_backoff_update(bo, mapped);
}

/**
 * kvm_mmu_prefetch() - run the VM's prefetch policy after a fixed fault
 * @vcpu: the vCPU that took the fault
 * @fault: the fault, of any origin but KVM_PREFETCH_AUTO, that returned
 *	RET_PF_FIXED
 *
 * Called only from kvm_mmu_do_page_fault(), without mmu_lock, with
 * kvm->srcu held, and only while kvm_prefetch_may_open(): a VM whose policy
 * never opens a window, and that does not record, does not get here.
 *
 * A VM that records (KVM_PREFETCH_RECORD_START) records the frames a
 * guest fault or an async #PF completion mapped, first.
 *
 * A guest fault opens no window while the vCPU backs off after windows
 * that mapped nothing (see PREFETCH_EMPTY_MIN): the vCPU stat
 * prefetch_skipped counts those guest faults, whatever the policy would
 * have answered.  After a window that mapped nothing the next window
 * first probes the host page where its forward scan starts
 * (prefetch_host_absent()) and, if it is absent, scans only backward, as
 * the forward scan would end at once: what is mapped is the same.
 */
void kvm_mmu_prefetch(struct kvm_vcpu *vcpu, struct kvm_page_fault *fault)
{
	struct kvm_prefetch_backoff *bo = NULL;

	if (unlikely(kvm_prefetch_recording(vcpu->kvm))) {
		u64 pages = KVM_PAGES_PER_HPAGE(fault->goal_level);

		if (fault->prefetch_type != KVM_PREFETCH_MANUAL)
			kvm_prefetch_record(vcpu->kvm,
					    ALIGN_DOWN(fault->gfn, pages), pages);
		if (!kvm_prefetch_policy_may_open(vcpu->kvm))
			return;
	}
	if (fault->prefetch_type == KVM_PREFETCH_GUEST_FAULT) {
		bo = kvm_mmu_prefetch_backoff(vcpu);
		if (bo->skip) {
			bo->skip--;
			vcpu->stat.generic.prefetch_skipped++;
			return;
		}
	}
	prefetch_open(vcpu, fault, bo);
}

/**
 * kvm_mmu_pre_fault_begin() - get ready for one try of a KVM_PRE_FAULT_MEMORY
 * fault
 * @vcpu: the vCPU, loaded, with kvm->srcu held
 * @gpa: the guest physical address the try faults in
 *
 * A memslot update makes the vCPU's root obsolete and asks the vCPU to free
 * it, which it does when it next enters the guest.  A prefault does not
 * enter the guest, so free the obsolete root here: a fault on it would only
 * return RET_PF_RETRY, for as long as the vCPU stays out of the guest.
 * Then give up before faulting if the memslot is being deleted or moved
 * (it stays invalid for as long as we hold kvm->srcu) or is not there.
 *
 * Return: 0 to go on, -EAGAIN (memslot being deleted or moved), -ENOENT (no
 * memslot) or another -errno from loading the root.
 */
int kvm_mmu_pre_fault_begin(struct kvm_vcpu *vcpu, gpa_t gpa)
{
	struct kvm_memory_slot *slot;
	int r;

	if (kvm_check_request(KVM_REQ_MMU_FREE_OBSOLETE_ROOTS, vcpu))
		kvm_mmu_free_obsolete_roots(vcpu);
	r = kvm_mmu_reload(vcpu);
	if (r)
		return r;

	slot = kvm_vcpu_gfn_to_memslot(vcpu, gpa_to_gfn(gpa));
	if (slot && (slot->flags & KVM_MEMSLOT_INVALID))
		return -EAGAIN;
	if (!kvm_is_visible_memslot(slot))
		return -ENOENT;
	return 0;
}

/**
 * kvm_mmu_prefetch_faultin_pfn() - kvm_faultin_pfn() for an AUTO fault
 * @vcpu: the vCPU
 * @fault: an AUTO fault
 *
 * Called by kvm_faultin_pfn() after its mmu_invalidate_seq snapshot and
 * before any of its other tests, so it refuses itself what an AUTO fault
 * must not map.
 *
 * Return: RET_PF_CONTINUE with fault->pfn set, or RET_PF_RETRY (do not map)
 * if kvm_prefetch_slot_allowed() refuses the memslot (none, KVM's own,
 * dirty-logged, invalid), the gfn is private, or the host page is not
 * there without waiting or faulting it in.
 */
int kvm_mmu_prefetch_faultin_pfn(struct kvm_vcpu *vcpu,
				 struct kvm_page_fault *fault)
{
	hva_t hva;

	/*
	 * After the fault's mmu_invalidate_seq snapshot, so that a gfn made
	 * private after this test makes the fault stale.
	 */
	if (!kvm_prefetch_slot_allowed(fault->slot) ||
	    kvm_mmu_prefetch_private(vcpu->kvm, fault->gfn))
		return RET_PF_RETRY;
	if (kvm_mmu_prefetch_gmem_only(fault->slot))
		return kvm_mmu_prefetch_gmem_faultin(vcpu, fault);
	fault->pfn = kvm_prefetch_gfn_to_pfn(fault->slot, fault->gfn,
					     kvm_prefetch_vm_gup(vcpu->kvm),
					     &fault->map_writable, &hva);
	if (is_error_noslot_pfn(fault->pfn))
		return RET_PF_RETRY;
	kvm_mmu_prefetch_fault_page(fault, hva);
	return RET_PF_CONTINUE;
}

#ifdef CONFIG_KVM_PREFETCH_USAGE
/**
 * kvm_mmu_prefetch_spte_changed() - account a prefetched SPTE that changes
 * @kvm: the VM, whose usage tracking is on (kvm_prefetch_usage_tracking())
 * @as_id: the address space
 * @gfn: the first guest frame the SPTE maps
 * @old_spte: the SPTE before
 * @new_spte: the SPTE after (or the frozen value a zap installs)
 * @level: the SPTE's level
 *
 * Called by the TDP MMU for every change of an SPTE it makes, and by
 * aging.  A leaf that goes away, is split, maps another page or loses its
 * Accessed state (aging) accounts its tracked pages: used if it was
 * accessed.  A leaf that only changes otherwise (write protection, dirty
 * state) keeps them tracked.
 */
void kvm_mmu_prefetch_spte_changed(struct kvm *kvm, int as_id, gfn_t gfn,
				   u64 old_spte, u64 new_spte, int level)
{
	bool used;

	if (as_id || !is_shadow_present_pte(old_spte) ||
	    !is_last_spte(old_spte, level))
		return;
	used = is_accessed_spte(old_spte);
	if (is_shadow_present_pte(new_spte) && is_last_spte(new_spte, level) &&
	    spte_to_pfn(new_spte) == spte_to_pfn(old_spte) &&
	    (!used || is_accessed_spte(new_spte)))
		return;
	kvm_prefetch_usage_account(kvm, gfn, KVM_PAGES_PER_HPAGE(level), used);
}

/**
 * kvm_arch_prefetch_harvest() - account the accessed prefetched SPTEs of a range
 * @kvm: the VM
 * @start: the first guest frame
 * @end: the frame after the last
 *
 * Walks the leaves mapping [@start, @end) in every valid TDP MMU root of
 * address space 0, with mmu_lock held for read, and accounts each
 * accessed one as used.  An unaccessed leaf stays tracked; a tracked
 * page with no leaf at all (a zap between an AUTO fault's install and its
 * mark) is accounted unused.
 */
void kvm_arch_prefetch_harvest(struct kvm *kvm, u64 start, u64 end)
{
	DECLARE_BITMAP(seen, 512) = {};
	unsigned int first, last;
	struct kvm_mmu_page *root;
	struct tdp_iter iter;
	u64 gfn, pages;

	if (WARN_ON_ONCE(end - start > 512))
		return;
	read_lock(&kvm->mmu_lock);
	rcu_read_lock();
	list_for_each_entry_rcu(root, &kvm->arch.tdp_mmu_roots, link) {
		if (!kvm_mmu_prefetch_harvest_root(root))
			continue;
		for_each_prefetch_tdp_pte(iter, kvm, root, start, end) {
			if (!is_shadow_present_pte(iter.old_spte) ||
			    !is_last_spte(iter.old_spte, iter.level))
				continue;
			pages = KVM_PAGES_PER_HPAGE(iter.level);
			gfn = max_t(u64, iter.gfn, start);
			bitmap_set(seen, gfn - start,
				   min_t(u64, iter.gfn + pages, end) - gfn);
			if (is_accessed_spte(iter.old_spte))
				kvm_prefetch_usage_account(kvm, iter.gfn, pages,
							   true);
		}
	}
	rcu_read_unlock();
	/* Marked, but mapped by no leaf: gone before its mark. */
	for_each_clear_bitrange(first, last, seen, end - start)
		kvm_prefetch_usage_account(kvm, start + first, last - first,
					   false);
	read_unlock(&kvm->mmu_lock);
}

/**
 * kvm_arch_prefetch_faults_taken() - the guest faults a VM's vCPUs fixed
 * @kvm: the VM
 *
 * Return: pf_fixed summed over the vCPUs (a prefetch's AUTO faults are
 * not in it).
 */
u64 kvm_arch_prefetch_faults_taken(struct kvm *kvm)
{
	struct kvm_vcpu *vcpu;
	unsigned long i;
	u64 faults = 0;

	kvm_for_each_vcpu(i, vcpu, kvm)
		faults += READ_ONCE(vcpu->stat.pf_fixed);
	return faults;
}
#endif /* CONFIG_KVM_PREFETCH_USAGE */
