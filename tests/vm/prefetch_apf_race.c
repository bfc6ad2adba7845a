// SPDX-License-Identifier: GPL-2.0
/*
 * prefetch_apf_race - async #PFs outstanding while the VMM changes things
 * under them, in the irqchip and pv-apf guests (see kvmtest.h).
 *
 * Four vCPUs each write every page of their own MiB of a 4 MiB memslot
 * restored through userfaultfd in 64 KiB chunks. The handler's gate is
 * closed first, so each vCPU's first fault becomes an async #PF whose
 * worker sits in the userfaultfd (the vCPU halts, or in pv-apf waits for
 * "page ready"). Then, with those async #PFs outstanding:
 *
 *  - policy: the VM's policy goes none -> adaptive (a module, autoloaded)
 *    -> auto -> none -> async, nr_pages 16, and the gate opens. The
 *    completions queued before the switch run under the new policy:
 *    pf_taken == chunks, prefetch_mapped == pages - chunks.
 *  - destroy: under adaptive, the vCPUs are kicked out of KVM_RUN and the
 *    VM is closed (a thread closes it: destroying the vCPUs waits for the
 *    blocked workers), then the gate opens.
 *  - memslot: the vCPUs are kicked out of KVM_RUN, the gate opens and the
 *    workers queue their completions; the memslot is deleted and created
 *    again at the same place, then the vCPUs run on and finish.
 *
 * Each ends with every page right (dword 0 the gpa where the guest wrote
 * it, else the source; the rest the source), each chunk populated once,
 * kvm.ko's and kvm_prefetch_adaptive's refcounts back where they were,
 * and (checked by the VM's /init after the program) no kernel splat.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/ioctl.h>

#include "kvmtest.h"
#include "kt_sys.h"
#include "kt_uffd.h"
#include "kt_guest.h"
#include "kt_bench.h"

#define SIZE		(4ULL << 20)
#define PAGES		(SIZE / KT_PAGE_SIZE)
#define CHUNK		(64ULL << 10)
#define CHUNKS		(SIZE / CHUNK)
#define CHUNK_PAGES	(CHUNK / KT_PAGE_SIZE)
#define NR_VCPUS	4
#define HOST_ALIGN	(2ULL << 20)
#define ADAPTIVE_REFCNT	"/sys/module/kvm_prefetch_adaptive/refcnt"

static char *src;

struct vthread {
	struct kt_vcpu *vcpu;
	pthread_t thread;
	bool running;
	bool done;		/* reported on the done port */
	bool kicked;		/* left KVM_RUN with EINTR */
	uint64_t pf0;		/* pf_taken before the pass */
};

struct rig {
	enum kt_guest_mode mode;
	struct kt_vm *vm;
	struct kt_uffd *u;
	char *mem;
	struct vthread v[NR_VCPUS];
	char what[64];
};

static void on_sigusr1(int sig)
{
}

static void *vthread_fn(void *arg)
{
	struct vthread *t = arg;
	struct kvm_run *run = t->vcpu->run;
	int r;

	for (;;) {
		r = ioctl(t->vcpu->fd, KVM_RUN, 0);
		if (r < 0 && errno == EINTR) {
			__atomic_store_n(&t->kicked, true, __ATOMIC_SEQ_CST);
			return NULL;
		}
		if (r < 0 && errno == EAGAIN)
			continue;
		KT_ASSERT(!r, "KVM_RUN: %s", strerror(errno));
		if (run->exit_reason == KVM_EXIT_IO &&
		    run->io.port == KT_DONE_PORT)
			break;
		kt_vcpu_dump_exit(t->vcpu);
		KT_ASSERT(0, "vcpu %d: exit %s", t->vcpu->id,
			  kt_exit_reason_str(run->exit_reason));
	}
	__atomic_store_n(&t->done, true, __ATOMIC_SEQ_CST);
	return NULL;
}

static void vthread_start(struct vthread *t)
{
	t->vcpu->run->immediate_exit = 0;
	t->kicked = false;
	KT_ASSERT(!pthread_create(&t->thread, NULL, vthread_fn, t),
		  "pthread_create");
	t->running = true;
}

