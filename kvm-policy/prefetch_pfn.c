// SPDX-License-Identifier: GPL-2.0-only
/*
 * KVM prefetch policies: which memslots prefetch may map pages of, and how
 * a prefetch fault gets its host page.  The counterpart of hva_to_pfn()
 * for faults that must never wait for I/O, fault a page in or raise a
 * userfaultfd event: lockless fast GUP, then (if the VM allows it) GUP
 * with FOLL_NOFAULT when mmap_lock is free, and nothing else.
 */
#define pr_fmt(fmt) "kvm-prefetch: " fmt

#include "prefetch_internal.h"

/**
 * kvm_prefetch_slot_allowed() - may prefetch map pages of this memslot?
 * @slot: the memslot of the gfn, or NULL
 *
 * Not for gfns without a memslot, KVM's private memslots, memslots being
 * deleted or moved, or memslots with dirty logging: a prefetch must not
 * mark pages dirty that the guest never wrote.  A memslot whose memory
 * only guest_memfd holds is allowed, but its pages come from the file
 * (the architecture's engine), never from GUP of its address.
 *
 * Return: true if prefetch may map pages of @slot.
 */
bool kvm_prefetch_slot_allowed(const struct kvm_memory_slot *slot)
{
	return slot && slot->id < KVM_USER_MEM_SLOTS &&
	       !(slot->flags & (KVM_MEMSLOT_INVALID | KVM_MEM_LOG_DIRTY_PAGES));
}

/* Count a page given up because mmap_lock was taken (a vCPU stat). */
static void prefetch_count_mmap_busy(void)
{
	struct kvm_vcpu *vcpu = kvm_get_running_vcpu();

	if (vcpu)
		vcpu->stat.generic.prefetch_mmap_busy++;
}

/*
 * Slow GUP that never faults, of at most @nr pages from @addr and only in
 * its VMA, without FOLL_WRITE: pages that are there, writable or not.
 * 6.1's hugetlb GUP path ignores FOLL_NOFAULT and VM_IO/VM_PFNMAP
 * mappings are resolved by faulting them in (hva_to_pfn_remapped()), so
 * neither is tried here.  Return the number of pages got.
 *
 * The work is speculative, so it never waits for mmap_lock: while a
 * writer holds it (the VMM's mmap(), munmap(), mprotect(),
 * UFFDIO_REGISTER), waiting would stall the vCPU for pages the guest may
 * never touch.  Such pages are given up, as absent ones are, and counted
 * in the prefetch_mmap_busy stat; a guest access faults them in normally.
 */
static int prefetch_gup_nofault(unsigned long addr, int nr,
				struct page **pages)
{
	struct mm_struct *mm = current->mm;
	struct vm_area_struct *vma;
	long got = 0;

	if (!mmap_read_trylock(mm)) {
		prefetch_count_mmap_busy();
		return 0;
	}
	vma = vma_lookup(mm, addr);
	if (vma && !is_vm_hugetlb_page(vma) &&
	    !(vma->vm_flags & (VM_IO | VM_PFNMAP))) {
		nr = min_t(unsigned long, nr,
			   (vma->vm_end - addr) >> PAGE_SHIFT);
		got = kvm_prefetch_get_user_pages(addr, nr,
						  FOLL_NOFAULT | FOLL_HWPOISON,
						  pages);
	}
	mmap_read_unlock(mm);
	return got > 0 ? got : 0;
}

/* Drop the references of pages a batch got and will not map. */
static void kvm_prefetch_release_pages(struct page **pages, int nr)
{
	int i;

	for (i = 0; i < nr; i++)
		put_page(pages[i]);
}

/**
 * kvm_prefetch_gfn_to_pfn() - host page of a gfn, without waiting or faulting
 * @slot: the gfn's memslot
 * @gfn: the guest frame
 * @gup: KVM_PREFETCH_GUP_FAST_ONLY (lockless fast GUP only) or
 *	KVM_PREFETCH_GUP_NOFAULT (also GUP with FOLL_NOFAULT, if mmap_lock
 *	can be taken without waiting)
 * @writable: set to whether the page may be mapped writable
 * @hva: set to the host virtual address
 *
 * Never waits for I/O, never faults a host page in and so never raises a
 * userfaultfd event.
 *
 * Return: the pfn with a page reference held (which the fault path drops
 * with kvm_prefetch_put_pfn()), KVM_PFN_NOSLOT, or KVM_PFN_ERR_FAULT if
 * the page is not present.
 */
kvm_pfn_t kvm_prefetch_gfn_to_pfn(struct kvm_memory_slot *slot, gfn_t gfn,
				  u32 gup, bool *writable, hva_t *hva)
{
	unsigned long addr;
	struct page *page;
	bool slot_writable;

	addr = gfn_to_hva_memslot_prot(slot, gfn, &slot_writable);
	*hva = addr;
	*writable = false;
	if (kvm_is_error_hva(addr))
		return KVM_PFN_NOSLOT;
	/* Its userspace address is not where the guest's page is. */
	if (slot->flags & KVM_PREFETCH_GMEM_ONLY)
		return KVM_PFN_ERR_FAULT;

	if (get_user_page_fast_only(addr, slot_writable ? FOLL_WRITE : 0,
				    &page)) {
		*writable = slot_writable;
		return page_to_pfn(page);
	}
	if (gup != KVM_PREFETCH_GUP_NOFAULT)
		return KVM_PFN_ERR_FAULT;

	/*
	 * Present but not writable without a fault (e.g. shared after
	 * fork), or only reachable through mmap_lock: map it read-only;
	 * a later guest write takes a normal fault.
	 */
	if (!prefetch_gup_nofault(addr, 1, &page))
		return KVM_PFN_ERR_FAULT;
	return page_to_pfn(page);
}

