// SPDX-License-Identifier: GPL-2.0
/*
 * prefetch_bpf - prefetch policies written in BPF (the 6.12 base).
 *
 * With the operator command (/bin/kvm-prefetch, built with the BPF
 * loader) and the objects in /bpf:
 *  - "bpf load auto.bpf.o" registers bpf_auto: it is listed, a VM selects
 *    it with KVM_SET_PREFETCH_POLICY, and the struct_ops map pins kvm.ko;
 *  - bpf_auto takes exactly the guest faults and maps exactly the pages
 *    the built-in auto does, on the same memory and accesses (windows of
 *    8 and 16 pages, strides 1 and 3, and from KVM_PRE_FAULT_MEMORY);
 *  - as the kvm.prefetch_policy default, new VMs start with it;
 *  - the verifier refuses a program that writes the fault it is given or
 *    past its window, or calls bpf_loop() (exit 1, the type's message in
 *    the log), and nothing is registered;
 *  - unloaded while a VM uses it, it is no longer listed or selectable
 *    (ENOENT), the VM keeps it and its prefetch, and closing the VM frees
 *    the map (kvm.ko's reference count is back where it was);
 *  - bpf_stride starts with its declared window (32), opens no window
 *    until three faults keep one stride, then follows the stream: guest
 *    faults as the policy's rules predict (a model below), strides 1, 4
 *    and a backward stream;
 *  - whatever a policy returns, the engine clips it: bpf_auto with a
 *    window over the memslot's end maps nothing outside the slot;
 *  - policies that answer out of contract (hostile.bpf.o; the verifier
 *    puts no range on what they return): init() returning 1, 4096,
 *    -5000 or INT_MIN gets EINVAL from KVM_SET_PREFETCH_POLICY and, as
 *    the default, leaves a new VM on none; a window past gfn 2^64 - 1
 *    ejects the policy from the VM (GET says none, prefetch_ejected 1,
 *    no window mapped); true without writing the window maps nothing;
 *    all unload, and the host keeps running.
 * The userfaultfd restore with bpf_auto is in prefetch_uffd.
 * On a base without BPF policies (6.1) everything is skipped.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "kvmtest.h"
#include "kt_sys.h"

#define DATA_SLOT	1
#define DATA_GPA	0x100000ULL
#define DATA_PAGES	256ULL
#define DATA_SIZE	(DATA_PAGES * KT_PAGE_SIZE)

#define KVM_BTF		"/sys/kernel/btf/kvm"
#define CLI		"/bin/kvm-prefetch"
#define OBJ_AUTO	"/bpf/auto.bpf.o"
#define OBJ_STRIDE	"/bpf/stride.bpf.o"
#define OBJ_BAD_WRITE	"/bpf/bad_write.bpf.o"
#define OBJ_BAD_OOB	"/bpf/bad_oob.bpf.o"
#define OBJ_HOSTILE	"/bpf/hostile.bpf.o"
#define OBJ_BAD_LOOP	"/bpf/bad_loop.bpf.o"
#define OBJ_ADAPTIVE	"/bpf/adaptive.bpf.o"
#define KVM_REFCNT	"/sys/module/kvm/refcnt"

static char out[8192];

/* Run the operator command; its output in out[]; its exit code. */
static int cli(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int cli(const char *fmt, ...)
{
	char cmd[512];
	size_t n = 0;
	va_list ap;
	FILE *f;
	int st;

	va_start(ap, fmt);
	n = snprintf(cmd, sizeof(cmd), CLI " ");
	vsnprintf(cmd + n, sizeof(cmd) - n, fmt, ap);
	va_end(ap);
	strncat(cmd, " 2>&1", sizeof(cmd) - strlen(cmd) - 1);
	f = popen(cmd, "r");
	if (!f)
		return -1;
	n = fread(out, 1, sizeof(out) - 1, f);
	out[n] = '\0';
	st = pclose(f);
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static bool available(const char *name)
{
	char buf[512], *w, *save = NULL;

	if (ktsys_read_line(KTSYS_P_AVAILABLE, buf, sizeof(buf)))
		return false;
	for (w = strtok_r(buf, " ", &save); w; w = strtok_r(NULL, " ", &save))
		if (!strcmp(w, name))
			return true;
	return false;
}

static long kvm_refcnt(void)
{
	long v = -1;

	ktsys_read_long(KVM_REFCNT, &v);
	return v;
}

/* The map is freed after RCU grace periods: wait up to 5 s for @want. */
static long wait_refcnt(long want)
{
	long v = kvm_refcnt();
	int i;

	for (i = 0; i < 500 && v != want; i++) {
		usleep(10000);
		v = kvm_refcnt();
	}
	return v;
}

/* A VM with the data slot, populated, and a vCPU that has run once. */
static struct kt_vm *populated_vm(struct kt_vcpu **vcpu)
{
	return kt_vm_populated(DATA_SLOT, DATA_GPA, DATA_SIZE, 0x5a, vcpu);
}

struct counts {
	uint64_t pf, mapped, windows;
};

/* Touch [first, end) pages of the slot at @stride under @policy. */
static struct counts run(const char *policy, uint32_t nr, uint32_t first,
			 uint32_t end, uint32_t stride)
{
	struct counts c = {};
	struct kt_vcpu *vcpu;
	struct kt_vm *vm;
	uint64_t pf, mapped, win;
	int r;

	vm = populated_vm(&vcpu);
	r = ktsys_set_policy(vm->fd, policy, nr, KVM_PREFETCH_GUP_NOFAULT);
	KT_ASSERT(r == 0, "SET %s nr %u (%d)", policy, nr, r);
	pf = kt_vcpu_stat_get(vcpu, "pf_taken");
	mapped = kt_vcpu_stat_get(vcpu, "prefetch_mapped");
	win = kt_vcpu_stat_get(vcpu, "prefetch_windows");
	kt_touch(vcpu, DATA_GPA + first * KT_PAGE_SIZE,
		 DATA_GPA + end * KT_PAGE_SIZE, stride * KT_PAGE_SIZE,
		 KT_TOUCH_WRITE);
	c.pf = kt_vcpu_stat_get(vcpu, "pf_taken") - pf;
	c.mapped = kt_vcpu_stat_get(vcpu, "prefetch_mapped") - mapped;
	c.windows = kt_vcpu_stat_get(vcpu, "prefetch_windows") - win;
	kt_vcpu_free(vcpu);
	kt_vm_free(vm);
	return c;
}

static void test_load(long ref0)
{
	int rc = cli("bpf load " OBJ_AUTO);

	KT_ASSERT(rc == 0, "bpf load auto.bpf.o: exit %d: %s", rc, out);
	KT_EXPECT(available("bpf_auto"), "bpf_auto is listed in prefetch_available");
	KT_EXPECT(kvm_refcnt() > ref0, "the map pins kvm.ko (refcnt %ld > %ld)",
		  kvm_refcnt(), ref0);
	rc = cli("bpf list");
	KT_EXPECT(rc == 0 && strstr(out, "bpf_auto"), "bpf list shows bpf_auto (%d: %s)",
		  rc, out);
	rc = cli("bpf load " OBJ_AUTO);
	KT_EXPECT(rc == 2 && strstr(out, "registered"),
		  "loading it twice is refused, exit 2 (%d: %s)", rc, out);
}

static void test_same_as_auto(void)
{
	static const struct { uint32_t nr, first, end, stride; } cases[] = {
		{ 8, 0, 256, 1 }, { 16, 0, 256, 3 }, { 8, 5, 200, 1 },
		{ 64, 1, 256, 7 },
	};
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		struct counts a = run("auto", cases[i].nr, cases[i].first,
				      cases[i].end, cases[i].stride);
		struct counts b = run("bpf_auto", cases[i].nr, cases[i].first,
				      cases[i].end, cases[i].stride);

		kt_info("nr %u pages %u..%u stride %u: auto pf %llu mapped %llu windows %llu, bpf_auto pf %llu mapped %llu windows %llu",
			cases[i].nr, cases[i].first, cases[i].end,
			cases[i].stride, (unsigned long long)a.pf,
			(unsigned long long)a.mapped,
			(unsigned long long)a.windows,
			(unsigned long long)b.pf,
			(unsigned long long)b.mapped,
			(unsigned long long)b.windows);
		KT_EXPECT(a.pf == b.pf && a.mapped == b.mapped &&
			  a.windows == b.windows && a.windows > 0,
			  "nr %u stride %u: bpf_auto's faults, pages and windows equal auto's (%llu/%llu/%llu)",
			  cases[i].nr, cases[i].stride,
			  (unsigned long long)b.pf,
			  (unsigned long long)b.mapped,
			  (unsigned long long)b.windows);
	}
}

static void test_default(void)
{
	ktsys_default_for_new_vms("bpf_auto");
	KT_EXPECT(ktsys_write(KTSYS_P_POLICY, "none") == 0,
		  "prefetch_policy back to none");
}

static void test_verifier(void)
{
	static const struct { const char *obj, *name, *why; } bad[] = {
		{ OBJ_BAD_WRITE, "bad_write",
		  "kvm_prefetch_ops: only struct kvm_prefetch_window is writable" },
		{ OBJ_BAD_OOB, "bad_oob",
		  "kvm_prefetch_ops: write at 12 size 4 is outside the window" },
		{ OBJ_BAD_LOOP, "bad_loop", "bpf_loop" },
	};
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		int rc = cli("bpf load %s", bad[i].obj);

		KT_EXPECT(rc == 1 && strstr(out, bad[i].why),
			  "%s: refused by the verifier: \"%s\" (exit %d)",
			  bad[i].name, bad[i].why, rc);
		if (rc != 1 || !strstr(out, bad[i].why))
			kt_info("%s", out);
		KT_EXPECT(!available(bad[i].name), "%s is not registered",
			  bad[i].name);
	}
}

