// SPDX-License-Identifier: GPL-2.0-only
/*
 * KVM prefetch policies: the registry, the built-in policies and the
 * defaults that new VMs start with (module parameters of kvm.ko).
 *
 * Policies live on an RCU list.  Writers (register, unregister, changing
 * the default) hold prefetch_lock; readers walk the list under
 * rcu_read_lock().  Every VM that uses a policy holds a reference on the
 * policy's module, so a module's exit path, which unregisters its policy,
 * only runs once no VM uses it.
 */
#define pr_fmt(fmt) "kvm-prefetch: " fmt

#include "prefetch_internal.h"

static DEFINE_SPINLOCK(prefetch_lock);
static LIST_HEAD(prefetch_policies);

/*
 * KVM_PREFETCH_FALLBACK, none, is registered as long as kvm.ko is.  It
 * never opens a window, so that kvm.ko loaded with default parameters
 * maps guest memory as the stock one does: prefetch is opt-in, through a
 * parameter (the kvm-prefetch package's modprobe.d file sets one) or
 * KVM_SET_PREFETCH_POLICY.
 */
#define PREFETCH_FALLBACK	KVM_PREFETCH_FALLBACK

/*
 * Defaults for new VMs.  The default policy is kept by name, not by
 * reference, so that it does not pin a policy module; a VM resolves it
 * when it is created.  prefetch_default_name is protected by prefetch_lock.
 */
static char prefetch_default_name[KVM_PREFETCH_POLICY_NAME_MAX] =
	PREFETCH_FALLBACK;
static unsigned int prefetch_nr_pages = 8;
static unsigned int prefetch_gup = KVM_PREFETCH_GUP_NOFAULT;

/* Set once the built-ins are registered; before that, parameters are stored. */
static bool prefetch_ready;

/**
 * kvm_prefetch_name_valid() - check a policy name
 * @name: the name
 * @size: bytes available at @name
 *
 * Return: true if @name is 1 to KVM_PREFETCH_POLICY_NAME_MAX - 1 characters
 * of [a-z0-9_-], NUL-terminated within @size bytes.
 */
bool kvm_prefetch_name_valid(const char *name, size_t size)
{
	size_t len = strnlen(name, min_t(size_t, size,
					 KVM_PREFETCH_POLICY_NAME_MAX));
	size_t i;

	if (!len || len == size || len >= KVM_PREFETCH_POLICY_NAME_MAX)
		return false;
	/* Not islower(): the kernel's ctype is Latin-1. */
	for (i = 0; i < len; i++) {
		char c = name[i];

		if (!(c >= 'a' && c <= 'z') && !(c >= '0' && c <= '9') &&
		    c != '_' && c != '-')
			return false;
	}
	return true;
}

/* Caller holds prefetch_lock or rcu_read_lock(). */
static struct kvm_prefetch_ops *__prefetch_find(const char *name)
{
	struct kvm_prefetch_ops *ops;

	list_for_each_entry_rcu(ops, &prefetch_policies, list,
				lockdep_is_held(&prefetch_lock)) {
		if (!strcmp(ops->name, name))
			return ops;
	}
	return NULL;
}

/**
 * kvm_prefetch_validate() - check a policy before it is registered
 * @ops: the policy
 *
 * Return: 0, or -EINVAL (and a message) for a bad name, a missing window()
 * hook or too large a default window.
 */
int kvm_prefetch_validate(const struct kvm_prefetch_ops *ops)
{
	if (!kvm_prefetch_name_valid(ops->name, sizeof(ops->name))) {
		pr_err("invalid policy name \"%.*s\"\n",
		       (int)sizeof(ops->name), ops->name);
		return -EINVAL;
	}
	if (!ops->window) {
		pr_err("policy %s lacks the required window() hook\n",
		       ops->name);
		return -EINVAL;
	}
	if (ops->default_nr_pages > KVM_PREFETCH_MAX_PAGES) {
		pr_err("policy %s: default window of %u pages is above %u\n",
		       ops->name, ops->default_nr_pages,
		       KVM_PREFETCH_MAX_PAGES);
		return -EINVAL;
	}
	return 0;
}

