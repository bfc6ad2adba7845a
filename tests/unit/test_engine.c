// SPDX-License-Identifier: GPL-2.0
/*
 * The x86 engine's window walk (arch/x86/kvm/mmu/prefetch.c) over the
 * simulated TDP MMU of shim/x86/kvm_x86.h: after a guest fault, forward
 * from the faulting block to the window's end, then backward until the
 * first mapped page; the first page the host does not have ends the scan
 * in its direction; what is mapped is stepped over at its level; a signal,
 * an error or a pending request with RET_PF_RETRY ends the walk; and
 * kvm_mmu_prefetch()'s refusals, its clip to the memslot and its stats.
 *
 * The window comes from the real core (kvm_prefetch_decide()) running the
 * fixtures' "test" policy, which answers rec.window_out.
 */
#define SHIM_X86_ENGINE
#include "prefetch_internal.h"
#include "../../kvm-policy/prefetch.c"
#include "../../kvm-policy/prefetch_vm.c"
#include "../../kvm-policy/prefetch_pfn.c"
#include "x86/kvm_x86.h"
#undef pr_fmt
#include "../../arch/x86/kvm/mmu/prefetch.c"
#include "../../arch/x86/6.1/kvm/mmu/pre_fault.c"
#include "test.h"
#include "fixtures.h"

#define SLOT_BASE	0x200		/* the memslot: frames [0x200, 0x600) */
#define SLOT_PAGES	0x400
#define BLOCK		512		/* frames of a 2 MiB mapping */

static struct kvm_memory_slot slot;
static struct kvm_mmu mmu;
static struct kvm_vcpu vcpu;

/* The host has every frame of [from, to) at @level. */
static void host_has(gfn_t from, gfn_t to, int level)
{
	for (; from < to; from++)
		x86_sim.host[from] = level;
}

/* [from, to) mapped with leaves of @level, as earlier faults left it. */
static void x86_sim_map_range(gfn_t from, gfn_t to, int level)
{
	for (; from < to; from += KVM_PAGES_PER_HPAGE(level))
		x86_sim_map(from, level);
}

/* The host has the whole memslot, in 4 KiB pages, unless a test says. */
static void setup(void)
{
	struct kvm *kvm;

	fixture_setup(true);
	memset(&x86_sim, 0, sizeof(x86_sim));
	x86_sim.fault_type = KVM_PREFETCH_AUTO;
	prefetch_engine = PREFETCH_ENGINE_BATCH;
	tdp_enabled = true;
	x86_sim.max_gfn = (1ULL << 40) - 1;
	slot = (struct kvm_memory_slot){
		.base_gfn = SLOT_BASE, .npages = SLOT_PAGES,
		.userspace_addr = 0x7f0000000000UL, .id = 1,
	};
	x86_sim.slot = &slot;
	host_has(SLOT_BASE, SLOT_BASE + SLOT_PAGES, PG_LEVEL_4K);
	mmu = (struct kvm_mmu){
		.page_fault = kvm_tdp_page_fault, .tdp_mmu_root = true,
	};

	if (kvm_prefetch_register(&test_ops))
		test_fail(__FILE__, __LINE__, "register the test policy");
	kvm = vm_create();
	if (vm_set(kvm, "test", KVM_PREFETCH_MAX_PAGES, 0))
		test_fail(__FILE__, __LINE__, "set the test policy");
	memset(&x86_sim_backoff, 0, sizeof(x86_sim_backoff));
	vcpu = (struct kvm_vcpu){
		.kvm = kvm, .vcpu_idx = 2, .arch.mmu = &mmu,
		.arch.prefetch_batch = X86_SIM_BATCH,
	};
}

static void teardown(void)
{
	vms_destroy_all();
	registry_reset();
}

/* The policy's answer: the window [start, start + nr). */
static void window(gfn_t start, u32 nr)
{
	rec.window_ret = true;
	rec.window_out = (struct kvm_prefetch_window){ start, nr };
}

static struct kvm_page_fault fault_at(gfn_t gfn, int level)
{
	return (struct kvm_page_fault){
		.addr = gfn_to_gpa(gfn), .error_code = 0x6,
		.prefetch_type = KVM_PREFETCH_GUEST_FAULT, .is_tdp = true,
		.goal_level = level, .gfn = gfn, .slot = &slot,
	};
}

/* A guest fault at @gfn installed a mapping of @level; prefetch after it. */
static void guest_fault(gfn_t gfn, int level)
{
	struct kvm_page_fault f = fault_at(gfn, level);

	x86_sim_map(gfn, level);
	kvm_mmu_prefetch(&vcpu, &f);
}

/* Lockless walks of frames in [from, to). */
static int walks_in(gfn_t from, gfn_t to)
{
	int n = 0;

	for (; from < to; from++)
		n += x86_sim.walks[from];
	return n;
}

/* The usual case: the window [0x300, 0x310), a 4 KiB guest fault at 0x305. */
static void fault_in_window(void)
{
	window(0x300, 16);
	guest_fault(0x305, PG_LEVEL_4K);
}

/* A run of faulted frames, from @first to @last (either direction). */
struct run {
	gfn_t first, last;
};

