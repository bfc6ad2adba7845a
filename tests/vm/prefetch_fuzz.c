// SPDX-License-Identifier: GPL-2.0
/*
 * prefetch_fuzz - a policy is input: whatever a policy answers, the engine
 * maps exactly what the contract says, on the host's pages, and KVM, the
 * VM and the host keep running.
 *
 * The policy is tests/vm/policy/kvm-prefetch-fuzzpol.ko, whose every
 * answer (init()'s return value, window()'s return value and window, one
 * per call, changing from call to call) this program draws from a seeded
 * generator: windows around the fault, far from it, below gfn 0 of the
 * memslot or past its end, of 0, 1, 2^31 or 2^32 - 1 pages, ending past
 * gfn 2^64 - 1 or exactly at 2^64, over memory mapped already; true
 * without writing the window; init() returning 0, -errno, a positive
 * value, -FZ_MAX_ERRNO - 1, INT_MIN, INT_MAX, or changing the VM's
 * nr_pages.  Each case re-creates a memslot of 4 KiB host pages
 * (writable, read-only or dirty-logged) or of THPs, lets the guest touch
 * a few random pages, and reads every SPTE KVM wrote from the
 * kvm_tdp_mmu_spte_changed trace event.  For 4 KiB slots the mapped pages
 * must be exactly those of a reference model of the engine's contract
 * (the faulting pages; per window answered, the window clipped to the
 * VM's nr_pages and the memslot, walked forward from the fault and
 * backward to the first mapped page; nothing for a dirty-logged slot; a
 * policy ejected for good after a window past gfn 2^64 - 1), each on the
 * pfn the host's page table has (/proc/self/pagemap) and read-only in a
 * read-only slot; the policy's call count and the prefetch_ejected stat
 * must be the model's.  For THP slots every mapped page must lie in a
 * faulting 2 MiB block or a clipped window, on the host's pfn.  Two
 * memslots the guest never touches lie right below the case's memslot
 * and right above the largest one: no window may map a page of them.
 * The policy also reports each window() call whose window did not come
 * pre-filled as { fault gfn, 0 }.
 * KVM_SET_PREFETCH_POLICY must return what the contract says for each
 * init() answer (0, that -errno, or -EINVAL), and a default policy whose
 * init() fails must leave a new VM on none.  The VM is destroyed and the
 * policy module unloaded at the end.
 *
 * kp.fuzz.seed=N and kp.fuzz.cases=N on the kernel command line replace
 * the defaults; a failing case prints the seed, its number and itself.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "kvmtest.h"
#include "kt_sys.h"

#define ENGINE_PATH	KTSYS_P_ENGINE
#define DEFAULT_PATH	"/sys/module/kvm/parameters/prefetch_policy"
#define EVENT		"kvmmmu/kvm_tdp_mmu_spte_changed"
#define SLOT		1
#define GPA		0x40000000ULL		/* 1 GiB, 2 MiB aligned */
#define GFN0		(GPA >> 12)
#define MAXP		1024			/* two 2 MiB blocks */
#define FZ_GFN0		GFN0
#define FZ_MAXP		MAXP
#define NEIGH_PAGES	64		/* memslots right below and above */
#define SLOT_BELOW	2
#define SLOT_ABOVE	3
#define DEFAULT_SEED	20261206ULL
#define DEFAULT_CASES	10000


static unsigned long verbose;	/* kp.fuzz.verbose=1: each case, each access */

#include "prefetch_model.h"

/* ---- what KVM did --------------------------------------------------- */

struct leaves {
	uint64_t spte[MAXP];
	uint8_t level[MAXP];
	long lost;
	long neighbours;	/* leaves installed in the memslots around */
};

static void trace_line(struct leaves *l, const char *line)
{
	struct ktsys_spte_change c;

	if (!ktsys_spte_parse(line, &c, &l->lost))
		return;
	if ((c.new_spte & KTSYS_SPTE_PRESENT) &&
	    ((c.gfn >= GFN0 - NEIGH_PAGES && c.gfn < GFN0) ||
	     (c.gfn >= GFN0 + MAXP && c.gfn < GFN0 + MAXP + NEIGH_PAGES)))
		l->neighbours++;
	ktsys_spte_apply(&c, GFN0, MAXP, l->spte, l->level);
}

/*
 * The event stays on for the whole run and is read from trace_pipe, which
 * consumes what it returns: emptying the buffer ("trace" with O_TRUNC)
 * for every case would wait for an RCU grace period each time.
 */
static int pipe_fd = -1;
static char tracing_on[256];

