// SPDX-License-Identifier: GPL-2.0
/*
 * KVM_PRE_FAULT_MEMORY's generic part (kvm-policy/pre_fault.c): argument
 * checks, the loop over kvm_arch_vcpu_pre_fault_memory() (a fake here),
 * and upstream's progress semantics: 0 once anything was mapped, with gpa
 * and size telling what is left; an error only before any progress.
 */
#include "prefetch_internal.h"
#include "../../kvm-policy/pre_fault.c"
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

TEST(maps_whole_range)
{
	struct kvm_pre_fault_memory r = range(GPA, 16 * PAGE);
	int i;

	arch.chunk = 4 * PAGE;
	ASSERT_EQ(pre_fault(&r), 0);
	ASSERT_EQ(arch.calls, 4);
	for (i = 0; i < 4; i++) {
		ASSERT_EQ(arch.gpa[i], GPA + i * 4 * PAGE);
		ASSERT_EQ(arch.size[i], (16 - i * 4) * PAGE);
	}
	ASSERT_EQ(r.gpa, GPA + 16 * PAGE);
	ASSERT_EQ(r.size, 0);
	ASSERT_EQ(r.flags, 0);
	ASSERT_TRUE(shim.cond_resched_calls > 0);
}

TEST(maps_in_one_call)
{
	struct kvm_pre_fault_memory r = range(GPA, 3 * PAGE);

	arch.chunk = 512 * PAGE;	/* a 2 MiB mapping covers it */
	ASSERT_EQ(pre_fault(&r), 0);
	ASSERT_EQ(arch.calls, 1);
	ASSERT_EQ(r.gpa, GPA + 3 * PAGE);
	ASSERT_EQ(r.size, 0);
}

TEST(efault_reading_argument)
{
	struct kvm_pre_fault_memory r = range(GPA, PAGE);

	shim.copy_from_user_fail = true;
	ASSERT_EQ(pre_fault(&r), -EFAULT);
	ASSERT_EQ(arch.calls, 0);
	shim.copy_from_user_fail = false;
	ASSERT_EQ(kvm_vcpu_pre_fault_memory(&vcpu, NULL), -EFAULT);
	ASSERT_EQ(arch.calls, 0);
}

TEST(efault_writing_result)
{
	struct kvm_pre_fault_memory r = range(GPA, PAGE);

	shim.copy_to_user_fail = true;
	ASSERT_EQ(pre_fault(&r), -EFAULT);
	ASSERT_EQ(arch.calls, 1);
}

/* Each malformed argument: EINVAL, nothing done, nothing written back. */
TEST(einval_each_argument)
{
	static const char *const what[] = {
		"flags", "padding[0]", "padding[4]", "gpa not aligned",
		"size not aligned", "size 0", "size 1", "range wraps",
		"range ends at 2^64", "range ends at 2^64 + 4 KiB",
	};
	size_t i;

	for (i = 0; i < ARRAY_SIZE(what); i++) {
		struct kvm_pre_fault_memory r = range(GPA, 4 * PAGE), orig;
		long ret;

		switch (i) {
		case 0:
			r.flags = 1;
			break;
		case 1:
			r.padding[0] = 1;
			break;
		case 2:
			r.padding[4] = 1ULL << 63;
			break;
		case 3:
			r.gpa = GPA + 8;
			break;
		case 4:
			r.size = 4 * PAGE + 0x800;
			break;
		case 5:
			r.size = 0;
			break;
		case 6:
			r.size = 1;
			break;
		case 7:
			r.gpa = ~0ULL - PAGE + 1;
			r.size = 2 * PAGE;
			break;
		case 8:
			r.gpa = ~0ULL - PAGE + 1;
			r.size = PAGE;
			break;
		case 9:
			r.gpa = PAGE;
			r.size = ~0ULL - PAGE + 1;
			break;
		}
		orig = r;
		ret = pre_fault(&r);
		if (ret != -EINVAL)
			test_fail(__FILE__, __LINE__, "%s: %ld", what[i], ret);
		ASSERT_TRUE(!memcmp(&r, &orig, sizeof(r)));
	}
	ASSERT_EQ(arch.calls, 0);
	ASSERT_EQ(shim.vcpu_loaded, 0);
}

