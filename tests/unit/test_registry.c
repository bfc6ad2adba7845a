// SPDX-License-Identifier: GPL-2.0
/*
 * The policy registry of kvm-policy/prefetch.c: registration and its
 * validation, unregistration, lookups with their module references and
 * autoload, and the built-ins' init and exit.
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

static void set_name(struct kvm_prefetch_ops *ops, const char *name, size_t len)
{
	memset(ops->name, 0, sizeof(ops->name));
	memcpy(ops->name, name, len);
}

TEST(init_registers_builtins_in_order)
{
	static const char *const names[] = { "none", "manual", "async", "auto" };
	const struct kvm_prefetch_ops *ops;
	int i = 0;

	ASSERT_TRUE(prefetch_ready);
	ASSERT_EQ(nr_registered(), 4);
	list_for_each_entry(ops, &prefetch_policies, list) {
		ASSERT_STREQ(ops->name, names[i]);
		ASSERT_PTR_EQ(ops->owner, THIS_MODULE);
		ASSERT_TRUE(ops->window != NULL);
		i++;
	}
	ASSERT_STREQ(prefetch_default_name, "none");
}

TEST(register_valid)
{
	ASSERT_EQ(kvm_prefetch_register(&test_ops), 0);
	ASSERT_TRUE(registered(&test_ops));
	ASSERT_EQ(nr_registered(), 5);
	/* Added at the tail: the listing order is the registration order. */
	ASSERT_PTR_EQ(list_entry(prefetch_policies.prev, struct kvm_prefetch_ops,
				 list), &test_ops);
	ASSERT_EQ(shim.nr_log[SHIM_LOG_ERR] + shim.nr_log[SHIM_LOG_NOTICE], 0);
	/* Registration takes no module reference. */
	ASSERT_EQ(test_mod.refcnt, 0);
	ASSERT_EQ(shim.spin_depth, 0);
}

TEST(register_duplicate_eexist)
{
	ASSERT_EQ(kvm_prefetch_register(&test_ops), 0);
	set_name(&other_ops, "test", 4);
	ASSERT_EQ(kvm_prefetch_register(&other_ops), -EEXIST);
	ASSERT_FALSE(registered(&other_ops));
	ASSERT_TRUE(registered(&test_ops));
	ASSERT_TRUE(shim_log_has("test"));

	/* A built-in's name is taken too. */
	set_name(&other_ops, "auto", 4);
	ASSERT_EQ(kvm_prefetch_register(&other_ops), -EEXIST);
	ASSERT_FALSE(registered(&other_ops));
	ASSERT_EQ(nr_registered(), 5);
	/* The original keeps working. */
	ASSERT_PTR_EQ(kvm_prefetch_get_policy("auto"), &prefetch_auto);
	kvm_prefetch_put_policy(&prefetch_auto);
}

TEST(register_missing_window_einval)
{
	test_ops.window = NULL;
	ASSERT_EQ(kvm_prefetch_register(&test_ops), -EINVAL);
	ASSERT_FALSE(registered(&test_ops));
	ASSERT_EQ(nr_registered(), 4);
	ASSERT_EQ(shim.nr_log[SHIM_LOG_ERR], 1);
	ASSERT_TRUE(shim_log_has("window"));

	/* init and release are optional. */
	test_ops = test_ops_template;
	test_ops.init = NULL;
	test_ops.release = NULL;
	ASSERT_EQ(kvm_prefetch_register(&test_ops), 0);
}

TEST(register_bad_names_einval)
{
	static const struct {
		const char *name;
		size_t len;
	} bad[] = {
		{ "", 0 },			/* empty */
		{ "abcdefghijklmnop", 16 },	/* 16 chars, no NUL */
		{ "Upper", 5 },
		{ "AUTO", 4 },
		{ "a b", 3 },			/* space */
		{ "dot.name", 8 },
		{ "slash/x", 7 },
		{ "tab\t", 4 },
		{ "new\nline", 8 },
		{ "pct%s", 5 },
		{ "auto ", 5 },
	};
	size_t i;

	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		set_name(&test_ops, bad[i].name, bad[i].len);
		if (kvm_prefetch_register(&test_ops) != -EINVAL)
			test_fail(__FILE__, __LINE__, "name \"%s\" not rejected",
				  test_escape(bad[i].name));
		ASSERT_FALSE(registered(&test_ops));
	}
	ASSERT_EQ(shim.nr_log[SHIM_LOG_ERR], (int)ARRAY_SIZE(bad));
	ASSERT_EQ(nr_registered(), 4);
}

/*
 * The kernel's islower() classifies Latin-1 (0xdf-0xff but 0xf7 are lower
 * case), so it alone does not restrict a name to [a-z0-9_-].
 */
