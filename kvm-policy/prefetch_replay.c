// SPDX-License-Identifier: GPL-2.0-only
/*
 * KVM prefetch policies: record a VM's first touches, replay them.
 *
 * A recording is the order in which the guest first touched its pages:
 * each guest fault (and async #PF completion) the MMU fixes appends its
 * frames, each frame once, consecutive frames coalesced into runs of up
 * to KVM_PREFETCH_RUN_MAX_PAGES.  A prefetched page the guest used has no
 * fault of its own: it is appended when the usage accounting learns of
 * its use (a stats read, aging, a zap; KVM_PREFETCH_RECORD_STOP harvests
 * first), so later than its touch.  The memslots of address space 0 at
 * KVM_PREFETCH_RECORD_START are what is recorded; a first touch anywhere
 * else, or past the bound, is counted dropped.  Memory: one bit per page
 * of those memslots (which frames are recorded) and at most
 * mem_pages / 2 - mem_pages / 64 runs of 8 bytes: 4 bytes per page at
 * most, 1 MiB per GiB, allocated at the start.  A fault takes the
 * recording's spinlock once, tests and sets its frame's bit and mostly
 * extends the last run: a frame is recorded once.  The recording is
 * freed after a grace period of kvm->srcu, which the fault path holds.
 *
 * An order (struct kvm_prefetch_order) is what a VMM reads out and saves
 * beside its snapshot, and hands to the replay policy of the VM that
 * restores it.  The policy has no window of its own (window() asks for
 * none): its next() walks the order from the VM's replay position,
 * one run per window, as long as the engine maps each run through to
 * its end (the host has every page of it) and the exit's budget (the
 * VM's nr_pages) lasts.  The first run the engine could not map whole
 * ends the exit and stays the position, which a VMM reads
 * (KVM_PREFETCH_ORDER_STATUS: replay_pos) to populate ahead of it; a run
 * the budget cuts short is gone on with, where the cut was, by the next
 * exit (the position counts pages within a run).
 * Runs are input: one in no memslot, or in one prefetch may not map, is
 * stepped over; a duplicate finds its pages mapped; the order need not be
 * sorted.  A new order replaces the old one under RCU, at any time.
 */
#define pr_fmt(fmt) "kvm-prefetch: " fmt

#include "prefetch_internal.h"

#define RUN_GFN(run)	KVM_PREFETCH_RUN_GFN(run)
#define RUN_PAGES(run)	KVM_PREFETCH_RUN_PAGES(run)
#define RUN_MAX_GFN	((1ULL << KVM_PREFETCH_RUN_GFN_BITS) - 1)

/* At most this many memslots are recorded; first touches elsewhere drop. */
#define REC_MAX_RANGES	32

struct rec_range {
	u64 base;	/* the memslot's first gfn */
	u64 npages;
	u64 bit;	/* its first bit in kvm_prefetch_recording.seen */
};

/**
 * struct kvm_prefetch_recording - one recording
 * @lock: protects what follows it, taken from the fault path
 * @nr_runs: runs in @runs; all but the last are final
 * @next: the frame that would extend the last run, or U64_MAX (no run,
 *	or the last one is full)
 * @nr_pages: the pages they span
 * @dropped: first touches not recorded: no range, or the bound reached
 * @truncated: the bound was reached
 * @max_runs: the bound
 * @mem_pages: the pages of @ranges
 * @nr_ranges: the memslots recorded
 * @ranges: their gfn ranges
 * @seen: one bit per page of @ranges: recorded (or dropped at the bound)
 * @runs: the order
 */
struct kvm_prefetch_recording {
	spinlock_t lock;	/* taken by the fault path, never in an IRQ */
	u64 nr_runs;
	u64 next;
	u64 nr_pages;
	u64 dropped;
	bool truncated;
	u64 max_runs;
	u64 mem_pages;
	u32 nr_ranges;
	struct rec_range ranges[REC_MAX_RANGES];
	unsigned long *seen;
	u64 *runs;
};

/*
 * The replay's position: run << POS_RUN_SHIFT | page of that run, so that
 * a run longer than an exit's budget is gone through over several exits.
 */
#define POS_RUN_SHIFT	12	/* KVM_PREFETCH_RUN_MAX_PAGES is 1 << 12 */
#define POS_RUN(pos)	((pos) >> POS_RUN_SHIFT)
#define POS_PAGE(pos)	((pos) & (BIT_ULL(POS_RUN_SHIFT) - 1))

