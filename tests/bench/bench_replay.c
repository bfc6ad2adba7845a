// SPDX-License-Identifier: GPL-2.0
/*
 * bench_replay - record and replay of a restore's first-touch order
 * (issue 50), run inside the test VM by "make bench-replay" (kp.mode=test,
 * kp.tests=bench_replay, arguments in kp.replay=k=v,k=v on the kernel
 * command line).  Without kp.replay= (e.g. under "make bench", which runs
 * every bench* program) it SKIPs at once.
 *
 * Workload (REAP-like, deterministic): the working set is a seeded
 * pseudo-random subset of about frac% (50) of the 4 KiB pages of mib MiB
 * (64), touched (the guest writes one dword, the page's address, into
 * each) in a seeded irregular order made of short sequential runs of 1 to
 * 16 pages at random places, each page once.  The guest walks a table of
 * page addresses (its own memslot, read by a small guest program, so the
 * whole order runs in one KVM_RUN).  The "changed" workload is the same
 * table with changed% (10) of its entries, at seeded positions, replaced
 * by distinct pages outside the working set.
 *
 * The guest is kvmtest's irqchip mode (in-kernel irqchip, IF=1, as VMMs
 * run guests).  The vCPU thread and the handler thread are pinned to one
 * CPU (pin=0; -1: not pinned), as in bench.c.  The populate loop of the
 * prefault and replay arms runs in the handler thread, one piece after
 * each batch of faults and pieces while none is pending (loop_cpu=-1), or
 * in a thread of its own pinned to loop_cpu=N, as a VMM's prefetch thread
 * would; handler_nice=-10 keeps the vCPU it wakes from preempting the
 * handler thread, which then gets ahead.  The data memslot is
 * restored through userfaultfd by this program's own handler thread:
 * copy mode (private anonymous memory, MISSING, UFFDIO_COPY from a
 * source buffer) and zero-copy (a shared memfd whose page cache holds the
 * snapshot, MINOR, UFFDIO_CONTINUE).  A fault populates the aligned chunk
 * of chunk KiB (64) around the faulting page (the pages of it that are
 * not there yet), the faulting page last, then wakes the chunk.
 *
 * First, per restore mode, the recording pass: a fresh VM, policy none,
 * KVM_PREFETCH_RECORD_START, the workload under the on-demand handler,
 * RECORD_STOP, RECORD_READ.  The order is checked against what the guest
 * touched: every touched page recorded exactly once (else FAIL); the
 * count of recorded pages the guest did not touch is printed.  Without
 * KVM_PREFETCH_ORDER (a kernel without issue 50's code) the order is the
 * workload's own first-touch order (order=workload in the output) and
 * the replay arms print skipped=1.
 *
 * Arms, each in both restore modes, interleaved (reversed in even
 * rounds), rounds (3) times:
 *   none            policy none, on-demand handler
 *   auto-C          policy auto, nr_pages chunk/4 KiB, gup nofault
 *   prefault        policy none; the handler also populates the recorded
 *                   runs in order, ahead of the guest (pieces of at most a
 *                   chunk, uffd events served first), and after each piece
 *                   calls KVM_PRE_FAULT_MEMORY over it through a spare vCPU
 *   replay          the same populate loop, no KVM_PRE_FAULT_MEMORY;
 *                   policy replay (nr_pages 0: its default) with the order
 *                   loaded (KVM_PREFETCH_REPLAY_LOAD) before the guest runs
 *   replay-changed  replay with the recorded order, the changed workload
 *   prefault-changed prefault with the recorded order, the changed workload
 *   floor           no userfaultfd, memory populated up front, policy none
 *   floor-mapped    the same, all of it mapped with KVM_PRE_FAULT_MEMORY
 *                   before the pass
 * (arms=a:b:c runs only those).  The populate loop starts when the guest
 * does (the restore and the guest begin together) and stops when the
 * guest is done.
 *
 * Per run one line "@@REPLAY arm=... mode=copy|zc round=N key=value ...":
 * time_ms (the guest's pass, wall time), faults (the vCPU's pf_taken),
 * pf_fixed, prefetched (prefetch_mapped), prefaulted (pages mapped by
 * KVM_PRE_FAULT_MEMORY), used/unused/untouched/avoided (the VM's usage
 * stats over the pass), precision = used / (used + unused + untouched)
 * and coverage = avoided / (avoided + faults) in percent, events (uffd),
 * ahead (pages the populate loop brought in), ahead_runs (the runs of
 * the order it got through before the guest was done), replay_pos and
 * replay_runs (KVM_PREFETCH_ORDER_STATUS after the pass), ok; the
 * recording pass (arm=record, round 0) adds the order's runs and pages
 * and its check against the workload.  Every run verifies
 * every touched page (its dword 0 and the rest of it against the source)
 * and every other page the handler populated; a wrong page is a FAIL
 * line and ok=0.  tests/bench/replay-report.py makes the table.
 *
 * Arguments (kp.replay=, comma separated; lists colon separated):
 *   mib=64 chunk=64 rounds=3 seed=1 frac=50 changed=10 maxrun=16 pin=0
 *   loop_cpu=-1 handler_nice=0 (the handler thread's nice value)
 *   rest=0 (1: the populate loop goes on, after the order, with the rest
 *   of memory in address order, a chunk at a time: the pages a changed
 *   workload touches outside the order then mostly find their host page)
 *   demo=0 (1: a short table at the end, for make demo)
 *   modes=copy:zc arms=none:auto-C:prefault:replay:replay-changed:
 *   prefault-changed:floor:floor-mapped
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <linux/userfaultfd.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>

#include "kvmtest.h"
#include "kt_sys.h"
#include "kt_uffd.h"
#include "kt_bench.h"

#define PAGE		KT_PAGE_SIZE
#define DATA_SLOT	1
#define DATA_GPA	0x400000ULL	/* 4 MiB, 2 MiB aligned */
#define TAB_SLOT	2
#define TAB_GPA		0x200000ULL	/* the guest's table, below the data */
#define TAB_MAX		(DATA_GPA - TAB_GPA)
#define PROG_GPA	0x40ULL		/* after kvmtest's touch program */
#define ALIGN_2M	(2ULL << 20)

/* ---- parameters ----------------------------------------------------- */

static unsigned int mib = 64, chunk_kib = 64, rounds = 3, seed = 1;
static unsigned int frac = 50, changed_pct = 10, maxrun = 16;
static int pin;		/* CPU 0; -1: not pinned */
static int loop_cpu = -1;	/* -1: the handler runs the populate loop */
static int handler_nice;	/* the handler thread's nice value */
static unsigned int rest;	/* 1: the populate loop goes on with the rest */

