// SPDX-License-Identifier: GPL-2.0
/*
 * prefetch_policy_ioctl - KVM_SET/GET_PREFETCH_POLICY and the capability.
 *
 *  - KVM_CHECK_EXTENSION on /dev/kvm and on a VM fd: PREFETCH_POLICY ==
 *    262144 and PRE_FAULT_MEMORY == 1 with TDP;
 *  - GET fills flags, pad, reserved (and the name's tail) with zeroes;
 *  - every SET error (EFAULT, each EINVAL case, ENOENT) and GET after it
 *    returns the unchanged policy;
 *  - SET with nr_pages 0 / gup 0 resolves to the sysfs defaults at call
 *    time (and an effective window of 0 reads back as 1); setting the same
 *    values twice succeeds; the VM's debugfs line matches GET;
 *  - switching stress: 4 vCPU threads fault their own ranges again and
 *    again (MADV_DONTNEED between passes, contents checked every pass)
 *    while a thread switches the policy among none/manual/async/auto with
 *    random nr_pages and gup modes for ~10 s; kvm.ko's refcnt returns to
 *    its starting value once the VM is closed;
 *  - with kvm tdp_mmu=0 (nothing prefetches): KVM_CAP_PREFETCH_POLICY 0
 *    on the VM, PRE_FAULT_MEMORY 1, SET fails EOPNOTSUPP;
 *  - with kvm_amd npt=0: both capabilities 0 and SET fails EOPNOTSUPP.
 * Ends with "kvm-reload ours" (default parameters).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/utsname.h>

#include "kvmtest.h"
#include "kt_sys.h"

#define CAP_PRE_FAULT	236	/* upstream's number, checked literally */

/* ---- capabilities and GET ---------------------------------------------- */

/* KVM_CHECK_EXTENSION(@cap) on /dev/kvm and on the VM are both @want. */
static void expect_cap(struct kt_vm *vm, long cap, const char *name,
		       int want, const char *when)
{
	int r;

	r = kt_kvm_check_ext(vm, cap);
	KT_EXPECT(r == want,
		  "%s: CHECK_EXTENSION(%s) on /dev/kvm = %d (want %d)",
		  when, name, r, want);
	r = kt_vm_check_ext(vm, cap);
	KT_EXPECT(r == want,
		  "%s: CHECK_EXTENSION(%s) on the VM = %d (want %d)",
		  when, name, r, want);
}

static void check_caps(struct kt_vm *vm, int want_policy, int want_prefault,
		       const char *when)
{
	expect_cap(vm, KVM_CAP_PREFETCH_POLICY, "KVM_CAP_PREFETCH_POLICY",
		   want_policy, when);
	expect_cap(vm, CAP_PRE_FAULT, "236 PRE_FAULT_MEMORY", want_prefault,
		   when);
}

/* GET into a 0xff-filled struct; all of it must be as @want. */
static bool expect_policy(struct kt_vm *vm, const char *name, uint32_t nr,
			  uint32_t gup, const char *when)
{
	struct kvm_prefetch_policy want, got;
	char ws[96], gs[96];
	int r;

	ktsys_policy_fill(&want, name, nr, gup);
	memset(&got, 0xff, sizeof(got));
	r = ktsys_get_policy(vm->fd, &got);
	if (r) {
		kt_fail("%s: KVM_GET_PREFETCH_POLICY: %s", when, strerror(-r));
		return false;
	}
	if (ktsys_policy_eq(&want, &got))
		return true;
	ktsys_policy_str(&want, ws, sizeof(ws));
	ktsys_policy_str(&got, gs, sizeof(gs));
	kt_fail("%s: GET gives \"%s\" flags 0x%x pad 0x%x reserved 0x%llx/0x%llx/0x%llx/0x%llx, want \"%s\" and zeroes",
		when, gs, got.flags, got.pad,
		(unsigned long long)got.reserved[0],
		(unsigned long long)got.reserved[1],
		(unsigned long long)got.reserved[2],
		(unsigned long long)got.reserved[3], ws);
	return false;
}

