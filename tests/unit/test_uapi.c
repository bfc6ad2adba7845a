// SPDX-License-Identifier: GPL-2.0
/*
 * A VM's prefetch state (kvm-policy/prefetch_vm.c): creation from the
 * defaults, kvm_prefetch_policy_check(), KVM_SET/GET_PREFETCH_POLICY with
 * every errno, how a replaced state is freed, and the debugfs file.
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

/* ---- VM creation and destruction ------------------------------------ */

TEST(vm_init_takes_defaults)
{
	struct kvm *kvm;

	ASSERT_EQ(param_set("prefetch_policy", "manual"), 0);
	ASSERT_EQ(param_set("prefetch_nr_pages", "16"), 0);
	ASSERT_EQ(param_set("prefetch_gup", "fast"), 0);
	kvm = vm_create();
	ASSERT_PTR_EQ(vm_state(kvm)->ops, &prefetch_manual);
	ASSERT_PTR_EQ(vm_state(kvm)->kvm, kvm);
	ASSERT_EQ(vm_state(kvm)->nr_pages, 16);
	ASSERT_EQ(vm_state(kvm)->gup, KVM_PREFETCH_GUP_FAST_ONLY);
	ASSERT_EQ(shim_this_module.refcnt, 1);
	vm_destroy(kvm);
	ASSERT_TRUE(kvm->prefetch == NULL);
	ASSERT_EQ(shim_this_module.refcnt, 0);
	ASSERT_EQ(shim.allocs, 0);
}

TEST(vm_init_module_policy_holds_module)
{
	struct kvm *kvm;

	ASSERT_EQ(kvm_prefetch_register(&test_ops), 0);
	ASSERT_EQ(param_set("prefetch_policy", "test"), 0);
	kvm = vm_create();
	ASSERT_EQ(test_mod.refcnt, 1);
	ASSERT_EQ(rec.init_calls, 1);
	ASSERT_PTR_EQ(vm_state(kvm)->priv, &rec);
	vm_destroy(kvm);
	ASSERT_EQ(rec.release_calls, 1);
	ASSERT_EQ(rec.release_module_refcnt, 1);	/* released before the put */
	ASSERT_EQ(test_mod.refcnt, 0);
}

TEST(vm_init_enomem)
{
	struct kvm kvm;

	memset(&kvm, 0, sizeof(kvm));
	shim.kzalloc_fail = true;
	ASSERT_EQ(kvm_prefetch_vm_init(&kvm), -ENOMEM);
	ASSERT_TRUE(kvm.prefetch == NULL);
	ASSERT_EQ(shim_this_module.refcnt, 0);
}

/*
 * A default policy whose init() fails does not stop VMs from being
 * created: the VM starts on none, and the policy keeps no reference.
 */
static const struct init_fail_case {
	const char *name;
	int ret;
	bool scribble;
} init_fail_cases[] = {
	{ "errno", -ENOSPC, false },
	{ "positive_1", 1, false },
	{ "positive_4096", 4096, false },
	{ "below_max_errno", -MAX_ERRNO - 1, false },
	{ "minus_5000", -5000, false },
	{ "int_min", INT_MIN, false },
	{ "int_max", INT_MAX, false },
	{ "zero_but_changes_nr_pages", 0, true },
};

TEST_TABLE(vm_init_policy_init_fails_starts_on_none, init_fail_cases)
{
	struct kvm kvm;
	struct kvm_prefetch_policy p;

	ASSERT_EQ(kvm_prefetch_register(&test_ops), 0);
	ASSERT_EQ(param_set("prefetch_policy", "test"), 0);
	rec.init_ret = row->ret;
	rec.init_scribble = row->scribble;
	memset(&kvm, 0, sizeof(kvm));
	ASSERT_EQ(kvm_prefetch_vm_init(&kvm), 0);
	ASSERT_TRUE(kvm.prefetch != NULL);
	ASSERT_EQ(kvm_prefetch_vm_ioctl(&kvm, KVM_GET_PREFETCH_POLICY, &p), 0);
	ASSERT_STREQ(p.name, "none");
	ASSERT_FALSE(kvm.prefetch_may_open);
	ASSERT_EQ(test_mod.refcnt, 0);
	ASSERT_EQ(rec.init_calls, 1);
	/* An init() that succeeded but broke the contract is released. */
	ASSERT_EQ(rec.release_calls, row->scribble ? 1 : 0);
	kvm_prefetch_vm_destroy(&kvm);
	ASSERT_EQ(shim.allocs, 0);
}

