// SPDX-License-Identifier: GPL-2.0
/*
 * bench_scale - how the cost of a userfaultfd restore grows (issue 32),
 * run inside the test VM by "make bench-scale" (kp.mode=test,
 * kp.tests=bench_scale, arguments in kp.scale=k=v,k=v on the kernel
 * command line).  Without kp.scale= (e.g. under "make bench", which runs
 * every bench* program) it SKIPs at once.
 *
 * Every guest runs in kvmtest's irqchip mode (in-kernel irqchip, IF=1:
 * the first fault of a chunk goes through async #PF), as bench.c's main
 * table.  Four dimensions, each printing one "@@SCALE dim=... key=value"
 * line per run (tests/bench/scale-report.py makes the tables):
 *
 *  vcpus   one VM with 1/2/4/8 vCPUs; vc_mib MiB split into equal
 *          disjoint parts, one memslot, userfaultfd range and handler
 *          thread per vCPU; copy restore (MISSING, UFFDIO_COPY) and
 *          zero-copy (MINOR over a memfd, UFFDIO_CONTINUE); chunks
 *          vc_chunks KiB; arms none and auto nr=C/4K.
 *  clones  N VMs (1 vCPU each) restored at once from one snapshot: one
 *          memfd holding cl_mib MiB, mapped MAP_SHARED by every clone,
 *          one MINOR-mode userfaultfd and kt_uffd handler thread per
 *          clone (UFFDIO_CONTINUE); per clone the wall time of its pass,
 *          its vCPU thread's and its handler thread's CPU time.
 *  mem     one vCPU restoring mem_sizes MiB (copy) at mem_chunk KiB
 *          chunks (kt_bench's ktb_run(), vCPU and handler pinned).
 *  random  one vCPU, rnd_mib MiB at rnd_chunk KiB chunks (copy, pinned);
 *          the guest touches the chunks in a seeded random order (one
 *          KVM_RUN per chunk), every page ("rand") or the first page of
 *          every 8 ("rand-sparse", and "seq-sparse" in linear order);
 *          arms none, auto nr=C/4K, auto nr=8, adaptive.  Afterwards the
 *          policy is set to none and the guest reads every page it did
 *          not touch: each of those that does not fault was prefetched
 *          and never used ("wasted").
 *
 *  patterns  one vCPU, pat_mib MiB at each of pat_chunks KiB chunks
 *          (copy, pinned); the guest walks a list of pages (a table in
 *          its own memslot, read by a small guest program, so any order
 *          runs in one KVM_RUN): seq (every page, linear), rand (chunks
 *          in a seeded random order, every page), seq-sparse (the first
 *          page of every 8), rand-sparse (the same, chunks in random
 *          order), stride2/stride8/stride64 (one page in 2/8/64, linear;
 *          stride8 is seq-sparse's page set), reverse (every page, from
 *          the top down), hotset (a random eighth of the pages, three
 *          passes, each in a new random order); arms none, auto
 *          nr=C/4K and adaptive (and auto nr=512 with pat_auto512=1:
 *          adaptive's steady window, without its logic).  The policy is
 *          set again after the
 *          table is read in, so each run starts with fresh policy
 *          state.  "wasted" is measured as in random, over the
 *          untouched pages of the chunks the guest touched (the only
 *          ones the host has).
 *
 * In each round the arms of one point run back to back, in reverse
 * order in even rounds.  Every run verifies every page; a wrong page is
 * a FAIL line (ok=0), not a number.
 *
 * Arguments (kp.scale=, comma separated; lists colon separated):
 *   dims=vcpus:clones:mem:random rounds=3
 *   vc_mib=64 vc_vcpus=1:2:4:8 vc_chunks=512:2048 vc_zc=1
 *   cl_mib=64 cl_n=1:2:4:8 cl_chunk=512
 *   mem_sizes=64:256:1024:2048 mem_chunk=2048 mem_rounds=3
 *   rnd_mib=64 rnd_chunk=512 rnd_rounds=5
 *   pat_mib=32 pat_chunks=4:64:512:2048 pat_rounds=5 pat_auto512=0
 *   pat_names=seq:rand:seq-sparse:rand-sparse:stride2:stride8:stride64:reverse:hotset
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include "kvmtest.h"
#include "kt_sys.h"
#include "kt_uffd.h"
#include "kt_bench.h"

#define GPA		0x400000ULL	/* 2 MiB aligned, as kt_bench's */
#define ALIGN_2M	(2ULL << 20)
#define MAX_LIST	8
#define MAX_CLONES	8
#define SPARSE		8		/* 1 page in SPARSE */

struct arm {
	const char *id;
	const char *policy;
	int nr;			/* -1: chunk / 4 KiB */
};

static const struct arm arm_none = { "none", "none", 0 };
static const struct arm arm_auto_c = { "auto-C", "auto", -1 };
static const struct arm arm_auto_8 = { "auto-8", "auto", 8 };
static const struct arm arm_adaptive = { "adaptive", "adaptive", 0 };
static const struct arm arm_auto_512 = { "auto-512", "auto", 512 };

/* Options. */
static bool dim_vcpus = true, dim_clones = true, dim_mem = true,
	dim_random = true, dim_patterns = true;
static unsigned int rounds = 3, mem_rounds = 3, rnd_rounds = 5;
static unsigned int vc_mib = 64, cl_mib = 64, rnd_mib = 64;
static unsigned int vc_vcpus[MAX_LIST] = { 1, 2, 4, 8 }, nr_vc_vcpus = 4;
static unsigned int vc_chunks[MAX_LIST] = { 512, 2048 }, nr_vc_chunks = 2;
static unsigned int vc_zc = 1;
static unsigned int cl_n[MAX_LIST] = { 1, 2, 4, 8 }, nr_cl_n = 4;
static unsigned int cl_chunk = 512, mem_chunk = 2048, rnd_chunk = 512;
static unsigned int mem_sizes[MAX_LIST] = { 64, 256, 1024, 2048 },
	nr_mem_sizes = 4;

