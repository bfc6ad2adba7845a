// SPDX-License-Identifier: GPL-2.0-only
/*
 * KVM prefetch policies: which prefetched pages the guest used.
 *
 * The engine maps a window's pages not accessed: the CPU sets the
 * Accessed bit of a prefetched SPTE (or stage-2 entry) at the guest's
 * first access, or the entry leaves the access-tracked state where the
 * MMU has no A/D bits.  Each VM keeps one bit per 4 KiB guest frame that
 * a prefetch mapped and whose fate is not known yet ("untouched"), in a
 * bitmap per 2 MiB of guest frames, allocated at the first prefetch
 * there.  A page leaves the bitmap exactly once:
 *  - as used, when a harvest (a read of the VM's stats) finds its entry
 *    accessed, or when aging clears the Accessed bit;
 *  - as used or unused, when its entry goes away (zap, unmap, memslot
 *    change) or is split, by the entry's Accessed state.
 * When the VM is destroyed nobody can read its stats any more: its last
 * zaps account nothing (kvm_prefetch_usage_stop()).
 * Each used prefetched entry is one guest fault the window avoided.
 * The architecture reports those events (kvm_prefetch_usage_account()),
 * walks its entries for a harvest (kvm_arch_prefetch_harvest(): it calls
 * kvm_prefetch_usage_account(..., true) for each accessed entry of the
 * range) and says how many guest faults the VM took
 * (kvm_arch_prefetch_faults_taken()).
 *
 * Bits change with atomic operations only, so that the engine (mmu_lock
 * held for read), zaps (read or write) and harvests count every page
 * once; marking a page is one atomic OR, nothing else, as it is on the
 * fault path: the untouched pages are counted when the stats are read.
 * The counters are VM stats (prefetch_used, prefetch_unused,
 * prefetch_avoided, prefetch_untouched), brought up to date when the
 * VM's stats are read.
 */
#define pr_fmt(fmt) "kvm-prefetch: " fmt

#include "prefetch_internal.h"

#define USAGE_REGION_SHIFT	KVM_PREFETCH_USAGE_REGION_SHIFT
#define USAGE_REGION_PAGES	BIT(USAGE_REGION_SHIFT)
#define USAGE_REGION_LONGS	(USAGE_REGION_PAGES / BITS_PER_LONG)

/**
 * kvm_prefetch_usage_init() - set up a new VM's usage accounting
 * @kvm: the VM being created
 *
 * Return: 0 or -ENOMEM.
 */
int kvm_prefetch_usage_init(struct kvm *kvm)
{
	struct kvm_prefetch_usage *u;

	u = kzalloc(sizeof(*u), GFP_KERNEL_ACCOUNT);
	if (!u)
		return -ENOMEM;
	xa_init(&u->regions);
	kvm->prefetch_usage = u;
	return 0;
}

/**
 * kvm_prefetch_usage_destroy() - free a VM's usage accounting
 * @kvm: the VM, with its MMU torn down: no entry can be accounted any more
 */
void kvm_prefetch_usage_destroy(struct kvm *kvm)
{
	struct kvm_prefetch_usage *u = kvm->prefetch_usage;
	struct kvm_prefetch_usage_region *r;
	unsigned long idx;

	if (!u)
		return;
	kvm->prefetch_usage = NULL;
	xa_for_each(&u->regions, idx, r)
		kfree(r);
	xa_destroy(&u->regions);
	kfree(u);
}

/**
 * kvm_prefetch_usage_stop() - stop accounting, the VM being destroyed
 * @kvm: the VM, whose last reference is gone: nobody can read its stats
 *	any more
 *
 * Its SPTEs are about to be zapped, all of them: accounting them would
 * cost every zap and tell nobody anything.
 */
void kvm_prefetch_usage_stop(struct kvm *kvm)
{
	WRITE_ONCE(kvm->prefetch_tracking, false);
}

/* usage_region() past its cache. */
static noinline unsigned long *usage_region_slow(struct kvm *kvm,
						 struct kvm_prefetch_usage *u,
						 unsigned long idx, bool create)
{
	struct kvm_prefetch_usage_region *r, *old;

	r = xa_load(&u->regions, idx);
	if (r || !create)
		goto out;
	r = kzalloc(sizeof(*r), GFP_NOWAIT | __GFP_ACCOUNT | __GFP_NOWARN);
	if (!r)
		return NULL;
	r->idx = idx;
	/* Before any bit is set: the MMU's hooks must look from now on. */
	WRITE_ONCE(kvm->prefetch_tracking, true);
	old = xa_cmpxchg(&u->regions, idx, NULL, r,
			 GFP_NOWAIT | __GFP_ACCOUNT | __GFP_NOWARN);
	if (old) {
		kfree(r);
		if (xa_is_err(old))
			return NULL;
		r = old;
	}
out:
	if (!r)
		return NULL;
	WRITE_ONCE(u->last, r);
	return r->bits;
}

