// SPDX-License-Identifier: GPL-2.0
/*
 * How a prefetch fault gets its host page (kvm_prefetch_gfn_to_pfn()):
 * never faulting, fast GUP only or GUP with FOLL_NOFAULT, never slow GUP
 * on hugetlb or VM_PFNMAP/VM_IO mappings; and which memslots prefetch may
 * map at all (kvm_prefetch_slot_allowed()).
 */
#include "prefetch_internal.h"
#include "../../kvm-policy/prefetch.c"
#include "../../kvm-policy/prefetch_vm.c"
#include "../../kvm-policy/prefetch_pfn.c"
#include "test.h"
#include "fixtures.h"

static struct kvm_memory_slot slot;

#define SLOT_HVA	0x7f0000000000UL
#define GFN		0x105
#define GFN_HVA		(SLOT_HVA + (GFN - 0x100) * PAGE_SIZE)

static void setup(void)
{
	fixture_setup(false);
	slot = (struct kvm_memory_slot){
		.base_gfn = 0x100, .npages = 0x200,
		.userspace_addr = SLOT_HVA, .id = 1,
	};
}

static void teardown(void)
{
	registry_reset();
}

/* ---- kvm_prefetch_slot_allowed() ------------------------------------ */

TEST(slot_allowed)
{
	struct kvm_memory_slot s = slot;

	ASSERT_TRUE(kvm_prefetch_slot_allowed(&s));
	s.id = 0;
	ASSERT_TRUE(kvm_prefetch_slot_allowed(&s));
	s.id = KVM_USER_MEM_SLOTS - 1;
	ASSERT_TRUE(kvm_prefetch_slot_allowed(&s));
	s.flags = KVM_MEM_READONLY;
	ASSERT_TRUE(kvm_prefetch_slot_allowed(&s));
}

TEST(slot_not_allowed)
{
	struct kvm_memory_slot s = slot;

	ASSERT_FALSE(kvm_prefetch_slot_allowed(NULL));
	/* KVM's private memslots (APIC access page, TSS, identity map). */
	s.id = KVM_USER_MEM_SLOTS;
	ASSERT_FALSE(kvm_prefetch_slot_allowed(&s));
	s.id = KVM_MEM_SLOTS_NUM - 1;
	ASSERT_FALSE(kvm_prefetch_slot_allowed(&s));
	s = slot;
	s.flags = KVM_MEMSLOT_INVALID;
	ASSERT_FALSE(kvm_prefetch_slot_allowed(&s));
	s.flags = KVM_MEM_LOG_DIRTY_PAGES;
	ASSERT_FALSE(kvm_prefetch_slot_allowed(&s));
	s.flags = KVM_MEM_LOG_DIRTY_PAGES | KVM_MEM_READONLY;
	ASSERT_FALSE(kvm_prefetch_slot_allowed(&s));
}

/* ---- kvm_prefetch_gfn_to_pfn() --------------------------------------- */

#define NOFAULT		KVM_PREFETCH_GUP_NOFAULT
#define FAST_ONLY	KVM_PREFETCH_GUP_FAST_ONLY

/*
 * The resolver in mode @gup for a host page that is @present (and
 * @pte_writable) in a VMA with @vm_flags, or in no VMA at all (@no_vma),
 * of a memslot with @slot_flags: it returns @pfn, says @writable, and
 * made @fast fast GUP calls, @slow slow ones and @vmas VMA lookups.
 */
