// SPDX-License-Identifier: GPL-2.0
/*
 * prefetch_fuzz: tests/vm/prefetch_fuzz.c on arm64's stage-2 engine.  The
 * policy is kvm-prefetch-fuzzpol, whose every answer (init()'s return,
 * window()'s return and window, call by call) this program draws from the
 * seeded generator of tests/vm/lib/prefetch_model.h; the reference model
 * of the same file says what the engine must do with them.
 *
 * Each case re-creates a memslot of up to 512 4 KiB host pages (writable,
 * read-only or dirty-logged) inside one host mapping that also backs
 * memslots right below and above it, and lets the guest touch a few
 * random pages, one run each.  arm64 has no trace event for stage-2
 * entries, so the oracle is the model's counts, exact per access: whether
 * it was a guest fault (pf_taken) and how many pages its window mapped
 * (prefetch_mapped); then the policy's calls, the windows it found not
 * pre-filled (fuzzpol's bad_prefill), prefetch_ejected and the VM's
 * policy (GET).  A window mapped outside its memslot (the clip gone) maps
 * host pages of the mapping around it, and shows as more pages than the
 * model's.  KVM_SET_PREFETCH_POLICY must return what the contract says
 * for each init() answer.  The VM is freed and the module unloaded at the
 * end.  kp.fuzz.seed=N kp.fuzz.cases=N on the command line.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "a64.h"

#define SLOT		1
#define SLOT_BELOW	2
#define SLOT_ABOVE	3
#define GPA		0x2000000ULL
#define GFN0		(GPA >> 12)
#define MAXP		512		/* a window walk never reaches the budget's minimum */
#define NEIGH		64
#define FZ_GFN0		GFN0
#define FZ_MAXP		MAXP
#define DEFAULT_SEED	20261206ULL
#define DEFAULT_CASES	10000

#include "../vm/lib/prefetch_model.h"

static char *host;	/* NEIGH + MAXP + NEIGH pages */

struct rig {
	struct a64_vm *vm;
	struct a64_vcpu *vcpu;
	struct fz_vm pol;	/* what the model says of the VM's policy */
	long bad_prefill;
};

static int rig_set(struct rig *r, uint32_t nr)
{
	return a64_vm_set_prefetch(r->vm, "fuzzpol", nr, 0);
}

static void rig_get(struct rig *r, struct kvm_prefetch_policy *p)
{
	memset(p, 0, sizeof(*p));
	A64_ASSERT(!ioctl(r->vm->fd, KVM_GET_PREFETCH_POLICY, p), "GET: %s",
		   strerror(errno));
}

static bool one_case(struct rig *r, unsigned long n, uint64_t seed)
{
	static const struct fcase quiet = { .nans = 1 };
	uint64_t pf0, m0, ej0, ej1, pf, mp;
	char what[160] = "", desc[1024];
	struct kvm_prefetch_policy p;
	struct model m;
	struct fcase c;
	long calls, prefill, bad = 0;
	uint32_t flags;
	int i;

	memset(&c, 0, sizeof(c));
	make_case(&c, false);
	flags = c.kind == K_RO ? KVM_MEM_READONLY :
		c.kind == K_DIRTY ? KVM_MEM_LOG_DIRTY_PAGES : 0;
	set_answers(&quiet);
	a64_vm_delete_slot(r->vm, SLOT);
	a64_vm_add_slot(r->vm, SLOT, GPA, c.np * A64_PAGE, flags,
			host + NEIGH * A64_PAGE, false);
	set_answers(&c);
	model_run(&c, &m, r->pol.nr, r->pol.ejected);

	ej0 = a64_vcpu_stat_get(r->vcpu, "prefetch_ejected");
	for (i = 0; i < c.nacc; i++) {
		uint64_t gpa = GPA + c.acc[i] * A64_PAGE;

		pf0 = a64_vcpu_stat_get(r->vcpu, "pf_taken");
		m0 = a64_vcpu_stat_get(r->vcpu, "prefetch_mapped");
		a64_touch(r->vcpu, gpa, gpa + A64_PAGE, 0,
			  c.write[i] ? A64_TOUCH_WRITE : A64_TOUCH_READ);
		pf = a64_vcpu_stat_get(r->vcpu, "pf_taken") - pf0;
		mp = a64_vcpu_stat_get(r->vcpu, "prefetch_mapped") - m0;
		fz_tot.mapped += mp;
		if ((pf != m.faulted[i] || mp != m.newly[i]) && !bad++)
			snprintf(what, sizeof(what),
				 "access %d (page %u): %llu faults, %llu pages prefetched; model %d, %u",
				 i, c.acc[i], (unsigned long long)pf,
				 (unsigned long long)mp, m.faulted[i],
				 m.newly[i]);
	}
	ej1 = a64_vcpu_stat_get(r->vcpu, "prefetch_ejected");
	calls = fuzz_param_long("calls");
	prefill = fuzz_param_long("bad_prefill");
	rig_get(r, &p);
	if (calls != m.calls && !bad++)
		snprintf(what, sizeof(what), "policy called %ld times, model %d",
			 calls, m.calls);
	if (prefill != r->bad_prefill && !bad++)
		snprintf(what, sizeof(what), "%ld window() calls found no pre-filled window",
			 prefill - r->bad_prefill);
	if (ej1 - ej0 != (uint64_t)(m.ejected && !r->pol.ejected) && !bad++)
		snprintf(what, sizeof(what), "prefetch_ejected +%llu, model %d",
			 (unsigned long long)(ej1 - ej0), m.ejected && !r->pol.ejected);
	if (strcmp(p.name, m.ejected ? "none" : "fuzzpol") && !bad++)
		snprintf(what, sizeof(what), "GET says %s, model %s", p.name,
			 m.ejected ? "none" : "fuzzpol");
	r->bad_prefill = prefill;
	fz_case_done(&r->pol, &m);
	if (!bad)
		return true;
	describe(&c, r->pol.nr, desc, sizeof(desc));
	a64_fail("seed %llu case %lu: %s; case: %s", (unsigned long long)seed,
		 n, what, desc);
	return false;
}

