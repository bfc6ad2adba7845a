// SPDX-License-Identifier: GPL-2.0
/*
 * prefetch_faults - exact guest fault counts with and without prefetch.
 *
 * One vCPU writes its GPA into the first dword of each of N = 1024 fresh
 * 4 KiB guest pages (a memslot of exactly N pages at a 2 MiB-aligned GPA,
 * so every prefetch window of up to 512 pages lies inside it) and the
 * host checks every page afterwards.  Expectations, per pass over the N
 * pages, on host memory already populated (memset before the guest runs):
 *  (a) stock kvm.ko: pf_taken == N; our kvm.ko with default parameters
 *      and a VM that never chose a policy, and with policy none: pf_taken
 *      identical, prefetch_windows == prefetch_mapped == 0 (prefetch is
 *      opt-in); manual and async never prefetch on a guest fault either;
 *  (b) auto, nr_pages W (8, 16, 512): the fault on the first page of each
 *      W-aligned window maps the W - 1 others: pf_taken == N/W,
 *      prefetch_windows == N/W, prefetch_mapped == N - N/W; the same with
 *      gup fast;
 *  (c) auto on host memory NOT populated (fresh anonymous mmap): prefetch
 *      never faults host pages in, so pf_taken == N, prefetch_mapped == 0;
 *      every window maps nothing, so the vCPU backs off: each guest fault
 *      either opens a window or counts in prefetch_skipped, and fewer
 *      than N/32 open one (the exact counts: prefetch_backoff);
 *  (d) two VMs run concurrently in two threads, one none and one auto
 *      nr_pages 8: each gets its own numbers;
 *  (e) a page the host does not have ends the scan: auto nr 16 on
 *      populated memory with page 5 of every 16-page window dropped
 *      (MADV_DONTNEED); the guest writes pages 0-4, then 6-15 of each
 *      window.  The fault on page 0 maps 1-4 and stops at the hole; the
 *      fault on page 6 maps 7-15 and, going backward, stops at the hole:
 *      2 faults and 13 pages mapped per window, and every hole is still
 *      absent from the host afterwards (mincore);
 *  (f) going backward, the first mapped page ends the scan: page 8 of
 *      every window is faulted in under policy none, then under auto nr
 *      16 the guest writes page 12: it maps 13-15 and 11-9, 6 pages.
 * A second (read) pass over the mapped range must take no fault and
 * return the checksum of what the guest wrote.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>

#include "kvmtest.h"
#include "kt_sys.h"

#define DATA_SLOT	1
#define DATA_GPA	0x400000ULL		/* 4 MiB: 512-page aligned */
#define N_PAGES		1024ULL
#define DATA_SIZE	(N_PAGES * KT_PAGE_SIZE)
#define FILL_BYTE	0xa5
#define DW1_KEY		0x5a5a5a5aU

struct result {
	uint64_t pf, windows, mapped;	/* deltas over the write pass */
	uint64_t skipped;		/* prefetch_skipped, ditto */
	uint64_t pf_read;		/* faults of the read-back pass */
	bool have_prefetch_stats;
	uint64_t bad;			/* pages with wrong contents */
	double ms;
};

struct vmctx {
	const char *tag;
	struct kt_vm *vm;
	struct kt_vcpu *vcpu;
	char *mem;
	bool populated;
	struct result res;
};

static void fill_host(char *mem)
{
	uint64_t i;

	memset(mem, FILL_BYTE, DATA_SIZE);
	for (i = 0; i < N_PAGES; i++) {
		uint32_t *p = (uint32_t *)(mem + i * KT_PAGE_SIZE);
		uint32_t gpa = DATA_GPA + i * KT_PAGE_SIZE;

		p[0] = ~gpa;
		p[1] = gpa ^ DW1_KEY;
	}
}