static const struct gup_case {
	const char *name;
	u32 gup;
	bool present, pte_writable, no_vma;
	unsigned long vm_flags;
	u32 slot_flags;
	kvm_pfn_t pfn;
	bool writable;
	int fast, slow, vmas;
} gup_cases[] = {
	{ "fast_path_writable", NOFAULT, .present = true, .pte_writable = true,
	  .pfn = SHIM_PFN, .writable = true, .fast = 1 },
	{ "fast_path_readonly_slot", FAST_ONLY, .present = true,
	  .pte_writable = true, .slot_flags = KVM_MEM_READONLY,
	  .pfn = SHIM_PFN, .fast = 1 },
	{ "fast_only_absent_page", FAST_ONLY,
	  .pfn = KVM_PFN_ERR_FAULT, .fast = 1 },
	/* Present but read-only (e.g. shared after fork): fast-only gives up. */
	{ "fast_only_readonly_pte", FAST_ONLY, .present = true,
	  .pfn = KVM_PFN_ERR_FAULT, .fast = 1 },
	/* Never a write, never a fault: mapped read-only. */
	{ "nofault_readonly_pte_maps_readonly", NOFAULT, .present = true,
	  .pfn = SHIM_PFN, .fast = 1, .slow = 1, .vmas = 1 },
	{ "nofault_absent_page", NOFAULT,
	  .pfn = KVM_PFN_ERR_FAULT, .fast = 1, .slow = 1, .vmas = 1 },
	/* 6.1's hugetlb GUP ignores FOLL_NOFAULT: slow GUP must not be tried. */
	{ "nofault_hugetlb_absent_no_slow_gup", NOFAULT,
	  .vm_flags = VM_HUGETLB, .pfn = KVM_PFN_ERR_FAULT, .fast = 1, .vmas = 1 },
	{ "nofault_hugetlb_readonly_no_slow_gup", NOFAULT, .present = true,
	  .vm_flags = VM_HUGETLB, .pfn = KVM_PFN_ERR_FAULT, .fast = 1, .vmas = 1 },
	/* Present and writable: fast GUP handles hugetlb. */
	{ "nofault_hugetlb_fast_path", NOFAULT, .present = true,
	  .pte_writable = true, .vm_flags = VM_HUGETLB,
	  .pfn = SHIM_PFN, .writable = true, .fast = 1 },
	/* Only a fault would resolve these (hva_to_pfn_remapped()). */
	{ "nofault_pfnmap_no_slow_gup", NOFAULT, .present = true,
	  .pte_writable = true, .vm_flags = VM_PFNMAP,
	  .pfn = KVM_PFN_ERR_FAULT, .fast = 1, .vmas = 1 },
	{ "nofault_io_no_slow_gup", NOFAULT, .present = true,
	  .pte_writable = true, .vm_flags = VM_IO,
	  .pfn = KVM_PFN_ERR_FAULT, .fast = 1, .vmas = 1 },
	{ "nofault_no_vma", NOFAULT, .no_vma = true,
	  .pfn = KVM_PFN_ERR_FAULT, .fast = 1, .vmas = 1 },
	/* No memslot address: nothing is looked up. */
	{ "nofault_invalid_slot", NOFAULT, .present = true,
	  .pte_writable = true, .slot_flags = KVM_MEMSLOT_INVALID,
	  .pfn = KVM_PFN_NOSLOT },
	{ "fast_only_invalid_slot", FAST_ONLY, .present = true,
	  .pte_writable = true, .slot_flags = KVM_MEMSLOT_INVALID,
	  .pfn = KVM_PFN_NOSLOT },
};

TEST_TABLE(check_gup, gup_cases)
{
	bool slot_writable = !row->slot_flags;
	bool writable = !row->writable;
	hva_t hva = 0xdead;
	kvm_pfn_t pfn;

	shim.host.present = row->present;
	shim.host.pte_writable = row->pte_writable;
	shim.host.no_vma = row->no_vma;
	shim.host.vm_flags = row->vm_flags;
	slot.flags = row->slot_flags;
	pfn = kvm_prefetch_gfn_to_pfn(&slot, GFN, row->gup, &writable, &hva);

	ASSERT_EQ(pfn, row->pfn);
	ASSERT_EQ(writable, row->writable);
	ASSERT_EQ(hva, pfn == KVM_PFN_NOSLOT ? KVM_HVA_ERR_BAD : GFN_HVA);
	ASSERT_EQ(shim.gup_fast_calls, row->fast);
	ASSERT_EQ(shim.gup_calls, row->slow);
	ASSERT_EQ(shim.vma_lookups, row->vmas);
	if (row->fast) {
		ASSERT_EQ(shim.gup_fast_addr, GFN_HVA);
		ASSERT_EQ(shim.gup_fast_flags, slot_writable ? FOLL_WRITE : 0);
	}
	if (row->slow) {
		ASSERT_EQ(shim.gup_addr, GFN_HVA);
		ASSERT_EQ(shim.gup_flags, FOLL_NOFAULT | FOLL_HWPOISON);
	}
	/*
	 * A reference with a pfn, none without; the fault path drops it
	 * with kvm_prefetch_put_pfn(), which is a no-op for the others.
	 */
	ASSERT_EQ(shim.page_refs, pfn == SHIM_PFN);
	kvm_prefetch_put_pfn(pfn);
	ASSERT_EQ(shim.page_refs, 0);
}

