/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Fixtures for the tests of prefetch.c and prefetch_vm.c: policy modules
 * whose hooks record what the core did with them, VMs, the uAPI and the
 * module parameters as userspace reaches them, and a reset of the core's
 * static state between tests.
 *
 * Include after test.h, prefetch.c and prefetch_vm.c.
 */
#ifndef __UNIT_FIXTURES_H
#define __UNIT_FIXTURES_H

/* ---- policy modules ----------------------------------------------- */

/* What the "test" policy's hooks saw and what they answer. */
struct test_rec {
	/* answers */
	bool window_ret;
	bool window_nowrite;	/* return window_ret without writing @w */
	struct kvm_prefetch_window window_out;
	int init_ret;
	bool init_scribble;	/* init() also changes st->nr_pages */
	/* observations */
	int window_calls;
	struct kvm_prefetch_fault last_fault;
	int init_calls;
	int release_calls;
	const struct kvm_prefetch_state *released;
	bool released_while_published;
	unsigned long release_gp;	/* shim.grace_periods at release */
	unsigned long release_publish_gp; /* shim.publish_gp at release */
	int release_module_refcnt;	/* owner's refcnt at release */
};

static struct test_rec rec;
static struct module test_mod;
static struct module other_mod;

static bool test_window(const struct kvm_prefetch_state *st,
			const struct kvm_prefetch_fault *f,
			struct kvm_prefetch_window *w)
{
	if (!shim.rcu_depth)
		shim_violation(__FILE__, __LINE__, "window() outside rcu_read_lock()");
	rec.window_calls++;
	rec.last_fault = *f;
	if (rec.window_ret && !rec.window_nowrite)
		*w = rec.window_out;
	return rec.window_ret;
}

static int test_init(struct kvm_prefetch_state *st)
{
	shim_might_sleep("policy init()", __FILE__, __LINE__);
	rec.init_calls++;
	if (!rec.init_ret)
		st->priv = &rec;
	if (rec.init_scribble)
		st->nr_pages = 7;
	return rec.init_ret;
}

static void test_release(struct kvm_prefetch_state *st)
{
	shim_might_sleep("policy release()", __FILE__, __LINE__);
	rec.release_calls++;
	rec.released = st;
	rec.released_while_published = st->kvm && st->kvm->prefetch == st;
	rec.release_gp = shim.grace_periods;
	rec.release_publish_gp = shim.publish_gp;
	rec.release_module_refcnt = st->ops->owner ? st->ops->owner->refcnt : -1;
	if (st->priv != &rec)
		shim_violation(__FILE__, __LINE__, "release() of a state init() did not set up");
}

static const struct kvm_prefetch_ops test_ops_template = {
	.window = test_window, .init = test_init, .release = test_release,
	.name = "test", .owner = &test_mod,
};
static struct kvm_prefetch_ops test_ops;

/* A second policy of another module, for duplicates and autoload. */
static const struct kvm_prefetch_ops other_ops_template = {
	.window = test_window, .name = "other", .owner = &other_mod,
};
static struct kvm_prefetch_ops other_ops;

static inline void test_mod_exit(void)
{
	kvm_prefetch_unregister(&test_ops);
}

/* request_module() hook: "kvm-prefetch-other" loads other_mod. */
static int autoload_ret = 1;
static inline void autoload_hook(const char *name)
{
	if (!strcmp(name, "kvm-prefetch-other"))
		autoload_ret = kvm_prefetch_register(&other_ops);
}

static inline bool registered(const struct kvm_prefetch_ops *ops)
{
	const struct kvm_prefetch_ops *pos;

	list_for_each_entry(pos, &prefetch_policies, list)
		if (pos == ops)
			return true;
	return false;
}

static inline int nr_registered(void)
{
	const struct kvm_prefetch_ops *pos;
	int n = 0;

	list_for_each_entry(pos, &prefetch_policies, list)
		n++;
	return n;
}

/* ---- module parameters --------------------------------------------- */

static inline int param_set(const char *name, const char *val)
{
	const struct kernel_param *kp = shim_param(name);

	if (!kp || !kp->ops->set)
		test_fail(__FILE__, __LINE__, "no settable parameter %s", name);
	return kp->ops->set(val, kp);
}

static inline const char *param_get(const char *name)
{
	static char buf[PAGE_SIZE] __attribute__((aligned(PAGE_SIZE)));
	const struct kernel_param *kp = shim_param(name);
	int len;

	if (!kp || !kp->ops->get)
		test_fail(__FILE__, __LINE__, "no readable parameter %s", name);
	memset(buf, 0x5a, sizeof(buf));
	len = kp->ops->get(buf, kp);
	if (len < 0 || len >= (int)sizeof(buf))
		test_fail(__FILE__, __LINE__, "%s: get returned %d", name, len);
	if (buf[len] != '\0')
		test_fail(__FILE__, __LINE__, "%s: get returned %d, no NUL there",
			  name, len);
	return buf;
}

