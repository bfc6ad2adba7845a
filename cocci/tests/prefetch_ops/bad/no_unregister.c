// SPDX-License-Identifier: GPL-2.0-only
/*
 * prefetch_ops.cocci must report each line that ends in an expect-warning
 * comment: policies registered but not unregistered in the module's exit
 * path (only on an error path, in a function the exit path does not
 * reach, or another policy than the one registered).
 */
#include <linux/kvm_prefetch.h>

static bool stride_window(const struct kvm_prefetch_state *st,
			  const struct kvm_prefetch_fault *f,
			  struct kvm_prefetch_window *w)
{
	return false;
}

static struct kvm_prefetch_ops stride_ops = {
	.window	= stride_window,
	.name	= "stride",
	.owner	= THIS_MODULE,
};

static struct kvm_prefetch_ops stride2_ops = {
	.window	= stride_window,
	.name	= "stride2",
	.owner	= THIS_MODULE,
};

static struct kvm_prefetch_ops stride3_ops = {
	.window	= stride_window,
	.name	= "stride3",
	.owner	= THIS_MODULE,
};

static void stride_cleanup(void)
{
	kvm_prefetch_unregister(&stride3_ops);
}

static int __init stride_init(void)
{
	int ret;

	ret = kvm_prefetch_register(&stride_ops); /* expect-warning */
	if (ret)
		return ret;
	ret = kvm_prefetch_register(&stride2_ops); /* expect-warning */
	if (ret)
		goto out_stride;
	ret = kvm_prefetch_register(&stride3_ops); /* expect-warning */
	if (ret)
		goto out_stride2;
	return 0;

out_stride2:
	kvm_prefetch_unregister(&stride2_ops);
out_stride:
	kvm_prefetch_unregister(&stride_ops);
	return ret;
}
module_init(stride_init);

static void __exit stride_exit(void)
{
	kvm_prefetch_unregister(&stride_ops_old);
}
module_exit(stride_exit);
