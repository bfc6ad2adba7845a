/* SPDX-License-Identifier: GPL-2.0 */
/*
 * KVM prefetch policies: what KVM's generic code, the architecture's engine
 * and the VM and vCPU ioctls use among themselves.  Policy modules use
 * <linux/kvm_prefetch.h> only; nothing here is exported to them.
 */
#ifndef __KVM_PREFETCH_H
#define __KVM_PREFETCH_H

#include <linux/errno.h>
#include <linux/kvm_prefetch.h>
#include <linux/kvm_types.h>
#include <linux/moduleparam.h>

struct kvm_vcpu;
struct kvm_memory_slot;
struct seq_file;
struct kvm_prefetch_usage;

/*
 * The built-in policy that never opens a window: the compiled-in default,
 * and what a VM falls back to when its policy fails it.
 */
#define KVM_PREFETCH_FALLBACK	"none"

#ifdef CONFIG_KVM_GENERIC_PREFETCH

/* Implemented by the architecture, which selects KVM_GENERIC_PREFETCH. */
bool kvm_arch_prefetch_supported(struct kvm *kvm);

/* Module init and exit, VM lifetime, ioctls (virt/kvm/prefetch*.c). */
int kvm_prefetch_init(void);
void kvm_prefetch_exit(void);
int kvm_prefetch_vm_init(struct kvm *kvm);
void kvm_prefetch_vm_destroy(struct kvm *kvm);
void kvm_prefetch_vm_debugfs(struct kvm *kvm);
long kvm_prefetch_vm_ioctl(struct kvm *kvm, unsigned int ioctl,
			   void __user *argp);

/*
 * For the architecture's engine.  kvm_prefetch_may_open() is false while
 * the VM's policy can never open a window (none, or a window of at most
 * one page): the fault path then skips the policy without a call, an RCU
 * section or an indirect call.  Needs struct kvm (<linux/kvm_host.h>).
 * A racy read on purpose: the flag is a bool written with WRITE_ONCE()
 * under kvm->lock, and a stale value costs at most one window opened or
 * missed while the policy changes.  Unlike READ_ONCE() it lets
 * the compiler fold the load into the test.
 */
#define kvm_prefetch_may_open(kvm)	data_race((kvm)->prefetch_may_open)
bool kvm_prefetch_decide(struct kvm *kvm, const struct kvm_prefetch_fault *f,
			 struct kvm_prefetch_window *w);
bool kvm_prefetch_clip_window(const struct kvm_prefetch_window *w,
			      u64 base_gfn, u64 npages, u64 max_gfn,
			      u64 *start, u64 *end);
u32 kvm_prefetch_vm_gup(struct kvm *kvm);
bool kvm_prefetch_slot_allowed(const struct kvm_memory_slot *slot);
kvm_pfn_t kvm_prefetch_gfn_to_pfn(struct kvm_memory_slot *slot,
				  gfn_t gfn, u32 gup, bool *writable,
				  hva_t *hva);
int kvm_prefetch_gfn_run_to_pages(struct kvm_memory_slot *slot, gfn_t gfn,
				  int nr, u32 gup, struct page **pages,
				  bool *writable);
void kvm_prefetch_put_pfn(kvm_pfn_t pfn);
void kvm_prefetch_put_page(struct page *page, bool dirty);

/*
 * Which prefetched pages the guest used (virt/kvm/prefetch_usage.c), on
 * architectures whose engine reports it (KVM_PREFETCH_USAGE).  The
 * engine marks what it maps, the MMU accounts entries that go away or
 * age, and a read of the VM's stats harvests the accessed ones.
 * kvm_prefetch_usage_tracking() is false until a prefetch marked a page
 * in the VM: until then the MMU's hooks cost one load and a branch.
 */
#ifdef CONFIG_KVM_PREFETCH_USAGE
#include <linux/atomic.h>
#include <linux/xarray.h>

