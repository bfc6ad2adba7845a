// SPDX-License-Identifier: GPL-2.0-only
/*
 * prefetch_ops.cocci must accept a BPF struct_ops type of policies done
 * right: the .reg callback registers the map's ops table and .unreg
 * unregisters it; the .cfi_stubs table sets .window only.
 */
#include <linux/bpf.h>
#include <linux/kvm_prefetch.h>

#include "fixture_policy.h"

static int kp_reg(void *kdata, struct bpf_link *link)
{
	return kvm_prefetch_register(kdata);
}

static void kp_unreg(void *kdata, struct bpf_link *link)
{
	kvm_prefetch_unregister(kdata);
}

static struct kvm_prefetch_ops kp_stubs = {
	.window	= stride_window,
};

static struct bpf_struct_ops kp_st_ops = {
	.reg		= kp_reg,
	.unreg		= kp_unreg,
	.cfi_stubs	= &kp_stubs,
	.name		= "kvm_prefetch_ops",
	.owner		= THIS_MODULE,
};
