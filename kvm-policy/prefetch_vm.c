// SPDX-License-Identifier: GPL-2.0-only
/*
 * KVM prefetch policies: each VM's policy and parameters, the
 * KVM_SET/GET_PREFETCH_POLICY ioctls and the debugfs file.
 *
 * A VM's configuration is one struct kvm_prefetch_state behind the RCU
 * pointer kvm->prefetch.  It is never changed in place: a change publishes
 * a new state under kvm->lock and frees the old one after a grace period,
 * because vCPUs read it, and call into the policy, under rcu_read_lock()
 * from the fault path.
 *
 * Beside it, kvm->prefetch_may_open says whether the state's policy can
 * open a window at all, so that the fault path of a VM whose policy never
 * does (none, or a window of one page) skips the policy without a call, an
 * RCU section or an indirect call.  It is written with WRITE_ONCE() under
 * kvm->lock with the pointer, and read with no lock by a plain load that
 * data_race() marks as racy on purpose (kvm_prefetch_may_open()), so that
 * the compiler may fold it into the fault path's test: a vCPU racing with
 * a change may see the flag of the old state and the pointer of the new
 * one, or the other way round.  Both are safe: a stale true only sends it
 * down the RCU path, which checks the state it finds; a stale false skips
 * prefetch for a fault that raced with the change, as if it had come just
 * before it.
 */
#define pr_fmt(fmt) "kvm-prefetch: " fmt

#include "prefetch_internal.h"

/* A window of 0 pages means no prefetch, as 1 does; keep it as 1. */
static u32 prefetch_effective_nr_pages(u32 nr_pages)
{
	return max_t(u32, nr_pages, 1);
}

/* The window of a VM that did not choose one: the policy's, or the default. */
static u32 prefetch_default_window(const struct kvm_prefetch_ops *ops)
{
	return ops->default_nr_pages ?: kvm_prefetch_default_nr_pages();
}

/*
 * A policy's answers are input, as a user's are: a module's or a BPF
 * program's init() may return any int and write any field of the state it
 * is given, window() any window.  What the contract allows is used;
 * anything else fails the call with -EINVAL (init()) or ejects the policy
 * from the VM (window(), see prefetch_eject()), with a ratelimited message
 * naming the policy, and is never dereferenced, freed or used as an index.
 */
static int prefetch_init_checked(struct kvm_prefetch_state *st)
{
	struct kvm_prefetch_state want = *st;
	int ret = st->ops->init(st);

	/* init() may set up priv, nothing else. */
	if (st->ops != want.ops || st->kvm != want.kvm ||
	    st->nr_pages != want.nr_pages || st->gup != want.gup ||
	    st->ejected != want.ejected) {
		pr_warn_ratelimited("policy %s: init() changed the VM's parameters\n",
				    want.ops->name);
		/* What it set up is released as for any state it made. */
		if (!ret && want.ops->release) {
			want.priv = st->priv;
			*st = want;
			want.ops->release(st);
		}
		return -EINVAL;
	}
	if (!ret || (ret < 0 && ret >= -MAX_ERRNO))
		return ret;
	pr_warn_ratelimited("policy %s: init() returned %d, not 0 or -errno\n",
			    want.ops->name, ret);
	return -EINVAL;
}

static struct kvm_prefetch_state *
prefetch_state_create(struct kvm *kvm, const struct kvm_prefetch_ops *ops,
		      u32 nr_pages, u32 gup)
{
	struct kvm_prefetch_state *st;
	int ret;

	st = kzalloc(sizeof(*st), GFP_KERNEL_ACCOUNT);
	if (!st)
		return ERR_PTR(-ENOMEM);

	st->ops = ops;
	st->kvm = kvm;
	st->nr_pages = prefetch_effective_nr_pages(nr_pages);
	st->gup = gup;
	if (ops->init) {
		ret = prefetch_init_checked(st);
		if (ret) {
			kfree(st);
			return ERR_PTR(ret);
		}
	}
	return st;
}

/* Can a VM with state @st ever open a window? */
static bool prefetch_state_may_open(const struct kvm_prefetch_state *st)
{
	return st->nr_pages > 1 && !kvm_prefetch_never_opens(st->ops);
}