/**
 * struct kvm_prefetch_replay_order - an order handed to the replay policy
 * @pos: how far the replay went, a position (POS_RUN(), POS_PAGE()):
 *	what lies before it was mapped through
 * @nr_runs: runs in @runs
 * @runs: the order
 */
struct kvm_prefetch_replay_order {
	atomic64_t pos;
	u64 nr_runs;
	u64 runs[];
};

/* The bound of a recording, or of an order, for @mem_pages of memslots. */
static u64 rr_max_runs(u64 mem_pages)
{
	return max_t(u64, mem_pages / 2 - mem_pages / 64, 1);
}

/* ---- recording ------------------------------------------------------ */

static void rec_free(struct kvm_prefetch_recording *rec)
{
	kvfree(rec->seen);
	kvfree(rec->runs);
	kfree(rec);
}

/* The range holding @gfn, or NULL. */
static __always_inline struct rec_range *
rec_range_of(struct kvm_prefetch_recording *rec, u64 gfn)
{
	u32 i;

	for (i = 0; i < rec->nr_ranges; i++)
		if (gfn - rec->ranges[i].base < rec->ranges[i].npages)
			return &rec->ranges[i];
	return NULL;
}

/* Append [@gfn, @gfn + @nr) to the order; rec->lock held. */
static void rec_append(struct kvm_prefetch_recording *rec, u64 gfn, u64 nr)
{
	u64 *last, take, pages;

	while (nr) {
		if (rec->nr_runs) {
			last = &rec->runs[rec->nr_runs - 1];
			pages = RUN_PAGES(*last);
			if (RUN_GFN(*last) + pages == gfn &&
			    pages < KVM_PREFETCH_RUN_MAX_PAGES) {
				take = min(nr, KVM_PREFETCH_RUN_MAX_PAGES - pages);
				/* A reader may copy the last run meanwhile. */
				WRITE_ONCE(*last, KVM_PREFETCH_RUN(RUN_GFN(*last),
								   pages + take));
				goto next;
			}
		}
		if (rec->nr_runs == rec->max_runs) {
			rec->dropped += nr;
			rec->truncated = true;
			return;
		}
		take = min_t(u64, nr, KVM_PREFETCH_RUN_MAX_PAGES);
		rec->runs[rec->nr_runs++] = KVM_PREFETCH_RUN(gfn, take);
next:
		rec->nr_pages += take;
		gfn += take;
		nr -= take;
		pages = RUN_PAGES(rec->runs[rec->nr_runs - 1]);
		rec->next = pages < KVM_PREFETCH_RUN_MAX_PAGES ? gfn : U64_MAX;
	}
}

/*
 * Record the frames of [@gfn, @gfn + @nr) not recorded yet, in order: a
 * huge page's, or frames outside every range (dropped).  Out of line, so
 * that kvm_prefetch_record()'s path for one frame keeps to few registers.
 */
static noinline void rec_frames(struct kvm_prefetch_recording *rec, u64 gfn,
				u64 nr)
{
	struct rec_range *r = rec_range_of(rec, gfn);
	unsigned long first, end, bit, stop;

	if (!r) {
		spin_lock(&rec->lock);
		rec->dropped += nr;
		spin_unlock(&rec->lock);
		return;
	}
	nr = min(nr, r->base + r->npages - gfn);
	first = r->bit + (gfn - r->base);
	end = first + nr;
	spin_lock(&rec->lock);
	for (bit = find_next_zero_bit(rec->seen, end, first); bit < end;
	     bit = find_next_zero_bit(rec->seen, end, stop)) {
		stop = find_next_bit(rec->seen, end, bit);
		bitmap_set(rec->seen, bit, stop - bit);
		rec_append(rec, r->base + (bit - r->bit), stop - bit);
	}
	spin_unlock(&rec->lock);
}

/*
 * Append one frame: the 4 KiB fault, the common case, which mostly
 * extends the last run by one; rec->lock held.
 */
static __always_inline void rec_append_one(struct kvm_prefetch_recording *rec,
					   u64 gfn)
{
	u64 *last;

	if (gfn != rec->next) {
		rec_append(rec, gfn, 1);
		return;
	}
	/* One more page: the length field, in the top bits, + 1. */
	last = &rec->runs[rec->nr_runs - 1];
	WRITE_ONCE(*last, *last + BIT_ULL(KVM_PREFETCH_RUN_GFN_BITS));
	rec->nr_pages++;
	rec->next = RUN_PAGES(*last) < KVM_PREFETCH_RUN_MAX_PAGES ? gfn + 1 :
								     U64_MAX;
}