/* ---- kvm_prefetch_policy_check() ------------------------------------ */

TEST(check_accepts_valid)
{
	struct kvm_prefetch_policy p = policy("auto", 0, 0);

	ASSERT_EQ(kvm_prefetch_policy_check(&p), 0);
	p = policy("x", KVM_PREFETCH_MAX_PAGES, KVM_PREFETCH_GUP_FAST_ONLY);
	ASSERT_EQ(kvm_prefetch_policy_check(&p), 0);
	p = policy("abcdefghijklmno", 1, KVM_PREFETCH_GUP_NOFAULT);
	ASSERT_EQ(kvm_prefetch_policy_check(&p), 0);
}

/* Each way a struct kvm_prefetch_policy can be malformed. */
static const struct bad_policy {
	const char *what;
	struct kvm_prefetch_policy p;
} bad_policies[] = {
#define BAD(n, nr, ...)	{ .name = n, .nr_pages = nr, __VA_ARGS__ }
	{ "flags bit 0",	BAD("manual", 8, .flags = 1) },
	{ "flags bit 31",	BAD("manual", 8, .flags = 0x80000000u) },
	{ "pad",		BAD("manual", 8, .pad = 1) },
	{ "reserved[0]",	BAD("manual", 8, .reserved = { 1 }) },
	{ "reserved[1]",	BAD("manual", 8, .reserved = { [1] = 1ULL << 63 }) },
	{ "reserved[2]",	BAD("manual", 8, .reserved = { [2] = 0x100 }) },
	{ "reserved[3]",	BAD("manual", 8, .reserved = { [3] = 1 }) },
	{ "empty name",		BAD("", 8) },
	{ "name of 16 chars",	BAD("abcdefghijklmnop", 8) },
	{ "upper case",		BAD("Auto", 8) },
	{ "space",		BAD("au to", 8) },
	{ "dot",		BAD("a.b", 8) },
	{ "slash",		BAD("../a", 8) },
	{ "nr_pages 262145",	BAD("manual", KVM_PREFETCH_MAX_PAGES + 1) },
	{ "nr_pages ~0",	BAD("manual", 0xffffffffu) },
	{ "gup 3",		BAD("manual", 8, .gup = 3) },
	{ "gup ~0",		BAD("manual", 8, .gup = 0xffffffffu) },
#undef BAD
};

TEST(check_rejects_each_bad_field)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(bad_policies); i++) {
		struct kvm_prefetch_policy p = bad_policies[i].p;

		if (kvm_prefetch_policy_check(&p) != -EINVAL)
			test_fail(__FILE__, __LINE__, "%s accepted",
				  bad_policies[i].what);
	}
}

/* ---- KVM_SET_PREFETCH_POLICY errors --------------------------------- */

/* The VM's state before a failing SET, to compare with after it. */
struct snapshot {
	struct kvm_prefetch_state *st;
	struct kvm_prefetch_state copy;
	unsigned long grace_periods;
	int kvm_refs, test_refs, allocs;
};

static struct snapshot snap(struct kvm *kvm)
{
	return (struct snapshot){
		.st = vm_state(kvm), .copy = *vm_state(kvm),
		.grace_periods = shim.grace_periods,
		.kvm_refs = shim_this_module.refcnt,
		.test_refs = test_mod.refcnt, .allocs = shim.allocs,
	};
}

static void check_unchanged(struct kvm *kvm, struct snapshot s, int line)
{
	if (vm_state(kvm) != s.st)
		test_fail(__FILE__, line, "failed SET replaced the state");
	if (memcmp(vm_state(kvm), &s.copy, sizeof(s.copy)))
		test_fail(__FILE__, line, "failed SET modified the state");
	if (shim.grace_periods != s.grace_periods)
		test_fail(__FILE__, line, "failed SET waited for a grace period");
	if (shim_this_module.refcnt != s.kvm_refs ||
	    test_mod.refcnt != s.test_refs)
		test_fail(__FILE__, line, "failed SET changed module references");
	if (shim.allocs != s.allocs)
		test_fail(__FILE__, line, "failed SET leaked memory");
}