/*
 * Set kvm->prefetch_may_open from the VM's state @st, and from whether the
 * VM records (the engine records its faults): kvm->lock held, or the VM
 * being created.
 */
static void prefetch_set_may_open(struct kvm *kvm,
				  const struct kvm_prefetch_state *st)
{
	bool open = prefetch_state_may_open(st);

#ifdef CONFIG_KVM_PREFETCH_REPLAY
	if (kvm->prefetch_replay)
		WRITE_ONCE(kvm->prefetch_replay->policy_open, open);
#endif
	WRITE_ONCE(kvm->prefetch_may_open, open || kvm_prefetch_recording(kvm));
}

/**
 * kvm_prefetch_vm_update_may_open() - recompute kvm->prefetch_may_open
 * @kvm: the VM, kvm->lock held, whose recording starts or stops
 */
void kvm_prefetch_vm_update_may_open(struct kvm *kvm)
{
	struct kvm_prefetch_state *st;

	st = rcu_dereference_protected(kvm->prefetch,
				       lockdep_is_held(&kvm->lock));
	prefetch_set_may_open(kvm, st);
}

/* Make @st the VM's state, replacing another; kvm->lock held. */
static void __prefetch_state_publish(struct kvm *kvm,
				     struct kvm_prefetch_state *st)
{
	rcu_assign_pointer(kvm->prefetch, st);
	prefetch_set_may_open(kvm, st);
}

/* Free a state no reader can see any more; drops its policy reference. */
static void prefetch_state_free(struct kvm_prefetch_state *st)
{
	if (st->ops->release)
		st->ops->release(st);
	kvm_prefetch_put_policy(st->ops);
	kfree(st);
}

/**
 * kvm_prefetch_vm_init() - give a new VM the default policy and parameters
 * @kvm: the VM being created
 *
 * Return: 0 or -errno.
 */
int kvm_prefetch_vm_init(struct kvm *kvm)
{
	const struct kvm_prefetch_ops *ops = kvm_prefetch_get_default();
	struct kvm_prefetch_state *st;
	int ret;

	if (IS_ERR(ops))
		return PTR_ERR(ops);

	st = prefetch_state_create(kvm, ops, prefetch_default_window(ops),
				   kvm_prefetch_default_gup());
	if (IS_ERR(st) && !kvm_prefetch_never_opens(ops)) {
		/*
		 * A default that cannot set up a VM must not stop VMs from
		 * being created: this one starts as stock KVM does.
		 */
		pr_warn_ratelimited("default policy %s failed (%ld), a new VM uses %s\n",
				    ops->name, PTR_ERR(st), KVM_PREFETCH_FALLBACK);
		kvm_prefetch_put_policy(ops);
		ops = kvm_prefetch_get_policy(KVM_PREFETCH_FALLBACK);
		if (IS_ERR(ops))
			return PTR_ERR(ops);
		st = prefetch_state_create(kvm, ops, prefetch_default_window(ops),
					   kvm_prefetch_default_gup());
	}
	if (IS_ERR(st)) {
		kvm_prefetch_put_policy(ops);
		return PTR_ERR(st);
	}
	ret = kvm_prefetch_usage_init(kvm);
	if (!ret) {
		ret = kvm_prefetch_replay_init(kvm);
		if (ret)
			kvm_prefetch_usage_destroy(kvm);
	}
	if (ret) {
		prefetch_state_free(st);
		return ret;
	}
	RCU_INIT_POINTER(kvm->prefetch, st);
	prefetch_set_may_open(kvm, st);
	return 0;
}

/**
 * kvm_prefetch_vm_destroy() - release a VM's policy and usage accounting
 * @kvm: the VM, with no vCPU left, its debugfs directory gone and its MMU
 *	torn down
 */
void kvm_prefetch_vm_destroy(struct kvm *kvm)
{
	/* Nothing can read kvm->prefetch any more: no vCPU, no debugfs. */
	struct kvm_prefetch_state *st = rcu_dereference_protected(kvm->prefetch, 1);

	WRITE_ONCE(kvm->prefetch_may_open, false);
	RCU_INIT_POINTER(kvm->prefetch, NULL);
	if (st)
		prefetch_state_free(st);
	kvm_prefetch_replay_destroy(kvm);
	kvm_prefetch_usage_destroy(kvm);
}