static unsigned int pat_mib = 32, pat_rounds = 5, pat_auto512;
static unsigned int pat_chunks[MAX_LIST] = { 4, 64, 512, 2048 },
	nr_pat_chunks = 4;

static unsigned int nr_runs, nr_bad;

static uint32_t arm_nr(const struct arm *a, uint64_t chunk)
{
	return a->nr < 0 ? chunk / KT_PAGE_SIZE : (uint32_t)a->nr;
}

static uint32_t arm_gup(const struct arm *a)
{
	return strcmp(a->policy, "none") ? KVM_PREFETCH_GUP_NOFAULT : 0;
}

/* An irqchip VM with @a's policy; a refused policy ends the program. */
static struct kt_vm *vm_new(const struct arm *a, uint64_t chunk)
{
	struct kt_vm *vm = kt_vm_create_mode(KT_GUEST_IRQCHIP);
	int ret = ktsys_set_policy(vm->fd, a->policy, arm_nr(a, chunk),
				   arm_gup(a));

	KT_ASSERT(!ret, "KVM_SET_PREFETCH_POLICY %s nr %u: %s", a->policy,
		  arm_nr(a, chunk), strerror(-ret));
	return vm;
}

/* The vCPU's counters of interest. */
struct ctr {
	uint64_t pf, mapped, windows;
};

static void ctr_add(struct ctr *c, struct kt_vcpu *v)
{
	c->pf += kt_vcpu_stat_get(v, "pf_taken");
	c->mapped += kt_vcpu_stat_get(v, "prefetch_mapped");
	c->windows += kt_vcpu_stat_get(v, "prefetch_windows");
}

static void ctr_sub(struct ctr *a, const struct ctr *b)
{
	a->pf -= b->pf;
	a->mapped -= b->mapped;
	a->windows -= b->windows;
}

/* ---- concurrent passes ---------------------------------------------- */

struct job {
	struct kt_vcpu *vcpu;
	pthread_barrier_t *bar;
	uint32_t start, end;
	uint64_t wall_ns, cpu_ns;
	pthread_t th;
};

static void *job_fn(void *arg)
{
	struct job *j = arg;
	uint64_t t0, c0;

	kt_touch_setup(j->vcpu, j->start, j->end, 0, KT_TOUCH_WRITE);
	pthread_barrier_wait(j->bar);
	t0 = kt_now_ns();
	c0 = kt_thread_ns();
	kt_vcpu_run_done(j->vcpu);
	j->cpu_ns = kt_thread_ns() - c0;
	j->wall_ns = kt_now_ns() - t0;
	return NULL;
}

/* Start all @n jobs at once; the wall time until the last one is done. */
static uint64_t jobs_run(struct job *j, unsigned int n)
{
	pthread_barrier_t bar;
	unsigned int i;
	uint64_t t0;

	pthread_barrier_init(&bar, NULL, n + 1);
	for (i = 0; i < n; i++) {
		j[i].bar = &bar;
		KT_ASSERT(!pthread_create(&j[i].th, NULL, job_fn, &j[i]),
			  "pthread_create");
	}
	pthread_barrier_wait(&bar);
	t0 = kt_now_ns();
	for (i = 0; i < n; i++)
		pthread_join(j[i].th, NULL);
	t0 = kt_now_ns() - t0;
	pthread_barrier_destroy(&bar);
	return t0;
}

/*
 * Pages of @mem (guest address @gpa on) that are wrong: dword 0 must be
 * the page's gpa where @touched says so (all pages if @touched is NULL),
 * else @src's; the rest @src's.
 */
static uint64_t bad_pages(const char *mem, const char *src, uint64_t pages,
			  uint64_t gpa, const uint8_t *touched)
{
	uint64_t i, bad = 0;

	for (i = 0; i < pages; i++) {
		const char *p = mem + i * KT_PAGE_SIZE;
		const char *s = src + i * KT_PAGE_SIZE;
		uint32_t want = !touched || touched[i] ?
			(uint32_t)(gpa + i * KT_PAGE_SIZE) :
			*(const uint32_t *)s;

		if (*(const uint32_t *)p == want &&
		    !memcmp(p + 4, s + 4, KT_PAGE_SIZE - 4))
			continue;
		if (!bad++)
			kt_info("scale: page %llu (gpa 0x%llx) wrong: dword0 0x%x want 0x%x",
				(unsigned long long)i,
				(unsigned long long)(gpa + i * KT_PAGE_SIZE),
				*(const uint32_t *)p, want);
	}
	return bad;
}

static void judge(bool ok, const char *what)
{
	nr_runs++;
	if (!ok) {
		nr_bad++;
		kt_fail("scale: %s", what);
	}
}

/* ---- dimension 1: vCPUs ---------------------------------------------- */