static void expect_debugfs(struct kt_vm *vm, const char *when)
{
	struct kvm_prefetch_policy got;
	char dbg[256], gs[96];
	int r;

	r = ktsys_get_policy(vm->fd, &got);
	KT_ASSERT(!r, "GET: %s", strerror(-r));
	ktsys_policy_str(&got, gs, sizeof(gs));
	r = ktsys_vm_debugfs_policy(vm->fd, dbg, sizeof(dbg));
	if (r) {
		kt_fail("%s: read debugfs prefetch_policy: %s", when,
			strerror(-r));
		return;
	}
	KT_EXPECT(!strcmp(dbg, gs), "%s: debugfs \"%s\" matches GET \"%s\"",
		  when, dbg, gs);
}

static void check_get_zero_fill(struct kt_vm *vm)
{
	struct kvm_prefetch_policy got;
	size_t len, i, dirty = 0;
	int r;

	memset(&got, 0xff, sizeof(got));
	r = ktsys_get_policy(vm->fd, &got);
	KT_ASSERT(!r, "GET: %s", strerror(-r));
	len = strnlen(got.name, sizeof(got.name));
	KT_EXPECT(len > 0 && len < sizeof(got.name),
		  "GET name NUL-terminated within 16 bytes (length %zu)", len);
	for (i = len; i < sizeof(got.name); i++)
		dirty += got.name[i] != 0;
	KT_EXPECT(!dirty, "GET zeroes the name's %zu tail bytes (%zu not zero)",
		  sizeof(got.name) - len, dirty);
	KT_EXPECT(got.flags == 0 && got.pad == 0,
		  "GET zeroes flags (0x%x) and pad (0x%x)", got.flags, got.pad);
	KT_EXPECT(!got.reserved[0] && !got.reserved[1] && !got.reserved[2] &&
		  !got.reserved[3], "GET zeroes reserved[0..3]");
	KT_EXPECT(got.nr_pages != 0 && (got.gup == KVM_PREFETCH_GUP_NOFAULT ||
					got.gup == KVM_PREFETCH_GUP_FAST_ONLY),
		  "GET reports effective nr_pages %u (not 0) and gup %u (1 or 2)",
		  got.nr_pages, got.gup);
}

/* ---- SET errors ----------------------------------------------------------- */

/* The policy set before every failing SET, and expected after it. */
#define REF_NAME	"manual"
#define REF_NR		32
#define REF_GUP		KVM_PREFETCH_GUP_FAST_ONLY

/*
 * The argument of each failing SET, byte for byte: a name of 16
 * characters fills the array and has no NUL.
 */