/**
 * kvm_prefetch_register() - make a prefetch policy available to VMs
 * @ops: the policy; must stay valid until kvm_prefetch_unregister()
 *
 * Until the owning module's init function has returned successfully, the
 * policy is listed but cannot be selected: lookups fail with -ENOENT, so
 * that a module whose init fails after registering leaves no user behind.
 * Such a module must still unregister the policy before its init returns.
 *
 * Context: process context; takes a spinlock.
 * Return: 0, -EINVAL if @ops has a bad name, lacks a required hook or
 * declares too large a default window, or -EEXIST if a policy of that name
 * is already registered.
 */
int kvm_prefetch_register(struct kvm_prefetch_ops *ops)
{
	int ret;

	ret = kvm_prefetch_validate(ops);
	if (ret)
		return ret;

	spin_lock(&prefetch_lock);
	if (__prefetch_find(ops->name)) {
		ret = -EEXIST;
	} else {
		list_add_tail_rcu(&ops->list, &prefetch_policies);
		pr_debug("%s registered\n", ops->name);
	}
	spin_unlock(&prefetch_lock);

	if (ret)
		pr_notice("policy %s already registered\n", ops->name);
	return ret;
}
EXPORT_SYMBOL_GPL(kvm_prefetch_register);

/**
 * kvm_prefetch_unregister() - withdraw a prefetch policy
 * @ops: a policy registered with kvm_prefetch_register()
 *
 * Called from the owning module's exit path, when no VM holds a reference
 * on the module and so none uses @ops.  If @ops was the default for new
 * VMs, the default becomes the fallback, "none".
 *
 * Context: process context; sleeps (waits for an RCU grace period).
 */
void kvm_prefetch_unregister(struct kvm_prefetch_ops *ops)
{
	bool was_default;

	spin_lock(&prefetch_lock);
	list_del_rcu(&ops->list);
	was_default = !strcmp(prefetch_default_name, ops->name);
	if (was_default)
		strscpy(prefetch_default_name, PREFETCH_FALLBACK,
			sizeof(prefetch_default_name));
	spin_unlock(&prefetch_lock);

	if (was_default && prefetch_ready &&
	    strcmp(ops->name, PREFETCH_FALLBACK))
		pr_warn("default policy %s unregistered, new VMs use %s\n",
			ops->name, PREFETCH_FALLBACK);

	/*
	 * Lookups walk the list under rcu_read_lock() and may still hold a
	 * pointer to @ops; wait for them before the module's memory can go.
	 * They cannot take a reference: try_module_get() fails once the
	 * module is going.
	 */
	synchronize_rcu();
}
EXPORT_SYMBOL_GPL(kvm_prefetch_unregister);

/*
 * Is the module that owns @ops still running its init function?  A module
 * registers its policy from init, and try_module_get() succeeds while init
 * runs (MODULE_STATE_COMING); but if init then fails, the module's memory
 * is freed whatever references it has, and a VM would keep pointers into
 * it.  So a policy is usable only once its module is live.  kvm.ko's own
 * built-ins are usable during kvm.ko's init (the load-time default is
 * checked there).  Caller holds prefetch_lock or rcu_read_lock().
 */
static bool prefetch_owner_initialising(const struct kvm_prefetch_ops *ops)
{
	enum module_state state;

	if (!ops->owner || ops->owner == THIS_MODULE ||
	    kvm_prefetch_is_bpf(ops))
		return false;
	state = READ_ONCE(ops->owner->state);
	return state == MODULE_STATE_COMING || state == MODULE_STATE_UNFORMED;
}

/* A reference on what keeps @ops alive: its module, or its BPF map. */
static bool prefetch_ops_get(const struct kvm_prefetch_ops *ops)
{
	if (kvm_prefetch_is_bpf(ops))
		return kvm_prefetch_bpf_get(ops);
	return try_module_get(ops->owner);
}