static void test_hostile(void)
{
	long ref0 = kvm_refcnt();
	static const char *const bad_init[] = {
		"bpf_init1", "bpf_init4096", "bpf_init_m5000", "bpf_init_min",
	};
	static const char *const all[] = {
		"bpf_init1", "bpf_init4096", "bpf_init_m5000", "bpf_init_min",
		"bpf_wrap", "bpf_nowrite",
	};
	struct kvm_prefetch_policy p;
	struct kt_vcpu *vcpu;
	struct kt_vm *vm;
	struct counts c;
	uint64_t ej;
	unsigned int i;
	int rc, r;

	rc = cli("bpf load " OBJ_HOSTILE);
	KT_ASSERT(rc == 0, "bpf load hostile.bpf.o: exit %d: %s", rc, out);
	for (i = 0; i < ARRAY_SIZE(bad_init); i++) {
		vm = populated_vm(&vcpu);
		r = ktsys_set_policy(vm->fd, bad_init[i], 8, 0);
		KT_EXPECT(r == -EINVAL && !ktsys_get_policy(vm->fd, &p) &&
			  !strcmp(p.name, "none"),
			  "%s: SET fails with EINVAL, the VM keeps none (%d, %s)",
			  bad_init[i], r, p.name);
		kt_vcpu_free(vcpu);
		kt_vm_free(vm);

		r = ktsys_write(KTSYS_P_POLICY, bad_init[i]);
		KT_ASSERT(r == 0, "prefetch_policy=%s (%d)", bad_init[i], r);
		vm = populated_vm(&vcpu);
		KT_EXPECT(!ktsys_get_policy(vm->fd, &p) && !strcmp(p.name, "none"),
			  "%s as the default: a new VM starts on none (%s)",
			  bad_init[i], p.name);
		kt_vcpu_free(vcpu);
		kt_vm_free(vm);
		KT_ASSERT(!ktsys_write(KTSYS_P_POLICY, "none"), "default none");
	}

	vm = populated_vm(&vcpu);
	r = ktsys_set_policy(vm->fd, "bpf_wrap", 8, 0);
	KT_ASSERT(r == 0, "SET bpf_wrap (%d)", r);
	ej = kt_vcpu_stat_get(vcpu, "prefetch_ejected");
	kt_touch(vcpu, DATA_GPA, DATA_GPA + 16 * KT_PAGE_SIZE, 0,
		 KT_TOUCH_WRITE);
	KT_EXPECT(kt_vcpu_stat_get(vcpu, "prefetch_ejected") == ej + 1 &&
		  kt_vcpu_stat_get(vcpu, "prefetch_windows") == 0 &&
		  !ktsys_get_policy(vm->fd, &p) && !strcmp(p.name, "none"),
		  "bpf_wrap: a window past gfn 2^64 - 1 ejects it once, maps nothing, GET says none (ejected %llu, %s)",
		  (unsigned long long)(kt_vcpu_stat_get(vcpu, "prefetch_ejected") - ej),
		  p.name);
	kt_vcpu_free(vcpu);
	kt_vm_free(vm);

	c = run("bpf_nowrite", 8, 0, 64, 1);
	KT_EXPECT(c.pf == 64 && c.mapped == 0 && c.windows == 0,
		  "bpf_nowrite: true without writing the window maps nothing (pf %llu, mapped %llu, windows %llu)",
		  (unsigned long long)c.pf, (unsigned long long)c.mapped,
		  (unsigned long long)c.windows);

	for (i = 0; i < ARRAY_SIZE(all); i++) {
		rc = cli("bpf unload %s", all[i]);
		KT_EXPECT(rc == 0 && !available(all[i]), "%s unloads (%d: %s)",
			  all[i], rc, out);
	}
	KT_EXPECT(wait_refcnt(ref0) == ref0,
		  "no hostile policy keeps kvm.ko pinned (refcnt %ld, want %ld)",
		  kvm_refcnt(), ref0);
}

