// SPDX-License-Identifier: GPL-2.0-only
/*
 * The arm64 prefetch engine (stage-2 MMU).  After user_mem_abort() has
 * mapped the page of a guest translation fault, it asks the VM's policy
 * for a window around the faulting gfn, lets the core clip it, and maps
 * the pages of the window that the host already has into stage 2:
 *
 *  - host pages come from the core's resolver (kvm_prefetch_gfn_to_pfn())
 *    with the VM's GUP mode: lockless fast GUP, and in the nofault mode
 *    also GUP with FOLL_NOFAULT if mmap_lock is free; never a fault, never
 *    I/O, never a userfaultfd event;
 *  - they are mapped under mmu_lock (for write: 6.1's stage-2 map is not
 *    safe under the read lock) after the mmu_notifier retry check against
 *    user_mem_abort()'s own mmu_invalidate_seq snapshot, taken before the
 *    fault's GUP and so before every GUP of the window; a retry ends the
 *    whole window;
 *  - the leaf is looked up first, under the same lock, and a gfn whose
 *    stage-2 entry is not empty is never mapped over;
 *  - a page is mapped writable only if the memslot is writable and the
 *    host gave it writable (read-only memslot: never), executable only
 *    where the fault path would map it so without an exec fault (DIC);
 *  - memslots the core refuses (dirty logging, KVM's own, being deleted
 *    or moved) get no window, nor do memslots of guest_memfd memory, nor
 *    VMs with MTE (their pages' tags would have to be initialised first,
 *    as the fault path does), nor a vCPU on a nested guest's shadow
 *    stage 2.
 *
 * What the base kernels name or call differently is in prefetch_s2_base.h
 * (arch/arm64/<base>/kvm/).
 *
 * The scan is x86's (sysfs-docs/design.rst, "The engine"): forward from
 * the block the fault installed to the window's end, stepping over what
 * is mapped, then backward to the window's start until the first mapped
 * page; in either direction the first page the host does not have ends
 * it.  It runs in batches of up to PREFETCH_BATCH gfns of one last-level
 * table: their pages are got first, without mmu_lock (nofault GUP may
 * take mmap_lock), then mapped under one hold of mmu_lock, with the
 * vCPU's memory cache topped up before the batch for the tables a batch
 * may need.
 *
 * Huge mappings where the host has them, as the fault path's
 * transparent_hugepage_adjust() would make them: a 2 MiB block of the
 * window that lies whole inside it and inside the memslot, with guest and
 * host addresses congruent modulo 2 MiB, whose host page is mapped by a
 * PMD (or PUD) of the VMM's page table and whose stage-2 range is empty
 * down to its level-2 entry (no table below it), is mapped with one
 * level-2 block entry instead of 512 pages.  Anything else of such a
 * block (a table with some pages in it, a host that maps it with PTEs)
 * goes by 4 KiB pages.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/kvm_host.h>
#include <linux/pgtable.h>
#include <linux/sched/signal.h>
#include <asm/cpufeature.h>
#include <asm/kvm_emulate.h>
#include <asm/kvm_mmu.h>
#include <asm/kvm_pgtable.h>
#include <asm/virt.h>
#include <kvm/prefetch.h>

#include "prefetch_s2.h"
#include "prefetch_s2_base.h"

/**
 * kvm_arch_prefetch_supported() - can prefetch run for a VM?
 * @kvm: the VM, or NULL for KVM_CHECK_EXTENSION on /dev/kvm
 *
 * The core's windows count 4 KiB pages, so only kernels with 4 KiB pages
 * prefetch; and not in protected mode (pKVM), which this engine has not
 * been tried with.
 *
 * Return: true if the stage-2 engine maps windows for @kvm.
 */
bool kvm_arch_prefetch_supported(struct kvm *kvm)
{
	return IS_ENABLED(CONFIG_ARM64_4K_PAGES) && !is_protected_kvm_enabled();
}

/* Gfns got and mapped under one hold of mmu_lock. */
#define PREFETCH_BATCH		16
/* 4 KiB pages that one last-level stage-2 table maps: one 2 MiB block. */
#define PREFETCH_TABLE_PAGES	PTRS_PER_PTE
/* The stage-2 level of a 2 MiB block entry. */
#define PREFETCH_BLOCK_LEVEL	(PREFETCH_S2_LAST_LEVEL - 1)