#define RUNS(...)	((const struct run[]){ __VA_ARGS__ })
#define EXPECT_FAULTS(...)						\
	expect_faults(RUNS(__VA_ARGS__),				\
		      sizeof(RUNS(__VA_ARGS__)) / sizeof(struct run), __LINE__)
#define EXPECT_NO_FAULTS()	expect_faults(NULL, 0, __LINE__)

/* The engine faulted exactly these runs of frames, in this order. */
static void expect_faults(const struct run *runs, int nr_runs, int line)
{
	int i, n = 0;

	for (i = 0; i < nr_runs; i++) {
		int dir = runs[i].last >= runs[i].first ? 1 : -1;
		gfn_t gfn = runs[i].first;

		for (;; gfn += dir, n++) {
			if (n >= x86_sim.nr_faults || n >= SIM_LOG)
				test_fail(__FILE__, line,
					  "%d faults, want one at %#llx next",
					  x86_sim.nr_faults,
					  (unsigned long long)gfn);
			if (x86_sim.faults[n] != gfn)
				test_fail(__FILE__, line,
					  "fault %d at %#llx, want %#llx", n,
					  (unsigned long long)x86_sim.faults[n],
					  (unsigned long long)gfn);
			if (gfn == runs[i].last)
				break;
		}
		n++;
	}
	if (x86_sim.nr_faults != n)
		test_fail(__FILE__, line, "%d faults, want %d (next at %#llx)",
			  x86_sim.nr_faults, n, n < SIM_LOG ?
			  (unsigned long long)x86_sim.faults[n] : ~0ULL);
}

static void expect_stats(u64 windows, u64 mapped, int line)
{
	if (x86_sim.window_open)
		test_fail(__FILE__, line, "the window is left open (%d)",
			  x86_sim.window_open);
	if (vcpu.stat.prefetch_windows != windows ||
	    vcpu.stat.prefetch_mapped != mapped)
		test_fail(__FILE__, line,
			  "prefetch_windows %llu prefetch_mapped %llu, want %llu %llu",
			  (unsigned long long)vcpu.stat.prefetch_windows,
			  (unsigned long long)vcpu.stat.prefetch_mapped,
			  (unsigned long long)windows,
			  (unsigned long long)mapped);
}
#define EXPECT_STATS(windows, mapped)	expect_stats(windows, mapped, __LINE__)

/* ---- the walk ------------------------------------------------------- */

/*
 * The usual fault (fault_in_window()) on a host with every page but
 * @absent, with @mapped already mapped, kvm_mmu_do_page_fault() returning
 * @ret at @ret_at, a signal or a request raised by the fault at @signal_at
 * or @request_at, walks finding no root if @no_root: the engine faults the
 * runs @want in this order and maps @want_mapped pages.
 */
static const struct walk_case {
	const char *name;
	gfn_t mapped, absent, ret_at, signal_at, request_at;
	int ret;
	bool no_root;
	struct run want[3];
	u64 want_mapped;
} walk_cases[] = {
	{ "forward_to_window_end_then_backward_to_start",
	  .want = { { 0x306, 0x30f }, { 0x304, 0x300 } }, .want_mapped = 15 },
	/* The guest, or an earlier window, came from below a mapped page. */
	{ "backward_stops_at_first_mapped_page", .mapped = 0x302,
	  .want = { { 0x306, 0x30f }, { 0x304, 0x303 } }, .want_mapped = 12 },
	{ "forward_steps_over_mapped_page", .mapped = 0x308,
	  .want = { { 0x306, 0x307 }, { 0x309, 0x30f }, { 0x304, 0x300 } },
	  .want_mapped = 14 },
	{ "absent_page_ends_forward_scan", .absent = 0x309,
	  .want = { { 0x306, 0x309 }, { 0x304, 0x300 } }, .want_mapped = 8 },
	{ "absent_page_ends_backward_scan", .absent = 0x302,
	  .want = { { 0x306, 0x30f }, { 0x304, 0x302 } }, .want_mapped = 12 },
	/* Not mapped for another reason (e.g. emulated MMIO): go on. */
	{ "emulated_page_does_not_end_scan",
	  .ret_at = 0x307, .ret = RET_PF_EMULATE,
	  .want = { { 0x306, 0x30f }, { 0x304, 0x300 } }, .want_mapped = 14 },
	{ "spurious_page_does_not_end_backward_scan",
	  .ret_at = 0x303, .ret = RET_PF_SPURIOUS,
	  .want = { { 0x306, 0x30f }, { 0x304, 0x300 } }, .want_mapped = 14 },
	/* 0x308 is mapped before the stop. */
	{ "signal_stops_walk_and_skips_backward_scan", .signal_at = 0x308,
	  .want = { { 0x306, 0x308 } }, .want_mapped = 3 },
	{ "signal_during_backward_scan_stops_it", .signal_at = 0x303,
	  .want = { { 0x306, 0x30f }, { 0x304, 0x303 } }, .want_mapped = 12 },
	/* A request (e.g. a root reload after a memslot change) with RETRY. */
	{ "request_with_retry_stops_walk", .request_at = 0x308,
	  .ret_at = 0x308, .ret = RET_PF_RETRY,
	  .want = { { 0x306, 0x308 } }, .want_mapped = 2 },
	/* A pending request does not stop a walk whose faults succeed. */
	{ "request_without_retry_goes_on", .request_at = 0x308,
	  .want = { { 0x306, 0x30f }, { 0x304, 0x300 } }, .want_mapped = 15 },
	{ "error_stops_walk", .ret_at = 0x307, .ret = -EFAULT,
	  .want = { { 0x306, 0x307 } }, .want_mapped = 1 },
	/* No leaf found counts as not mapped: 0x308 is faulted, spuriously. */
	{ "walk_without_leaf_faults", .no_root = true, .mapped = 0x308,
	  .want = { { 0x306, 0x30f }, { 0x304, 0x300 } }, .want_mapped = 14 },
};