/*
 * Racy on purpose, as kvm_prefetch_may_open(): set once, cleared only
 * when the VM is destroyed.
 */
#define kvm_prefetch_usage_tracking(kvm)	data_race((kvm)->prefetch_tracking)

#define KVM_PREFETCH_USAGE_REGION_SHIFT	9	/* 512 frames, 2 MiB */

/* The bitmap of one 2 MiB of guest frames. */
struct kvm_prefetch_usage_region {
	unsigned long idx;	/* gfn >> KVM_PREFETCH_USAGE_REGION_SHIFT */
	unsigned long bits[(1 << KVM_PREFETCH_USAGE_REGION_SHIFT) / BITS_PER_LONG];
};

/**
 * struct kvm_prefetch_usage - one VM's prefetched pages of unknown fate
 * @regions: gfn >> KVM_PREFETCH_USAGE_REGION_SHIFT to a region: a bitmap of
 *	512 bits, one per guest frame a prefetch mapped and
 *	nobody accounted.  Regions live as long as the VM.
 * @last: the region used last, a racy cache in front of @regions: a
 *	window, a batch and a zap mostly stay in one region
 * @used: pages the guest used
 * @unused: pages that went away untouched
 * @avoided: used prefetched entries, one guest fault each
 * @untracked: pages not tracked because a bitmap could not be allocated
 */
struct kvm_prefetch_usage {
	struct xarray regions;
	struct kvm_prefetch_usage_region *last;
	atomic64_t used;
	atomic64_t unused;
	atomic64_t avoided;
	atomic64_t untracked;
};

void __kvm_prefetch_usage_mark_mask(struct kvm *kvm, u64 gfn, u64 mask);

/* A VM's usage accounting, for kvm_prefetch_usage_mark_mask(). */
#define kvm_prefetch_usage_of(kvm)	((kvm)->prefetch_usage)

/**
 * kvm_prefetch_usage_mark_mask() - note the pages of a batch as prefetched
 * @kvm: the VM
 * @u: its kvm->prefetch_usage
 * @gfn: the frame of bit 0 of @mask
 * @mask: bit i set for each frame @gfn + i a prefetch mapped
 *
 * The engine's fault path: inline, one atomic OR where the mask lies in
 * one long of the region used last, the common case of a batch.
 */
static inline void kvm_prefetch_usage_mark_mask(struct kvm *kvm,
						struct kvm_prefetch_usage *u,
						u64 gfn, u64 mask)
{
	unsigned int shift = gfn % BITS_PER_LONG;
	struct kvm_prefetch_usage_region *r = u ? READ_ONCE(u->last) : NULL;

	if (likely(r && r->idx == gfn >> KVM_PREFETCH_USAGE_REGION_SHIFT &&
		   (!shift || !(mask >> (BITS_PER_LONG - shift))))) {
		atomic_long_or(mask << shift, (atomic_long_t *)&r->bits
			       [(gfn % (1 << KVM_PREFETCH_USAGE_REGION_SHIFT)) /
				BITS_PER_LONG]);
		return;
	}
	__kvm_prefetch_usage_mark_mask(kvm, gfn, mask);
}

int kvm_prefetch_usage_init(struct kvm *kvm);
void kvm_prefetch_usage_destroy(struct kvm *kvm);
void kvm_prefetch_usage_stop(struct kvm *kvm);
void kvm_prefetch_usage_mark(struct kvm *kvm, u64 gfn, u64 nr);
void kvm_prefetch_usage_account(struct kvm *kvm, u64 gfn, u64 nr, bool used);
void kvm_prefetch_vm_stats_sync(struct kvm *kvm);
void kvm_prefetch_usage_show(struct seq_file *m, struct kvm *kvm);
/* Implemented by the architecture. */
void kvm_arch_prefetch_harvest(struct kvm *kvm, u64 start, u64 end);
u64 kvm_arch_prefetch_faults_taken(struct kvm *kvm);
#else
#define kvm_prefetch_usage_tracking(kvm)	((void)(kvm), false)
static inline int kvm_prefetch_usage_init(struct kvm *kvm) { return 0; }
static inline void kvm_prefetch_usage_destroy(struct kvm *kvm) {}
static inline void kvm_prefetch_usage_stop(struct kvm *kvm) {}
static inline void kvm_prefetch_usage_mark(struct kvm *kvm, u64 gfn, u64 nr) {}
#define kvm_prefetch_usage_of(kvm)	((void)(kvm), (struct kvm_prefetch_usage *)NULL)
static inline void kvm_prefetch_usage_mark_mask(struct kvm *kvm,
						struct kvm_prefetch_usage *u,
						u64 gfn, u64 mask) {}