enum rmode { M_COPY, M_ZC, NR_RMODES };
static const char *const rmode_names[] = { "copy", "zc" };
static bool rmode_on[NR_RMODES] = { true, true };

enum arm { A_NONE, A_AUTO, A_PREFAULT, A_REPLAY, A_REPLAY_CHG,
	   A_PREFAULT_CHG, A_FLOOR, A_FLOOR_MAPPED, NR_ARMS };
static const char *const arm_names[] = { "none", "auto-C", "prefault",
	"replay", "replay-changed", "prefault-changed", "floor",
	"floor-mapped" };
static bool arm_on[NR_ARMS] = { true, true, true, true, true, true, true,
				true };

static bool arm_changed(enum arm a)
{
	return a == A_REPLAY_CHG || a == A_PREFAULT_CHG;
}

static bool arm_replay(enum arm a)
{
	return a == A_REPLAY || a == A_REPLAY_CHG;
}

static bool arm_prefault(enum arm a)
{
	return a == A_PREFAULT || a == A_PREFAULT_CHG;
}

static bool arm_floor(enum arm a)
{
	return a == A_FLOOR || a == A_FLOOR_MAPPED;
}

/* ---- the workload ---------------------------------------------------- */

static uint32_t xorshift(uint32_t *x)
{
	*x ^= *x << 13;
	*x ^= *x >> 17;
	*x ^= *x << 5;
	return *x;
}

struct workload {
	uint64_t pages;		/* of the data memslot */
	uint64_t n;		/* pages touched, = entries of the order */
	uint32_t *order;	/* page numbers, in touch order */
	uint8_t *in;		/* in[p]: p is touched */
};

/*
 * The working set and its order: runs of 1..maxrun pages at random
 * places; pages already in the set are skipped, until frac% of the pages
 * are in it.
 */
static void wl_build(struct workload *w, uint64_t pages)
{
	uint64_t target = pages * frac / 100, p, k, len;
	uint32_t x = seed * 2654435761u | 1;

	w->pages = pages;
	w->n = 0;
	w->order = malloc(pages * sizeof(*w->order));
	w->in = calloc(pages, 1);
	KT_ASSERT(w->order && w->in && target, "workload of %llu pages",
		  (unsigned long long)pages);
	while (w->n < target) {
		p = xorshift(&x) % pages;
		len = 1 + xorshift(&x) % maxrun;
		for (k = p; k < p + len && k < pages && w->n < target; k++) {
			if (w->in[k])
				continue;
			w->in[k] = 1;
			w->order[w->n++] = k;
		}
	}
}

/*
 * The changed workload: changed_pct% of the entries of @w, at seeded
 * positions, replaced by distinct pages outside @w's set.
 */
static void wl_change(const struct workload *w, struct workload *c)
{
	uint64_t nchg = w->n * changed_pct / 100, nout = 0, i, j, p;
	uint32_t x = (seed + 7919) * 2654435761u | 1, t;
	uint32_t *pos, *out;

	c->pages = w->pages;
	c->n = w->n;
	c->order = malloc(w->n * sizeof(*c->order));
	c->in = calloc(w->pages, 1);
	pos = malloc(w->n * sizeof(*pos));
	out = malloc(w->pages * sizeof(*out));
	KT_ASSERT(c->order && c->in && pos && out, "malloc");
	memcpy(c->order, w->order, w->n * sizeof(*c->order));
	for (p = 0; p < w->pages; p++)
		if (!w->in[p])
			out[nout++] = p;
	KT_ASSERT(nout >= nchg, "changed: %llu pages outside, %llu wanted",
		  (unsigned long long)nout, (unsigned long long)nchg);
	for (i = 0; i < w->n; i++)
		pos[i] = i;
	/* The first nchg of a seeded permutation of each. */
	for (i = 0; i < nchg; i++) {
		j = i + xorshift(&x) % (w->n - i);
		t = pos[i], pos[i] = pos[j], pos[j] = t;
		j = i + xorshift(&x) % (nout - i);
		t = out[i], out[i] = out[j], out[j] = t;
		c->order[pos[i]] = out[i];
	}
	for (i = 0; i < c->n; i++)
		c->in[c->order[i]] = 1;
	free(pos);
	free(out);
}

/* ---- the guest program ------------------------------------------------ */

/*
 * esi = table start, edi = table end: for each table entry (a guest
 * address) write the address into the page's dword 0; then report on
 * KT_DONE_PORT.
 */
extern const uint8_t rp_prog[], rp_prog_end[];
asm(".pushsection .rodata\n"
	"rp_prog:\n"
	".code32\n"
	"1:	cmp %edi, %esi\n"
	"	jae 2f\n"
	"	mov (%esi), %eax\n"
	"	mov %eax, (%eax)\n"
	"	add $4, %esi\n"
	"	jmp 1b\n"
	"2:	xor %eax, %eax\n"
	"	out %eax, $0x7e\n"		/* KT_DONE_PORT */
	"	jmp 2b\n"
	".code64\n"
	"rp_prog_end:\n"
	".popsection\n");

/* ---- the order ------------------------------------------------------- */

/* An order as runs of data-slot pages (gfns outside the slot dropped). */
struct order {
	uint64_t nr_runs;
	uint32_t *first, *len;
	uint64_t pages;
	struct kvm_prefetch_order *blob;	/* as KVM gave it, or NULL */
	uint64_t blob_size;
	bool recorded;				/* false: the workload's */
};

/* Append pages [@first, @first + @len); @join: to the last run if it ends there. */
static void order_add(struct order *o, uint64_t first, uint64_t len,
		      bool join)
{
	if (join && o->nr_runs && o->first[o->nr_runs - 1] +
				  o->len[o->nr_runs - 1] == first) {
		o->len[o->nr_runs - 1] += len;
	} else {
		o->first[o->nr_runs] = first;
		o->len[o->nr_runs++] = len;
	}
	o->pages += len;
}

static void order_alloc(struct order *o, uint64_t max_runs)
{
	memset(o, 0, sizeof(*o));
	o->first = malloc(max_runs * sizeof(*o->first));
	o->len = malloc(max_runs * sizeof(*o->len));
	KT_ASSERT(o->first && o->len, "malloc");
}

/* The workload's own first-touch order, when KVM cannot record. */
static void order_from_workload(struct order *o, const struct workload *w)
{
	uint64_t i;

	order_alloc(o, w->n);
	for (i = 0; i < w->n; i++)
		order_add(o, w->order[i], 1, true);
}

