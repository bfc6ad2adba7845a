// SPDX-License-Identifier: GPL-2.0-only
/*
 * The part of the build fixtures' policy module that every case shares:
 * it registers a policy whose window callback, policy_build_window(), is
 * the case's file.
 */
#include <linux/kvm_prefetch.h>
#include <linux/module.h>

#include "policy_build.h"

static struct kvm_prefetch_ops policy_build_ops = {
	.window	= policy_build_window,
	.name	= "build",
	.owner	= THIS_MODULE,
};

static int __init policy_build_init(void)
{
	return kvm_prefetch_register(&policy_build_ops);
}
module_init(policy_build_init);

static void __exit policy_build_exit(void)
{
	kvm_prefetch_unregister(&policy_build_ops);
}
module_exit(policy_build_exit);

MODULE_DESCRIPTION("Build fixture: a policy module of the kvm-prefetch tests");
MODULE_LICENSE("GPL");