TEST_TABLE(check_walk, walk_cases)
{
	int nr = 0;

	if (row->mapped)
		x86_sim_map(row->mapped, PG_LEVEL_4K);
	if (row->absent)
		x86_sim.host[row->absent] = 0;
	if (row->ret_at)
		x86_sim.ret[row->ret_at] = row->ret;
	x86_sim.signal_at = row->signal_at;
	x86_sim.request_at = row->request_at;
	x86_sim.no_root = row->no_root;
	fault_in_window();
	while (nr < ARRAY_SIZE(row->want) && row->want[nr].first)
		nr++;
	expect_faults(row->want, nr, __LINE__);
	EXPECT_STATS(1, row->want_mapped);
	/* The faulting page itself is neither walked nor faulted again. */
	ASSERT_EQ(x86_sim.walks[0x305], 0);
}

/* A 2 MiB block the host backs is mapped with one fault, then skipped. */
TEST(steps_by_installed_level)
{
	host_has(0x400, 0x600, PG_LEVEL_2M);
	window(0x200, 1024);
	guest_fault(0x3fe, PG_LEVEL_4K);
	EXPECT_FAULTS({ 0x3ff, 0x3ff }, { 0x400, 0x400 }, { 0x3fd, 0x200 });
	EXPECT_STATS(1, 1 + BLOCK + 0x1fe);
	ASSERT_EQ(x86_sim.mapped[0x5ff], PG_LEVEL_2M);
	ASSERT_EQ(walks_in(0x400, 0x600), 1);	/* before its fault */
}

/* A 2 MiB mapping found by the walk is stepped over with one walk. */
TEST(steps_over_mapped_2m_block)
{
	x86_sim_map(0x400, PG_LEVEL_2M);
	window(0x200, 1024);
	guest_fault(0x3fe, PG_LEVEL_4K);
	EXPECT_FAULTS({ 0x3ff, 0x3ff }, { 0x3fd, 0x200 });
	ASSERT_EQ(walks_in(0x400, 0x600), 1);
	ASSERT_EQ(x86_sim.walks[0x400], 1);
	EXPECT_STATS(1, 1 + 0x1fe);
}

/* Going backward, a 2 MiB block below is mapped at once and ends nothing. */
TEST(backward_steps_by_installed_level)
{
	host_has(0x200, 0x400, PG_LEVEL_2M);
	host_has(0x400, 0x600, PG_LEVEL_4K);
	window(0x200, 1024);
	guest_fault(0x401, PG_LEVEL_4K);
	EXPECT_FAULTS({ 0x402, 0x5ff }, { 0x400, 0x400 }, { 0x3ff, 0x3ff });
	EXPECT_STATS(1, 0x1fe + 1 + BLOCK);
	ASSERT_EQ(x86_sim.mapped[0x200], PG_LEVEL_2M);
	ASSERT_EQ(walks_in(0x200, 0x400), 1);
}

/* The block the guest fault installed is never faulted again. */
TEST(faulting_block_is_not_faulted_again)
{
	window(0x200, 1024);
	guest_fault(0x405, PG_LEVEL_2M);
	/* Forward starts past the 2 MiB block: the window ends there. */
	EXPECT_FAULTS({ 0x3ff, 0x200 });
	EXPECT_STATS(1, 0x200);
	ASSERT_EQ(walks_in(0x400, 0x600), 0);
}

/*
 * Private (guest_memfd) frames are neither walked nor faulted: an AUTO
 * fault must not allocate them.  The walk goes on past them.
 */
TEST(skips_private_gfns)
{
	x86_sim.private_mem[0x307] = true;
	x86_sim.private_mem[0x308] = true;
	x86_sim.private_mem[0x302] = true;
	fault_in_window();
	EXPECT_FAULTS({ 0x306, 0x306 }, { 0x309, 0x30f }, { 0x304, 0x303 },
		      { 0x301, 0x300 });
	EXPECT_STATS(1, 1 + 7 + 2 + 2);
	ASSERT_EQ(walks_in(0x307, 0x309), 0);
	ASSERT_EQ(x86_sim.walks[0x302], 0);
}

/* ---- kvm_mmu_prefetch() --------------------------------------------- */