static void run_vcpus(const char *src, unsigned int n, uint64_t chunk,
		      bool zc, const struct arm *a, unsigned int round)
{
	uint64_t size = (uint64_t)vc_mib << 20, part = size / n, bad = 0;
	uint64_t events = 0, filled = 0, dup = 0, errs = 0, wall, cpu = 0;
	struct kt_uffd *u[KTB_MAX_VCPUS];
	struct kt_vcpu *v[KTB_MAX_VCPUS];
	struct job j[KTB_MAX_VCPUS];
	struct ctr c0 = { 0 }, c1 = { 0 };
	char what[200];
	struct kt_vm *vm;
	unsigned int i;
	bool ok = true;

	KT_ASSERT(n <= KTB_MAX_VCPUS && part % chunk == 0,
		  "vcpus %u chunk %llu", n, (unsigned long long)chunk);
	vm = vm_new(a, chunk);
	for (i = 0; i < n; i++) {
		const char *s = src + i * part;

		u[i] = zc ? kt_uffd_create_minor(part, ALIGN_2M, s, chunk) :
			    kt_uffd_create_alloc(part, ALIGN_2M, s, chunk);
		kt_vm_add_slot(vm, 1 + i, GPA + i * part, part, 0,
			       kt_uffd_base(u[i]));
	}
	for (i = 0; i < n; i++) {
		v[i] = kt_vcpu_add(vm, i);
		kt_touch(v[i], GPA, GPA, 0, KT_TOUCH_READ);
		j[i] = (struct job){ .vcpu = v[i],
				     .start = GPA + i * part,
				     .end = GPA + (i + 1) * part };
	}
	for (i = 0; i < n; i++)
		ctr_add(&c0, v[i]);
	wall = jobs_run(j, n);
	for (i = 0; i < n; i++) {
		ctr_add(&c1, v[i]);
		cpu += j[i].cpu_ns;
	}
	ctr_sub(&c1, &c0);
	for (i = 0; i < n; i++) {
		if (!kt_uffd_quiesce(u[i], 10000))
			ok = false;
		events += kt_uffd_events(u[i]);
		filled += kt_uffd_populated(u[i]);
		dup += kt_uffd_eexist(u[i]);
		errs += kt_uffd_errors(u[i]);
		bad += bad_pages(kt_uffd_base(u[i]), src + i * part,
				 part / KT_PAGE_SIZE, GPA + i * part, NULL);
	}
	ok = ok && !bad && !errs && filled == size / chunk;
	snprintf(what, sizeof(what),
		 "vcpus %s n=%u chunk=%lluK %s round %u: %llu bad pages, %llu errors, %llu of %llu chunks",
		 a->id, n, (unsigned long long)chunk >> 10,
		 zc ? "zc" : "copy", round, (unsigned long long)bad,
		 (unsigned long long)errs, (unsigned long long)filled,
		 (unsigned long long)(size / chunk));
	judge(ok, what);
	printf("@@SCALE dim=vcpus arm=%s nr=%u restore=%s chunk=%llu mib=%u vcpus=%u round=%u ms=%.3f vcpu_cpu_ms=%.3f chunks=%llu events=%llu dup=%llu pf=%llu windows=%llu mapped=%llu ok=%d\n",
	       a->id, arm_nr(a, chunk), zc ? "zc" : "copy",
	       (unsigned long long)chunk >> 10, vc_mib, n, round, wall / 1e6,
	       cpu / 1e6, (unsigned long long)(size / chunk),
	       (unsigned long long)events, (unsigned long long)dup,
	       (unsigned long long)c1.pf, (unsigned long long)c1.windows,
	       (unsigned long long)c1.mapped, ok);
	fflush(stdout);
	for (i = 0; i < n; i++)
		kt_vcpu_free(v[i]);
	kt_vm_free(vm);
	for (i = 0; i < n; i++)
		kt_uffd_destroy(u[i]);
}

static void dim_vcpus_run(const char *src)
{
	const struct arm *arms[2] = { &arm_none, &arm_auto_c };
	unsigned int r, ci, ni, z, k;
	uint64_t t0 = kt_now_ns();

	for (r = 1; r <= rounds; r++)
		for (z = 0; z <= (vc_zc ? 1u : 0u); z++)
			for (ci = 0; ci < nr_vc_chunks; ci++)
				for (ni = 0; ni < nr_vc_vcpus; ni++)
					for (k = 0; k < 2; k++)
						run_vcpus(src, vc_vcpus[ni],
							  (uint64_t)vc_chunks[ci] << 10,
							  z, arms[r % 2 ? k : 1 - k], r);
	kt_info("scale: vcpus done in %.0f s", (kt_now_ns() - t0) / 1e9);
}

/* ---- dimension 2: clones of one snapshot --------------------------- */

static void run_clones(const char *src, int memfd, unsigned int n,
		       const struct arm *a, unsigned int round)
{
	uint64_t size = (uint64_t)cl_mib << 20, chunk = (uint64_t)cl_chunk << 10;
	struct kt_vm *vm[MAX_CLONES];
	struct kt_vcpu *v[MAX_CLONES];
	struct kt_uffd *h[MAX_CLONES];
	char *mem[MAX_CLONES];
	struct job j[MAX_CLONES];
	struct ctr c0[MAX_CLONES], c1[MAX_CLONES];
	uint64_t total, bad;
	char what[200];
	unsigned int i;
	bool ok;

	for (i = 0; i < n; i++) {
		vm[i] = vm_new(a, chunk);
		/* MINOR-mode handler of this clone's mapping of the memfd. */
		h[i] = kt_uffd_create_minor_memfd(memfd, size, ALIGN_2M, chunk);
		mem[i] = kt_uffd_base(h[i]);
		kt_vm_add_slot(vm[i], 1, GPA, size, 0, mem[i]);
		v[i] = kt_vcpu_add(vm[i], 0);
		kt_touch(v[i], GPA, GPA, 0, KT_TOUCH_READ);
		j[i] = (struct job){ .vcpu = v[i], .start = GPA,
				     .end = GPA + size };
		memset(&c0[i], 0, sizeof(c0[i]));
		memset(&c1[i], 0, sizeof(c1[i]));
		ctr_add(&c0[i], v[i]);
	}
	total = jobs_run(j, n);
	for (i = 0; i < n; i++) {
		ctr_add(&c1[i], v[i]);
		ctr_sub(&c1[i], &c0[i]);
		/* The vCPUs are done, so no event is in flight. */
		kt_uffd_stop(h[i]);
	}
	for (i = 0; i < n; i++) {
		bad = bad_pages(mem[i], src, size / KT_PAGE_SIZE, GPA, NULL);
		ok = !bad && !kt_uffd_errors(h[i]) &&
		     kt_uffd_populated(h[i]) == size / chunk;
		snprintf(what, sizeof(what),
			 "clones %s n=%u clone %u round %u: %llu bad pages, %llu errors, %llu of %llu chunks",
			 a->id, n, i, round, (unsigned long long)bad,
			 (unsigned long long)kt_uffd_errors(h[i]),
			 (unsigned long long)kt_uffd_populated(h[i]),
			 (unsigned long long)(size / chunk));
		judge(ok, what);
		printf("@@SCALE dim=clones arm=%s nr=%u restore=zc chunk=%u mib=%u clones=%u clone=%u round=%u ms=%.3f total_ms=%.3f vcpu_cpu_ms=%.3f handler_cpu_ms=%.3f chunks=%llu events=%llu dup=%llu pf=%llu windows=%llu mapped=%llu ok=%d\n",
		       a->id, arm_nr(a, chunk), cl_chunk, cl_mib, n, i, round,
		       j[i].wall_ns / 1e6, total / 1e6, j[i].cpu_ns / 1e6,
		       kt_uffd_thread_ns(h[i]) / 1e6,
		       (unsigned long long)(size / chunk),
		       (unsigned long long)kt_uffd_events(h[i]),
		       (unsigned long long)kt_uffd_eexist(h[i]),
		       (unsigned long long)c1[i].pf,
		       (unsigned long long)c1[i].windows,
		       (unsigned long long)c1[i].mapped, ok);
	}
	fflush(stdout);
	for (i = 0; i < n; i++) {
		kt_vcpu_free(v[i]);
		kt_vm_free(vm[i]);
		kt_uffd_destroy(h[i]);
	}
}