static const struct kvm_prefetch_ops *prefetch_find_get(const char *name)
{
	const struct kvm_prefetch_ops *ops;

	rcu_read_lock();
	ops = __prefetch_find(name);
	/* Not available yet is, to users, not registered yet. */
	if (!ops || prefetch_owner_initialising(ops))
		ops = ERR_PTR(-ENOENT);
	else if (!prefetch_ops_get(ops))
		ops = ERR_PTR(-EBUSY);
	rcu_read_unlock();
	return ops;
}

/**
 * kvm_prefetch_get_policy() - look up a policy and take a reference on it
 * @name: a valid policy name (see kvm_prefetch_name_valid())
 *
 * A name that is not registered is autoloaded as module alias
 * "kvm-prefetch-<name>" when the caller has CAP_SYS_MODULE.  The check
 * does not audit: an unprivileged VMM that names an unknown policy (a
 * typo) gets -ENOENT, not a denial in the audit and LSM logs each time.
 *
 * Return: the policy, ERR_PTR(-ENOENT) if no such policy is registered or
 * its module has not finished its init function, or ERR_PTR(-EBUSY) if its
 * module is being unloaded.  Drop the reference with
 * kvm_prefetch_put_policy().
 */
const struct kvm_prefetch_ops *kvm_prefetch_get_policy(const char *name)
{
	const struct kvm_prefetch_ops *ops;

	ops = prefetch_find_get(name);
	if (ops == ERR_PTR(-ENOENT) &&
	    ns_capable_noaudit(&init_user_ns, CAP_SYS_MODULE)) {
		request_module("kvm-prefetch-%s", name);
		ops = prefetch_find_get(name);
	}
	return ops;
}

/**
 * kvm_prefetch_put_policy() - drop a reference from kvm_prefetch_get_policy()
 * @ops: the policy
 */
void kvm_prefetch_put_policy(const struct kvm_prefetch_ops *ops)
{
	if (kvm_prefetch_is_bpf(ops))
		kvm_prefetch_bpf_put(ops);
	else
		module_put(ops->owner);
}

/**
 * kvm_prefetch_get_default() - the policy new VMs start with, referenced
 *
 * Return: the default policy with a module reference held.  "none" if the
 * default cannot be had (its module is going away), which cannot fail
 * while kvm.ko is loaded.
 */
const struct kvm_prefetch_ops *kvm_prefetch_get_default(void)
{
	char name[KVM_PREFETCH_POLICY_NAME_MAX];
	const struct kvm_prefetch_ops *ops;

	spin_lock(&prefetch_lock);
	strscpy(name, prefetch_default_name, sizeof(name));
	spin_unlock(&prefetch_lock);

	ops = prefetch_find_get(name);
	if (IS_ERR(ops))
		ops = prefetch_find_get(PREFETCH_FALLBACK);
	return ops;
}

u32 kvm_prefetch_default_nr_pages(void)
{
	return READ_ONCE(prefetch_nr_pages);
}

u32 kvm_prefetch_default_gup(void)
{
	return READ_ONCE(prefetch_gup);
}

/**
 * kvm_prefetch_aligned_window() - the usual window around a fault
 * @gfn: the faulting guest frame
 * @mapped_pages: 4 KiB pages the mapping the fault installed spans (a power
 *	of two, see struct kvm_prefetch_fault)
 * @nr_pages: window length in 4 KiB pages
 * @w: the window, filled in if the function returns true
 *
 * The window is @nr_pages long and starts at @gfn aligned down to the
 * largest power of two not above @nr_pages, so a handler that populates
 * naturally aligned chunks of @nr_pages pages gets each chunk mapped in one
 * go.  For policies to use in their window() hook.
 *
 * Return: false if there is nothing to prefetch: @nr_pages is 0 or 1, or
 * the mapping the fault installed already covers the window.
 */
bool kvm_prefetch_aligned_window(u64 gfn, u32 mapped_pages, u32 nr_pages,
				 struct kvm_prefetch_window *w)
{
	u64 mapped_start = gfn & ~((u64)mapped_pages - 1);
	u64 start;

	nr_pages = min_t(u32, nr_pages, KVM_PREFETCH_MAX_PAGES);
	if (nr_pages <= 1)
		return false;

