// SPDX-License-Identifier: GPL-2.0
/*
 * prefetch_backoff - a vCPU backs off after windows that map nothing, and
 * stops backing off at the first window that maps something (issue 49,
 * item 4; design.rst, "Windows that map nothing: the back-off").
 *
 * One memslot of 2048 pages, policy auto with nr_pages 8.  Pages [0, COLD)
 * are cold (fresh anonymous memory: the host faults each one in when the
 * guest first touches it), pages [COLD, 2048) are populated by the host
 * up front.  The guest writes every page once, in order, in one KVM_RUN:
 *  - in the cold part every window finds the next host page absent and
 *    maps nothing: after 8 such windows in a row the vCPU lets 1, then 2,
 *    4, ... up to 256 guest faults in a row go without a window
 *    (prefetch_skipped);
 *  - in the populated part the back-off still running lets the first
 *    faults go without a window; the first window then maps the rest of
 *    its 8 pages, which ends the back-off: from there on every 8 pages
 *    take one guest fault.
 * pf_taken, prefetch_windows, prefetch_mapped and prefetch_skipped must be
 * exactly what a model of the engine (below) says, and every page must
 * hold what the guest wrote.  Cases: COLD at several points of the
 * back-off (within the first 8 windows, in the ramp, at the cap, past
 * it), each with both engines (kvm.prefetch_engine=fault, batch).  Then
 * the same with memory populated throughout: nothing backs off.
 *
 * A KVM_PRE_FAULT_MEMORY window, which never backs off, is checked after
 * the cold part of one case: with the vCPU backing off, a prefault of 8
 * populated pages still opens its window.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>

#include "kvmtest.h"
#include "kt_sys.h"

#define ENGINE_PATH	"/sys/module/kvm/parameters/prefetch_engine"
#define SLOT		1
#define GPA		0x40000000ULL		/* 1 GiB, 2 MiB aligned */
#define N_PAGES		2048
#define SIZE		((uint64_t)N_PAGES * KT_PAGE_SIZE)
#define NR_PAGES	8

/* The engine's constants (arch/x86/kvm/mmu/prefetch.c). */
#define EMPTY_MIN	8
#define SKIP_MAX_SHIFT	8

static const char *const engines[] = { "fault", "batch" };

/* Where the host's pages start: [0, cold) is cold. */
static const unsigned int colds[] = { 5, 40, 300, 1024, 0 };

struct model {
	uint64_t pf, windows, mapped, skipped;
	uint32_t empty, skip, shift;
	bool host[N_PAGES], spte[N_PAGES];
};

static void backoff_update(struct model *m, uint64_t mapped)
{
	if (mapped) {
		m->empty = 0;
		m->shift = 0;
		return;
	}
	if (m->empty < EMPTY_MIN && ++m->empty < EMPTY_MIN)
		return;
	m->skip = 1U << m->shift;
	if (m->shift < SKIP_MAX_SHIFT)
		m->shift++;
}

/*
 * The guest writes page @i: a guest fault if it is not mapped, which
 * faults the host page in; then the auto window of 8 aligned pages,
 * forward to the first absent host page, backward to the first mapped
 * page, unless the vCPU backs off.
 */
static void model_touch(struct model *m, int i)
{
	int start = i & ~(NR_PAGES - 1), end = start + NR_PAGES, j;
	uint64_t mapped = 0;

	if (m->spte[i])
		return;
	m->pf++;
	m->host[i] = m->spte[i] = true;
	if (m->skip) {
		m->skip--;
		m->skipped++;
		return;
	}
	m->windows++;
	for (j = i + 1; j < end && m->host[j]; j++)
		if (!m->spte[j]) {
			m->spte[j] = true;
			mapped++;
		}
	for (j = i - 1; j >= start && !m->spte[j] && m->host[j]; j--) {
		m->spte[j] = true;
		mapped++;
	}
	m->mapped += mapped;
	backoff_update(m, mapped);
}

struct counts {
	uint64_t pf, windows, mapped, skipped;
};

static struct counts counts_read(struct kt_vcpu *vcpu)
{
	return (struct counts){
		.pf = kt_vcpu_stat_get(vcpu, "pf_taken"),
		.windows = kt_vcpu_stat_get(vcpu, "prefetch_windows"),
		.mapped = kt_vcpu_stat_get(vcpu, "prefetch_mapped"),
		.skipped = kt_vcpu_stat_get(vcpu, "prefetch_skipped"),
	};
}

static bool counts_expect(const char *what, const char *engine,
			  struct counts a, struct counts b,
			  const struct model *m)
{
	b.pf -= a.pf;
	b.windows -= a.windows;
	b.mapped -= a.mapped;
	b.skipped -= a.skipped;
	return KT_EXPECT(b.pf == m->pf && b.windows == m->windows &&
			 b.mapped == m->mapped && b.skipped == m->skipped,
			 "%s, %s: pf %llu windows %llu mapped %llu skipped %llu (want %llu %llu %llu %llu)",
			 engine, what, (unsigned long long)b.pf,
			 (unsigned long long)b.windows,
			 (unsigned long long)b.mapped,
			 (unsigned long long)b.skipped,
			 (unsigned long long)m->pf,
			 (unsigned long long)m->windows,
			 (unsigned long long)m->mapped,
			 (unsigned long long)m->skipped);
}