static void dim_clones_run(const char *src)
{
	const struct arm *arms[2] = { &arm_none, &arm_auto_c };
	uint64_t size = (uint64_t)cl_mib << 20, t0 = kt_now_ns();
	unsigned int r, ni, k;
	int memfd;

	/* The snapshot: one memfd whose page cache holds it. */
	memfd = kt_uffd_memfd(src, size);

	for (r = 1; r <= rounds; r++)
		for (ni = 0; ni < nr_cl_n; ni++)
			for (k = 0; k < 2; k++)
				run_clones(src, memfd, cl_n[ni],
					   arms[r % 2 ? k : 1 - k], r);
	close(memfd);
	kt_info("scale: clones done in %.0f s", (kt_now_ns() - t0) / 1e9);
}

/* ---- dimension 3: memory size ------------------------------------- */

static void dim_mem_run(const char *src)
{
	const struct arm *arms[2] = { &arm_none, &arm_auto_c };
	uint64_t chunk = (uint64_t)mem_chunk << 10, t0 = kt_now_ns();
	unsigned int r, si, k;

	for (r = 1; r <= mem_rounds; r++)
		for (si = 0; si < nr_mem_sizes; si++)
			for (k = 0; k < 2; k++) {
				const struct arm *a = arms[r % 2 ? k : 1 - k];
				struct ktb_config kc = {
					.policy = a->policy,
					.nr_pages = arm_nr(a, chunk),
					.gup = arm_gup(a),
					.vcpus = 1,
					.pin = true,
					.cpu = 0,
					.mode = KT_GUEST_IRQCHIP,
				};
				struct ktb_result res;
				char what[200];
				int ret;

				ret = ktb_run(src, (uint64_t)mem_sizes[si] << 20,
					      chunk, &kc, &res);
				KT_ASSERT(!ret, "ktb_run %s: %s", a->id,
					  strerror(-ret));
				snprintf(what, sizeof(what),
					 "mem %s %u MiB round %u: %s", a->id,
					 mem_sizes[si], r, res.err);
				judge(res.ok, what);
				printf("@@SCALE dim=mem arm=%s nr=%u restore=copy chunk=%u mib=%u vcpus=1 round=%u ms=%.3f limit_ms=%.3f copy_ms=%.3f chunks=%llu events=%llu dup=%llu pf=%llu windows=%llu mapped=%llu ok=%d\n",
				       a->id, kc.nr_pages, mem_chunk,
				       mem_sizes[si], r, res.ms, res.limit_ms,
				       res.copy_ms,
				       (unsigned long long)res.chunks,
				       (unsigned long long)res.events,
				       (unsigned long long)res.dup,
				       (unsigned long long)res.pf,
				       (unsigned long long)res.windows,
				       (unsigned long long)res.mapped, res.ok);
				fflush(stdout);
			}
	kt_info("scale: mem done in %.0f s", (kt_now_ns() - t0) / 1e9);
}

/* ---- dimension 4: random order, sparse touches -------------------- */

static uint32_t xorshift(uint32_t *x)
{
	*x ^= *x << 13;
	*x ^= *x >> 17;
	*x ^= *x << 5;
	return *x;
}

enum workload { W_RAND, W_RAND_SPARSE, W_SEQ_SPARSE, NR_WORKLOADS };
static const char *const wl_names[] = { "rand", "rand-sparse",
					"seq-sparse" };