static int order_op(struct kt_vm *vm, struct kvm_prefetch_order_op *op)
{
	return ioctl(vm->fd, KVM_PREFETCH_ORDER, op) ? -errno : 0;
}

static int order_simple(struct kt_vm *vm, uint32_t which,
			struct kvm_prefetch_order_op *op)
{
	memset(op, 0, sizeof(*op));
	op->op = which;
	return order_op(vm, op);
}

/* ---- the handler ----------------------------------------------------- */

struct handler {
	enum rmode mode;
	int uffd, stop_fd, go_fd;
	char *base;		/* the armed range */
	uint64_t size, pages, chunk_pages;
	const char *src;	/* copy mode */
	uint8_t *have;		/* have[p]: page p populated (ours only) */
	/* The populate loop: the order's runs, and where it is. */
	const struct order *ahead;
	struct kt_vcpu *spare;	/* prefault: KVM_PRE_FAULT_MEMORY here */
	uint64_t run, off;	/* next: run @run, page @off of it */
	uint64_t rest;		/* rest=1, after the order: next page */
	pthread_t thread;
	/* loop_cpu >= 0: the populate loop's own thread; @lock orders them. */
	pthread_t loop_thread;
	bool has_loop;
	int loop_stop;
	pthread_mutex_t lock;
	/* Counters. */
	uint64_t events, ahead_pages, prefaulted, errors, pre_errors;
	int pre_err;		/* the first KVM_PRE_FAULT_MEMORY error */
	/* Mapping bookkeeping. */
	char *alloc;
	size_t alloc_size;
	int memfd;
};

/* @size bytes of a read-write @flags mapping at a 2 MiB boundary. */
static char *map_aligned(size_t size, int flags, int fd, char **alloc,
			 size_t *alloc_size)
{
	return kt_uffd_map_aligned(size, ALIGN_2M, PROT_READ | PROT_WRITE,
				   flags, fd, alloc_size, alloc);
}

static void h_err(struct handler *h)
{
	__atomic_add_fetch(&h->errors, 1, __ATOMIC_SEQ_CST);
}

/*
 * Populate the pages of [@lo, @hi) that are not there yet, in runs;
 * @wake: wake waiters on each, else DONTWAKE.  Returns pages populated.
 */
static uint64_t h_fill(struct handler *h, uint64_t lo, uint64_t hi, bool wake)
{
	uint64_t p = lo, e, done = 0;

	while (p < hi) {
		if (h->have[p]) {
			p++;
			continue;
		}
		for (e = p; e < hi && !h->have[e]; e++)
			;
		for (;;) {
			int r, err;

			if (h->mode == M_COPY) {
				struct uffdio_copy c = {
					.dst = (uintptr_t)(h->base + p * PAGE),
					.src = (uintptr_t)(h->src + p * PAGE),
					.len = (e - p) * PAGE,
					.mode = wake ? 0 : UFFDIO_COPY_MODE_DONTWAKE,
				};

				r = ioctl(h->uffd, UFFDIO_COPY, &c);
				err = errno;
			} else {
				struct uffdio_continue c = {
					.range = {
						.start = (uintptr_t)(h->base + p * PAGE),
						.len = (e - p) * PAGE,
					},
					.mode = wake ? 0 : UFFDIO_CONTINUE_MODE_DONTWAKE,
				};

				r = ioctl(h->uffd, UFFDIO_CONTINUE, &c);
				err = errno;
			}
			if (!r)
				break;
			if (err == EAGAIN)
				continue;
			/* Only this thread populates: nothing else may. */
			h_err(h);
			kt_info("bench_replay: populate pages %llu-%llu: %s",
				(unsigned long long)p, (unsigned long long)e,
				strerror(err));
			break;
		}
		done += e - p;
		for (; p < e; p++)
			h->have[p] = 1;
	}
	return done;
}

static void h_wake(struct handler *h, uint64_t lo, uint64_t hi)
{
	struct uffdio_range r = {
		.start = (uintptr_t)(h->base + lo * PAGE),
		.len = (hi - lo) * PAGE,
	};

	if (ioctl(h->uffd, UFFDIO_WAKE, &r)) {
		h_err(h);
		kt_info("bench_replay: UFFDIO_WAKE: %s", strerror(errno));
	}
}

/* A fault at @addr: its chunk, the faulting page last, then wake. */
static void h_fault(struct handler *h, uint64_t addr)
{
	uint64_t f, lo, hi;

	h->events++;
	if (addr < (uintptr_t)h->base || addr >= (uintptr_t)h->base + h->size) {
		h_err(h);
		kt_info("bench_replay: event at 0x%llx outside the range",
			(unsigned long long)addr);
		return;
	}
	f = (addr - (uintptr_t)h->base) / PAGE;
	lo = f / h->chunk_pages * h->chunk_pages;
	hi = lo + h->chunk_pages < h->pages ? lo + h->chunk_pages : h->pages;
	pthread_mutex_lock(&h->lock);
	h_fill(h, f + 1, hi, false);
	h_fill(h, lo, f, false);
	h_fill(h, f, f + 1, false);
	pthread_mutex_unlock(&h->lock);
	h_wake(h, lo, hi);
}

/*
 * Read the uffd events pending now (one read, up to 16) and serve them;
 * false on a fatal error.  Not until there are none: pinned with the
 * vCPU, the handler is preempted by the vCPU it wakes and resumes when
 * the vCPU waits for its next fault, so there always is one.
 */
static bool h_events(struct handler *h)
{
	struct uffd_msg msg[16];
	ssize_t n;
	int i;

	do {
		n = read(h->uffd, msg, sizeof(msg));
	} while (n < 0 && errno == EINTR);
	if (n < 0 && errno == EAGAIN)
		return true;
	if (n <= 0 || n % sizeof(msg[0])) {
		h_err(h);
		kt_info("bench_replay: uffd read: %zd (%s)", n, strerror(errno));
		return false;
	}
	for (i = 0; i < n / (ssize_t)sizeof(msg[0]); i++) {
		if (msg[i].event != UFFD_EVENT_PAGEFAULT) {
			h_err(h);
			continue;
		}
		h_fault(h, msg[i].arg.pagefault.address);
	}
	return true;
}

/* KVM_PRE_FAULT_MEMORY over pages [@lo, @hi) through the spare vCPU. */
static void h_prefault(struct handler *h, uint64_t lo, uint64_t hi)
{
	struct kvm_pre_fault_memory r;

	memset(&r, 0, sizeof(r));
	r.gpa = DATA_GPA + lo * PAGE;
	r.size = (hi - lo) * PAGE;
	while (r.size) {
		if (!ioctl(h->spare->fd, KVM_PRE_FAULT_MEMORY, &r))
			continue;	/* r.size is what is left */
		if (errno == EINTR || errno == EAGAIN)
			continue;
		if (!h->pre_errors++)
			h->pre_err = errno;
		return;
	}
	h->prefaulted += hi - lo;
}

