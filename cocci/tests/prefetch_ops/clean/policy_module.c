// SPDX-License-Identifier: GPL-2.0-only
/*
 * prefetch_ops.cocci must accept a policy module done right: a complete
 * ops table, registered at init and unregistered in the __exit function
 * (directly, or through a helper it calls).
 */
#include <linux/kvm_prefetch.h>

#include "fixture_policy.h"

static struct kvm_prefetch_ops stride2_ops = {
	.owner	= THIS_MODULE,
	.name	= "stride2",
	.window	= stride_window,
};

static int stride_init_vm(struct kvm_prefetch_state *st)
{
	return 0;
}

static struct kvm_prefetch_ops stride_ops = {
	.window	= stride_window,
	.init	= stride_init_vm,
	.name	= "stride",
	.owner	= THIS_MODULE,
};

static void stride2_remove(void)
{
	kvm_prefetch_unregister(&stride2_ops);
}

static int __init stride_init(void)
{
	int ret = kvm_prefetch_register(&stride_ops);

	if (ret)
		return ret;
	ret = kvm_prefetch_register(&stride2_ops);
	if (ret)
		kvm_prefetch_unregister(&stride_ops);
	return ret;
}
module_init(stride_init);

static void __exit stride_exit(void)
{
	stride2_remove();
	kvm_prefetch_unregister(&stride_ops);
}
module_exit(stride_exit);
MODULE_ALIAS("kvm-prefetch-stride");
MODULE_LICENSE("GPL");
