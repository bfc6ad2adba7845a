// SPDX-License-Identifier: GPL-2.0
/*
 * Which fault origins open a window for each built-in policy, the window
 * kvm_prefetch_aligned_window() computes, and kvm_prefetch_decide()'s cap
 * at the VM's nr_pages.
 */
#include "prefetch_internal.h"
#include "../../kvm-policy/prefetch.c"
#include "../../kvm-policy/prefetch_vm.c"
#include "test.h"
#include "fixtures.h"

static void setup(void)
{
	fixture_setup(true);
}

static void teardown(void)
{
	vms_destroy_all();
	registry_reset();
}

static const enum kvm_prefetch_type origins[] = {
	KVM_PREFETCH_GUEST_FAULT, KVM_PREFETCH_MANUAL, KVM_PREFETCH_ASYNC,
	KVM_PREFETCH_AUTO,
};
static const char *const origin_names[] = { "NONE", "MANUAL", "ASYNC", "AUTO" };

/* @ops's @how (window or decide) answered @got for a fault of @origin. */
static void check_answer(const struct kvm_prefetch_ops *ops, const char *how,
			 size_t origin, bool got, bool want,
			 const struct kvm_prefetch_window *w)
{
	if (got != want)
		test_fail(__FILE__, __LINE__, "%s %s() for %s: %d",
			  ops->name, how, origin_names[origin], got);
	if (got && (w->start != 0x1000 || w->nr_pages != 8))
		test_fail(__FILE__, __LINE__,
			  "%s %s() for %s: start %#llx nr %u", ops->name, how,
			  origin_names[origin], (unsigned long long)w->start,
			  w->nr_pages);
}

/*
 * @want[origin]: does @ops open a window for a fault of that origin, called
 * directly and through kvm_prefetch_decide() on a VM using it?
 */
static void check_triggers(struct kvm_prefetch_ops *ops, const bool want[4])
{
	struct kvm_prefetch_state st = { .ops = ops, .nr_pages = 8 };
	struct kvm *kvm = vm_create();
	size_t i;

	ASSERT_EQ(vm_set(kvm, ops->name, 8, 0), 0);
	for (i = 0; i < ARRAY_SIZE(origins); i++) {
		struct kvm_prefetch_fault f = {
			.origin = origins[i], .gfn = 0x1003, .mapped_pages = 1,
		};
		struct kvm_prefetch_window w = { 0, 0 };
		bool got;

		rcu_read_lock();
		got = ops->window(&st, &f, &w);
		rcu_read_unlock();
		check_answer(ops, "window", i, got, want[i], &w);
		memset(&w, 0, sizeof(w));
		got = kvm_prefetch_decide(kvm, &f, &w);
		check_answer(ops, "decide", i, got, want[i], &w);
	}
	vm_destroy(kvm);
}

/*			      NONE   MANUAL ASYNC  AUTO */
TEST(trigger_none)
{
	check_triggers(&prefetch_none, (bool[]){ false, false, false, false });
}

TEST(trigger_manual)
{
	check_triggers(&prefetch_manual, (bool[]){ false, true, false, false });
}

TEST(trigger_async)
{
	check_triggers(&prefetch_async, (bool[]){ false, true, true, false });
}

TEST(trigger_auto)
{
	check_triggers(&prefetch_auto, (bool[]){ true, true, true, false });
}

/* kvm_prefetch_aligned_window() after a mapping of @mapped pages. */
static void check_window(u64 gfn, u32 mapped, u32 nr_pages, bool want,
			 u64 want_start, u32 want_nr, int line)
{
	struct kvm_prefetch_window w = { 0xaaaa, 0xaaaa };
	bool got = kvm_prefetch_aligned_window(gfn, mapped, nr_pages, &w);

	if (got != want)
		test_fail(__FILE__, line,
			  "aligned_window(gfn %#llx, mapped %u, nr %u): %d, want %d",
			  (unsigned long long)gfn, mapped, nr_pages, got, want);
	if (!want && (w.start != 0xaaaa || w.nr_pages != 0xaaaa))
		test_fail(__FILE__, line, "window written though false");
	if (want && (w.start != want_start || w.nr_pages != want_nr))
		test_fail(__FILE__, line,
			  "aligned_window(gfn %#llx, mapped %u, nr %u): start %#llx nr %u, want %#llx %u",
			  (unsigned long long)gfn, mapped, nr_pages,
			  (unsigned long long)w.start, w.nr_pages,
			  (unsigned long long)want_start, want_nr);
}

