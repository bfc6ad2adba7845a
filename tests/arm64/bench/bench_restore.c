// SPDX-License-Identifier: GPL-2.0
/*
 * bench_restore: the restore benchmark of tests/bench (make bench) on
 * arm64's stage 2, for `make arm64-bench`.
 *
 * A 64 MiB memslot (4 KiB host pages) starts empty and registered with
 * userfaultfd; a handler thread answers each event by populating the
 * naturally aligned chunk around it in one ioctl, as a VMM restoring a
 * snapshot in chunks would, while the guest writes one word into every
 * 4 KiB page once, linearly.  Time = wall time of the guest's pass.
 *
 *   copy       anonymous memory, MISSING mode, UFFDIO_COPY from a
 *              snapshot buffer (MADV_NOHUGEPAGE);
 *   zero-copy  the snapshot in a shared memfd's page cache (filled
 *              through a second mapping), the memslot a MAP_SHARED
 *              mapping of it, MINOR mode, UFFDIO_CONTINUE on the chunk:
 *              nothing copied.
 *
 * Per chunk size (64 KiB, 512 KiB, 2 MiB) each round runs none and auto
 * with a window of one chunk (nofault) back to back, none first in odd
 * rounds, auto first in even ones, then replay: the guest's pass is
 * recorded once (KVM_PREFETCH_ORDER, a VM with populated memory under
 * none), and each replay run loads that order into the replay policy
 * (nr_pages 16384: a run of the order spans up to 4096 pages, and the
 * replay passes a run only when one exit maps it whole) while a second
 * thread populates the memory chunk by chunk in the recorded order, as a
 * VMM that restores ahead of the guest would; the handler still answers
 * the guest's userfaultfd events.  A fourth run, none with the same
 * populator, is the baseline replay is held to: it restores ahead of the
 * guest as well, and only replay lets KVM map what is there.  Their
 * counts depend on that race:
 * asserted are no fill error, at most one event per chunk and every page
 * right.  Exact, asserted in every run: guest
 * faults (pf_taken) one per page under none and one per chunk under
 * auto, prefetch_mapped, one userfaultfd event per chunk, no handler
 * error, and every page holds the snapshot's word and the guest's.
 * Times are printed (median, min, max over the rounds), never asserted:
 * this is QEMU TCG, where an exit costs what emulating it costs.
 *
 * kp.rounds=N on the kernel command line sets the rounds (default 5).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/userfaultfd.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "a64.h"

#define DATA_SLOT	1
#define DATA_GPA	0x1000000ULL
#define MEM_SIZE	(64ULL << 20)
#define NR_PAGES	(MEM_SIZE / A64_PAGE)
#define SNAP_OFF	8	/* the snapshot's word; the guest writes at 0 */
#define MAX_ROUNDS	15

enum mode { COPY, ZC, NR_MODES };
enum policy { NONE, AUTO, REPLAY, AHEAD, NR_POLICIES };
/* AHEAD: none with replay's populator, the baseline replay is held to. */
static const char *const policy_name[] = { "none", "auto", "replay", "none" };
static const char *const config_name[] = { "none", "auto", "replay",
					   "none+populator" };
static const char *const mode_name[] = { "copy (UFFDIO_COPY)",
					 "zero-copy (UFFDIO_CONTINUE)" };
static const uint64_t chunks[] = { 64 << 10, 512 << 10, 2 << 20 };
#define NR_CHUNKS	ARRAY_SIZE(chunks)

struct result {
	uint64_t ns[MAX_ROUNDS], fill_ns[MAX_ROUNDS];
	uint64_t pf, mapped;
	int events, runs, exact, verified;
	uint64_t ahead;		/* replay: the populator's fills, last run */
};

static struct result results[NR_MODES][NR_CHUNKS][NR_POLICIES];
static char *snap;	/* the snapshot (copy mode's source) */
/* The guest's pass as recorded (KVM_PREFETCH_RECORD_READ), for replay. */
static struct kvm_prefetch_order *order;
static uint64_t order_size;