static unsigned long cmdline_opt(const char *name, unsigned long def)
{
	char line[4096] = "", key[64], *p;
	int fd = open("/proc/cmdline", O_RDONLY);

	if (fd < 0)
		return def;
	if (read(fd, line, sizeof(line) - 1) < 0)
		line[0] = '\0';
	close(fd);
	snprintf(key, sizeof(key), "kp.fuzz.%s=", name);
	p = strstr(line, key);
	return p ? strtoul(p + strlen(key), NULL, 0) : def;
}

int main(void)
{
	unsigned long seed, cases, failed;
	uint64_t total = (NEIGH + MAXP + NEIGH) * A64_PAGE, off;
	uint64_t t0 = a64_now_ns();
	struct rig r = { 0 };

	a64_require_kvm();
	seed = cmdline_opt("seed", DEFAULT_SEED);
	cases = cmdline_opt("cases", DEFAULT_CASES);
	rng = seed * 0x9e3779b97f4a7c15ULL + 1;

	host = mmap(NULL, total, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	A64_ASSERT(host != MAP_FAILED, "mmap: %s", strerror(errno));
	A64_ASSERT(!madvise(host, total, MADV_NOHUGEPAGE), "madvise");
	for (off = 0; off < total; off += A64_PAGE)
		*(uint32_t *)(host + off) = (uint32_t)(GPA - NEIGH * A64_PAGE + off);

	r.vm = a64_vm_create();
	a64_vm_add_slot(r.vm, SLOT_BELOW, GPA - NEIGH * A64_PAGE,
			NEIGH * A64_PAGE, 0, host, false);
	a64_vm_add_slot(r.vm, SLOT, GPA, MAXP * A64_PAGE, 0,
			host + NEIGH * A64_PAGE, false);
	a64_vm_add_slot(r.vm, SLOT_ABOVE, GPA + MAXP * A64_PAGE,
			NEIGH * A64_PAGE, 0, host + (NEIGH + MAXP) * A64_PAGE,
			false);
	r.vcpu = a64_vcpu_add(r.vm, 0);
	/* The code page's fault first, on none. */
	a64_touch(r.vcpu, GPA, GPA, 0, A64_TOUCH_WRITE);
	if (a64_vm_set_prefetch(r.vm, "fuzzpol", 512, 0)) {
		a64_skip("no fuzzpol policy module");
		return a64_exit();
	}
	r.pol.nr = 512;

	failed = fz_run(&r, &r.pol, cases, seed);
	a64_info("seed %lu: %ld cases, %ld init() answers, %ld windows asked, %ld pages prefetched, %ld ejections, %.1f s",
		 seed, fz_tot.cases, fz_tot.init_cases, fz_tot.windows, fz_tot.mapped,
		 fz_tot.ejections, (a64_now_ns() - t0) / 1e9);
	fz_verdict(cases, failed);
	a64_vcpu_free(r.vcpu);
	a64_vm_free(r.vm);
	A64_EXPECT(fuzz_param_long("users") == 0,
		   "no VM holds the policy after the VM is gone");
	A64_EXPECT(!syscall(SYS_delete_module, "kvm_prefetch_fuzzpol", O_NONBLOCK),
		   "the policy module unloads (%s)", strerror(errno));
	return a64_exit();
}