TEST(register_non_ascii_name_einval)
{
	static const char *const bad[] = { "caf\xe9", "\xdf", "stra\xdf" "e",
					   "\xff", "ab\xe0" };
	size_t i;

	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		set_name(&test_ops, bad[i], strlen(bad[i]));
		if (kvm_prefetch_register(&test_ops) != -EINVAL) {
			if (registered(&test_ops))
				kvm_prefetch_unregister(&test_ops);
			test_fail(__FILE__, __LINE__,
				  "name \"%s\" accepted, not [a-z0-9_-]",
				  test_escape(bad[i]));
		}
	}
}

TEST(register_good_names)
{
	static const char *const good[] = {
		"a", "0", "abcdefghijklmno" /* 15 */, "x-y_z09", "-", "_",
	};
	size_t i;

	for (i = 0; i < ARRAY_SIZE(good); i++) {
		set_name(&test_ops, good[i], strlen(good[i]));
		if (kvm_prefetch_register(&test_ops))
			test_fail(__FILE__, __LINE__, "name \"%s\" rejected",
				  good[i]);
		ASSERT_TRUE(registered(&test_ops));
		kvm_prefetch_unregister(&test_ops);
	}
}

TEST(name_valid_size)
{
	ASSERT_TRUE(kvm_prefetch_name_valid("abc", 4));
	ASSERT_TRUE(kvm_prefetch_name_valid("abc", 16));
	ASSERT_TRUE(kvm_prefetch_name_valid("abc", 100));
	/* Not NUL-terminated within size. */
	ASSERT_FALSE(kvm_prefetch_name_valid("abc", 3));
	ASSERT_FALSE(kvm_prefetch_name_valid("abcdefghijklmno", 15));
	ASSERT_TRUE(kvm_prefetch_name_valid("abcdefghijklmno", 16));
	/* 16 characters never fit, whatever the buffer. */
	ASSERT_FALSE(kvm_prefetch_name_valid("abcdefghijklmnop", 17));
	ASSERT_FALSE(kvm_prefetch_name_valid("", 16));
}

static int gp_hook_calls;
static bool gp_hook_saw_registered;

static void gp_hook(void)
{
	gp_hook_calls++;
	gp_hook_saw_registered = registered(&test_ops);
}

TEST(unregister_unlinks_then_waits_for_readers)
{
	ASSERT_EQ(kvm_prefetch_register(&test_ops), 0);
	gp_hook_calls = 0;
	shim.synchronize_rcu_hook = gp_hook;
	kvm_prefetch_unregister(&test_ops);
	ASSERT_EQ(gp_hook_calls, 1);
	ASSERT_FALSE(gp_hook_saw_registered);
	ASSERT_EQ(shim.grace_periods, 1);
	ASSERT_FALSE(registered(&test_ops));
	ASSERT_ERR_PTR(kvm_prefetch_get_policy("test"), ENOENT);
	ASSERT_EQ(nr_registered(), 4);
	/* It may come back (module reloaded). */
	ASSERT_EQ(kvm_prefetch_register(&test_ops), 0);
}

TEST(unregister_default_resets_to_none)
{
	ASSERT_EQ(kvm_prefetch_register(&test_ops), 0);
	ASSERT_EQ(param_set("prefetch_policy", "test"), 0);
	ASSERT_STREQ(param_get("prefetch_policy"), "test\n");
	kvm_prefetch_unregister(&test_ops);
	ASSERT_STREQ(param_get("prefetch_policy"), "none\n");
	ASSERT_EQ(shim.nr_log[SHIM_LOG_WARN], 1);
	ASSERT_TRUE(shim_log_has("test"));
	ASSERT_TRUE(shim_log_has("use none"));
	/* New VMs get none. */
	ASSERT_PTR_EQ(kvm_prefetch_get_default(), &prefetch_none);
	kvm_prefetch_put_policy(&prefetch_none);
}

TEST(unregister_other_keeps_default)
{
	ASSERT_EQ(kvm_prefetch_register(&test_ops), 0);
	ASSERT_EQ(param_set("prefetch_policy", "manual"), 0);
	kvm_prefetch_unregister(&test_ops);
	ASSERT_STREQ(param_get("prefetch_policy"), "manual\n");
	ASSERT_EQ(shim.nr_log[SHIM_LOG_WARN], 0);
}