/*
 * The window @w that @st's policy answered for fault @f breaks the
 * contract: it ends past the last gfn there is (start + nr_pages wraps).
 * Anything else is clipped by the engine: a start outside the memslot, a
 * window far from the fault, more pages than the VM's nr_pages.
 */
static bool prefetch_window_broken(const struct kvm_prefetch_window *w)
{
	return w->nr_pages && w->start + w->nr_pages - 1 < w->start;
}

/*
 * Stop asking @st's policy, for this VM, until userspace selects a policy
 * again: the VM maps as with none.  The state (and its reference on the
 * policy) stays until then, so that nothing is freed under a reader; the
 * flag is checked before every call.  Called under rcu_read_lock().
 */
static void prefetch_eject(struct kvm *kvm, struct kvm_prefetch_state *st,
			   const struct kvm_prefetch_fault *f,
			   const struct kvm_prefetch_window *w)
{
	struct kvm_vcpu *vcpu = kvm_get_vcpu(kvm, f->vcpu_idx);

	if (xchg(&st->ejected, true))
		return;
	if (vcpu)
		vcpu->stat.generic.prefetch_ejected++;
	pr_warn_ratelimited("policy %s ejected from a VM: window [0x%llx, +%u) after a fault at 0x%llx wraps; the VM maps as with %s until its policy is set again\n",
			    st->ops->name, (unsigned long long)w->start,
			    w->nr_pages, (unsigned long long)f->gfn,
			    KVM_PREFETCH_FALLBACK);
}

/**
 * kvm_prefetch_decide() - ask the VM's policy for a window
 * @kvm: the VM
 * @f: the fault that was just resolved
 * @w: the window, filled in if the function returns true
 *
 * The policy finds @w set to { @f->gfn, 0 }: one that returns true
 * without writing it asks for nothing.  A window that breaks the contract
 * ejects the policy from the VM (prefetch_eject()).  A policy with a
 * next() hook may map windows after this one in the same exit
 * (kvm_prefetch_next()), even when window() asks for none.
 *
 * Context: the vCPU's fault path; takes and releases rcu_read_lock()
 * unless kvm_prefetch_may_open() is false.
 * Return: true if the policy wants the window @w mapped, or, with
 * @w->nr_pages 0, asks for none but has a next() hook (@w->more: call
 * kvm_prefetch_next() after @w).  @w->nr_pages is
 * at most the VM's nr_pages, and @w does not wrap.
 */
bool kvm_prefetch_decide(struct kvm *kvm, const struct kvm_prefetch_fault *f,
			 struct kvm_prefetch_window *w)
{
	struct kvm_prefetch_state *st;
	bool ret = false;

	/* A prefetch never triggers further prefetch. */
	if (f->origin == KVM_PREFETCH_AUTO || !kvm_prefetch_may_open(kvm))
		return false;

	rcu_read_lock();
	st = rcu_dereference(kvm->prefetch);
	/* The flag may be stale: check the state found. */
	if (!st || !prefetch_state_may_open(st) || READ_ONCE(st->ejected))
		goto out;
	*w = (struct kvm_prefetch_window) { .start = f->gfn, .nr_pages = 0 };
	if (!st->ops->window(st, f, w)) {
		if (!st->ops->next)
			goto out;
		w->start = f->gfn;
		w->nr_pages = 0;
	}
	if (prefetch_window_broken(w)) {
		prefetch_eject(kvm, st, f, w);
		goto out;
	}
	w->nr_pages = min(w->nr_pages, st->nr_pages);
	w->more = !!st->ops->next;
	ret = w->nr_pages > 0 || w->more;
out:
	rcu_read_unlock();
	return ret;
}

/**
 * kvm_prefetch_next() - ask the VM's policy for one more window of an exit
 * @kvm: the VM
 * @f: the fault of the exit
 * @w: in, the exit's last window, mapped through to its end (nr_pages 0:
 *	window() asked for none); out, the next one
 * @used: the pages the exit's windows spanned so far; the next window's
 *	are added
 *
 * For a policy with a next() hook, after kvm_prefetch_decide(), and after
 * each window the engine mapped through, also the last one of the exit:
 * the policy is asked even when the budget is spent (so that it may move
 * past that window), and its answer is then dropped.  The contract is
 * window()'s: a window that wraps ejects the policy.
 *
 * Context: as kvm_prefetch_decide().
 * Return: true if the policy wants @w mapped: @w->nr_pages is then 1 to
 * what is left of the VM's nr_pages, and @w does not wrap.
 */
