// SPDX-License-Identifier: GPL-2.0
/*
 * The window a VM gets when nobody chose one (issue 13): a policy's
 * declared default_nr_pages when the window comes from a default
 * (KVM_SET_PREFETCH_POLICY with nr_pages 0, or a new VM under the
 * kvm.prefetch_policy default), kvm.prefetch_nr_pages for a policy that
 * declares none, and an explicit nr_pages from the VMM in every case.
 */
#include "prefetch_internal.h"
#include "../../kvm-policy/prefetch.c"
#include "../../kvm-policy/prefetch_vm.c"
#include "test.h"
#include "fixtures.h"

#define DECLARED	64

static void setup(void)
{
	fixture_setup(true);
	test_ops.default_nr_pages = DECLARED;
	if (kvm_prefetch_register(&test_ops))
		test_fail(__FILE__, __LINE__, "register test policy");
	/* The sysfs default differs from the declared one. */
	if (param_set("prefetch_nr_pages", "8"))
		test_fail(__FILE__, __LINE__, "prefetch_nr_pages=8");
}

static void teardown(void)
{
	vms_destroy_all();
	registry_reset();
}

/* The VM's window as GET and the debugfs line report it. */
static u32 vm_window(struct kvm *kvm)
{
	return vm_get(kvm).nr_pages;
}

TEST(set_zero_takes_the_declared_window)
{
	struct kvm *kvm = vm_create();

	ASSERT_EQ(vm_set(kvm, "test", 0, 0), 0);
	ASSERT_EQ(vm_window(kvm), DECLARED);
	ASSERT_EQ(vm_state(kvm)->nr_pages, DECLARED);
}

TEST(explicit_window_wins_below_and_above)
{
	struct kvm *kvm = vm_create();

	ASSERT_EQ(vm_set(kvm, "test", 16, 0), 0);
	ASSERT_EQ(vm_window(kvm), 16);
	ASSERT_EQ(vm_set(kvm, "test", 512, 0), 0);
	ASSERT_EQ(vm_window(kvm), 512);
	/* Even an explicit 1 (no prefetch) is the VMM's choice. */
	ASSERT_EQ(vm_set(kvm, "test", 1, 0), 0);
	ASSERT_EQ(vm_window(kvm), 1);
}

TEST(policy_without_declared_window_takes_the_sysfs_default)
{
	struct kvm *kvm = vm_create();

	ASSERT_EQ(vm_set(kvm, "auto", 0, 0), 0);
	ASSERT_EQ(vm_window(kvm), 8);
	ASSERT_EQ(param_set("prefetch_nr_pages", "32"), 0);
	ASSERT_EQ(vm_set(kvm, "manual", 0, 0), 0);
	ASSERT_EQ(vm_window(kvm), 32);
	/* The declared window does not follow the sysfs one. */
	ASSERT_EQ(vm_set(kvm, "test", 0, 0), 0);
	ASSERT_EQ(vm_window(kvm), DECLARED);
}

TEST(new_vm_under_a_declaring_default_policy)
{
	struct kvm *a, *b;

	ASSERT_EQ(param_set("prefetch_policy", "test"), 0);
	a = vm_create();
	ASSERT_STREQ(vm_get(a).name, "test");
	ASSERT_EQ(vm_window(a), DECLARED);
	/* Back to a built-in default: the sysfs window again. */
	ASSERT_EQ(param_set("prefetch_policy", "auto"), 0);
	b = vm_create();
	ASSERT_EQ(vm_window(b), 8);
	/* Defaults never change an existing VM. */
	ASSERT_EQ(vm_window(a), DECLARED);
}

TEST(set_of_get_is_a_noop)
{
	struct kvm *kvm = vm_create();
	struct kvm_prefetch_policy p;
	unsigned long gp;
	int inits;

	ASSERT_EQ(vm_set(kvm, "test", 0, 0), 0);
	p = vm_get(kvm);
	gp = shim.grace_periods;
	inits = rec.init_calls;
	ASSERT_EQ(kvm_prefetch_vm_ioctl(kvm, KVM_SET_PREFETCH_POLICY, &p), 0);
	ASSERT_EQ(rec.init_calls, inits);
	ASSERT_EQ(shim.grace_periods, gp);
	/* So is SET with nr_pages 0 again: it resolves to the same window. */
	ASSERT_EQ(vm_set(kvm, "test", 0, 0), 0);
	ASSERT_EQ(rec.init_calls, inits);
}

TEST(debugfs_line_shows_the_effective_window)
{
	static struct dentry dir;
	struct kvm kvm_dir;
	char buf[128];

	memset(&kvm_dir, 0, sizeof(kvm_dir));
	kvm_dir.debugfs_dentry = &dir;
	ASSERT_EQ(kvm_prefetch_vm_init(&kvm_dir), 0);
	ASSERT_EQ(vm_set(&kvm_dir, "test", 0, 0), 0);
	kvm_prefetch_vm_debugfs(&kvm_dir);
	ASSERT_EQ(shim.nr_debugfs, 1);
	ASSERT_EQ(shim_debugfs_read(0, buf, sizeof(buf)), 0);
	ASSERT_STREQ(buf, "test nr_pages=64 gup=nofault\n");
	kvm_prefetch_vm_destroy(&kvm_dir);
}

TEST(declared_window_above_the_maximum_is_refused)
{
	other_ops.default_nr_pages = KVM_PREFETCH_MAX_PAGES + 1;
	ASSERT_EQ(kvm_prefetch_register(&other_ops), -EINVAL);
	ASSERT_FALSE(registered(&other_ops));
	ASSERT_TRUE(shim_log_has("default window of 262145 pages"));
	other_ops.default_nr_pages = KVM_PREFETCH_MAX_PAGES;
	ASSERT_EQ(kvm_prefetch_register(&other_ops), 0);
	kvm_prefetch_unregister(&other_ops);
}

int main(void)
{
	return test_run_all(setup, teardown);
}