/* ---- kvm_prefetch_gfn_run_to_pages() --------------------------------- */

static void release_run(struct page **pages, int got)
{
	while (got--)
		put_page(pages[got]);
}

/*
 * kvm_prefetch_gfn_run_to_pages() of @n pages from @gfn with @gup into
 * @pages: it must give @want pages, writable or not as @want_writable
 * says.  The pages got.
 */
static int gup_run(gfn_t gfn, int n, uint32_t gup, struct page **pages,
		   int want, bool want_writable)
{
	bool writable = !want_writable;
	int got = kvm_prefetch_gfn_run_to_pages(&slot, gfn, n, gup, pages,
						&writable);

	ASSERT_EQ(got, want);
	ASSERT_EQ(writable, want_writable);
	return got;
}

TEST(run_all_present)
{
	struct page *pages[8];
	int got;

	shim.host.present = true;
	shim.host.pte_writable = true;
	got = gup_run(GFN, 8, FAST_ONLY, pages, 8, true);
	ASSERT_EQ(shim.gup_fast_flags, FOLL_WRITE);
	ASSERT_EQ(shim.page_refs, 8);
	/* Fast GUP only: no slow GUP, no mmap_lock. */
	ASSERT_EQ(shim.gup_calls, 0);
	ASSERT_EQ(shim.vma_lookups, 0);
	release_run(pages, got);
}

TEST(run_readonly_slot_asks_no_write)
{
	struct page *pages[4];
	int got;

	shim.host.present = true;
	slot.flags = KVM_MEM_READONLY;
	got = gup_run(GFN, 4, FAST_ONLY, pages, 4, false);
	ASSERT_EQ(shim.gup_fast_flags, 0);
	release_run(pages, got);
}

TEST(run_nothing_without_the_page)
{
	struct page *pages[4];
	bool writable;

	/* Absent, read-only PTE for a writable slot, PFNMAP: all fall back. */
	ASSERT_EQ(kvm_prefetch_gfn_run_to_pages(&slot, GFN, 4, FAST_ONLY, pages, &writable), 0);
	shim.host.present = true;
	ASSERT_EQ(kvm_prefetch_gfn_run_to_pages(&slot, GFN, 4, FAST_ONLY, pages, &writable), 0);
	shim.host.pte_writable = true;
	shim.host.vm_flags = VM_PFNMAP;
	ASSERT_EQ(kvm_prefetch_gfn_run_to_pages(&slot, GFN, 4, FAST_ONLY, pages, &writable), 0);
	ASSERT_EQ(shim.page_refs, 0);
	ASSERT_EQ(shim.gup_calls, 0);
}

TEST(run_hugetlb_falls_back_with_no_reference)
{
	struct page *pages[4];
	bool writable;

	shim.host.present = true;
	shim.host.pte_writable = true;
	shim.host.vm_flags = VM_HUGETLB;
	ASSERT_EQ(kvm_prefetch_gfn_run_to_pages(&slot, GFN, 4, FAST_ONLY, pages, &writable), 0);
	ASSERT_EQ(shim.page_refs, 0);
}

TEST(run_invalid_slot)
{
	struct page *pages[4];
	bool writable;

	shim.host.present = true;
	shim.host.pte_writable = true;
	slot.flags = KVM_MEMSLOT_INVALID;
	ASSERT_EQ(kvm_prefetch_gfn_run_to_pages(&slot, GFN, 4, FAST_ONLY, pages, &writable), 0);
	ASSERT_EQ(shim.gup_fast_calls, 0);
}

/*
 * With gup nofault, a run whose first page fast GUP refuses but the host
 * has (read-only for a writable memslot) comes from one slow GUP, never
 * faulting, and is mapped read-only: one mmap_lock section for the run.
 */
TEST(run_nofault_readonly_in_one_slow_gup)
{
	struct page *pages[4];
	int got;

	shim.host.present = true;
	got = gup_run(GFN, 4, NOFAULT, pages, 4, false);
	ASSERT_EQ(shim.gup_calls, 1);
	ASSERT_EQ(shim.gup_pages, 4);
	ASSERT_EQ(shim.gup_addr, GFN_HVA);
	ASSERT_EQ(shim.gup_flags, FOLL_NOFAULT | FOLL_HWPOISON);
	ASSERT_EQ(shim.vma_lookups, 1);
	ASSERT_EQ(shim.faulted_in, 0);
	/* The run's fast GUP, then one look at each later page. */
	ASSERT_EQ(shim.gup_fast_calls, 4);
	ASSERT_EQ(shim.page_refs, 4);
	release_run(pages, got);
}