#define WINDOW(gfn, mapped, nr, want, start, wnr) \
	check_window(gfn, mapped, nr, want, start, wnr, __LINE__)

/* No window after a mapping of @mapped pages at @gfn, for each nr_pages. */
static void check_no_window(u64 gfn, u32 mapped, const u32 *nrs, size_t n,
			    int line)
{
	size_t i;

	for (i = 0; i < n; i++)
		check_window(gfn, mapped, nrs[i], false, 0, 0, line);
}

#define NO_WINDOW(gfn, mapped, ...)					\
	check_no_window(gfn, mapped, (const u32[]){ __VA_ARGS__ },	\
			sizeof((const u32[]){ __VA_ARGS__ }) / sizeof(u32), \
			__LINE__)

TEST(window_nr_0_and_1_nothing)
{
	NO_WINDOW(0x12345, 1, 0, 1);
	NO_WINDOW(0, 1, 0);
}

TEST(window_aligned_to_pow2_below_nr)
{
	const u64 gfn = 0x123456789ULL;

	WINDOW(gfn, 1, 2, true, gfn & ~1ULL, 2);
	WINDOW(gfn, 1, 3, true, gfn & ~1ULL, 3);
	WINDOW(gfn, 1, 8, true, gfn & ~7ULL, 8);
	WINDOW(gfn, 1, 12, true, gfn & ~7ULL, 12);
	WINDOW(gfn, 1, 512, true, gfn & ~511ULL, 512);
	WINDOW(gfn, 1, 262144, true, gfn & ~262143ULL, 262144);
	/* Already aligned. */
	WINDOW(0x1000, 1, 8, true, 0x1000, 8);
	WINDOW(0, 1, 8, true, 0, 8);
}

TEST(window_capped_at_max_pages)
{
	const u64 gfn = 0x123456789ULL;

	WINDOW(gfn, 1, 262145, true, gfn & ~262143ULL, 262144);
	WINDOW(gfn, 1, 0xffffffffu, true, gfn & ~262143ULL, 262144);
}

TEST(window_contains_fault)
{
	static const u32 nrs[] = { 2, 3, 5, 8, 13, 16, 100, 512, 1000 };
	u64 gfn;
	size_t i;

	for (gfn = 0; gfn < 2100; gfn += 7) {
		for (i = 0; i < ARRAY_SIZE(nrs); i++) {
			struct kvm_prefetch_window w;

			ASSERT_TRUE(kvm_prefetch_aligned_window(gfn, 1, nrs[i], &w));
			if (w.start > gfn || gfn >= w.start + w.nr_pages)
				test_fail(__FILE__, __LINE__,
					  "gfn %#llx nr %u: window %#llx+%u misses it",
					  (unsigned long long)gfn, nrs[i],
					  (unsigned long long)w.start, w.nr_pages);
			ASSERT_EQ(w.nr_pages, nrs[i]);
		}
	}
}

TEST(window_top_of_gfn_space)
{
	const u64 gfn = (1ULL << 52) - 1;

	WINDOW(gfn, 1, 8, true, gfn & ~7ULL, 8);
	WINDOW(gfn, 512, 262144, true, gfn & ~262143ULL, 262144);
}

/* A 4 KiB mapping never covers a window of 2 or more pages. */
TEST(window_level_4k_never_covers)
{
	WINDOW(0x1000, 1, 2, true, 0x1000, 2);
	WINDOW(0x1001, 1, 2, true, 0x1000, 2);
	WINDOW(0x1003, 1, 3, true, 0x1002, 3);
}

/* A 2 MiB mapping covers windows up to 512 aligned pages. */
TEST(window_level_2m)
{
	const u64 gfn = 0x40123;

	NO_WINDOW(gfn, 512, 2, 3, 8, 512);
	/* 513 pages from the 2 MiB boundary go one page beyond. */
	WINDOW(gfn, 512, 513, true, 0x40000, 513);
	WINDOW(gfn, 512, 1024, true, gfn & ~1023ULL, 1024);
	WINDOW(gfn, 512, 262144, true, 0x40000, 262144);
	WINDOW(gfn, 512, 262145, true, 0x40000, 262144);
}

/* A 1 GiB mapping covers every window. */
TEST(window_level_1g)
{
	const u64 gfn = 0x12345678;

	NO_WINDOW(gfn, 262144, 8, 512, 262144, 262145, 0xffffffffu);
}

/* ---- kvm_prefetch_decide() ------------------------------------------ */