TEST(unregister_while_referenced)
{
	struct kvm *kvm;

	ASSERT_EQ(kvm_prefetch_register(&test_ops), 0);
	kvm = vm_create();
	ASSERT_EQ(vm_set(kvm, "test", 0, 0), 0);
	/* The VM's state holds the module: rmmod must fail. */
	ASSERT_EQ(test_mod.refcnt, 1);
	ASSERT_EQ(shim_module_unload(&test_mod, test_mod_exit), -EWOULDBLOCK);
	ASSERT_TRUE(registered(&test_ops));

	vm_destroy(kvm);
	ASSERT_EQ(test_mod.refcnt, 0);
	ASSERT_EQ(rec.release_calls, 1);
	ASSERT_EQ(shim_module_unload(&test_mod, test_mod_exit), 0);
	ASSERT_FALSE(registered(&test_ops));
	ASSERT_EQ(shim_this_module.refcnt, 0);
}

TEST(default_policy_does_not_pin_module)
{
	struct kvm *kvm;

	ASSERT_EQ(kvm_prefetch_register(&test_ops), 0);
	ASSERT_EQ(param_set("prefetch_policy", "test"), 0);
	ASSERT_EQ(test_mod.refcnt, 0);
	kvm = vm_create();
	ASSERT_PTR_EQ(vm_state(kvm)->ops, &test_ops);
	ASSERT_EQ(test_mod.refcnt, 1);
	vm_destroy(kvm);
	ASSERT_EQ(test_mod.refcnt, 0);
	/* Unloading the default's module is allowed; the default moves. */
	ASSERT_EQ(shim_module_unload(&test_mod, test_mod_exit), 0);
	ASSERT_STREQ(prefetch_default_name, "none");
}

TEST(get_put_balance)
{
	const struct kvm_prefetch_ops *a, *b;

	ASSERT_EQ(kvm_prefetch_register(&test_ops), 0);
	a = kvm_prefetch_get_policy("test");
	ASSERT_PTR_EQ(a, &test_ops);
	ASSERT_EQ(test_mod.refcnt, 1);
	b = kvm_prefetch_get_policy("test");
	ASSERT_PTR_EQ(b, &test_ops);
	ASSERT_EQ(test_mod.refcnt, 2);
	kvm_prefetch_put_policy(a);
	kvm_prefetch_put_policy(b);
	ASSERT_EQ(test_mod.refcnt, 0);

	/* Built-ins pin kvm.ko itself. */
	a = kvm_prefetch_get_policy("manual");
	ASSERT_PTR_EQ(a, &prefetch_manual);
	ASSERT_EQ(shim_this_module.refcnt, 1);
	kvm_prefetch_put_policy(a);
	ASSERT_EQ(shim_this_module.refcnt, 0);
	ASSERT_EQ(shim.rcu_depth, 0);
}

TEST(get_unknown_enoent_without_cap_sys_module)
{
	/* Every capability but CAP_SYS_MODULE. */
	shim.caps = ~(1ULL << CAP_SYS_MODULE);
	shim.request_module_hook = autoload_hook;
	ASSERT_ERR_PTR(kvm_prefetch_get_policy("other"), ENOENT);
	ASSERT_EQ(shim.request_module_calls, 0);
	ASSERT_FALSE(registered(&other_ops));
	/* Asked, but without an audit record of the denial. */
	ASSERT_EQ(shim.last_capable, CAP_SYS_MODULE);
	ASSERT_EQ(shim.audited_capable_calls, 0);
}

TEST(get_autoloads_with_cap_sys_module)
{
	shim.caps = 1ULL << CAP_SYS_MODULE;
	shim.request_module_hook = autoload_hook;
	ASSERT_PTR_EQ(kvm_prefetch_get_policy("other"), &other_ops);
	ASSERT_EQ(autoload_ret, 0);
	ASSERT_EQ(shim.request_module_calls, 1);
	ASSERT_STREQ(shim.request_module_name, "kvm-prefetch-other");
	ASSERT_EQ(shim.last_capable, CAP_SYS_MODULE);
	ASSERT_EQ(shim.audited_capable_calls, 0);
	ASSERT_EQ(other_mod.refcnt, 1);
	kvm_prefetch_put_policy(&other_ops);
	ASSERT_EQ(other_mod.refcnt, 0);
}

TEST(get_autoload_finds_nothing_enoent)
{
	shim.caps = 1ULL << CAP_SYS_MODULE;
	shim.request_module_hook = autoload_hook;
	ASSERT_ERR_PTR(kvm_prefetch_get_policy("missing"), ENOENT);
	ASSERT_EQ(shim.request_module_calls, 1);
	ASSERT_STREQ(shim.request_module_name, "kvm-prefetch-missing");
}

TEST(get_registered_does_not_autoload)
{
	shim.caps = 1ULL << CAP_SYS_MODULE;
	ASSERT_PTR_EQ(kvm_prefetch_get_policy("async"), &prefetch_async);
	kvm_prefetch_put_policy(&prefetch_async);
	ASSERT_EQ(shim.request_module_calls, 0);
}

