// SPDX-License-Identifier: GPL-2.0-only
/*
 * kvm-prefetch-adaptive: a prefetch policy driven by what the guest
 * actually used, so that one setting serves small and large userfaultfd
 * chunks, linear, reverse, random-chunk and strided access alike.
 *
 * A policy never learns which prefetched pages the guest touched: it
 * sees faults only.  What the next fault says about the last window is
 * the feedback (adaptive_logic.h has the exact rules):
 *  - hit: the fault is next door to the last one, or at the end of the
 *    last window (so the guest used it up), or inside it past the fault
 *    that opened it (the engine stopped there: the host did not have the
 *    page yet).  The window grows as readahead's does (x4, then x2, up
 *    to the VM's nr_pages); it is the core's aligned window forward,
 *    which holds the whole host chunk around a fault at its first page,
 *    and ends at the fault backward.  There is no need to learn the
 *    chunk size: the engine stops at the first page the host lacks.
 *  - far jump of a dense stream (random chunk order): the full window at
 *    once, the first fault of a chunk maps the chunk.  But a window that
 *    hides every further touch also hides a sparse pattern, so every few
 *    far jumps (4, doubling up to 32 while the stream stays dense) the
 *    policy opens nothing: a probe.  If the guest's next fault is not
 *    next door, the stream is not dense: the miss drops the window to
 *    nothing.
 *  - sparse streams open nothing but a stride page (Leap: the majority
 *    delta of the last 4 faults, gfn + stride, one page): a window is
 *    contiguous, so covering k strides of 8 would map 7 unused pages per
 *    used one; one page per fault halves the faults at no waste.
 *  - windows that map nothing (4 KiB chunks) still cost an engine walk:
 *    after two such in a row only one in 8 is opened.
 *
 * Each vCPU (hashed into a bounded table) has a stream.  The logic is a
 * header (adaptive_logic.h) that also builds the unit tests and the BPF
 * policy kvm-policy/bpf/adaptive.bpf.c.  nr_pages (default
 * ADAPTIVE_MAX_PAGES, 512) is the most the window grows to.
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