/*
 * One step of the populate loop: the next piece (at most a chunk) of the
 * current run, then (prefault) KVM_PRE_FAULT_MEMORY over it.  False when
 * the order is done.
 */
static bool h_ahead(struct handler *h)
{
	const struct order *o = h->ahead;
	uint64_t lo, hi, len;

	if (!o)
		return false;
	/*
	 * rest=1: after the order, the rest of memory in address order, a
	 * chunk at a time (no KVM_PRE_FAULT_MEMORY), so that the pages the
	 * order does not have reach the guest without a round trip if the
	 * loop got there first.
	 */
	if (h->run >= o->nr_runs) {
		if (!rest || h->rest >= h->pages)
			return false;
		lo = h->rest;
		hi = lo + h->chunk_pages < h->pages ? lo + h->chunk_pages :
						      h->pages;
		pthread_mutex_lock(&h->lock);
		h->ahead_pages += h_fill(h, lo, hi, true);
		pthread_mutex_unlock(&h->lock);
		h->rest = hi;
		return true;
	}
	len = o->len[h->run] - h->off;
	if (len > h->chunk_pages)
		len = h->chunk_pages;
	lo = o->first[h->run] + h->off;
	hi = lo + len;
	pthread_mutex_lock(&h->lock);
	h->ahead_pages += h_fill(h, lo, hi, true);
	pthread_mutex_unlock(&h->lock);
	if (h->spare)
		h_prefault(h, lo, hi);
	h->off += len;
	if (h->off >= o->len[h->run]) {
		h->run++;
		h->off = 0;
	}
	return true;
}

static void *h_thread(void *arg)
{
	struct handler *h = arg;
	bool go = false, more = true;

	if (handler_nice)
		KT_ASSERT(!setpriority(PRIO_PROCESS, syscall(SYS_gettid),
				       handler_nice), "setpriority %d: %s",
			  handler_nice, strerror(errno));

	for (;;) {
		struct pollfd p[3] = {
			{ .fd = h->uffd, .events = POLLIN },
			{ .fd = h->stop_fd, .events = POLLIN },
			{ .fd = h->go_fd, .events = POLLIN },
		};
		uint64_t v;

		if (poll(p, 3, go && more && !h->has_loop ? 0 : -1) < 0) {
			if (errno == EINTR)
				continue;
			h_err(h);
			break;
		}
		if (p[1].revents)
			break;
		if (p[2].revents & POLLIN) {
			if (read(h->go_fd, &v, sizeof(v)) == sizeof(v))
				go = true;
		}
		/*
		 * The faults pending, then one piece of the order: pinned
		 * with the vCPU, the handler runs mostly when the vCPU waits
		 * for a fault, and then the next fault is pending already; a
		 * loop that waited for a quiet moment would never run.
		 */
		if ((p[0].revents & POLLIN) && !h_events(h))
			break;
		if (p[0].revents & (POLLERR | POLLHUP)) {
			h_err(h);
			break;
		}
		if (go && more && !h->has_loop)
			more = h_ahead(h);
	}
	return NULL;
}

/* loop_cpu >= 0: the populate loop in a thread of its own on loop_cpu. */
static void *h_loop_thread(void *arg)
{
	struct handler *h = arg;
	cpu_set_t one;

	CPU_ZERO(&one);
	CPU_SET(loop_cpu, &one);
	KT_ASSERT(!sched_setaffinity(0, sizeof(one), &one),
		  "setaffinity cpu %d: %s", loop_cpu, strerror(errno));
	while (!__atomic_load_n(&h->loop_stop, __ATOMIC_SEQ_CST) && h_ahead(h))
		;
	return NULL;
}

/* Arm a fresh range of @pages in @mode; the thread starts at once. */
static struct handler *h_create(enum rmode mode, const char *src,
				uint64_t pages, uint64_t chunk_pages)
{
	struct uffdio_api api = { .api = UFFD_API };
	struct uffdio_register reg = { 0 };
	struct handler *h = calloc(1, sizeof(*h));

	KT_ASSERT(h, "calloc");
	h->mode = mode;
	h->pages = pages;
	h->size = pages * PAGE;
	h->chunk_pages = chunk_pages;
	h->src = src;
	h->memfd = -1;
	h->have = calloc(pages, 1);
	KT_ASSERT(h->have, "calloc");
	pthread_mutex_init(&h->lock, NULL);
	if (mode == M_COPY) {
		h->base = map_aligned(h->size, MAP_PRIVATE | MAP_ANONYMOUS |
				      MAP_NORESERVE, -1, &h->alloc,
				      &h->alloc_size);
	} else {
		h->memfd = kt_uffd_memfd(src, h->size);
		h->base = map_aligned(h->size, MAP_SHARED, h->memfd, &h->alloc,
				      &h->alloc_size);
	}
	h->uffd = syscall(SYS_userfaultfd, O_CLOEXEC | O_NONBLOCK);
	KT_REQUIRE(h->uffd >= 0, "userfaultfd: %s", strerror(errno));
	if (mode == M_ZC)
		api.features = UFFD_FEATURE_MINOR_SHMEM;
	KT_REQUIRE(!ioctl(h->uffd, UFFDIO_API, &api), "UFFDIO_API: %s",
		   strerror(errno));
	KT_ASSERT(!madvise(h->base, h->size, MADV_NOHUGEPAGE), "madvise: %s",
		  strerror(errno));
	reg.range.start = (uintptr_t)h->base;
	reg.range.len = h->size;
	reg.mode = mode == M_ZC ? UFFDIO_REGISTER_MODE_MINOR :
				  UFFDIO_REGISTER_MODE_MISSING;
	KT_ASSERT(!ioctl(h->uffd, UFFDIO_REGISTER, &reg),
		  "UFFDIO_REGISTER: %s", strerror(errno));
	h->stop_fd = eventfd(0, EFD_CLOEXEC);
	h->go_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	KT_ASSERT(h->stop_fd >= 0 && h->go_fd >= 0, "eventfd: %s",
		  strerror(errno));
	KT_ASSERT(!pthread_create(&h->thread, NULL, h_thread, h),
		  "pthread_create");
	return h;
}

static void h_signal(int fd)
{
	uint64_t one = 1;

	KT_ASSERT(write(fd, &one, sizeof(one)) == sizeof(one),
		  "eventfd write: %s", strerror(errno));
}