/* Every page: dword 0 = its GPA (guest), the rest untouched. */
static uint64_t check_contents(const char *tag, const char *mem,
			       bool populated)
{
	uint32_t fill = populated ? 0x01010101U * FILL_BYTE : 0;
	uint64_t i, bad = 0;

	for (i = 0; i < N_PAGES; i++) {
		const uint32_t *p = (const uint32_t *)(mem + i * KT_PAGE_SIZE);
		uint32_t gpa = DATA_GPA + i * KT_PAGE_SIZE;
		uint32_t dw1 = populated ? gpa ^ DW1_KEY : 0;
		uint32_t last = p[KT_PAGE_SIZE / 4 - 1];

		if (p[0] == gpa && p[1] == dw1 && last == fill)
			continue;
		if (bad++ < 4)
			kt_info("%s: gpa 0x%x: dword0 0x%x dword1 0x%x last 0x%x, want 0x%x 0x%x 0x%x",
				tag, gpa, p[0], p[1], last, gpa, dw1, fill);
	}
	return bad;
}

static void setup(struct vmctx *c, const char *tag, const char *policy,
		  uint32_t nr, uint32_t gup, bool populated)
{
	struct kvm_prefetch_policy want, got;
	int r;

	memset(c, 0, sizeof(*c));
	c->tag = tag;
	c->populated = populated;
	c->vm = kt_vm_create();
	c->mem = kt_vm_add_slot(c->vm, DATA_SLOT, DATA_GPA, DATA_SIZE, 0,
				NULL);
	if (populated)
		fill_host(c->mem);
	if (policy) {
		r = ktsys_set_policy(c->vm->fd, policy, nr, gup);
		KT_ASSERT(!r, "%s: SET %s nr %u gup %u: %s", tag, policy, nr,
			  gup, strerror(-r));
		ktsys_policy_fill(&want, policy, nr, gup);
		r = ktsys_get_policy(c->vm->fd, &got);
		KT_ASSERT(!r && ktsys_policy_eq(&want, &got),
			  "%s: GET after SET: %s", tag, strerror(-r));
	}
	c->vcpu = kt_vcpu_add(c->vm, 0);
}

static void teardown(struct vmctx *c)
{
	kt_vcpu_free(c->vcpu);
	kt_vm_free(c->vm);
}

static void stats3(struct kt_vcpu *vcpu, bool have, uint64_t v[3])
{
	v[0] = kt_vcpu_stat_get(vcpu, "pf_taken");
	v[1] = have ? kt_vcpu_stat_get(vcpu, "prefetch_windows") : 0;
	v[2] = have ? kt_vcpu_stat_get(vcpu, "prefetch_mapped") : 0;
}

/* The measured workload; thread-safe for distinct contexts. */
static void measure(struct vmctx *c)
{
	uint32_t start = DATA_GPA, end = DATA_GPA + DATA_SIZE;
	uint32_t sum, want_sum = 0;
	uint64_t v0[3], v1[3], v2[3], t0, t1, dummy, i;
	struct result *res = &c->res;

	res->have_prefetch_stats =
		!kt_vcpu_stat(c->vcpu, "prefetch_mapped", &dummy);

	/* Empty pass: the code page's fault happens here, not below. */
	kt_touch(c->vcpu, start, start, 0, KT_TOUCH_WRITE);

	stats3(c->vcpu, res->have_prefetch_stats, v0);
	if (res->have_prefetch_stats)
		res->skipped = kt_vcpu_stat_get(c->vcpu, "prefetch_skipped");
	t0 = kt_now_ns();
	kt_touch(c->vcpu, start, end, 0, KT_TOUCH_WRITE);
	t1 = kt_now_ns();
	stats3(c->vcpu, res->have_prefetch_stats, v1);
	if (res->have_prefetch_stats)
		res->skipped = kt_vcpu_stat_get(c->vcpu, "prefetch_skipped") -
			       res->skipped;

	res->pf = v1[0] - v0[0];
	res->windows = v1[1] - v0[1];
	res->mapped = v1[2] - v0[2];
	res->ms = (t1 - t0) / 1e6;
	res->bad = check_contents(c->tag, c->mem, c->populated);

	for (i = 0; i < N_PAGES; i++)
		want_sum += DATA_GPA + i * KT_PAGE_SIZE;
	sum = kt_touch(c->vcpu, start, end, 0, KT_TOUCH_READ);
	stats3(c->vcpu, res->have_prefetch_stats, v2);
	res->pf_read = v2[0] - v1[0];

	kt_info("%s: %llu pages in %.1f ms: pf_taken +%llu, prefetch_windows +%llu, prefetch_mapped +%llu; read pass pf +%llu",
		c->tag, N_PAGES, res->ms, (unsigned long long)res->pf,
		(unsigned long long)res->windows,
		(unsigned long long)res->mapped,
		(unsigned long long)res->pf_read);
	KT_EXPECT(!res->bad, "%s: all %llu pages hold the right contents (%llu wrong)",
		  c->tag, N_PAGES, (unsigned long long)res->bad);
	KT_EXPECT(sum == want_sum, "%s: read pass checksum 0x%x (want 0x%x)",
		  c->tag, sum, want_sum);
	KT_EXPECT(res->pf_read == 0,
		  "%s: read pass over mapped pages took %llu faults (want 0)",
		  c->tag, (unsigned long long)res->pf_read);
}