/* One KVM_PRE_FAULT_MEMORY of [@gpa, @gpa + @size); 0 or -errno. */
static int pre_fault(struct kt_vcpu *vcpu, uint64_t gpa, uint64_t size)
{
	struct kvm_pre_fault_memory r;

	memset(&r, 0, sizeof(r));
	r.gpa = gpa;
	r.size = size;
	return ioctl(vcpu->fd, KVM_PRE_FAULT_MEMORY, &r) ? -errno : 0;
}

static void run_case(const char *engine, unsigned int cold, bool prefault)
{
	static struct model m;
	struct counts a, b;
	struct kt_vcpu *vcpu;
	char what[64];
	uint64_t i, bad = 0;
	struct kt_vm *vm;
	char *mem;
	int r;

	memset(&m, 0, sizeof(m));
	vm = kt_vm_create();
	mem = kt_vm_add_slot(vm, SLOT, GPA, SIZE, 0, NULL);
	/* The host's part: populated, 0x5a in every byte. */
	memset(mem + (uint64_t)cold * KT_PAGE_SIZE, 0x5a,
	       SIZE - (uint64_t)cold * KT_PAGE_SIZE);
	for (i = cold; i < N_PAGES; i++)
		m.host[i] = true;
	vcpu = kt_vcpu_add(vm, 0);
	kt_touch(vcpu, 0, 0, 0, KT_TOUCH_WRITE);
	r = ktsys_set_policy(vm->fd, "auto", NR_PAGES, KVM_PREFETCH_GUP_NOFAULT);
	KT_ASSERT(!r, "SET auto %d: %s", NR_PAGES, strerror(-r));

	snprintf(what, sizeof(what), "cold [0, %u), populated [%u, %u)",
		 cold, cold, N_PAGES);
	a = counts_read(vcpu);
	if (prefault) {
		/*
		 * The cold part, then a prefault of the first 8 pages of
		 * the populated part: its window is not skipped.
		 */
		kt_touch(vcpu, GPA, GPA + (uint64_t)cold * KT_PAGE_SIZE, 0,
			 KT_TOUCH_WRITE);
		for (i = 0; i < cold; i++)
			model_touch(&m, i);
		b = counts_read(vcpu);
		counts_expect("cold part before a prefault", engine, a, b, &m);
		KT_EXPECT(m.skip > 0, "%s: the model backs off after the cold part (skip %u)",
			  engine, m.skip);
		r = pre_fault(vcpu, GPA + (uint64_t)cold * KT_PAGE_SIZE,
			      KT_PAGE_SIZE);
		a = counts_read(vcpu);
		KT_EXPECT(!r && a.windows - b.windows == 1 &&
			  a.mapped - b.mapped == NR_PAGES - 1 &&
			  a.skipped == b.skipped && a.pf == b.pf,
			  "%s: KVM_PRE_FAULT_MEMORY of one page while backing off opens its window (r %d, windows +%llu, mapped +%llu, skipped +%llu)",
			  engine, r, (unsigned long long)(a.windows - b.windows),
			  (unsigned long long)(a.mapped - b.mapped),
			  (unsigned long long)(a.skipped - b.skipped));
		/* The model: those 8 pages are mapped, the vCPU unchanged. */
		for (i = cold; i < cold + NR_PAGES; i++)
			m.spte[i] = true;
		memset(&m.pf, 0, 4 * sizeof(m.pf));
		kt_touch(vcpu, GPA + (uint64_t)cold * KT_PAGE_SIZE,
			 GPA + SIZE, 0, KT_TOUCH_WRITE);
		for (i = cold; i < N_PAGES; i++)
			model_touch(&m, i);
		b = counts_read(vcpu);
		counts_expect("populated part after a prefault", engine, a, b,
			      &m);
	} else {
		kt_touch(vcpu, GPA, GPA + SIZE, 0, KT_TOUCH_WRITE);
		for (i = 0; i < N_PAGES; i++)
			model_touch(&m, i);
		b = counts_read(vcpu);
		counts_expect(what, engine, a, b, &m);
	}

	for (i = 0; i < N_PAGES; i++) {
		const uint32_t *p = (const uint32_t *)(mem + i * KT_PAGE_SIZE);

		if (p[0] != GPA + i * KT_PAGE_SIZE ||
		    p[1] != (i < cold ? 0 : 0x5a5a5a5a))
			bad++;
	}
	KT_EXPECT(!bad, "%s, %s: every page holds what the guest wrote (%llu wrong)",
		  engine, what, (unsigned long long)bad);

	kt_vcpu_free(vcpu);
	kt_vm_free(vm);
}

int main(void)
{
	char engine[32] = "";
	size_t e, c;
	int r;

	kt_require_kvm();
	ktsys_require_prefetch();
	KT_REQUIRE(!ktsys_read_line(ENGINE_PATH, engine, sizeof(engine)),
		   "no %s", ENGINE_PATH);

	for (e = 0; e < 2; e++) {
		r = ktsys_write(ENGINE_PATH, engines[e]);
		KT_ASSERT(!r, "prefetch_engine=%s (%d)", engines[e], r);
		for (c = 0; c < sizeof(colds) / sizeof(colds[0]); c++)
			run_case(engines[e], colds[c], false);
		run_case(engines[e], 1024, true);
	}
	ktsys_write(ENGINE_PATH, engine);
	return kt_exit();
}