/* The bitmap of @gfn's region; allocated without sleeping if @create. */
static __always_inline unsigned long *
usage_region(struct kvm *kvm, struct kvm_prefetch_usage *u, u64 gfn,
	     bool create)
{
	unsigned long idx = gfn >> USAGE_REGION_SHIFT;
	struct kvm_prefetch_usage_region *r = READ_ONCE(u->last);

	if (likely(r && r->idx == idx))
		return r->bits;
	return usage_region_slow(kvm, u, idx, create);
}

/* The bits of [@first, @first + @nr) of one long, @first % BITS_PER_LONG. */
static unsigned long usage_mask(unsigned int first, unsigned int nr)
{
	return GENMASK(first + nr - 1, first);
}

/*
 * Set (@set) or clear the bits of [@gfn, @gfn + @nr).  Return the number
 * of bits that changed.
 */
static u64 usage_update(struct kvm *kvm, struct kvm_prefetch_usage *u,
			u64 gfn, u64 nr, bool set)
{
	u64 end = gfn + nr, changed = 0;

	while (gfn < end) {
		u64 region_end = (gfn | (USAGE_REGION_PAGES - 1)) + 1;
		u64 stop = min(end, region_end);
		unsigned long *bits = usage_region(kvm, u, gfn, set);

		if (!bits) {
			if (set)
				atomic64_add(stop - gfn, &u->untracked);
			gfn = stop;
			continue;
		}
		while (gfn < stop) {
			unsigned int bit = gfn % BITS_PER_LONG;
			unsigned int n = min_t(u64, stop - gfn,
					       BITS_PER_LONG - bit);
			atomic_long_t *word = (atomic_long_t *)
				&bits[(gfn % USAGE_REGION_PAGES) / BITS_PER_LONG];
			unsigned long mask = usage_mask(bit, n), old;

			if (set) {
				old = atomic_long_fetch_or(mask, word);
				changed += hweight_long(mask & ~old);
			} else {
				old = atomic_long_fetch_andnot(mask, word);
				changed += hweight_long(mask & old);
			}
			gfn += n;
		}
	}
	return changed;
}

/**
 * kvm_prefetch_usage_mark() - note pages a prefetch maps, not accessed
 * @kvm: the VM
 * @gfn: the first guest frame
 * @nr: the number of 4 KiB frames, one entry's (or a run of entries')
 *
 * Called by the engine for what it mapped: with mmu_lock still held
 * where it can (the batch's huge SPTE), else right after the AUTO fault
 * that mapped it.  Never sleeps; a page whose bitmap cannot be allocated
 * is counted untracked.
 */
void kvm_prefetch_usage_mark(struct kvm *kvm, u64 gfn, u64 nr)
{
	struct kvm_prefetch_usage *u = kvm->prefetch_usage;

	if (u && nr)
		usage_update(kvm, u, gfn, nr, true);
}

/* Set @bits in the long of the bitmaps that holds @gfn64 (64-aligned). */
static __always_inline void usage_or(struct kvm *kvm,
				     struct kvm_prefetch_usage *u, u64 gfn64,
				     unsigned long bits)
{
	unsigned long *b = usage_region(kvm, u, gfn64, true);

	if (!b) {
		atomic64_add(hweight_long(bits), &u->untracked);
		return;
	}
	atomic_long_or(bits, (atomic_long_t *)
		       &b[(gfn64 % USAGE_REGION_PAGES) / BITS_PER_LONG]);
}

/**
 * __kvm_prefetch_usage_mark_mask() - kvm_prefetch_usage_mark_mask()'s slow path
 * @kvm: the VM
 * @gfn: the frame of bit 0 of @mask
 * @mask: bit i set for each frame @gfn + i a prefetch mapped
 *
 * For a mask that is not in one long of the cached region.
 */
void __kvm_prefetch_usage_mark_mask(struct kvm *kvm, u64 gfn, u64 mask)
{
	struct kvm_prefetch_usage *u = kvm->prefetch_usage;
	unsigned int shift = gfn % BITS_PER_LONG;
	u64 base = gfn - shift;

	if (!u || !mask)
		return;
	if (mask << shift)
		usage_or(kvm, u, base, mask << shift);
	if (shift && mask >> (BITS_PER_LONG - shift))
		usage_or(kvm, u, base + BITS_PER_LONG,
			 mask >> (BITS_PER_LONG - shift));
}