static void run_random(const char *src, enum workload w, const struct arm *a,
		       unsigned int round)
{
	uint64_t size = (uint64_t)rnd_mib << 20, chunk = (uint64_t)rnd_chunk << 10;
	uint64_t nchunks = size / chunk, pages = size / KT_PAGE_SIZE, i;
	uint64_t stride = w == W_RAND ? KT_PAGE_SIZE : SPARSE * KT_PAGE_SIZE;
	uint64_t touched_pages = pages / (stride / KT_PAGE_SIZE);
	uint64_t t0, ms_ns, scan_pf = 0, wasted = 0, bad, k;
	uint32_t *order, x = round * 2654435761u | 1, tmp, jx;
	struct ctr c0 = { 0 }, c1 = { 0 };
	cpu_set_t old, one;
	struct kt_vcpu *v;
	struct kt_uffd *u;
	struct kt_vm *vm;
	uint8_t *touched;
	char what[160];
	bool ok;

	order = malloc(nchunks * sizeof(*order));
	touched = calloc(pages, 1);
	KT_ASSERT(order && touched, "malloc");
	for (i = 0; i < nchunks; i++)
		order[i] = i;
	if (w != W_SEQ_SPARSE)
		for (i = nchunks - 1; i > 0; i--) {
			jx = xorshift(&x) % (i + 1);
			tmp = order[i];
			order[i] = order[jx];
			order[jx] = tmp;
		}
	for (i = 0; i < pages; i += stride / KT_PAGE_SIZE)
		touched[i] = 1;

	/* vCPU and handler on CPU 0, as bench.c's single-vCPU runs. */
	KT_ASSERT(!sched_getaffinity(0, sizeof(old), &old), "getaffinity");
	CPU_ZERO(&one);
	CPU_SET(0, &one);
	KT_ASSERT(!sched_setaffinity(0, sizeof(one), &one), "setaffinity");

	vm = vm_new(a, chunk);
	u = kt_uffd_create_alloc(size, ALIGN_2M, src, chunk);
	kt_vm_add_slot(vm, 1, GPA, size, 0, kt_uffd_base(u));
	v = kt_vcpu_add(vm, 0);
	kt_touch(v, GPA, GPA, 0, KT_TOUCH_READ);

	ctr_add(&c0, v);
	t0 = kt_now_ns();
	for (i = 0; i < nchunks; i++) {
		uint32_t g = GPA + order[i] * chunk;

		kt_touch(v, g, g + chunk, stride, KT_TOUCH_WRITE);
	}
	ms_ns = kt_now_ns() - t0;
	ctr_add(&c1, v);
	ctr_sub(&c1, &c0);
	ok = kt_uffd_quiesce(u, 10000);

	/*
	 * Prefetched and never touched: with prefetch off, read every page
	 * the guest did not touch; those that do not fault were mapped.
	 */
	if (stride > KT_PAGE_SIZE) {
		uint64_t pf0;
		int ret = ktsys_set_policy(vm->fd, "none", 0, 0);

		KT_ASSERT(!ret, "set none: %s", strerror(-ret));
		pf0 = kt_vcpu_stat_get(v, "pf_taken");
		for (k = 1; k < stride / KT_PAGE_SIZE; k++)
			kt_touch(v, GPA + k * KT_PAGE_SIZE, GPA + size, stride,
				 KT_TOUCH_READ);
		scan_pf = kt_vcpu_stat_get(v, "pf_taken") - pf0;
		wasted = pages - touched_pages - scan_pf;
	}

	bad = bad_pages(kt_uffd_base(u), src, pages, GPA, touched);
	ok = ok && !bad && !kt_uffd_errors(u) &&
	     kt_uffd_populated(u) == nchunks;
	snprintf(what, sizeof(what),
		 "random %s %s round %u: %llu bad pages, %llu errors, %llu of %llu chunks",
		 wl_names[w], a->id, round, (unsigned long long)bad,
		 (unsigned long long)kt_uffd_errors(u),
		 (unsigned long long)kt_uffd_populated(u),
		 (unsigned long long)nchunks);
	judge(ok, what);
	printf("@@SCALE dim=random workload=%s arm=%s nr=%u restore=copy chunk=%u mib=%u vcpus=1 round=%u ms=%.3f chunks=%llu touched=%llu events=%llu pf=%llu windows=%llu mapped=%llu scan_pf=%llu wasted=%llu ok=%d\n",
	       wl_names[w], a->id, arm_nr(a, chunk), rnd_chunk, rnd_mib, round,
	       ms_ns / 1e6, (unsigned long long)nchunks,
	       (unsigned long long)touched_pages,
	       (unsigned long long)kt_uffd_events(u),
	       (unsigned long long)c1.pf, (unsigned long long)c1.windows,
	       (unsigned long long)c1.mapped, (unsigned long long)scan_pf,
	       (unsigned long long)wasted, ok);
	fflush(stdout);

	kt_vcpu_free(v);
	kt_vm_free(vm);
	kt_uffd_destroy(u);
	KT_ASSERT(!sched_setaffinity(0, sizeof(old), &old), "setaffinity");
	free(order);
	free(touched);
}

static void dim_random_run(const char *src)
{
	const struct arm *arms[4] = { &arm_none, &arm_auto_c, &arm_auto_8,
				      &arm_adaptive };
	uint64_t t0 = kt_now_ns();
	unsigned int r, w, k;

	for (r = 1; r <= rnd_rounds; r++)
		for (w = 0; w < NR_WORKLOADS; w++)
			for (k = 0; k < 4; k++)
				run_random(src, w, arms[r % 2 ? k : 3 - k], r);
	kt_info("scale: random done in %.0f s", (kt_now_ns() - t0) / 1e9);
}

/* ---- dimension 5: access patterns ------------------------------------ */

enum pattern { PT_SEQ, PT_RAND, PT_SEQ_SPARSE, PT_RAND_SPARSE, PT_STRIDE2,
	       PT_STRIDE8, PT_STRIDE64, PT_REVERSE, PT_HOTSET, NR_PATTERNS };
static const char *const pt_names[] = { "seq", "rand", "seq-sparse",
	"rand-sparse", "stride2", "stride8", "stride64", "reverse", "hotset" };
static bool pt_on[NR_PATTERNS] = { true, true, true, true, true, true, true,
				   true, true };
/* Dense patterns touch every page; the others are sparse. */
static const bool pt_dense[NR_PATTERNS] = { [PT_SEQ] = true,
	[PT_RAND] = true, [PT_REVERSE] = true };

#define PT_TABLE_GPA	0x200000ULL	/* below GPA, its own memslot */
#define PT_TABLE_MAX	(GPA - PT_TABLE_GPA)
#define PT_CODE_GPA	0x40ULL		/* after the touch program */
#define PT_HOT_PASSES	3

/*
 * The guest program: esi = table start, edi = table end, ebx = mode (0
 * write the page's address into its dword 0, 1 read it).  The table
 * holds one guest address per entry.
 */
