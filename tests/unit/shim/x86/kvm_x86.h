/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The x86 KVM around the prefetch engine (arch/x86/kvm/mmu/prefetch.c),
 * for tests that #include the engine: copies of the x86 definitions it
 * uses, each naming its source file, and a simulated TDP MMU over guest
 * frames [0, SIM_PAGES) in x86_sim:
 *
 *   x86_sim.mapped[gfn]  level of the leaf SPTE mapping gfn, 0 for none;
 *                        kvm_tdp_mmu_get_walk() reports it, and for a gfn
 *                        not mapped the level of the first SPTE on its
 *                        path that is not present (page tables exist
 *                        where something below is mapped)
 *   x86_sim.host[gfn]    level the host can back gfn at, 0 if the host does
 *                        not have the page; kvm_mmu_do_page_fault() maps
 *                        the whole block at that level, or at the level
 *                        *level caps a prefetch fault at (RET_PF_FIXED),
 *                        returns RET_PF_SPURIOUS for a prefetch fault whose
 *                        block something is mapped in (the 0002 hook
 *                        patch) or RET_PF_RETRY, as an AUTO fault does
 *   x86_sim.ret[gfn]     a scripted kvm_mmu_do_page_fault() result, 0 for
 *                        none
 *   x86_sim.private_mem[gfn]  gfn is private (guest_memfd) memory, as 6.12's
 *                        kvm_mem_is_private() would say (prefetch_mmu.h)
 *
 * and a log of the frames faulted and walked.  The engine's includes
 * (<linux/kvm_host.h>, "mmu.h", "spte.h", ...) resolve to files in
 * shim/linux and shim/x86 that only check this one came first.
 *
 * Include after the shim's prefetch_internal.h (with SHIM_X86_ENGINE
 * defined) and the kvm-policy/ files the engine calls.
 */
#ifndef __SHIM_KVM_X86_H
#define __SHIM_KVM_X86_H

/* arch/x86/include/asm/pgtable_types.h */
enum pg_level {
	PG_LEVEL_NONE,
	PG_LEVEL_4K,
	PG_LEVEL_2M,
	PG_LEVEL_1G,
	PG_LEVEL_512G,
	PG_LEVEL_NUM
};

/* arch/x86/include/asm/kvm_host.h */
#define KVM_HPAGE_GFN_SHIFT(x)	(((x) - 1) * 9)
#define KVM_HPAGE_SHIFT(x)	(PAGE_SHIFT + KVM_HPAGE_GFN_SHIFT(x))
#define KVM_HPAGE_SIZE(x)	(1UL << KVM_HPAGE_SHIFT(x))
#define KVM_HPAGE_MASK(x)	(~(KVM_HPAGE_SIZE(x) - 1))
#define KVM_PAGES_PER_HPAGE(x)	(KVM_HPAGE_SIZE(x) / PAGE_SIZE)
#define PT64_ROOT_MAX_LEVEL	5
#define KVM_MAX_HUGEPAGE_LEVEL	PG_LEVEL_1G
#define HF_GUEST_MASK		(1 << 5)

/* arch/x86/kvm/mmu/mmu_internal.h */
enum {
	RET_PF_CONTINUE = 0,
	RET_PF_RETRY,
	RET_PF_EMULATE,
	RET_PF_INVALID,
	RET_PF_FIXED,
	RET_PF_SPURIOUS,
};

/* arch/x86/kvm/mmu/mmu_internal.h (the fields the engine uses) */
struct kvm_page_fault {
	const gpa_t addr;
	const u32 error_code;
	const enum kvm_prefetch_type prefetch_type;	/* 0001 hook patch */
	const bool present;
	const bool rsvd;
	const bool is_tdp;
	u8 goal_level;
	gfn_t gfn;
	struct kvm_memory_slot *slot;
	kvm_pfn_t pfn;
	hva_t hva;
	bool map_writable;
};

/* arch/x86/include/asm/kvm_host.h (the fields the engine uses) */
struct kvm_mmu {
	int (*page_fault)(struct kvm_vcpu *vcpu, struct kvm_page_fault *fault);
	bool tdp_mmu_root;	/* shim: is_tdp_mmu() */
};