/**
 * kvm_prefetch_usage_account() - the fate of entries that map tracked pages
 * @kvm: the VM
 * @gfn: the first guest frame of the entry
 * @nr: the 4 KiB frames it maps
 * @used: whether the guest accessed the entry
 *
 * Tracked pages of the range leave the bitmap and are counted used or
 * unused; an entry with used pages is one avoided guest fault.  Pages
 * not tracked (the guest's own faults) count nothing.  Any context.
 */
void kvm_prefetch_usage_account(struct kvm *kvm, u64 gfn, u64 nr, bool used)
{
	struct kvm_prefetch_usage *u = kvm->prefetch_usage;
	u64 n;

	if (!u)
		return;
	n = usage_update(kvm, u, gfn, nr, false);
	if (!n)
		return;
	if (used) {
		atomic64_add(n, &u->used);
		atomic64_inc(&u->avoided);
		/* A first touch that took no fault of its own. */
		if (kvm_prefetch_recording(kvm)) {
			int idx = srcu_read_lock(&kvm->srcu);

			kvm_prefetch_record(kvm, gfn, nr);
			srcu_read_unlock(&kvm->srcu, idx);
		}
	} else {
		atomic64_add(n, &u->unused);
	}
}

/*
 * Harvest every region with tracked pages; return the pages still
 * tracked after it.
 */
static u64 usage_harvest(struct kvm *kvm, struct kvm_prefetch_usage *u)
{
	struct kvm_prefetch_usage_region *r;
	unsigned long idx;
	u64 untouched = 0;

	xa_for_each(&u->regions, idx, r) {
		if (bitmap_empty(r->bits, USAGE_REGION_PAGES))
			continue;
		kvm_arch_prefetch_harvest(kvm, (u64)idx << USAGE_REGION_SHIFT,
					  ((u64)idx + 1) << USAGE_REGION_SHIFT);
		untouched += bitmap_weight(r->bits, USAGE_REGION_PAGES);
		cond_resched();
	}
	return untouched;
}

/**
 * kvm_prefetch_vm_stats_sync() - bring the VM's prefetch usage stats up to date
 * @kvm: the VM, whose stats are about to be read (the binary stats file,
 *	debugfs); may sleep
 *
 * Harvests what the guest used since the last read and copies the
 * counters into kvm->stat.
 */
void kvm_prefetch_vm_stats_sync(struct kvm *kvm)
{
	struct kvm_prefetch_usage *u = kvm->prefetch_usage;
	u64 untouched = 0;

	if (!u)
		return;
	if (kvm_prefetch_usage_tracking(kvm))
		untouched = usage_harvest(kvm, u);
	WRITE_ONCE(kvm->stat.generic.prefetch_used, atomic64_read(&u->used));
	WRITE_ONCE(kvm->stat.generic.prefetch_unused,
		   atomic64_read(&u->unused));
	WRITE_ONCE(kvm->stat.generic.prefetch_avoided,
		   atomic64_read(&u->avoided));
	WRITE_ONCE(kvm->stat.generic.prefetch_untouched, untouched);
}

/* Per mille of @num / @den, or -1 for 0 / 0. */
static long usage_permille(u64 num, u64 den)
{
	return den ? (long)div64_u64(num * 1000, den) : -1;
}

static void usage_seq_ratio(struct seq_file *m, const char *name, long pm)
{
	if (pm < 0)
		seq_printf(m, " %s=-", name);
	else
		seq_printf(m, " %s=%ld.%01ld%%", name, pm / 10, pm % 10);
}

/**
 * kvm_prefetch_usage_show() - the VM's usage, for its debugfs file
 * @m: the file
 * @kvm: the VM
 *
 * One line: the counters, the guest faults the VM took
 * (kvm_arch_prefetch_faults_taken()), precision = used / (used + unused)
 * and coverage = avoided / (avoided + faults).
 */
void kvm_prefetch_usage_show(struct seq_file *m, struct kvm *kvm)
{
	const struct kvm_vm_stat_generic *s = &kvm->stat.generic;
	u64 faults;

	kvm_prefetch_vm_stats_sync(kvm);
	faults = kvm_arch_prefetch_faults_taken(kvm);
	seq_printf(m, "used=%llu unused=%llu untouched=%llu avoided=%llu faults=%llu untracked=%llu",
		   READ_ONCE(s->prefetch_used), READ_ONCE(s->prefetch_unused),
		   READ_ONCE(s->prefetch_untouched),
		   READ_ONCE(s->prefetch_avoided), faults,
		   kvm->prefetch_usage ?
		   (u64)atomic64_read(&kvm->prefetch_usage->untracked) : 0);
	usage_seq_ratio(m, "precision",
			usage_permille(s->prefetch_used,
				       s->prefetch_used + s->prefetch_unused));
	usage_seq_ratio(m, "coverage",
			usage_permille(s->prefetch_avoided,
				       s->prefetch_avoided + faults));
	seq_putc(m, '\n');
}