/*
 * A module whose init registered its policy and has not returned: nothing
 * may take a reference, since a failing init frees the module whatever
 * references it has.
 */
TEST(get_initialising_module_enoent)
{
	struct kvm *kvm = vm_create();

	shim.caps = 1ULL << CAP_SYS_MODULE;
	ASSERT_EQ(kvm_prefetch_register(&test_ops), 0);
	test_mod.state = MODULE_STATE_COMING;
	ASSERT_ERR_PTR(kvm_prefetch_get_policy("test"), ENOENT);
	ASSERT_EQ(vm_set(kvm, "test", 8, 0), -ENOENT);
	ASSERT_STREQ(vm_get(kvm).name, "none");
	ASSERT_EQ(param_set("prefetch_policy", "test"), -ENOENT);
	ASSERT_EQ(test_mod.refcnt, 0);
	ASSERT_EQ(rec.init_calls, 0);

	/* Its init returned 0: the module is live and the policy usable. */
	test_mod.state = MODULE_STATE_LIVE;
	ASSERT_EQ(vm_set(kvm, "test", 8, 0), 0);
	ASSERT_EQ(test_mod.refcnt, 1);
}

/*
 * The default is "test", whose module is then put in @state (or going):
 * new VMs get none, and no reference to the module is taken.
 */
static void default_falls_back(enum module_state state, bool going)
{
	const struct kvm_prefetch_ops *ops;

	ASSERT_EQ(kvm_prefetch_register(&test_ops), 0);
	ASSERT_EQ(param_set("prefetch_policy", "test"), 0);
	test_mod.state = state;
	test_mod.going = going;
	ops = kvm_prefetch_get_default();
	ASSERT_PTR_EQ(ops, &prefetch_none);
	ASSERT_EQ(test_mod.refcnt, 0);
	ASSERT_EQ(shim_this_module.refcnt, 1);
	kvm_prefetch_put_policy(ops);
}

TEST(default_initialising_module_falls_back)
{
	default_falls_back(MODULE_STATE_COMING, false);
}

/* kvm.ko's own policies are usable during kvm.ko's init. */
TEST(builtins_usable_while_kvm_initialises)
{
	const struct kvm_prefetch_ops *ops;

	shim_this_module.state = MODULE_STATE_COMING;
	ops = kvm_prefetch_get_policy("auto");
	ASSERT_PTR_EQ(ops, &prefetch_auto);
	kvm_prefetch_put_policy(ops);
}

TEST(get_going_module_ebusy)
{
	shim.caps = 1ULL << CAP_SYS_MODULE;
	ASSERT_EQ(kvm_prefetch_register(&test_ops), 0);
	test_mod.going = true;
	ASSERT_ERR_PTR(kvm_prefetch_get_policy("test"), EBUSY);
	ASSERT_EQ(test_mod.refcnt, 0);
	/* Going is not missing: no autoload. */
	ASSERT_EQ(shim.request_module_calls, 0);
}

TEST(get_default_is_referenced)
{
	const struct kvm_prefetch_ops *ops;

	ASSERT_EQ(param_set("prefetch_policy", "manual"), 0);
	ops = kvm_prefetch_get_default();
	ASSERT_PTR_EQ(ops, &prefetch_manual);
	ASSERT_EQ(shim_this_module.refcnt, 1);
	kvm_prefetch_put_policy(ops);
}

TEST(get_default_going_falls_back_to_none)
{
	default_falls_back(MODULE_STATE_LIVE, true);
}

TEST(init_failure_unwinds)
{
	registry_reset();
	/* A squatter on a built-in's name makes init fail half-way. */
	set_name(&other_ops, "async", 5);
	ASSERT_EQ(kvm_prefetch_register(&other_ops), 0);
	ASSERT_EQ(kvm_prefetch_init(), -EEXIST);
	ASSERT_FALSE(prefetch_ready);
	ASSERT_EQ(nr_registered(), 1);
	ASSERT_TRUE(registered(&other_ops));
	ASSERT_FALSE(registered(&prefetch_none));
	ASSERT_FALSE(registered(&prefetch_manual));
}

TEST(exit_unregisters_builtins)
{
	ASSERT_EQ(param_set("prefetch_policy", "manual"), 0);
	kvm_prefetch_exit();
	ASSERT_FALSE(prefetch_ready);
	ASSERT_EQ(nr_registered(), 0);
	ASSERT_TRUE(list_empty(&prefetch_policies));
	ASSERT_EQ(shim.grace_periods, 4);
	/* Unloading kvm.ko is not worth a warning about its default. */
	ASSERT_EQ(shim.nr_log[SHIM_LOG_WARN], 0);
}

int main(void)
{
	return test_run_all(setup, teardown);
}
