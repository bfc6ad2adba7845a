// SPDX-License-Identifier: GPL-2.0-only
/*
 * The batched prefetch engine: map a run of a window's gfns with one
 * mmu_notifier snapshot, one GUP of the run, and one mmu_lock read
 * section that walks once to each last-level page table and installs the
 * missing leaf SPTEs, instead of one full fault per page.
 *
 * It maps exactly what the per-page engine (AUTO faults, mmu/prefetch.c)
 * would: prefetch SPTEs (neither accessed nor dirty, see
 * kvm_mmu_prefetch_clean_spte()), writable as the host mapping and
 * the memslot allow, at the level the fault path would pick but for a
 * block that would not lie inside the window or would cover a present
 * SPTE, where it maps smaller, never over a present SPTE and never
 * outside the window.  Its GUP is the VM's: fast only, or nofault, where a run
 * that fast GUP refuses comes read-only from one slow GUP (see
 * kvm_prefetch_gfn_run_to_pages()).  What it cannot do the same way it
 * leaves to the per-page engine by stopping there: pages GUP does not get
 * (absent, VM_IO/VM_PFNMAP, read-only for a writable memslot with fast
 * GUP only), hugetlbfs pages, VMs that may have private memory or honour
 * guest MTRRs or split NX huge pages, a missing page table, a racing
 * invalidation or SPTE change, an invalid root, a pending signal.
 *
 * Per page it does no more than it must: the SPTE of a 4 KiB page is the
 * batch's first one with the page's pfn (make_spte() depends on the pfn
 * and gfn only through the memory type, the encryption bit and write
 * tracking, which the batch checks), and the page reference is dropped
 * with put_page() without marking the host page accessed, as KVM's own
 * prefetch of the shadow MMU does and the per-page engine's faults do
 * (kvm_prefetch_put_pfn()).
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/kvm_host.h>
#include <kvm/prefetch.h>
#include <linux/sched/signal.h>

#include "mmu.h"
#include "mmu_internal.h"
#include "spte.h"
#include "tdp_iter.h"
#include "tdp_mmu.h"
#include "prefetch_mmu.h"
#include "prefetch_batch.h"

/* Pages one batch gets with one GUP. */
#define PREFETCH_BATCH_PAGES	64

/*
 * One vCPU's batch: allocated with the vCPU, as the fault path has no room
 * on the stack for the page array.  Only the vCPU's own thread uses it,
 * with vcpu->mutex held (a guest fault, a prefault or an async #PF
 * completion), and the AUTO faults it issues never open a window.
 */
struct kvm_prefetch_batch {
	struct kvm_prefetch_backoff backoff;	/* first: see prefetch_batch.h */
	struct kvm_vcpu *vcpu;
	struct kvm_memory_slot *slot;
	gfn_t start, end;	/* the window */
	gfn_t gfn;		/* the gfn of pages[0] */
	int nr;			/* pages got */
	bool writable;		/* the host and the memslot allow writes */
	gfn_t next;		/* what is done ends here */
	u64 mapped;		/* 4 KiB pages newly mapped */
	u32 leaves;		/* leaves the walk found mapped or mapped */
	u64 spte_4k;		/* a 4 KiB SPTE of the batch to copy, or 0 */
	u64 present;		/* leaves found mapped: bit i for gfn + i */
	bool in_window;		/* the vCPU maps a window (both engines) */
	struct page *pages[PREFETCH_BATCH_PAGES];
};

static_assert(offsetof(struct kvm_prefetch_batch, backoff) == 0);

/*
 * Can the batch map like the fault path here?  Not if the fault path's
 * level depends on more than the host mapping and the memslot (guest
 * MTRRs, split NX huge pages), nor if a gfn may be private.
 */
static bool prefetch_batch_vm_ok(struct kvm_vcpu *vcpu)
{
	struct kvm *kvm = vcpu->kvm;

	return !kvm_arch_has_noncoherent_dma(kvm) &&
	       !is_nx_huge_page_enabled(kvm) &&
	       !kvm_mmu_prefetch_may_be_private(kvm) &&
	       !signal_pending(current);
}