/* arch/x86/kvm/mmu.h and mmu/spte.h */
#define PT_PAGE_SIZE_MASK	(1ULL << 7)
#define SPTE_MMU_PRESENT_MASK	BIT_ULL(11)

static inline bool is_shadow_present_pte(u64 pte)
{
	return !!(pte & SPTE_MMU_PRESENT_MASK);
}

static inline bool is_large_pte(u64 pte)
{
	return pte & PT_PAGE_SIZE_MASK;
}

static inline bool is_last_spte(u64 pte, int level)
{
	return (level == PG_LEVEL_4K) || is_large_pte(pte);
}

/* The A/D type bits of a TDP SPTE, and the dirty bit (NPT's, here). */
#define SPTE_TDP_AD_SHIFT		52
#define SPTE_TDP_AD_MASK		(3ULL << SPTE_TDP_AD_SHIFT)
#define SPTE_TDP_AD_ENABLED_MASK	(0ULL << SPTE_TDP_AD_SHIFT)
#define SPTE_TDP_AD_DISABLED_MASK	(1ULL << SPTE_TDP_AD_SHIFT)
#define SPTE_TDP_AD_WRPROT_ONLY_MASK	(2ULL << SPTE_TDP_AD_SHIFT)
static u64 shadow_dirty_mask = 1ULL << 6;

static inline bool spte_ad_enabled(u64 spte)
{
	return (spte & SPTE_TDP_AD_MASK) != SPTE_TDP_AD_DISABLED_MASK;
}

static inline bool spte_ad_need_write_protect(u64 spte)
{
	return (spte & SPTE_TDP_AD_MASK) != SPTE_TDP_AD_ENABLED_MASK;
}

/* arch/x86/kvm/kvm_cache_regs.h */
static inline bool is_guest_mode(struct kvm_vcpu *vcpu)
{
	return vcpu->arch.hflags & HF_GUEST_MASK;
}

/* arch/x86/kvm/mmu/tdp_mmu.h */
static inline void kvm_tdp_mmu_walk_lockless_begin(void)
{
	rcu_read_lock();
}

static inline void kvm_tdp_mmu_walk_lockless_end(void)
{
	rcu_read_unlock();
}

/* ---- the simulated MMU ---------------------------------------------- */

#define SIM_PAGES	(2 * SIM_1G)	/* two 1 GiB blocks */
#define SIM_2M		512
#define SIM_1G		(512 * SIM_2M)
#define SIM_LOG		2048

static struct {
	u8 mapped[SIM_PAGES];
	u8 host[SIM_PAGES];
	int ret[SIM_PAGES];
	bool private_mem[SIM_PAGES];	/* gfn is private (guest_memfd) */
	/* Mapped frames per 2 MiB and per 1 GiB block, for the walks. */
	u32 mapped_2m[SIM_PAGES / SIM_2M];
	u32 mapped_1g[SIM_PAGES / SIM_1G];
	enum kvm_prefetch_type fault_type;	/* of every fault */
	gfn_t signal_at;	/* faulting here raises a signal (0: never) */
	gfn_t request_at;	/* faulting here raises a request (0: never) */
	gfn_t invalidate_at;	/* faulting here marks the slot INVALID */
	bool no_root;		/* walks find no root (return -1) */
	bool legacy_mmu;	/* kvm.tdp_mmu=N: the VM has no TDP MMU */
	gfn_t max_gfn;		/* kvm_mmu_max_gfn() */
	int reload_ret;		/* kvm_mmu_reload() */
	bool root_obsolete;	/* faults only retry until it is freed */
	int nr_root_frees;	/* kvm_mmu_free_obsolete_roots() */
	struct kvm_memory_slot *slot;	/* kvm_vcpu_gfn_to_memslot() */
	gfn_t faults[SIM_LOG];	/* kvm_mmu_do_page_fault() in call order */
	int nr_faults;
	int nr_walks;		/* kvm_tdp_mmu_get_walk() */
	int walks[SIM_PAGES];	/* ... per frame */
	gfn_t batch_until;	/* the batched engine maps up to here */
	int batch_calls;	/* kvm_mmu_prefetch_batch() */
	int window_open;	/* kvm_mmu_prefetch_window(): open minus closed */
	u64 batch_mapped;	/* ... 4 KiB pages it mapped */
	gfn_t lo, hi;		/* frames mapped since the last reset */
} x86_sim;