/*
 * The read-only run ends before a page fast GUP gets writable: the next
 * run maps it writable, as kvm_prefetch_gfn_to_pfn() would.
 */
TEST(run_nofault_readonly_ends_before_a_writable_page)
{
	struct page *pages[4];
	int got;

	shim.host.present = true;
	shim.host.writable_from = GFN_HVA + 2 * PAGE_SIZE;
	got = gup_run(GFN, 4, NOFAULT, pages, 2, false);
	ASSERT_EQ(shim.page_refs, 2);
	release_run(pages, got);

	got = gup_run(GFN + 2, 2, NOFAULT, pages, 2, true);
	ASSERT_EQ(shim.gup_calls, 1);
	release_run(pages, got);
	ASSERT_EQ(shim.page_refs, 0);
}

/* Where nofault GUP has nothing, the run is empty and holds nothing. */
TEST(run_nofault_nothing_without_the_page)
{
	struct page *pages[4];
	bool writable;

	/* Absent: one slow GUP that does not fault. */
	ASSERT_EQ(kvm_prefetch_gfn_run_to_pages(&slot, GFN, 4, NOFAULT, pages,
						&writable), 0);
	ASSERT_EQ(shim.gup_calls, 1);
	/* Hugetlb, PFNMAP, no VMA: no slow GUP at all. */
	shim.host.present = true;
	shim.host.vm_flags = VM_HUGETLB;
	ASSERT_EQ(kvm_prefetch_gfn_run_to_pages(&slot, GFN, 4, NOFAULT, pages,
						&writable), 0);
	shim.host.vm_flags = VM_PFNMAP;
	ASSERT_EQ(kvm_prefetch_gfn_run_to_pages(&slot, GFN, 4, NOFAULT, pages,
						&writable), 0);
	shim.host.vm_flags = 0;
	shim.host.no_vma = true;
	ASSERT_EQ(kvm_prefetch_gfn_run_to_pages(&slot, GFN, 4, NOFAULT, pages,
						&writable), 0);
	ASSERT_EQ(shim.gup_calls, 1);
	ASSERT_EQ(shim.faulted_in, 0);
	ASSERT_EQ(shim.page_refs, 0);
}

/*
 * While a writer holds mmap_lock, the speculative slow GUP is not tried:
 * nothing is got, nothing waits (a trylock only), no lock is left held,
 * and the running vCPU counts the page given up in prefetch_mmap_busy.
 */
TEST(nofault_gives_up_while_mmap_lock_is_taken)
{
	struct kvm_vcpu vcpu = {};
	struct page *pages[4];
	bool writable = true;
	kvm_pfn_t pfn;
	hva_t hva;

	shim.running_vcpu = &vcpu;
	shim.host.present = true;
	shim.host.pte_writable = false;
	shim.host.mmap_contended = true;
	ASSERT_EQ(kvm_prefetch_gfn_run_to_pages(&slot, GFN, 4, NOFAULT, pages,
						&writable), 0);
	ASSERT_FALSE(writable);
	pfn = kvm_prefetch_gfn_to_pfn(&slot, GFN, NOFAULT, &writable, &hva);
	ASSERT_EQ(pfn, KVM_PFN_ERR_FAULT);
	ASSERT_EQ(shim.mmap_trylock_failed, 2);
	ASSERT_EQ(vcpu.stat.generic.prefetch_mmap_busy, 2);
	ASSERT_EQ(shim.gup_calls, 0);
	ASSERT_EQ(shim.mmap_depth, 0);
	ASSERT_EQ(shim.page_refs, 0);

	/* Free again: the same run comes from one slow GUP, nothing counted. */
	shim.host.mmap_contended = false;
	ASSERT_EQ(kvm_prefetch_gfn_run_to_pages(&slot, GFN, 4, NOFAULT, pages,
						&writable), 4);
	ASSERT_EQ(shim.gup_calls, 1);
	ASSERT_EQ(vcpu.stat.generic.prefetch_mmap_busy, 2);
	release_run(pages, 4);
	ASSERT_EQ(shim.page_refs, 0);
	shim.running_vcpu = NULL;
}

int main(void)
{
	return test_run_all(setup, teardown);
}