/*
 * The per-exit budget, x86's: a window is mapped while the vCPU is out of
 * the guest and holds kvm->srcu.  It is charged for every page examined,
 * whatever the engine finds: an entry that is mapped already (once, at
 * any level), a page got from the host, a block tried; a block mapped
 * counts 512 (without FWB its mapping cleans its 2 MiB from the data
 * cache).  Stop between two batches on a signal; once PREFETCH_EXIT_MIN
 * is spent (a 2 MiB block of pages: a restore's chunk is never cut) for
 * a request something waits for (prefetch_request_pending()); at
 * PREFETCH_EXIT_MAX in any case, to which the last batch is cut.  Before
 * that, yield the CPU when asked and go on.  The rest of the window is
 * left to the guest's next fault there.
 */
#define PREFETCH_EXIT_MIN	512
#define PREFETCH_EXIT_MAX	16384

struct prefetch_walk {
	struct kvm_vcpu *vcpu;
	struct kvm_memory_slot *slot;
	unsigned long mmu_seq;
	u32 gup;
	u64 mapped;
	u32 scanned;
};

/* How a batch ended. */
enum prefetch_end {
	PREFETCH_GO,	/* every gfn dealt with: go on in this direction */
	PREFETCH_EDGE,	/* a page the host lacks, or (backward) one mapped */
	PREFETCH_STOP,	/* the whole window ends: retry, error */
};

/*
 * The vCPU requests that end a window early, past the minimum: an
 * interrupt to deliver (KVM_REQ_IRQ_PENDING), a vCPU being stopped or
 * suspended (KVM_REQ_SLEEP) and a dead VM.  Not KVM_REQ_RECORD_STEAL,
 * which every vcpu_load() after a preemption raises.
 */
static bool prefetch_request_pending(struct kvm_vcpu *vcpu)
{
	return kvm_test_request(KVM_REQ_IRQ_PENDING, vcpu) ||
	       kvm_test_request(KVM_REQ_SLEEP, vcpu) ||
	       kvm_test_request(KVM_REQ_VM_DEAD, vcpu);
}

static bool prefetch_exit_due(struct kvm_vcpu *vcpu, u32 scanned)
{
	if (signal_pending(current) || scanned >= PREFETCH_EXIT_MAX)
		return true;
	cond_resched();
	return scanned >= PREFETCH_EXIT_MIN && prefetch_request_pending(vcpu);
}

/* Entries one call steps over before the batch gets pages. */
#define PREFETCH_SKIP	64

/*
 * Step forward over what stage 2 maps from @gfn, below @end, under the
 * read lock: no page is got from the host for a gfn that is mapped.  Each
 * entry stepped over is charged.  Return the first gfn not mapped, or
 * where it stopped looking.
 */
static gfn_t prefetch_skip_mapped(struct prefetch_walk *w, gfn_t gfn,
				  gfn_t end)
{
	struct kvm *kvm = w->vcpu->kvm;
	int n;

	read_lock(&kvm->mmu_lock);
	for (n = 0; n < PREFETCH_SKIP && gfn < end &&
	     w->scanned < PREFETCH_EXIT_MAX; n++) {
		struct kvm_pgtable *pgt = w->vcpu->arch.hw_mmu->pgt;
		prefetch_s2_level_t level;
		kvm_pte_t pte;
		u64 pages;

		if (kvm_pgtable_get_leaf(pgt, gfn_to_gpa(gfn), &pte, &level) ||
		    !kvm_pte_valid(pte))
			break;
		pages = kvm_granule_size(level) >> PAGE_SHIFT;
		gfn = ALIGN_DOWN(gfn, pages) + pages;
		w->scanned++;
	}
	read_unlock(&kvm->mmu_lock);
	return gfn;
}

/*
 * One batch: *@nr gfns from @gfn in direction @dir (1 or -1), all of one
 * last-level table and of the window.  Sets *@nr to how many gfns it dealt
 * with (forward, a block mapping found skips to the block's end).
 */