	start = gfn & ~((u64)rounddown_pow_of_two(nr_pages) - 1);
	if (mapped_start <= start &&
	    start + nr_pages <= mapped_start + mapped_pages)
		return false;

	w->start = start;
	w->nr_pages = nr_pages;
	return true;
}
EXPORT_SYMBOL_GPL(kvm_prefetch_aligned_window);

/**
 * kvm_prefetch_clip_window() - the part of a window the engine may map
 * @w: the policy's window
 * @base_gfn: first gfn of the faulting memslot
 * @npages: the memslot's size in pages
 * @max_gfn: the largest gfn the MMU can map
 * @start: set to the first gfn to map
 * @end: set to the gfn after the last one to map
 *
 * One memslot per window: the faulting one.  The window is also capped at
 * KVM_PREFETCH_MAX_PAGES and at @max_gfn; a window that would wrap around
 * is empty.
 *
 * Return: true if [@start, @end) is not empty.
 */
bool kvm_prefetch_clip_window(const struct kvm_prefetch_window *w,
			      u64 base_gfn, u64 npages, u64 max_gfn,
			      u64 *start, u64 *end)
{
	u32 nr = min_t(u32, w->nr_pages, KVM_PREFETCH_MAX_PAGES);

	/* A window that wraps ends below its start: empty. */
	*start = max(w->start, base_gfn);
	*end = min3(w->start + nr, base_gfn + npages, max_gfn + 1);
	return *start < *end;
}

/*
 * The built-in policies differ only in which fault origins open a window:
 *
 *	policy	guest fault	async #PF done	KVM_PRE_FAULT_MEMORY
 *	none	-		-		-
 *	manual	-		-		yes
 *	async	-		yes		yes
 *	auto	yes		yes		yes
 */
static bool prefetch_builtin_window(const struct kvm_prefetch_state *st,
				    const struct kvm_prefetch_fault *f,
				    struct kvm_prefetch_window *w,
				    unsigned int origins)
{
	if (!(origins & BIT(f->origin)))
		return false;
	return kvm_prefetch_aligned_window(f->gfn, f->mapped_pages, st->nr_pages,
					   w);
}

static bool prefetch_none_window(const struct kvm_prefetch_state *st,
				 const struct kvm_prefetch_fault *f,
				 struct kvm_prefetch_window *w)
{
	return false;
}

static bool prefetch_manual_window(const struct kvm_prefetch_state *st,
				   const struct kvm_prefetch_fault *f,
				   struct kvm_prefetch_window *w)
{
	return prefetch_builtin_window(st, f, w, BIT(KVM_PREFETCH_MANUAL));
}

static bool prefetch_async_window(const struct kvm_prefetch_state *st,
				  const struct kvm_prefetch_fault *f,
				  struct kvm_prefetch_window *w)
{
	return prefetch_builtin_window(st, f, w, BIT(KVM_PREFETCH_MANUAL) |
						 BIT(KVM_PREFETCH_ASYNC));
}

static bool prefetch_auto_window(const struct kvm_prefetch_state *st,
				 const struct kvm_prefetch_fault *f,
				 struct kvm_prefetch_window *w)
{
	return prefetch_builtin_window(st, f, w, BIT(KVM_PREFETCH_MANUAL) |
						 BIT(KVM_PREFETCH_ASYNC) |
						 BIT(KVM_PREFETCH_GUEST_FAULT));
}

static struct kvm_prefetch_ops prefetch_none = {
	.window	= prefetch_none_window,
	.name	= PREFETCH_FALLBACK,
	.owner	= THIS_MODULE,
};

static struct kvm_prefetch_ops prefetch_manual = {
	.window	= prefetch_manual_window,
	.name	= "manual",
	.owner	= THIS_MODULE,
};

static struct kvm_prefetch_ops prefetch_async = {
	.window	= prefetch_async_window,
	.name	= "async",
	.owner	= THIS_MODULE,
};

static struct kvm_prefetch_ops prefetch_auto = {
	.window	= prefetch_auto_window,
	.name	= "auto",
	.owner	= THIS_MODULE,
};

/**
 * kvm_prefetch_never_opens() - does @ops never open a window, for any fault?
 * @ops: a registered policy
 *
 * Return: true for the built-in none.
 */