/* Get every vCPU thread out of KVM_RUN (done or kicked) and join it. */
static void vthreads_stop(struct rig *g)
{
	unsigned int i;

	for (i = 0; i < NR_VCPUS; i++) {
		struct vthread *t = &g->v[i];

		if (!t->running)
			continue;
		/* immediate_exit covers a signal that comes before KVM_RUN. */
		t->vcpu->run->immediate_exit = 1;
		while (!__atomic_load_n(&t->done, __ATOMIC_SEQ_CST) &&
		       !__atomic_load_n(&t->kicked, __ATOMIC_SEQ_CST)) {
			pthread_kill(t->thread, SIGUSR1);
			usleep(2000);
		}
		pthread_join(t->thread, NULL);
		t->running = false;
	}
}

static void vthreads_join(struct rig *g)
{
	unsigned int i;

	for (i = 0; i < NR_VCPUS; i++) {
		if (!g->v[i].running)
			continue;
		pthread_join(g->v[i].thread, NULL);
		g->v[i].running = false;
	}
}

static long read_refcnt(const char *path)
{
	long v;

	return ktsys_read_long(path, &v) ? -1 : v;
}

/* A VM in @mode, 4 vCPUs, policy @policy, data slot armed, gate closed. */
static void rig_setup(struct rig *g, enum kt_guest_mode mode,
		      const char *test, const char *policy, uint32_t nr)
{
	unsigned int i;
	int r;

	memset(g, 0, sizeof(*g));
	g->mode = mode;
	snprintf(g->what, sizeof(g->what), "%s %s", kt_guest_mode_str(mode),
		 test);
	g->vm = kt_vm_create_mode(mode);
	r = ktsys_set_policy(g->vm->fd, policy, nr, KVM_PREFETCH_GUP_NOFAULT);
	KT_ASSERT(!r, "%s: policy %s: %s", g->what, policy, strerror(-r));
	g->u = kt_uffd_create_alloc(SIZE, HOST_ALIGN, src, CHUNK);
	g->mem = kt_uffd_base(g->u);
	kt_vm_add_slot(g->vm, KTB_DATA_SLOT, KTB_DATA_GPA, SIZE, 0, g->mem);
	for (i = 0; i < NR_VCPUS; i++) {
		uint32_t part = SIZE / NR_VCPUS;
		uint32_t begin = KTB_DATA_GPA + i * part;

		g->v[i].vcpu = kt_vcpu_add(g->vm, i);
		/* Map the code page first, then set up the real pass. */
		kt_touch(g->v[i].vcpu, begin, begin, 0, KT_TOUCH_READ);
		kt_touch_setup(g->v[i].vcpu, begin, begin + part, 0,
			       KT_TOUCH_WRITE);
		g->v[i].pf0 = kt_vcpu_stat_get(g->v[i].vcpu, "pf_taken");
	}
	kt_uffd_gate_close(g->u);
}

/*
 * Start the vCPUs and wait until each has taken its first data fault
 * (an async #PF now blocked in the userfaultfd); in pv-apf, until the
 * guest has seen "page not present" on every vCPU. False on timeout.
 */
static bool rig_start_outstanding(struct rig *g)
{
	unsigned int i, ms;

	for (i = 0; i < NR_VCPUS; i++)
		vthread_start(&g->v[i]);
	for (ms = 0; ms < 10000; ms += 5) {
		unsigned int ready = 0;

		for (i = 0; i < NR_VCPUS; i++) {
			struct kt_apf_counts c;

			if (g->mode == KT_GUEST_PV_APF) {
				kt_guest_apf_counts(g->v[i].vcpu, &c);
				ready += c.not_present == 1;
			} else {
				ready += kt_vcpu_stat_get(g->v[i].vcpu,
							  "pf_taken") >
					 g->v[i].pf0;
			}
		}
		if (ready == NR_VCPUS && kt_uffd_events(g->u) >= 1) {
			usleep(50000);
			return true;
		}
		usleep(5000);
	}
	return false;
}

