// SPDX-License-Identifier: GPL-2.0-only
/*
 * prefetch_ops.cocci must report each line that ends in an expect-warning
 * comment: policies registered but not unregistered in the module's exit
 * path (only on an error path, in a function the exit path does not
 * reach, or another policy than the one registered).  The ops tables
 * are in fixture_policy.h.
 */
#include <linux/kvm_prefetch.h>

#include "fixture_policy.h"

static void stride_cleanup(void)
{
	kvm_prefetch_unregister(&gamma_ops);
}

static int __init stride_init(void)
{
	int ret;

	ret = kvm_prefetch_register(&alpha_ops); /* expect-warning */
	if (ret)
		return ret;
	ret = kvm_prefetch_register(&beta_ops); /* expect-warning */
	if (ret)
		goto out_stride;
	ret = kvm_prefetch_register(&gamma_ops); /* expect-warning */
	if (ret)
		goto out_stride2;
	return 0;

out_stride2:
	kvm_prefetch_unregister(&beta_ops);
out_stride:
	kvm_prefetch_unregister(&alpha_ops);
	return ret;
}
module_init(stride_init);

static void __exit stride_exit(void)
{
	kvm_prefetch_unregister(&alpha_ops_old);
}
module_exit(stride_exit);