bool kvm_prefetch_never_opens(const struct kvm_prefetch_ops *ops)
{
	return ops == &prefetch_none;
}

/* In the order prefetch_available lists them. */
static struct kvm_prefetch_ops *const prefetch_builtins[] = {
	&prefetch_none, &prefetch_manual, &prefetch_async, &prefetch_auto,
#ifdef CONFIG_KVM_PREFETCH_REPLAY
	&kvm_prefetch_replay_ops,
#endif
};

/* ---- module parameters -------------------------------------------- */

/* Copy a sysfs or command line value without its trailing newline. */
static int prefetch_param_name(const char *val, char *name, size_t size)
{
	size_t len = strcspn(val, "\n");

	if (!len || len >= size)
		return -EINVAL;
	memcpy(name, val, len);
	name[len] = '\0';
	return 0;
}

static int prefetch_policy_set(const char *val, const struct kernel_param *kp)
{
	char name[KVM_PREFETCH_POLICY_NAME_MAX];
	const struct kvm_prefetch_ops *ops;

	/*
	 * At load time nothing is registered yet: keep what was given and
	 * let kvm_prefetch_init() check it, falling back rather than
	 * failing to load kvm.ko over a default.
	 */
	if (!prefetch_ready) {
		strscpy(prefetch_default_name, val,
			sizeof(prefetch_default_name));
		return 0;
	}

	if (prefetch_param_name(val, name, sizeof(name)) ||
	    !kvm_prefetch_name_valid(name, sizeof(name)))
		return -EINVAL;

	ops = kvm_prefetch_get_policy(name);
	if (IS_ERR(ops))
		return PTR_ERR(ops);

	spin_lock(&prefetch_lock);
	strscpy(prefetch_default_name, ops->name,
		sizeof(prefetch_default_name));
	spin_unlock(&prefetch_lock);

	kvm_prefetch_put_policy(ops);
	return 0;
}

static int prefetch_policy_get(char *buf, const struct kernel_param *kp)
{
	int len;

	spin_lock(&prefetch_lock);
	len = sysfs_emit(buf, "%s\n", prefetch_default_name);
	spin_unlock(&prefetch_lock);
	return len;
}

static const struct kernel_param_ops prefetch_policy_ops = {
	.set = prefetch_policy_set,
	.get = prefetch_policy_get,
};
module_param_cb(prefetch_policy, &prefetch_policy_ops, NULL, 0644);
MODULE_PARM_DESC(prefetch_policy,
		 "Prefetch policy new VMs start with (default: none, as stock KVM)");

static int prefetch_nr_pages_set(const char *val,
				 const struct kernel_param *kp)
{
	unsigned int n;

	if (kstrtouint(val, 0, &n) || n > KVM_PREFETCH_MAX_PAGES)
		return -EINVAL;
	WRITE_ONCE(prefetch_nr_pages, n);
	return 0;
}

static const struct kernel_param_ops prefetch_nr_pages_ops = {
	.set = prefetch_nr_pages_set,
	.get = param_get_uint,
};
module_param_cb(prefetch_nr_pages, &prefetch_nr_pages_ops,
		&prefetch_nr_pages, 0644);
MODULE_PARM_DESC(prefetch_nr_pages,
		 "Prefetch window in 4 KiB pages of VMs that choose none, unless their policy declares its own (0 and 1: none)");

/*
 * A module parameter that is one of a list of names (kp->arg is a struct
 * kvm_prefetch_param_choice): prefetch_gup here, the engine's
 * prefetch_engine.
 */
static int prefetch_choice_set(const char *val, const struct kernel_param *kp)
{
	const struct kvm_prefetch_param_choice *c = kp->arg;
	u32 i;

	for (i = 0; i < c->nr; i++) {
		if (c->names[i] && sysfs_streq(val, c->names[i])) {
			WRITE_ONCE(*c->val, i);
			return 0;
		}
	}
	return -EINVAL;
}

static int prefetch_choice_get(char *buf, const struct kernel_param *kp)
{
	const struct kvm_prefetch_param_choice *c = kp->arg;

	return sysfs_emit(buf, "%s\n", c->names[READ_ONCE(*c->val)]);
}

