// SPDX-License-Identifier: GPL-2.0
/*
 * KVM_PRE_FAULT_MEMORY's generic part (6.1's backport,
 * arch/x86/6.1/kvm-policy/pre_fault.c): argument
 * checks, the loop over kvm_arch_vcpu_pre_fault_memory() (a fake here),
 * and upstream's progress semantics: 0 once anything was mapped, with gpa
 * and size telling what is left; an error only before any progress.
 */
#include "prefetch_internal.h"
#include "../../arch/x86/6.1/kvm-policy/pre_fault.c"
#include "test.h"

#define GPA	0x100000ULL
#define PAGE	0x1000ULL

static struct kvm test_kvm;
static struct kvm_vcpu vcpu = { .kvm = &test_kvm };

/* The fake architecture. */
static struct {
	u64 chunk;		/* bytes mapped per call, capped at what is left */
	bool scripted;		/* return script[call] instead */
	long script[8];
	int signal_at;		/* a signal arrives during this call (1-based) */
	int calls;
	u64 gpa[8], size[8];	/* the range of each call */
} arch;

static long fake_pre_fault(struct kvm_vcpu *v, struct kvm_pre_fault_memory *range)
{
	int i = arch.calls++;

	if (v != &vcpu)
		shim_violation(__FILE__, __LINE__, "wrong vCPU");
	if (!v->loaded)
		shim_violation(__FILE__, __LINE__, "arch called on a vCPU not loaded");
	if (v->kvm->srcu.depth <= 0)
		shim_violation(__FILE__, __LINE__, "arch called without kvm->srcu");
	if (i < 8) {
		arch.gpa[i] = range->gpa;
		arch.size[i] = range->size;
	}
	if (arch.calls == arch.signal_at)
		shim.signal_pending = true;
	if (i >= 100)
		return -ELOOP;	/* the loop ran away */
	if (arch.scripted)
		return i < 8 ? arch.script[i] : -ELOOP;
	return min_t(u64, range->size, arch.chunk);
}

static void setup(void)
{
	memset(&arch, 0, sizeof(arch));
	memset(&test_kvm, 0, sizeof(test_kvm));
	vcpu.loaded = 0;
	arch.chunk = PAGE;
	shim.arch_pre_fault = fake_pre_fault;
}

static struct kvm_pre_fault_memory range(u64 gpa, u64 size)
{
	return (struct kvm_pre_fault_memory){ .gpa = gpa, .size = size };
}

static long pre_fault(struct kvm_pre_fault_memory *r)
{
	return kvm_vcpu_pre_fault_memory(&vcpu, r);
}

/*
 * KVM_PRE_FAULT_MEMORY of [@gpa, @gpa + @size) returns @ret after @calls
 * calls of the architecture, and writes back the range left after the
 * first @done bytes (with nothing done, the range unchanged).
 */
static void expect_pre_fault(u64 gpa, u64 size, long ret, int calls,
			     u64 done, int line)
{
	struct kvm_pre_fault_memory r = range(gpa, size);
	long got;

	arch.calls = 0;
	got = pre_fault(&r);
	if (got != ret || arch.calls != calls || r.gpa != gpa + done ||
	    r.size != size - done || r.flags)
		test_fail(__FILE__, line,
			  "%ld after %d calls, left %#llx+%#llx; want %ld after %d, %#llx done",
			  got, arch.calls, (unsigned long long)r.gpa,
			  (unsigned long long)r.size, ret, calls,
			  (unsigned long long)done);
}
#define EXPECT_PRE_FAULT(gpa, size, ret, calls, done) \
	expect_pre_fault(gpa, size, ret, calls, done, __LINE__)

TEST(maps_whole_range)
{
	int i;

	arch.chunk = 4 * PAGE;
	EXPECT_PRE_FAULT(GPA, 16 * PAGE, 0, 4, 16 * PAGE);
	for (i = 0; i < 4; i++) {
		ASSERT_EQ(arch.gpa[i], GPA + i * 4 * PAGE);
		ASSERT_EQ(arch.size[i], (16 - i * 4) * PAGE);
	}
	ASSERT_TRUE(shim.cond_resched_calls > 0);
}

TEST(maps_in_one_call)
{
	arch.chunk = 512 * PAGE;	/* a 2 MiB mapping covers it */
	EXPECT_PRE_FAULT(GPA, 3 * PAGE, 0, 1, 3 * PAGE);
}

TEST(efault_reading_argument)
{
	shim.copy_from_user_fail = true;
	EXPECT_PRE_FAULT(GPA, PAGE, -EFAULT, 0, 0);
	shim.copy_from_user_fail = false;
	ASSERT_EQ(kvm_vcpu_pre_fault_memory(&vcpu, NULL), -EFAULT);
	ASSERT_EQ(arch.calls, 0);
}