/* Every page: dword 0 the gpa (if @all_written or written), the rest src. */
static void rig_verify(struct rig *g, bool all_written)
{
	uint64_t i, bad = 0, written = 0;

	for (i = 0; i < PAGES; i++) {
		const char *p = g->mem + i * KT_PAGE_SIZE;
		const char *s = src + i * KT_PAGE_SIZE;
		uint32_t d0 = *(const uint32_t *)p;
		uint32_t gpa = KTB_DATA_GPA + i * KT_PAGE_SIZE;
		bool ok = d0 == gpa ||
			  (!all_written && d0 == *(const uint32_t *)s);

		written += d0 == gpa;
		if (!ok || memcmp(p + 4, s + 4, KT_PAGE_SIZE - 4)) {
			if (!bad++)
				kt_info("%s: page %llu wrong: dword0 0x%x",
					g->what, (unsigned long long)i, d0);
		}
	}
	kt_uffd_quiesce(g->u, 5000);
	KT_EXPECT(!bad && kt_uffd_populated(g->u) == CHUNKS &&
		  !kt_uffd_errors(g->u),
		  "%s: all %llu pages right (%llu written by the guest, %llu wrong), %llu chunks populated once",
		  g->what, (unsigned long long)PAGES,
		  (unsigned long long)written, (unsigned long long)bad,
		  (unsigned long long)kt_uffd_populated(g->u));
}

static uint64_t rig_stat(struct rig *g, const char *name)
{
	uint64_t sum = 0, v;
	unsigned int i;

	for (i = 0; i < NR_VCPUS; i++)
		if (!kt_vcpu_stat(g->v[i].vcpu, name, &v))
			sum += v;
	return sum;
}

static void rig_free(struct rig *g)
{
	unsigned int i;

	for (i = 0; i < NR_VCPUS; i++)
		if (g->v[i].vcpu)
			kt_vcpu_free(g->v[i].vcpu);
	if (g->vm)
		kt_vm_free(g->vm);
	kt_uffd_destroy(g->u);
}

static void test_policy_switch(enum kt_guest_mode mode)
{
	static const char * const seq[] = { "adaptive", "auto", "none" };
	uint64_t pf0 = 0, pf, m0, mapped;
	struct rig g;
	unsigned int i;
	int r;

	rig_setup(&g, mode, "policy switch", "none", 16);
	for (i = 0; i < NR_VCPUS; i++)
		pf0 += g.v[i].pf0;
	m0 = rig_stat(&g, "prefetch_mapped");
	KT_ASSERT(rig_start_outstanding(&g),
		  "%s: vCPUs did not reach their first fault", g.what);
	for (i = 0; i < sizeof(seq) / sizeof(seq[0]); i++) {
		r = ktsys_set_policy(g.vm->fd, seq[i], 512,
				     KVM_PREFETCH_GUP_NOFAULT);
		KT_ASSERT(!r, "%s: policy %s: %s", g.what, seq[i],
			  strerror(-r));
	}
	r = ktsys_set_policy(g.vm->fd, "async", 16, KVM_PREFETCH_GUP_NOFAULT);
	KT_ASSERT(!r, "%s: policy async: %s", g.what, strerror(-r));
	kt_uffd_gate_open(g.u);
	vthreads_join(&g);

	pf = rig_stat(&g, "pf_taken") - pf0;
	mapped = rig_stat(&g, "prefetch_mapped") - m0;
	kt_info("%s: pf_taken %llu prefetch_mapped %llu events %llu",
		g.what, (unsigned long long)pf, (unsigned long long)mapped,
		(unsigned long long)kt_uffd_events(g.u));
	/*
	 * A completion that ran under none would leave its chunk's other
	 * CHUNK_PAGES - 1 pages to guest faults.  (The handler populates
	 * the faulting page last, so no window finds half a chunk.)
	 */
	KT_EXPECT(pf == CHUNKS && mapped == PAGES - CHUNKS,
		  "%s: completions queued before the switch ran under async: pf_taken %llu, prefetch_mapped %llu, want %llu and %llu",
		  g.what, (unsigned long long)pf, (unsigned long long)mapped,
		  (unsigned long long)CHUNKS,
		  (unsigned long long)(PAGES - CHUNKS));
	rig_verify(&g, true);
	rig_free(&g);
}

struct closer {
	struct rig *g;
	bool done;
};

static void *closer_fn(void *arg)
{
	struct closer *c = arg;
	unsigned int i;

	for (i = 0; i < NR_VCPUS; i++) {
		kt_vcpu_free(c->g->v[i].vcpu);
		c->g->v[i].vcpu = NULL;
	}
	kt_vm_free(c->g->vm);
	c->g->vm = NULL;
	__atomic_store_n(&c->done, true, __ATOMIC_SEQ_CST);
	return NULL;
}