static bool tdp_enabled;

static inline bool x86_sim_gfn_ok(gfn_t gfn, const char *what)
{
	if (gfn < SIM_PAGES)
		return true;
	shim_violation(__FILE__, __LINE__, "%s(%#llx) outside the simulation",
		       what, (unsigned long long)gfn);
	return false;
}

/* Install a leaf SPTE of @level over the block holding @gfn. */
static inline void x86_sim_map(gfn_t gfn, int level)
{
	u64 n = KVM_PAGES_PER_HPAGE(level), i;

	for (i = ALIGN_DOWN(gfn, n); i < ALIGN_DOWN(gfn, n) + n; i++) {
		if (!x86_sim_gfn_ok(i, "map"))
			continue;
		if (!x86_sim.mapped[i]) {
			x86_sim.mapped_2m[i / SIM_2M]++;
			x86_sim.mapped_1g[i / SIM_1G]++;
		}
		x86_sim.mapped[i] = level;
	}
	i = ALIGN_DOWN(gfn, n);
	if (x86_sim.hi == x86_sim.lo || i < x86_sim.lo)
		x86_sim.lo = i;
	if (i + n > x86_sim.hi)
		x86_sim.hi = i + n;
}

/* Is some frame of the block of @level holding @gfn mapped? */
static inline bool x86_sim_block_used(gfn_t gfn, int level)
{
	if (level >= PG_LEVEL_1G)
		return x86_sim.mapped_1g[gfn / SIM_1G];
	if (level == PG_LEVEL_2M)
		return x86_sim.mapped_2m[gfn / SIM_2M];
	return x86_sim.mapped[gfn];
}

/*
 * 6.1's walk: the SPTEs from the root down to the first that is not
 * present or is a leaf; return that one's level.
 */
static inline int kvm_tdp_mmu_get_walk(struct kvm_vcpu *vcpu, u64 addr,
				       u64 *sptes, int *root_level)
{
	gfn_t gfn = gpa_to_gfn(addr);
	int leaf, level;

	if (!shim.rcu_depth)
		shim_violation(__FILE__, __LINE__,
			       "get_walk() outside walk_lockless_begin()");
	*root_level = 4;
	if (x86_sim.no_root || !x86_sim_gfn_ok(gfn, "get_walk"))
		return -1;
	x86_sim.nr_walks++;
	x86_sim.walks[gfn]++;
	if (x86_sim.mapped[gfn])
		leaf = x86_sim.mapped[gfn];
	else if (x86_sim_block_used(gfn, PG_LEVEL_2M))
		leaf = PG_LEVEL_4K;
	else if (x86_sim_block_used(gfn, PG_LEVEL_1G))
		leaf = PG_LEVEL_2M;
	else
		leaf = PG_LEVEL_1G;
	for (level = *root_level; level > leaf; level--)
		sptes[level] = SPTE_MMU_PRESENT_MASK;
	sptes[leaf] = 0;
	if (x86_sim.mapped[gfn])
		sptes[leaf] = SPTE_MMU_PRESENT_MASK |
			      (leaf > PG_LEVEL_4K ? PT_PAGE_SIZE_MASK : 0);
	return leaf;
}

/*
 * The fault path as an AUTO fault sees it: map what the host has at the
 * level it has it, capped for an AUTO fault at the level *level holds on
 * entry (the 0007 hook patch), RET_PF_RETRY where it has nothing.  A fault
 * of any origin but a guest fault does not replace what is mapped in its
 * block (the 0002 hook patch): RET_PF_SPURIOUS.  *level is the fault's
 * goal_level: 0 unless a mapping was installed or found.  Every fault must
 * be of x86_sim.fault_type.
 */