/* Mapped, but the caller cannot be told. */
TEST(efault_writing_result)
{
	shim.copy_to_user_fail = true;
	EXPECT_PRE_FAULT(GPA, PAGE, -EFAULT, 1, 0);
}

/* Each malformed argument: EINVAL, nothing done, nothing written back. */
TEST(einval_each_argument)
{
	static const struct {
		const char *what;
		struct kvm_pre_fault_memory r;
	} bad[] = {
#define BAD(g, s, ...)	{ .gpa = (g), .size = (s), __VA_ARGS__ }
		{ "flags",		BAD(GPA, 4 * PAGE, .flags = 1) },
		{ "gpa not aligned",	BAD(GPA + 8, 4 * PAGE) },
		{ "size not aligned",	BAD(GPA, 4 * PAGE + 0x800) },
		{ "size 0",		BAD(GPA, 0) },
		{ "size 1",		BAD(GPA, 1) },
		{ "range wraps",	BAD(~0ULL - PAGE + 1, 2 * PAGE) },
		{ "range ends at 2^64",	BAD(~0ULL - PAGE + 1, PAGE) },
		{ "range of 2^64 - 4 KiB from 4 KiB",
					BAD(PAGE, ~0ULL - PAGE + 1) },
#undef BAD
	};
	size_t i;

	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		struct kvm_pre_fault_memory r = bad[i].r;
		long ret = pre_fault(&r);

		if (ret != -EINVAL)
			test_fail(__FILE__, __LINE__, "%s: %ld", bad[i].what, ret);
		ASSERT_TRUE(!memcmp(&r, &bad[i].r, sizeof(r)));
	}
	ASSERT_EQ(arch.calls, 0);
	ASSERT_EQ(shim.vcpu_loaded, 0);
}

/* Upstream's ABI checks flags, not padding: padding is ignored, kept. */
TEST(padding_is_ignored)
{
	struct kvm_pre_fault_memory r = range(GPA, 2 * PAGE);
	long ret;

	r.padding[0] = 1;
	r.padding[4] = 1ULL << 63;
	arch.calls = 0;
	ret = pre_fault(&r);
	ASSERT_EQ(ret, 0);
	ASSERT_EQ(arch.calls, 2);
	ASSERT_EQ(r.gpa, GPA + 2 * PAGE);
	ASSERT_EQ(r.size, 0);
	ASSERT_EQ(r.padding[0], 1);
	ASSERT_EQ(r.padding[4], 1ULL << 63);
}

TEST(largest_valid_range)
{
	arch.scripted = true;
	arch.script[0] = -ENOENT;
	EXPECT_PRE_FAULT(0, ~0ULL - PAGE + 1, -ENOENT, 1, 0);
}

TEST(error_before_progress_is_returned)
{
	static const long errs[] = { -ENOENT, -EAGAIN, -EOPNOTSUPP, -EFAULT,
				     -EINTR, -ENOMEM };
	size_t i;

	arch.scripted = true;
	for (i = 0; i < ARRAY_SIZE(errs); i++) {
		arch.script[0] = errs[i];
		EXPECT_PRE_FAULT(GPA, 4 * PAGE, errs[i], 1, 0);
	}
}

TEST(progress_then_error_returns_0)
{
	arch.scripted = true;
	arch.script[0] = PAGE;
	arch.script[1] = 2 * PAGE;
	arch.script[2] = -ENOENT;
	EXPECT_PRE_FAULT(GPA, 4 * PAGE, 0, 3, 3 * PAGE);
	ASSERT_EQ(arch.gpa[1], GPA + PAGE);
	ASSERT_EQ(arch.gpa[2], GPA + 3 * PAGE);
}

TEST(eintr_before_progress)
{
	shim.signal_pending = true;
	EXPECT_PRE_FAULT(GPA, 4 * PAGE, -EINTR, 0, 0);
}

TEST(signal_after_progress_returns_0)
{
	arch.signal_at = 1;
	EXPECT_PRE_FAULT(GPA, 4 * PAGE, 0, 1, PAGE);
}

/* The architecture must make progress and not overshoot. */
TEST(arch_returning_0_is_eio)
{
	arch.scripted = true;
	arch.script[0] = 0;
	shim.warn_expected = true;
	EXPECT_PRE_FAULT(GPA, 4 * PAGE, -EIO, 1, 0);
	ASSERT_EQ(shim.warnings, 1);
}

TEST(arch_overshoot_is_eio)
{
	arch.scripted = true;
	arch.script[0] = 5 * PAGE;
	shim.warn_expected = true;
	EXPECT_PRE_FAULT(GPA, 4 * PAGE, -EIO, 1, 0);
	ASSERT_EQ(shim.warnings, 1);

	/* After progress, it is still progress. */
	arch.script[0] = PAGE;
	arch.script[1] = 4 * PAGE;
	EXPECT_PRE_FAULT(GPA, 4 * PAGE, 0, 2, PAGE);
}

int main(void)
{
	return test_run_all(setup, NULL);
}