static void test_detach_while_used(long ref0)
{
	struct kvm_prefetch_policy p;
	struct kt_vcpu *vcpu;
	struct kt_vm *vm, *vm2;
	uint64_t pf, win;
	int r, rc;

	vm = populated_vm(&vcpu);
	r = ktsys_set_policy(vm->fd, "bpf_auto", 8, KVM_PREFETCH_GUP_NOFAULT);
	KT_ASSERT(r == 0, "SET bpf_auto (%d)", r);
	kt_touch(vcpu, DATA_GPA, DATA_GPA + DATA_SIZE / 2, KT_PAGE_SIZE,
		 KT_TOUCH_WRITE);

	rc = cli("bpf unload bpf_auto");
	KT_EXPECT(rc == 0, "bpf unload bpf_auto while a VM uses it (%d: %s)",
		  rc, out);
	KT_EXPECT(!available("bpf_auto"), "bpf_auto is no longer listed");
	vm2 = kt_vm_create();
	r = ktsys_set_policy(vm2->fd, "bpf_auto", 8, KVM_PREFETCH_GUP_NOFAULT);
	KT_EXPECT(r == -ENOENT, "a new VM cannot select it: %d (want -ENOENT)", r);
	kt_vm_free(vm2);
	rc = cli("bpf unload bpf_auto");
	KT_EXPECT(rc == 7, "unloading it again: exit %d (want 7)", rc);

	KT_EXPECT(ktsys_get_policy(vm->fd, &p) == 0 &&
		  !strcmp(p.name, "bpf_auto"),
		  "the VM keeps bpf_auto (%s)", p.name);
	pf = kt_vcpu_stat_get(vcpu, "pf_taken");
	win = kt_vcpu_stat_get(vcpu, "prefetch_windows");
	kt_touch(vcpu, DATA_GPA + DATA_SIZE / 2, DATA_GPA + DATA_SIZE,
		 KT_PAGE_SIZE, KT_TOUCH_WRITE);
	pf = kt_vcpu_stat_get(vcpu, "pf_taken") - pf;
	win = kt_vcpu_stat_get(vcpu, "prefetch_windows") - win;
	KT_EXPECT(pf == DATA_PAGES / 2 / 8 && win == pf,
		  "after the unload it still prefetches: pf %llu windows %llu (want %llu each)",
		  (unsigned long long)pf, (unsigned long long)win,
		  (unsigned long long)(DATA_PAGES / 2 / 8));
	KT_EXPECT(kvm_refcnt() > ref0, "the VM's map still pins kvm.ko (%ld)",
		  kvm_refcnt());
	kt_vcpu_free(vcpu);
	kt_vm_free(vm);
	KT_EXPECT(wait_refcnt(ref0) == ref0,
		  "closing the VM frees the map: kvm refcnt %ld (want %ld)",
		  kvm_refcnt(), ref0);
}