bool kvm_prefetch_next(struct kvm *kvm, const struct kvm_prefetch_fault *f,
		       struct kvm_prefetch_window *w, u32 *used)
{
	struct kvm_prefetch_state *st;
	bool ret = false;

	rcu_read_lock();
	st = rcu_dereference(kvm->prefetch);
	/* The policy may have changed since the exit's first window. */
	if (!st || !st->ops->next || !prefetch_state_may_open(st) ||
	    READ_ONCE(st->ejected))
		goto out;
	/*
	 * Asked also when the budget is spent, so that the policy learns
	 * that its last window was mapped through; the answer is dropped.
	 */
	if (!st->ops->next(st, f, w) || !w->nr_pages ||
	    *used >= st->nr_pages)
		goto out;
	if (prefetch_window_broken(w)) {
		prefetch_eject(kvm, st, f, w);
		goto out;
	}
	w->nr_pages = min(w->nr_pages, st->nr_pages - *used);
	*used += w->nr_pages;
	ret = true;
out:
	rcu_read_unlock();
	return ret;
}

/**
 * kvm_prefetch_vm_gup() - how the VM's prefetch faults may get host pages
 * @kvm: the VM
 *
 * Return: KVM_PREFETCH_GUP_NOFAULT or KVM_PREFETCH_GUP_FAST_ONLY.
 */
u32 kvm_prefetch_vm_gup(struct kvm *kvm)
{
	const struct kvm_prefetch_state *st;
	u32 gup = KVM_PREFETCH_GUP_FAST_ONLY;

	rcu_read_lock();
	st = rcu_dereference(kvm->prefetch);
	if (st)
		gup = st->gup;
	rcu_read_unlock();
	return gup;
}

/* ---- uAPI ----------------------------------------------------------- */

/**
 * kvm_prefetch_policy_check() - validate a struct kvm_prefetch_policy
 * @p: the argument of KVM_SET_PREFETCH_POLICY
 *
 * Return: 0, or -EINVAL for non-zero flags, pad or reserved fields, a name
 * that is empty, not NUL-terminated or not of [a-z0-9_-], too large a
 * window or an unknown GUP mode.
 */
int kvm_prefetch_policy_check(const struct kvm_prefetch_policy *p)
{
	if (p->flags || p->pad ||
	    memchr_inv(p->reserved, 0, sizeof(p->reserved)))
		return -EINVAL;
	if (!kvm_prefetch_name_valid(p->name, sizeof(p->name)))
		return -EINVAL;
	if (p->nr_pages > KVM_PREFETCH_MAX_PAGES ||
	    p->gup > KVM_PREFETCH_GUP_FAST_ONLY)
		return -EINVAL;
	return 0;
}

static int prefetch_vm_set(struct kvm *kvm, const struct kvm_prefetch_policy *p)
{
	struct kvm_prefetch_state *old, *st;
	const struct kvm_prefetch_ops *ops;
	u32 nr_pages, gup;
	int ret;

	if (!kvm_arch_prefetch_supported(kvm))
		return -EOPNOTSUPP;
	ret = kvm_prefetch_policy_check(p);
	if (ret)
		return ret;

	ops = kvm_prefetch_get_policy(p->name);
	if (IS_ERR(ops))
		return PTR_ERR(ops);

	nr_pages = prefetch_effective_nr_pages(p->nr_pages ?:
					       prefetch_default_window(ops));
	gup = p->gup ?: kvm_prefetch_default_gup();

	mutex_lock(&kvm->lock);
	old = rcu_dereference_protected(kvm->prefetch,
					lockdep_is_held(&kvm->lock));
	if (old->ops == ops && old->nr_pages == nr_pages && old->gup == gup &&
	    !READ_ONCE(old->ejected)) {
		mutex_unlock(&kvm->lock);
		kvm_prefetch_put_policy(ops);
		return 0;
	}
	mutex_unlock(&kvm->lock);

	/* ops->init() may sleep; it runs outside kvm->lock. */
	st = prefetch_state_create(kvm, ops, nr_pages, gup);
	if (IS_ERR(st)) {
		kvm_prefetch_put_policy(ops);
		return PTR_ERR(st);
	}

	mutex_lock(&kvm->lock);
	old = rcu_dereference_protected(kvm->prefetch,
					lockdep_is_held(&kvm->lock));
	__prefetch_state_publish(kvm, st);
	mutex_unlock(&kvm->lock);

	/*
	 * vCPUs call old->ops->window() under rcu_read_lock(); after the
	 * grace period none is left, so the old policy's state and module
	 * reference can go.
	 */
	synchronize_rcu();
	prefetch_state_free(old);
	return 0;
}