/*
 * The level the fault path maps @gfn at, as kvm_mmu_hugepage_adjust(),
 * at most that of the largest block holding @gfn inside the window.  The
 * host maps a page that is neither part of a compound page nor
 * ZONE_DEVICE memory with a 4 KiB PTE, so that the fault path maps it at
 * 4 KiB: skip the walk of the host page tables for it.
 */
static int prefetch_batch_level(struct kvm_prefetch_batch *b, gfn_t gfn)
{
	struct page *page = b->pages[gfn - b->gfn];
	int max_level;

	if (!PageCompound(page) && !is_zone_device_page(page))
		return PG_LEVEL_4K;
	max_level = kvm_mmu_prefetch_max_level(gfn, b->start, b->end);
	if (max_level == PG_LEVEL_4K)
		return PG_LEVEL_4K;
	return kvm_mmu_prefetch_mapping_level(b->vcpu->kvm, b->slot, gfn,
					      max_level);
}

/*
 * The prefetch SPTE for @pfn at @iter, as make_spte() makes it.  A 4 KiB
 * SPTE differs from another of the batch only in the pfn unless the memory
 * type or the encryption bit depend on the pfn
 * (kvm_mmu_prefetch_memtype_per_pfn(), shadow_me_value) or write tracking
 * makes one read-only: copy the first one made, and make the others only
 * where those may differ.
 */
static u64 prefetch_batch_spte(struct kvm_prefetch_batch *b,
			       struct kvm_mmu_page *sp, struct tdp_iter *iter,
			       kvm_pfn_t pfn)
{
	u64 spte;

	if (b->spte_4k && iter->level == PG_LEVEL_4K &&
	    (!is_mmu_writable_spte(b->spte_4k) ||
	     kvm_mmu_prefetch_unsync(b->vcpu->kvm, b->slot, iter->gfn)))
		return (b->spte_4k & ~SPTE_BASE_ADDR_MASK) |
		       ((u64)pfn << PAGE_SHIFT);

	/*
	 * make_spte() says whether write tracking made it read-only, and
	 * with the window open it makes it clean (kvm_mmu_prefetch_spte()).
	 */
	if (!kvm_mmu_prefetch_make_spte(b->vcpu, sp, b->slot, iter->gfn, pfn,
					iter->old_spte, b->writable, &spte) &&
	    iter->level == PG_LEVEL_4K && !kvm_mmu_prefetch_memtype_per_pfn() &&
	    !shadow_me_value)
		b->spte_4k = spte;
	return spte;
}

/*
 * Install a prefetch SPTE at @iter for the page of @gfn (a gfn of the
 * batch inside the SPTE's range).  Return false if another thread changed
 * the SPTE first.
 */
static bool prefetch_batch_install(struct kvm_prefetch_batch *b,
				   struct tdp_iter *iter, gfn_t gfn)
{
	struct kvm_mmu_page *sp = sptep_to_sp(rcu_dereference(iter->sptep));
	u64 pages = KVM_PAGES_PER_HPAGE(iter->level);
	kvm_pfn_t pfn;

	/* The fault path maps a huge page from its first pfn. */
	pfn = page_to_pfn(b->pages[gfn - b->gfn]) & ~(pages - 1);
	if (kvm_tdp_mmu_prefetch_set_spte(b->vcpu->kvm, iter,
					  prefetch_batch_spte(b, sp, iter, pfn)))
		return false;
	b->mapped += pages;
	return true;
}

/* The bits of [@from, @to) in a mask of the batch's pages. */
static u64 prefetch_batch_mask(struct kvm_prefetch_batch *b, gfn_t from,
			       gfn_t to)
{
	u64 lo = from - b->gfn, hi = min_t(u64, to - b->gfn, 64);

	return lo >= hi ? 0 : GENMASK_ULL(hi - 1, lo);
}

