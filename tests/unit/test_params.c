// SPDX-License-Identifier: GPL-2.0
/*
 * The module parameters of kvm.ko that hold the defaults of new VMs:
 * prefetch_policy (at load time and through sysfs), prefetch_nr_pages,
 * prefetch_gup and prefetch_available.  Tests start before
 * kvm_prefetch_init(), as kvm.ko's parameters are parsed; boot() runs it.
 */
#include "prefetch_internal.h"
#include "../../kvm-policy/prefetch.c"
#include "../../kvm-policy/prefetch_vm.c"
#include "test.h"
#include "fixtures.h"

static void setup(void)
{
	fixture_setup(false);
}

static void teardown(void)
{
	vms_destroy_all();
	registry_reset();
}

static void boot(void)
{
	if (kvm_prefetch_init())
		test_fail(__FILE__, __LINE__, "kvm_prefetch_init() failed");
}

/*
 * Set parameter @name to @keep, then each of @bad: every one fails with
 * -EINVAL and the parameter still shows @keep.
 */
static void expect_rejected(const char *name, const char *keep,
			    const char *const *bad, size_t nr_bad, int line)
{
	char shown[64];
	size_t i;

	if (param_set(name, keep))
		test_fail(__FILE__, line, "%s=%s rejected", name, keep);
	for (i = 0; i < nr_bad; i++)
		if (param_set(name, bad[i]) != -EINVAL)
			test_fail(__FILE__, line, "%s=\"%s\" not -EINVAL", name,
				  test_escape(bad[i]));
	snprintf(shown, sizeof(shown), "%s\n", keep);
	if (strcmp(param_get(name), shown))
		test_fail(__FILE__, line, "%s shows %s", name, param_get(name));
}
#define EXPECT_REJECTED(name, keep, bad) \
	expect_rejected(name, keep, bad, ARRAY_SIZE(bad), __LINE__)

/* Opt-in: the compiled-in policy never opens a window. */
TEST(compiled_defaults)
{
	ASSERT_STREQ(param_get("prefetch_policy"), "none\n");
	ASSERT_STREQ(param_get("prefetch_nr_pages"), "8\n");
	ASSERT_STREQ(param_get("prefetch_gup"), "nofault\n");
	ASSERT_EQ(kvm_prefetch_default_nr_pages(), 8);
	ASSERT_EQ(kvm_prefetch_default_gup(), KVM_PREFETCH_GUP_NOFAULT);
	boot();
	ASSERT_STREQ(param_get("prefetch_policy"), "none\n");
	ASSERT_EQ(shim.nr_log[SHIM_LOG_WARN], 0);
	ASSERT_TRUE(kvm_prefetch_never_opens(kvm_prefetch_get_default()));
	kvm_prefetch_put_policy(&prefetch_none);
	/* A new VM's faults skip the policy, as with the stock kvm.ko. */
	ASSERT_FALSE(kvm_prefetch_may_open(vm_create()));
}

/* ---- prefetch_policy through sysfs ---------------------------------- */

TEST(policy_set_builtin)
{
	const struct kvm_prefetch_ops *ops;

	boot();
	ASSERT_EQ(param_set("prefetch_policy", "manual"), 0);
	ASSERT_STREQ(param_get("prefetch_policy"), "manual\n");
	ops = kvm_prefetch_get_default();
	ASSERT_PTR_EQ(ops, &prefetch_manual);
	kvm_prefetch_put_policy(ops);
	/* The setter's lookup reference was dropped. */
	ASSERT_EQ(shim_this_module.refcnt, 0);
}

TEST(policy_set_trailing_newline)
{
	boot();
	ASSERT_EQ(param_set("prefetch_policy", "async\n"), 0);
	ASSERT_STREQ(param_get("prefetch_policy"), "async\n");
	ASSERT_STREQ(prefetch_default_name, "async");
}

TEST(policy_set_unknown_enoent)
{
	boot();
	ASSERT_EQ(param_set("prefetch_policy", "manual"), 0);
	ASSERT_EQ(param_set("prefetch_policy", "nosuch"), -ENOENT);
	ASSERT_EQ(param_set("prefetch_policy", "nosuch\n"), -ENOENT);
	ASSERT_STREQ(param_get("prefetch_policy"), "manual\n");
	ASSERT_EQ(shim.request_module_calls, 0);

	/* Privileged: autoload is tried, still nothing. */
	shim.caps = 1ULL << CAP_SYS_MODULE;
	ASSERT_EQ(param_set("prefetch_policy", "nosuch\n"), -ENOENT);
	ASSERT_EQ(shim.request_module_calls, 1);
	ASSERT_STREQ(shim.request_module_name, "kvm-prefetch-nosuch");
	ASSERT_STREQ(param_get("prefetch_policy"), "manual\n");
}