/* The pass begins: start the populate loop. */
static void h_go(struct handler *h)
{
	if (h->ahead && loop_cpu >= 0) {
		h->has_loop = true;
		KT_ASSERT(!pthread_create(&h->loop_thread, NULL, h_loop_thread,
					  h), "pthread_create");
	}
	h_signal(h->go_fd);
}

static void h_stop(struct handler *h)
{
	if (h->has_loop) {
		__atomic_store_n(&h->loop_stop, 1, __ATOMIC_SEQ_CST);
		pthread_join(h->loop_thread, NULL);
	}
	h_signal(h->stop_fd);
	pthread_join(h->thread, NULL);
	/* Serve nothing more: unregister, then the range reads as memory. */
	{
		struct uffdio_range r = {
			.start = (uintptr_t)h->base, .len = h->size,
		};

		ioctl(h->uffd, UFFDIO_UNREGISTER, &r);
	}
}

static void h_destroy(struct handler *h)
{
	close(h->uffd);
	close(h->stop_fd);
	close(h->go_fd);
	munmap(h->alloc, h->alloc_size);
	if (h->memfd >= 0)
		close(h->memfd);
	free(h->have);
	pthread_mutex_destroy(&h->lock);
	free(h);
}

/* ---- one run --------------------------------------------------------- */

struct ctr {
	uint64_t pf, fixed, mapped;
};

static void ctr_read(struct kt_vcpu *v, struct ctr *c)
{
	c->pf = kt_vcpu_stat_get(v, "pf_taken");
	if (kt_vcpu_stat(v, "pf_fixed", &c->fixed))
		c->fixed = 0;
	if (kt_vcpu_stat(v, "prefetch_mapped", &c->mapped))
		c->mapped = 0;
}

static bool have_order_ioctl, have_replay;
static unsigned int nr_runs, nr_bad;

/* demo=1: a short table at the end (make demo) from these. */
static unsigned int demo;
struct result {
	enum arm arm;
	enum rmode mode;
	double ms;
	uint64_t faults, prefetched;
	bool skipped;
};
#define MAX_RESULTS	256
static struct result results[MAX_RESULTS];
static unsigned int nr_results;

static void result_add(enum arm a, enum rmode m, double ms, uint64_t faults,
		       uint64_t prefetched, bool skipped)
{
	if (nr_results < MAX_RESULTS)
		results[nr_results++] = (struct result){ a, m, ms, faults,
							 prefetched, skipped };
}

/*
 * Bad pages of the data slot: touched ones must hold their gpa in dword
 * 0 and the source in the rest; every other page populated (@have, or
 * all with NULL) must be the source.
 */
static uint64_t bad_pages(const char *mem, const char *src, uint64_t pages,
			  const uint8_t *touched, const uint8_t *have)
{
	uint64_t p, bad = 0;

	for (p = 0; p < pages; p++) {
		const char *m = mem + p * PAGE, *s = src + p * PAGE;

		if (touched[p]) {
			if ((have && !have[p]) ||
			    *(const uint32_t *)m != (uint32_t)(DATA_GPA + p * PAGE) ||
			    memcmp(m + 4, s + 4, PAGE - 4))
				goto wrong;
		} else if ((!have || have[p]) && memcmp(m, s, PAGE)) {
			goto wrong;
		}
		continue;
wrong:
		if (!bad++)
			kt_info("bench_replay: page %llu wrong (touched %d, populated %d, dword0 0x%x)",
				(unsigned long long)p, touched[p],
				have ? have[p] : 1,
				have && !have[p] ? 0 : *(const uint32_t *)m);
	}
	return bad;
}

static void pct(char *buf, size_t len, bool have, uint64_t num, uint64_t den)
{
	if (have && den)
		snprintf(buf, len, "%.1f", 100.0 * num / den);
	else
		snprintf(buf, len, "-");
}

/*
 * One run of @a in @m; round 0 is the recording pass (policy none,
 * RECORD_START before the pass, the order read into @rec afterwards).
 */
static void run_one(enum arm a, enum rmode m, unsigned int round,
		    const char *src, const struct workload *wl,
		    const struct workload *chg, struct order *ord,
		    struct order *rec)
{
	const struct workload *w = arm_changed(a) ? chg : wl;
	uint64_t pages = wl->pages, size = pages * PAGE, i, t0, ns;
	uint64_t chunk_pages = ((uint64_t)chunk_kib << 10) / PAGE;
	struct kvm_prefetch_order_op op;
	struct ktb_result u0, u1;
	struct handler *h = NULL;
	struct kt_vcpu *v, *spare = NULL;
	struct ctr c0, c1;
	struct kt_vm *vm;
	cpu_set_t old, one;
	uint64_t bad, prefaulted = 0;
	char prec[16], cov[16], rpos[32], rruns[32], extra[160] = "";
	const char *label = round ? arm_names[a] : "record";
	uint32_t *tab;
	char *mem, *falloc = NULL;
	size_t falloc_size = 0;
	int fmemfd = -1;
	bool ok = true, pinned = false;
	int ret;

	if (arm_replay(a) && !have_replay) {
		if (!demo)
			printf("@@REPLAY arm=%s mode=%s round=%u skipped=1 why=no-replay-in-kvm\n",
			       label, rmode_names[m], round);
		fflush(stdout);
		result_add(a, m, 0, 0, 0, true);
		return;
	}
	if (pin >= 0) {
		KT_ASSERT(!sched_getaffinity(0, sizeof(old), &old), "getaffinity");
		CPU_ZERO(&one);
		CPU_SET(pin, &one);
		KT_ASSERT(!sched_setaffinity(0, sizeof(one), &one), "setaffinity");
		pinned = true;
	}

	vm = kt_vm_create_mode(KT_GUEST_IRQCHIP);
	ret = ktsys_set_policy(vm->fd, "none", 0, 0);
	KT_ASSERT(!ret, "set none: %s", strerror(-ret));
	memcpy(kt_vm_gpa_to_hva(vm, PROG_GPA), rp_prog, rp_prog_end - rp_prog);
	KT_ASSERT(w->n * 4 <= TAB_MAX, "table of %llu entries",
		  (unsigned long long)w->n);
	tab = kt_vm_add_slot(vm, TAB_SLOT, TAB_GPA, TAB_MAX, 0, NULL);
	for (i = 0; i < w->n; i++)
		tab[i] = DATA_GPA + (uint64_t)w->order[i] * PAGE;

