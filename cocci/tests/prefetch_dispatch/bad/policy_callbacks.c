// SPDX-License-Identifier: GPL-2.0-only
/*
 * prefetch_dispatch.cocci must report each line that ends in an
 * expect-warning comment: a policy's callbacks called outside the policy
 * core (here from a policy module, or from the x86 MMU).
 */
#include <linux/kvm_prefetch.h>

static bool chained_window(const struct kvm_prefetch_state *st,
			   const struct kvm_prefetch_fault *f,
			   struct kvm_prefetch_window *w)
{
	const struct kvm_prefetch_ops *inner = st->priv;

	return inner->window(st, f, w); /* expect-warning */
}

static int chained_init(struct kvm_prefetch_state *st)
{
	struct kvm_prefetch_ops *inner = st->priv;

	if (inner->init) /* testing for a callback is fine */
		return inner->init(st); /* expect-warning */
	return 0;
}

void mmu_release_policy(struct kvm_prefetch_state *st)
{
	st->ops->release(st); /* expect-warning */
}
