// SPDX-License-Identifier: GPL-2.0-only
/*
 * prefetch_ops.cocci must accept kvm.ko's way (with x86.c, the other file
 * of this fixture): built-in policies registered by kvm_prefetch_init()
 * and unregistered by kvm_prefetch_exit(), which the module's exit
 * function, in another file, calls.
 */
#include <kvm/prefetch.h>

static bool prefetch_none_window(const struct kvm_prefetch_state *st,
				 const struct kvm_prefetch_fault *f,
				 struct kvm_prefetch_window *w)
{
	return false;
}

static struct kvm_prefetch_ops prefetch_none = {
	.window	= prefetch_none_window,
	.name	= "none",
	.owner	= THIS_MODULE,
};

static struct kvm_prefetch_ops *const prefetch_builtins[] = {
	&prefetch_none,
};

/* Unwinding a failed registration is left out: the rule ignores it. */
int kvm_prefetch_init(void)
{
	int i, ret = 0;

	for (i = 0; i < ARRAY_SIZE(prefetch_builtins) && !ret; i++)
		ret = kvm_prefetch_register(prefetch_builtins[i]);
	return ret;
}

static void prefetch_unregister_all(void)
{
	int i;

	for (i = ARRAY_SIZE(prefetch_builtins) - 1; i >= 0; i--)
		kvm_prefetch_unregister(prefetch_builtins[i]);
}

void kvm_prefetch_exit(void)
{
	prefetch_unregister_all();
}