extern const uint8_t pt_code[], pt_code_end[];
asm(".pushsection .rodata\n"
	"pt_code:\n"
	".code32\n"
	"1:\n"
	"	cmp %edi, %esi\n"
	"	jae 4f\n"
	"	mov (%esi), %eax\n"
	"	test %ebx, %ebx\n"
	"	jnz 2f\n"
	"	mov %eax, (%eax)\n"
	"	jmp 3f\n"
	"2:\n"
	"	mov (%eax), %edx\n"
	"3:\n"
	"	add $4, %esi\n"
	"	jmp 1b\n"
	"4:\n"
	"	out %eax, $0x7e\n"		/* KT_DONE_PORT */
	"	jmp 1b\n"
	".code64\n"
	"pt_code_end:\n"
	".popsection\n");

static void shuffle(uint32_t *a, uint64_t n, uint32_t *x)
{
	uint64_t i, j;
	uint32_t t;

	for (i = n - 1; n && i > 0; i--) {
		j = xorshift(x) % (i + 1);
		t = a[i];
		a[i] = a[j];
		a[j] = t;
	}
}

/* Fill @tab with pattern @p's page numbers; return their count. */
static uint64_t pt_build(enum pattern p, uint64_t pages, uint64_t cpages,
			 uint32_t *tab, uint32_t seed)
{
	uint64_t nchunks = pages / cpages, n = 0, i, j, k, step;
	uint32_t *order = malloc(nchunks * sizeof(*order)), *hot, x = seed;

	KT_ASSERT(order, "malloc");
	for (i = 0; i < nchunks; i++)
		order[i] = i;
	switch (p) {
	case PT_RAND:
	case PT_RAND_SPARSE:
		shuffle(order, nchunks, &x);
		step = p == PT_RAND ? 1 : SPARSE;
		for (i = 0; i < nchunks; i++)
			for (j = 0; j < cpages; j++) {
				k = order[i] * cpages + j;
				if (k % step == 0)
					tab[n++] = k;
			}
		break;
	case PT_SEQ:
	case PT_SEQ_SPARSE:
	case PT_STRIDE2:
	case PT_STRIDE8:
	case PT_STRIDE64:
		step = p == PT_SEQ ? 1 : p == PT_STRIDE2 ? 2 :
		       p == PT_STRIDE64 ? 64 : SPARSE;
		for (k = 0; k < pages; k += step)
			tab[n++] = k;
		break;
	case PT_REVERSE:
		for (k = pages; k-- > 0;)
			tab[n++] = k;
		break;
	case PT_HOTSET:
		hot = malloc(pages * sizeof(*hot));
		KT_ASSERT(hot, "malloc");
		for (k = 0; k < pages; k++)
			hot[k] = k;
		shuffle(hot, pages, &x);
		/* The hot set: the first eighth of a random permutation. */
		for (i = 0; i < PT_HOT_PASSES; i++) {
			shuffle(hot, pages / SPARSE, &x);
			for (k = 0; k < pages / SPARSE; k++)
				tab[n++] = hot[k];
		}
		free(hot);
		break;
	default:
		break;
	}
	free(order);
	return n;
}

/* Run the table program over entries [0, n) of the table in @mode. */
static void pt_run(struct kt_vcpu *v, uint64_t n, uint32_t mode)
{
	kt_vcpu_setup_loop(v, PT_CODE_GPA, PT_TABLE_GPA,
			   PT_TABLE_GPA + n * 4, 0, mode, 0);
	kt_vcpu_run_done(v);
}