/* The walk found [@gfn, @end) mapped already (rare in a restore). */
static void prefetch_batch_present(struct kvm_prefetch_batch *b, gfn_t gfn,
				   gfn_t end)
{
	b->present |= prefetch_batch_mask(b, gfn, end);
}

/*
 * Note what the walk mapped as prefetched and not accessed
 * (kvm_prefetch_usage_mark_mask()): every page of [b->gfn, b->next) that
 * it did not find mapped, as the walk leaves nothing in between.  With
 * mmu_lock still held: a zap, which takes it for write, finds them
 * marked.  A huge SPTE (the walk's last) is marked whole, since it may
 * start before the batch; marking a page twice is harmless.  Nothing
 * per page on the way: mostly one atomic OR per batch.
 */
static void prefetch_batch_mark(struct kvm_prefetch_batch *b)
{
	struct kvm *kvm = b->vcpu->kvm;

	kvm_prefetch_usage_mark_mask(kvm, kvm_prefetch_usage_of(kvm), b->gfn,
				     prefetch_batch_mask(b, b->gfn, b->next) &
				     ~b->present);
	/*
	 * A huge SPTE: the walk's last (it ends past the batch), at the end
	 * of what is done; the only way past PREFETCH_BATCH_PAGES pages.
	 */
	if (unlikely(b->mapped > PREFETCH_BATCH_PAGES)) {
		u64 pages = KVM_PAGES_PER_HPAGE(PG_LEVEL_2M);

		if (b->mapped >= KVM_PAGES_PER_HPAGE(PG_LEVEL_1G))
			pages = KVM_PAGES_PER_HPAGE(PG_LEVEL_1G);
		kvm_prefetch_usage_mark(kvm, b->next - pages, pages);
	}
}

/*
 * Walk [b->gfn, b->gfn + b->nr) of @root once, with mmu_lock held for
 * read, and map what is missing.  b->next ends up at the first gfn the
 * walk did not settle.
 */
static void prefetch_batch_walk(struct kvm_prefetch_batch *b,
				struct kvm_mmu_page *root)
{
	gfn_t end = b->gfn + b->nr, skip = 0, gfn;
	struct tdp_iter iter;
	u64 pages;

	rcu_read_lock();
	for_each_prefetch_tdp_pte(iter, b->vcpu->kvm, root, b->gfn, end) {
		pages = KVM_PAGES_PER_HPAGE(iter.level);
		gfn = max(iter.gfn, b->gfn);
		if (gfn < skip)
			continue;
		if (kvm_mmu_prefetch_spte_frozen(iter.old_spte))
			break;
		if (is_shadow_present_pte(iter.old_spte)) {
			/*
			 * A leaf maps it already.  A table, even where the
			 * fault path would map a huge page: a prefetch does
			 * not replace it, but maps what is missing below it.
			 */
			if (is_last_spte(iter.old_spte, iter.level)) {
				skip = iter.gfn + pages;
				prefetch_batch_present(b, gfn, skip);
				b->next = skip;
				b->leaves++;
			}
			continue;
		}
		/* Not mapped, at the fault path's level or too high. */
		if (iter.level > PG_LEVEL_4K &&
		    prefetch_batch_level(b, gfn) < iter.level)
			break;	/* a missing table: the fault path makes it */
		if (!prefetch_batch_install(b, &iter, gfn))
			break;
		b->leaves++;
		skip = iter.gfn + pages;
		b->next = skip;
	}
	rcu_read_unlock();
}

/*
 * One batch of at most @max (and PREFETCH_BATCH_PAGES) pages from @gfn,
 * below @end.
 */