TEST(set_efault)
{
	struct kvm *kvm = vm_create();
	struct kvm_prefetch_policy p = policy("manual", 0, 0);
	struct snapshot s = snap(kvm);

	shim.copy_from_user_fail = true;
	ASSERT_EQ(kvm_prefetch_vm_ioctl(kvm, KVM_SET_PREFETCH_POLICY, &p), -EFAULT);
	check_unchanged(kvm, s, __LINE__);
	shim.copy_from_user_fail = false;
	ASSERT_EQ(kvm_prefetch_vm_ioctl(kvm, KVM_SET_PREFETCH_POLICY, NULL), -EFAULT);
	check_unchanged(kvm, s, __LINE__);
}

TEST(get_efault)
{
	struct kvm *kvm = vm_create();
	struct kvm_prefetch_policy p;

	shim.copy_to_user_fail = true;
	ASSERT_EQ(kvm_prefetch_vm_ioctl(kvm, KVM_GET_PREFETCH_POLICY, &p), -EFAULT);
	shim.copy_to_user_fail = false;
	ASSERT_EQ(kvm_prefetch_vm_ioctl(kvm, KVM_GET_PREFETCH_POLICY, NULL), -EFAULT);
	ASSERT_EQ(shim.rcu_depth, 0);
}

TEST(set_einval_each_field)
{
	struct kvm *kvm = vm_create();
	struct snapshot s = snap(kvm);
	size_t i;

	shim.caps = ~0ULL;
	for (i = 0; i < ARRAY_SIZE(bad_policies); i++) {
		struct kvm_prefetch_policy p = bad_policies[i].p;
		long ret;

		ret = kvm_prefetch_vm_ioctl(kvm, KVM_SET_PREFETCH_POLICY, &p);
		if (ret != -EINVAL)
			test_fail(__FILE__, __LINE__, "%s: %ld",
				  bad_policies[i].what, ret);
		check_unchanged(kvm, s, __LINE__);
	}
	/* Checked before any lookup: nothing to autoload. */
	ASSERT_EQ(shim.request_module_calls, 0);
}

TEST(set_enoent)
{
	struct kvm *kvm = vm_create();
	struct snapshot s = snap(kvm);

	ASSERT_EQ(vm_set(kvm, "nosuch", 0, 0), -ENOENT);
	check_unchanged(kvm, s, __LINE__);
	ASSERT_EQ(shim.request_module_calls, 0);

	/* After the autoload attempt a privileged caller is owed. */
	shim.caps = 1ULL << CAP_SYS_MODULE;
	ASSERT_EQ(vm_set(kvm, "nosuch", 0, 0), -ENOENT);
	ASSERT_EQ(shim.request_module_calls, 1);
	ASSERT_STREQ(shim.request_module_name, "kvm-prefetch-nosuch");
	check_unchanged(kvm, s, __LINE__);
}

TEST(set_autoloads)
{
	struct kvm *kvm = vm_create();

	shim.caps = 1ULL << CAP_SYS_MODULE;
	shim.request_module_hook = autoload_hook;
	ASSERT_EQ(vm_set(kvm, "other", 0, 0), 0);
	ASSERT_PTR_EQ(vm_state(kvm)->ops, &other_ops);
	ASSERT_EQ(other_mod.refcnt, 1);
	vm_destroy(kvm);
	ASSERT_EQ(other_mod.refcnt, 0);
}

TEST(set_ebusy)
{
	struct kvm *kvm = vm_create();
	struct snapshot s;

	ASSERT_EQ(kvm_prefetch_register(&test_ops), 0);
	test_mod.going = true;
	s = snap(kvm);
	ASSERT_EQ(vm_set(kvm, "test", 0, 0), -EBUSY);
	check_unchanged(kvm, s, __LINE__);
}

TEST(set_eopnotsupp)
{
	struct kvm *kvm = vm_create();
	struct snapshot s = snap(kvm);

	shim.arch_prefetch_supported = false;
	ASSERT_EQ(vm_set(kvm, "manual", 0, 0), -EOPNOTSUPP);
	check_unchanged(kvm, s, __LINE__);
	/* GET still works, for a VMM that wants to see it. */
	ASSERT_STREQ(vm_get(kvm).name, "none");
}

TEST(set_enomem)
{
	struct kvm *kvm = vm_create();
	struct snapshot s;

	ASSERT_EQ(kvm_prefetch_register(&test_ops), 0);
	s = snap(kvm);
	shim.kzalloc_fail = true;
	ASSERT_EQ(vm_set(kvm, "test", 0, 0), -ENOMEM);
	check_unchanged(kvm, s, __LINE__);
}