static const struct bad_set {
	struct kvm_prefetch_policy p;
	int err;
	const char *why;
} bad_sets[] = {
	{ { .name = "auto", .nr_pages = 8, .gup = 1, .flags = 1 },
	  EINVAL, "flags 1" },
	{ { .name = "auto", .nr_pages = 8, .gup = 1, .flags = 0x80000000 },
	  EINVAL, "flags bit 31" },
	{ { .name = "auto", .nr_pages = 8, .gup = 1, .pad = 1 },
	  EINVAL, "pad 1" },
	{ { .name = "auto", .nr_pages = 8, .gup = 1, .reserved[0] = 1 },
	  EINVAL, "reserved[0] 1" },
	{ { .name = "auto", .nr_pages = 8, .gup = 1, .reserved[1] = 1ULL << 63 },
	  EINVAL, "reserved[1] bit 63" },
	{ { .name = "auto", .nr_pages = 8, .gup = 1, .reserved[2] = 2 },
	  EINVAL, "reserved[2] 2" },
	{ { .name = "auto", .nr_pages = 8, .gup = 1, .reserved[3] = 1 },
	  EINVAL, "reserved[3] 1" },
	{ { .name = "", .nr_pages = 8, .gup = 1 },
	  EINVAL, "empty name" },
	{ { .name = "abcdefghijklmnop", .nr_pages = 8, .gup = 1 },
	  EINVAL, "name not NUL-terminated within 16 bytes" },
	{ { .name = "autoautoautoauto", .nr_pages = 8, .gup = 1 },
	  EINVAL, "16 bytes starting with a registered name, no NUL" },
	{ { .name = "AUTO", .nr_pages = 8, .gup = 1 },
	  EINVAL, "uppercase name" },
	{ { .name = "a b", .nr_pages = 8, .gup = 1 },
	  EINVAL, "name with a space" },
	{ { .name = "au.to", .nr_pages = 8, .gup = 1 },
	  EINVAL, "name with a dot" },
	{ { .name = "auto\n", .nr_pages = 8, .gup = 1 },
	  EINVAL, "name with a newline" },
	{ { .name = "\xc3\xa4uto", .nr_pages = 8, .gup = 1 },
	  EINVAL, "non-ASCII name" },
	{ { .name = "auto", .nr_pages = 262145, .gup = 1 },
	  EINVAL, "nr_pages 262145" },
	{ { .name = "auto", .nr_pages = 0xffffffff, .gup = 1 },
	  EINVAL, "nr_pages 2^32-1" },
	{ { .name = "auto", .nr_pages = 8, .gup = 3 },
	  EINVAL, "gup 3" },
	{ { .name = "auto", .nr_pages = 8, .gup = 0xffffffff },
	  EINVAL, "gup 2^32-1" },
	{ { .name = "bogus", .nr_pages = 8, .gup = 1 },
	  ENOENT, "unregistered name" },
	{ { .name = "abcdefghijklmno", .nr_pages = 8, .gup = 1 },
	  ENOENT, "unregistered 15-char name" },
	{ { .name = "my-pol_9", .nr_pages = 8, .gup = 1 },
	  ENOENT, "unregistered name with - _ digit" },
};

/*
 * SET with @arg must fail with @err (@err_str in the message) and leave
 * the reference policy in place: one check for the errno, one for GET.
 */
static void expect_set_fails(struct kt_vm *vm, const void *arg, int err,
			     const char *err_str, const char *why)
{
	char when[128];
	int r;

	r = ktsys_set_policy_ptr(vm->fd, arg);
	KT_EXPECT(r == -err, "SET with %s fails with %s (got %s)", why,
		  err_str, r ? strerror(-r) : "success");
	snprintf(when, sizeof(when), "after SET with %s", why);
	if (expect_policy(vm, REF_NAME, REF_NR, REF_GUP, when))
		kt_pass("%s: policy unchanged", when);
}

static void check_bad_sets(struct kt_vm *vm)
{
	size_t i;
	int r;

	r = ktsys_set_policy(vm->fd, REF_NAME, REF_NR, REF_GUP);
	KT_ASSERT(!r, "SET manual 32 fast: %s", strerror(-r));
	KT_ASSERT(expect_policy(vm, REF_NAME, REF_NR, REF_GUP, "reference"),
		  "reference policy");

	for (i = 0; i < ARRAY_SIZE(bad_sets); i++)
		expect_set_fails(vm, &bad_sets[i].p, bad_sets[i].err,
				 strerror(bad_sets[i].err), bad_sets[i].why);
}

