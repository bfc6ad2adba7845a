// SPDX-License-Identifier: GPL-2.0-only
/*
 * kvm-prefetch-adaptive: a prefetch policy whose window follows the
 * access pattern, so that one setting serves small and large userfaultfd
 * chunks and random access alike.
 *
 * Each vCPU (hashed into a bounded table) has a stream, much like
 * page-cache readahead has a file_ra_state:
 *  - a fault at the end of the last window means the whole window got
 *    mapped and the access goes on: grow the window (x4 while small, x2
 *    later, as readahead's get_next_ra_size() does), up to the VM's
 *    nr_pages;
 *  - a fault inside the last window, after the fault that opened it,
 *    means prefetch stopped early there (host pages not present yet, e.g.
 *    a userfaultfd handler populating smaller chunks): the window shrinks
 *    to the distance between the two faults, the chunk size, and only
 *    grows past it after a few full windows in a row;
 *  - any other fault starts over with a small window, so random access
 *    maps few extra pages.
 *
 * Uses only <linux/kvm_prefetch.h>; autoloaded as kvm-prefetch-adaptive
 * when a VM selects the policy by name.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/kvm_prefetch.h>
#include <linux/module.h>
#include <linux/slab.h>
#include <linux/spinlock.h>

#include "adaptive.h"

/* Per-VM state: the streams, each with its lock. */
struct adaptive_vm {
	spinlock_t locks[ADAPTIVE_STREAMS];	/* locks[i] guards streams[i] */
	struct adaptive_stream streams[ADAPTIVE_STREAMS];
};

static bool adaptive_window(const struct kvm_prefetch_state *st,
			    const struct kvm_prefetch_fault *f,
			    struct kvm_prefetch_window *w)
{
	struct adaptive_vm *vm = st->priv;
	unsigned int i = f->vcpu_idx % ADAPTIVE_STREAMS;
	bool ret;

	spin_lock(&vm->locks[i]);
	ret = adaptive_stream_window(&vm->streams[i], f, st->nr_pages, w);
	spin_unlock(&vm->locks[i]);
	return ret;
}

static int adaptive_init(struct kvm_prefetch_state *st)
{
	struct adaptive_vm *vm;
	int i;

	vm = kzalloc(sizeof(*vm), GFP_KERNEL_ACCOUNT);
	if (!vm)
		return -ENOMEM;
	for (i = 0; i < ADAPTIVE_STREAMS; i++)
		spin_lock_init(&vm->locks[i]);
	st->priv = vm;
	return 0;
}

static void adaptive_release(struct kvm_prefetch_state *st)
{
	kfree(st->priv);
}

static struct kvm_prefetch_ops adaptive_ops = {
	.window		= adaptive_window,
	.init		= adaptive_init,
	.release	= adaptive_release,
	.default_nr_pages = ADAPTIVE_MAX_PAGES,
	.name		= "adaptive",
	.owner		= THIS_MODULE,
};

static int __init adaptive_module_init(void)
{
	return kvm_prefetch_register(&adaptive_ops);
}

static void __exit adaptive_module_exit(void)
{
	kvm_prefetch_unregister(&adaptive_ops);
}

module_init(adaptive_module_init);
module_exit(adaptive_module_exit);

MODULE_DESCRIPTION("KVM prefetch policy with a window that follows the access pattern");
MODULE_LICENSE("GPL");
MODULE_ALIAS("kvm-prefetch-adaptive");