	if (arm_floor(a)) {
		if (m == M_COPY) {
			mem = kt_vm_add_slot(vm, DATA_SLOT, DATA_GPA, size, 0, NULL);
			memcpy(mem, src, size);
		} else {
			/* The memfd, mapped and every page table entry in. */
			fmemfd = kt_uffd_memfd(src, size);
			mem = map_aligned(size, MAP_SHARED | MAP_POPULATE,
					  fmemfd, &falloc, &falloc_size);
			kt_vm_add_slot(vm, DATA_SLOT, DATA_GPA, size, 0, mem);
		}
	} else {
		h = h_create(m, src, pages, chunk_pages);
		mem = h->base;
		kt_vm_add_slot(vm, DATA_SLOT, DATA_GPA, size, 0, mem);
	}
	v = kt_vcpu_add(vm, 0);
	/* The code page and the table in, before anything is measured. */
	kt_touch(v, DATA_GPA, DATA_GPA, 0, KT_TOUCH_READ);
	kt_touch(v, TAB_GPA, TAB_GPA + w->n * 4, 0, KT_TOUCH_READ);
	if (arm_prefault(a) || a == A_FLOOR_MAPPED)
		spare = kt_vcpu_add(vm, 1);

	switch (a) {
	case A_AUTO:
		ret = ktsys_set_policy(vm->fd, "auto", chunk_pages,
				       KVM_PREFETCH_GUP_NOFAULT);
		KT_ASSERT(!ret, "set auto: %s", strerror(-ret));
		break;
	case A_REPLAY:
	case A_REPLAY_CHG:
		ret = ktsys_set_policy(vm->fd, "replay", 0,
				       KVM_PREFETCH_GUP_NOFAULT);
		KT_ASSERT(!ret, "set replay: %s", strerror(-ret));
		memset(&op, 0, sizeof(op));
		op.op = KVM_PREFETCH_REPLAY_LOAD;
		op.addr = (uintptr_t)ord->blob;
		op.size = ord->blob_size;
		ret = order_op(vm, &op);
		KT_ASSERT(!ret, "KVM_PREFETCH_REPLAY_LOAD: %s", strerror(-ret));
		break;
	case A_FLOOR_MAPPED: {
		struct handler tmp = { .spare = spare };

		h_prefault(&tmp, 0, pages);
		KT_ASSERT(!tmp.pre_errors, "KVM_PRE_FAULT_MEMORY: %s",
			  strerror(tmp.pre_err));
		prefaulted = tmp.prefaulted;
		break;
	}
	default:
		break;
	}
	if (!round) {
		ret = order_simple(vm, KVM_PREFETCH_RECORD_START, &op);
		KT_ASSERT(!ret, "KVM_PREFETCH_RECORD_START: %s", strerror(-ret));
	}
	if (h && (arm_prefault(a) || arm_replay(a))) {
		h->ahead = ord;
		h->spare = arm_prefault(a) ? spare : NULL;
	}

	ktb_usage_read(vm, &u0);
	ctr_read(v, &c0);
	kt_vcpu_setup_loop(v, PROG_GPA, TAB_GPA, TAB_GPA + w->n * 4, 0, 0, 0);
	t0 = kt_now_ns();
	if (h)
		h_go(h);
	kt_vcpu_run_done(v);
	ns = kt_now_ns() - t0;
	ctr_read(v, &c1);
	ktb_usage_read(vm, &u1);
	u1.used -= u0.used;
	u1.unused -= u0.unused;
	u1.untouched -= u0.untouched;
	u1.avoided -= u0.avoided;
	if (h)
		h_stop(h);

	snprintf(rpos, sizeof(rpos), "-");
	snprintf(rruns, sizeof(rruns), "-");
	if (have_order_ioctl && !order_simple(vm, KVM_PREFETCH_ORDER_STATUS, &op)) {
		snprintf(rpos, sizeof(rpos), "%llu",
			 (unsigned long long)op.replay_pos);
		snprintf(rruns, sizeof(rruns), "%llu",
			 (unsigned long long)op.replay_runs);
	}
	if (!round) {
		uint64_t need, r, g, p, extra_pages = 0, twice = 0, missing = 0;
		uint64_t seq = 0, outside = 0;
		struct kvm_prefetch_order *blob;
		uint32_t *seen;

		ret = order_simple(vm, KVM_PREFETCH_RECORD_STOP, &op);
		KT_ASSERT(!ret, "KVM_PREFETCH_RECORD_STOP: %s", strerror(-ret));
		memset(&op, 0, sizeof(op));
		op.op = KVM_PREFETCH_RECORD_READ;
		ret = order_op(vm, &op);
		KT_ASSERT(ret == -E2BIG || !ret, "RECORD_READ size 0: %s",
			  strerror(-ret));
		need = op.size;
		blob = malloc(need);
		KT_ASSERT(blob, "malloc %llu", (unsigned long long)need);
		memset(&op, 0, sizeof(op));
		op.op = KVM_PREFETCH_RECORD_READ;
		op.addr = (uintptr_t)blob;
		op.size = need;
		ret = order_op(vm, &op);
		KT_ASSERT(!ret, "KVM_PREFETCH_RECORD_READ: %s", strerror(-ret));
		KT_ASSERT(blob->magic == KVM_PREFETCH_ORDER_MAGIC &&
			  sizeof(*blob) + blob->nr_runs * 8 <= need,
			  "order: magic 0x%x, %llu runs in %llu bytes",
			  blob->magic, (unsigned long long)blob->nr_runs,
			  (unsigned long long)need);
		/* Into data-slot runs, and checked against the workload. */
		order_alloc(rec, blob->nr_runs + 1);
		rec->blob = blob;
		rec->blob_size = need;
		rec->recorded = true;
		seen = calloc(pages, sizeof(*seen));
		KT_ASSERT(seen, "calloc");
		for (r = 0; r < rec->blob->nr_runs; r++) {
			uint64_t run = rec->blob->runs[r];
			uint64_t gfn = KVM_PREFETCH_RUN_GFN(run);
			uint64_t n = KVM_PREFETCH_RUN_PAGES(run);

			for (g = gfn; g < gfn + n; g++) {
				if (g < DATA_GPA / PAGE ||
				    g >= DATA_GPA / PAGE + pages) {
					outside++;
					continue;
				}
				p = g - DATA_GPA / PAGE;
				if (seen[p]++)
					twice++;
				if (!wl->in[p])
					extra_pages++;
				/* Recorded in the order touched? */
				if (seq < wl->n && wl->order[seq] == p)
					seq++;
				/* One run per run of KVM's (replay_pos). */
				order_add(rec, p, 1, g != gfn);
			}
		}
		for (p = 0; p < pages; p++)
			if (wl->in[p] && seen[p] != 1)
				missing += !seen[p];
		free(seen);
		snprintf(extra, sizeof(extra),
			 " order_runs=%llu order_pages=%llu slot_runs=%llu outside=%llu not_touched=%llu twice=%llu missing=%llu in_order=%llu truncated=%u",
			 (unsigned long long)rec->blob->nr_runs,
			 (unsigned long long)rec->blob->nr_pages,
			 (unsigned long long)rec->nr_runs,
			 (unsigned long long)outside,
			 (unsigned long long)extra_pages,
			 (unsigned long long)twice,
			 (unsigned long long)missing,
			 (unsigned long long)seq,
			 !!(rec->blob->flags & KVM_PREFETCH_ORDER_TRUNCATED));
		if (twice || missing) {
			kt_fail("bench_replay: %s order: %llu touched pages not recorded, %llu recorded twice",
				rmode_names[m], (unsigned long long)missing,
				(unsigned long long)twice);
			ok = false;
		}
	}