TEST(policy_set_autoloads)
{
	boot();
	shim.caps = 1ULL << CAP_SYS_MODULE;
	shim.request_module_hook = autoload_hook;
	ASSERT_EQ(param_set("prefetch_policy", "other\n"), 0);
	ASSERT_STREQ(shim.request_module_name, "kvm-prefetch-other");
	ASSERT_STREQ(param_get("prefetch_policy"), "other\n");
	/* The default is a name: it does not pin the module. */
	ASSERT_EQ(other_mod.refcnt, 0);
}

TEST(policy_set_malformed_einval)
{
	static const char *const bad[] = {
		"", "\n", "Auto", "AUTO\n", "a b", " auto", "auto ", "au.to",
		"abcdefghijklmnop", "abcdefghijklmnop\n", "abcdefghijklmnopqrstu",
		"\t", "../x",
	};

	boot();
	shim.caps = 1ULL << CAP_SYS_MODULE;
	EXPECT_REJECTED("prefetch_policy", "none", bad);
	/* A malformed name never reaches modprobe. */
	ASSERT_EQ(shim.request_module_calls, 0);
}

TEST(policy_set_going_ebusy)
{
	boot();
	ASSERT_EQ(kvm_prefetch_register(&test_ops), 0);
	test_mod.going = true;
	ASSERT_EQ(param_set("prefetch_policy", "test"), -EBUSY);
	ASSERT_STREQ(param_get("prefetch_policy"), "none\n");
}

TEST(policy_set_module_policy)
{
	boot();
	ASSERT_EQ(kvm_prefetch_register(&test_ops), 0);
	ASSERT_EQ(param_set("prefetch_policy", "test\n"), 0);
	ASSERT_STREQ(param_get("prefetch_policy"), "test\n");
	ASSERT_EQ(test_mod.refcnt, 0);
}

/* ---- prefetch_policy at load time ----------------------------------- */

/*
 * prefetch_policy=@val given as kvm.ko loads, stored unchecked (nothing is
 * registered yet): init makes it @policy, with @warnings warnings naming
 * @val and the fallback.  No module can be loaded before kvm.ko's init,
 * so nothing is autoloaded, not even for a privileged loader, and a
 * module's policy falls back.
 */
static const struct load_case {
	const char *name, *val, *policy;
	int warnings;
} load_cases[] = {
	{ "policy_load_time_valid", "manual", "manual", 0 },
	/*
	 * A sysfs write between loading and init (the parameter files exist
	 * before kvm.ko's init runs) carries a newline; new VMs get the name.
	 */
	{ "policy_load_time_newline", "async\n", "async", 0 },
	{ "policy_load_time_unknown_falls_back", "nosuch", "none", 1 },
	{ "policy_load_time_malformed_falls_back", "Bad Name", "none", 1 },
	{ "policy_load_time_module_policy_falls_back", "other", "none", 1 },
};

TEST_TABLE(check_load_time, load_cases)
{
	const struct kvm_prefetch_ops *ops;
	char shown[KVM_PREFETCH_POLICY_NAME_MAX + 1];

	shim.caps = 1ULL << CAP_SYS_MODULE;
	shim.request_module_hook = autoload_hook;
	ASSERT_EQ(param_set("prefetch_policy", row->val), 0);
	ASSERT_EQ(shim.request_module_calls, 0);
	boot();
	snprintf(shown, sizeof(shown), "%s\n", row->policy);
	ASSERT_STREQ(param_get("prefetch_policy"), shown);
	ops = kvm_prefetch_get_default();
	kvm_prefetch_put_policy(ops);
	ASSERT_STREQ(ops->name, row->policy);
	ASSERT_EQ(shim.nr_log[SHIM_LOG_WARN], row->warnings);
	if (row->warnings) {
		ASSERT_TRUE(shim_log_has(row->val));
		ASSERT_TRUE(shim_log_has(row->policy));
	}
	ASSERT_EQ(shim.request_module_calls, 0);
	ASSERT_EQ(shim_this_module.refcnt, 0);
}

/* ---- prefetch_nr_pages ---------------------------------------------- */