/*
 * bpf_stride's rules (kvm-policy/bpf/stride.bpf.c) on a slot of present
 * 4 KiB pages: the guest faults its touches in order; a window maps all
 * of itself inside the slot.  Returns the guest faults.
 */
static uint64_t stride_model(int64_t first, int64_t end, int64_t stride,
			     uint32_t nr)
{
	static bool mapped[DATA_PAGES];
	int64_t g, last = 0, delta = 0, d, s, e, p;
	uint64_t pf = 0;
	bool seen = false;
	uint32_t hits = 0;

	memset(mapped, 0, sizeof(mapped));
	for (g = first; stride > 0 ? g < end : g > end; g += stride) {
		if (mapped[g])
			continue;
		mapped[g] = true;
		pf++;
		if (!seen) {
			seen = true;
			last = g;
			continue;
		}
		d = g - last;
		hits = d && d == delta && d <= nr && -d <= nr ? hits + 1 : 0;
		delta = d;
		last = g;
		if (!hits)
			continue;
		if (d > 0) {
			s = g + 1;
			e = s + nr;
			last = g + (e - 1 - g) / d * d;
		} else {
			e = g;
			s = g < nr ? 0 : g - nr;
			if (s == e)
				continue;
			last = g - (g - s) / -d * -d;
		}
		for (p = s; p < e && p < (int64_t)DATA_PAGES; p++)
			mapped[p] = true;
	}
	return pf;
}