TEST(passes_fault_to_policy)
{
	window(0x400, 2);
	guest_fault(0x405, PG_LEVEL_2M);
	ASSERT_EQ(rec.window_calls, 1);
	ASSERT_EQ(rec.last_fault.origin, KVM_PREFETCH_GUEST_FAULT);
	ASSERT_EQ(rec.last_fault.gfn, 0x405);
	ASSERT_EQ(rec.last_fault.error_code, 0x6);
	ASSERT_EQ(rec.last_fault.mapped_pages, BLOCK);
	ASSERT_EQ(rec.last_fault.vcpu_idx, 2);
	/* A window inside the installed block: nothing to fault. */
	EXPECT_NO_FAULTS();
	EXPECT_STATS(1, 0);
}

/* Each fault kvm_mmu_prefetch() leaves alone, before asking the policy. */
TEST(refusals)
{
	static const char *const what[] = {
		"present", "rsvd", "not tdp", "guest mode", "not the TDP MMU",
		"no slot", "private slot", "invalid slot", "dirty logging",
	};
	size_t i;

	window(0x300, 16);
	for (i = 0; i < ARRAY_SIZE(what); i++) {
		struct kvm_page_fault f = {
			.present = i == 0, .rsvd = i == 1, .is_tdp = i != 2,
			.gfn = 0x305, .goal_level = PG_LEVEL_4K,
			.slot = i == 5 ? NULL : &slot,
		};

		vcpu.arch.hflags = i == 3 ? HF_GUEST_MASK : 0;
		mmu.tdp_mmu_root = i != 4;
		slot.id = i == 6 ? KVM_USER_MEM_SLOTS : 1;
		slot.flags = i == 7 ? KVM_MEMSLOT_INVALID :
			     i == 8 ? KVM_MEM_LOG_DIRTY_PAGES : 0;
		kvm_mmu_prefetch(&vcpu, &f);
		if (rec.window_calls || x86_sim.nr_faults ||
		    vcpu.stat.prefetch_windows)
			test_fail(__FILE__, __LINE__,
				  "%s: %d policy calls, %d faults, %llu windows",
				  what[i], rec.window_calls, x86_sim.nr_faults,
				  (unsigned long long)vcpu.stat.prefetch_windows);
	}
}

TEST(policy_says_no)
{
	guest_fault(0x305, PG_LEVEL_4K);
	ASSERT_EQ(rec.window_calls, 1);
	EXPECT_NO_FAULTS();
	EXPECT_STATS(0, 0);
}

/* The window is cut to the faulting memslot on both sides. */
TEST(window_clipped_to_memslot)
{
	host_has(0, SIM_PAGES, PG_LEVEL_4K);
	window(0, 2048);
	guest_fault(0x203, PG_LEVEL_4K);
	EXPECT_FAULTS({ 0x204, 0x5ff }, { 0x202, 0x200 });
	EXPECT_STATS(1, SLOT_PAGES - 1);
	ASSERT_EQ(walks_in(0, SLOT_BASE), 0);
	ASSERT_EQ(walks_in(SLOT_BASE + SLOT_PAGES, SIM_PAGES), 0);
}

TEST(window_clipped_to_max_gfn)
{
	x86_sim.max_gfn = 0x307;
	fault_in_window();
	EXPECT_FAULTS({ 0x306, 0x307 }, { 0x304, 0x300 });
}

/* Windows and pages add up over faults. */
TEST(stats_accumulate)
{
	fault_in_window();
	window(0x310, 16);
	guest_fault(0x310, PG_LEVEL_4K);
	EXPECT_STATS(2, 30);
	/* A window with nothing left to map still counts. */
	window(0x300, 16);
	guest_fault(0x300, PG_LEVEL_4K);
	EXPECT_STATS(3, 30);
}

/*
 * The back-off (PREFETCH_EMPTY_MIN, PREFETCH_SKIP_MAX_SHIFT): guest faults
 * one frame apart on a host without the neighbours, each with the window
 * of its aligned 8 frames.  Returns the guest faults that opened a window.
 */
static int cold_faults(gfn_t from, int n)
{
	u64 w0 = vcpu.stat.prefetch_windows;
	int i;

	for (i = 0; i < n; i++) {
		window(ALIGN_DOWN(from + i, 8), 8);
		guest_fault(from + i, PG_LEVEL_4K);
	}
	return vcpu.stat.prefetch_windows - w0;
}