static void prefetch_batch_run(struct kvm_prefetch_batch *b, gfn_t end,
			       u32 max)
{
	struct kvm *kvm = b->vcpu->kvm;
	struct kvm_mmu_page *root;
	unsigned long mmu_seq;
	int i;

	b->slot = kvm_vcpu_gfn_to_memslot(b->vcpu, b->gfn);
	if (!kvm_prefetch_slot_allowed(b->slot))
		return;
	end = min(end, b->slot->base_gfn + b->slot->npages);

	mmu_seq = kvm->mmu_invalidate_seq;
	/*
	 * The sequence before the host page tables GUP reads, as in the
	 * fault path, so that mmu_invalidate_retry() catches an
	 * invalidation of any page GUP got.
	 */
	smp_rmb();

	b->nr = kvm_prefetch_gfn_run_to_pages(b->slot, b->gfn,
					      min_t(u64, min_t(u64, end - b->gfn,
							       PREFETCH_BATCH_PAGES),
						    max),
					      kvm_prefetch_vm_gup(kvm),
					      b->pages, &b->writable);
	if (!b->nr)
		return;

	read_lock(&kvm->mmu_lock);
	root = kvm_mmu_prefetch_root(b->vcpu);
	if (root && !mmu_invalidate_retry(kvm, mmu_seq))
		prefetch_batch_walk(b, root);
	prefetch_batch_mark(b);
	/*
	 * Under mmu_lock, where a folio may be marked dirty; the pages
	 * before b->next are mapped, writable if b->writable.
	 */
	for (i = 0; i < b->nr; i++)
		kvm_prefetch_put_page(b->pages[i],
				      KVM_MMU_PREFETCH_DIRTY_ON_MAP &&
				      b->writable && b->gfn + i < b->next);
	read_unlock(&kvm->mmu_lock);
}

/* Leaves one call steps over before it gets pages from the host. */
#define PREFETCH_BATCH_SKIP	512

/*
 * Step over what is mapped from @gfn, below @end and within @max leaves,
 * in one walk of the root with mmu_lock held for read, as the batch walks
 * it: no page is got from the host for a gfn that is mapped already.
 * *@scanned counts the leaves stepped over.  Return the first gfn not
 * known to be mapped.
 */
static gfn_t prefetch_batch_skip_mapped(struct kvm_vcpu *vcpu, gfn_t gfn,
					gfn_t end, u32 max, u32 *scanned)
{
	struct kvm *kvm = vcpu->kvm;
	struct kvm_mmu_page *root;
	struct tdp_iter iter;
	gfn_t next = gfn;
	u32 n = 0;

	max = min_t(u32, max, PREFETCH_BATCH_SKIP);
	read_lock(&kvm->mmu_lock);
	root = kvm_mmu_prefetch_root(vcpu);
	if (!root)
		goto out;
	rcu_read_lock();
	for_each_prefetch_tdp_pte(iter, kvm, root, gfn, end) {
		if (kvm_mmu_prefetch_spte_frozen(iter.old_spte) ||
		    !is_shadow_present_pte(iter.old_spte) || n >= max)
			break;
		if (!is_last_spte(iter.old_spte, iter.level))
			continue;
		next = iter.gfn + KVM_PAGES_PER_HPAGE(iter.level);
		n++;
	}
	rcu_read_unlock();
out:
	read_unlock(&kvm->mmu_lock);
	*scanned += n;
	return next;
}

/**
 * kvm_mmu_prefetch_batch() - map a run of a window with the batched engine
 * @vcpu: the vCPU whose fault opened the window, with kvm->srcu held
 * @start: the start of the window, clipped to the memslot
 * @gfn: where the per-page engine's forward scan is, in the window
 * @end: the end of the window, clipped to the memslot
 * @max: the most pages the batch may examine (the rest of the per-exit
 *	budget, at least 1)
 * @mapped: incremented by the number of 4 KiB pages newly mapped
 * @scanned: incremented by what the batch examined: the leaves it stepped
 *	over before it got pages, and then the leaves it found mapped or
 *	mapped (at least one if it got pages); a huge leaf counts once,
 *	as its one SPTE and the at most PREFETCH_BATCH_PAGES pages got for it
 *
 * Step over what is mapped from @gfn on; if that is nothing, map what is
 * missing of one batch (at most PREFETCH_BATCH_PAGES and @max pages) from
 * @gfn on, as the per-page engine would, up to the first gfn it cannot
 * handle.  Nothing outside [@start, @end) is mapped.  The caller checks
 * its per-exit budget between two calls.
 *
 * Return: the gfn where the caller goes on (@gfn if nothing was done),
 * at or past @end if the window is done.
 */