	/* Every touched page, every page populated. */
	bad = bad_pages(mem, src, pages, w->in, h ? h->have : NULL);
	if (bad) {
		kt_fail("bench_replay: %s %s round %u: %llu pages wrong",
			label, rmode_names[m], round, (unsigned long long)bad);
		ok = false;
	}
	if (h && h->errors) {
		kt_fail("bench_replay: %s %s round %u: %llu handler errors",
			label, rmode_names[m], round,
			(unsigned long long)h->errors);
		ok = false;
	}
	if (h && h->pre_errors) {
		kt_fail("bench_replay: %s %s round %u: KVM_PRE_FAULT_MEMORY failed %llu times (%s)",
			label, rmode_names[m], round,
			(unsigned long long)h->pre_errors, strerror(h->pre_err));
		ok = false;
	}
	if (h)
		prefaulted = h->prefaulted;
	nr_runs++;
	nr_bad += !ok;
	if (round)
		result_add(a, m, ns / 1e6, c1.pf - c0.pf, c1.mapped - c0.mapped,
			   false);

	pct(prec, sizeof(prec), u1.have_usage, u1.used,
	    u1.used + u1.unused + u1.untouched);
	pct(cov, sizeof(cov), u1.have_usage, u1.avoided,
	    u1.avoided + (c1.pf - c0.pf));
	if (!demo)
		printf("@@REPLAY arm=%s mode=%s round=%u mib=%u chunk=%u touched=%llu time_ms=%.3f faults=%llu pf_fixed=%llu prefetched=%llu prefaulted=%llu used=%llu unused=%llu untouched=%llu avoided=%llu precision=%s coverage=%s events=%llu ahead=%llu ahead_runs=%llu replay_pos=%s replay_runs=%s order=%s ok=%d%s\n",
		       label, rmode_names[m], round, mib, chunk_kib,
		       (unsigned long long)w->n, ns / 1e6,
		       (unsigned long long)(c1.pf - c0.pf),
		       (unsigned long long)(c1.fixed - c0.fixed),
		       (unsigned long long)(c1.mapped - c0.mapped),
		       (unsigned long long)prefaulted,
		       (unsigned long long)u1.used, (unsigned long long)u1.unused,
		       (unsigned long long)u1.untouched,
		       (unsigned long long)u1.avoided, prec, cov,
		       (unsigned long long)(h ? h->events : 0),
		       (unsigned long long)(h ? h->ahead_pages : 0),
		       (unsigned long long)(h ? h->run : 0),
		       rpos, rruns,
		       arm_prefault(a) || arm_replay(a) ?
				(ord->recorded ? "recorded" : "workload") : "-",
		       ok, extra);
	fflush(stdout);

	if (spare)
		kt_vcpu_free(spare);
	kt_vcpu_free(v);
	kt_vm_free(vm);
	if (h)
		h_destroy(h);
	if (falloc)
		munmap(falloc, falloc_size);
	if (fmemfd >= 0)
		close(fmemfd);
	if (pinned)
		KT_ASSERT(!sched_setaffinity(0, sizeof(old), &old), "setaffinity");
}

/* ---- arguments -------------------------------------------------------- */

static const struct {
	const char *key;
	unsigned int *u;
	int *i;
} num_args[] = {
	{ "mib", .u = &mib }, { "chunk", .u = &chunk_kib },
	{ "rounds", .u = &rounds }, { "seed", .u = &seed },
	{ "frac", .u = &frac }, { "changed", .u = &changed_pct },
	{ "maxrun", .u = &maxrun }, { "pin", .i = &pin },
	{ "demo", .u = &demo }, { "loop_cpu", .i = &loop_cpu },
	{ "handler_nice", .i = &handler_nice },
	{ "rest", .u = &rest },
};

static void parse_list(char *v, const char *const *names, unsigned int n,
		       bool *on, const char *what)
{
	char *tok, *save = NULL;
	unsigned int i;

	for (i = 0; i < n; i++)
		on[i] = false;
	for (tok = strtok_r(v, ":", &save); tok; tok = strtok_r(NULL, ":", &save)) {
		for (i = 0; i < n; i++)
			if (!strcmp(tok, names[i]))
				break;
		KT_ASSERT(i < n, "kp.replay: unknown %s '%s'", what, tok);
		on[i] = true;
	}
}