/*
 * KVM_SET_PREFETCH_POLICY with a policy whose init() answers out of
 * contract: -EINVAL, nothing changed, nothing kept; -errno passes through.
 */
TEST_TABLE(set_policy_init_out_of_contract, init_fail_cases)
{
	struct kvm *kvm = vm_create();
	struct snapshot s;

	ASSERT_EQ(kvm_prefetch_register(&test_ops), 0);
	s = snap(kvm);
	rec.init_ret = row->ret;
	rec.init_scribble = row->scribble;
	ASSERT_EQ(vm_set(kvm, "test", 0, 0),
		  row->ret == -ENOSPC ? -ENOSPC : -EINVAL);
	check_unchanged(kvm, s, __LINE__);
	ASSERT_EQ(test_mod.refcnt, 0);
	ASSERT_EQ(rec.init_calls, 1);
	ASSERT_EQ(rec.release_calls, row->scribble ? 1 : 0);
}

/* The whole errno range is init()'s to return. */
TEST(set_policy_init_max_errno_passes)
{
	struct kvm *kvm = vm_create();

	ASSERT_EQ(kvm_prefetch_register(&test_ops), 0);
	rec.init_ret = -MAX_ERRNO;
	ASSERT_EQ(vm_set(kvm, "test", 0, 0), -MAX_ERRNO);
	rec.init_ret = -1;
	ASSERT_EQ(vm_set(kvm, "test", 0, 0), -1);
	rec.init_ret = 0;
	ASSERT_EQ(vm_set(kvm, "test", 0, 0), 0);
}

TEST(set_policy_init_fails)
{
	struct kvm *kvm = vm_create();
	struct snapshot s;

	ASSERT_EQ(kvm_prefetch_register(&test_ops), 0);
	s = snap(kvm);
	rec.init_ret = -ENOSPC;
	ASSERT_EQ(vm_set(kvm, "test", 0, 0), -ENOSPC);
	check_unchanged(kvm, s, __LINE__);
	ASSERT_EQ(rec.init_calls, 1);
	ASSERT_EQ(rec.release_calls, 0);
}

TEST(unknown_ioctl_enotty)
{
	struct kvm *kvm = vm_create();
	struct kvm_prefetch_policy p = policy("auto", 0, 0);

	ASSERT_EQ(kvm_prefetch_vm_ioctl(kvm, 0, &p), -ENOTTY);
	ASSERT_EQ(kvm_prefetch_vm_ioctl(kvm, KVM_SET_PREFETCH_POLICY + 1, &p),
		  -ENOTTY);
}

/* ---- KVM_SET_PREFETCH_POLICY success -------------------------------- */

TEST(set_replaces_state)
{
	struct kvm *kvm = vm_create();
	struct kvm_prefetch_state *old = vm_state(kvm);

	ASSERT_EQ(kvm_prefetch_register(&test_ops), 0);
	ASSERT_EQ(vm_set(kvm, "test", 64, KVM_PREFETCH_GUP_FAST_ONLY), 0);
	ASSERT_PTR_NE(vm_state(kvm), old);
	ASSERT_PTR_EQ(vm_state(kvm)->ops, &test_ops);
	ASSERT_PTR_EQ(vm_state(kvm)->kvm, kvm);
	ASSERT_EQ(rec.init_calls, 1);
	ASSERT_EQ(test_mod.refcnt, 1);
	/* auto's reference went with the old state. */
	ASSERT_EQ(shim_this_module.refcnt, 0);
	EXPECT_VM_POLICY(kvm, "test", 64, KVM_PREFETCH_GUP_FAST_ONLY);
}

TEST(set_frees_old_state_after_grace_period)
{
	struct kvm *kvm = vm_create();
	struct kvm_prefetch_state *old;

	ASSERT_EQ(kvm_prefetch_register(&test_ops), 0);
	ASSERT_EQ(vm_set(kvm, "test", 0, 0), 0);
	old = vm_state(kvm);
	ASSERT_EQ(vm_set(kvm, "manual", 0, 0), 0);
	ASSERT_EQ(rec.release_calls, 1);
	ASSERT_PTR_EQ(rec.released, old);
	ASSERT_FALSE(rec.released_while_published);
	/* A grace period passed between unpublishing and release(). */
	ASSERT_TRUE(rec.release_gp > rec.release_publish_gp);
	/* The module was still referenced while its release() ran. */
	ASSERT_EQ(rec.release_module_refcnt, 1);
	ASSERT_EQ(test_mod.refcnt, 0);
	ASSERT_EQ(shim_this_module.refcnt, 1);
	ASSERT_EQ(shim.allocs, 1);
}

