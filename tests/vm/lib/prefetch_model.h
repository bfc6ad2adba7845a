/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The hostile-policy fuzzer's generator and reference model, shared by
 * the x86 (tests/vm/prefetch_fuzz.c) and arm64 (tests/arm64/
 * prefetch_fuzz.c) programs: the answers of kvm-prefetch-fuzzpol drawn
 * from a seeded generator, and what the engine must map for them.
 *
 * The including file defines FZ_GFN0 (the case memslot's first gfn) and
 * FZ_MAXP (its largest size in pages) first, and provides MAX_ERRNO.
 */
#ifndef PREFETCH_MODEL_H
#define PREFETCH_MODEL_H

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#if !defined(FZ_GFN0) || !defined(FZ_MAXP)
#error "define FZ_GFN0 and FZ_MAXP before including prefetch_model.h"
#endif

#define FZ_BLOCK_PAGES	512
#define MAX_ACC		4
#define MAX_ANS		8
#define MAX_WINDOW	262144ULL		/* KVM_PREFETCH_MAX_PAGES */
#define FZ_MAX_ERRNO	4095

enum kind { K_4K, K_RO, K_DIRTY, K_THP, NR_KINDS };
static const char *const kind_names[] = { "4k", "read-only", "dirty-log", "thp" };

struct fcase {
	bool fault_engine;		/* kvm.prefetch_engine=fault */
	enum kind kind;
	uint32_t np;			/* memslot pages */
	int nacc;
	uint32_t acc[MAX_ACC];
	bool write[MAX_ACC];
	int nans;
	int ret[MAX_ANS];
	uint64_t start[MAX_ANS];
	uint32_t pages[MAX_ANS];
};

/* What the contract says the case leaves. */
struct model {
	uint8_t mapped[FZ_MAXP];
	uint8_t allowed[FZ_MAXP];		/* THP: may be mapped */
	int calls;
	bool ejected;
	/* 4 KiB kinds, per access: a guest fault?  Pages its window mapped. */
	bool faulted[MAX_ACC];
	uint32_t newly[MAX_ACC];
};

static uint32_t model_count(const struct model *m)
{
	uint32_t i, n = 0;

	for (i = 0; i < FZ_MAXP; i++)
		n += m->mapped[i];
	return n;
}

static uint64_t rng;

static uint64_t rnd64(void)
{
	rng ^= rng >> 12;
	rng ^= rng << 25;
	rng ^= rng >> 27;
	return rng * 0x2545f4914f6cdd1dULL;
}

static uint32_t rnd(uint32_t n)
{
	return (uint32_t)(rnd64() % n);
}

/* ---- the generator ------------------------------------------------ */

static uint32_t gen_pages(void)
{
	static const uint32_t odd[] = { 0, 1, 2, 3, 511, 512, 513, 4096,
					1u << 31, 0xffffffffu };

	return rnd(3) ? 1 + rnd(1100) : odd[rnd(sizeof(odd) / sizeof(odd[0]))];
}

/* An answer for a fault at page @p of a memslot of @np pages. */
static void gen_answer(struct fcase *c, int i, uint32_t p)
{
	uint64_t f = FZ_GFN0 + p;

	c->ret[i] = rnd(8) == 0 ? 0 : rnd(8) == 0 ? 2 : 1;
	c->pages[i] = gen_pages();
	switch (rnd(9)) {
	case 0:	/* around the fault */
	case 1:
	case 2:
		c->start[i] = f - rnd(c->pages[i] < 1100 ? c->pages[i] + 1 : 64);
		break;
	case 3:	/* near it, either side */
		c->start[i] = f + rnd(200) - 100;
		break;
	case 4:	/* below the memslot */
		c->start[i] = FZ_GFN0 - 1 - rnd(2000);
		break;
	case 5:	/* past its end */
		c->start[i] = FZ_GFN0 + c->np + rnd(100);
		break;
	case 6:	/* anywhere */
		c->start[i] = rnd64();
		break;
	case 7:	/* ending past gfn 2^64 - 1, or exactly at 2^64 */
		c->start[i] = 0 - (uint64_t)rnd(c->pages[i] ? c->pages[i] : 1);
		break;
	default:	/* from gfn 0 */
		c->start[i] = rnd(4) ? 0 : FZ_GFN0 - rnd(8);
		break;
	}
}

/* ---- the model ------------------------------------------------------ */

static uint64_t min_u64(uint64_t a, uint64_t b)
{
	return a < b ? a : b;
}

static uint64_t max_u64(uint64_t a, uint64_t b)
{
	return a > b ? a : b;
}

/*
 * One window answered for the fault at page @p: clip as the engine does
 * (u64 arithmetic, which wraps as the kernel's does) and walk.
 */
static void model_window(const struct fcase *c, struct model *m, uint32_t p,
			 uint64_t start, uint32_t pages, uint32_t vm_nr)
{
	uint64_t nr = min_u64(min_u64(pages, vm_nr), MAX_WINDOW), s, e, g;
	uint64_t fb, fe;

	if (!nr)
		return;
	s = max_u64(start, FZ_GFN0);
	e = min_u64(start + nr, FZ_GFN0 + c->np);
	if (s >= e)
		return;
	s -= FZ_GFN0;
	e -= FZ_GFN0;
	if (c->kind == K_THP) {
		for (g = s; g < e; g++)
			m->allowed[g] = 1;
		return;
	}
	fb = p;
	fe = p + 1;
	for (g = max_u64(fe, s); g < e; g++)
		m->mapped[g] = 1;
	for (g = min_u64(fb, e); g > s; g--) {
		if (m->mapped[g - 1])
			break;
		m->mapped[g - 1] = 1;
	}
}

/*
 * THP: which faults happen depends on the levels KVM chose, so the model
 * only bounds what may be mapped: the faulting 2 MiB blocks and every
 * window answered, clipped.
 */
static void model_thp(const struct fcase *c, struct model *m, uint32_t vm_nr)
{
	uint32_t b, i;
	int j, k;

	for (j = 0; j < c->nacc; j++) {
		b = c->acc[j] / FZ_BLOCK_PAGES * FZ_BLOCK_PAGES;
		for (i = b; i < b + FZ_BLOCK_PAGES && i < c->np; i++)
			m->allowed[i] = 1;
	}
	for (k = 0; k < c->nans; k++)
		if (c->ret[k] == 1)
			model_window(c, m, c->acc[0], c->start[k], c->pages[k],
				     vm_nr);
}

static void model_run(const struct fcase *c, struct model *m, uint32_t vm_nr,
		      bool ejected)
{
	uint64_t start;
	uint32_t p;
	int j, k;

	memset(m, 0, sizeof(*m));
	m->ejected = ejected;
	if (c->kind == K_THP) {
		model_thp(c, m, vm_nr);
		return;
	}
	for (j = 0; j < c->nacc; j++) {
		uint32_t before;

		p = c->acc[j];
		if (m->mapped[p])
			continue;
		m->faulted[j] = true;
		m->mapped[p] = 1;
		if (c->kind == K_DIRTY || m->ejected)
			continue;
		k = m->calls++ % c->nans;
		if (c->ret[k] != 1)
			continue;
		start = c->start[k];
		if (c->pages[k] && start + c->pages[k] - 1 < start) {
			m->ejected = true;
			continue;
		}
		before = model_count(m);
		model_window(c, m, p, start, c->pages[k], vm_nr);
		m->newly[j] = model_count(m) - before;
	}
}

static void describe(const struct fcase *c, uint32_t vm_nr, char *buf,
		     size_t len)
{
	int n, i;

	n = snprintf(buf, len, "%s engine, %s slot of %u pages, VM nr_pages %u, accesses",
		     c->fault_engine ? "fault" : "batch", kind_names[c->kind],
		     c->np, vm_nr);
	for (i = 0; i < c->nacc; i++)
		n += snprintf(buf + n, len - n, " %s%u", c->write[i] ? "w" : "r",
			      c->acc[i]);
	n += snprintf(buf + n, len - n, ", answers");
	for (i = 0; i < c->nans; i++)
		n += snprintf(buf + n, len - n, " %d:[%#llx +%u)", c->ret[i],
			      (unsigned long long)c->start[i], c->pages[i]);
}

static void make_case(struct fcase *c, bool thp)
{
	int i;

	c->fault_engine = rnd(4) == 0;
	c->kind = rnd(thp ? NR_KINDS : NR_KINDS - 1);
	c->np = c->kind == K_THP || rnd(3) == 0 ? FZ_MAXP :
		rnd(2) ? 512 : 1 + rnd(FZ_MAXP);
	c->nacc = 1 + rnd(MAX_ACC);
	for (i = 0; i < c->nacc; i++) {
		c->acc[i] = rnd(c->np);
		c->write[i] = (c->kind == K_4K || c->kind == K_THP) && rnd(2);
	}
	c->nans = 1 + rnd(MAX_ANS);
	for (i = 0; i < c->nans; i++)
		gen_answer(c, i, c->acc[i % c->nacc]);
}

/* init() answers, and what KVM_SET_PREFETCH_POLICY must return for each. */
static const struct init_answer {
	int ret;
	bool scribble;
	int want;
} init_answers[] = {
	{ 0, false, 0 }, { -ENOSPC, false, -ENOSPC }, { -FZ_MAX_ERRNO, false, -FZ_MAX_ERRNO },
	{ 1, false, -EINVAL }, { 4096, false, -EINVAL }, { -5000, false, -EINVAL },
	{ -FZ_MAX_ERRNO - 1, false, -EINVAL }, { INT_MIN, false, -EINVAL },
	{ INT_MAX, false, -EINVAL }, { 0, true, -EINVAL },
};
#define NR_INIT_ANSWERS	(sizeof(init_answers) / sizeof(init_answers[0]))

/* The fuzzpol parameters ret, start and pages for the answers of @c. */
static void fz_answer_params(const struct fcase *c, char *ret, size_t rl,
			     char *start, size_t sl, char *pages, size_t pl)
{
	int i, a = 0, b = 0, d = 0;

	for (i = 0; i < c->nans; i++) {
		a += snprintf(ret + a, rl - a, "%s%d", i ? "," : "", c->ret[i]);
		b += snprintf(start + b, sl - b, "%s%llu", i ? "," : "",
			      (unsigned long long)c->start[i]);
		d += snprintf(pages + d, pl - d, "%s%u", i ? "," : "",
			      c->pages[i]);
	}
}

#define FUZZ_PARAM	"/sys/module/kvm_prefetch_fuzzpol/parameters/"

/* Write fuzzpol's parameter @name; a failure ends the program. */
static void fuzz_param(const char *name, const char *val)
{
	char path[128];
	int r;

	snprintf(path, sizeof(path), FUZZ_PARAM "%s", name);
	r = ktsys_write(path, val);
	KT_ASSERT(!r, "%s=%s: %s", path, val, strerror(-r));
}

/* Read fuzzpol's parameter @name, a number; a failure ends the program. */
static long fuzz_param_long(const char *name)
{
	char path[128];
	long val;
	int r;

	snprintf(path, sizeof(path), FUZZ_PARAM "%s", name);
	r = ktsys_read_long(path, &val);
	KT_ASSERT(!r, "%s: %s", path, strerror(-r));
	return val;
}

/* Arm the answers of @c and start counting calls again. */
static void set_answers(const struct fcase *c)
{
	char ret[128], start[512], pages[256];

	fz_answer_params(c, ret, sizeof(ret), start, sizeof(start), pages,
			 sizeof(pages));
	fuzz_param("ret", ret);
	fuzz_param("start", start);
	fuzz_param("pages", pages);
	fuzz_param("calls", "0");
}

/* init()'s next answer: @a, or (NULL) 0 and no change to the state. */
static void set_init_answer(const struct init_answer *a)
{
	char val[16];

	snprintf(val, sizeof(val), "%d", a ? a->ret : 0);
	fuzz_param("init_ret", val);
	fuzz_param("init_scribble", a && a->scribble ? "1" : "0");
}

/* What the tests know of the policy of their VM. */
struct fz_vm {
	uint32_t nr;		/* its nr_pages */
	bool ejected;		/* ejected: the VM is on none */
};

/* Cases of each kind so far, and what they did. */
static struct {
	long cases, init_cases, windows, ejections, mapped;
} fz_tot;

/*
 * The including program's rig (VM, vCPU, memory) and what it does on it:
 * SET fuzzpol with nr_pages @nr (0 or -errno), GET (a failure ends the
 * program), one window case.  What the model says of the policy, struct
 * fz_vm, is passed along with it.
 */
struct rig;
static int rig_set(struct rig *r, uint32_t nr);
static void rig_get(struct rig *r, struct kvm_prefetch_policy *p);
static bool one_case(struct rig *r, unsigned long n, uint64_t seed);

/* Select fuzzpol with @nr pages; a refusal ends the program. */
static void set_fuzzpol(struct rig *r, struct fz_vm *v, uint32_t nr)
{
	int e = rig_set(r, nr);

	KT_ASSERT(!e, "SET fuzzpol %u: %s", nr, strerror(-e));
	v->nr = nr;
	v->ejected = false;
}

/* A window case's end: count it (@m its model) and take its state. */
static void fz_case_done(struct fz_vm *v, const struct model *m)
{
	fz_tot.cases++;
	fz_tot.windows += m->calls;
	fz_tot.ejections += m->ejected && !v->ejected;
	v->ejected = m->ejected;
}

/* KVM_SET_PREFETCH_POLICY with an init() answer; false on a mismatch. */
static bool init_case(struct rig *r, struct fz_vm *v, unsigned long n)
{
	const struct init_answer *a = &init_answers[rnd(NR_INIT_ANSWERS)];
	uint32_t nr = 2 + rnd(1100);
	struct kvm_prefetch_policy p;
	int e;

	set_init_answer(a);
	e = rig_set(r, nr);
	set_init_answer(NULL);
	fz_tot.init_cases++;
	rig_get(r, &p);
	if (e != a->want) {
		kt_fail("case %lu: init() %d%s: SET returned %d (%s), want %d",
			n, a->ret, a->scribble ? " changing nr_pages" : "", e,
			strerror(-e), a->want);
		return false;
	}
	if (!e) {
		v->nr = nr;
		v->ejected = false;
	}
	/* A failed SET changes nothing. */
	if (strcmp(p.name, v->ejected ? "none" : "fuzzpol") || p.nr_pages != v->nr) {
		kt_fail("case %lu: after init() %d, GET says %s %u, want %s %u",
			n, a->ret, p.name, p.nr_pages,
			v->ejected ? "none" : "fuzzpol", v->nr);
		return false;
	}
	return true;
}

/*
 * The case loop: @cases cases on @r (@v), one in 64 an init() answer,
 * the others a window case; a policy ejected is selected anew,
 * at a random nr_pages, before one case in four.  It stops after the
 * fifth failure; the number of failed cases.
 */
static unsigned long fz_run(struct rig *r, struct fz_vm *v,
			    unsigned long cases, uint64_t seed)
{
	unsigned long i, failed = 0;

	for (i = 0; i < cases; i++) {
		if (rnd(64) == 0) {
			failed += !init_case(r, v, i);
			continue;
		}
		/* An ejected policy stays out until selected anew. */
		if (v->ejected && rnd(4) == 0)
			set_fuzzpol(r, v, 2 + rnd(1100));
		failed += !one_case(r, i, seed);
		if (failed >= 5)
			break;
	}
	return failed;
}

/*
 * The run's verdict: all @cases done (fz_tot) as the model says, and
 * some ejected the policy and mapped windows.
 */
static void fz_verdict(unsigned long cases, unsigned long failed)
{
	KT_EXPECT(!failed && fz_tot.cases + fz_tot.init_cases == (long)cases,
		  "%lu random cases: KVM did what the model says (%lu failed)",
		  cases, failed);
	KT_EXPECT(fz_tot.ejections > 0 && fz_tot.mapped > fz_tot.cases,
		  "the cases ejected a policy (%ld) and mapped windows (%ld pages)",
		  fz_tot.ejections, fz_tot.mapped);
}

#endif /* PREFETCH_MODEL_H */