TEST(backs_off_after_empty_windows)
{
	int faults;

	host_has(SLOT_BASE, SLOT_BASE + SLOT_PAGES, 0);
	/* 8 windows, then 1, 2, 4, ... 256 guest faults without one. */
	ASSERT_EQ(cold_faults(SLOT_BASE, 8), 8);
	ASSERT_EQ(vcpu.stat.generic.prefetch_skipped, 0);
	ASSERT_EQ(cold_faults(SLOT_BASE + 8, 1), 0);
	ASSERT_EQ(cold_faults(SLOT_BASE + 9, 1), 1);
	/* That window probed its first page: no AUTO fault there. */
	faults = x86_sim.nr_faults;
	ASSERT_EQ(cold_faults(SLOT_BASE + 10, 2), 0);
	ASSERT_EQ(cold_faults(SLOT_BASE + 12, 1), 1);
	ASSERT_EQ(x86_sim.nr_faults, faults);
	ASSERT_EQ(vcpu.stat.generic.prefetch_skipped, 3);
	ASSERT_EQ(vcpu.stat.prefetch_mapped, 0);
	/* 4, 8, ..., 128 skipped with a window after each, then 256. */
	ASSERT_EQ(cold_faults(SLOT_BASE + 13, 4 + 1 + 8 + 1 + 16 + 1 + 32 + 1 +
			      64 + 1 + 128 + 1), 6);
	ASSERT_EQ(cold_faults(SLOT_BASE + 271, 256), 0);
	ASSERT_EQ(cold_faults(SLOT_BASE + 527, 1), 1);
	ASSERT_EQ(cold_faults(SLOT_BASE + 528, 256), 0);
	ASSERT_EQ(vcpu.stat.generic.prefetch_skipped, 3 + 252 + 512);
}

/* A window that maps anything ends the back-off; other origins ignore it. */
TEST(back_off_ends_at_a_window_that_maps)
{
	struct kvm_page_fault f = {
		.addr = gfn_to_gpa(SLOT_BASE + 0x100), .error_code = 0x6,
		.prefetch_type = KVM_PREFETCH_MANUAL, .is_tdp = true,
		.goal_level = PG_LEVEL_4K, .gfn = SLOT_BASE + 0x100,
		.slot = &slot,
	};

	host_has(SLOT_BASE, SLOT_BASE + SLOT_PAGES, 0);
	ASSERT_EQ(cold_faults(SLOT_BASE, 10), 9);
	/* Backing off: a prefault still opens its window, and maps. */
	host_has(SLOT_BASE + 0x100, SLOT_BASE + 0x200, PG_LEVEL_4K);
	shim.host.present = true;
	window(SLOT_BASE + 0x100, 8);
	x86_sim_map(SLOT_BASE + 0x100, PG_LEVEL_4K);
	kvm_mmu_prefetch(&vcpu, &f);
	EXPECT_STATS(10, 7);
	ASSERT_EQ(vcpu.stat.generic.prefetch_skipped, 1);
	/* Still backing off (2 to go), then a window that maps 7. */
	ASSERT_EQ(cold_faults(SLOT_BASE + 0x108, 2), 0);
	ASSERT_EQ(cold_faults(SLOT_BASE + 0x110, 1), 1);
	EXPECT_STATS(11, 14);
	/* Over: every guest fault opens its window again. */
	ASSERT_EQ(cold_faults(SLOT_BASE + 0x118, 1), 1);
	ASSERT_EQ(cold_faults(SLOT_BASE + 0x120, 1), 1);
	EXPECT_STATS(13, 28);
	ASSERT_EQ(vcpu.stat.generic.prefetch_skipped, 3);
}

/* ---- kvm_mmu_prefetch_faultin_pfn() ---------------------------------- */

TEST(faultin_pfn_host_page)
{
	struct kvm_page_fault f = fault_at(0x305, 0);

	shim.host.present = true;
	shim.host.pte_writable = true;
	ASSERT_EQ(kvm_mmu_prefetch_faultin_pfn(&vcpu, &f), RET_PF_CONTINUE);
	ASSERT_EQ(f.pfn, SHIM_PFN);
	ASSERT_TRUE(f.map_writable);
	ASSERT_EQ(f.hva, slot.userspace_addr + 0x105 * PAGE_SIZE);
	put_page(&shim_page);
}

/* No host page: do not map; and the VM's GUP mode is the one used. */
TEST(faultin_pfn_no_host_page_retries)
{
	struct kvm_page_fault f = fault_at(0x305, 0);

	ASSERT_EQ(kvm_mmu_prefetch_faultin_pfn(&vcpu, &f), RET_PF_RETRY);
	ASSERT_EQ(shim.gup_calls, 1);
	ASSERT_EQ(vm_set(vcpu.kvm, "test", 8, KVM_PREFETCH_GUP_FAST_ONLY), 0);
	ASSERT_EQ(kvm_mmu_prefetch_faultin_pfn(&vcpu, &f), RET_PF_RETRY);
	ASSERT_EQ(shim.gup_calls, 1);
	ASSERT_EQ(shim.gup_fast_calls, 2);
}

/* ---- kvm_arch_vcpu_pre_fault_memory() --------------------------------- */

static long pre_fault(u64 gpa, u64 size)
{
	struct kvm_pre_fault_memory range = { .gpa = gpa, .size = size };

	x86_sim.fault_type = KVM_PREFETCH_MANUAL;
	return kvm_arch_vcpu_pre_fault_memory(&vcpu, &range);
}