TEST(nr_pages_valid)
{
	static const struct {
		const char *val, *shown;
		unsigned int n;
	} ok[] = {
		{ "0", "0\n", 0 }, { "1", "1\n", 1 }, { "2", "2\n", 2 },
		{ "3\n", "3\n", 3 }, { "512", "512\n", 512 },
		{ "262144", "262144\n", 262144 },
		{ "262144\n", "262144\n", 262144 },
		{ "0x10", "16\n", 16 }, { "+5", "5\n", 5 },
	};
	size_t i;

	for (i = 0; i < ARRAY_SIZE(ok); i++) {
		if (param_set("prefetch_nr_pages", ok[i].val))
			test_fail(__FILE__, __LINE__, "\"%s\" rejected",
				  test_escape(ok[i].val));
		ASSERT_STREQ(param_get("prefetch_nr_pages"), ok[i].shown);
		ASSERT_EQ(kvm_prefetch_default_nr_pages(), ok[i].n);
	}
}

TEST(nr_pages_invalid)
{
	static const char *const bad[] = {
		"262145", "262145\n", "-1", "abc", "", "\n", "8 ", " 8", "8x",
		"4294967296", "99999999999999999999", "1e3",
	};

	EXPECT_REJECTED("prefetch_nr_pages", "32", bad);
	ASSERT_EQ(kvm_prefetch_default_nr_pages(), 32);
}

/* ---- prefetch_gup --------------------------------------------------- */

TEST(gup_valid)
{
	ASSERT_EQ(param_set("prefetch_gup", "fast"), 0);
	ASSERT_STREQ(param_get("prefetch_gup"), "fast\n");
	ASSERT_EQ(kvm_prefetch_default_gup(), KVM_PREFETCH_GUP_FAST_ONLY);
	ASSERT_EQ(param_set("prefetch_gup", "nofault\n"), 0);
	ASSERT_STREQ(param_get("prefetch_gup"), "nofault\n");
	ASSERT_EQ(kvm_prefetch_default_gup(), KVM_PREFETCH_GUP_NOFAULT);
	ASSERT_EQ(param_set("prefetch_gup", "fast\n"), 0);
	ASSERT_EQ(kvm_prefetch_default_gup(), KVM_PREFETCH_GUP_FAST_ONLY);
}

TEST(gup_invalid)
{
	static const char *const bad[] = {
		"", "\n", "FAST", "slow", "fast\n\n", "fast ", " fast", "1", "2",
		"0", "nofaul", "nofaults", "default",
	};

	EXPECT_REJECTED("prefetch_gup", "fast", bad);
}

TEST(gup_names)
{
	ASSERT_STREQ(kvm_prefetch_gup_name(KVM_PREFETCH_GUP_NOFAULT), "nofault");
	ASSERT_STREQ(kvm_prefetch_gup_name(KVM_PREFETCH_GUP_FAST_ONLY), "fast");
}

/* ---- prefetch_available --------------------------------------------- */

TEST(available_lists_in_registration_order)
{
	ASSERT_STREQ(param_get("prefetch_available"), "\n");
	boot();
	ASSERT_STREQ(param_get("prefetch_available"), "none manual async auto\n");
	ASSERT_EQ(kvm_prefetch_register(&test_ops), 0);
	ASSERT_EQ(kvm_prefetch_register(&other_ops), 0);
	ASSERT_STREQ(param_get("prefetch_available"),
		     "none manual async auto test other\n");
	kvm_prefetch_unregister(&test_ops);
	ASSERT_STREQ(param_get("prefetch_available"),
		     "none manual async auto other\n");
	kvm_prefetch_unregister(&other_ops);
	kvm_prefetch_exit();
	ASSERT_STREQ(param_get("prefetch_available"), "\n");
}

TEST(available_is_read_only)
{
	const struct kernel_param *kp = shim_param("prefetch_available");

	ASSERT_TRUE(kp != NULL);
	ASSERT_TRUE(kp->ops->set == NULL);
	ASSERT_EQ(kp->perm, 0444);
	ASSERT_EQ(shim_param("prefetch_policy")->perm, 0644);
	ASSERT_EQ(shim_param("prefetch_nr_pages")->perm, 0644);
	ASSERT_EQ(shim_param("prefetch_gup")->perm, 0644);
}

/* ---- defaults and VMs ----------------------------------------------- */

TEST(defaults_apply_to_new_vms_only)
{
	struct kvm *before, *after;

	boot();
	before = vm_create();
	ASSERT_EQ(param_set("prefetch_policy", "manual"), 0);
	ASSERT_EQ(param_set("prefetch_nr_pages", "64"), 0);
	ASSERT_EQ(param_set("prefetch_gup", "fast"), 0);
	after = vm_create();

	EXPECT_VM_POLICY(before, "none", 8, KVM_PREFETCH_GUP_NOFAULT);
	EXPECT_VM_POLICY(after, "manual", 64, KVM_PREFETCH_GUP_FAST_ONLY);
}

int main(void)
{
	return test_run_all(setup, teardown);
}
