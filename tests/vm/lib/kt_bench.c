// SPDX-License-Identifier: GPL-2.0
/*
 * kt_bench - core of the restore benchmark; see kt_bench.h.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "kvmtest.h"
#include "kt_sys.h"
#include "kt_uffd.h"
#include "kt_guest.h"
#include "kt_bench.h"

#define KTB_HOST_ALIGN	(2ULL << 20)	/* hva aligned like the gpa */

/* Dword 0 of source page @i before the guest overwrites it. */
static uint32_t ktb_tag(uint64_t i)
{
	return 0x9e3779b9u * (uint32_t)(i + 1) | 1;
}

char *ktb_src_alloc(uint64_t size)
{
	uint64_t i, j, pages = size / KT_PAGE_SIZE;
	char *src;

	src = mmap(NULL, size, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	KT_ASSERT(src != MAP_FAILED, "mmap %llu bytes: %s",
		  (unsigned long long)size, strerror(errno));
	for (i = 0; i < pages; i++) {
		uint64_t *p = (uint64_t *)(src + i * KT_PAGE_SIZE);

		for (j = 0; j < KT_PAGE_SIZE / 8; j++)
			p[j] = (i << 32) ^ (j * 0x9e3779b97f4a7c15ULL) ^ 0x5a5a;
		*(uint32_t *)p = ktb_tag(i);
	}
	return src;
}

void ktb_src_free(char *src, uint64_t size)
{
	munmap(src, size);
}

int ktb_swap_modules(const char *which)
{
	char line[256], name[64], cmd[128];
	FILE *f = fopen("/proc/modules", "r");

	while (f && fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%63s", name) != 1 ||
		    strncmp(name, "kvm_prefetch_", 13))
			continue;
		snprintf(cmd, sizeof(cmd), "rmmod %s 2>/dev/null", name);
		fflush(stdout);
		if (system(cmd))
			kt_info("ktb: rmmod %s failed", name);
	}
	if (f)
		fclose(f);
	return ktsys_reload(which);
}