static void expect_counts(const struct vmctx *c, uint64_t pf,
			  uint64_t windows, uint64_t mapped)
{
	const struct result *r = &c->res;

	KT_EXPECT(r->pf == pf, "%s: pf_taken +%llu (want %llu)", c->tag,
		  (unsigned long long)r->pf, (unsigned long long)pf);
	if (!KT_EXPECT(r->have_prefetch_stats,
		       "%s: vCPU has prefetch_windows/prefetch_mapped stats",
		       c->tag))
		return;
	KT_EXPECT(r->windows == windows,
		  "%s: prefetch_windows +%llu (want %llu)", c->tag,
		  (unsigned long long)r->windows, (unsigned long long)windows);
	KT_EXPECT(r->mapped == mapped, "%s: prefetch_mapped +%llu (want %llu)",
		  c->tag, (unsigned long long)r->mapped,
		  (unsigned long long)mapped);
}

/* One VM, one policy, one pass; @policy NULL leaves the VM's default. */
static struct result run_case(const char *tag, const char *policy,
			      uint32_t nr, uint32_t gup, bool populated,
			      uint64_t pf, uint64_t windows, uint64_t mapped,
			      bool check_prefetch_stats)
{
	struct vmctx c;

	setup(&c, tag, policy, nr, gup, populated);
	measure(&c);
	if (check_prefetch_stats)
		expect_counts(&c, pf, windows, mapped);
	else
		KT_EXPECT(c.res.pf == pf, "%s: pf_taken +%llu (want %llu)",
			  tag, (unsigned long long)c.res.pf,
			  (unsigned long long)pf);
	teardown(&c);
	return c.res;
}

/* (c): every guest fault opens a window or backs off; few open one. */
static void unpopulated(const char *tag, uint32_t gup)
{
	struct result r = run_case(tag, "auto", 8, gup, false, N_PAGES, 0, 0,
				   false);

	KT_EXPECT(r.have_prefetch_stats && r.mapped == 0 &&
		  r.windows + r.skipped == N_PAGES &&
		  r.windows < N_PAGES / 32,
		  "%s: prefetch_mapped +%llu (want 0), prefetch_windows +%llu and prefetch_skipped +%llu add up to %llu, windows fewer than %llu",
		  tag, (unsigned long long)r.mapped,
		  (unsigned long long)r.windows,
		  (unsigned long long)r.skipped, N_PAGES, N_PAGES / 32);
}

static pthread_barrier_t barrier;

static void *measure_thread(void *arg)
{
	struct vmctx *c = arg;

	pthread_barrier_wait(&barrier);
	measure(c);
	return NULL;
}

static void two_vms(void)
{
	struct vmctx c[2];
	pthread_t th[2];
	int i;

	setup(&c[0], "(d) concurrent VM 1: none", "none", 8,
	      KVM_PREFETCH_GUP_NOFAULT, true);
	setup(&c[1], "(d) concurrent VM 2: auto nr 8", "auto", 8,
	      KVM_PREFETCH_GUP_NOFAULT, true);
	pthread_barrier_init(&barrier, NULL, 2);
	for (i = 0; i < 2; i++)
		KT_ASSERT(!pthread_create(&th[i], NULL, measure_thread, &c[i]),
			  "pthread_create");
	for (i = 0; i < 2; i++)
		pthread_join(th[i], NULL);
	pthread_barrier_destroy(&barrier);

	expect_counts(&c[0], N_PAGES, 0, 0);
	expect_counts(&c[1], N_PAGES / 8, N_PAGES / 8, N_PAGES - N_PAGES / 8);
	for (i = 0; i < 2; i++)
		teardown(&c[i]);
}