static inline void kvm_prefetch_usage_account(struct kvm *kvm, u64 gfn,
					      u64 nr, bool used) {}
static inline void kvm_prefetch_vm_stats_sync(struct kvm *kvm) {}
#endif

/*
 * Record and replay (virt/kvm/prefetch_replay.c), on architectures whose
 * engine asks a policy's next() and records faults (KVM_PREFETCH_REPLAY).
 */
#ifdef CONFIG_KVM_PREFETCH_REPLAY
#include <linux/mutex.h>

struct kvm_prefetch_recording;
struct kvm_prefetch_replay_order;

/**
 * struct kvm_prefetch_replay - one VM's recording and replay order
 * @recording: the fault path records first touches; written under
 *	kvm->lock with kvm->prefetch_may_open, which is also true while the
 *	VM records, read racily (kvm_prefetch_recording())
 * @policy_open: the VM's policy may open a window: what
 *	kvm->prefetch_may_open would be if the VM did not record
 * @lock: serializes KVM_PREFETCH_ORDER
 * @rec: the last recording, or NULL
 * @order: the order the replay policy walks, or NULL
 */
struct kvm_prefetch_replay {
	bool recording;
	bool policy_open;
	struct mutex lock;	/* KVM_PREFETCH_ORDER, one at a time */
	struct kvm_prefetch_recording __rcu *rec;
	struct kvm_prefetch_replay_order __rcu *order;
};

/* Needs struct kvm; kvm->prefetch_replay lives as long as the VM. */
#define kvm_prefetch_recording(kvm) ({					\
	struct kvm_prefetch_replay *__rr = (kvm)->prefetch_replay;	\
									\
	/* Racy on purpose, as kvm_prefetch_may_open(). */		\
	__rr && data_race(__rr->recording);				\
})
/*
 * With kvm_prefetch_recording() true, may the VM's policy open a window?
 * Racy on purpose, as kvm_prefetch_may_open().
 */
#define kvm_prefetch_policy_may_open(kvm)				\
	/* written with the flag, under kvm->lock */			\
	data_race((kvm)->prefetch_replay->policy_open)

extern struct kvm_prefetch_ops kvm_prefetch_replay_ops;
int kvm_prefetch_replay_init(struct kvm *kvm);
void kvm_prefetch_replay_destroy(struct kvm *kvm);
void kvm_prefetch_record(struct kvm *kvm, u64 gfn, u64 nr);
long kvm_prefetch_order_ioctl(struct kvm *kvm, void __user *argp);
#else
#define kvm_prefetch_recording(kvm)		((void)(kvm), false)
#define kvm_prefetch_policy_may_open(kvm)	((void)(kvm), true)
static inline int kvm_prefetch_replay_init(struct kvm *kvm) { return 0; }
static inline void kvm_prefetch_replay_destroy(struct kvm *kvm) {}
static inline void kvm_prefetch_record(struct kvm *kvm, u64 gfn, u64 nr) {}
static inline long kvm_prefetch_order_ioctl(struct kvm *kvm,
					    void __user *argp)
{
	return -ENOTTY;
}
#endif
void kvm_prefetch_vm_update_may_open(struct kvm *kvm);
bool kvm_prefetch_next(struct kvm *kvm, const struct kvm_prefetch_fault *f,
		       struct kvm_prefetch_window *w, u32 *used);