/* Record the guest's pass once, in a VM whose memory is all there. */
static void record_order(void)
{
	struct kvm_prefetch_order_op op = { .op = KVM_PREFETCH_RECORD_START };
	struct a64_vcpu *vcpu;
	struct a64_vm *vm;
	int r;

	vm = a64_vm_with_policy("none", 0, KVM_PREFETCH_GUP_NOFAULT);
	a64_vm_add_slot(vm, DATA_SLOT, DATA_GPA, MEM_SIZE, 0, NULL, false);
	vcpu = a64_vcpu_ready(vm, DATA_GPA);
	A64_ASSERT(!ioctl(vm->fd, KVM_PREFETCH_ORDER, &op),
		   "RECORD_START: %s", strerror(errno));
	a64_touch(vcpu, DATA_GPA, DATA_GPA + MEM_SIZE, 0, A64_TOUCH_WRITE);
	op = (struct kvm_prefetch_order_op){ .op = KVM_PREFETCH_RECORD_STOP };
	A64_ASSERT(!ioctl(vm->fd, KVM_PREFETCH_ORDER, &op),
		   "RECORD_STOP: %s", strerror(errno));
	op = (struct kvm_prefetch_order_op){ .op = KVM_PREFETCH_RECORD_READ };
	r = ioctl(vm->fd, KVM_PREFETCH_ORDER, &op) ? -errno : 0;
	A64_ASSERT(r == -E2BIG, "RECORD_READ for the size: %d", r);
	order_size = op.size;
	order = malloc(order_size);
	A64_ASSERT(order, "malloc");
	op.addr = (uintptr_t)order;
	A64_ASSERT(!ioctl(vm->fd, KVM_PREFETCH_ORDER, &op),
		   "RECORD_READ: %s", strerror(errno));
	A64_EXPECT(order->nr_pages == NR_PAGES && !order->flags,
		   "the recorded order: %llu runs, %llu pages (want %llu), flags %#x",
		   (unsigned long long)order->nr_runs,
		   (unsigned long long)order->nr_pages,
		   (unsigned long long)NR_PAGES, order->flags);
	a64_vcpu_free(vcpu);
	a64_vm_free(vm);
}

/*
 * The populator of a replay run: fill the chunks of the recorded order's
 * runs in order (UFFDIO_COPY or _CONTINUE, as the handler), skipping what
 * the handler filled already (EEXIST).
 */
struct populator {
	struct a64_uffd *h;
	uint64_t fills, errors;
	pthread_t thread;
};

static void *populator_fn(void *arg)
{
	struct populator *p = arg;
	struct a64_uffd *h = p->h;
	uint64_t i, off, end, last = ~0ULL;
	int r;

	for (i = 0; i < order->nr_runs; i++) {
		uint64_t gfn = KVM_PREFETCH_RUN_GFN(order->runs[i]);

		off = gfn * A64_PAGE - DATA_GPA;
		end = off + KVM_PREFETCH_RUN_PAGES(order->runs[i]) * A64_PAGE;
		if (gfn * A64_PAGE < DATA_GPA || end > MEM_SIZE)
			continue;
		for (off &= ~(h->chunk - 1); off < end; off += h->chunk) {
			if (off == last)
				continue;
			last = off;
			if (h->minor) {
				struct uffdio_continue c = {
					.range = { .start = (uintptr_t)h->base + off,
						   .len = h->chunk },
				};

				r = ioctl(h->uffd, UFFDIO_CONTINUE, &c);
			} else {
				struct uffdio_copy c = {
					.dst = (uintptr_t)h->base + off,
					.src = (uintptr_t)h->snap + off,
					.len = h->chunk,
				};

				r = ioctl(h->uffd, UFFDIO_COPY, &c);
			}
			if (!r)
				p->fills++;
			else if (errno != EEXIST)
				p->errors++;
		}
	}
	return NULL;
}

