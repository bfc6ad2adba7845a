// SPDX-License-Identifier: GPL-2.0-only
/*
 * prefetch_ops.cocci must report each line that ends in an expect-warning
 * comment: a struct_ops type whose .unreg does not unregister what .reg
 * registered, a register in a callback that is not the type's .reg, and
 * stubs without .window.
 */
#include <linux/bpf.h>
#include <linux/kvm_prefetch.h>

#include "fixture_policy.h"

static int kp_reg(void *kdata, struct bpf_link *link)
{
	return kvm_prefetch_register(kdata); /* expect-warning */
}

static int kp_validate(void *kdata)
{
	return kvm_prefetch_register(kdata); /* expect-warning */
}

static void kp_unreg(void *kdata, struct bpf_link *link)
{
	kvm_prefetch_unregister(link);
}

static struct kvm_prefetch_ops kp_stubs = { /* expect-warning */
	.name	= "stubs",
};

static struct bpf_struct_ops kp_st_ops = {
	.reg		= kp_reg,
	.unreg		= kp_unreg,
	.validate	= kp_validate,
	.cfi_stubs	= &kp_stubs,
	.name		= "kvm_prefetch_ops",
	.owner		= THIS_MODULE,
};