/* ---- the core's static state ---------------------------------------- */

/* prefetch.c's defaults as compiled, restored after each test. */
static char saved_default_name[KVM_PREFETCH_POLICY_NAME_MAX];
static unsigned int saved_nr_pages, saved_gup;

__attribute__((constructor)) static void save_defaults(void)
{
	memcpy(saved_default_name, prefetch_default_name,
	       sizeof(saved_default_name));
	saved_nr_pages = prefetch_nr_pages;
	saved_gup = prefetch_gup;
}

static inline void registry_reset(void)
{
	INIT_LIST_HEAD(&prefetch_policies);
	prefetch_lock.held = 0;
	prefetch_ready = false;
	memcpy(prefetch_default_name, saved_default_name,
	       sizeof(prefetch_default_name));
	prefetch_nr_pages = saved_nr_pages;
	prefetch_gup = saved_gup;
}

static inline void fixture_setup(bool init)
{
	test_mod = (struct module){ .name = "kvm_prefetch_test" };
	other_mod = (struct module){ .name = "kvm_prefetch_other" };
	shim_this_module.refcnt = 0;
	shim_this_module.going = false;
	shim_this_module.state = MODULE_STATE_LIVE;
	test_ops = test_ops_template;
	other_ops = other_ops_template;
	memset(&rec, 0, sizeof(rec));
	autoload_ret = 1;
	registry_reset();
	if (init && kvm_prefetch_init())
		test_fail(__FILE__, __LINE__, "kvm_prefetch_init() failed");
	/* init's own log is not the test's business */
	shim.log[0] = '\0';
	shim.log_len = 0;
	memset(shim.nr_log, 0, sizeof(shim.nr_log));
}

/* ---- VMs ------------------------------------------------------------ */

#define MAX_VMS	4
static struct kvm vms[MAX_VMS];
static bool vm_alive[MAX_VMS];

static inline struct kvm *vm_create(void)
{
	int i, ret;

	for (i = 0; i < MAX_VMS && vm_alive[i]; i++)
		;
	if (i == MAX_VMS)
		test_fail(__FILE__, __LINE__, "too many VMs");
	memset(&vms[i], 0, sizeof(vms[i]));
	ret = kvm_prefetch_vm_init(&vms[i]);
	if (ret)
		test_fail(__FILE__, __LINE__, "kvm_prefetch_vm_init(): %d", ret);
	vm_alive[i] = true;
	return &vms[i];
}

static inline void vm_destroy(struct kvm *kvm)
{
	int i = kvm - vms;

	kvm_prefetch_vm_destroy(kvm);
	vm_alive[i] = false;
}

static inline void vms_destroy_all(void)
{
	int i;

	for (i = 0; i < MAX_VMS; i++)
		if (vm_alive[i])
			vm_destroy(&vms[i]);
}

static inline struct kvm_prefetch_policy policy(const char *name, u32 nr_pages,
					 u32 gup)
{
	struct kvm_prefetch_policy p;

	memset(&p, 0, sizeof(p));
	strncpy(p.name, name, sizeof(p.name));
	p.nr_pages = nr_pages;
	p.gup = gup;
	return p;
}

static inline long vm_set(struct kvm *kvm, const char *name, u32 nr_pages, u32 gup)
{
	struct kvm_prefetch_policy p = policy(name, nr_pages, gup);

	return kvm_prefetch_vm_ioctl(kvm, KVM_SET_PREFETCH_POLICY, &p);
}

static inline struct kvm_prefetch_policy vm_get(struct kvm *kvm)
{
	struct kvm_prefetch_policy p;
	long ret;

	memset(&p, 0xff, sizeof(p));
	ret = kvm_prefetch_vm_ioctl(kvm, KVM_GET_PREFETCH_POLICY, &p);
	if (ret)
		test_fail(__FILE__, __LINE__, "KVM_GET_PREFETCH_POLICY: %ld", ret);
	return p;
}

/* KVM_GET_PREFETCH_POLICY on @kvm says @name, @nr_pages and @gup. */
static inline void expect_vm_policy(struct kvm *kvm, const char *name,
				    u32 nr_pages, u32 gup, int line)
{
	struct kvm_prefetch_policy p = vm_get(kvm);

	if (strcmp(p.name, name) || p.nr_pages != nr_pages || p.gup != gup)
		test_fail(__FILE__, line,
			  "policy %s nr_pages=%u gup=%u, want %s %u %u",
			  p.name, p.nr_pages, p.gup, name, nr_pages, gup);
}
#define EXPECT_VM_POLICY(kvm, name, nr_pages, gup) \
	expect_vm_policy(kvm, name, nr_pages, gup, __LINE__)

static inline struct kvm_prefetch_state *vm_state(struct kvm *kvm)
{
	return kvm->prefetch;
}

#endif /* __UNIT_FIXTURES_H */