/* Mapped up to the end of the installed (or found) mapping, or size. */
TEST(pre_fault_maps_to_end_of_mapping)
{
	host_has(0x400, 0x600, PG_LEVEL_2M);
	ASSERT_EQ(pre_fault(gfn_to_gpa(0x300) + 0x800, 1ULL << 30), 0x800);
	ASSERT_EQ(pre_fault(gfn_to_gpa(0x403), 1ULL << 30),
		  (BLOCK - 3) * PAGE_SIZE);
	ASSERT_EQ(pre_fault(gfn_to_gpa(0x410), 2 * PAGE_SIZE), 2 * PAGE_SIZE);
	EXPECT_FAULTS({ 0x300, 0x300 }, { 0x403, 0x403 }, { 0x410, 0x410 });
	/* A MANUAL fault prefetches only through the engine's caller. */
	EXPECT_STATS(0, 0);
}

/* The capability and SET need prefetch to be able to run: TDP and TDP MMU. */
TEST(prefetch_supported_needs_tdp_mmu)
{
	ASSERT_TRUE(kvm_arch_prefetch_supported(vcpu.kvm));
	ASSERT_TRUE(kvm_arch_prefetch_supported(NULL));
	x86_sim.legacy_mmu = true;
	ASSERT_FALSE(kvm_arch_prefetch_supported(vcpu.kvm));
	ASSERT_FALSE(kvm_arch_prefetch_supported(NULL));
	x86_sim.legacy_mmu = false;
	tdp_enabled = false;
	ASSERT_FALSE(kvm_arch_prefetch_supported(vcpu.kvm));
	ASSERT_FALSE(kvm_arch_prefetch_supported(NULL));
}

TEST(pre_fault_errors)
{
	tdp_enabled = false;
	ASSERT_EQ(pre_fault(gfn_to_gpa(0x300), PAGE_SIZE), -EOPNOTSUPP);
	tdp_enabled = true;
	x86_sim.reload_ret = -ENOMEM;
	ASSERT_EQ(pre_fault(gfn_to_gpa(0x300), PAGE_SIZE), -ENOMEM);
	x86_sim.reload_ret = 0;
	mmu.page_fault = NULL;		/* shadow paging */
	ASSERT_EQ(pre_fault(gfn_to_gpa(0x300), PAGE_SIZE), -EOPNOTSUPP);
	mmu.page_fault = kvm_tdp_page_fault;
	ASSERT_EQ(pre_fault(gfn_to_gpa(0x100), PAGE_SIZE), -ENOENT);
	slot.id = KVM_USER_MEM_SLOTS;
	ASSERT_EQ(pre_fault(gfn_to_gpa(0x300), PAGE_SIZE), -ENOENT);
	slot.id = 1;
	slot.flags = KVM_MEMSLOT_INVALID;
	ASSERT_EQ(pre_fault(gfn_to_gpa(0x300), PAGE_SIZE), -EAGAIN);
	slot.flags = 0;
	x86_sim.ret[0x300] = RET_PF_EMULATE;
	ASSERT_EQ(pre_fault(gfn_to_gpa(0x300), PAGE_SIZE), -ENOENT);
	x86_sim.ret[0x300] = -EFAULT;
	ASSERT_EQ(pre_fault(gfn_to_gpa(0x300), PAGE_SIZE), -EFAULT);
	EXPECT_FAULTS({ 0x300, 0x300 }, { 0x300, 0x300 });
}

/*
 * The host page of gfn 0x300 is not there: the prefault retries until
 * what *@at stops it at 0x300 (a signal, the memslot's invalidation);
 * it returns @want, with the one fault.
 */
static void pre_fault_absent_until(gfn_t *at, int want)
{
	x86_sim.host[0x300] = 0;
	*at = 0x300;
	ASSERT_EQ(pre_fault(gfn_to_gpa(0x300), PAGE_SIZE), want);
	EXPECT_FAULTS({ 0x300, 0x300 });
}

/* The host page is not there: retry until a signal comes. */
TEST(pre_fault_retries_until_signal)
{
	pre_fault_absent_until(&x86_sim.signal_at, -EINTR);
}

/*
 * A memslot update left the root obsolete and the vCPU has not entered
 * the guest since: the prefault frees it first instead of retrying on it
 * until a signal comes.  Without the request, nothing is freed.
 */
TEST(pre_fault_frees_obsolete_root)
{
	x86_sim.signal_at = 0x300;	/* ends a retry loop */
	ASSERT_EQ(pre_fault(gfn_to_gpa(0x301), PAGE_SIZE), PAGE_SIZE);
	ASSERT_EQ(x86_sim.nr_root_frees, 0);

	x86_sim.root_obsolete = true;
	vcpu.requests |= BIT_ULL(KVM_REQ_MMU_FREE_OBSOLETE_ROOTS);
	ASSERT_EQ(pre_fault(gfn_to_gpa(0x300), PAGE_SIZE), PAGE_SIZE);
	ASSERT_EQ(x86_sim.nr_root_frees, 1);
	ASSERT_EQ(vcpu.requests, 0);
	EXPECT_FAULTS({ 0x301, 0x301 }, { 0x300, 0x300 });
}

/* A memslot being deleted while the prefault retries: EAGAIN then. */
TEST(pre_fault_checks_slot_on_each_try)
{
	pre_fault_absent_until(&x86_sim.invalidate_at, -EAGAIN);
}

/* ---- the engines ----------------------------------------------------- */

