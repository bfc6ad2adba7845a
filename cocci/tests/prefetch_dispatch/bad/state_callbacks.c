// SPDX-License-Identifier: GPL-2.0-only
/*
 * prefetch_dispatch.cocci must report each line that ends in an
 * expect-warning comment: callbacks called through a policy's state
 * outside the policy core, in a file that never names the ops struct
 * (the type comes from <linux/kvm_prefetch.h>).
 */
#include <linux/kvm_prefetch.h>

bool resolver_window(const struct kvm_prefetch_state *st,
		     const struct kvm_prefetch_fault *f,
		     struct kvm_prefetch_window *w)
{
	return st->ops->window(st, f, w); /* expect-warning */
}

void resolver_drop_state(struct kvm_prefetch_state *st)
{
	if (st->ops->release) /* testing for a callback is fine */
		st->ops->release(st); /* expect-warning */
}