static struct kvm *test_vm(u32 nr_pages)
{
	struct kvm *kvm;

	if (!registered(&test_ops) && kvm_prefetch_register(&test_ops))
		test_fail(__FILE__, __LINE__, "register test policy");
	kvm = vm_create();
	if (vm_set(kvm, "test", nr_pages, 0))
		test_fail(__FILE__, __LINE__, "set test policy");
	return kvm;
}

static const struct kvm_prefetch_fault fault = {
	.origin = KVM_PREFETCH_GUEST_FAULT, .gfn = 0x2345, .error_code = 0x6,
	.mapped_pages = 1, .vcpu_idx = 3,
};

/* kvm_prefetch_decide() when the test policy answers [start, start + nr). */
static bool decide(struct kvm *kvm, u64 start, u32 nr,
		   struct kvm_prefetch_window *w)
{
	rec.window_ret = true;
	rec.window_out = (struct kvm_prefetch_window){ start, nr };
	return kvm_prefetch_decide(kvm, &fault, w);
}

TEST(decide_caps_at_vm_nr_pages)
{
	struct kvm *kvm = test_vm(16);
	struct kvm_prefetch_window w;

	ASSERT_TRUE(decide(kvm, 0x2000, 1000, &w));
	ASSERT_EQ(w.start, 0x2000);
	ASSERT_EQ(w.nr_pages, 16);
	ASSERT_TRUE(decide(kvm, 0x2000, 4, &w));
	ASSERT_EQ(w.nr_pages, 4);
	ASSERT_TRUE(decide(kvm, 0x2000, 16, &w));
	ASSERT_EQ(w.nr_pages, 16);
}

TEST(decide_empty_window_is_no)
{
	struct kvm *kvm = test_vm(16);
	struct kvm_prefetch_window w;

	ASSERT_FALSE(decide(kvm, 0x2000, 0, &w));
	rec.window_ret = false;
	rec.window_out.nr_pages = 8;
	ASSERT_FALSE(kvm_prefetch_decide(kvm, &fault, &w));
	ASSERT_EQ(rec.window_calls, 2);
}

/* The window comes pre-filled: true without writing it maps nothing. */
TEST(decide_true_without_writing_is_no)
{
	struct kvm *kvm = test_vm(16);
	struct kvm_prefetch_window w = { 0xdead, 0xbeef };

	rec.window_ret = true;
	rec.window_nowrite = true;
	ASSERT_FALSE(kvm_prefetch_decide(kvm, &fault, &w));
	ASSERT_EQ(w.start, fault.gfn);
	ASSERT_EQ(w.nr_pages, 0);
	ASSERT_EQ(rec.window_calls, 1);
}

/* Windows that reach past gfn 2^64 - 1; and the last ones that do not. */
static const struct wrap_case {
	const char *name;
	u64 start;
	u32 nr;
	bool ejects;
} wrap_cases[] = {
	{ "ends_at_2_64", ~0ULL - 7, 9, true },
	{ "wraps_far", ~0ULL, 0xffffffff, true },
	{ "start_max_two_pages", ~0ULL, 2, true },
	{ "last_page_is_max", ~0ULL - 7, 8, false },
	{ "start_max_one_page", ~0ULL, 1, false },
	{ "huge_count_no_wrap", 0, 0xffffffff, false },
};

TEST_TABLE(decide_wrapping_window_ejects_policy, wrap_cases)
{
	struct kvm *kvm = test_vm(16);
	struct kvm_prefetch_policy p;
	struct kvm_prefetch_window w;

	ASSERT_EQ(decide(kvm, row->start, row->nr, &w), !row->ejects);
	ASSERT_EQ(kvm_prefetch_vm_ioctl(kvm, KVM_GET_PREFETCH_POLICY, &p), 0);
	ASSERT_STREQ(p.name, row->ejects ? "none" : "test");
	if (!row->ejects)
		return;
	/* Not asked again, whatever it would answer now. */
	ASSERT_FALSE(decide(kvm, 0x2000, 8, &w));
	ASSERT_EQ(rec.window_calls, 1);
	ASSERT_EQ(p.nr_pages, 16);
	/* Until userspace selects it again: the same policy, a new state. */
	ASSERT_EQ(vm_set(kvm, "test", 16, 0), 0);
	ASSERT_TRUE(decide(kvm, 0x2000, 8, &w));
	ASSERT_EQ(rec.window_calls, 2);
	ASSERT_EQ(kvm_prefetch_vm_ioctl(kvm, KVM_GET_PREFETCH_POLICY, &p), 0);
	ASSERT_STREQ(p.name, "test");
}