static void test_stride(long ref0)
{
	static const struct { int64_t first, end, stride; } cases[] = {
		{ 0, 256, 1 }, { 0, 256, 4 }, { 255, -1, -1 }, { 3, 256, 9 },
	};
	struct kvm_prefetch_policy p;
	struct kt_vcpu *vcpu;
	struct kt_vm *vm;
	unsigned int i;
	int rc, r;

	rc = cli("bpf load " OBJ_STRIDE);
	KT_ASSERT(rc == 0, "bpf load stride.bpf.o: exit %d: %s", rc, out);

	vm = populated_vm(&vcpu);
	r = ktsys_set_policy(vm->fd, "bpf_stride", 0, KVM_PREFETCH_GUP_NOFAULT);
	KT_EXPECT(r == 0 && ktsys_get_policy(vm->fd, &p) == 0 &&
		  p.nr_pages == 32,
		  "bpf_stride with nr_pages 0 gets its declared window (%u, want 32)",
		  p.nr_pages);
	kt_vcpu_free(vcpu);
	kt_vm_free(vm);

	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		struct counts c, n;
		uint64_t want;

		if (cases[i].stride > 0) {
			c = run("bpf_stride", 32, cases[i].first, cases[i].end,
				cases[i].stride);
			n = run("none", 32, cases[i].first, cases[i].end,
				cases[i].stride);
		} else {
			/* kt_touch goes upward: a backward stream, by hand. */
			struct kt_vcpu *v;
			struct kt_vm *m;
			uint64_t pf0;
			int64_t g;

			m = populated_vm(&v);
			r = ktsys_set_policy(m->fd, "bpf_stride", 32, 0);
			KT_ASSERT(r == 0, "SET bpf_stride (%d)", r);
			pf0 = kt_vcpu_stat_get(v, "pf_taken");
			for (g = cases[i].first; g > cases[i].end; g--)
				kt_touch(v, DATA_GPA + g * KT_PAGE_SIZE,
					 DATA_GPA + (g + 1) * KT_PAGE_SIZE,
					 KT_PAGE_SIZE, KT_TOUCH_WRITE);
			c.pf = kt_vcpu_stat_get(v, "pf_taken") - pf0;
			kt_vcpu_free(v);
			kt_vm_free(m);
			n.pf = DATA_PAGES;
		}
		want = stride_model(cases[i].first, cases[i].end,
				    cases[i].stride, 32);
		kt_info("bpf_stride nr 32 pages %lld..%lld stride %lld: pf %llu (model %llu, none %llu)",
			(long long)cases[i].first, (long long)cases[i].end,
			(long long)cases[i].stride, (unsigned long long)c.pf,
			(unsigned long long)want, (unsigned long long)n.pf);
		KT_EXPECT(c.pf == want && c.pf < n.pf,
			  "stride %lld: %llu guest faults, as the model says (%llu; none %llu)",
			  (long long)cases[i].stride, (unsigned long long)c.pf,
			  (unsigned long long)want, (unsigned long long)n.pf);
	}

	rc = cli("bpf unload bpf_stride");
	KT_EXPECT(rc == 0, "bpf unload bpf_stride (%d: %s)", rc, out);
	KT_EXPECT(wait_refcnt(ref0) == ref0,
		  "with no VM left the map is freed: kvm refcnt %ld (want %ld)",
		  kvm_refcnt(), ref0);
}