#define W		16ULL			/* window of (e) and (f) */
#define W_HOLE		5ULL
#define W_OLD		8ULL
#define W_NEW		12ULL

static uint32_t page_gpa(uint64_t i)
{
	return DATA_GPA + i * KT_PAGE_SIZE;
}

/* The stats' deltas between @v0 and @v1 as @c's result, logged. */
static void record_deltas(struct vmctx *c, const uint64_t v0[3],
			  const uint64_t v1[3])
{
	c->res.have_prefetch_stats = true;
	c->res.pf = v1[0] - v0[0];
	c->res.windows = v1[1] - v0[1];
	c->res.mapped = v1[2] - v0[2];
	kt_info("%s: pf_taken +%llu, prefetch_windows +%llu, prefetch_mapped +%llu",
		c->tag, (unsigned long long)c->res.pf,
		(unsigned long long)c->res.windows,
		(unsigned long long)c->res.mapped);
}

static void holes_end_the_scan(uint32_t gup, const char *tag)
{
	uint64_t v0[3], v1[3], w, absent = 0;
	unsigned char vec;
	struct vmctx c;

	setup(&c, tag, "auto", W, gup, true);
	for (w = 0; w < N_PAGES / W; w++)
		KT_ASSERT(!madvise(c.mem + (w * W + W_HOLE) * KT_PAGE_SIZE,
				   KT_PAGE_SIZE, MADV_DONTNEED),
			  "madvise(MADV_DONTNEED): %s", strerror(errno));
	kt_touch(c.vcpu, DATA_GPA, DATA_GPA, 0, KT_TOUCH_WRITE);
	stats3(c.vcpu, true, v0);
	for (w = 0; w < N_PAGES / W; w++) {
		kt_touch(c.vcpu, page_gpa(w * W), page_gpa(w * W + W_HOLE), 0,
			 KT_TOUCH_WRITE);
		kt_touch(c.vcpu, page_gpa(w * W + W_HOLE + 1),
			 page_gpa(w * W + W), 0, KT_TOUCH_WRITE);
	}
	stats3(c.vcpu, true, v1);
	record_deltas(&c, v0, v1);
	expect_counts(&c, 2 * N_PAGES / W, 2 * N_PAGES / W,
		      (W - 3) * N_PAGES / W);
	for (w = 0; w < N_PAGES / W; w++) {
		KT_ASSERT(!mincore(c.mem + (w * W + W_HOLE) * KT_PAGE_SIZE,
				   KT_PAGE_SIZE, &vec),
			  "mincore: %s", strerror(errno));
		absent += !(vec & 1);
	}
	KT_EXPECT(absent == N_PAGES / W,
		  "%s: %llu of %llu holes still absent from the host (prefetch faults nothing in)",
		  tag, (unsigned long long)absent,
		  (unsigned long long)(N_PAGES / W));
	teardown(&c);
}

static void backward_stops_at_mapped(void)
{
	const char *tag = "(f) auto nr 16, backward scan";
	uint64_t v0[3], v1[3], w;
	struct vmctx c;
	int r;

	setup(&c, tag, "none", W, KVM_PREFETCH_GUP_NOFAULT, true);
	for (w = 0; w < N_PAGES / W; w++)
		kt_touch(c.vcpu, page_gpa(w * W + W_OLD),
			 page_gpa(w * W + W_OLD + 1), 0, KT_TOUCH_WRITE);
	r = ktsys_set_policy(c.vm->fd, "auto", W, KVM_PREFETCH_GUP_NOFAULT);
	KT_ASSERT(!r, "%s: SET auto: %s", tag, strerror(-r));
	stats3(c.vcpu, true, v0);
	for (w = 0; w < N_PAGES / W; w++)
		kt_touch(c.vcpu, page_gpa(w * W + W_NEW),
			 page_gpa(w * W + W_NEW + 1), 0, KT_TOUCH_WRITE);
	stats3(c.vcpu, true, v1);
	record_deltas(&c, v0, v1);
	expect_counts(&c, N_PAGES / W, N_PAGES / W,
		      ((W - 1 - W_NEW) + (W_NEW - W_OLD - 1)) * N_PAGES / W);
	teardown(&c);
}