/**
 * kvm_prefetch_put_pfn() - drop what kvm_prefetch_gfn_to_pfn() got
 * @pfn: its result
 *
 * The page is not marked accessed, as the batched engine drops its pages:
 * a prefetch is no access by the guest, and the SPTE it installs is not
 * accessed either.  The host learns of the guest's accesses as for any
 * other page, through the mmu_notifier's aging.
 */
void kvm_prefetch_put_pfn(kvm_pfn_t pfn)
{
	if (!is_error_noslot_pfn(pfn))
		kvm_prefetch_put_page(pfn_to_page(pfn), false);
}

/**
 * kvm_prefetch_put_page() - drop a page reference a prefetch got
 * @page: the page, or NULL
 * @dirty: mark the page dirty first: it was mapped writable, on a kernel
 *	that marks a folio dirty when KVM maps it, not when the SPTE goes
 *	(the caller holds mmu_lock, so that this does not race with
 *	writeback)
 *
 * The page is not marked accessed: a prefetch is no access by the guest.
 */
void kvm_prefetch_put_page(struct page *page, bool dirty)
{
	if (!page)
		return;
	if (dirty && !PageReserved(page))
		SetPageDirty(page);
	put_page(page);
}

/*
 * The pages of a nofault batch that fast GUP did not get: from @addr,
 * whose page fast GUP refused, the run of pages the host has but fast GUP
 * does not get, most often because only a fault would make them writable
 * (shared after fork, the zero page, a file page before its first write),
 * got with one slow GUP.  They are mapped read-only, as
 * kvm_prefetch_gfn_to_pfn() maps each of them; the run ends before a page
 * fast GUP gets (writable if @write), which the next batch maps as that
 * function would.
 */
static int prefetch_gup_nofault_run(unsigned long addr, int nr, bool write,
				    struct page **pages)
{
	struct page *page;
	int got, i;

	got = prefetch_gup_nofault(addr, nr, pages);
	if (!got)
		return 0;
	for (i = 1; i < got; i++) {
		if (get_user_page_fast_only(addr + i * PAGE_SIZE,
					    write ? FOLL_WRITE : 0, &page)) {
			put_page(page);
			break;
		}
	}
	kvm_prefetch_release_pages(pages + i, got - i);
	return i;
}

/**
 * kvm_prefetch_gfn_run_to_pages() - host pages of a run of gfns, without
 * waiting or faulting
 * @slot: the memslot of all of [@gfn, @gfn + @nr)
 * @gfn: the first guest frame
 * @nr: how many frames, at most what @pages holds
 * @gup: the VM's GUP mode, KVM_PREFETCH_GUP_FAST_ONLY or
 *	KVM_PREFETCH_GUP_NOFAULT
 * @pages: set to the pages got, each with a reference held
 * @writable: set to whether the pages may be mapped writable
 *
 * One lockless fast GUP of the run, writable if the memslot is: it never
 * waits, never faults a page in and takes no lock.  It stops at the first
 * page it cannot get.  If that is the first page and @gup is nofault, one
 * FOLL_NOFAULT GUP under mmap_lock gets instead the run of pages the host
 * has but fast GUP refuses, to be mapped read-only (none while a writer
 * holds mmap_lock: it is only tried).  Either way the run
 * stops before a hugetlbfs page, which the fault path maps by its own
 * rules.  Each page is mapped as kvm_prefetch_gfn_to_pfn() would map it,
 * and what is not got, the caller leaves to that function.
 *
 * Return: the number of pages got, from 0 to @nr; the caller releases each
 * (put_page()).
 */
int kvm_prefetch_gfn_run_to_pages(struct kvm_memory_slot *slot, gfn_t gfn,
				  int nr, u32 gup, struct page **pages,
				  bool *writable)
{
	unsigned long addr;
	bool slot_writable;
	int got, i;

	*writable = false;
	addr = gfn_to_hva_memslot_prot(slot, gfn, &slot_writable);
	if (kvm_is_error_hva(addr) || nr <= 0 ||
	    (slot->flags & KVM_PREFETCH_GMEM_ONLY))
		return 0;

	got = get_user_pages_fast_only(addr, nr,
				       slot_writable ? FOLL_WRITE : 0, pages);
	if (got > 0)
		*writable = slot_writable;
	else if (gup == KVM_PREFETCH_GUP_NOFAULT)
		got = prefetch_gup_nofault_run(addr, nr, slot_writable, pages);
	if (got <= 0)
		return 0;
	for (i = 0; i < got; i++)
		if (PageCompound(pages[i]) && PageHuge(pages[i]))
			break;
	kvm_prefetch_release_pages(pages + i, got - i);
	return i;
}