/* Record (@on) or not: what the memslot update zaps is not the case's. */
static void trace_record(bool on)
{
	KT_ASSERT(!ktsys_write(tracing_on, on ? "1" : "0"), "tracing_on");
}

static void trace_open(void)
{
	char path[256];
	int e = ktsys_trace_begin(EVENT);

	KT_ASSERT(!e, "trace event %s: %d", EVENT, e);
	snprintf(tracing_on, sizeof(tracing_on), "%s/tracing_on",
		 ktsys_tracefs());
	snprintf(path, sizeof(path), "%s/trace_pipe", ktsys_tracefs());
	pipe_fd = open(path, O_RDONLY | O_NONBLOCK);
	KT_ASSERT(pipe_fd >= 0, "%s: %s", path, strerror(errno));
}

static void trace_close(void)
{
	char path[256];

	close(pipe_fd);
	snprintf(path, sizeof(path), "%s/events/%s/enable", ktsys_tracefs(),
		 EVENT);
	ktsys_write(path, "0");
}

/* Every record the pipe holds now, applied to @l (NULL: dropped). */
static void read_trace(struct leaves *l)
{
	static char buf[65536];
	size_t have = 0;
	char *nl, *line;
	ssize_t n;

	if (l)
		memset(l, 0, sizeof(*l));
	for (;;) {
		n = read(pipe_fd, buf + have, sizeof(buf) - 1 - have);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		have += n;
		buf[have] = '\0';
		for (line = buf; (nl = strchr(line, '\n')); line = nl + 1) {
			*nl = '\0';
			if (l)
				trace_line(l, line);
		}
		have = buf + have - line;
		memmove(buf, line, have);
		KT_ASSERT(have < sizeof(buf) - 1, "trace line too long");
	}
	KT_ASSERT(n == 0 || errno == EAGAIN, "trace_pipe: %s", strerror(errno));
	if (l && have) {
		buf[have] = '\0';
		trace_line(l, buf);
	}
}

/* ---- running a case -------------------------------------------------- */

struct rig {
	struct kt_vm *vm;
	struct kt_vcpu *vcpu;
	char *mem4k, *memthp;
	struct fz_vm pol;	/* what the model says of the VM's policy */
	bool thp;
	uint64_t ejections;	/* prefetch_ejected, as the model counts */
	long bad_prefill;	/* the policy's count, last read */
};

static struct {
	long thp_cases;		/* the rest is fz_tot */
	uint64_t ns_slot, ns_guest, ns_trace;	/* where the time goes */
} tot;

static int rig_set(struct rig *r, uint32_t nr)
{
	return ktsys_set_policy(r->vm->fd, "fuzzpol", nr, 0);
}

static void rig_get(struct rig *r, struct kvm_prefetch_policy *p)
{
	KT_ASSERT(!ktsys_get_policy(r->vm->fd, p), "GET");
}

/* Compare KVM's leaves with the model; the number of differences. */
static long check(const struct fcase *c, const struct model *m,
		  const struct leaves *l, const uint64_t *pm, char *what,
		  size_t len)
{
	long bad = 0;
	uint32_t i;

	what[0] = '\0';
	for (i = 0; i < MAXP; i++) {
		bool want = c->kind == K_THP ? m->mapped[i] || m->allowed[i] :
			    m->mapped[i];
		uint64_t pfn;

		if (!l->level[i]) {
			if (c->kind != K_THP && want && !bad++)
				snprintf(what, len, "page %u not mapped", i);
			continue;
		}
		if (i >= c->np || !want) {
			if (!bad++)
				snprintf(what, len, "page %u mapped, outside the contract", i);
			continue;
		}
		pfn = ktsys_leaf_pfn(l->spte[i], l->level[i], i);
		if (pfn != ktsys_pagemap_pfn(pm[i])) {
			if (!bad++)
				snprintf(what, len, "page %u on pfn %#llx, the host's is %#llx",
					 i, (unsigned long long)pfn,
					 (unsigned long long)ktsys_pagemap_pfn(pm[i]));
			continue;
		}
		if (c->kind == K_RO && (l->spte[i] & KTSYS_SPTE_WRITABLE) && !bad++)
			snprintf(what, len, "page %u writable in a read-only slot", i);
	}
	return bad;
}

