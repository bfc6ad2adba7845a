// SPDX-License-Identifier: GPL-2.0-only
/*
 * KVM prefetch policies: which memslots prefetch may map pages of, and how
 * a prefetch fault gets its host page.  The counterpart of hva_to_pfn()
 * for faults that must never wait for I/O, fault a page in or raise a
 * userfaultfd event: lockless fast GUP, then (if the VM allows it) GUP
 * with FOLL_NOFAULT, and nothing else.
 */
#define pr_fmt(fmt) "kvm-prefetch: " fmt

#include "prefetch_internal.h"

/**
 * kvm_prefetch_slot_allowed() - may prefetch map pages of this memslot?
 * @slot: the memslot of the gfn, or NULL
 *
 * Not for gfns without a memslot, KVM's private memslots, memslots being
 * deleted or moved, or memslots with dirty logging: a prefetch must not
 * mark pages dirty that the guest never wrote.
 *
 * Return: true if prefetch may map pages of @slot.
 */
bool kvm_prefetch_slot_allowed(const struct kvm_memory_slot *slot)
{
	return slot && slot->id < KVM_USER_MEM_SLOTS &&
	       !(slot->flags & (KVM_MEMSLOT_INVALID | KVM_MEM_LOG_DIRTY_PAGES));
}

/*
 * Slow GUP that never faults.  6.1's hugetlb GUP path ignores FOLL_NOFAULT
 * and VM_IO/VM_PFNMAP mappings are resolved by faulting them in
 * (hva_to_pfn_remapped()), so neither is tried here.
 */
static struct page *prefetch_gup_nofault(unsigned long addr)
{
	struct mm_struct *mm = current->mm;
	struct vm_area_struct *vma;
	struct page *page = NULL;

	mmap_read_lock(mm);
	vma = vma_lookup(mm, addr);
	if (vma && !is_vm_hugetlb_page(vma) &&
	    !(vma->vm_flags & (VM_IO | VM_PFNMAP))) {
		if (kvm_prefetch_get_user_page(addr,
					       FOLL_NOFAULT | FOLL_HWPOISON,
					       &page) != 1)
			page = NULL;
	}
	mmap_read_unlock(mm);
	return page;
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
 *	KVM_PREFETCH_GUP_NOFAULT (also GUP with FOLL_NOFAULT, which may take
 *	mmap_lock)
 * @writable: set to whether the page may be mapped writable
 * @hva: set to the host virtual address
 *
 * Never waits for I/O, never faults a host page in and so never raises a
 * userfaultfd event.
 *
 * Return: the pfn with a page reference held (released by the fault path),
 * KVM_PFN_NOSLOT, or KVM_PFN_ERR_FAULT if the page is not present.
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
	page = prefetch_gup_nofault(addr);
	if (!page)
		return KVM_PFN_ERR_FAULT;
	return page_to_pfn(page);
}

/**
 * kvm_prefetch_gfn_run_to_pages() - host pages of a run of gfns, fast GUP only
 * @slot: the memslot of all of [@gfn, @gfn + @nr)
 * @gfn: the first guest frame
 * @nr: how many frames, at most what @pages holds
 * @pages: set to the pages got, each with a reference held
 * @writable: set to whether the pages may be mapped writable
 *
 * One lockless fast GUP of the run, writable if the memslot is: it never
 * waits, never faults a page in and takes no lock.  It stops at the first
 * page it cannot get, and before a hugetlbfs page, which the fault path
 * maps by its own rules.  What it does not get, the caller leaves to
 * kvm_prefetch_gfn_to_pfn().
 *
 * Return: the number of pages got, from 0 to @nr; the caller releases each
 * (kvm_release_pfn_clean()).
 */
int kvm_prefetch_gfn_run_to_pages(struct kvm_memory_slot *slot, gfn_t gfn,
				  int nr, struct page **pages, bool *writable)
{
	unsigned long addr;
	bool slot_writable;
	int got, i;

	*writable = false;
	addr = gfn_to_hva_memslot_prot(slot, gfn, &slot_writable);
	if (kvm_is_error_hva(addr) || nr <= 0)
		return 0;
	*writable = slot_writable;

	got = get_user_pages_fast_only(addr, nr,
				       slot_writable ? FOLL_WRITE : 0, pages);
	if (got <= 0)
		return 0;
	for (i = 0; i < got; i++)
		if (PageHuge(pages[i]))
			break;
	kvm_prefetch_release_pages(pages + i, got - i);
	return i;
}