TEST(decide_window_below_2_skips_policy)
{
	struct kvm_prefetch_window w;

	ASSERT_FALSE(decide(test_vm(1), 0x2000, 8, &w));
	ASSERT_EQ(rec.window_calls, 0);
}

TEST(decide_passes_fault_and_state)
{
	struct kvm *kvm = test_vm(64);
	struct kvm_prefetch_window w;

	ASSERT_FALSE(kvm_prefetch_decide(kvm, &fault, &w));
	ASSERT_EQ(rec.window_calls, 1);
	ASSERT_EQ(rec.last_fault.origin, fault.origin);
	ASSERT_EQ(rec.last_fault.gfn, fault.gfn);
	ASSERT_EQ(rec.last_fault.error_code, fault.error_code);
	ASSERT_EQ(rec.last_fault.mapped_pages, fault.mapped_pages);
	ASSERT_EQ(rec.last_fault.vcpu_idx, fault.vcpu_idx);
	/* The policy's per-VM state reached it. */
	ASSERT_PTR_EQ(vm_state(kvm)->priv, &rec);
	ASSERT_EQ(vm_state(kvm)->nr_pages, 64);
}

TEST(decide_without_state_is_no)
{
	struct kvm kvm;
	struct kvm_prefetch_window w;

	memset(&kvm, 0, sizeof(kvm));
	ASSERT_FALSE(kvm_prefetch_decide(&kvm, &fault, &w));
}

TEST(decide_builtin_auto_uses_vm_window)
{
	struct kvm *kvm = vm_create();
	struct kvm_prefetch_fault f = fault;
	struct kvm_prefetch_window w;

	ASSERT_EQ(vm_set(kvm, "auto", 512, 0), 0);
	ASSERT_TRUE(kvm_prefetch_decide(kvm, &f, &w));
	ASSERT_EQ(w.start, 0x2345 & ~511ULL);
	ASSERT_EQ(w.nr_pages, 512);
	/* The installed 2 MiB mapping already covers it. */
	f.mapped_pages = 512;
	ASSERT_FALSE(kvm_prefetch_decide(kvm, &f, &w));
}

/* ---- kvm->prefetch_may_open: the fault path's test before the policy -- */

/* The flag after each policy change of one VM, none first and last. */
TEST(may_open_follows_each_policy_change)
{
	static const struct {
		const char *name;
		u32 nr_pages;
		bool want;
	} steps[] = {
		{ "none", 8, false }, { "auto", 8, true }, { "auto", 1, false },
		{ "manual", 16, true }, { "none", 512, false },
		{ "async", 2, true }, { "test", 64, true }, { "test", 1, false },
		{ "auto", 512, true }, { "none", 0, false },
	};
	struct kvm *kvm;
	size_t i;

	ASSERT_EQ(kvm_prefetch_register(&test_ops), 0);
	kvm = vm_create();
	for (i = 0; i < ARRAY_SIZE(steps); i++) {
		ASSERT_EQ(vm_set(kvm, steps[i].name, steps[i].nr_pages, 0), 0);
		if (READ_ONCE(kvm->prefetch_may_open) != steps[i].want)
			test_fail(__FILE__, __LINE__,
				  "after %s nr_pages %u: prefetch_may_open %d",
				  steps[i].name, steps[i].nr_pages,
				  kvm->prefetch_may_open);
	}
}

/* A new VM's flag comes from the defaults; destroying it clears it. */
TEST(may_open_of_a_new_vm)
{
	struct kvm *kvm;

	ASSERT_EQ(param_set("prefetch_policy", "none"), 0);
	kvm = vm_create();
	ASSERT_FALSE(kvm->prefetch_may_open);
	ASSERT_EQ(param_set("prefetch_policy", "auto"), 0);
	ASSERT_EQ(param_set("prefetch_nr_pages", "16"), 0);
	kvm = vm_create();
	ASSERT_TRUE(kvm->prefetch_may_open);
	kvm_prefetch_vm_destroy(kvm);
	ASSERT_FALSE(kvm->prefetch_may_open);
	ASSERT_EQ(param_set("prefetch_nr_pages", "1"), 0);
	kvm = vm_create();
	ASSERT_FALSE(kvm->prefetch_may_open);
}