static enum prefetch_end prefetch_batch(struct prefetch_walk *w, gfn_t gfn,
					int dir, int *nr)
{
	struct kvm_vcpu *vcpu = w->vcpu;
	struct kvm *kvm = vcpu->kvm;
	struct kvm_mmu_memory_cache *mc = &vcpu->arch.mmu_page_cache;
	enum prefetch_end res = PREFETCH_GO;
	kvm_pfn_t pfns[PREFETCH_BATCH];
	bool writable[PREFETCH_BATCH];
	enum kvm_pgtable_prot prot;
	struct kvm_pgtable *pgt;
	int got, done = 0, i;
	prefetch_s2_level_t level;
	kvm_pte_t pte;
	hva_t hva;

	/* The tables a batch may need: those of one last-level table. */
	if (kvm_mmu_topup_memory_cache(mc, prefetch_s2_cache_min_pages(kvm)))
		return PREFETCH_STOP;

	/* The host pages, up to the first the host does not give. */
	for (got = 0; got < *nr; got++) {
		kvm_pfn_t pfn = kvm_prefetch_gfn_to_pfn(w->slot,
							gfn + dir * got, w->gup,
							&writable[got], &hva);

		if (is_error_noslot_pfn(pfn))
			break;
		/* Not memory (ZONE_DEVICE...): the fault path's to map. */
		if (!pfn_is_map_memory(pfn)) {
			kvm_prefetch_put_pfn(pfn);
			break;
		}
		pfns[got] = pfn;
	}
	w->scanned += max(got, 1);

	write_lock(&kvm->mmu_lock);
	pgt = vcpu->arch.hw_mmu->pgt;
	if (mmu_invalidate_retry(kvm, w->mmu_seq)) {
		res = PREFETCH_STOP;
		goto out_unlock;
	}
	for (; done < got; done++) {
		gfn_t g = gfn + dir * done;

		if (kvm_pgtable_get_leaf(pgt, gfn_to_gpa(g), &pte, &level)) {
			res = PREFETCH_STOP;
			goto out_unlock;
		}
		/* Never over an entry that is there. */
		if (pte) {
			if (dir < 0) {
				res = PREFETCH_EDGE;
				goto out_unlock;
			}
			if (kvm_pte_valid(pte) &&
			    level < PREFETCH_S2_LAST_LEVEL) {
				u64 pages = kvm_granule_size(level) >> PAGE_SHIFT;

				done = ALIGN_DOWN(g, pages) + pages - gfn;
				goto out_unlock;
			}
			continue;
		}
		prot = KVM_PGTABLE_PROT_R;
		if (writable[done])
			prot |= KVM_PGTABLE_PROT_W;
		if (prefetch_s2_have_dic())
			prot |= KVM_PGTABLE_PROT_X;
		if (prefetch_s2_map(pgt, gfn_to_gpa(g), PAGE_SIZE,
				    __pfn_to_phys(pfns[done]), prot, mc)) {
			res = PREFETCH_STOP;
			goto out_unlock;
		}
		/* No stage-2 dirty bit: a writable mapping dirties the page. */
		if (writable[done])
			prefetch_s2_set_pfn_dirty(pfns[done]);
		w->mapped++;
	}
	/*
	 * The gfn whose page the host did not give: forward, step over it if
	 * it is mapped; else this direction ends.
	 */
	if (got < *nr) {
		gfn_t g = gfn + dir * got;

		if (dir > 0 && !kvm_pgtable_get_leaf(pgt, gfn_to_gpa(g), &pte,
						     &level) && pte)
			done = got + 1;
		else
			res = PREFETCH_EDGE;
	}
out_unlock:
	write_unlock(&kvm->mmu_lock);
	for (i = 0; i < got; i++)
		kvm_prefetch_put_pfn(pfns[i]);
	*nr = done;
	return res;
}

/*
 * Does the VMM map @hva with a PMD or PUD leaf?  A lockless walk of its
 * page table, with interrupts off against a concurrent teardown of the
 * tables (which IPIs), as fast GUP and get_user_mapping_size() walk it.
 * The answer may be stale as soon as it is given: a split or unmap that
 * follows runs the mmu_notifier, which the mmu_invalidate_retry() check
 * under mmu_lock sees before the block is mapped.
 */
static bool prefetch_host_block(struct mm_struct *mm, unsigned long hva)
{
	unsigned long flags;
	bool block = false;
	pgd_t *pgdp, pgd;
	p4d_t *p4dp, p4d;
	pud_t *pudp, pud;
	pmd_t *pmdp, pmd;

	local_irq_save(flags);
	pgdp = pgd_offset(mm, hva);
	pgd = READ_ONCE(*pgdp);
	if (pgd_none(pgd) || pgd_bad(pgd))
		goto out;
	p4dp = p4d_offset_lockless(pgdp, pgd, hva);
	p4d = READ_ONCE(*p4dp);
	if (p4d_none(p4d) || p4d_bad(p4d))
		goto out;
	pudp = pud_offset_lockless(p4dp, p4d, hva);
	pud = READ_ONCE(*pudp);
	if (pud_none(pud) || !pud_present(pud))
		goto out;
	if (pud_leaf(pud)) {
		block = true;
		goto out;
	}
	pmdp = pmd_offset_lockless(pudp, pud, hva);
	pmd = READ_ONCE(*pmdp);
	block = pmd_leaf(pmd) && pte_valid(pmd_pte(pmd));
out:
	local_irq_restore(flags);
	return block;
}

