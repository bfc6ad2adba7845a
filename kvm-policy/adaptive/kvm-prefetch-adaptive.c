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
#include <linux/log2.h>
#include <linux/minmax.h>
#include <linux/module.h>
#include <linux/slab.h>
#include <linux/spinlock.h>

#include "adaptive.h"

/**
 * adaptive_next_size() - the window after a full one (readahead's ramp)
 * @cur: the current window in pages
 * @max: the VM's nr_pages
 *
 * Return: the next window size, at most @max.
 */
u32 adaptive_next_size(u32 cur, u32 max)
{
	if (cur < max / 16)
		return cur * 4;
	if (cur <= max / 2)
		return cur * 2;
	return max;
}

/**
 * adaptive_stream_update() - learn from a fault and pick the next window
 * @s: the vCPU's stream
 * @gfn: the faulting gfn
 * @level_pages: pages the fault's own mapping spans
 * @max: the VM's nr_pages
 *
 * Return: the window size to prefetch with (0 or 1: none).  Also records
 * where that window starts and ends in @s.
 */
u32 adaptive_stream_update(struct adaptive_stream *s, u64 gfn,
			   u64 level_pages, u32 max)
{
	if (s->win && gfn == s->win_end) {
		/* The last window was used up: keep going, maybe bigger. */
		if (!s->chunk || s->win < s->chunk ||
		    ++s->full >= ADAPTIVE_FULL_TO_GROW) {
			s->win = adaptive_next_size(s->win, max);
			s->full = 0;
		}
	} else if (s->win && gfn > s->last && gfn < s->win_end) {
		/* Prefetch stopped at gfn: the host fills chunks this big. */
		s->chunk = gfn - s->last;
		s->win = s->chunk;
		s->full = 0;
	} else {
		/* A new stream, or random access. */
		s->win = ADAPTIVE_INIT_PAGES;
		s->chunk = 0;
		s->full = 0;
	}
	s->win = clamp_t(u32, s->win, 1, max);
	s->last = gfn;

	/* Where kvm_prefetch_aligned_window() will end the window. */
	if (s->win > level_pages)
		s->win_end = (gfn & ~((u64)rounddown_pow_of_two(s->win) - 1)) +
			     s->win;
	else
		s->win_end = (gfn & ~(level_pages - 1)) + level_pages;
	return s->win;
}

static bool adaptive_window(const struct kvm_prefetch_state *st,
			    const struct kvm_prefetch_fault *f,
			    struct kvm_prefetch_window *w)
{
	struct adaptive_vm *vm = st->priv;
	struct adaptive_stream *s;
	u32 nr_pages;

	s = &vm->streams[f->vcpu_idx % ADAPTIVE_STREAMS];
	spin_lock(&s->lock);
	nr_pages = adaptive_stream_update(s, f->gfn,
					  KVM_PREFETCH_LEVEL_PAGES(f->level),
					  st->nr_pages);
	spin_unlock(&s->lock);

	return kvm_prefetch_aligned_window(f->gfn, f->level, nr_pages, w);
}

static int adaptive_init(struct kvm_prefetch_state *st)
{
	struct adaptive_vm *vm;
	int i;

	vm = kzalloc(sizeof(*vm), GFP_KERNEL_ACCOUNT);
	if (!vm)
		return -ENOMEM;
	for (i = 0; i < ADAPTIVE_STREAMS; i++)
		spin_lock_init(&vm->streams[i].lock);
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