/*
 * A module parameter that is one of @nr names (a NULL name is not
 * offered): module_param_cb(name, &kvm_prefetch_param_choice_ops, choice,
 * perm) stores the index of the name written into *@val.
 */
struct kvm_prefetch_param_choice {
	const char *const *names;
	u32 nr;
	u32 *val;
};

extern const struct kernel_param_ops kvm_prefetch_param_choice_ops;

/* Between the registry (prefetch.c) and the per-VM state (prefetch_vm.c). */
bool kvm_prefetch_name_valid(const char *name, size_t size);
const struct kvm_prefetch_ops *kvm_prefetch_get_policy(const char *name);
void kvm_prefetch_put_policy(const struct kvm_prefetch_ops *ops);
const struct kvm_prefetch_ops *kvm_prefetch_get_default(void);
bool kvm_prefetch_never_opens(const struct kvm_prefetch_ops *ops);
u32 kvm_prefetch_default_nr_pages(void);
u32 kvm_prefetch_default_gup(void);
const char *kvm_prefetch_gup_name(u32 gup);
int kvm_prefetch_policy_check(const struct kvm_prefetch_policy *p);
int kvm_prefetch_validate(const struct kvm_prefetch_ops *ops);

/*
 * Policies of BPF struct_ops maps (virt/kvm/prefetch_bpf.c, bases that
 * let a module register a struct_ops type: Linux 6.9+).  Their owner is
 * BPF_MODULE_OWNER; a VM references the map instead of a module.
 */
#ifdef CONFIG_KVM_PREFETCH_BPF
void kvm_prefetch_bpf_init(void);
bool kvm_prefetch_is_bpf(const struct kvm_prefetch_ops *ops);
bool kvm_prefetch_bpf_get(const struct kvm_prefetch_ops *ops);
void kvm_prefetch_bpf_put(const struct kvm_prefetch_ops *ops);
#else
static inline void kvm_prefetch_bpf_init(void) {}
static inline bool kvm_prefetch_is_bpf(const struct kvm_prefetch_ops *ops)
{
	return false;
}

static inline bool kvm_prefetch_bpf_get(const struct kvm_prefetch_ops *ops)
{
	return false;
}

static inline void kvm_prefetch_bpf_put(const struct kvm_prefetch_ops *ops) {}
#endif

#else /* !CONFIG_KVM_GENERIC_PREFETCH */

static inline bool kvm_arch_prefetch_supported(struct kvm *kvm)
{
	return false;
}

#define kvm_prefetch_may_open(kvm)	((void)(kvm), false)
static inline bool kvm_prefetch_slot_allowed(const struct kvm_memory_slot *slot)
{
	return false;
}

static inline void kvm_prefetch_put_pfn(kvm_pfn_t pfn) {}
static inline void kvm_prefetch_put_page(struct page *page, bool dirty) {}

static inline int kvm_prefetch_init(void) { return 0; }
static inline void kvm_prefetch_exit(void) {}
static inline int kvm_prefetch_vm_init(struct kvm *kvm) { return 0; }
static inline void kvm_prefetch_vm_destroy(struct kvm *kvm) {}
static inline void kvm_prefetch_vm_debugfs(struct kvm *kvm) {}
static inline void kvm_prefetch_usage_stop(struct kvm *kvm) {}
static inline void kvm_prefetch_vm_stats_sync(struct kvm *kvm) {}
#define kvm_prefetch_usage_tracking(kvm)	((void)(kvm), false)
static inline long kvm_prefetch_vm_ioctl(struct kvm *kvm, unsigned int ioctl,
					 void __user *argp)
{
	return -ENOTTY;
}

#endif /* CONFIG_KVM_GENERIC_PREFETCH */

#endif /* __KVM_PREFETCH_H */
