/* SPDX-License-Identifier: GPL-2.0 */
/*
 * KVM prefetch policies: the API for policy modules.  What only KVM itself
 * uses is in <kvm/prefetch.h>.
 *
 * When KVM resolves a page fault it asks the VM's prefetch policy whether
 * to map neighbouring guest pages too, and which ones.  A policy is an ops
 * table registered by name; each VM uses one, chosen with
 * KVM_SET_PREFETCH_POLICY or taken from the kvm.prefetch_policy default.
 * The engine (arch code) then maps the window with faults of origin
 * KVM_PREFETCH_AUTO, which never wait for I/O, never fault a host page in
 * and never trigger further prefetch.
 */
#ifndef __LINUX_KVM_PREFETCH_H
#define __LINUX_KVM_PREFETCH_H

#include <linux/types.h>
#include <linux/list.h>
#include <uapi/linux/kvm_prefetch.h>

struct kvm;
struct module;

/* Where a fault into the MMU comes from; fixed rules, not pluggable. */
enum kvm_prefetch_type {
	KVM_PREFETCH_GUEST_FAULT,	/* a guest page fault */
	KVM_PREFETCH_MANUAL,	/* userspace prefault (KVM_PRE_FAULT_MEMORY) */
	KVM_PREFETCH_ASYNC,	/* completion of an async #PF */
	KVM_PREFETCH_AUTO,	/* a prefetch issued for a policy's window */
};

/**
 * struct kvm_prefetch_fault - a resolved fault, as a policy sees it
 * @origin: where the fault came from (never KVM_PREFETCH_AUTO)
 * @gfn: the faulting guest frame
 * @error_code: the fault's error code
 * @mapped_pages: 4 KiB pages that the mapping the fault installed spans
 *	(1, or e.g. 512 for a 2 MiB mapping); a power of two, and the mapping
 *	starts at @gfn aligned down to it
 * @vcpu_idx: index of the vCPU that took the fault
 */
struct kvm_prefetch_fault {
	enum kvm_prefetch_type origin;
	u64 gfn;
	u64 error_code;
	u32 mapped_pages;
	unsigned int vcpu_idx;
};

/**
 * struct kvm_prefetch_window - what a policy asks the engine to map
 * @start: first guest frame
 * @nr_pages: length in 4 KiB pages
 *
 * The engine clips the window to the faulting memslot, the maximum GFN,
 * KVM_PREFETCH_MAX_PAGES and the VM's nr_pages, and maps pages of the
 * clipped window only, none outside it: outward from the faulting page if
 * the window holds it, else from the window's end nearest to the fault.
 * Forward it steps over what is mapped; backward the first mapped page
 * ends the scan; in either direction a page the host does not have ends
 * it.  A page is mapped at the largest level whose block lies inside the
 * clipped window and covers nothing mapped.  One exit examines at most
 * 16384 pages of a window, mapped or not, and past 512 stops when
 * something waits for the vCPU (an interrupt to inject, a memslot
 * update); the guest's next fault in the rest asks the policy again.
 * @cursor is the policy's own: 0 when window() is called, and handed
 * back to next() as the policy left it.  @more is the core's: set when
 * the policy has a next() hook; a policy's write to it is ignored.
 */
struct kvm_prefetch_window {
	u64 start;
	u32 nr_pages;
	u32 more;
	u64 cursor;
};

/**
 * struct kvm_prefetch_state - one VM's prefetch configuration
 * @ops: the policy
 * @priv: the policy's per-VM state (set by @ops->init)
 * @kvm: the VM
 * @nr_pages: the VM's window, the cap for any window the policy returns
 * @gup: KVM_PREFETCH_GUP_NOFAULT or KVM_PREFETCH_GUP_FAST_ONLY
 * @ejected: set by the core, once, when the policy answered out of
 *	contract; the VM maps as with none until its policy is set again
 *
 * Replaced as a whole, never modified in place, when the VM's policy or
 * parameters change; readers hold rcu_read_lock().  A policy's init()
 * may set @priv and nothing else.
 */
struct kvm_prefetch_state {
	const struct kvm_prefetch_ops *ops;
	void *priv;
	struct kvm *kvm;
	u32 nr_pages;
	u32 gup;
	bool ejected;
};

/**
 * struct kvm_prefetch_ops - a prefetch policy
 * @window: (required) decide whether to prefetch after fault @f and fill
 *	in @w.  Return true to prefetch.  Called with rcu_read_lock() held
 *	from the vCPU's fault path: must not sleep or take mmu_lock.  @w
 *	comes set to { @f->gfn, 0 }: true without writing it maps nothing.
 *	Any window is clipped (see struct kvm_prefetch_window) but one whose
 *	last page would lie past gfn 2^64 - 1: that answer ejects the
 *	policy from the VM, which then maps as with none until userspace
 *	sets its policy again.
 * @next: (optional) one more window in the same exit.  Called after
 *	window() (whether or not it asked for a window) and after each
 *	window next() returned, as long as the engine mapped the last
 *	window through to its end: @w holds the last window, as far as the
 *	engine mapped it (nr_pages 0 after window() asked for none),
 *	@w->cursor as the policy left it.  Fill in @w and return true for
 *	the next window, false to end the exit.  Also called when the
 *	exit's budget is spent, so that the policy learns its last window
 *	was mapped through; that answer is dropped.  Unlike window()'s, these windows
 *	lie in whichever memslot holds their start: the engine clips each
 *	to that memslot and steps over one in no memslot, or in one
 *	prefetch may not map, as if mapped.  All windows of one exit
 *	together span at most the VM's nr_pages.  Same context and
 *	contract as window().
 * @init: (optional) set up @st->priv for a VM that starts using the
 *	policy.  May sleep.  Return 0 or -errno (-MAX_ERRNO to -1); any
 *	other value, or a change to a field of @st but @priv, fails the
 *	selection with -EINVAL.
 * @release: (optional) free @st->priv.  Called after a grace period, when
 *	no fault can still be in @window with this state.  May sleep.
 * @default_nr_pages: (optional) the VM's window when it comes from a
 *	default (KVM_SET_PREFETCH_POLICY with nr_pages 0, or a new VM that
 *	starts with the kvm.prefetch_policy default): the window of a
 *	fixed-window policy, or the most a policy whose window adapts may
 *	grow to.  At most KVM_PREFETCH_MAX_PAGES; 0 means the
 *	kvm.prefetch_nr_pages default.  An explicit nr_pages always wins.
 * @name: unique name, 1-15 characters of [a-z0-9_-]
 * @owner: THIS_MODULE
 * @list: registry linkage, owned by the core
 */
struct kvm_prefetch_ops {
	bool (*window)(const struct kvm_prefetch_state *st,
		       const struct kvm_prefetch_fault *f,
		       struct kvm_prefetch_window *w);
	bool (*next)(const struct kvm_prefetch_state *st,
		     const struct kvm_prefetch_fault *f,
		     struct kvm_prefetch_window *w);
	int (*init)(struct kvm_prefetch_state *st);
	void (*release)(struct kvm_prefetch_state *st);
	u32 default_nr_pages;

	char name[KVM_PREFETCH_POLICY_NAME_MAX];
	struct module *owner;
	struct list_head list;
};

int kvm_prefetch_register(struct kvm_prefetch_ops *ops);
void kvm_prefetch_unregister(struct kvm_prefetch_ops *ops);
bool kvm_prefetch_aligned_window(u64 gfn, u32 mapped_pages, u32 nr_pages,
				 struct kvm_prefetch_window *w);

#endif /* __LINUX_KVM_PREFETCH_H */