static void run_pattern(const char *src, enum pattern p, uint64_t chunk,
			const struct arm *a, unsigned int round)
{
	uint64_t size = (uint64_t)pat_mib << 20, pages = size / KT_PAGE_SIZE;
	uint64_t cpages = chunk / KT_PAGE_SIZE, nchunks = pages / cpages;
	uint64_t n, i, t0, ms_ns, scan_pf = 0, wasted = 0, bad = 0;
	struct ktb_result usage;
	uint64_t touched_pages = 0, chunks_touched = 0, cand = 0, pf0;
	uint32_t *tab;
	uint8_t *touched, *ctouched;
	struct ctr c0 = { 0 }, c1 = { 0 };
	cpu_set_t old, one;
	struct kt_vcpu *v;
	struct kt_uffd *u;
	struct kt_vm *vm;
	char what[200];
	const char *mem;
	int ret;
	bool ok;

	KT_ASSERT(cpages && size % chunk == 0 &&
		  (PT_HOT_PASSES + 1) * pages * 4 <= PT_TABLE_MAX,
		  "patterns: %llu MiB at %llu KiB", (unsigned long long)size >> 20,
		  (unsigned long long)chunk >> 10);
	touched = calloc(pages, 1);
	ctouched = calloc(nchunks, 1);
	KT_ASSERT(touched && ctouched, "calloc");

	KT_ASSERT(!sched_getaffinity(0, sizeof(old), &old), "getaffinity");
	CPU_ZERO(&one);
	CPU_SET(0, &one);
	KT_ASSERT(!sched_setaffinity(0, sizeof(one), &one), "setaffinity");

	vm = vm_new(a, chunk);
	memcpy(kt_vm_gpa_to_hva(vm, PT_CODE_GPA), pt_code,
	       pt_code_end - pt_code);
	tab = kt_vm_add_slot(vm, 2, PT_TABLE_GPA, PT_TABLE_MAX, 0, NULL);
	n = pt_build(p, pages, cpages, tab, round * 2654435761u | 1);
	for (i = 0; i < n; i++) {
		if (!touched[tab[i]])
			touched_pages++;
		touched[tab[i]] = 1;
		ctouched[tab[i] / cpages] = 1;
		tab[i] = GPA + (uint64_t)tab[i] * KT_PAGE_SIZE;
	}
	for (i = 0; i < nchunks; i++)
		chunks_touched += ctouched[i];

	u = kt_uffd_create_alloc(size, ALIGN_2M, src, chunk);
	kt_vm_add_slot(vm, 1, GPA, size, 0, kt_uffd_base(u));
	mem = kt_uffd_base(u);
	v = kt_vcpu_add(vm, 0);
	kt_touch(v, GPA, GPA, 0, KT_TOUCH_READ);
	/* The table in, then fresh policy state for the run. */
	kt_touch(v, PT_TABLE_GPA, PT_TABLE_GPA + n * 4, 0, KT_TOUCH_READ);
	ret = ktsys_set_policy(vm->fd, "none", 0, 0);
	KT_ASSERT(!ret, "set none: %s", strerror(-ret));
	ret = ktsys_set_policy(vm->fd, a->policy, arm_nr(a, chunk), arm_gup(a));
	KT_ASSERT(!ret, "set %s: %s", a->policy, strerror(-ret));

	ctr_add(&c0, v);
	t0 = kt_now_ns();
	pt_run(v, n, KT_TOUCH_WRITE);
	ms_ns = kt_now_ns() - t0;
	ctr_add(&c1, v);
	ctr_sub(&c1, &c0);
	ok = kt_uffd_quiesce(u, 10000);
	/* KVM's own account, before the scan below touches anything. */
	ktb_usage_read(vm, &usage);

	/*
	 * Prefetched and never touched: with prefetch off, read every page
	 * the guest did not touch in a chunk it touched (the host has no
	 * other); those that do not fault were mapped.
	 */
	for (i = 0; i < pages; i++)
		if (!touched[i] && ctouched[i / cpages])
			tab[cand++] = GPA + i * KT_PAGE_SIZE;
	if (cand) {
		ret = ktsys_set_policy(vm->fd, "none", 0, 0);
		KT_ASSERT(!ret, "set none: %s", strerror(-ret));
		/* The scan's own table pages must not count. */
		kt_touch(v, PT_TABLE_GPA, PT_TABLE_GPA + cand * 4, 0,
			 KT_TOUCH_READ);
		pf0 = kt_vcpu_stat_get(v, "pf_taken");
		pt_run(v, cand, KT_TOUCH_READ);
		scan_pf = kt_vcpu_stat_get(v, "pf_taken") - pf0;
		wasted = cand - scan_pf;
	}

	/* Every page of every touched chunk (the others are not there). */
	for (i = 0; i < nchunks; i++)
		if (ctouched[i])
			bad += bad_pages(mem + i * chunk, src + i * chunk, cpages,
					 GPA + i * chunk, touched + i * cpages);
	ok = ok && !bad && !kt_uffd_errors(u) &&
	     kt_uffd_populated(u) == chunks_touched;
	snprintf(what, sizeof(what),
		 "patterns %s %lluK %s round %u: %llu bad pages, %llu errors, %llu of %llu chunks",
		 pt_names[p], (unsigned long long)chunk >> 10, a->id, round,
		 (unsigned long long)bad,
		 (unsigned long long)kt_uffd_errors(u),
		 (unsigned long long)kt_uffd_populated(u),
		 (unsigned long long)chunks_touched);
	judge(ok, what);
	printf("@@SCALE dim=patterns workload=%s dense=%d arm=%s nr=%u restore=copy chunk=%llu mib=%u vcpus=1 round=%u ms=%.3f chunks=%llu touched_chunks=%llu accesses=%llu touched=%llu events=%llu pf=%llu windows=%llu mapped=%llu scan=%llu scan_pf=%llu wasted=%llu ok=%d\n",
	       pt_names[p], pt_dense[p], a->id, arm_nr(a, chunk),
	       (unsigned long long)chunk >> 10, pat_mib, round, ms_ns / 1e6,
	       (unsigned long long)nchunks, (unsigned long long)chunks_touched,
	       (unsigned long long)n, (unsigned long long)touched_pages,
	       (unsigned long long)kt_uffd_events(u),
	       (unsigned long long)c1.pf, (unsigned long long)c1.windows,
	       (unsigned long long)c1.mapped, (unsigned long long)cand,
	       (unsigned long long)scan_pf, (unsigned long long)wasted, ok);
	if (usage.have_usage)
		printf("@@SCALE dim=usage workload=%s arm=%s chunk=%llu round=%u used=%llu unused=%llu untouched=%llu avoided=%llu pf=%llu\n",
		       pt_names[p], a->id, (unsigned long long)chunk >> 10,
		       round, (unsigned long long)usage.used,
		       (unsigned long long)usage.unused,
		       (unsigned long long)usage.untouched,
		       (unsigned long long)usage.avoided,
		       (unsigned long long)c1.pf);
	fflush(stdout);

	kt_vcpu_free(v);
	kt_vm_free(vm);
	kt_uffd_destroy(u);
	KT_ASSERT(!sched_setaffinity(0, sizeof(old), &old), "setaffinity");
	free(touched);
	free(ctouched);
}

static void dim_patterns_run(const char *src)
{
	const struct arm *arms[4] = { &arm_none, &arm_auto_c, &arm_adaptive,
				      &arm_auto_512 };
	unsigned int r, p, ci, k, n = pat_auto512 ? 4 : 3;
	uint64_t t0 = kt_now_ns();

	for (r = 1; r <= pat_rounds; r++) {
		for (ci = 0; ci < nr_pat_chunks; ci++)
			for (p = 0; p < NR_PATTERNS; p++)
				for (k = 0; pt_on[p] && k < n; k++)
					run_pattern(src, p,
						    (uint64_t)pat_chunks[ci] << 10,
						    arms[r % 2 ? k : n - 1 - k], r);
		kt_info("scale: patterns round %u done at %.0f s", r,
			(kt_now_ns() - t0) / 1e9);
	}
	kt_info("scale: patterns done in %.0f s", (kt_now_ns() - t0) / 1e9);
}

/* ---- arguments --------------------------------------------------------- */

static unsigned int parse_list(char *v, unsigned int *out)
{
	unsigned int n = 0;
	char *tok, *save;

	for (tok = strtok_r(v, ":", &save); tok; tok = strtok_r(NULL, ":", &save)) {
		KT_ASSERT(n < MAX_LIST, "list too long");
		out[n++] = strtoul(tok, NULL, 0);
	}
	return n;
}

/*
 * The kp.scale= keys but dims: a number into *@val, or (with @list) a
 * list "a:b:c" into @list and its length into *@val.
 */