u64 kvm_mmu_prefetch_batch(struct kvm_vcpu *vcpu, u64 start, u64 gfn,
			   u64 end, u32 max, u64 *mapped, u32 *scanned)
{
	struct kvm_prefetch_batch *b = vcpu->arch.prefetch_batch;

	if (!prefetch_batch_vm_ok(vcpu))
		return gfn;
	b->next = prefetch_batch_skip_mapped(vcpu, gfn, end, max, scanned);
	if (b->next != gfn)
		return b->next;
	/* Each batch resets what it reads; the page array it overwrites. */
	b->vcpu = vcpu;
	b->start = start;
	b->end = end;
	b->gfn = gfn;
	b->next = gfn;
	b->nr = 0;
	b->mapped = 0;
	b->leaves = 0;
	b->spte_4k = 0;
	/* present has a bit per page of the batch. */
	BUILD_BUG_ON(BITS_PER_TYPE(b->present) < PREFETCH_BATCH_PAGES);
	b->present = 0;
	prefetch_batch_run(b, end, max);
	*mapped += b->mapped;
	*scanned += b->nr ? max_t(u32, b->leaves, 1) : 0;
	return b->next;
}

/**
 * kvm_mmu_prefetch_window() - say whether the vCPU maps a window
 * @vcpu: the vCPU, in kvm_mmu_prefetch()
 * @open: true before the window's walk, false after it
 *
 * While it is open, the SPTEs that make_spte() makes for a prefetch on
 * this vCPU (the AUTO faults' and the batch's) are clean.
 */
void kvm_mmu_prefetch_window(struct kvm_vcpu *vcpu, bool open)
{
	vcpu->arch.prefetch_batch->in_window = open;
}

/**
 * kvm_mmu_prefetch_spte() - the SPTE make_spte() makes for a prefetch
 * @vcpu: the vCPU the SPTE is made for
 * @spte: what make_spte() made, in its prefetch branch
 *
 * Called by make_spte() for every prefetch (async #PF completions,
 * KVM_PRE_FAULT_MEMORY, the shadow MMU's prefetch, the engine's); only
 * the engine's, made while the vCPU maps a window, change.
 *
 * Return: @spte, without the dirty bit if it is the engine's and can do
 * without (kvm_mmu_prefetch_clean_spte()).
 */
u64 kvm_mmu_prefetch_spte(struct kvm_vcpu *vcpu, u64 spte)
{
	struct kvm_prefetch_batch *b = vcpu->arch.prefetch_batch;

	return b && b->in_window ? kvm_mmu_prefetch_clean_spte(spte) : spte;
}

/**
 * kvm_mmu_prefetch_vcpu_create() - set up a new vCPU's prefetch engine
 * @vcpu: the vCPU, from kvm_mmu_create()
 *
 * Return: 0 or -ENOMEM.
 */
int kvm_mmu_prefetch_vcpu_create(struct kvm_vcpu *vcpu)
{
	vcpu->arch.prefetch_batch = kzalloc(sizeof(*vcpu->arch.prefetch_batch),
					    GFP_KERNEL_ACCOUNT);
	return vcpu->arch.prefetch_batch ? 0 : -ENOMEM;
}

/**
 * kvm_mmu_prefetch_vcpu_destroy() - free what kvm_mmu_prefetch_vcpu_create()
 * set up
 * @vcpu: the vCPU, from kvm_mmu_destroy()
 */
void kvm_mmu_prefetch_vcpu_destroy(struct kvm_vcpu *vcpu)
{
	kfree(vcpu->arch.prefetch_batch);
	vcpu->arch.prefetch_batch = NULL;
}
