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

/* The resolver's result, and the page reference it took, if any. */
struct result {
	kvm_pfn_t pfn;
	bool writable;
	hva_t hva;
};

static struct result resolve(u32 gup)
{
	struct result r = { .writable = true, .hva = 0xdead };

	r.pfn = kvm_prefetch_gfn_to_pfn(&slot, GFN, gup, &r.writable, &r.hva);
	return r;
}

static void release(struct result r)
{
	/* What the fault path does with the page reference. */
	if (r.pfn == SHIM_PFN)
		put_page(&shim_page);
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

/* ---- the fast path --------------------------------------------------- */

TEST(fast_path_writable)
{
	struct result r;

	shim.host.present = true;
	shim.host.pte_writable = true;
	r = resolve(KVM_PREFETCH_GUP_NOFAULT);
	ASSERT_EQ(r.pfn, SHIM_PFN);
	ASSERT_TRUE(r.writable);
	ASSERT_EQ(r.hva, GFN_HVA);
	ASSERT_EQ(shim.gup_fast_calls, 1);
	ASSERT_EQ(shim.gup_fast_addr, GFN_HVA);
	ASSERT_EQ(shim.gup_fast_flags, FOLL_WRITE);
	ASSERT_EQ(shim.gup_calls, 0);
	ASSERT_EQ(shim.vma_lookups, 0);
	ASSERT_EQ(shim.page_refs, 1);
	release(r);
}

TEST(fast_path_readonly_slot)
{
	struct result r;

	shim.host.present = true;
	shim.host.pte_writable = true;
	slot.flags = KVM_MEM_READONLY;
	r = resolve(KVM_PREFETCH_GUP_FAST_ONLY);
	ASSERT_EQ(r.pfn, SHIM_PFN);
	ASSERT_FALSE(r.writable);
	ASSERT_EQ(shim.gup_fast_flags, 0);
	release(r);
}

/* ---- fast-only mode --------------------------------------------------- */

TEST(fast_only_absent_page)
{
	struct result r;

	shim.host.present = false;
	r = resolve(KVM_PREFETCH_GUP_FAST_ONLY);
	ASSERT_EQ(r.pfn, KVM_PFN_ERR_FAULT);
	ASSERT_FALSE(r.writable);
	ASSERT_EQ(shim.gup_fast_calls, 1);
	ASSERT_EQ(shim.gup_calls, 0);
	ASSERT_EQ(shim.vma_lookups, 0);
	ASSERT_EQ(shim.page_refs, 0);
}

/* Present but read-only (e.g. shared after fork): fast-only gives up. */
TEST(fast_only_readonly_pte)
{
	struct result r;

	shim.host.present = true;
	shim.host.pte_writable = false;
	r = resolve(KVM_PREFETCH_GUP_FAST_ONLY);
	ASSERT_EQ(r.pfn, KVM_PFN_ERR_FAULT);
	ASSERT_EQ(shim.gup_calls, 0);
	ASSERT_EQ(shim.mmap_depth, 0);
}

/* ---- nofault mode ------------------------------------------------------ */

TEST(nofault_readonly_pte_maps_readonly)
{
	struct result r;

	shim.host.present = true;
	shim.host.pte_writable = false;
	r = resolve(KVM_PREFETCH_GUP_NOFAULT);
	ASSERT_EQ(r.pfn, SHIM_PFN);
	ASSERT_FALSE(r.writable);
	ASSERT_EQ(shim.gup_fast_calls, 1);
	ASSERT_EQ(shim.gup_calls, 1);
	ASSERT_EQ(shim.gup_addr, GFN_HVA);
	/* Never a write, never a fault. */
	ASSERT_EQ(shim.gup_flags, FOLL_NOFAULT | FOLL_HWPOISON);
	ASSERT_EQ(shim.page_refs, 1);
	release(r);
}

TEST(nofault_absent_page)
{
	struct result r;

	shim.host.present = false;
	r = resolve(KVM_PREFETCH_GUP_NOFAULT);
	ASSERT_EQ(r.pfn, KVM_PFN_ERR_FAULT);
	ASSERT_FALSE(r.writable);
	ASSERT_EQ(shim.gup_calls, 1);
	ASSERT_TRUE(shim.gup_flags & FOLL_NOFAULT);
	ASSERT_FALSE(shim.gup_flags & FOLL_WRITE);
	ASSERT_EQ(shim.faulted_in, 0);
	ASSERT_EQ(shim.page_refs, 0);
}

/* 6.1's hugetlb GUP ignores FOLL_NOFAULT: slow GUP must not be tried. */
TEST(nofault_hugetlb_no_slow_gup)
{
	struct result r;

	shim.host.vm_flags = VM_HUGETLB;
	shim.host.present = false;
	r = resolve(KVM_PREFETCH_GUP_NOFAULT);
	ASSERT_EQ(r.pfn, KVM_PFN_ERR_FAULT);
	ASSERT_EQ(shim.vma_lookups, 1);
	ASSERT_EQ(shim.gup_calls, 0);

	/* Present and writable: fast GUP handles hugetlb. */
	shim.host.present = true;
	shim.host.pte_writable = true;
	r = resolve(KVM_PREFETCH_GUP_NOFAULT);
	ASSERT_EQ(r.pfn, SHIM_PFN);
	ASSERT_TRUE(r.writable);
	ASSERT_EQ(shim.gup_calls, 0);
	release(r);

	/* Present read-only: still no slow GUP. */
	shim.host.pte_writable = false;
	r = resolve(KVM_PREFETCH_GUP_NOFAULT);
	ASSERT_EQ(r.pfn, KVM_PFN_ERR_FAULT);
	ASSERT_EQ(shim.gup_calls, 0);
}

TEST(nofault_pfnmap_and_io_no_slow_gup)
{
	static const unsigned long flags[] = {
		VM_PFNMAP, VM_IO, VM_PFNMAP | VM_IO,
	};
	size_t i;

	shim.host.present = true;
	shim.host.pte_writable = true;
	for (i = 0; i < ARRAY_SIZE(flags); i++) {
		struct result r;

		shim.host.vm_flags = flags[i];
		r = resolve(KVM_PREFETCH_GUP_NOFAULT);
		ASSERT_EQ(r.pfn, KVM_PFN_ERR_FAULT);
		ASSERT_FALSE(r.writable);
		ASSERT_EQ(shim.gup_calls, 0);
	}
	ASSERT_EQ(shim.vma_lookups, 3);
}

TEST(nofault_no_vma)
{
	struct result r;

	shim.host.no_vma = true;
	r = resolve(KVM_PREFETCH_GUP_NOFAULT);
	ASSERT_EQ(r.pfn, KVM_PFN_ERR_FAULT);
	ASSERT_EQ(shim.gup_calls, 0);
	ASSERT_EQ(shim.mmap_depth, 0);
}

/* ---- no memslot address ------------------------------------------------ */

TEST(error_hva_noslot)
{
	static const u32 modes[] = {
		KVM_PREFETCH_GUP_NOFAULT, KVM_PREFETCH_GUP_FAST_ONLY,
	};
	size_t i;

	shim.host.present = true;
	shim.host.pte_writable = true;
	slot.flags = KVM_MEMSLOT_INVALID;
	for (i = 0; i < ARRAY_SIZE(modes); i++) {
		struct result r = resolve(modes[i]);

		ASSERT_EQ(r.pfn, KVM_PFN_NOSLOT);
		ASSERT_FALSE(r.writable);
		ASSERT_EQ(r.hva, KVM_HVA_ERR_BAD);
	}
	ASSERT_EQ(shim.gup_fast_calls, 0);
	ASSERT_EQ(shim.gup_calls, 0);
}

int main(void)
{
	return test_run_all(setup, teardown);
}