/* While the flag is false, no RCU section and no call into the policy. */
TEST(decide_without_may_open_skips_rcu_and_policy)
{
	struct kvm *kvm = test_vm(16);
	struct kvm_prefetch_window w;
	unsigned long sections;

	ASSERT_TRUE(kvm->prefetch_may_open);
	/* A vCPU that still sees the flag of a none state set before. */
	WRITE_ONCE(kvm->prefetch_may_open, false);
	sections = shim.rcu_sections;
	ASSERT_FALSE(decide(kvm, 0x2000, 16, &w));
	ASSERT_EQ(rec.window_calls, 0);
	ASSERT_EQ(shim.rcu_sections, sections);
	ASSERT_EQ(vm_set(kvm, "none", 16, 0), 0);
	sections = shim.rcu_sections;
	ASSERT_FALSE(kvm_prefetch_decide(kvm, &fault, &w));
	ASSERT_EQ(shim.rcu_sections, sections);
}

/* A stale true: the state found decides, and none is not called. */
TEST(decide_with_stale_may_open_checks_the_state)
{
	struct kvm *kvm = test_vm(1);
	struct kvm_prefetch_window w;

	WRITE_ONCE(kvm->prefetch_may_open, true);
	ASSERT_FALSE(decide(kvm, 0x2000, 8, &w));
	ASSERT_EQ(rec.window_calls, 0);
	ASSERT_EQ(vm_set(kvm, "none", 64, 0), 0);
	WRITE_ONCE(kvm->prefetch_may_open, true);
	ASSERT_FALSE(kvm_prefetch_decide(kvm, &fault, &w));
	ASSERT_EQ(rec.window_calls, 0);
}

/*
 * Clipping the window [@start, @start + @nr) to the faulting memslot
 * [@base, @base + @npages), the max GFN and the window cap: @ok, and if so
 * the range [@want_start, @want_end).
 */
static const struct clip_case {
	const char *name;
	u64 start;
	u32 nr;
	u64 base, npages, max_gfn;
	bool ok;
	u64 want_start, want_end;
} clip_cases[] = {
	{ "clip_inside_slot_is_unchanged", 0x1000, 16, 0x800, 0x1000,
	  ~0ULL >> 12, true, 0x1000, 0x1010 },
	{ "clip_at_slot_end_and_start", 0x1000, 512, 0x1100, 0x80,
	  ~0ULL >> 12, true, 0x1100, 0x1180 },
	{ "clip_slot_ending_before_window", 0x1000, 512, 0x0, 0x1000,
	  ~0ULL >> 12, false, 0, 0 },
	{ "clip_slot_starting_after_window", 0x1000, 512, 0x1200, 0x10,
	  ~0ULL >> 12, false, 0, 0 },
	{ "clip_at_max_gfn", 0xffff0, 64, 0, 0x100000000ULL, 0xfffff,
	  true, 0xffff0, 0x100000 },
	{ "clip_window_beyond_max_gfn", 0x100000, 64, 0, 0x100000000ULL,
	  0xfffff, false, 0, 0 },
	{ "clip_caps_at_max_pages", 0, 0xffffffff, 0, 1ULL << 30, ~0ULL >> 12,
	  true, 0, KVM_PREFETCH_MAX_PAGES },
	{ "clip_refuses_wrap", ~0ULL - 4, 16, 0, ~0ULL, ~0ULL - 1, false, 0, 0 },
};

TEST_TABLE(check_clip, clip_cases)
{
	struct kvm_prefetch_window w = { row->start, row->nr };
	u64 start = 0xaaaa, end = 0xaaaa;

	ASSERT_EQ(kvm_prefetch_clip_window(&w, row->base, row->npages,
					   row->max_gfn, &start, &end),
		  row->ok);
	if (row->ok) {
		ASSERT_EQ(start, row->want_start);
		ASSERT_EQ(end, row->want_end);
	}
}

TEST(decide_refuses_auto_origin)
{
	struct kvm_prefetch_fault f = { .origin = KVM_PREFETCH_AUTO,
					.gfn = 0x100, .mapped_pages = 1 };
	struct kvm_prefetch_window w;
	struct kvm *kvm = vm_create();

	ASSERT_EQ(vm_set(kvm, "auto", 512, 0), 0);
	ASSERT_FALSE(kvm_prefetch_decide(kvm, &f, &w));
	f.origin = KVM_PREFETCH_GUEST_FAULT;
	ASSERT_TRUE(kvm_prefetch_decide(kvm, &f, &w));
	vm_destroy(kvm);
}

int main(void)
{
	return test_run_all(setup, teardown);
}