TEST(set_identical_is_noop)
{
	struct kvm *kvm;
	struct kvm_prefetch_state *st;

	ASSERT_EQ(kvm_prefetch_register(&test_ops), 0);
	kvm = vm_create();
	ASSERT_EQ(vm_set(kvm, "test", 32, KVM_PREFETCH_GUP_NOFAULT), 0);
	st = vm_state(kvm);
	shim.grace_periods = 0;
	ASSERT_EQ(vm_set(kvm, "test", 32, KVM_PREFETCH_GUP_NOFAULT), 0);
	ASSERT_PTR_EQ(vm_state(kvm), st);
	ASSERT_EQ(shim.grace_periods, 0);
	ASSERT_EQ(rec.init_calls, 1);
	ASSERT_EQ(rec.release_calls, 0);
	ASSERT_EQ(test_mod.refcnt, 1);

	/* Any difference is a change. */
	ASSERT_EQ(vm_set(kvm, "test", 33, KVM_PREFETCH_GUP_NOFAULT), 0);
	ASSERT_PTR_NE(vm_state(kvm), st);
	st = vm_state(kvm);
	ASSERT_EQ(vm_set(kvm, "test", 33, KVM_PREFETCH_GUP_FAST_ONLY), 0);
	ASSERT_PTR_NE(vm_state(kvm), st);
	ASSERT_EQ(rec.release_calls, 2);
}

TEST(set_zero_means_defaults_at_call_time)
{
	struct kvm *kvm = vm_create();
	struct kvm_prefetch_state *st = vm_state(kvm);

	/* The VM's own defaults: nothing to do. */
	ASSERT_EQ(vm_set(kvm, "none", 0, 0), 0);
	ASSERT_PTR_EQ(vm_state(kvm), st);

	ASSERT_EQ(param_set("prefetch_nr_pages", "128"), 0);
	ASSERT_EQ(param_set("prefetch_gup", "fast"), 0);
	ASSERT_EQ(vm_set(kvm, "auto", 0, 0), 0);
	EXPECT_VM_POLICY(kvm, "auto", 128, KVM_PREFETCH_GUP_FAST_ONLY);

	/* Later default changes do not follow. */
	ASSERT_EQ(param_set("prefetch_nr_pages", "4"), 0);
	ASSERT_EQ(vm_get(kvm).nr_pages, 128);
}

/* ---- KVM_GET_PREFETCH_POLICY ---------------------------------------- */

TEST(get_fills_everything)
{
	struct kvm *kvm = vm_create();
	struct kvm_prefetch_policy p;

	ASSERT_EQ(vm_set(kvm, "manual", 100, KVM_PREFETCH_GUP_FAST_ONLY), 0);
	p = vm_get(kvm);	/* over a buffer of 0xff */
	ASSERT_STREQ(p.name, "manual");
	ASSERT_TRUE(memchr_inv(p.name + 6, 0, sizeof(p.name) - 6) == NULL);
	ASSERT_EQ(p.nr_pages, 100);
	ASSERT_EQ(p.gup, KVM_PREFETCH_GUP_FAST_ONLY);
	ASSERT_EQ(p.flags, 0);
	ASSERT_EQ(p.pad, 0);
	ASSERT_TRUE(memchr_inv(p.reserved, 0, sizeof(p.reserved)) == NULL);
	/* What GET returns is a valid SET argument. */
	ASSERT_EQ(kvm_prefetch_policy_check(&p), 0);
}

TEST(get_values_never_zero)
{
	struct kvm *kvm;

	ASSERT_EQ(param_set("prefetch_nr_pages", "0"), 0);
	kvm = vm_create();
	EXPECT_VM_POLICY(kvm, "none", 1, KVM_PREFETCH_GUP_NOFAULT);
	ASSERT_EQ(vm_set(kvm, "auto", 0, 0), 0);
	EXPECT_VM_POLICY(kvm, "auto", 1, KVM_PREFETCH_GUP_NOFAULT);
	ASSERT_EQ(vm_set(kvm, "none", 0, 0), 0);
	EXPECT_VM_POLICY(kvm, "none", 1, KVM_PREFETCH_GUP_NOFAULT);
	ASSERT_EQ(vm_set(kvm, "none", 1, KVM_PREFETCH_GUP_FAST_ONLY), 0);
	EXPECT_VM_POLICY(kvm, "none", 1, KVM_PREFETCH_GUP_FAST_ONLY);
}