/**
 * kvm_prefetch_record() - record first touches
 * @kvm: the VM, kvm_prefetch_recording() true a moment ago
 * @gfn: the first guest frame the guest touched
 * @nr: the frames: what its fault mapped, or the used prefetched entry
 *	(1 or more)
 *
 * Context: kvm->srcu held (the recording is freed after a grace period of
 * it), task context: the MMU's fault path, or the usage accounting.
 * The recording's spinlock is never taken in an interrupt.
 */
void kvm_prefetch_record(struct kvm *kvm, u64 gfn, u64 nr)
{
	struct kvm_prefetch_recording *rec;
	struct rec_range *r;
	u64 bit;

	rec = srcu_dereference(kvm->prefetch_replay->rec, &kvm->srcu);
	if (unlikely(!rec))
		return;
	r = rec_range_of(rec, gfn);
	if (unlikely(!r || nr != 1)) {
		rec_frames(rec, gfn, nr);
		return;
	}
	bit = r->bit + (gfn - r->base);
	spin_lock(&rec->lock);
	if (!__test_and_set_bit(bit, rec->seen))
		rec_append_one(rec, gfn);
	spin_unlock(&rec->lock);
}

static int rec_range_cmp(const void *a, const void *b)
{
	const struct rec_range *x = a, *y = b;

	return x->npages < y->npages ? 1 : x->npages > y->npages ? -1 : 0;
}

/* A recording of the memslots of address space 0 as they are now. */
static struct kvm_prefetch_recording *rec_create(struct kvm *kvm,
						 u64 max_runs)
{
	struct kvm_prefetch_recording *rec;
	struct kvm_memory_slot *slot;
	struct kvm_memslots *slots;
	u64 pages = 0;
	int bkt;

	rec = kzalloc(sizeof(*rec), GFP_KERNEL_ACCOUNT);
	if (!rec)
		return ERR_PTR(-ENOMEM);
	spin_lock_init(&rec->lock);
	rec->next = U64_MAX;

	mutex_lock(&kvm->slots_lock);
	slots = __kvm_memslots(kvm, 0);
	kvm_for_each_memslot(slot, bkt, slots) {
		if (slot->id >= KVM_USER_MEM_SLOTS || !slot->npages)
			continue;
		if (rec->nr_ranges == REC_MAX_RANGES)
			break;
		rec->ranges[rec->nr_ranges++] = (struct rec_range) {
			.base = slot->base_gfn, .npages = slot->npages,
			.bit = pages,
		};
		pages += slot->npages;
	}
	mutex_unlock(&kvm->slots_lock);
	/* The largest first: a fault mostly finds its range at once. */
	sort(rec->ranges, rec->nr_ranges, sizeof(rec->ranges[0]),
	     rec_range_cmp, NULL);

	rec->mem_pages = pages;
	rec->max_runs = rr_max_runs(pages);
	if (max_runs)
		rec->max_runs = min(rec->max_runs, max_runs);
	rec->seen = kvcalloc(BITS_TO_LONGS(max_t(u64, pages, 1)),
			     sizeof(long), GFP_KERNEL_ACCOUNT);
	rec->runs = kvmalloc_array(rec->max_runs, sizeof(u64),
				   GFP_KERNEL_ACCOUNT);
	if (!rec->seen || !rec->runs) {
		rec_free(rec);
		return ERR_PTR(-ENOMEM);
	}
	return rec;
}

/* ---- the replay policy ---------------------------------------------- */

/* Every window comes from next(). */
static bool replay_window(const struct kvm_prefetch_state *st,
			  const struct kvm_prefetch_fault *f,
			  struct kvm_prefetch_window *w)
{
	return false;
}

/* The replay went through to @pos: move the VM's position there. */
static void replay_advance(struct kvm_prefetch_replay_order *o, u64 pos)
{
	s64 old = atomic64_read(&o->pos);

	while (old < (s64)pos && !atomic64_try_cmpxchg(&o->pos, &old, pos))
		;
}

/*
 * The rest of the order from the VM's position at the first call of an
 * exit, one run (or what is left of it) per window; after a window mapped
 * through, what follows it (@w->cursor is the window's position + 1, and
 * @w->nr_pages what the core left of it).  A window the budget cut short
 * moves the position to where the cut was: the next exit goes on there.
 */