int main(void)
{
	static const uint32_t windows[] = { 8, 16, 512 };
	struct result stock, none;
	char tag[96];
	size_t i;
	int r;

	ktsys_guard(120);
	kt_require_kvm();

	/* (a) stock Debian modules: one guest fault per page. */
	r = ktsys_reload("stock");
	KT_ASSERT(r == 0, "kvm-reload stock: status %d", r);
	stock = run_case("(a) stock kvm.ko", NULL, 0, 0, true, N_PAGES, 0, 0,
			 false);
	r = ktsys_restore();
	KT_ASSERT(r == 0, "kvm-reload ours: status %d", r);
	ktsys_require_prefetch();

	/* Default parameters, no SET: as stock. */
	none = run_case("(a) ours, default parameters, no SET", NULL, 0, 0,
			true, N_PAGES, 0, 0, true);
	KT_EXPECT(none.pf == stock.pf,
		  "(a) a VM under the defaults takes as many faults as stock (%llu vs %llu)",
		  (unsigned long long)none.pf, (unsigned long long)stock.pf);
	none = run_case("(a) ours, policy none", "none", 8,
			KVM_PREFETCH_GUP_NOFAULT, true, N_PAGES, 0, 0, true);
	KT_EXPECT(none.pf == stock.pf,
		  "(a) policy none takes as many faults as stock (%llu vs %llu)",
		  (unsigned long long)none.pf, (unsigned long long)stock.pf);
	/* Guest faults trigger nothing under manual and async either. */
	run_case("(a) ours, policy manual", "manual", 8,
		 KVM_PREFETCH_GUP_NOFAULT, true, N_PAGES, 0, 0, true);
	run_case("(a) ours, policy async", "async", 8,
		 KVM_PREFETCH_GUP_NOFAULT, true, N_PAGES, 0, 0, true);

	/* (b) auto on populated memory: one fault per aligned window. */
	for (i = 0; i < ARRAY_SIZE(windows); i++) {
		uint32_t w = windows[i];

		snprintf(tag, sizeof(tag), "(b) auto nr %u nofault", w);
		run_case(tag, "auto", w, KVM_PREFETCH_GUP_NOFAULT, true,
			 N_PAGES / w, N_PAGES / w, N_PAGES - N_PAGES / w, true);
	}
	run_case("(b) auto nr 8 fast", "auto", 8, KVM_PREFETCH_GUP_FAST_ONLY,
		 true, N_PAGES / 8, N_PAGES / 8, N_PAGES - N_PAGES / 8, true);
	run_case("(b) auto nr 512 fast", "auto", 512,
		 KVM_PREFETCH_GUP_FAST_ONLY, true, N_PAGES / 512,
		 N_PAGES / 512, N_PAGES - N_PAGES / 512, true);

	/*
	 * (c) host pages not populated: each window finds no present
	 * neighbour, so every page takes its own fault, and the vCPU backs
	 * off: most guest faults open no window.
	 */
	unpopulated("(c) auto nr 8 nofault, unpopulated",
		    KVM_PREFETCH_GUP_NOFAULT);
	unpopulated("(c) auto nr 8 fast, unpopulated",
		    KVM_PREFETCH_GUP_FAST_ONLY);

	/* (d) two VMs at once, different policies. */
	two_vms();

	/* (e), (f): where the engine's scan of a window stops. */
	holes_end_the_scan(KVM_PREFETCH_GUP_NOFAULT,
			   "(e) auto nr 16 nofault, holes");
	holes_end_the_scan(KVM_PREFETCH_GUP_FAST_ONLY,
			   "(e) auto nr 16 fast, holes");
	backward_stops_at_mapped();

	return kt_exit();
}