/* How prefetch_block() ended. */
enum prefetch_block_end {
	PREFETCH_BLOCK_MAPPED,	/* the block is mapped now */
	PREFETCH_BLOCK_PAGES,	/* not as a block: go by 4 KiB pages */
	PREFETCH_BLOCK_STOP,	/* the whole window ends: retry, error */
};

/*
 * Map the 2 MiB block at @gfn (aligned, whole inside the window) with one
 * level-2 entry if the memslot and the host allow it and its stage-2
 * range is empty.
 */
static enum prefetch_block_end prefetch_block(struct prefetch_walk *w,
					      gfn_t gfn)
{
	struct kvm_memory_slot *slot = w->slot;
	struct kvm_vcpu *vcpu = w->vcpu;
	struct kvm *kvm = vcpu->kvm;
	enum prefetch_block_end res = PREFETCH_BLOCK_PAGES;
	enum kvm_pgtable_prot prot;
	struct kvm_pgtable *pgt;
	bool writable;
	kvm_pfn_t pfn;
	prefetch_s2_level_t level;
	kvm_pte_t pte;
	hva_t hva;

	/* Inside the memslot, and the same offset in a block on both sides. */
	if (gfn < slot->base_gfn ||
	    gfn + PREFETCH_TABLE_PAGES > slot->base_gfn + slot->npages ||
	    (gfn_to_gpa(slot->base_gfn) & (PMD_SIZE - 1)) !=
	    (slot->userspace_addr & (PMD_SIZE - 1)))
		return PREFETCH_BLOCK_PAGES;
	if (kvm_mmu_topup_memory_cache(&vcpu->arch.mmu_page_cache,
				       prefetch_s2_cache_min_pages(kvm)))
		return PREFETCH_BLOCK_STOP;

	pfn = kvm_prefetch_gfn_to_pfn(slot, gfn, w->gup, &writable, &hva);
	if (is_error_noslot_pfn(pfn))
		return PREFETCH_BLOCK_PAGES;
	/* A huge host page is naturally aligned: its first page is here. */
	if (!pfn_is_map_memory(pfn) || (pfn & (PREFETCH_TABLE_PAGES - 1)) ||
	    !prefetch_host_block(kvm->mm, hva))
		goto out_put;

	write_lock(&kvm->mmu_lock);
	pgt = vcpu->arch.hw_mmu->pgt;
	if (mmu_invalidate_retry(kvm, w->mmu_seq)) {
		res = PREFETCH_BLOCK_STOP;
		goto out_unlock;
	}
	if (kvm_pgtable_get_leaf(pgt, gfn_to_gpa(gfn), &pte, &level)) {
		res = PREFETCH_BLOCK_STOP;
		goto out_unlock;
	}
	/* Empty down to the block's own entry: no table, nothing mapped. */
	if (pte || level > PREFETCH_BLOCK_LEVEL)
		goto out_unlock;
	prot = KVM_PGTABLE_PROT_R;
	if (writable)
		prot |= KVM_PGTABLE_PROT_W;
	if (prefetch_s2_have_dic())
		prot |= KVM_PGTABLE_PROT_X;
	if (prefetch_s2_map(pgt, gfn_to_gpa(gfn), PMD_SIZE, __pfn_to_phys(pfn),
			    prot, &vcpu->arch.mmu_page_cache)) {
		res = PREFETCH_BLOCK_STOP;
		goto out_unlock;
	}
	if (writable)
		prefetch_s2_set_pfn_dirty(pfn);
	w->mapped += PREFETCH_TABLE_PAGES;
	res = PREFETCH_BLOCK_MAPPED;
out_unlock:
	write_unlock(&kvm->mmu_lock);
out_put:
	kvm_prefetch_put_pfn(pfn);
	return res;
}

/*
 * The 2 MiB block [@gfn, @gfn + 512), aligned and whole inside the window
 * [@start, @end): try it as one block.  True if the scan goes on past it
 * (*@res PREFETCH_GO) or ends (*@res PREFETCH_STOP); false to go by pages.
 */