static bool replay_next(const struct kvm_prefetch_state *st,
			const struct kvm_prefetch_fault *f,
			struct kvm_prefetch_window *w)
{
	struct kvm_prefetch_replay *rr = st->kvm->prefetch_replay;
	struct kvm_prefetch_replay_order *o;
	u64 pos, idx, page, run;

	o = rr ? rcu_dereference(rr->order) : NULL;
	if (!o)
		return false;
	if (w->cursor) {
		idx = POS_RUN(w->cursor - 1);
		page = POS_PAGE(w->cursor - 1) + w->nr_pages;
		/* A new order may have come since: check against it. */
		if (idx < o->nr_runs && page >= RUN_PAGES(o->runs[idx])) {
			idx++;
			page = 0;
		}
		pos = idx << POS_RUN_SHIFT | page;
		replay_advance(o, pos);
	} else {
		pos = atomic64_read(&o->pos);
	}
	idx = POS_RUN(pos);
	page = POS_PAGE(pos);
	if (idx >= o->nr_runs)
		return false;
	run = o->runs[idx];
	if (page >= RUN_PAGES(run))
		return false;
	w->start = RUN_GFN(run) + page;
	w->nr_pages = RUN_PAGES(run) - page;
	w->cursor = pos + 1;
	return true;
}

struct kvm_prefetch_ops kvm_prefetch_replay_ops = {
	.window			= replay_window,
	.next			= replay_next,
	.default_nr_pages	= 2048,
	.name			= "replay",
	.owner			= THIS_MODULE,
};

/* ---- per VM ---------------------------------------------------------- */

/**
 * kvm_prefetch_replay_init() - set up a new VM's record and replay state
 * @kvm: the VM being created
 *
 * Return: 0 or -ENOMEM.
 */
int kvm_prefetch_replay_init(struct kvm *kvm)
{
	struct kvm_prefetch_replay *rr;

	rr = kzalloc(sizeof(*rr), GFP_KERNEL_ACCOUNT);
	if (!rr)
		return -ENOMEM;
	mutex_init(&rr->lock);
	kvm->prefetch_replay = rr;
	return 0;
}

/**
 * kvm_prefetch_replay_destroy() - free a VM's recording and order
 * @kvm: the VM, with no vCPU and no file left
 */
void kvm_prefetch_replay_destroy(struct kvm *kvm)
{
	struct kvm_prefetch_replay *rr = kvm->prefetch_replay;
	struct kvm_prefetch_recording *rec;

	if (!rr)
		return;
	kvm->prefetch_replay = NULL;
	rec = rcu_dereference_protected(rr->rec, 1);
	if (rec)
		rec_free(rec);
	kvfree(rcu_dereference_protected(rr->order, 1));
	kfree(rr);
}

/* The pages of the memslots of address space 0 (user memslots only). */
static u64 rr_mem_pages(struct kvm *kvm)
{
	struct kvm_memory_slot *slot;
	struct kvm_memslots *slots;
	u64 pages = 0;
	int bkt, idx;

	idx = srcu_read_lock(&kvm->srcu);
	slots = __kvm_memslots(kvm, 0);
	kvm_for_each_memslot(slot, bkt, slots)
		if (slot->id < KVM_USER_MEM_SLOTS)
			pages += slot->npages;
	srcu_read_unlock(&kvm->srcu, idx);
	return pages;
}

/*
 * Copy the order at @addr (@size bytes) in, checked; ERR_PTR(-EFAULT,
 * -EINVAL, -E2BIG, -ENOMEM) else.
 */