/* Arguments k=v,k=v in @arg. */
static void parse_list_args(char *arg)
{
	char *tok, *save = NULL, *v;
	unsigned int k;

	for (tok = strtok_r(arg, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		v = strchr(tok, '=');
		KT_ASSERT(v, "kp.replay: '%s' is not key=value", tok);
		*v++ = '\0';
		if (!strcmp(tok, "modes")) {
			parse_list(v, rmode_names, NR_RMODES, rmode_on, "mode");
			continue;
		}
		if (!strcmp(tok, "arms")) {
			parse_list(v, arm_names, NR_ARMS, arm_on, "arm");
			continue;
		}
		for (k = 0; k < ARRAY_SIZE(num_args); k++)
			if (!strcmp(tok, num_args[k].key))
				break;
		KT_ASSERT(k < ARRAY_SIZE(num_args), "kp.replay: unknown key '%s'",
			  tok);
		if (num_args[k].u)
			*num_args[k].u = strtoul(v, NULL, 0);
		else
			*num_args[k].i = strtol(v, NULL, 0);
	}
}

/*
 * The arguments: the command line's (each argument k=v or k=v,k=v, as
 * "make demo" runs it), else kp.replay=k=v,k=v from /proc/cmdline; false
 * if there are none.
 */
static bool parse_args(int argc, char **argv)
{
	char line[2048], *arg;
	int i;

	if (argc > 1) {
		for (i = 1; i < argc; i++)
			parse_list_args(argv[i]);
		return true;
	}
	if (ktsys_read("/proc/cmdline", line, sizeof(line)) <= 0)
		return false;
	arg = strstr(line, "kp.replay=");
	if (!arg)
		return false;
	arg += strlen("kp.replay=");
	arg[strcspn(arg, " \n")] = '\0';
	parse_list_args(arg);
	return true;
}

/* demo=1: per mode and arm the first round's faults and time. */
static void demo_table(const struct order *ord)
{
	unsigned int m, a, i;

	for (m = 0; m < NR_RMODES; m++) {
		const struct result *none = NULL;

		if (!rmode_on[m])
			continue;
		printf("\nRecord and replay (%s restore, %u MiB, %llu pages touched in short runs at random places, %u KiB chunks): %s order of %llu runs\n",
		       m == M_COPY ? "UFFDIO_COPY" : "zero-copy UFFDIO_CONTINUE",
		       mib, (unsigned long long)ord[m].pages, chunk_kib,
		       ord[m].recorded ? "a recorded" : "no recording (KVM lacks KVM_PREFETCH_ORDER), the workload's",
		       (unsigned long long)ord[m].nr_runs);
		printf("| %-16s | %12s | %16s | %9s | %7s |\n", "arm",
		       "guest faults", "pages prefetched", "time", "vs none");
		printf("|------------------|--------------|------------------|-----------|---------|\n");
		for (a = 0; a < NR_ARMS; a++) {
			for (i = 0; i < nr_results; i++)
				if (results[i].arm == a && results[i].mode == m)
					break;
			if (i == nr_results)
				continue;
			if (results[i].skipped) {
				printf("| %-16s | skipped: this KVM has no replay policy |\n",
				       arm_names[a]);
				continue;
			}
			if (a == A_NONE)
				none = &results[i];
			printf("| %-16s | %12llu | %16llu | %6.0f ms | %+6.0f%% |\n",
			       arm_names[a],
			       (unsigned long long)results[i].faults,
			       (unsigned long long)results[i].prefetched,
			       results[i].ms,
			       none && none != &results[i] && none->ms ?
			       100.0 * results[i].ms / none->ms - 100.0 : 0.0);
		}
	}
	printf("replay: the handler populates the recorded runs in order ahead of the guest, KVM's replay policy maps the next recorded pages the host has on each guest fault; prefault: the same loop with KVM_PRE_FAULT_MEMORY after each run instead. Every touched page verified.\n");
}

/* Does KVM have KVM_PREFETCH_ORDER, and the replay policy? */
static void probe(void)
{
	struct kvm_prefetch_order_op op;
	struct kt_vm *vm = kt_vm_create();
	int ret;

	ret = order_simple(vm, KVM_PREFETCH_ORDER_STATUS, &op);
	have_order_ioctl = !ret;
	if (ret)
		kt_info("bench_replay: KVM_PREFETCH_ORDER: %s: no recording, no replay; the order is the workload's own",
			strerror(-ret));
	ret = ktsys_set_policy(vm->fd, "replay", 0, KVM_PREFETCH_GUP_NOFAULT);
	have_replay = have_order_ioctl && !ret;
	if (ret)
		kt_info("bench_replay: policy replay: %s: replay arms skipped",
			strerror(-ret));
	kt_vm_free(vm);
}

int main(int argc, char **argv)
{
	struct workload wl, chg;
	struct order ord[NR_RMODES];
	uint64_t pages, size, t_start = kt_now_ns();
	unsigned int r, i, m;
	char *src;

	if (!parse_args(argc, argv)) {
		kt_skip("bench_replay: no kp.replay= on the command line (make bench-replay)");
		return kt_exit();
	}
	KT_ASSERT(mib >= 1 && mib <= 1024 && chunk_kib >= 4 &&
		  !(chunk_kib & (chunk_kib - 1)) &&
		  ((uint64_t)mib << 10) % chunk_kib == 0 && frac >= 1 &&
		  frac <= 90 && changed_pct <= 100 && maxrun >= 1 && rounds >= 1,
		  "kp.replay: bad arguments");
	kt_require_kvm();
	size = (uint64_t)mib << 20;
	pages = size / PAGE;
	KT_ASSERT(pages * frac / 100 * 4 <= TAB_MAX, "mib=%u: table too big", mib);
	wl_build(&wl, pages);
	wl_change(&wl, &chg);
	src = ktb_src_alloc(size);
	probe();
	if (!demo)
		printf("@@REPLAYCFG mib=%u chunk=%u rounds=%u seed=%u frac=%u changed=%u maxrun=%u pin=%d loop_cpu=%d handler_nice=%d rest=%u pages=%llu touched=%llu record=%d replay=%d\n",
		       mib, chunk_kib, rounds, seed, frac, changed_pct, maxrun, pin,
		       loop_cpu, handler_nice, rest,
		       (unsigned long long)pages, (unsigned long long)wl.n,
		       have_order_ioctl, have_replay);
	fflush(stdout);

	/* The order: recorded per restore mode, or the workload's own. */
	for (m = 0; m < NR_RMODES; m++) {
		if (!rmode_on[m])
			continue;
		if (have_order_ioctl)
			run_one(A_NONE, m, 0, src, &wl, &chg, NULL, &ord[m]);
		else
			order_from_workload(&ord[m], &wl);
		if (!demo)
			kt_info("bench_replay: %s: order of %llu runs, %llu pages in the data slot (%s)",
				rmode_names[m],
				(unsigned long long)ord[m].nr_runs,
				(unsigned long long)ord[m].pages,
				ord[m].recorded ? "recorded" : "the workload's");
	}

	for (r = 1; r <= rounds; r++) {
		for (m = 0; m < NR_RMODES; m++) {
			if (!rmode_on[m])
				continue;
			for (i = 0; i < NR_ARMS; i++) {
				enum arm a = r % 2 ? i : NR_ARMS - 1 - i;

				if (arm_on[a])
					run_one(a, m, r, src, &wl, &chg,
						&ord[m], NULL);
			}
		}
		if (!demo)
			kt_info("bench_replay: round %u/%u done at %.0f s",
				r, rounds, (kt_now_ns() - t_start) / 1e9);
	}
	ktb_src_free(src, size);
	if (demo)
		demo_table(ord);
	if (!nr_bad && nr_runs)
		kt_pass("bench_replay: %u runs, every touched and populated page verified",
			nr_runs);
	if (!demo)
		kt_info("bench_replay: %.0f s in the guest",
			(kt_now_ns() - t_start) / 1e9);
	return kt_exit();
}