/* The VM's configuration; *@ejected: the policy it ejected, or "". */
static void prefetch_vm_get(struct kvm *kvm, struct kvm_prefetch_policy *p,
			    char *ejected, size_t size)
{
	const struct kvm_prefetch_state *st;
	bool out;

	memset(p, 0, sizeof(*p));
	rcu_read_lock();
	st = rcu_dereference(kvm->prefetch);
	/* An ejected policy is not the VM's any more: none is. */
	out = READ_ONCE(st->ejected);
	strscpy(p->name, out ? KVM_PREFETCH_FALLBACK : st->ops->name,
		sizeof(p->name));
	if (ejected)
		strscpy(ejected, out ? st->ops->name : "", size);
	p->nr_pages = st->nr_pages;
	p->gup = st->gup;
	rcu_read_unlock();
}

/**
 * kvm_prefetch_vm_ioctl() - KVM_SET_PREFETCH_POLICY, KVM_GET_PREFETCH_POLICY
 * @kvm: the VM
 * @ioctl: the ioctl number
 * @argp: the user's struct kvm_prefetch_policy
 *
 * Return: 0 or -errno (see Documentation in sysfs-docs/).
 */
long kvm_prefetch_vm_ioctl(struct kvm *kvm, unsigned int ioctl,
			   void __user *argp)
{
	struct kvm_prefetch_policy p;

	switch (ioctl) {
	case KVM_SET_PREFETCH_POLICY:
		if (copy_from_user(&p, argp, sizeof(p)))
			return -EFAULT;
		return prefetch_vm_set(kvm, &p);
	case KVM_GET_PREFETCH_POLICY:
		prefetch_vm_get(kvm, &p, NULL, 0);
		if (copy_to_user(argp, &p, sizeof(p)))
			return -EFAULT;
		return 0;
	case KVM_PREFETCH_ORDER:
		return kvm_prefetch_order_ioctl(kvm, argp);
	default:
		return -ENOTTY;
	}
}

/* ---- debugfs ------------------------------------------------------ */

static int prefetch_policy_show(struct seq_file *m, void *unused)
{
	char ejected[KVM_PREFETCH_POLICY_NAME_MAX];
	struct kvm_prefetch_policy p;

	prefetch_vm_get(m->private, &p, ejected, sizeof(ejected));
	seq_printf(m, "%s nr_pages=%u gup=%s%s%s\n", p.name, p.nr_pages,
		   kvm_prefetch_gup_name(p.gup), ejected[0] ? " ejected=" : "",
		   ejected);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(prefetch_policy);

#ifdef CONFIG_KVM_PREFETCH_USAGE
static int prefetch_usage_show(struct seq_file *m, void *unused)
{
	kvm_prefetch_usage_show(m, m->private);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(prefetch_usage);
#endif

/**
 * kvm_prefetch_vm_debugfs() - add prefetch_policy (and prefetch_usage) to
 *	the VM's debugfs dir
 * @kvm: the VM, its debugfs directory created
 *
 * The directory, and the file with it, is removed before the VM's state
 * is freed, and debugfs waits for readers of removed files.
 */
void kvm_prefetch_vm_debugfs(struct kvm *kvm)
{
	if (IS_ERR_OR_NULL(kvm->debugfs_dentry))
		return;
	debugfs_create_file("prefetch_policy", 0444, kvm->debugfs_dentry, kvm,
			    &prefetch_policy_fops);
#ifdef CONFIG_KVM_PREFETCH_USAGE
	debugfs_create_file("prefetch_usage", 0444, kvm->debugfs_dentry, kvm,
			    &prefetch_usage_fops);
#endif
}
