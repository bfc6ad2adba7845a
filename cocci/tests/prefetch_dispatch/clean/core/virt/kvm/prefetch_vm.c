// SPDX-License-Identifier: GPL-2.0-only
/*
 * prefetch_dispatch.cocci must accept calls of a policy's callbacks in
 * the policy core (this file's path ends in virt/kvm/prefetch_vm.c).
 */
#include <kvm/prefetch.h>

static struct kvm_prefetch_state *
prefetch_state_create(const struct kvm_prefetch_ops *ops)
{
	struct kvm_prefetch_state *st = kzalloc(sizeof(*st), GFP_KERNEL);

	st->ops = ops;
	if (ops->init && ops->init(st)) {
		kfree(st);
		return NULL;
	}
	return st;
}

static void prefetch_state_free(struct kvm_prefetch_state *st)
{
	if (st->ops->release)
		st->ops->release(st);
	kfree(st);
}

bool kvm_prefetch_decide(struct kvm *kvm, const struct kvm_prefetch_fault *f,
			 struct kvm_prefetch_window *w)
{
	const struct kvm_prefetch_state *st;
	bool ret;

	rcu_read_lock();
	st = rcu_dereference(kvm->prefetch);
	ret = st && st->ops->window(st, f, w);
	rcu_read_unlock();
	return ret;
}