const struct kernel_param_ops kvm_prefetch_param_choice_ops = {
	.set = prefetch_choice_set,
	.get = prefetch_choice_get,
};

static const char *const prefetch_gup_names[] = {
	[KVM_PREFETCH_GUP_NOFAULT]	= "nofault",
	[KVM_PREFETCH_GUP_FAST_ONLY]	= "fast",
};

static const struct kvm_prefetch_param_choice prefetch_gup_choice = {
	.names	= prefetch_gup_names,
	.nr	= ARRAY_SIZE(prefetch_gup_names),
	.val	= &prefetch_gup,
};
module_param_cb(prefetch_gup, &kvm_prefetch_param_choice_ops,
		(void *)&prefetch_gup_choice, 0644);
MODULE_PARM_DESC(prefetch_gup,
		 "How prefetch gets host pages for new VMs: nofault or fast");

/**
 * kvm_prefetch_gup_name() - name of a KVM_PREFETCH_GUP_* mode
 * @gup: KVM_PREFETCH_GUP_NOFAULT or KVM_PREFETCH_GUP_FAST_ONLY
 *
 * Return: "nofault" or "fast".
 */
const char *kvm_prefetch_gup_name(u32 gup)
{
	return prefetch_gup_names[gup];
}

static int prefetch_available_get(char *buf, const struct kernel_param *kp)
{
	const struct kvm_prefetch_ops *ops;
	int len = 0;

	rcu_read_lock();
	list_for_each_entry_rcu(ops, &prefetch_policies, list)
		len += sysfs_emit_at(buf, len, "%s%s", len ? " " : "",
				     ops->name);
	rcu_read_unlock();
	len += sysfs_emit_at(buf, len, "\n");
	return len;
}

static const struct kernel_param_ops prefetch_available_ops = {
	.get = prefetch_available_get,
};
module_param_cb(prefetch_available, &prefetch_available_ops, NULL, 0444);
MODULE_PARM_DESC(prefetch_available, "Registered prefetch policies");

/* ---- init and exit ------------------------------------------------ */

/* Check the load-time default now that the built-ins exist. */
static void prefetch_check_default(void)
{
	const struct kvm_prefetch_ops *ops = ERR_PTR(-EINVAL);
	char name[KVM_PREFETCH_POLICY_NAME_MAX];

	if (!prefetch_param_name(prefetch_default_name, name, sizeof(name)) &&
	    kvm_prefetch_name_valid(name, sizeof(name)))
		ops = prefetch_find_get(name);
	if (!IS_ERR(ops)) {
		strscpy(prefetch_default_name, ops->name,
			sizeof(prefetch_default_name));
		kvm_prefetch_put_policy(ops);
		return;
	}
	pr_warn("prefetch_policy=%s is not a registered policy, using %s\n",
		prefetch_default_name, PREFETCH_FALLBACK);
	strscpy(prefetch_default_name, PREFETCH_FALLBACK,
		sizeof(prefetch_default_name));
}

/**
 * kvm_prefetch_init() - register the built-in policies (kvm.ko init)
 *
 * Return: 0 or -errno.
 */
int kvm_prefetch_init(void)
{
	int i, ret;

	for (i = 0; i < ARRAY_SIZE(prefetch_builtins); i++) {
		ret = kvm_prefetch_register(prefetch_builtins[i]);
		if (ret)
			goto out_unregister;
	}
	prefetch_ready = true;
	prefetch_check_default();
	kvm_prefetch_bpf_init();
	return 0;

out_unregister:
	while (--i >= 0)
		kvm_prefetch_unregister(prefetch_builtins[i]);
	return ret;
}

/**
 * kvm_prefetch_exit() - unregister the built-in policies (kvm.ko exit)
 */
void kvm_prefetch_exit(void)
{
	int i;

	prefetch_ready = false;
	for (i = ARRAY_SIZE(prefetch_builtins) - 1; i >= 0; i--)
		kvm_prefetch_unregister(prefetch_builtins[i]);
}