static inline int kvm_mmu_do_page_fault(struct kvm_vcpu *vcpu, gpa_t gpa,
					u32 err, enum kvm_prefetch_type type,
					int *emulation_type, u8 *level)
{
	gfn_t gfn = gpa_to_gfn(gpa);
	int r, max_level = KVM_MAX_HUGEPAGE_LEVEL, goal;

	shim_might_sleep("kvm_mmu_do_page_fault()", __FILE__, __LINE__);
	/* Its SPTE is made clean only inside kvm_mmu_prefetch_window(). */
	if (type == KVM_PREFETCH_AUTO && x86_sim.window_open != 1)
		shim_violation(__FILE__, __LINE__,
			       "AUTO fault at %#llx outside an open window",
			       (unsigned long long)gfn);
	if (type == KVM_PREFETCH_AUTO && level && *level >= PG_LEVEL_4K &&
	    *level <= KVM_MAX_HUGEPAGE_LEVEL)
		max_level = *level;
	if (type != x86_sim.fault_type || err || emulation_type || !level)
		shim_violation(__FILE__, __LINE__,
			       "fault %#llx: type %d err %#x emulation %p level %p",
			       (unsigned long long)gfn, type, err,
			       (void *)emulation_type, (void *)level);
	if (!x86_sim_gfn_ok(gfn, "fault") || !level)
		return -EFAULT;
	if (x86_sim.nr_faults < SIM_LOG)
		x86_sim.faults[x86_sim.nr_faults] = gfn;
	x86_sim.nr_faults++;
	/* A retry loop that never ends gets a signal instead of hanging. */
	if (gfn == x86_sim.signal_at || x86_sim.nr_faults > 100000)
		shim.signal_pending = true;
	if (gfn == x86_sim.request_at)
		vcpu->requests |= 1;
	if (gfn == x86_sim.invalidate_at)
		x86_sim.slot->flags |= KVM_MEMSLOT_INVALID;

	*level = 0;
	if (x86_sim.root_obsolete) {
		r = RET_PF_RETRY;	/* is_page_fault_stale() */
	} else if (x86_sim.ret[gfn]) {
		r = x86_sim.ret[gfn];
	} else if (x86_sim.mapped[gfn]) {
		*level = x86_sim.mapped[gfn];
		r = RET_PF_SPURIOUS;
	} else if (!x86_sim.host[gfn]) {
		r = RET_PF_RETRY;
	} else {
		goal = min_t(int, x86_sim.host[gfn], max_level);
		*level = goal;
		if (type != KVM_PREFETCH_GUEST_FAULT && x86_sim_block_used(gfn, goal))
			return RET_PF_SPURIOUS;
		x86_sim_map(gfn, goal);
		r = RET_PF_FIXED;
	}
	return r;
}

static inline int kvm_tdp_page_fault(struct kvm_vcpu *vcpu,
				     struct kvm_page_fault *fault)
{
	return RET_PF_INVALID;
}

static inline bool is_tdp_mmu(struct kvm_mmu *mmu)
{
	return mmu->tdp_mmu_root;
}

static inline gfn_t kvm_mmu_max_gfn(void)
{
	return x86_sim.max_gfn;
}

/*
 * arch/x86/include/asm/kvm_host.h, include/linux/kvm_host.h: the shim's
 * own bit numbers.  The fault simulation's request_at raises bit 0.
 */
#define KVM_REQ_EVENT			0
#define KVM_REQ_MMU_FREE_OBSOLETE_ROOTS	1
#define KVM_REQ_NMI			2
#define KVM_REQ_VM_DEAD			3
#define KVM_REQ_STEAL_UPDATE		4

static inline bool kvm_test_request(int req, struct kvm_vcpu *vcpu)
{
	return vcpu->requests & BIT_ULL(req);
}

static inline bool kvm_check_request(int req, struct kvm_vcpu *vcpu)
{
	if (!(vcpu->requests & BIT_ULL(req)))
		return false;
	vcpu->requests &= ~BIT_ULL(req);
	return true;
}

static inline void kvm_mmu_free_obsolete_roots(struct kvm_vcpu *vcpu)
{
	x86_sim.nr_root_frees++;
	x86_sim.root_obsolete = false;
}

static inline int kvm_mmu_reload(struct kvm_vcpu *vcpu)
{
	return x86_sim.reload_ret;
}

static inline struct kvm_memory_slot *
kvm_vcpu_gfn_to_memslot(struct kvm_vcpu *vcpu, gfn_t gfn)
{
	struct kvm_memory_slot *slot = x86_sim.slot;

	if (slot && gfn >= slot->base_gfn && gfn - slot->base_gfn < slot->npages)
		return slot;
	return NULL;
}

#endif /* __SHIM_KVM_X86_H */
