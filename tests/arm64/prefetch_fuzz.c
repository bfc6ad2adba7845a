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

#define FUZZ_PARAM	"/sys/module/kvm_prefetch_fuzzpol/parameters/"
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

static struct {
	long cases, windows, mapped, ejections, init_cases;
} tot;

struct rig {
	struct a64_vm *vm;
	struct a64_vcpu *vcpu;
	uint32_t vm_nr;
	bool ejected;
	long bad_prefill;
};

static int write_str(const char *path, const char *val)
{
	int fd = open(path, O_WRONLY), r = 0;

	if (fd < 0)
		return -errno;
	if (write(fd, val, strlen(val)) < 0)
		r = -errno;
	close(fd);
	return r;
}

static long read_long(const char *path)
{
	char buf[64] = "";
	int fd = open(path, O_RDONLY);
	ssize_t n;

	A64_ASSERT(fd >= 0, "%s: %s", path, strerror(errno));
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	A64_ASSERT(n > 0, "%s: read", path);
	return strtol(buf, NULL, 10);
}

static void fuzz_param(const char *name, const char *val)
{
	char path[128];
	int r;

	snprintf(path, sizeof(path), FUZZ_PARAM "%s", name);
	r = write_str(path, val);
	A64_ASSERT(!r, "%s=%s: %s", path, val, strerror(-r));
}

static int get_policy(struct a64_vm *vm, struct kvm_prefetch_policy *p)
{
	memset(p, 0, sizeof(*p));
	return ioctl(vm->fd, KVM_GET_PREFETCH_POLICY, p) ? -errno : 0;
}

static void set_fuzzpol(struct rig *r, uint32_t vm_nr)
{
	int e = a64_vm_set_prefetch(r->vm, "fuzzpol", vm_nr, 0);

	A64_ASSERT(!e, "SET fuzzpol %u: %s", vm_nr, strerror(-e));
	r->vm_nr = vm_nr;
	r->ejected = false;
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
	model_run(&c, &m, r->vm_nr, r->ejected);

	ej0 = a64_vcpu_stat_get(r->vcpu, "prefetch_ejected");
	for (i = 0; i < c.nacc; i++) {
		uint64_t gpa = GPA + c.acc[i] * A64_PAGE;

		pf0 = a64_vcpu_stat_get(r->vcpu, "pf_taken");
		m0 = a64_vcpu_stat_get(r->vcpu, "prefetch_mapped");
		a64_touch(r->vcpu, gpa, gpa + A64_PAGE, 0,
			  c.write[i] ? A64_TOUCH_WRITE : A64_TOUCH_READ);
		pf = a64_vcpu_stat_get(r->vcpu, "pf_taken") - pf0;
		mp = a64_vcpu_stat_get(r->vcpu, "prefetch_mapped") - m0;
		tot.mapped += mp;
		if ((pf != m.faulted[i] || mp != m.newly[i]) && !bad++)
			snprintf(what, sizeof(what),
				 "access %d (page %u): %llu faults, %llu pages prefetched; model %d, %u",
				 i, c.acc[i], (unsigned long long)pf,
				 (unsigned long long)mp, m.faulted[i],
				 m.newly[i]);
	}
	ej1 = a64_vcpu_stat_get(r->vcpu, "prefetch_ejected");
	calls = read_long(FUZZ_PARAM "calls");
	prefill = read_long(FUZZ_PARAM "bad_prefill");
	A64_ASSERT(!get_policy(r->vm, &p), "GET");
	if (calls != m.calls && !bad++)
		snprintf(what, sizeof(what), "policy called %ld times, model %d",
			 calls, m.calls);
	if (prefill != r->bad_prefill && !bad++)
		snprintf(what, sizeof(what), "%ld window() calls found no pre-filled window",
			 prefill - r->bad_prefill);
	if (ej1 - ej0 != (uint64_t)(m.ejected && !r->ejected) && !bad++)
		snprintf(what, sizeof(what), "prefetch_ejected +%llu, model %d",
			 (unsigned long long)(ej1 - ej0), m.ejected && !r->ejected);
	if (strcmp(p.name, m.ejected ? "none" : "fuzzpol") && !bad++)
		snprintf(what, sizeof(what), "GET says %s, model %s", p.name,
			 m.ejected ? "none" : "fuzzpol");
	r->bad_prefill = prefill;
	tot.cases++;
	tot.windows += m.calls;
	tot.ejections += m.ejected && !r->ejected;
	r->ejected = m.ejected;
	if (!bad)
		return true;
	describe(&c, r->vm_nr, desc, sizeof(desc));
	a64_fail("seed %llu case %lu: %s; case: %s", (unsigned long long)seed,
		 n, what, desc);
	return false;
}

static bool init_case(struct rig *r, unsigned long n)
{
	const struct init_answer *a = &init_answers[rnd(NR_INIT_ANSWERS)];
	uint32_t vm_nr = 2 + rnd(1100);
	struct kvm_prefetch_policy p;
	int e;

	set_init_answer(a);
	e = a64_vm_set_prefetch(r->vm, "fuzzpol", vm_nr, 0);
	set_init_answer(NULL);
	tot.init_cases++;
	if (!e) {
		r->vm_nr = vm_nr;
		r->ejected = false;
	}
	A64_ASSERT(!get_policy(r->vm, &p), "GET");
	if (e != a->want || strcmp(p.name, r->ejected ? "none" : "fuzzpol") ||
	    p.nr_pages != r->vm_nr) {
		a64_fail("case %lu: init() %d%s: SET %d (want %d), GET %s %u",
			 n, a->ret, a->scribble ? " changing nr_pages" : "", e,
			 a->want, p.name, p.nr_pages);
		return false;
	}
	return true;
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
	r.vm_nr = 512;

	failed = fz_run(&r, &r.ejected, cases, seed);
	a64_info("seed %lu: %ld cases, %ld init() answers, %ld windows asked, %ld pages prefetched, %ld ejections, %.1f s",
		 seed, tot.cases, tot.init_cases, tot.windows, tot.mapped,
		 tot.ejections, (a64_now_ns() - t0) / 1e9);
	fz_verdict(cases, failed, tot.cases + tot.init_cases, tot.cases,
		   tot.ejections, tot.mapped);
	a64_vcpu_free(r.vcpu);
	a64_vm_free(r.vm);
	A64_EXPECT(read_long(FUZZ_PARAM "users") == 0,
		   "no VM holds the policy after the VM is gone");
	A64_EXPECT(!syscall(SYS_delete_module, "kvm_prefetch_fuzzpol", O_NONBLOCK),
		   "the policy module unloads (%s)", strerror(errno));
	return a64_exit();
}