/* Every forward gfn goes to the batch first; it did nothing: faults. */
TEST(batch_tried_then_faults)
{
	fault_in_window();
	EXPECT_FAULTS({ 0x306, 0x30f }, { 0x304, 0x300 });
	EXPECT_STATS(1, 15);
	/* Once per forward gfn, never backward. */
	ASSERT_EQ(x86_sim.batch_calls, 10);
}

/* The faults go on where the batch stopped; its pages count. */
TEST(faults_go_on_where_batch_stops)
{
	x86_sim.batch_until = 0x30a;
	fault_in_window();
	EXPECT_FAULTS({ 0x30a, 0x30f }, { 0x304, 0x300 });
	EXPECT_STATS(1, 15);
}

TEST(fault_engine_never_batches)
{
	ASSERT_EQ(param_set("prefetch_engine", "fault"), 0);
	x86_sim.batch_until = 0x310;
	fault_in_window();
	EXPECT_FAULTS({ 0x306, 0x30f }, { 0x304, 0x300 });
	EXPECT_STATS(1, 15);
	ASSERT_EQ(x86_sim.batch_calls, 0);
	ASSERT_EQ(param_set("prefetch_engine", "batch"), 0);
}

/* ---- the SPTE of an AUTO prefetch ---------------------------------- */

#define W_SPTE	(SPTE_MMU_PRESENT_MASK | 0x2ULL | 0xabc000ULL)

/* Not dirty where the SPTE has A/D bits; as make_spte() made it if not. */
static const struct spte_case {
	const char *name;
	u64 in, want;
} spte_cases[] = {
	{ "ad_enabled_loses_dirty", W_SPTE | (1ULL << 6), W_SPTE },
	{ "ad_enabled_clean_stays", W_SPTE, W_SPTE },
	{ "ad_disabled_keeps_dirty",
	  W_SPTE | SPTE_TDP_AD_DISABLED_MASK | (1ULL << 6),
	  W_SPTE | SPTE_TDP_AD_DISABLED_MASK | (1ULL << 6) },
	{ "wrprot_only_keeps_dirty",
	  W_SPTE | SPTE_TDP_AD_WRPROT_ONLY_MASK | (1ULL << 6),
	  W_SPTE | SPTE_TDP_AD_WRPROT_ONLY_MASK | (1ULL << 6) },
};

TEST_TABLE(prefetch_spte_dirty_bit, spte_cases)
{
	ASSERT_EQ(kvm_mmu_prefetch_clean_spte(row->in), row->want);
}

/* ---- the per-exit budget -------------------------------------------- */

#define BIG_PAGES	0x10000		/* 256 MiB of 4 KiB frames */

/* The memslot grows to BIG_PAGES frames from SLOT_BASE, all of them there. */
static void big_slot(int level)
{
	slot.npages = BIG_PAGES;
	host_has(SLOT_BASE, SLOT_BASE + BIG_PAGES, level);
}

/* One fault opens a window of BIG_PAGES: 16384 leaf SPTEs, then the exit. */
static const struct budget_case {
	const char *name;
	const char *engine;
	gfn_t batch_until;
} budget_cases[] = {
	{ "fault_engine", "fault", 0 },
	{ "batch_engine", "batch", ~0ULL },
	{ "batch_then_faults", "batch", SLOT_BASE + 1000 },
};

TEST_TABLE(budget_caps_sptes_per_exit, budget_cases)
{
	big_slot(PG_LEVEL_4K);
	ASSERT_EQ(param_set("prefetch_engine", row->engine), 0);
	x86_sim.batch_until = row->batch_until;
	window(SLOT_BASE, BIG_PAGES);
	guest_fault(SLOT_BASE, PG_LEVEL_4K);
	/* Literal numbers: a planted change of the constants must fail. */
	EXPECT_STATS(1, 16384);
	ASSERT_EQ(x86_sim.mapped[SLOT_BASE + 16384], PG_LEVEL_4K);
	ASSERT_EQ(x86_sim.mapped[SLOT_BASE + 16385], 0);
	ASSERT_EQ(param_set("prefetch_engine", "batch"), 0);
}

/* The budget counts SPTEs: a window of 2 MiB host pages is mapped whole. */
TEST(budget_counts_sptes_not_pages)
{
	big_slot(PG_LEVEL_2M);
	x86_sim.batch_until = ~0ULL;
	window(SLOT_BASE, BIG_PAGES);
	guest_fault(SLOT_BASE, PG_LEVEL_2M);
	EXPECT_STATS(1, BIG_PAGES - BLOCK);
}

/*
 * A request that something waits for ends the walk, but only once the
 * minimum is examined: a window of 2 MiB of 4 KiB pages is never cut.
 * need_resched() and other requests (the steal-time update every
 * preemption raises) do not: the engine yields the CPU and goes on.
 */