/*
 * bpf_adaptive builds the adaptive module's stream logic
 * (kvm-policy/adaptive/adaptive_logic.h): on the same fault streams it
 * takes the same faults and maps the same pages in the same windows.
 */
static void test_adaptive(long ref0)
{
	static const struct { uint32_t nr, first, end, stride; } cases[] = {
		{ 64, 0, 256, 1 }, { 512, 0, 256, 1 }, { 64, 0, 256, 2 },
		{ 64, 0, 256, 8 }, { 64, 3, 256, 9 }, { 16, 0, 256, 32 },
	};
	unsigned int i;
	long ref1;
	int rc;

	/* The module first (autoloaded; it holds a reference to kvm.ko). */
	run("adaptive", 64, 0, 1, 1);
	ref1 = kvm_refcnt();
	KT_EXPECT(ref1 >= ref0, "kvm refcnt %ld with the adaptive module", ref1);
	rc = cli("bpf load " OBJ_ADAPTIVE);
	KT_ASSERT(rc == 0, "bpf load adaptive.bpf.o: exit %d: %s", rc, out);
	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		struct counts b = run("bpf_adaptive", cases[i].nr,
				      cases[i].first, cases[i].end,
				      cases[i].stride);
		struct counts m = run("adaptive", cases[i].nr, cases[i].first,
				      cases[i].end, cases[i].stride);

		kt_info("nr %u pages %u..%u stride %u: adaptive pf %llu mapped %llu windows %llu, bpf_adaptive pf %llu mapped %llu windows %llu",
			cases[i].nr, cases[i].first, cases[i].end,
			cases[i].stride, (unsigned long long)m.pf,
			(unsigned long long)m.mapped,
			(unsigned long long)m.windows,
			(unsigned long long)b.pf, (unsigned long long)b.mapped,
			(unsigned long long)b.windows);
		KT_EXPECT(b.pf == m.pf && b.mapped == m.mapped &&
			  b.windows == m.windows,
			  "nr %u stride %u: bpf_adaptive's faults, pages and windows equal adaptive's (%llu/%llu/%llu)",
			  cases[i].nr, cases[i].stride,
			  (unsigned long long)m.pf,
			  (unsigned long long)m.mapped,
			  (unsigned long long)m.windows);
	}
	rc = cli("bpf unload bpf_adaptive");
	KT_EXPECT(rc == 0, "bpf unload bpf_adaptive (%d: %s)", rc, out);
	KT_EXPECT(wait_refcnt(ref1) == ref1,
		  "bpf_adaptive unloaded: kvm refcnt %ld (want %ld)",
		  kvm_refcnt(), ref1);
}

int main(void)
{
	long ref0;

	kt_require_kvm();
	ktsys_require_prefetch();
	if (access(KVM_BTF, F_OK) || access(CLI, X_OK) ||
	    access(OBJ_AUTO, F_OK)) {
		kt_skip("no BPF policies on this base (kvm.ko BTF %s, %s, %s): make bpf-info says why",
			access(KVM_BTF, F_OK) ? "missing" : "present",
			access(CLI, X_OK) ? "no loader" : "loader",
			access(OBJ_AUTO, F_OK) ? "no objects" : "objects");
		return kt_exit();
	}
	ref0 = kvm_refcnt();
	kt_info("kvm refcnt before: %ld", ref0);

	test_load(ref0);
	test_same_as_auto();
	test_default();
	test_verifier();
	test_hostile();
	test_detach_while_used(ref0);
	test_stride(ref0);
	test_adaptive(ref0);
	return kt_exit();
}