static bool one_case(struct rig *r, unsigned long n, uint64_t seed)
{
	static const struct fcase quiet = { .nans = 1 };
	static uint64_t pm[MAXP];
	static struct leaves l;
	static struct model m;
	char desc[1024], what[160];
	uint64_t ej0, ej1;
	struct fcase c;
	uint32_t flags;
	char *mem;
	long calls, bad, prefill;
	uint64_t t0, t1, t2;
	int i;

	memset(&c, 0, sizeof(c));
	make_case(&c, r->thp);
	mem = c.kind == K_THP ? r->memthp : r->mem4k;
	flags = c.kind == K_RO ? KVM_MEM_READONLY :
		c.kind == K_DIRTY ? KVM_MEM_LOG_DIRTY_PAGES : 0;
	t0 = kt_now_ns();
	trace_record(false);
	kt_vm_delete_slot(r->vm, SLOT);
	kt_vm_add_slot(r->vm, SLOT, GPA, (uint64_t)c.np * KT_PAGE_SIZE, flags,
		       mem);
	/*
	 * The memslot update zapped the guest's code page too: fault it in
	 * again while the policy answers no, then arm the case's answers.
	 */
	set_answers(&quiet);
	kt_touch(r->vcpu, 0, 0, 0, KT_TOUCH_WRITE);
	set_answers(&c);
	KT_ASSERT(!ktsys_write(ENGINE_PATH, c.fault_engine ? "fault" : "batch"),
		  "prefetch_engine");
	model_run(&c, &m, r->pol.nr, r->pol.ejected);

	ej0 = kt_vcpu_stat_get(r->vcpu, "prefetch_ejected");
	read_trace(NULL);
	trace_record(true);
	t1 = kt_now_ns();
	tot.ns_slot += t1 - t0;
	for (i = 0; i < c.nacc; i++) {
		uint32_t gpa = (uint32_t)(GPA + c.acc[i] * KT_PAGE_SIZE);

		kt_touch(r->vcpu, gpa, gpa + KT_PAGE_SIZE, 0,
			 c.write[i] ? KT_TOUCH_WRITE : KT_TOUCH_READ);
		if (verbose) {
			calls = fuzz_param_long("calls");
			kt_info("case %lu access %d (page %u): pf_taken %llu, calls %ld, prefetch_mapped %llu",
				n, i, c.acc[i],
				(unsigned long long)kt_vcpu_stat_get(r->vcpu, "pf_taken"),
				calls,
				(unsigned long long)kt_vcpu_stat_get(r->vcpu, "prefetch_mapped"));
		}
	}
	t2 = kt_now_ns();
	tot.ns_guest += t2 - t1;
	trace_record(false);
	read_trace(&l);
	tot.ns_trace += kt_now_ns() - t2;
	ktsys_pagemap(mem, c.np, pm);
	ej1 = kt_vcpu_stat_get(r->vcpu, "prefetch_ejected");
	calls = fuzz_param_long("calls");
	prefill = fuzz_param_long("bad_prefill");

	bad = check(&c, &m, &l, pm, what, sizeof(what));
	if (l.neighbours && !bad++)
		snprintf(what, sizeof(what), "%ld pages of the memslots around mapped",
			 l.neighbours);
	if (prefill != r->bad_prefill && !bad++)
		snprintf(what, sizeof(what), "%ld window() calls found no pre-filled window",
			 prefill - r->bad_prefill);
	r->bad_prefill = prefill;
	if (c.kind == K_THP) {
		struct kvm_prefetch_policy p;

		/* Calls and ejections are not the model's to count here. */
		KT_ASSERT(!ktsys_get_policy(r->vm->fd, &p), "GET");
		m.ejected = !strcmp(p.name, "none");
		m.calls = calls;
		ej0 = ej1 - (m.ejected && !r->pol.ejected);
	}
	if (calls != m.calls && !bad++)
		snprintf(what, sizeof(what), "policy called %ld times, model %d",
			 calls, m.calls);
	if (ej1 - ej0 != (uint64_t)(m.ejected && !r->pol.ejected) && !bad++)
		snprintf(what, sizeof(what), "prefetch_ejected +%llu, model %d",
			 (unsigned long long)(ej1 - ej0),
			 m.ejected && !r->pol.ejected);
	if (l.lost) {
		kt_skip("case %lu: trace events lost", n);
		bad = 0;
	}
	for (i = 0; i < MAXP; i++)
		fz_tot.mapped += l.level[i] != 0;
	tot.thp_cases += c.kind == K_THP;
	fz_case_done(&r->pol, &m);
	if (bad || verbose) {
		describe(&c, r->pol.nr, desc, sizeof(desc));
		kt_info("case %lu: %s", n, desc);
	}
	if (bad) {
		kt_fail("seed %llu case %lu: %ld differences from the model, first: %s; case: %s",
			(unsigned long long)seed, n, bad, what, desc);
		return false;
	}
	return true;
}

