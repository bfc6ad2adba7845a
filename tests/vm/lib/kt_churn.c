// SPDX-License-Identifier: GPL-2.0
/*
 * kt_churn - what the x86 and arm64 churn tests share (kt_churn.h).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>

#include "kt_core.h"
#include "kt_churn.h"

uint32_t kc_rnd(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return (uint32_t)(*s >> 11);
}

static uint64_t kc_load(const uint64_t *p)
{
	return __atomic_load_n(p, __ATOMIC_SEQ_CST);
}

static void kc_store(uint64_t *p, uint64_t v)
{
	__atomic_store_n(p, v, __ATOMIC_SEQ_CST);
}

/* Host memory for slot 2 holding generation @gen's tag in every page. */
static char *kc_gen_mem(const struct kc_churn *c, uint64_t gen)
{
	char *p = mmap(NULL, c->gen_size, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	uint64_t i;

	KT_ASSERT(p != MAP_FAILED, "mmap: %s", strerror(errno));
	/* Page by page: a kernel without THP refuses this, harmlessly. */
	madvise(p, c->gen_size, MADV_NOHUGEPAGE);
	for (i = 0; i < c->gen_size / c->page_size; i++)
		*(uint32_t *)(p + i * c->page_size) = KC_GEN_TAG(gen);
	return p;
}

void kc_init(struct kc_churn *c, char *mem, uint64_t gpa, void **vcpus,
	     const int *ids)
{
	int i;

	KT_ASSERT(c->nr_workers > 0 && c->nr_workers <= KC_MAX_WORKERS,
		  "%d churn workers", c->nr_workers);
	c->mem = mem;
	c->gpa = gpa;
	c->pages = c->nr_workers * c->range_pages;
	c->started = calloc(c->pages, sizeof(*c->started));
	c->done = calloc(c->pages, sizeof(*c->done));
	KT_ASSERT(c->started && c->done, "calloc");
	for (i = 0; i < c->nr_workers; i++) {
		struct kc_worker *w = &c->w[i];

		w->c = c;
		w->vcpu = vcpus[i];
		w->vcpu_id = ids[i];
		w->idx = i;
		w->snap = calloc(c->range_pages, sizeof(*w->snap));
		KT_ASSERT(w->snap, "calloc");
	}
	c->rd.c = c;
	c->rd.vcpu = vcpus[c->nr_workers];
	c->rd.min_gen = ~0ULL;

	c->gen_mem = kc_gen_mem(c, 1);
	kc_store(&c->add_started, 1);
	c->add(c->gen_mem);
	kc_store(&c->add_done, 1);
}

void kc_free(struct kc_churn *c)
{
	munmap(c->gen_mem, c->gen_size);
}

/* ---- the threads ---------------------------------------------------- */

bool kc_stopping(struct kc_churn *c)
{
	return __atomic_load_n(&c->stop, __ATOMIC_SEQ_CST);
}

static void *kc_stopped(struct kc_churn *c)
{
	__atomic_add_fetch(&c->stopped, 1, __ATOMIC_SEQ_CST);
	return NULL;
}

static void *kc_worker_fn(void *arg)
{
	struct kc_worker *w = arg;

	while (!kc_stopping(w->c))
		w->c->round(w);
	return kc_stopped(w->c);
}

static void *kc_reader_fn(void *arg)
{
	struct kc_reader *rd = arg;

	while (!kc_stopping(rd->c)) {
		rd->c->pass(rd);
		rd->passes++;
	}
	return kc_stopped(rd->c);
}

static void *kc_zapper_fn(void *arg)
{
	struct kc_churn *c = arg;

	c->zapper(c);
	return kc_stopped(c);
}

/* Delete slot 2 and add it back on the next generation, until stopped. */
static void *kc_mover_fn(void *arg)
{
	uint64_t seed = 0xfeedfacecafebeefULL, n;
	struct kc_churn *c = arg;

	for (n = 1; !kc_stopping(c); n++) {
		char *next = kc_gen_mem(c, n + 1);

		kc_store(&c->del_started, n);
		c->del();
		kc_store(&c->del_done, n);
		usleep(kc_rnd(&seed) % 3000);
		kc_store(&c->add_started, n + 1);
		c->add(next);
		kc_store(&c->add_done, n + 1);
		munmap(c->gen_mem, c->gen_size);
		c->gen_mem = next;
		c->nr_gens++;
		usleep(2000 + kc_rnd(&seed) % 20000);
	}
	return kc_stopped(c);
}

static void kc_spawn(struct kc_churn *c, void *(*fn)(void *), void *arg)
{
	KT_ASSERT(!pthread_create(&c->t[c->nr_threads], NULL, fn, arg),
		  "pthread_create");
	c->nr_threads++;
}

/* Where the threads were when they did not stop. */
static void kc_dump(const struct kc_churn *c)
{
	int i;

	for (i = 0; i < c->nr_workers; i++)
		kt_info("vcpu %d: %llu iterations, in phase %d", c->w[i].vcpu_id,
			(unsigned long long)c->w[i].iterations, c->w[i].phase);
	kt_info("slot 2: %llu passes, %llu reads, %llu MMIO exits; %llu zaps, %llu generations",
		(unsigned long long)c->rd.passes,
		(unsigned long long)c->rd.reads,
		(unsigned long long)c->rd.mmio,
		(unsigned long long)c->nr_zaps,
		(unsigned long long)c->nr_gens);
}

void kc_churn(struct kc_churn *c, int min_s, int max_s,
	      bool (*enough)(struct kc_churn *c), int stop_s)
{
	int i;

	for (i = 0; i < c->nr_workers; i++)
		kc_spawn(c, kc_worker_fn, &c->w[i]);
	kc_spawn(c, kc_reader_fn, &c->rd);
	kc_spawn(c, kc_zapper_fn, c);
	kc_spawn(c, kc_mover_fn, c);

	sleep(min_s);
	for (i = min_s; i < max_s && enough && !enough(c); i++)
		sleep(1);
	__atomic_store_n(&c->stop, 1, __ATOMIC_SEQ_CST);
	for (i = 0; i < stop_s &&
	     __atomic_load_n(&c->stopped, __ATOMIC_SEQ_CST) < c->nr_threads;
	     i++)
		sleep(1);
	if (i == stop_s) {
		kc_dump(c);
		kt_fail("the churn's threads did not stop %d s after being told (%d of %d did)",
			stop_s, __atomic_load_n(&c->stopped, __ATOMIC_SEQ_CST),
			c->nr_threads);
		fflush(stdout);
		_exit(KT_EXIT_FAIL);
	}
	for (i = 0; i < c->nr_threads; i++)
		pthread_join(c->t[i], NULL);

	/* Once more with everything quiet: no zero is legal now. */
	for (i = 0; i < c->nr_workers; i++) {
		struct kc_worker *w = &c->w[i];
		uint64_t before = w->bad + w->zeros_guest + w->zeros_host;

		c->round(w);
		KT_EXPECT(w->bad + w->zeros_guest + w->zeros_host == before,
			  "vcpu %d: quiet round after the churn sees exactly the tags written",
			  w->vcpu_id);
	}
}

/* ---- slot 1 ---------------------------------------------------------- */

void kc_zap_begin(struct kc_churn *c, uint64_t first, uint64_t len)
{
	uint64_t i;

	for (i = first; i < first + len; i++)
		__atomic_add_fetch(&c->started[i], 1, __ATOMIC_SEQ_CST);
}

void kc_zap_end(struct kc_churn *c, uint64_t first, uint64_t len)
{
	uint64_t i;

	for (i = first; i < first + len; i++)
		__atomic_add_fetch(&c->done[i], 1, __ATOMIC_SEQ_CST);
	c->nr_zaps++;
	c->nr_zapped += len;
}

uint64_t kc_first(const struct kc_worker *w)
{
	return w->idx * w->c->range_pages;
}

uint64_t kc_gpa0(const struct kc_worker *w)
{
	return w->c->gpa + kc_first(w) * w->c->page_size;
}

static volatile uint32_t *kc_word(const struct kc_churn *c, uint64_t page)
{
	return (volatile uint32_t *)(c->mem + page * c->page_size);
}

static void kc_snapshot(struct kc_worker *w)
{
	uint64_t i, first = kc_first(w);

	for (i = 0; i < w->c->range_pages; i++)
		w->snap[i] = __atomic_load_n(&w->c->done[first + i],
					     __ATOMIC_SEQ_CST);
}

/* 0 is legal at @page iff a zap started after the snapshot's completions. */
static bool kc_zero_ok(const struct kc_worker *w, uint64_t page)
{
	uint64_t first = kc_first(w);

	if (page < first || page >= first + w->c->range_pages)
		return false;
	return __atomic_load_n(&w->c->started[page], __ATOMIC_SEQ_CST) !=
	       w->snap[page - first];
}

/*
 * @v, not the @want written, read at @page: a legal 0 (counted in
 * *@zeros) or bad.
 */
static void kc_judge(struct kc_worker *w, const char *what, uint64_t page,
		     uint32_t v, uint32_t want, uint64_t *zeros)
{
	if (v == 0 && kc_zero_ok(w, page)) {
		(*zeros)++;
		return;
	}
	if (w->bad++ < KC_MAX_REPORTS)
		kt_fail("vcpu %d iteration %llu: %s: page %llu (gpa 0x%llx) holds 0x%x, want 0x%x%s",
			w->vcpu_id, (unsigned long long)w->iterations, what,
			(unsigned long long)page,
			(unsigned long long)(w->c->gpa + page * w->c->page_size),
			v, want, v ? "" : " (0, but no zap of the page since)");
}

void kc_round_host_write(struct kc_worker *w)
{
	uint64_t i, first = kc_first(w);

	__atomic_store_n(&w->phase, 0, __ATOMIC_SEQ_CST);
	w->t = 0x40000000u | ((uint32_t)w->idx << 24) |
	       (uint32_t)(w->iterations & 0xffffff);
	w->t2 = w->t ^ 0x80000000u;
	kc_snapshot(w);
	for (i = 0; i < w->c->range_pages; i++)
		*kc_word(w->c, first + i) = w->t;
	__atomic_store_n(&w->phase, 1, __ATOMIC_SEQ_CST);
}

void kc_guest_read(struct kc_worker *w, uint64_t page, uint32_t v)
{
	kc_judge(w, "guest read", page, v, w->t, &w->zeros_guest);
}

void kc_round_guest_writes(struct kc_worker *w)
{
	__atomic_store_n(&w->phase, 2, __ATOMIC_SEQ_CST);
	kc_snapshot(w);
}

void kc_round_host_check(struct kc_worker *w)
{
	uint64_t i, first = kc_first(w);

	for (i = 0; i < w->c->range_pages; i++) {
		uint32_t v = *kc_word(w->c, first + i);

		if (v != w->t2)
			kc_judge(w, "host read after guest write", first + i,
				 v, w->t2, &w->zeros_host);
	}
	w->iterations++;
}

/* ---- slot 2 ---------------------------------------------------------- */

void kc_run_begin(struct kc_reader *rd, struct kc_run *r)
{
	r->del_done0 = kc_load(&rd->c->del_done);
	r->add_done0 = kc_load(&rd->c->add_done);
}

void kc_run_end(struct kc_reader *rd, struct kc_run *r)
{
	r->del_started1 = kc_load(&rd->c->del_started);
	r->add_started1 = kc_load(&rd->c->add_started);
}

void kc_read_mmio(struct kc_reader *rd, const struct kc_run *r, uint64_t gpa)
{
	/* Legal only if the slot may have been absent. */
	if (r->del_started1 < r->add_done0 && rd->bad++ < KC_MAX_REPORTS)
		kt_fail("MMIO exit at gpa 0x%llx but slot 2 was present throughout (generation %llu)",
			(unsigned long long)gpa,
			(unsigned long long)r->add_done0);
	rd->mmio++;
}

void kc_read_tag(struct kc_reader *rd, const struct kc_run *r, uint64_t gpa,
		 uint32_t v)
{
	uint64_t gen = v & 0xffffff;

	rd->reads++;
	if ((v & 0xff000000u) != 0x70000000u || gen <= r->del_done0 ||
	    gen > r->add_started1) {
		if (rd->bad++ < KC_MAX_REPORTS)
			kt_fail("slot 2 gpa 0x%llx read 0x%x: want the tag of generation %llu..%llu",
				(unsigned long long)gpa, v,
				(unsigned long long)(r->del_done0 + 1),
				(unsigned long long)r->add_started1);
		return;
	}
	if (gen < rd->min_gen)
		rd->min_gen = gen;
	if (gen > rd->max_gen)
		rd->max_gen = gen;
}

/* ---- the verdicts ---------------------------------------------------- */

void kc_report(const struct kc_churn *c, uint64_t (*stat)(const char *name),
	       const char *zap_what, uint64_t min_zaps, bool extra_ok,
	       const char *extra)
{
	uint64_t bad = 0, min_iter = ~0ULL, zeros = 0;
	uint64_t mapped = stat("prefetch_mapped");
	const struct kc_reader *rd = &c->rd;
	int i;

	kt_info("all vcpus: pf_taken %llu prefetch_mapped %llu prefetch_windows %llu",
		(unsigned long long)stat("pf_taken"),
		(unsigned long long)mapped,
		(unsigned long long)stat("prefetch_windows"));
	for (i = 0; i < c->nr_workers; i++) {
		const struct kc_worker *w = &c->w[i];

		kt_info("vcpu %d: %llu iterations, zeros seen by guest %llu, by host %llu, bad %llu",
			w->vcpu_id, (unsigned long long)w->iterations,
			(unsigned long long)w->zeros_guest,
			(unsigned long long)w->zeros_host,
			(unsigned long long)w->bad);
		if (w->iterations < min_iter)
			min_iter = w->iterations;
		zeros += w->zeros_guest;
		bad += w->bad;
	}
	kt_info("slot 2: %llu passes, %llu reads (generations %llu..%llu), %llu MMIO exits, bad %llu",
		(unsigned long long)rd->passes, (unsigned long long)rd->reads,
		(unsigned long long)(rd->reads ? rd->min_gen : 0),
		(unsigned long long)rd->max_gen,
		(unsigned long long)rd->mmio, (unsigned long long)rd->bad);

	KT_EXPECT(!bad, "%s churn: guest and host only ever saw the right tag or 0 after a zap (%llu bad)",
		  zap_what, (unsigned long long)bad);
	KT_EXPECT(!rd->bad, "memslot churn: every read of slot 2 was a live generation's tag or a legal MMIO exit (%llu bad)",
		  (unsigned long long)rd->bad);
	KT_EXPECT(c->nr_zaps >= min_zaps && min_iter >= 2 && zeros > 0 &&
		  rd->passes > 3 && rd->mmio > 0 && c->nr_gens > 10 &&
		  mapped > 0 && extra_ok,
		  "churn happened: %llu zaps, >= %llu rounds per vcpu, %llu zeros seen by guests, %llu slot-2 passes, %llu MMIO exits, %llu generations, %llu pages prefetched%s",
		  (unsigned long long)c->nr_zaps,
		  (unsigned long long)min_iter, (unsigned long long)zeros,
		  (unsigned long long)rd->passes,
		  (unsigned long long)rd->mmio, (unsigned long long)c->nr_gens,
		  (unsigned long long)mapped, extra);
}