/* EFAULT: NULL, an unmapped page, a struct running into one; GET too. */
static void check_set_efault(struct kt_vm *vm)
{
	struct kvm_prefetch_policy *half;
	char *page;
	int r;

	page = mmap(NULL, 2 * 4096, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	KT_ASSERT(page != MAP_FAILED, "mmap: %s", strerror(errno));
	KT_ASSERT(!munmap(page + 4096, 4096), "munmap: %s", strerror(errno));

	/* The readable half is a valid prefix of a policy. */
	half = (void *)(page + 4096 - 32);
	memset(page, 0, 4096);
	memcpy(half->name, "auto", 4);
	half->nr_pages = 8;
	half->gup = 1;

	expect_set_fails(vm, NULL, EFAULT, "EFAULT", "NULL pointer");
	expect_set_fails(vm, page + 4096, EFAULT, "EFAULT",
			 "pointer to an unmapped page");
	expect_set_fails(vm, half, EFAULT, "EFAULT",
			 "struct crossing into an unmapped page");

	r = ioctl(vm->fd, KVM_GET_PREFETCH_POLICY, page + 4096) ? -errno : 0;
	KT_EXPECT(r == -EFAULT,
		  "GET into an unmapped page fails with EFAULT (got %s)",
		  r ? strerror(-r) : "success");
	munmap(page, 4096);
}

/* ---- defaults, idempotence, debugfs ------------------------------------- */

static void check_defaults_resolution(struct kt_vm *vm)
{
	int r;

	KT_ASSERT(!ktsys_set_defaults("auto", "32", "fast"),
		  "sysfs defaults auto/32/fast");
	r = ktsys_set_policy(vm->fd, "async", 0, 0);
	KT_EXPECT(!r, "SET async nr 0 gup 0 (%s)", r ? strerror(-r) : "ok");
	if (expect_policy(vm, "async", 32, KVM_PREFETCH_GUP_FAST_ONLY,
			  "SET nr 0 gup 0 under sysfs 32/fast"))
		kt_pass("nr 0 / gup 0 resolve to the sysfs defaults 32 / fast");
	expect_debugfs(vm, "after SET async 0 0");

	/* Resolved at call time: later default changes do not leak in. */
	KT_ASSERT(!ktsys_set_defaults("none", "64", "nofault"),
		  "sysfs defaults none/64/nofault");
	if (expect_policy(vm, "async", 32, KVM_PREFETCH_GUP_FAST_ONLY,
			  "after sysfs changed to 64/nofault"))
		kt_pass("changing the sysfs defaults leaves the VM at 32 / fast");

	r = ktsys_set_policy(vm->fd, "auto", 0, KVM_PREFETCH_GUP_FAST_ONLY);
	KT_EXPECT(!r, "SET auto nr 0 gup fast (%s)", r ? strerror(-r) : "ok");
	if (expect_policy(vm, "auto", 64, KVM_PREFETCH_GUP_FAST_ONLY,
			  "SET nr 0 gup fast under sysfs 64/nofault"))
		kt_pass("nr 0 resolves alone; an explicit gup wins");

	r = ktsys_set_policy(vm->fd, "manual", 100, 0);
	KT_EXPECT(!r, "SET manual nr 100 gup 0 (%s)", r ? strerror(-r) : "ok");
	if (expect_policy(vm, "manual", 100, KVM_PREFETCH_GUP_NOFAULT,
			  "SET nr 100 gup 0 under sysfs 64/nofault"))
		kt_pass("gup 0 resolves alone; an explicit nr_pages wins");

	/* An effective window of 0 (sysfs 0) is reported as 1. */
	KT_ASSERT(!ktsys_write(KTSYS_P_NR_PAGES, "0"), "sysfs nr_pages 0");
	r = ktsys_set_policy(vm->fd, "auto", 0, 0);
	KT_EXPECT(!r, "SET auto 0 0 under sysfs nr 0 (%s)",
		  r ? strerror(-r) : "ok");
	if (expect_policy(vm, "auto", 1, KVM_PREFETCH_GUP_NOFAULT,
			  "SET nr 0 under sysfs nr_pages 0"))
		kt_pass("an effective window of 0 reads back as nr_pages 1");
	expect_debugfs(vm, "after SET under sysfs nr_pages 0");

	/* Bounds. */
	r = ktsys_set_policy(vm->fd, "auto", 262144, 1);
	KT_EXPECT(!r, "SET nr_pages 262144 (%s)", r ? strerror(-r) : "ok");
	expect_policy(vm, "auto", 262144, 1, "SET nr_pages 262144");
	r = ktsys_set_policy(vm->fd, "none", 1, 2);
	KT_EXPECT(!r, "SET none nr_pages 1 fast (%s)", r ? strerror(-r) : "ok");
	expect_policy(vm, "none", 1, 2, "SET none 1 fast");
	expect_debugfs(vm, "after SET none 1 fast");

	KT_ASSERT(!ktsys_set_defaults("none", "8", "nofault"),
		  "sysfs defaults back to none/8/nofault");
}

static void check_idempotent(struct kt_vm *vm)
{
	static const char * const names[] = { "none", "manual", "async",
					      "auto" };
	char d1[256], d2[256];
	int i, r1, r2;

	for (i = 0; i < 4; i++) {
		uint32_t nr = 1u << (2 * i + 1), gup = 1 + (i & 1);

		r1 = ktsys_set_policy(vm->fd, names[i], nr, gup);
		ktsys_vm_debugfs_policy(vm->fd, d1, sizeof(d1));
		r2 = ktsys_set_policy(vm->fd, names[i], nr, gup);
		ktsys_vm_debugfs_policy(vm->fd, d2, sizeof(d2));
		KT_EXPECT(!r1 && !r2, "SET %s %u %s twice returns 0 twice (%d, %d)",
			  names[i], nr, ktsys_gup_str(gup), r1, r2);
		if (expect_policy(vm, names[i], nr, gup, "after the second SET"))
			kt_pass("GET after SET %s %u %s twice is that policy",
				names[i], nr, ktsys_gup_str(gup));
		KT_EXPECT(!strcmp(d1, d2), "debugfs unchanged by the second SET (\"%s\")",
			  d2);
		expect_debugfs(vm, names[i]);
	}
}

/* ---- switching stress ------------------------------------------------------- */

#define ST_VCPUS	4
#define ST_SLOT		1
#define ST_GPA		0x400000ULL
#define ST_PAGES	128ULL			/* per vCPU */
#define ST_RANGE	(ST_PAGES * KT_PAGE_SIZE)
#define ST_SECONDS	10

static volatile int stop_flag;

struct st_vcpu {
	struct kt_vm *vm;
	struct kt_vcpu *vcpu;
	char *mem;		/* this vCPU's range in the slot */
	uint32_t gpa;		/* its first GPA */
	unsigned long passes, bad;
};

struct st_switch {
	struct kt_vm *vm;
	unsigned long switches, errors;
	unsigned int seed;
};

static void *st_vcpu_thread(void *arg)
{
	struct st_vcpu *s = arg;
	uint32_t end = s->gpa + ST_RANGE;
	uint64_t i;

	while (!__atomic_load_n(&stop_flag, __ATOMIC_RELAXED)) {
		bool populate = s->passes & 1;
		uint32_t seed = 0x9e3779b9u * (uint32_t)(s->passes + 1);
		uint32_t sum, want = 0;

		/* Zap: KVM must drop its mappings, the next pass refaults. */
		if (madvise(s->mem, ST_RANGE, MADV_DONTNEED)) {
			kt_fail("madvise DONTNEED: %s", strerror(errno));
			s->bad++;
			break;
		}
		if (populate) {
			/* Host pages present: prefetch can map them. */
			for (i = 0; i < ST_PAGES; i++) {
				uint32_t v = seed ^ (s->gpa + i * KT_PAGE_SIZE);

				*(uint32_t *)(s->mem + i * KT_PAGE_SIZE) = v;
				want += v;
			}
			sum = kt_touch(s->vcpu, s->gpa, end, 0, KT_TOUCH_READ);
			if (sum != want) {
				if (s->bad++ < 3)
					kt_info("vcpu %d pass %lu: read sum 0x%x, want 0x%x (stale mapping?)",
						s->vcpu->id, s->passes, sum,
						want);
			}
		}
		kt_touch(s->vcpu, s->gpa, end, 0, KT_TOUCH_WRITE);
		for (i = 0; i < ST_PAGES; i++) {
			uint32_t *p = (uint32_t *)(s->mem + i * KT_PAGE_SIZE);
			uint32_t gpa = s->gpa + i * KT_PAGE_SIZE;

			if (p[0] == gpa && p[1] == 0)
				continue;
			if (s->bad++ < 3)
				kt_info("vcpu %d pass %lu: gpa 0x%x holds 0x%x 0x%x, want 0x%x 0",
					s->vcpu->id, s->passes, gpa, p[0],
					p[1], gpa);
		}
		s->passes++;
	}
	return NULL;
}

static void *st_switch_thread(void *arg)
{
	static const char * const names[] = { "none", "manual", "async",
					      "auto" };
	struct st_switch *w = arg;
	struct kvm_prefetch_policy want, got;
	int r;

	while (!__atomic_load_n(&stop_flag, __ATOMIC_RELAXED)) {
		const char *name = names[rand_r(&w->seed) % 4];
		uint32_t nr = 1 + rand_r(&w->seed) % 512;
		uint32_t gup = 1 + rand_r(&w->seed) % 2;

		r = ktsys_set_policy(w->vm->fd, name, nr, gup);
		if (r) {
			if (w->errors++ < 3)
				kt_info("switch %lu: SET %s %u %u: %s",
					w->switches, name, nr, gup,
					strerror(-r));
		} else {
			ktsys_policy_fill(&want, name, nr, gup);
			r = ktsys_get_policy(w->vm->fd, &got);
			if (r || !ktsys_policy_eq(&want, &got)) {
				if (w->errors++ < 3)
					kt_info("switch %lu: GET after SET %s %u %u does not match (%d)",
						w->switches, name, nr, gup, r);
			}
		}
		w->switches++;
		usleep(rand_r(&w->seed) % 2000);
	}
	return NULL;
}

static void switching_stress(void)
{
	struct st_vcpu sv[ST_VCPUS];
	struct st_switch sw;
	pthread_t th[ST_VCPUS], tw;
	unsigned long passes = 0, bad = 0;
	long ref0, ref1, ref_in;
	uint64_t t0;
	struct kt_vm *vm;
	char *mem;
	int i, r;

	r = ktsys_read_long(KTSYS_KVM_REFCNT, &ref0);
	KT_ASSERT(!r, "read %s: %s", KTSYS_KVM_REFCNT, strerror(-r));

	vm = kt_vm_create();
	mem = kt_vm_add_slot(vm, ST_SLOT, ST_GPA, ST_VCPUS * ST_RANGE, 0,
			     NULL);
	for (i = 0; i < ST_VCPUS; i++) {
		sv[i].vm = vm;
		sv[i].vcpu = kt_vcpu_add(vm, i);
		sv[i].mem = mem + i * ST_RANGE;
		sv[i].gpa = ST_GPA + i * ST_RANGE;
		sv[i].passes = 0;
		sv[i].bad = 0;
	}
	if (!ktsys_read_long(KTSYS_KVM_REFCNT, &ref_in))
		kt_info("kvm refcnt %ld before the VM, %ld with it", ref0,
			ref_in);

	sw.vm = vm;
	sw.switches = 0;
	sw.errors = 0;
	sw.seed = (unsigned int)kt_now_ns();
	kt_info("stress: seed %u, %d vCPUs x %llu pages, %d s", sw.seed,
		ST_VCPUS, ST_PAGES, ST_SECONDS);

	stop_flag = 0;
	t0 = kt_now_ns();
	for (i = 0; i < ST_VCPUS; i++)
		KT_ASSERT(!pthread_create(&th[i], NULL, st_vcpu_thread, &sv[i]),
			  "pthread_create");
	KT_ASSERT(!pthread_create(&tw, NULL, st_switch_thread, &sw),
		  "pthread_create");
	sleep(ST_SECONDS);
	__atomic_store_n(&stop_flag, 1, __ATOMIC_RELAXED);
	pthread_join(tw, NULL);
	for (i = 0; i < ST_VCPUS; i++) {
		pthread_join(th[i], NULL);
		passes += sv[i].passes;
		bad += sv[i].bad;
		kt_info("vcpu %d: %lu passes, pf_taken %llu, prefetch_mapped %llu",
			i, sv[i].passes,
			(unsigned long long)kt_vcpu_stat_get(sv[i].vcpu, "pf_taken"),
			(unsigned long long)kt_vcpu_stat_get(sv[i].vcpu,
							     "prefetch_mapped"));
	}
	kt_info("stress: %.1f s, %lu vCPU passes, %lu policy switches",
		(kt_now_ns() - t0) / 1e9, passes, sw.switches);

	KT_EXPECT(!bad, "stress: every pass of every vCPU saw the right contents (%lu bad)",
		  bad);
	KT_EXPECT(!sw.errors && sw.switches >= 20,
		  "stress: %lu SET+GET switches, %lu failed", sw.switches,
		  sw.errors);
	for (i = 0; i < ST_VCPUS; i++)
		KT_EXPECT(sv[i].passes >= 4, "stress: vcpu %d made %lu passes (>= 4)",
			  i, sv[i].passes);

	for (i = 0; i < ST_VCPUS; i++)
		kt_vcpu_free(sv[i].vcpu);
	kt_vm_free(vm);

	/*
	 * A policy state is released after an RCU grace period: give
	 * deferred work up to 2 s to drop its module references.
	 */
	for (i = 0; i < 100; i++) {
		r = ktsys_read_long(KTSYS_KVM_REFCNT, &ref1);
		KT_ASSERT(!r, "read %s: %s", KTSYS_KVM_REFCNT, strerror(-r));
		if (ref1 == ref0)
			break;
		usleep(20000);
	}
	kt_info("kvm refcnt %ld after the VM closed (%d x 20 ms waits)", ref1,
		i);
	KT_EXPECT(ref1 == ref0, "kvm refcnt back to %ld (is %ld)", ref0, ref1);
}

/* ---- tdp_mmu=0 --------------------------------------------------------------- */

/*
 * "kvm-reload @args" (a PASS or FAIL line), then expect @module's
 * parameter @param to read "N" (or, @zero_too, "0"): @what is off.
 * False if the reload failed.
 */
static bool reload_off(const char *args, const char *module,
		       const char *param, bool zero_too, const char *what)
{
	char path[128], val[16] = "";
	int r = ktsys_reload(args);

	if (!KT_EXPECT(r == 0, "kvm-reload %s (status %d)", args, r))
		return false;
	snprintf(path, sizeof(path), "/sys/module/%s/parameters/%s", module,
		 param);
	ktsys_read_line(path, val, sizeof(val));
	KT_EXPECT(!strcmp(val, "N") || (zero_too && !strcmp(val, "0")),
		  "%s %s reads \"%s\" (%s)", module, param, val, what);
	return true;
}

/*
 * The legacy MMU under TDP: nothing is ever prefetched, so the VM reports
 * no KVM_CAP_PREFETCH_POLICY and SET fails EOPNOTSUPP, as without TDP;
 * KVM_PRE_FAULT_MEMORY works there and keeps its capability.  /dev/kvm
 * answers for a VM created now on 6.12; 6.1's kvm.tdp_mmu is writable
 * and read per VM, so there /dev/kvm answers for TDP alone.
 */
static void check_no_tdp_mmu(void)
{
	struct utsname u;
	struct kt_vm *vm;
	int r;

	if (!reload_off("ours tdp_mmu=0", "kvm", "tdp_mmu", false, "legacy MMU"))
		return;

	vm = kt_vm_create();
	r = kt_vm_check_ext(vm, KVM_CAP_PREFETCH_POLICY);
	KT_EXPECT(r == 0, "tdp_mmu=0: CHECK_EXTENSION(KVM_CAP_PREFETCH_POLICY) on the VM = %d (want 0)",
		  r);
	r = kt_kvm_check_ext(vm, KVM_CAP_PREFETCH_POLICY);
	if (!uname(&u) && !strncmp(u.release, "6.12.", 5))
		KT_EXPECT(r == 0, "tdp_mmu=0: CHECK_EXTENSION(KVM_CAP_PREFETCH_POLICY) on /dev/kvm = %d (want 0 on 6.12)",
			  r);
	else
		kt_info("tdp_mmu=0: KVM_CAP_PREFETCH_POLICY on /dev/kvm = %d (6.1: TDP alone)",
			r);
	r = kt_vm_check_ext(vm, CAP_PRE_FAULT);
	KT_EXPECT(r == 1, "tdp_mmu=0: CHECK_EXTENSION(236 PRE_FAULT_MEMORY) on the VM = %d (want 1)",
		  r);
	r = ktsys_set_policy(vm->fd, "auto", 8, 1);
	KT_EXPECT(r == -EOPNOTSUPP,
		  "tdp_mmu=0: SET fails with EOPNOTSUPP (got %s)",
		  r ? strerror(-r) : "success");
	kt_vm_free(vm);

	r = ktsys_restore();
	KT_EXPECT(r == 0, "kvm-reload ours after tdp_mmu=0 (status %d)", r);
}

/* ---- npt=0 ------------------------------------------------------------------ */

static void check_no_tdp(void)
{
	struct kt_vm *vm;
	int r;

	if (!reload_off("ours -- npt=0", "kvm_amd", "npt", true, "TDP off"))
		return;

	vm = kt_vm_create();
	check_caps(vm, 0, 0, "npt=0");
	r = ktsys_set_policy(vm->fd, "auto", 8, 1);
	KT_EXPECT(r == -EOPNOTSUPP, "npt=0: SET fails with EOPNOTSUPP (got %s)",
		  r ? strerror(-r) : "success");
	r = ktsys_set_policy(vm->fd, "none", 0, 0);
	KT_EXPECT(r == -EOPNOTSUPP,
		  "npt=0: SET none fails with EOPNOTSUPP too (got %s)",
		  r ? strerror(-r) : "success");
	{
		struct kvm_prefetch_policy got;

		memset(&got, 0xff, sizeof(got));
		r = ktsys_get_policy(vm->fd, &got);
		if (r) {
			kt_info("npt=0: GET -> %s", strerror(-r));
		} else {
			char s[96];

			ktsys_policy_str(&got, s, sizeof(s));
			kt_info("npt=0: GET -> \"%s\"", s);
		}
	}
	kt_vm_free(vm);

	r = ktsys_restore();
	KT_EXPECT(r == 0, "kvm-reload ours after npt=0 (status %d)", r);
	if (r)
		return;
	vm = kt_vm_create();
	check_caps(vm, KVM_PREFETCH_MAX_PAGES, 1, "after restoring npt=1");
	kt_vm_free(vm);
}

int main(void)
{
	struct kt_vm *vm;
	char dir[256];
	int r;

	ktsys_start_ours(150);

	vm = kt_vm_create();
	check_caps(vm, KVM_PREFETCH_MAX_PAGES, 1, "TDP");
	r = ktsys_vm_debugfs_dir(vm->fd, dir, sizeof(dir));
	KT_EXPECT(!r, "VM debugfs directory %s exists (%s)", dir,
		  r ? strerror(-r) : "ok");
	if (expect_policy(vm, "none", 8, KVM_PREFETCH_GUP_NOFAULT,
			  "new VM under fresh defaults"))
		kt_pass("new VM starts with none / 8 / nofault");
	check_get_zero_fill(vm);
	expect_debugfs(vm, "new VM");

	check_bad_sets(vm);
	check_set_efault(vm);
	check_get_zero_fill(vm);
	check_defaults_resolution(vm);
	check_idempotent(vm);
	kt_vm_free(vm);

	switching_stress();
	check_no_tdp_mmu();
	check_no_tdp();

	return kt_exit();
}