double ktb_median(double *v, unsigned int n)
{
	unsigned int i, j;
	double t;

	if (!n)
		return 0;
	for (i = 1; i < n; i++)
		for (j = i; j > 0 && v[j - 1] > v[j]; j--) {
			t = v[j];
			v[j] = v[j - 1];
			v[j - 1] = t;
		}
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

struct ktb_worker {
	struct kt_vcpu *vcpu;
	pthread_barrier_t *start;
	uint32_t begin, end;
	pthread_t thread;
};

static void *ktb_worker_fn(void *arg)
{
	struct ktb_worker *w = arg;

	kt_touch_setup(w->vcpu, w->begin, w->end, 0, KT_TOUCH_WRITE);
	pthread_barrier_wait(w->start);
	kt_vcpu_run_done(w->vcpu);
	return NULL;
}

/* One pass of all vCPUs over their parts; returns the wall time in ns. */
static uint64_t ktb_pass(struct ktb_worker *w, unsigned int n)
{
	pthread_barrier_t start;
	uint64_t t0, t1;
	unsigned int i;

	if (n == 1) {
		kt_touch_setup(w[0].vcpu, w[0].begin, w[0].end, 0,
			       KT_TOUCH_WRITE);
		t0 = kt_now_ns();
		kt_vcpu_run_done(w[0].vcpu);
		return kt_now_ns() - t0;
	}
	pthread_barrier_init(&start, NULL, n + 1);
	for (i = 0; i < n; i++) {
		w[i].start = &start;
		KT_ASSERT(!pthread_create(&w[i].thread, NULL, ktb_worker_fn,
					  &w[i]), "pthread_create");
	}
	pthread_barrier_wait(&start);
	t0 = kt_now_ns();
	for (i = 0; i < n; i++)
		pthread_join(w[i].thread, NULL);
	t1 = kt_now_ns();
	pthread_barrier_destroy(&start);
	return t1 - t0;
}

static uint64_t ktb_sum_stat(struct ktb_worker *w, unsigned int n,
			     const char *name)
{
	uint64_t sum = 0, v;
	unsigned int i;

	for (i = 0; i < n; i++)
		if (!kt_vcpu_stat(w[i].vcpu, name, &v))
			sum += v;
	return sum;
}

/* The guest's pv-apf counters summed over all vCPUs. */
static void ktb_apf_counts(struct ktb_worker *w, unsigned int n,
			   uint64_t *not_present, uint64_t *ready,
			   uint64_t *early, uint64_t *spurious)
{
	struct kt_apf_counts c;
	unsigned int i;

	*not_present = *ready = *early = *spurious = 0;
	for (i = 0; i < n; i++) {
		kt_guest_apf_counts(w[i].vcpu, &c);
		*not_present += c.not_present;
		*ready += c.ready;
		*early += c.early;
		*spurious += c.spurious;
	}
}

/* A VM with @cfg's policy (if any); -errno if the policy was refused. */
static int ktb_vm_create(const struct ktb_config *cfg, struct kt_vm **vmp)
{
	struct kt_vm *vm = kt_vm_create_mode(cfg->mode);
	int ret;

	if (cfg->policy) {
		ret = ktsys_set_policy(vm->fd, cfg->policy, cfg->nr_pages,
				       cfg->gup);
		if (ret) {
			kt_vm_free(vm);
			return ret;
		}
	}
	*vmp = vm;
	return 0;
}

/*
 * With cfg->pin, move the calling thread to cfg->cpu (threads created
 * afterwards, the handler's too, inherit the mask); the old mask goes to
 * @old.  Returns true if it pinned.
 */
static bool ktb_pin(const struct ktb_config *cfg, cpu_set_t *old)
{
	cpu_set_t set;

	if (!cfg->pin)
		return false;
	KT_ASSERT(!sched_getaffinity(0, sizeof(*old), old),
		  "sched_getaffinity: %s", strerror(errno));
	CPU_ZERO(&set);
	CPU_SET(cfg->cpu, &set);
	KT_ASSERT(!sched_setaffinity(0, sizeof(set), &set),
		  "sched_setaffinity cpu %d: %s", cfg->cpu, strerror(errno));
	return true;
}

/*
 * The data slot of @size bytes: filled from @src up front with
 * cfg->populated, else armed with a handler of @chunk bytes (in *@u).
 * Returns its host memory.
 */
static char *ktb_add_data_slot(struct kt_vm *vm, const char *src,
			       uint64_t size, uint64_t chunk,
			       const struct ktb_config *cfg,
			       struct kt_uffd **u)
{
	char *mem;

	*u = NULL;
	if (cfg->populated) {
		mem = kt_vm_add_slot(vm, KTB_DATA_SLOT, KTB_DATA_GPA, size, 0,
				     NULL);
		memcpy(mem, src, size);
		return mem;
	}
	if (cfg->minor)
		*u = kt_uffd_create_minor(size, KTB_HOST_ALIGN, src, chunk);
	else
		*u = kt_uffd_create_alloc(size, KTB_HOST_ALIGN, src, chunk);
	mem = kt_uffd_base(*u);
	kt_vm_add_slot(vm, KTB_DATA_SLOT, KTB_DATA_GPA, size, 0, mem);
	return mem;
}

/* The vCPUs' counters, summed; mapped and windows only if @prefetch. */
struct ktb_stats {
	uint64_t pf, mapped, windows, halt_wakeup;
	uint64_t apf_not_present, apf_ready, apf_early, apf_spurious;
};

static void ktb_stats_read(struct ktb_worker *w, unsigned int n,
			   bool prefetch, struct ktb_stats *s)
{
	s->pf = ktb_sum_stat(w, n, "pf_taken");
	s->mapped = prefetch ? ktb_sum_stat(w, n, "prefetch_mapped") : 0;
	s->windows = prefetch ? ktb_sum_stat(w, n, "prefetch_windows") : 0;
	s->halt_wakeup = ktb_sum_stat(w, n, "halt_wakeup");
	ktb_apf_counts(w, n, &s->apf_not_present, &s->apf_ready,
		       &s->apf_early, &s->apf_spurious);
}

/* Pages whose dword 0 is not their gpa or whose rest is not @src's. */
static uint64_t ktb_bad_pages(const char *mem, const char *src,
			      uint64_t pages)
{
	uint64_t i, bad = 0;

	for (i = 0; i < pages; i++) {
		const char *p = mem + i * KT_PAGE_SIZE;
		const char *s = src + i * KT_PAGE_SIZE;

		if (*(const uint32_t *)p ==
		    (uint32_t)(KTB_DATA_GPA + i * KT_PAGE_SIZE) &&
		    !memcmp(p + 4, s + 4, KT_PAGE_SIZE - 4))
			continue;
		if (!bad++)
			kt_info("ktb: page %llu (gpa 0x%llx) wrong: dword0 0x%x",
				(unsigned long long)i,
				(unsigned long long)(KTB_DATA_GPA +
						     i * KT_PAGE_SIZE),
				*(const uint32_t *)p);
	}
	return bad;
}

/* The first of the run's errors into r->err (empty if none), and r->ok. */
static void ktb_judge(struct ktb_result *r, struct kt_uffd *u)
{
	if (r->bad_pages && !r->err[0])
		snprintf(r->err, sizeof(r->err), "%llu of %llu pages wrong",
			 (unsigned long long)r->bad_pages,
			 (unsigned long long)r->pages);
	if (u && !r->err[0] && kt_uffd_errors(u))
		snprintf(r->err, sizeof(r->err), "handler errors: %llu",
			 (unsigned long long)kt_uffd_errors(u));
	if (u && !r->err[0] && r->filled != r->chunks)
		snprintf(r->err, sizeof(r->err),
			 "%llu chunks populated by the handler, want %llu",
			 (unsigned long long)r->filled,
			 (unsigned long long)r->chunks);
	r->ok = !r->err[0];
}

void ktb_usage_read(struct kt_vm *vm, struct ktb_result *r)
{
	r->have_usage = !kt_vm_stat(vm, "prefetch_used", &r->used) &&
			!kt_vm_stat(vm, "prefetch_unused", &r->unused) &&
			!kt_vm_stat(vm, "prefetch_untouched", &r->untouched) &&
			!kt_vm_stat(vm, "prefetch_avoided", &r->avoided);
	if (!r->have_usage)
		r->used = r->unused = r->untouched = r->avoided = 0;
}

int ktb_run(const char *src, uint64_t size, uint64_t chunk,
	    const struct ktb_config *cfg, struct ktb_result *r)
{
	unsigned int i, n = cfg->vcpus ? cfg->vcpus : 1;
	struct ktb_worker w[KTB_MAX_VCPUS];
	struct ktb_stats s0, s1;
	struct kt_uffd *u;
	cpu_set_t old_set;
	struct kt_vm *vm;
	bool pinned;
	uint64_t v;
	char *mem;
	int ret;

	memset(r, 0, sizeof(*r));
	KT_ASSERT(n <= KTB_MAX_VCPUS && size % (n * KT_PAGE_SIZE) == 0 &&
		  (cfg->populated || (chunk && size % chunk == 0)),
		  "size %llu chunk %llu vcpus %u", (unsigned long long)size,
		  (unsigned long long)chunk, n);
	r->pages = size / KT_PAGE_SIZE;
	r->chunks = cfg->populated ? 0 : size / chunk;

	ret = ktb_vm_create(cfg, &vm);
	if (ret)
		return ret;
	pinned = ktb_pin(cfg, &old_set);
	mem = ktb_add_data_slot(vm, src, size, chunk, cfg, &u);
	for (i = 0; i < n; i++) {
		w[i].vcpu = kt_vcpu_add(vm, i);
		w[i].begin = KTB_DATA_GPA + i * (size / n);
		w[i].end = w[i].begin + size / n;
		/* Fault the code page in: an empty pass. */
		kt_touch(w[i].vcpu, KTB_DATA_GPA, KTB_DATA_GPA, 0,
			 KT_TOUCH_READ);
	}
	KT_ASSERT(!u || kt_uffd_events(u) == 0, "events before the pass");

	r->have_prefetch = !kt_vcpu_stat(w[0].vcpu, "prefetch_mapped", &v);
	ktb_stats_read(w, n, r->have_prefetch, &s0);
	r->ms = ktb_pass(w, n) / 1e6;
	ktb_stats_read(w, n, r->have_prefetch, &s1);
	r->pf = s1.pf - s0.pf;
	r->mapped = s1.mapped - s0.mapped;
	r->windows = s1.windows - s0.windows;
	ktb_usage_read(vm, r);
	r->halt_wakeup = s1.halt_wakeup - s0.halt_wakeup;
	r->apf_not_present = s1.apf_not_present - s0.apf_not_present;
	r->apf_ready = s1.apf_ready - s0.apf_ready;
	r->apf_early = s1.apf_early - s0.apf_early;
	r->apf_spurious = s1.apf_spurious - s0.apf_spurious;
	if (u) {
		if (!kt_uffd_quiesce(u, 10000))
			snprintf(r->err, sizeof(r->err),
				 "handler not idle after the pass");
		r->events = kt_uffd_events(u);
		r->dup = kt_uffd_eexist(u);
		r->filled = kt_uffd_populated(u);
		r->copy_ms = kt_uffd_populate_ns(u) / 1e6;
	}

	/* The limit: the same pass over populated, mapped memory. */
	r->limit_ms = ktb_pass(w, n) / 1e6;
	r->pf2 = ktb_sum_stat(w, n, "pf_taken") - s1.pf;

	/* Host view: dword 0 is what the guest wrote, the rest the source. */
	r->bad_pages = ktb_bad_pages(mem, src, r->pages);
	ktb_judge(r, u);

	for (i = 0; i < n; i++)
		kt_vcpu_free(w[i].vcpu);
	kt_vm_free(vm);
	kt_uffd_destroy(u);
	if (pinned)
		KT_ASSERT(!sched_setaffinity(0, sizeof(old_set), &old_set),
			  "sched_setaffinity: %s", strerror(errno));
	return 0;
}

/* xorshift32: a fixed, portable sequence for a given nonzero seed. */
static uint32_t ktb_rand(uint32_t *x)
{
	*x ^= *x << 13;
	*x ^= *x >> 17;
	*x ^= *x << 5;
	return *x;
}

int ktb_run_random(const char *src, uint64_t size, uint64_t touches,
		   uint32_t seed, const struct ktb_config *cfg,
		   struct ktb_result *r)
{
	uint64_t i, pages = size / KT_PAGE_SIZE, pf0, m0 = 0, w0 = 0, v, t0;
	uint32_t *order, x = seed ? seed : 1, j, tmp;
	struct kt_vcpu *vcpu;
	uint8_t *touched;
	struct kt_vm *vm;
	char *mem;
	int ret;

	memset(r, 0, sizeof(*r));
	KT_ASSERT(size % KT_PAGE_SIZE == 0 && touches && touches <= pages,
		  "size %llu touches %llu", (unsigned long long)size,
		  (unsigned long long)touches);
	order = malloc(pages * sizeof(*order));
	KT_ASSERT(order, "malloc");
	for (i = 0; i < pages; i++)
		order[i] = i;
	for (i = pages - 1; i > 0; i--) {
		j = ktb_rand(&x) % (i + 1);
		tmp = order[i];
		order[i] = order[j];
		order[j] = tmp;
	}

	ret = ktb_vm_create(cfg, &vm);
	if (ret) {
		free(order);
		return ret;
	}
	mem = kt_vm_add_slot(vm, KTB_DATA_SLOT, KTB_DATA_GPA, size, 0, NULL);
	memcpy(mem, src, size);
	vcpu = kt_vcpu_add(vm, 0);
	kt_touch(vcpu, KTB_DATA_GPA, KTB_DATA_GPA, 0, KT_TOUCH_READ);

	r->pages = touches;
	r->have_prefetch = !kt_vcpu_stat(vcpu, "prefetch_mapped", &v);
	pf0 = kt_vcpu_stat_get(vcpu, "pf_taken");
	if (r->have_prefetch) {
		m0 = kt_vcpu_stat_get(vcpu, "prefetch_mapped");
		w0 = kt_vcpu_stat_get(vcpu, "prefetch_windows");
	}
	t0 = kt_now_ns();
	for (i = 0; i < touches; i++) {
		uint32_t gpa = KTB_DATA_GPA + order[i] * KT_PAGE_SIZE;

		kt_touch(vcpu, gpa, gpa + KT_PAGE_SIZE, 0, KT_TOUCH_WRITE);
	}
	r->ms = (kt_now_ns() - t0) / 1e6;
	r->pf = kt_vcpu_stat_get(vcpu, "pf_taken") - pf0;
	if (r->have_prefetch) {
		r->mapped = kt_vcpu_stat_get(vcpu, "prefetch_mapped") - m0;
		r->windows = kt_vcpu_stat_get(vcpu, "prefetch_windows") - w0;
	}
	ktb_usage_read(vm, r);

	/* Touched pages hold their gpa in dword 0, the others the source. */
	touched = calloc(pages, 1);
	KT_ASSERT(touched, "calloc");
	for (i = 0; i < touches; i++)
		touched[order[i]] = 1;
	for (i = 0; i < pages; i++) {
		const char *p = mem + i * KT_PAGE_SIZE;
		const char *s = src + i * KT_PAGE_SIZE;
		uint32_t want = touched[i] ?
			(uint32_t)(KTB_DATA_GPA + i * KT_PAGE_SIZE) :
			*(const uint32_t *)s;

		if (*(const uint32_t *)p != want ||
		    memcmp(p + 4, s + 4, KT_PAGE_SIZE - 4))
			r->bad_pages++;
	}
	free(touched);
	if (r->bad_pages)
		snprintf(r->err, sizeof(r->err), "%llu of %llu pages wrong",
			 (unsigned long long)r->bad_pages,
			 (unsigned long long)pages);
	r->ok = !r->err[0];
	kt_vcpu_free(vcpu);
	kt_vm_free(vm);
	free(order);
	return 0;
}