static struct kvm_prefetch_replay_order *
rr_order_copy_in(struct kvm *kvm, u64 addr, u64 size)
{
	void __user *uaddr = u64_to_user_ptr(addr);
	struct kvm_prefetch_replay_order *o;
	struct kvm_prefetch_order hdr;
	u64 i, pages = 0, max;

	if (size < sizeof(hdr))
		return ERR_PTR(-EINVAL);
	if (copy_from_user(&hdr, uaddr, sizeof(hdr)))
		return ERR_PTR(-EFAULT);
	if (hdr.magic != KVM_PREFETCH_ORDER_MAGIC ||
	    hdr.version != KVM_PREFETCH_ORDER_VERSION ||
	    (hdr.flags & ~KVM_PREFETCH_ORDER_TRUNCATED) || hdr.pad ||
	    memchr_inv(hdr.reserved, 0, sizeof(hdr.reserved)))
		return ERR_PTR(-EINVAL);
	max = rr_max_runs(rr_mem_pages(kvm));
	if (hdr.nr_runs > max)
		return ERR_PTR(-E2BIG);
	if (size != sizeof(hdr) + hdr.nr_runs * sizeof(u64))
		return ERR_PTR(-EINVAL);

	o = kvmalloc(struct_size(o, runs, hdr.nr_runs), GFP_KERNEL_ACCOUNT);
	if (!o)
		return ERR_PTR(-ENOMEM);
	if (copy_from_user(o->runs, uaddr + sizeof(hdr),
			   hdr.nr_runs * sizeof(u64))) {
		kvfree(o);
		return ERR_PTR(-EFAULT);
	}
	/* Every run must lie below 2^52 frames; the header must add up. */
	for (i = 0; i < hdr.nr_runs; i++) {
		if (RUN_GFN(o->runs[i]) + RUN_PAGES(o->runs[i]) - 1 >
		    RUN_MAX_GFN)
			break;
		pages += RUN_PAGES(o->runs[i]);
	}
	if (i < hdr.nr_runs || pages != hdr.nr_pages) {
		kvfree(o);
		return ERR_PTR(-EINVAL);
	}
	o->nr_runs = hdr.nr_runs;
	atomic64_set(&o->pos, 0);
	return o;
}

/* REPLAY_LOAD: make the order at @addr the VM's; rr->lock held. */
static int rr_load(struct kvm *kvm, struct kvm_prefetch_replay *rr,
		   u64 addr, u64 size)
{
	struct kvm_prefetch_replay_order *o, *old;

	o = rr_order_copy_in(kvm, addr, size);
	if (IS_ERR(o))
		return PTR_ERR(o);
	old = rcu_replace_pointer(rr->order, o, lockdep_is_held(&rr->lock));
	/* vCPUs may be in replay_next() with the old one. */
	if (old) {
		synchronize_rcu();
		kvfree(old);
	}
	return 0;
}

/* Whether the VM records; kvm->lock held (see kvm_prefetch_may_open()). */
static void rr_set_recording(struct kvm *kvm, struct kvm_prefetch_replay *rr,
			     bool on)
{
	mutex_lock(&kvm->lock);
	WRITE_ONCE(rr->recording, on);
	kvm_prefetch_vm_update_may_open(kvm);
	mutex_unlock(&kvm->lock);
}

/* START: a new recording replaces the old one; rr->lock held. */
static int rr_start(struct kvm *kvm, struct kvm_prefetch_replay *rr,
		    u64 max_runs)
{
	struct kvm_prefetch_recording *rec, *old;

	rec = rec_create(kvm, max_runs);
	if (IS_ERR(rec))
		return PTR_ERR(rec);
	rr_set_recording(kvm, rr, false);
	old = rcu_replace_pointer(rr->rec, rec, lockdep_is_held(&rr->lock));
	/* No fault path is in the old one after this. */
	synchronize_srcu(&kvm->srcu);
	if (old)
		rec_free(old);
	rr_set_recording(kvm, rr, true);
	return 0;
}

/* STOP: the prefetched pages used so far are recorded first. */
static void rr_stop(struct kvm *kvm, struct kvm_prefetch_replay *rr)
{
	if (!READ_ONCE(rr->recording))
		return;
	kvm_prefetch_vm_stats_sync(kvm);
	rr_set_recording(kvm, rr, false);
	/* Nothing appends after this. */
	synchronize_srcu(&kvm->srcu);
}

/*
 * READ: copy the recording out; rr->lock held, so that START cannot free
 * it meanwhile (a user copy that blocks holds up only this VM's
 * KVM_PREFETCH_ORDER).  Runs before the last one
 * are final, the last one may still grow: it is taken with the count.
 */
static int rr_read(struct kvm_prefetch_replay *rr,
		   struct kvm_prefetch_order_op *op)
{
	struct kvm_prefetch_recording *rec;
	struct kvm_prefetch_order hdr = {
		.magic = KVM_PREFETCH_ORDER_MAGIC,
		.version = KVM_PREFETCH_ORDER_VERSION,
	};
	void __user *uaddr = u64_to_user_ptr(op->addr);
	u64 last = 0, need;
	int ret = 0;