static bool prefetch_try_block(struct prefetch_walk *w, gfn_t gfn,
			       gfn_t start, gfn_t end, enum prefetch_end *res)
{
	if ((gfn & (PREFETCH_TABLE_PAGES - 1)) || gfn < start ||
	    gfn + PREFETCH_TABLE_PAGES > end ||
	    w->scanned + PREFETCH_TABLE_PAGES > PREFETCH_EXIT_MAX)
		return false;
	w->scanned++;
	switch (prefetch_block(w, gfn)) {
	case PREFETCH_BLOCK_MAPPED:
		w->scanned += PREFETCH_TABLE_PAGES - 1;
		*res = PREFETCH_GO;
		return true;
	case PREFETCH_BLOCK_STOP:
		*res = PREFETCH_STOP;
		return true;
	default:
		return false;
	}
}

/*
 * Map what is missing of the window [start, end), and nothing outside
 * it, outward from the block [fault_start, fault_start + step) that the
 * fault installed: forward to @end, then backward to @start.  Return
 * true if the forward scan went through to @end (every page of it is
 * mapped now), false if it ended before.
 */
static bool prefetch_range(struct prefetch_walk *w, gfn_t start, gfn_t end,
			   gfn_t fault_start, u64 step)
{
	enum prefetch_end res = PREFETCH_GO;
	bool done;
	gfn_t gfn;
	int nr;

	for (gfn = max(fault_start + step, start); gfn < end; gfn += nr) {
		gfn_t next;

		if (prefetch_exit_due(w->vcpu, w->scanned))
			return false;
		next = prefetch_skip_mapped(w, gfn, end);
		if (next != gfn) {
			nr = next - gfn;
			continue;
		}
		if (prefetch_try_block(w, gfn, start, end, &res)) {
			if (res != PREFETCH_GO)
				return false;
			nr = PREFETCH_TABLE_PAGES;
			continue;
		}
		nr = min_t(u64, end - gfn, PREFETCH_BATCH);
		nr = min_t(u64, nr, PREFETCH_TABLE_PAGES -
				    (gfn & (PREFETCH_TABLE_PAGES - 1)));
		nr = min_t(u64, nr, PREFETCH_EXIT_MAX - w->scanned);
		res = prefetch_batch(w, gfn, 1, &nr);
		if (res != PREFETCH_GO)
			break;
	}
	if (res == PREFETCH_STOP)
		return false;
	/* The loop ended at @end, not at a page the host lacks. */
	done = res == PREFETCH_GO;

	for (gfn = min(fault_start, end); gfn > start; gfn -= nr) {
		if (prefetch_exit_due(w->vcpu, w->scanned))
			return done;
		if (gfn >= PREFETCH_TABLE_PAGES &&
		    prefetch_try_block(w, gfn - PREFETCH_TABLE_PAGES, start, end,
				       &res)) {
			if (res != PREFETCH_GO)
				return done;
			nr = PREFETCH_TABLE_PAGES;
			continue;
		}
		nr = min_t(u64, gfn - start, PREFETCH_BATCH);
		nr = min_t(u64, nr, ((gfn - 1) & (PREFETCH_TABLE_PAGES - 1)) + 1);
		nr = min_t(u64, nr, PREFETCH_EXIT_MAX - w->scanned);
		res = prefetch_batch(w, gfn - 1, -1, &nr);
		if (res != PREFETCH_GO)
			break;
	}
	return done;
}

/*
 * May the engine map a window in @slot?  Not in a memslot the core
 * refuses (dirty logging, KVM's own, being deleted or moved), nor in one
 * of guest_memfd memory.
 */
static bool prefetch_slot_ok(struct kvm_memory_slot *slot)
{
	return kvm_prefetch_slot_allowed(slot) && !prefetch_s2_slot_gmem(slot);
}

/*
 * The next windows of a policy with a next() hook (the replay policy), as
 * long as the engine maps each through to its end and the exit's budget
 * lasts: each clipped to the memslot that holds its start, which the walk
 * then maps from.  One in no memslot, or in one prefetch may not map, is
 * stepped over as if mapped.  @used: the pages the exit's windows spanned
 * so far.
 */
static void prefetch_next_windows(struct prefetch_walk *walk,
				  const struct kvm_prefetch_fault *f,
				  struct kvm_prefetch_window *w, u32 used)
{
	struct kvm_vcpu *vcpu = walk->vcpu;
	gfn_t max_gfn = (prefetch_s2_phys_size(vcpu->kvm) >> PAGE_SHIFT) - 1;
	struct kvm_memory_slot *slot;
	u64 start, end;