/* The sysfs default's init() fails: new VMs start on none. */
static void default_cases(void)
{
	static const int rets[] = { 1, -5000, INT_MIN, -ENOMEM };
	struct kvm_prefetch_policy p;
	char old[32], val[16];
	struct kt_vm *vm;
	unsigned int i;

	KT_ASSERT(!ktsys_read_line(DEFAULT_PATH, old, sizeof(old)), "read default");
	KT_ASSERT(!ktsys_write(DEFAULT_PATH, "fuzzpol"), "default fuzzpol");
	for (i = 0; i < sizeof(rets) / sizeof(rets[0]); i++) {
		snprintf(val, sizeof(val), "%d", rets[i]);
		fuzz_param("init_ret", val);
		vm = kt_vm_create();
		KT_ASSERT(!ktsys_get_policy(vm->fd, &p), "GET");
		KT_EXPECT(!strcmp(p.name, "none"),
			  "default policy whose init() returns %d: a new VM starts on none (%s)",
			  rets[i], p.name);
		kt_vm_free(vm);
	}
	fuzz_param("init_ret", "0");
	KT_ASSERT(!ktsys_write(DEFAULT_PATH, old), "default %s", old);
}

int main(void)
{
	unsigned long seed = DEFAULT_SEED, cases = DEFAULT_CASES, failed;
	char thp_was[64];
	uint64_t t0 = kt_now_ns();
	struct rig r = { 0 };
	char engine[16];
	long users;

	ktsys_start_random(1800, "fuzz", engine, sizeof(engine), &seed, &cases);
	verbose = ktsys_cmdline_ulong("kp.fuzz.verbose", 0);
	rng = seed * 0x9e3779b97f4a7c15ULL + 1;
	r.thp = ktsys_thp_madvise(thp_was, sizeof(thp_was));
	r.mem4k = kt_populated(MAXP * KT_PAGE_SIZE, GPA);
	r.memthp = r.thp ? kt_thp_memory(MAXP * KT_PAGE_SIZE, 0x5a) : NULL;

	r.vm = kt_vm_create();
	kt_vm_add_slot(r.vm, SLOT, GPA, MAXP * KT_PAGE_SIZE, 0, r.mem4k);
	kt_vm_add_slot(r.vm, SLOT_BELOW, GPA - NEIGH_PAGES * KT_PAGE_SIZE,
		       NEIGH_PAGES * KT_PAGE_SIZE, 0,
		       kt_populated(NEIGH_PAGES * KT_PAGE_SIZE,
				    GPA - NEIGH_PAGES * KT_PAGE_SIZE));
	kt_vm_add_slot(r.vm, SLOT_ABOVE, GPA + MAXP * KT_PAGE_SIZE,
		       NEIGH_PAGES * KT_PAGE_SIZE, 0,
		       kt_populated(NEIGH_PAGES * KT_PAGE_SIZE,
				    GPA + MAXP * KT_PAGE_SIZE));
	r.vcpu = kt_vcpu_add(r.vm, 0);
	kt_touch(r.vcpu, 0, 0, 0, KT_TOUCH_WRITE);
	/* Autoloads the module: its parameters exist from here on. */
	set_fuzzpol(&r, &r.pol, 512);
	trace_open();

	failed = fz_run(&r, &r.pol, cases, seed);
	kt_info("seed %lu: %ld cases (%ld THP), %ld init() answers, %ld windows asked, %ld pages mapped, %ld ejections, %.1f s (memslots and policy %.1f, guest %.1f, trace %.1f)",
		seed, fz_tot.cases, tot.thp_cases, fz_tot.init_cases, fz_tot.windows,
		fz_tot.mapped, fz_tot.ejections, (kt_now_ns() - t0) / 1e9,
		tot.ns_slot / 1e9, tot.ns_guest / 1e9, tot.ns_trace / 1e9);
	fz_verdict(cases, failed);

	trace_close();
	KT_ASSERT(!ktsys_write(ENGINE_PATH, engine), "restore prefetch_engine");
	default_cases();
	kt_vcpu_free(r.vcpu);
	kt_vm_free(r.vm);
	users = fuzz_param_long("users");
	KT_EXPECT(users == 0, "no VM holds the policy after the VMs are gone (%ld)",
		  users);
	KT_EXPECT(system("rmmod kvm_prefetch_fuzzpol") == 0,
		  "the policy module unloads");
	if (r.thp)
		ktsys_thp_restore(thp_was);
	return kt_exit();
}