	rec = rcu_dereference_protected(rr->rec, lockdep_is_held(&rr->lock));
	if (!rec)
		return -ENOENT;
	spin_lock(&rec->lock);
	hdr.nr_runs = rec->nr_runs;
	hdr.nr_pages = rec->nr_pages;
	hdr.flags = rec->truncated ? KVM_PREFETCH_ORDER_TRUNCATED : 0;
	if (hdr.nr_runs)
		last = rec->runs[hdr.nr_runs - 1];
	spin_unlock(&rec->lock);
	hdr.mem_pages = rec->mem_pages;

	need = sizeof(hdr) + hdr.nr_runs * sizeof(u64);
	if (op->size < need) {
		op->size = need;
		return -E2BIG;
	}
	op->size = need;
	if (copy_to_user(uaddr, &hdr, sizeof(hdr)))
		return -EFAULT;
	if (hdr.nr_runs &&
	    (copy_to_user(uaddr + sizeof(hdr), rec->runs,
			  (hdr.nr_runs - 1) * sizeof(u64)) ||
	     put_user(last, (u64 __user *)(uaddr + need - sizeof(u64)))))
		ret = -EFAULT;
	return ret;
}

/* The state every operation reports; rr->lock held. */
static void rr_status(struct kvm_prefetch_replay *rr,
		      struct kvm_prefetch_order_op *op)
{
	struct kvm_prefetch_recording *rec;
	struct kvm_prefetch_replay_order *o;

	op->state = 0;
	rec = rcu_dereference_protected(rr->rec, lockdep_is_held(&rr->lock));
	if (rec) {
		spin_lock(&rec->lock);
		op->rec_runs = rec->nr_runs;
		op->rec_pages = rec->nr_pages;
		op->rec_dropped = rec->dropped;
		op->rec_max_runs = rec->max_runs;
		if (rec->truncated)
			op->state |= KVM_PREFETCH_STATE_TRUNCATED;
		spin_unlock(&rec->lock);
		if (READ_ONCE(rr->recording))
			op->state |= KVM_PREFETCH_STATE_RECORDING;
	}
	o = rcu_dereference_protected(rr->order, lockdep_is_held(&rr->lock));
	if (o) {
		op->state |= KVM_PREFETCH_STATE_LOADED;
		op->replay_runs = o->nr_runs;
		op->replay_pos = min_t(u64, POS_RUN(atomic64_read(&o->pos)),
				       o->nr_runs);
	}
}

/**
 * kvm_prefetch_order_ioctl() - KVM_PREFETCH_ORDER
 * @kvm: the VM
 * @argp: the user's struct kvm_prefetch_order_op
 *
 * Return: 0 or -errno: -EINVAL (unknown operation, non-zero flags, pad,
 * reserved or, but for START, max_runs; a malformed order), -ENOENT (READ
 * with no recording), -E2BIG (READ: size too small, set to what is
 * needed; LOAD: more runs than the bound), -EFAULT, -ENOMEM,
 * -EOPNOTSUPP (no prefetch for this VM).
 */
long kvm_prefetch_order_ioctl(struct kvm *kvm, void __user *argp)
{
	struct kvm_prefetch_replay *rr = kvm->prefetch_replay;
	struct kvm_prefetch_order_op op;
	long ret = 0;

	if (copy_from_user(&op, argp, sizeof(op)))
		return -EFAULT;
	if (op.flags || op.pad || memchr_inv(op.reserved, 0, sizeof(op.reserved)) ||
	    (op.max_runs && op.op != KVM_PREFETCH_RECORD_START))
		return -EINVAL;
	if (!rr || !kvm_arch_prefetch_supported(kvm))
		return -EOPNOTSUPP;

	mutex_lock(&rr->lock);
	switch (op.op) {
	case KVM_PREFETCH_RECORD_START:
		ret = rr_start(kvm, rr, op.max_runs);
		break;
	case KVM_PREFETCH_RECORD_STOP:
		rr_stop(kvm, rr);
		break;
	case KVM_PREFETCH_RECORD_READ:
		ret = rr_read(rr, &op);
		break;
	case KVM_PREFETCH_REPLAY_LOAD:
		ret = rr_load(kvm, rr, op.addr, op.size);
		break;
	case KVM_PREFETCH_ORDER_STATUS:
		break;
	default:
		ret = -EINVAL;
	}
	if (!ret || ret == -E2BIG)
		rr_status(rr, &op);
	mutex_unlock(&rr->lock);
	if ((!ret || ret == -E2BIG) && copy_to_user(argp, &op, sizeof(op)))
		return -EFAULT;
	return ret;
}