/*
 * Setting back what GET returned changes nothing, so it is the no-op the
 * uAPI promises: no new state, no grace period, no init()/release().
 */
TEST(set_what_get_returned_is_noop)
{
	static const char *const windows[] = { "8", "1", "0" };
	size_t i;

	for (i = 0; i < ARRAY_SIZE(windows); i++) {
		struct kvm_prefetch_state *st;
		struct kvm_prefetch_policy p;
		struct kvm *kvm;

		ASSERT_EQ(param_set("prefetch_nr_pages", windows[i]), 0);
		kvm = vm_create();
		st = vm_state(kvm);
		p = vm_get(kvm);
		shim.grace_periods = 0;
		ASSERT_EQ(kvm_prefetch_vm_ioctl(kvm, KVM_SET_PREFETCH_POLICY, &p), 0);
		if (vm_state(kvm) != st || shim.grace_periods)
			test_fail(__FILE__, __LINE__,
				  "prefetch_nr_pages=%s: SET of GET's %s/%u/%u replaced the state",
				  windows[i], p.name, p.nr_pages, p.gup);
		vm_destroy(kvm);
	}
}

/* ---- debugfs and GUP mode ------------------------------------------- */

TEST(debugfs_file)
{
	static struct dentry dir = { "1234-5" };
	struct kvm *kvm = vm_create();
	char buf[128];

	kvm->debugfs_dentry = &dir;
	kvm_prefetch_vm_debugfs(kvm);
	ASSERT_EQ(shim.nr_debugfs, 1);
	ASSERT_STREQ(shim.debugfs[0].name, "prefetch_policy");
	ASSERT_EQ(shim.debugfs[0].mode, 0444);
	ASSERT_PTR_EQ(shim.debugfs[0].parent, &dir);
	ASSERT_PTR_EQ(shim.debugfs[0].data, kvm);

	ASSERT_EQ(shim_debugfs_read(0, buf, sizeof(buf)), 0);
	ASSERT_STREQ(buf, "none nr_pages=8 gup=nofault\n");
	ASSERT_EQ(vm_set(kvm, "manual", 3, KVM_PREFETCH_GUP_FAST_ONLY), 0);
	ASSERT_EQ(shim_debugfs_read(0, buf, sizeof(buf)), 0);
	ASSERT_STREQ(buf, "manual nr_pages=3 gup=fast\n");
	ASSERT_EQ(vm_set(kvm, "none", 1, 0), 0);
	ASSERT_EQ(shim_debugfs_read(0, buf, sizeof(buf)), 0);
	ASSERT_STREQ(buf, "none nr_pages=1 gup=nofault\n");
}

TEST(debugfs_without_directory)
{
	struct kvm *kvm = vm_create();

	kvm->debugfs_dentry = NULL;
	kvm_prefetch_vm_debugfs(kvm);
	kvm->debugfs_dentry = ERR_PTR(-ENOENT);
	kvm_prefetch_vm_debugfs(kvm);
	ASSERT_EQ(shim.nr_debugfs, 0);
}

TEST(vm_gup_mode)
{
	struct kvm *kvm = vm_create();
	struct kvm kvm_without;

	ASSERT_EQ(kvm_prefetch_vm_gup(kvm), KVM_PREFETCH_GUP_NOFAULT);
	ASSERT_EQ(vm_set(kvm, "auto", 0, KVM_PREFETCH_GUP_FAST_ONLY), 0);
	ASSERT_EQ(kvm_prefetch_vm_gup(kvm), KVM_PREFETCH_GUP_FAST_ONLY);
	/* Without a state only the lockless path is safe. */
	memset(&kvm_without, 0, sizeof(kvm_without));
	ASSERT_EQ(kvm_prefetch_vm_gup(&kvm_without), KVM_PREFETCH_GUP_FAST_ONLY);
}

int main(void)
{
	return test_run_all(setup, teardown);
}