TEST(largest_valid_range)
{
	struct kvm_pre_fault_memory r = range(0, ~0ULL - PAGE + 1);

	arch.scripted = true;
	arch.script[0] = -ENOENT;
	ASSERT_EQ(pre_fault(&r), -ENOENT);
	ASSERT_EQ(arch.calls, 1);
}

TEST(error_before_progress_is_returned)
{
	static const long errs[] = { -ENOENT, -EAGAIN, -EOPNOTSUPP, -EFAULT,
				     -EINTR, -ENOMEM };
	size_t i;

	arch.scripted = true;
	for (i = 0; i < ARRAY_SIZE(errs); i++) {
		struct kvm_pre_fault_memory r = range(GPA, 4 * PAGE);

		arch.calls = 0;
		arch.script[0] = errs[i];
		ASSERT_EQ(pre_fault(&r), errs[i]);
		ASSERT_EQ(arch.calls, 1);
		ASSERT_EQ(r.gpa, GPA);
		ASSERT_EQ(r.size, 4 * PAGE);
	}
}

TEST(progress_then_error_returns_0)
{
	struct kvm_pre_fault_memory r = range(GPA, 4 * PAGE);

	arch.scripted = true;
	arch.script[0] = PAGE;
	arch.script[1] = 2 * PAGE;
	arch.script[2] = -ENOENT;
	ASSERT_EQ(pre_fault(&r), 0);
	ASSERT_EQ(arch.calls, 3);
	ASSERT_EQ(arch.gpa[1], GPA + PAGE);
	ASSERT_EQ(arch.gpa[2], GPA + 3 * PAGE);
	ASSERT_EQ(r.gpa, GPA + 3 * PAGE);
	ASSERT_EQ(r.size, PAGE);
}

TEST(eintr_before_progress)
{
	struct kvm_pre_fault_memory r = range(GPA, 4 * PAGE);

	shim.signal_pending = true;
	ASSERT_EQ(pre_fault(&r), -EINTR);
	ASSERT_EQ(arch.calls, 0);
	ASSERT_EQ(r.gpa, GPA);
	ASSERT_EQ(r.size, 4 * PAGE);
}

TEST(signal_after_progress_returns_0)
{
	struct kvm_pre_fault_memory r = range(GPA, 4 * PAGE);

	arch.signal_at = 1;
	ASSERT_EQ(pre_fault(&r), 0);
	ASSERT_EQ(arch.calls, 1);
	ASSERT_EQ(r.gpa, GPA + PAGE);
	ASSERT_EQ(r.size, 3 * PAGE);
}

/* The architecture must make progress and not overshoot. */
TEST(arch_returning_0_is_eio)
{
	struct kvm_pre_fault_memory r = range(GPA, 4 * PAGE);

	arch.scripted = true;
	arch.script[0] = 0;
	shim.warn_expected = true;
	ASSERT_EQ(pre_fault(&r), -EIO);
	ASSERT_EQ(arch.calls, 1);
	ASSERT_EQ(shim.warnings, 1);
	ASSERT_EQ(r.size, 4 * PAGE);
}

TEST(arch_overshoot_is_eio)
{
	struct kvm_pre_fault_memory r = range(GPA, 4 * PAGE);

	arch.scripted = true;
	arch.script[0] = 5 * PAGE;
	shim.warn_expected = true;
	ASSERT_EQ(pre_fault(&r), -EIO);
	ASSERT_EQ(shim.warnings, 1);
	ASSERT_EQ(r.gpa, GPA);
	ASSERT_EQ(r.size, 4 * PAGE);

	/* After progress, it is still progress. */
	memset(&arch, 0, sizeof(arch));
	arch.scripted = true;
	arch.script[0] = PAGE;
	arch.script[1] = 4 * PAGE;
	r = range(GPA, 4 * PAGE);
	ASSERT_EQ(pre_fault(&r), 0);
	ASSERT_EQ(r.gpa, GPA + PAGE);
	ASSERT_EQ(r.size, 3 * PAGE);
}

int main(void)
{
	return test_run_all(setup, NULL);
}