static void run(enum mode mode, unsigned int ci, enum policy pol, int round)
{
	uint64_t chunk = chunks[ci], nr_chunks = MEM_SIZE / chunk;
	bool prefetch = pol == AUTO;
	uint64_t want_pf = prefetch ? nr_chunks : NR_PAGES;
	uint64_t want_mapped = prefetch ? NR_PAGES - nr_chunks : 0;
	struct result *res = &results[mode][ci][pol];
	uint64_t pf0, m0, pf1, m1, t0, t1, i, bad = 0;
	struct populator pop = { 0 };
	struct a64_vcpu *vcpu;
	struct a64_uffd h;
	struct a64_vm *vm;
	bool exact;
	char *view;
	int fd = -1;

	memset(&h, 0, sizeof(h));
	h.minor = mode == ZC;
	h.chunk = chunk;
	h.snap = snap;
	if (mode == COPY) {
		h.base = mmap(NULL, MEM_SIZE, PROT_READ | PROT_WRITE,
			      MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
			      -1, 0);
		A64_ASSERT(h.base != MAP_FAILED, "mmap: %s", strerror(errno));
		madvise(h.base, MEM_SIZE, MADV_NOHUGEPAGE);
		view = h.base;
	} else {
		fd = memfd_create("bench_restore", MFD_CLOEXEC);
		A64_ASSERT(fd >= 0, "memfd_create: %s", strerror(errno));
		A64_ASSERT(!ftruncate(fd, MEM_SIZE), "ftruncate: %s",
			   strerror(errno));
		/* The page cache filled through a second, unarmed mapping. */
		view = mmap(NULL, MEM_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED,
			    fd, 0);
		A64_ASSERT(view != MAP_FAILED, "mmap memfd: %s",
			   strerror(errno));
		memcpy(view, snap, MEM_SIZE);
		h.base = mmap(NULL, MEM_SIZE, PROT_READ | PROT_WRITE,
			      MAP_SHARED, fd, 0);
		A64_ASSERT(h.base != MAP_FAILED, "mmap memfd: %s",
			   strerror(errno));
	}
	a64_uffd_start(&h, MEM_SIZE);

	vm = a64_vm_with_policy(policy_name[pol],
				pol == REPLAY ? NR_PAGES : chunk / A64_PAGE,
				KVM_PREFETCH_GUP_NOFAULT);
	a64_vm_add_slot(vm, DATA_SLOT, DATA_GPA, MEM_SIZE, 0, h.base, false);
	vcpu = a64_vcpu_ready(vm, DATA_GPA);
	if (pol == REPLAY) {
		struct kvm_prefetch_order_op op = {
			.op = KVM_PREFETCH_REPLAY_LOAD,
			.addr = (uintptr_t)order, .size = order_size,
		};

		A64_ASSERT(!ioctl(vm->fd, KVM_PREFETCH_ORDER, &op),
			   "REPLAY_LOAD: %s", strerror(errno));
	}
	pf0 = a64_vcpu_stat_get(vcpu, "pf_taken");
	m0 = a64_vcpu_stat_get(vcpu, "prefetch_mapped");
	t0 = a64_now_ns();
	if (pol == REPLAY || pol == AHEAD) {
		pop.h = &h;
		A64_ASSERT(!pthread_create(&pop.thread, NULL, populator_fn,
					   &pop), "pthread_create");
	}
	a64_touch(vcpu, DATA_GPA, DATA_GPA + MEM_SIZE, 0, A64_TOUCH_WRITE);
	t1 = a64_now_ns();
	if (pol == REPLAY || pol == AHEAD)
		pthread_join(pop.thread, NULL);
	pf1 = a64_vcpu_stat_get(vcpu, "pf_taken");
	m1 = a64_vcpu_stat_get(vcpu, "prefetch_mapped");

	for (i = 0; i < NR_PAGES; i++) {
		uint32_t g, s, want_s;

		memcpy(&g, view + i * A64_PAGE, 4);
		memcpy(&s, view + i * A64_PAGE + SNAP_OFF, 4);
		memcpy(&want_s, snap + i * A64_PAGE + SNAP_OFF, 4);
		bad += g != (uint32_t)(DATA_GPA + i * A64_PAGE) || s != want_s;
	}

	res->ns[round] = t1 - t0;
	res->fill_ns[round] = h.fill_ns;
	res->pf = pf1 - pf0;
	res->mapped = m1 - m0;
	res->events = h.events;
	res->ahead = pop.fills;
	res->runs++;
	if (pol == REPLAY || pol == AHEAD)
		/*
		 * A race with the populator: no exact counts.  pf_taken
		 * counts aborts, also those retried (more than the pages
		 * they map): only the pages mapped are bounded.
		 */
		exact = res->mapped <= NR_PAGES &&
			h.events <= (int)nr_chunks && !h.errors && !pop.errors;
	else
		exact = res->pf == want_pf && res->mapped == want_mapped &&
			h.events == (int)nr_chunks && !h.errors;
	res->exact += exact;
	res->verified += !bad;
	if (!exact || bad)
		a64_info("round %d, %s, %llu KiB, %s: pf_taken %llu, prefetch_mapped %llu, %d events, %d errors, %llu pages wrong (want %llu, %llu, %llu, 0, 0)",
			 round, mode_name[mode],
			 (unsigned long long)(chunk >> 10),
			 config_name[pol],
			 (unsigned long long)res->pf,
			 (unsigned long long)res->mapped, h.events, h.errors,
			 (unsigned long long)bad,
			 (unsigned long long)want_pf,
			 (unsigned long long)want_mapped,
			 (unsigned long long)nr_chunks);

	a64_vcpu_free(vcpu);
	a64_vm_free(vm);
	a64_uffd_stop(&h);
	munmap(h.base, MEM_SIZE);
	if (mode == ZC) {
		munmap(view, MEM_SIZE);
		close(fd);
	}
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* Median (the lower middle one for an even count), min and max, in ms. */
static void stats(const uint64_t *v, int n, double *med, double *lo,
		  double *hi)
{
	uint64_t s[MAX_ROUNDS];

	memcpy(s, v, n * sizeof(*v));
	qsort(s, n, sizeof(*s), cmp_u64);
	*med = s[(n - 1) / 2] / 1e6;
	*lo = s[0] / 1e6;
	*hi = s[n - 1] / 1e6;
}

static int rounds_arg(void)
{
	char buf[1024] = "", *p;
	FILE *f = fopen("/proc/cmdline", "r");
	int n = 5;

	if (f) {
		if (!fgets(buf, sizeof(buf), f))
			buf[0] = 0;
		fclose(f);
	}
	p = strstr(buf, "kp.rounds=");
	if (p)
		n = atoi(p + strlen("kp.rounds="));
	return n < 1 ? 1 : n > MAX_ROUNDS ? MAX_ROUNDS : n;
}

int main(void)
{
	int rounds = rounds_arg(), round, m, p;
	struct a64_vm *vm;
	unsigned int ci;
	uint64_t i, t0;
	int cap;

	a64_require_kvm();
	vm = a64_vm_create();
	cap = a64_vm_check_ext(vm, KVM_CAP_PREFETCH_POLICY);
	a64_vm_free(vm);
	A64_REQUIRE(cap > 0, "KVM_CAP_PREFETCH_POLICY is 0");

	snap = mmap(NULL, MEM_SIZE, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	A64_ASSERT(snap != MAP_FAILED, "mmap: %s", strerror(errno));
	for (i = 0; i < NR_PAGES; i++) {
		uint32_t v = 0x5a000000u ^ (uint32_t)(i * 2654435761u);

		memcpy(snap + i * A64_PAGE + SNAP_OFF, &v, 4);
	}

	record_order();
	t0 = a64_now_ns();
	for (round = 0; round < rounds; round++)
		for (m = 0; m < NR_MODES; m++)
			for (ci = 0; ci < NR_CHUNKS; ci++) {
				/* none first in odd rounds (1, 3, ...). */
				bool first = !(round & 1);

				run(m, ci, first ? AUTO : NONE, round);
				run(m, ci, first ? NONE : AUTO, round);
				run(m, ci, REPLAY, round);
				run(m, ci, AHEAD, round);
			}
	a64_info("bench_restore: %d rounds, M = %llu MiB, %.1f s", rounds,
		 (unsigned long long)(MEM_SIZE >> 20),
		 (a64_now_ns() - t0) / 1e9);

	for (m = 0; m < NR_MODES; m++)
		for (ci = 0; ci < NR_CHUNKS; ci++)
			for (p = 0; p < NR_POLICIES; p++) {
				struct result *r = &results[m][ci][p];
				uint64_t nr_chunks = MEM_SIZE / chunks[ci];

				A64_EXPECT(r->exact == rounds &&
					   r->verified == rounds,
					   "%s, %llu KiB chunks, %s-%llu: %d of %d runs exact (%.2f guest faults per chunk, %llu prefetched, %d events in the last), %d verified",
					   mode_name[m],
					   (unsigned long long)(chunks[ci] >> 10),
					   config_name[p],
					   (unsigned long long)(p == REPLAY ? NR_PAGES :
								chunks[ci] / A64_PAGE),
					   r->exact, rounds,
					   (double)r->pf / nr_chunks,
					   (unsigned long long)r->mapped,
					   r->events, r->verified);
			}

	a64_info("| restore | C | none ms (median, min-max) | auto nr=C/4K ms | auto vs none | handler fill ms (none, auto) | rest ms (none, auto) | rest: auto vs none | faults/chunk none | faults/chunk auto | UFFD events | prefetched |");
	a64_info("|---|---|---|---|---|---|---|---|---|---|---|---|");
	for (m = 0; m < NR_MODES; m++)
		for (ci = 0; ci < NR_CHUNKS; ci++) {
			struct result *n = &results[m][ci][0];
			struct result *a = &results[m][ci][1];
			uint64_t nr_chunks = MEM_SIZE / chunks[ci];
			double nm, nl, nh, am, al, ah, fn, fa, rn, ra, x, y;
			uint64_t rest[2][MAX_ROUNDS];
			int k;

			stats(n->ns, rounds, &nm, &nl, &nh);
			stats(a->ns, rounds, &am, &al, &ah);
			stats(n->fill_ns, rounds, &fn, &x, &y);
			stats(a->fill_ns, rounds, &fa, &x, &y);
			/* rest: the pass minus the handler's own fill time. */
			for (k = 0; k < rounds; k++) {
				rest[0][k] = n->ns[k] - n->fill_ns[k];
				rest[1][k] = a->ns[k] - a->fill_ns[k];
			}
			stats(rest[0], rounds, &rn, &x, &y);
			stats(rest[1], rounds, &ra, &x, &y);
			a64_info("| %s | %llu KiB | %.1f (%.1f-%.1f) | %.1f (%.1f-%.1f) | %+.1f%% | %.1f, %.1f | %.1f, %.1f | %+.1f%% | %.2f | %.2f | %d | %llu |",
				 mode_name[m],
				 (unsigned long long)(chunks[ci] >> 10),
				 nm, nl, nh, am, al, ah,
				 100.0 * (am - nm) / nm, fn, fa, rn, ra,
				 100.0 * (ra - rn) / rn,
				 (double)n->pf / nr_chunks,
				 (double)a->pf / nr_chunks, a->events,
				 (unsigned long long)a->mapped);
		}
	a64_info("| restore | C | replay ms (median, min-max) | none+populator ms | replay vs none+populator | replay vs none | replay vs auto | guest faults replay / none+populator (last run) | UFFD events replay / none+populator | prefetched | populator fills |");
	a64_info("|---|---|---|---|---|---|---|---|---|---|---|");
	for (m = 0; m < NR_MODES; m++)
		for (ci = 0; ci < NR_CHUNKS; ci++) {
			struct result *n = &results[m][ci][NONE];
			struct result *a = &results[m][ci][AUTO];
			struct result *r = &results[m][ci][REPLAY];
			struct result *b = &results[m][ci][AHEAD];
			double nm, am, rm, rl, rh, bm, bl, bh, x, y;

			stats(n->ns, rounds, &nm, &x, &y);
			stats(a->ns, rounds, &am, &x, &y);
			stats(r->ns, rounds, &rm, &rl, &rh);
			stats(b->ns, rounds, &bm, &bl, &bh);
			a64_info("| %s | %llu KiB | %.1f (%.1f-%.1f) | %.1f (%.1f-%.1f) | %+.1f%% | %+.1f%% | %+.1f%% | %llu / %llu | %d / %d | %llu | %llu |",
				 mode_name[m],
				 (unsigned long long)(chunks[ci] >> 10),
				 rm, rl, rh, bm, bl, bh,
				 100.0 * (rm - bm) / bm,
				 100.0 * (rm - nm) / nm,
				 100.0 * (rm - am) / am,
				 (unsigned long long)r->pf,
				 (unsigned long long)b->pf, r->events,
				 b->events, (unsigned long long)r->mapped,
				 (unsigned long long)r->ahead);
		}
	return a64_exit();
}