static void test_destroy(enum kt_guest_mode mode, long kvm_ref)
{
	struct closer c = { 0 };
	pthread_t thread;
	struct rig g;
	bool blocked;
	long ref;

	rig_setup(&g, mode, "destroy", "adaptive", 16);
	KT_ASSERT(rig_start_outstanding(&g),
		  "%s: vCPUs did not reach their first fault", g.what);
	vthreads_stop(&g);

	c.g = &g;
	KT_ASSERT(!pthread_create(&thread, NULL, closer_fn, &c),
		  "pthread_create");
	usleep(300000);
	blocked = !__atomic_load_n(&c.done, __ATOMIC_SEQ_CST);
	kt_info("%s: closing the VM %s while the workers wait", g.what,
		blocked ? "waits" : "did not wait");
	kt_uffd_gate_open(g.u);
	KT_ASSERT(kt_join_within(thread, 20),
		  "%s: closing the VM did not finish in 20 s", g.what);

	ref = read_refcnt(KTSYS_KVM_REFCNT);
	KT_EXPECT(ref == kvm_ref && read_refcnt(ADAPTIVE_REFCNT) == 0,
		  "%s: kvm refcnt %ld (want %ld), kvm_prefetch_adaptive refcnt %ld (want 0)",
		  g.what, ref, kvm_ref, read_refcnt(ADAPTIVE_REFCNT));
	/* Pages the guest never reached get populated by reading them. */
	rig_verify(&g, false);
	kt_uffd_destroy(g.u);
}

static void test_memslot(enum kt_guest_mode mode)
{
	uint64_t done_events;
	unsigned int i;
	struct rig g;

	rig_setup(&g, mode, "memslot", "async", 16);
	KT_ASSERT(rig_start_outstanding(&g),
		  "%s: vCPUs did not reach their first fault", g.what);
	vthreads_stop(&g);
	/* The workers finish now and queue completions nobody consumes. */
	kt_uffd_gate_open(g.u);
	KT_ASSERT(kt_uffd_quiesce(g.u, 5000), "%s: handler busy", g.what);
	usleep(200000);
	done_events = kt_uffd_events(g.u);

	kt_vm_delete_slot(g.vm, KTB_DATA_SLOT);
	kt_vm_add_slot(g.vm, KTB_DATA_SLOT, KTB_DATA_GPA, SIZE, 0, g.mem);
	for (i = 0; i < NR_VCPUS; i++)
		vthread_start(&g.v[i]);
	vthreads_join(&g);
	for (i = 0; i < NR_VCPUS; i++)
		KT_ASSERT(g.v[i].done, "%s: vcpu %u did not finish", g.what,
			  i);
	kt_info("%s: %llu events before the slot was replaced, %llu in all; pf_taken %llu",
		g.what, (unsigned long long)done_events,
		(unsigned long long)kt_uffd_events(g.u),
		(unsigned long long)rig_stat(&g, "pf_taken"));
	KT_EXPECT(kt_uffd_events(g.u) == CHUNKS,
		  "%s: %llu userfaultfd events, want %llu", g.what,
		  (unsigned long long)kt_uffd_events(g.u),
		  (unsigned long long)CHUNKS);
	rig_verify(&g, true);
	rig_free(&g);
}

int main(void)
{
	struct sigaction sa = { .sa_handler = on_sigusr1 };
	enum kt_guest_mode m;
	long kvm_ref;

	kt_require_kvm();
	ktsys_require_prefetch();
	KT_ASSERT(!sigaction(SIGUSR1, &sa, NULL), "sigaction");
	src = ktb_src_alloc(SIZE);

	for (m = KT_GUEST_IRQCHIP; m <= KT_GUEST_PV_APF; m++) {
		test_policy_switch(m);
		/* Loaded now (autoloaded by the switch) and unused. */
		kvm_ref = read_refcnt(KTSYS_KVM_REFCNT);
		KT_EXPECT(read_refcnt(ADAPTIVE_REFCNT) == 0,
			  "%s: kvm_prefetch_adaptive refcnt %ld after the VM is gone",
			  kt_guest_mode_str(m), read_refcnt(ADAPTIVE_REFCNT));
		test_destroy(m, kvm_ref);
		test_memslot(m);
		KT_EXPECT(read_refcnt(KTSYS_KVM_REFCNT) == kvm_ref,
			  "%s: kvm refcnt %ld after the races, want %ld",
			  kt_guest_mode_str(m), read_refcnt(KTSYS_KVM_REFCNT),
			  kvm_ref);
	}
	ktb_src_free(src, SIZE);
	return kt_exit();
}