static const struct scale_key {
	const char *key;
	unsigned int *val, *list;
} scale_keys[] = {
	{ "rounds", &rounds, NULL },
	{ "vc_mib", &vc_mib, NULL },
	{ "vc_vcpus", &nr_vc_vcpus, vc_vcpus },
	{ "vc_chunks", &nr_vc_chunks, vc_chunks },
	{ "vc_zc", &vc_zc, NULL },
	{ "cl_mib", &cl_mib, NULL },
	{ "cl_n", &nr_cl_n, cl_n },
	{ "cl_chunk", &cl_chunk, NULL },
	{ "mem_sizes", &nr_mem_sizes, mem_sizes },
	{ "mem_chunk", &mem_chunk, NULL },
	{ "mem_rounds", &mem_rounds, NULL },
	{ "rnd_mib", &rnd_mib, NULL },
	{ "rnd_rounds", &rnd_rounds, NULL },
	{ "rnd_chunk", &rnd_chunk, NULL },
	{ "pat_mib", &pat_mib, NULL },
	{ "pat_rounds", &pat_rounds, NULL },
	{ "pat_chunks", &nr_pat_chunks, pat_chunks },
	{ "pat_auto512", &pat_auto512, NULL },
};

/* pat_names=a:b:c: run only these patterns. */
static void parse_patterns(char *v)
{
	char *tok, *save;
	unsigned int p;

	for (p = 0; p < NR_PATTERNS; p++)
		pt_on[p] = false;
	for (tok = strtok_r(v, ":", &save); tok; tok = strtok_r(NULL, ":", &save)) {
		for (p = 0; p < NR_PATTERNS; p++)
			if (!strcmp(tok, pt_names[p]))
				break;
		KT_ASSERT(p < NR_PATTERNS, "kp.scale: unknown pattern '%s'", tok);
		pt_on[p] = true;
	}
}

/* kp.scale=k=v,k=v from /proc/cmdline; false if there is none. */
static bool parse_cmdline(void)
{
	static char line[4096];
	const struct scale_key *k;
	char *arg, *end, *tok, *save, *v;

	if (ktsys_read("/proc/cmdline", line, sizeof(line)) <= 0)
		return false;
	arg = strstr(line, "kp.scale=");
	if (!arg)
		return false;
	arg += strlen("kp.scale=");
	end = strpbrk(arg, " \n");
	if (end)
		*end = 0;
	printf("@@SCALECFG %s\n", arg);
	for (tok = strtok_r(arg, ",", &save); tok;
	     tok = strtok_r(NULL, ",", &save)) {
		v = strchr(tok, '=');
		KT_ASSERT(v, "kp.scale: '%s' is not key=value", tok);
		*v++ = 0;
		if (!strcmp(tok, "dims")) {
			dim_vcpus = strstr(v, "vcpus");
			dim_clones = strstr(v, "clones");
			dim_mem = strstr(v, "mem");
			dim_random = strstr(v, "random");
			dim_patterns = strstr(v, "patterns");
			continue;
		}
		if (!strcmp(tok, "pat_names")) {
			parse_patterns(v);
			continue;
		}
		for (k = scale_keys; k < scale_keys + ARRAY_SIZE(scale_keys); k++)
			if (!strcmp(tok, k->key))
				break;
		KT_ASSERT(k < scale_keys + ARRAY_SIZE(scale_keys),
			  "kp.scale: unknown key '%s'", tok);
		if (k->list)
			*k->val = parse_list(v, k->list);
		else
			*k->val = atoi(v);
	}
	return true;
}

int main(int argc, char **argv)
{
	uint64_t big = 0, t0;
	unsigned int i;
	char *src;

	if (!parse_cmdline()) {
		kt_skip("bench_scale: no kp.scale= on the command line (make bench-scale)");
		return kt_exit();
	}
	kt_require_kvm();
	ktsys_require_prefetch();
	for (i = 0; i < nr_vc_vcpus; i++)
		KT_ASSERT(vc_vcpus[i] >= 1 && vc_vcpus[i] <= KTB_MAX_VCPUS,
			  "vc_vcpus");
	for (i = 0; i < nr_cl_n; i++)
		KT_ASSERT(cl_n[i] >= 1 && cl_n[i] <= MAX_CLONES, "cl_n");

	if (dim_vcpus && (uint64_t)vc_mib << 20 > big)
		big = (uint64_t)vc_mib << 20;
	if (dim_clones && (uint64_t)cl_mib << 20 > big)
		big = (uint64_t)cl_mib << 20;
	if (dim_random && (uint64_t)rnd_mib << 20 > big)
		big = (uint64_t)rnd_mib << 20;
	if (dim_patterns && (uint64_t)pat_mib << 20 > big)
		big = (uint64_t)pat_mib << 20;
	for (i = 0; dim_mem && i < nr_mem_sizes; i++)
		if ((uint64_t)mem_sizes[i] << 20 > big)
			big = (uint64_t)mem_sizes[i] << 20;
	t0 = kt_now_ns();
	src = ktb_src_alloc(big);
	kt_info("scale: %llu MiB source in %.1f s; guest CPUs %ld",
		(unsigned long long)big >> 20, (kt_now_ns() - t0) / 1e9,
		sysconf(_SC_NPROCESSORS_ONLN));
	printf("@@SCALEENV guest_cpus=%ld\n", sysconf(_SC_NPROCESSORS_ONLN));

	t0 = kt_now_ns();
	if (dim_vcpus)
		dim_vcpus_run(src);
	if (dim_clones)
		dim_clones_run(src);
	if (dim_mem)
		dim_mem_run(src);
	if (dim_random)
		dim_random_run(src);
	if (dim_patterns)
		dim_patterns_run(src);
	ktb_src_free(src, big);
	if (nr_runs && !nr_bad)
		kt_pass("bench_scale: %u runs, every page of every run verified",
			nr_runs);
	kt_info("scale: %.0f s in the guest", (kt_now_ns() - t0) / 1e9);
	return kt_exit();
}