	/* Asked after each window mapped through, the last one too. */
	while (kvm_prefetch_next(vcpu->kvm, f, w, &used) &&
	       !prefetch_exit_due(vcpu, walk->scanned)) {
		slot = kvm_vcpu_gfn_to_memslot(vcpu, w->start);
		if (!slot || !prefetch_slot_ok(slot) ||
		    !kvm_prefetch_clip_window(w, slot->base_gfn, slot->npages,
					      max_gfn, &start, &end))
			continue;
		walk->slot = slot;
		if (!prefetch_range(walk, start, end, start, 0))
			break;
	}
}

/**
 * kvm_arm_prefetch() - run the VM's prefetch policy after a stage-2 fault
 * @vcpu: the vCPU whose translation fault user_mem_abort() just mapped (a
 *	guest's, or KVM_PRE_FAULT_MEMORY's with vcpu->arch.pre_fault set:
 *	origin KVM_PREFETCH_MANUAL)
 * @slot: the fault's memslot
 * @mapped_size: bytes of the mapping the fault installed
 * @mmu_seq: user_mem_abort()'s mmu_invalidate_seq snapshot
 *
 * Called by user_mem_abort() without mmu_lock, with kvm->srcu held, after
 * it mapped the faulting page (not for permission faults, device memory
 * or dirty-logged memslots) and only while kvm_prefetch_may_open(): a VM
 * whose policy never opens a window, and that does not record, does not
 * get here.
 *
 * A VM that records (KVM_PREFETCH_RECORD_START) records the frames a
 * guest fault mapped, first; KVM_PRE_FAULT_MEMORY's are not first
 * touches.  Then the policy's window, and, for a policy with a next()
 * hook (which may ask for no first window), its next windows as long as
 * each is mapped through to its end.
 */
void kvm_arm_prefetch(struct kvm_vcpu *vcpu, struct kvm_memory_slot *slot,
		      unsigned long mapped_size, unsigned long mmu_seq)
{
	struct kvm *kvm = vcpu->kvm;
	u64 step = mapped_size >> PAGE_SHIFT, start, end;
	gfn_t gfn = kvm_vcpu_get_fault_ipa(vcpu) >> PAGE_SHIFT;
	struct prefetch_walk walk;
	struct kvm_prefetch_window w;
	struct kvm_prefetch_fault f;
	bool done = true;

	if (unlikely(kvm_prefetch_recording(kvm))) {
		if (!vcpu->arch.pre_fault)
			kvm_prefetch_record(kvm, ALIGN_DOWN(gfn, step), step);
		if (!kvm_prefetch_policy_may_open(kvm))
			return;
	}
	if (!prefetch_slot_ok(slot) || kvm_has_mte(kvm) ||
	    !prefetch_s2_mmu_canonical(vcpu))
		return;

	f = (struct kvm_prefetch_fault) {
		/* KVM_PRE_FAULT_MEMORY's faults: pre_fault.c */
		.origin		= vcpu->arch.pre_fault ? KVM_PREFETCH_MANUAL :
						 KVM_PREFETCH_GUEST_FAULT,
		.gfn		= gfn,
		.error_code	= kvm_vcpu_get_esr(vcpu),
		.mapped_pages	= step,
		.vcpu_idx	= vcpu->vcpu_idx,
	};
	if (!kvm_prefetch_decide(kvm, &f, &w))
		return;
	/* nr_pages 0: no window, but a policy with a next() hook. */
	if (!kvm_prefetch_clip_window(&w, slot->base_gfn, slot->npages,
				      (prefetch_s2_phys_size(kvm) >> PAGE_SHIFT) - 1,
				      &start, &end)) {
		if (w.nr_pages)
			return;
		start = gfn;
		end = start;
	}

	walk = (struct prefetch_walk) {
		.vcpu		= vcpu,
		.slot		= slot,
		.mmu_seq	= mmu_seq,
		.gup		= kvm_prefetch_vm_gup(kvm),
	};
	vcpu->stat.prefetch_windows++;
	if (start < end)
		done = prefetch_range(&walk, start, end, ALIGN_DOWN(gfn, step),
				      step);
	if (done)
		prefetch_next_windows(&walk, &f, &w, w.nr_pages);
	vcpu->stat.prefetch_mapped += walk.mapped;
	vcpu->stat.generic.prefetch_scanned += walk.scanned;
}