static const struct stop_case {
	const char *name;
	const char *engine;
	u64 requests;
	bool resched;
	u32 nr;
	u64 want;
} stop_cases[] = {
	{ "event_fault_engine", "fault", BIT_ULL(KVM_REQ_EVENT), false, 2048, 512 },
	{ "event_batch_engine", "batch", BIT_ULL(KVM_REQ_EVENT), false, 2048, 512 },
	{ "nmi_batch_engine", "batch", BIT_ULL(KVM_REQ_NMI), false, 2048, 512 },
	{ "obsolete_root_batch", "batch",
	  BIT_ULL(KVM_REQ_MMU_FREE_OBSOLETE_ROOTS), false, 2048, 512 },
	{ "vm_dead_fault_engine", "fault", BIT_ULL(KVM_REQ_VM_DEAD), false, 2048, 512 },
	{ "steal_update_goes_on", "fault", BIT_ULL(KVM_REQ_STEAL_UPDATE), false, 2048, 2047 },
	{ "steal_update_goes_on_batch", "batch", BIT_ULL(KVM_REQ_STEAL_UPDATE), false, 2048, 2047 },
	{ "resched_fault_engine_goes_on", "fault", 0, true, 2048, 2047 },
	{ "resched_batch_engine_goes_on", "batch", 0, true, 2048, 2047 },
	{ "event_spares_2m_window", "fault", BIT_ULL(KVM_REQ_EVENT), false, 513, 512 },
};

TEST_TABLE(budget_stops_for_requests_that_matter, stop_cases)
{
	big_slot(PG_LEVEL_4K);
	ASSERT_EQ(param_set("prefetch_engine", row->engine), 0);
	x86_sim.batch_until = ~0ULL;
	vcpu.requests = row->requests;
	shim.need_resched = row->resched;
	window(SLOT_BASE, row->nr);
	guest_fault(SLOT_BASE, PG_LEVEL_4K);
	EXPECT_STATS(1, row->want);
	/* It yields the CPU between batches or faults, and goes on. */
	if (row->resched)
		ASSERT_TRUE(shim.cond_resched_calls > 0);
	shim.need_resched = false;
	vcpu.requests = 0;
	ASSERT_EQ(param_set("prefetch_engine", "batch"), 0);
}

/*
 * The budget is charged for every page examined, mapped or not: a window
 * that is mapped but for one hole at its end stops after 16384 pages
 * examined, without reaching the hole, in both engines.  (That the real
 * batch steps over mapped leaves before it gets pages is for the in-VM
 * tests: the shim's batch stands for prefetch_batch.c.)
 */
static const struct scan_case {
	const char *name;
	const char *engine;
} scan_cases[] = {
	{ "fault_engine", "fault" },
	{ "batch_engine", "batch" },
};

TEST_TABLE(budget_charges_pages_examined, scan_cases)
{
	gfn_t hole = SLOT_BASE + BIG_PAGES - 1;

	big_slot(PG_LEVEL_4K);
	x86_sim_map_range(SLOT_BASE + 1, hole, PG_LEVEL_4K);
	ASSERT_EQ(param_set("prefetch_engine", row->engine), 0);
	x86_sim.batch_until = ~0ULL;
	window(SLOT_BASE, BIG_PAGES);
	guest_fault(SLOT_BASE, PG_LEVEL_4K);
	EXPECT_STATS(1, 0);
	ASSERT_EQ(vcpu.stat.generic.prefetch_scanned, 16384);
	ASSERT_EQ(x86_sim.mapped[hole], 0);
	ASSERT_EQ(param_set("prefetch_engine", "batch"), 0);
}

/* The hole within the budget is mapped, and the scan ends at the window. */
TEST(budget_reaches_hole_within_budget)
{
	gfn_t hole = SLOT_BASE + 10000;

	big_slot(PG_LEVEL_4K);
	x86_sim_map_range(SLOT_BASE + 1, hole, PG_LEVEL_4K);
	x86_sim_map_range(hole + 1, SLOT_BASE + BIG_PAGES, PG_LEVEL_4K);
	x86_sim.batch_until = ~0ULL;
	window(SLOT_BASE, BIG_PAGES);
	guest_fault(SLOT_BASE, PG_LEVEL_4K);
	EXPECT_STATS(1, 1);
	ASSERT_EQ(x86_sim.mapped[hole], PG_LEVEL_4K);
	ASSERT_EQ(vcpu.stat.generic.prefetch_scanned, 16384);
}

TEST(engine_param)
{
	ASSERT_STREQ(param_get("prefetch_engine"), "batch\n");
	ASSERT_EQ(param_set("prefetch_engine", "fault\n"), 0);
	ASSERT_STREQ(param_get("prefetch_engine"), "fault\n");
	/* A name of another parameter of the same kind. */
	ASSERT_EQ(param_set("prefetch_engine", "fast"), -EINVAL);
	ASSERT_EQ(param_set("prefetch_engine", ""), -EINVAL);
	ASSERT_STREQ(param_get("prefetch_engine"), "fault\n");
	ASSERT_EQ(param_set("prefetch_engine", "batch"), 0);
	ASSERT_STREQ(param_get("prefetch_engine"), "batch\n");
	/* prefetch_gup, the other user of the same ops, is not changed. */
	ASSERT_STREQ(param_get("prefetch_gup"), "nofault\n");
}

int main(void)
{
	return test_run_all(setup, teardown);
}
