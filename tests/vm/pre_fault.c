// SPDX-License-Identifier: GPL-2.0
/*
 * pre_fault - KVM_PRE_FAULT_MEMORY (vCPU ioctl, upstream's ABI).
 *
 *  - KVM_CHECK_EXTENSION(KVM_CAP_PRE_FAULT_MEMORY) is 1 with TDP.
 *  - EINVAL for flags != 0, unaligned gpa or size, size 0 and gpa + size
 *    overflow; ENOENT for a gpa outside all memslots. On every error
 *    gpa/size are unchanged. padding is not checked (upstream's ABI):
 *    non-zero padding maps like zero padding and comes back unchanged.
 *  - Prefaulting a whole memslot of populated memory (policy none, so
 *    only the ioctl maps) returns 0 with size 0 and gpa at the end; a
 *    guest pass over it then takes no guest fault and reads the right
 *    contents; the prefault itself is no guest fault (pf_taken).
 *  - A range that straddles the end of a slot: 0, gpa/size describe the
 *    unprocessed rest; the next call on that rest fails ENOENT.
 *  - EINTR: vCPU thread A spins in the guest ("jmp $") holding the vCPU
 *    mutex; thread B's KVM_PRE_FAULT_MEMORY on that vCPU blocks on the
 *    mutex (killable only, so SIGUSR1 does not end the wait); B gets
 *    SIGUSR1, then A does so that KVM_RUN returns; B must then fail
 *    EINTR before any progress, range unchanged, nothing mapped.
 *  - EAGAIN: (a) as a VMM would meet it: B prefaults the first page of
 *    a userfaultfd-armed slot and waits in the handler (holding KVM's
 *    SRCU), C deletes the slot (blocks until B leaves SRCU), then the
 *    handler populates. The slot was looked up before the delete, so B
 *    may finish that page (0) or fail EAGAIN; what happened is printed.
 *    (b) deterministic: vCPU 0 waits in the handler as above, C deletes
 *    a second slot V and blocks in synchronize_srcu with V marked
 *    INVALID; vCPU 1 now prefaults V: EAGAIN, no progress.
 *  - A memslot deleted after the vCPU last ran makes its root obsolete;
 *    a prefault of another, valid slot must still map (0, within 5 s),
 *    and one of the deleted slot fail ENOENT: the vCPU does not enter
 *    the guest to free the obsolete root first.
 *  - EOPNOTSUPP: with kvm_amd npt=0 the capability is 0 and the ioctl
 *    fails EOPNOTSUPP. The default modules are reloaded afterwards, also
 *    when the program fails.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>

#include "kvmtest.h"
#include "kt_sys.h"
#include "kt_uffd.h"

#define DATA_SLOT	1
#define DATA_GPA	0x400000ULL
#define DATA_SIZE	(1ULL << 20)
#define DATA_PAGES	(DATA_SIZE / KT_PAGE_SIZE)
#define EDGE_SLOT	2			/* nothing mapped right after it */
#define EDGE_GPA	0x800000ULL
#define EDGE_SIZE	(64ULL << 10)
#define INTR_SLOT	3
#define INTR_GPA	0xa00000ULL
#define INTR_SIZE	(64ULL << 10)
#define UFFD_SLOT	4
#define UFFD_GPA	0xc00000ULL
#define UFFD_SIZE	(64ULL << 10)
#define VICTIM_SLOT	5
#define VICTIM_GPA	0xe00000ULL
#define VICTIM_SIZE	(64ULL << 10)
#define NO_SLOT_GPA	0x10000000ULL		/* 256 MiB: no memslot */
#define SPIN_GPA	0x100ULL		/* "jmp $" in the code page */

static uint32_t tag(uint64_t gpa)
{
	return (uint32_t)(gpa * 0x9e3779b1u) | 1;
}

/* Populate host memory of a slot: dword 0 of each page = tag(gpa). */
static void fill(char *mem, uint64_t gpa, uint64_t size)
{
	uint64_t off;

	for (off = 0; off < size; off += KT_PAGE_SIZE)
		*(uint32_t *)(mem + off) = tag(gpa + off);
}

static uint32_t tag_sum(uint64_t gpa, uint64_t size)
{
	uint32_t sum = 0;
	uint64_t off;

	for (off = 0; off < size; off += KT_PAGE_SIZE)
		sum += tag(gpa + off);
	return sum;
}

static void set_policy_none(struct kt_vm *vm)
{
	int r;

	if (kt_vm_check_ext(vm, KVM_CAP_PREFETCH_POLICY) <= 0)
		return;		/* no policies: nothing prefetches anyway */
	r = ktsys_set_policy(vm->fd, "none", 0, 0);
	KT_ASSERT(!r, "KVM_SET_PREFETCH_POLICY none: %s", strerror(-r));
}

/* One KVM_PRE_FAULT_MEMORY; returns 0 or -errno, updates *r. */
static int pre_fault(struct kt_vcpu *vcpu, struct kvm_pre_fault_memory *r)
{
	return ioctl(vcpu->fd, KVM_PRE_FAULT_MEMORY, r) ? -errno : 0;
}

static struct kvm_pre_fault_memory range(uint64_t gpa, uint64_t size)
{
	struct kvm_pre_fault_memory r;

	memset(&r, 0, sizeof(r));
	r.gpa = gpa;
	r.size = size;
	return r;
}

static const char *err_name(int e)
{
	switch (e) {
	case 0: return "0";
	case -EINVAL: return "EINVAL";
	case -ENOENT: return "ENOENT";
	case -EINTR: return "EINTR";
	case -EAGAIN: return "EAGAIN";
	case -EOPNOTSUPP: return "EOPNOTSUPP";
	case -EFAULT: return "EFAULT";
	case -EIO: return "EIO";
	case -ENOTTY: return "ENOTTY";
	default: return strerror(-e);
	}
}

/* A failing call must leave the whole struct untouched. */
static void expect_error(struct kt_vcpu *vcpu, struct kvm_pre_fault_memory r,
			 int want, const char *what)
{
	struct kvm_pre_fault_memory before = r;
	int ret = pre_fault(vcpu, &r);

	KT_EXPECT(ret == want && !memcmp(&r, &before, sizeof(r)),
		  "%s: %s (want %s), gpa 0x%llx size 0x%llx afterwards",
		  what, err_name(ret), err_name(want),
		  (unsigned long long)r.gpa, (unsigned long long)r.size);
}

/* ---- threads ---------------------------------------------------- */

struct call {
	const char *name;	/* for messages */
	pthread_t thread;
	struct kt_vcpu *vcpu;
	struct kt_vm *vm;
	uint32_t slot;
	struct kvm_pre_fault_memory r;
	int ret;
	uint32_t exit_reason;
	int done;
};

static bool call_done(struct call *c)
{
	return __atomic_load_n(&c->done, __ATOMIC_SEQ_CST);
}

/* Wait up to @ms for @c to finish. */
static bool call_wait(struct call *c, unsigned int ms)
{
	uint64_t deadline = kt_now_ns() + ms * 1000000ULL;

	while (!call_done(c)) {
		if (kt_now_ns() > deadline)
			return false;
		usleep(1000);
	}
	return true;
}

static void *pre_fault_thread(void *arg)
{
	struct call *c = arg;

	c->ret = pre_fault(c->vcpu, &c->r);
	__atomic_store_n(&c->done, 1, __ATOMIC_SEQ_CST);
	return NULL;
}

/* One raw KVM_RUN, no retry on EINTR. */
static void *run_thread(void *arg)
{
	struct call *c = arg;

	c->ret = ioctl(c->vcpu->fd, KVM_RUN, 0) ? -errno : 0;
	c->exit_reason = c->vcpu->run->exit_reason;
	__atomic_store_n(&c->done, 1, __ATOMIC_SEQ_CST);
	return NULL;
}

static void *delete_thread(void *arg)
{
	struct call *c = arg;

	kt_vm_delete_slot(c->vm, c->slot);
	__atomic_store_n(&c->done, 1, __ATOMIC_SEQ_CST);
	return NULL;
}

static void start(struct call *c, void *(*fn)(void *))
{
	c->done = 0;
	KT_ASSERT(!pthread_create(&c->thread, NULL, fn, c), "pthread_create");
}

static void join(struct call *c)
{
	pthread_join(c->thread, NULL);
}

/*
 * Start a prefault of UFFD_GPA's page on @vcpu in @c and wait until it
 * sits in @u's handler (gate closed).  On a timeout: FAIL, let it finish
 * and return false.
 */
static bool park_pre_fault(struct call *c, struct kt_vcpu *vcpu,
			   struct kt_uffd *u)
{
	c->vcpu = vcpu;
	c->r = range(UFFD_GPA, KT_PAGE_SIZE);
	start(c, pre_fault_thread);
	if (kt_uffd_wait_events(u, 1, 5000))
		return true;
	kt_fail("prefault of an unpopulated page raised no userfaultfd event");
	kt_uffd_gate_open(u);
	join(c);
	return false;
}

/*
 * Start deleting memslot @slot of @vm in @c, and give the delete 200 ms
 * to get as far as it can.
 */
static void start_delete(struct call *c, struct kt_vm *vm, uint32_t slot)
{
	c->vm = vm;
	c->slot = slot;
	start(c, delete_thread);
	usleep(200 * 1000);
}

/*
 * Wait up to 5 s for each of the @n calls, then join them all.  If one
 * is stuck: FAIL (@when, and which are done) and end the program.
 */
static void finish_all(const char *when, struct call **calls, int n)
{
	char state[160] = "";
	size_t len = 0;
	int i;

	for (i = 0; i < n && call_wait(calls[i], 5000); i++)
		;
	if (i < n) {
		for (i = 0; i < n; i++)
			len += snprintf(state + len, sizeof(state) - len,
					"%s%s %s", i ? ", " : "", calls[i]->name,
					call_done(calls[i]) ? "done" : "stuck");
		kt_fail("threads stuck %s: %s", when, state);
		exit(kt_exit());
	}
	for (i = 0; i < n; i++)
		join(calls[i]);
}

static void on_sigusr1(int sig)
{
}

/* ---- the cases ---------------------------------------------------- */

/*
 * A call that must fail with @err and leave the struct untouched:
 * gpa, size, flags, padding[pad_idx] = pad.
 */
struct bad_range {
	uint64_t gpa, size, flags;
	unsigned int pad_idx;	/* padding[pad_idx] = pad */
	uint64_t pad;
	int err;
	const char *what;
};

static const struct bad_range bad_ranges[] = {
	/* EINVAL, in the order the checks are listed in the ABI. */
	{ DATA_GPA, KT_PAGE_SIZE, 1, 0, 0, -EINVAL, "flags 1" },
	{ DATA_GPA + 0x800, KT_PAGE_SIZE, 0, 0, 0, -EINVAL,
	  "gpa not page aligned" },
	{ DATA_GPA, KT_PAGE_SIZE + 0x200, 0, 0, 0, -EINVAL,
	  "size not page aligned" },
	{ DATA_GPA, 0, 0, 0, 0, -EINVAL, "size 0" },
	{ ~0xfffULL, 0x2000, 0, 0, 0, -EINVAL, "gpa + size overflows" },
	{ ~0xfffULL, 0x1000, 0, 0, 0, -EINVAL,
	  "gpa + size wraps to exactly 0" },
	/* ENOENT: no memslot, above all slots and in the gap between two. */
	{ NO_SLOT_GPA, KT_PAGE_SIZE, 0, 0, 0, -ENOENT,
	  "gpa above all memslots" },
	{ 0x200000, 4 * KT_PAGE_SIZE, 0, 0, 0, -ENOENT,
	  "gpa in the gap between memslots" },
};

static void check_bad_ranges(struct kt_vcpu *vcpu)
{
	struct kvm_pre_fault_memory r;
	size_t i;

	for (i = 0; i < ARRAY_SIZE(bad_ranges); i++) {
		const struct bad_range *b = &bad_ranges[i];

		r = range(b->gpa, b->size);
		r.flags = b->flags;
		r.padding[b->pad_idx] = b->pad;
		expect_error(vcpu, r, b->err, b->what);
	}
}

/*
 * padding is not part of the checks: a page with padding[0] and
 * padding[4] set is mapped as with zero padding, which comes back as it
 * went in.
 */
static void check_padding_ignored(struct kt_vcpu *vcpu)
{
	const uint64_t gpa = DATA_GPA + KT_PAGE_SIZE;
	struct kvm_pre_fault_memory r = range(gpa, KT_PAGE_SIZE);
	uint64_t pf0, pf1;
	uint32_t sum;
	int ret;

	r.padding[0] = 1;
	r.padding[4] = 0x100;
	ret = pre_fault(vcpu, &r);
	KT_EXPECT(ret == 0 && r.gpa == gpa + KT_PAGE_SIZE && !r.size &&
		  r.padding[0] == 1 && r.padding[4] == 0x100,
		  "non-zero padding is ignored: %s, gpa 0x%llx size 0x%llx padding[0] %llu padding[4] 0x%llx",
		  err_name(ret), (unsigned long long)r.gpa,
		  (unsigned long long)r.size,
		  (unsigned long long)r.padding[0],
		  (unsigned long long)r.padding[4]);
	pf0 = kt_vcpu_stat_get(vcpu, "pf_taken");
	sum = kt_touch(vcpu, gpa, gpa + KT_PAGE_SIZE, 0, KT_TOUCH_READ);
	pf1 = kt_vcpu_stat_get(vcpu, "pf_taken");
	KT_EXPECT(pf1 == pf0 && sum == tag(gpa),
		  "the page prefaulted with non-zero padding: %llu guest faults, checksum 0x%x",
		  (unsigned long long)(pf1 - pf0), sum);
}

/*
 * A whole slot of populated memory: 0, all processed, no guest fault;
 * a guest read and a write pass then take none either.  Again over the
 * mapped slot: still 0, all processed.
 */
static void check_whole_slot(struct kt_vcpu *vcpu)
{
	uint64_t pf0, pf1, pf2, end = DATA_GPA + DATA_SIZE, m0 = 0, m1 = 0;
	struct kvm_pre_fault_memory r;
	bool have_mapped;
	uint32_t sum;
	int ret;

	pf0 = kt_vcpu_stat_get(vcpu, "pf_taken");
	have_mapped = !kt_vcpu_stat(vcpu, "prefetch_mapped", &m0);
	r = range(DATA_GPA, DATA_SIZE);
	ret = pre_fault(vcpu, &r);
	pf1 = kt_vcpu_stat_get(vcpu, "pf_taken");
	KT_EXPECT(ret == 0 && r.gpa == end && r.size == 0,
		  "whole slot (%llu pages): %s, gpa 0x%llx size 0x%llx (want 0, 0x%llx, 0)",
		  (unsigned long long)DATA_PAGES, err_name(ret),
		  (unsigned long long)r.gpa, (unsigned long long)r.size,
		  (unsigned long long)end);
	KT_EXPECT(pf1 == pf0, "prefault is not a guest fault: pf_taken +%llu",
		  (unsigned long long)(pf1 - pf0));
	if (have_mapped) {
		m1 = kt_vcpu_stat_get(vcpu, "prefetch_mapped");
		KT_EXPECT(m1 == m0, "policy none: prefetch_mapped +%llu, want 0",
			  (unsigned long long)(m1 - m0));
	}

	sum = kt_touch(vcpu, DATA_GPA, end, 0, KT_TOUCH_READ);
	pf2 = kt_vcpu_stat_get(vcpu, "pf_taken");
	KT_EXPECT(sum == tag_sum(DATA_GPA, DATA_SIZE),
		  "guest reads the prefaulted slot right (checksum 0x%x, want 0x%x)",
		  sum, tag_sum(DATA_GPA, DATA_SIZE));
	kt_info("prefault %llu pages then guest read pass: pf_taken +%llu",
		(unsigned long long)DATA_PAGES, (unsigned long long)(pf2 - pf1));
	KT_EXPECT(pf2 == pf1, "guest read pass after prefault took %llu guest faults, want 0",
		  (unsigned long long)(pf2 - pf1));
	kt_touch(vcpu, DATA_GPA, end, 0, KT_TOUCH_WRITE);
	pf1 = kt_vcpu_stat_get(vcpu, "pf_taken");
	KT_EXPECT(pf1 == pf2, "guest write pass after prefault took %llu guest faults, want 0 (mapped writable)",
		  (unsigned long long)(pf1 - pf2));

	r = range(DATA_GPA, DATA_SIZE);
	ret = pre_fault(vcpu, &r);
	KT_EXPECT(ret == 0 && r.gpa == end && r.size == 0,
		  "prefault of an already mapped slot: %s, gpa 0x%llx size 0x%llx",
		  err_name(ret), (unsigned long long)r.gpa,
		  (unsigned long long)r.size);
}

/*
 * A range straddling the end of EDGE_SLOT, 4 pages in and 4 out: the 4
 * inside are mapped, the rest is reported back and then fails ENOENT.
 */
static void check_slot_end(struct kt_vcpu *vcpu)
{
	const uint64_t end = EDGE_GPA + EDGE_SIZE, in = end - 4 * KT_PAGE_SIZE;
	struct kvm_pre_fault_memory r;
	uint64_t pf0, pf1, pf2;
	uint32_t sum;
	int ret;

	r = range(in, 8 * KT_PAGE_SIZE);
	ret = pre_fault(vcpu, &r);
	KT_EXPECT(ret == 0 && r.gpa == end && r.size == 4 * KT_PAGE_SIZE,
		  "range straddling the slot end: %s, gpa 0x%llx size 0x%llx (want 0, 0x%llx, 0x%llx)",
		  err_name(ret), (unsigned long long)r.gpa,
		  (unsigned long long)r.size, (unsigned long long)end,
		  4 * KT_PAGE_SIZE);
	expect_error(vcpu, r, -ENOENT, "the rest past the slot end");
	pf0 = kt_vcpu_stat_get(vcpu, "pf_taken");
	sum = kt_touch(vcpu, in, end, 0, KT_TOUCH_READ);
	pf1 = kt_vcpu_stat_get(vcpu, "pf_taken");
	KT_EXPECT(pf1 == pf0 && sum == tag_sum(in, 4 * KT_PAGE_SIZE),
		  "the 4 prefaulted pages before the slot end: %llu guest faults, checksum 0x%x",
		  (unsigned long long)(pf1 - pf0), sum);
	/* The untouched rest of EDGE_SLOT still faults (policy none). */
	kt_touch(vcpu, EDGE_GPA, in, 0, KT_TOUCH_READ);
	pf2 = kt_vcpu_stat_get(vcpu, "pf_taken");
	KT_EXPECT(pf2 - pf1 == EDGE_SIZE / KT_PAGE_SIZE - 4,
		  "pages outside the prefaulted range were not mapped: %llu guest faults, want %llu",
		  (unsigned long long)(pf2 - pf1),
		  EDGE_SIZE / KT_PAGE_SIZE - 4);
}

/*
 * The capability, then on a VM with policy none and two slots of
 * populated memory: bad arguments, a whole slot, the end of a slot.
 */
static void test_basics(void)
{
	struct kt_vcpu *vcpu;
	struct kt_vm *vm;
	char *mem;

	vm = kt_vm_create();
	KT_EXPECT(kt_kvm_check_ext(vm, KVM_CAP_PRE_FAULT_MEMORY) == 1 &&
		  kt_vm_check_ext(vm, KVM_CAP_PRE_FAULT_MEMORY) == 1,
		  "KVM_CAP_PRE_FAULT_MEMORY: /dev/kvm %d, VM %d, want 1",
		  kt_kvm_check_ext(vm, KVM_CAP_PRE_FAULT_MEMORY),
		  kt_vm_check_ext(vm, KVM_CAP_PRE_FAULT_MEMORY));
	set_policy_none(vm);
	mem = kt_vm_add_slot(vm, DATA_SLOT, DATA_GPA, DATA_SIZE, 0, NULL);
	fill(mem, DATA_GPA, DATA_SIZE);
	mem = kt_vm_add_slot(vm, EDGE_SLOT, EDGE_GPA, EDGE_SIZE, 0, NULL);
	fill(mem, EDGE_GPA, EDGE_SIZE);
	vcpu = kt_vcpu_add(vm, 0);
	kt_touch(vcpu, DATA_GPA, DATA_GPA, 0, KT_TOUCH_READ);

	check_bad_ranges(vcpu);
	check_padding_ignored(vcpu);
	check_whole_slot(vcpu);
	check_slot_end(vcpu);

	kt_vcpu_free(vcpu);
	kt_vm_free(vm);
}

static void test_eintr(void)
{
	struct call a = { 0 }, b = { 0 };
	uint64_t pf0, pf1;
	struct kt_vcpu *vcpu;
	struct kvm_regs regs;
	struct kt_vm *vm;
	bool blocked, still;
	uint8_t *spin;
	char *mem;

	vm = kt_vm_create();
	set_policy_none(vm);
	mem = kt_vm_add_slot(vm, INTR_SLOT, INTR_GPA, INTR_SIZE, 0, NULL);
	fill(mem, INTR_GPA, INTR_SIZE);
	vcpu = kt_vcpu_add(vm, 0);
	kt_touch(vcpu, INTR_GPA, INTR_GPA, 0, KT_TOUCH_READ);

	spin = kt_vm_gpa_to_hva(vm, SPIN_GPA);
	spin[0] = 0xeb;		/* jmp $ */
	spin[1] = 0xfe;
	KT_ASSERT(!ioctl(vcpu->fd, KVM_GET_REGS, &regs), "KVM_GET_REGS");
	regs.rip = SPIN_GPA;
	KT_ASSERT(!ioctl(vcpu->fd, KVM_SET_REGS, &regs), "KVM_SET_REGS");

	a.vcpu = vcpu;
	start(&a, run_thread);
	usleep(200 * 1000);
	KT_ASSERT(!call_done(&a), "KVM_RUN of the spinning guest returned: %s exit %s",
		  err_name(a.ret), kt_exit_reason_str(a.exit_reason));

	b.vcpu = vcpu;
	b.r = range(INTR_GPA, INTR_SIZE);
	start(&b, pre_fault_thread);
	usleep(100 * 1000);
	blocked = !call_done(&b);
	KT_EXPECT(blocked, "KVM_PRE_FAULT_MEMORY waits for the vCPU mutex while KVM_RUN holds it");
	pthread_kill(b.thread, SIGUSR1);
	usleep(100 * 1000);
	still = !call_done(&b);
	kt_info("after SIGUSR1 to the prefaulting thread it is %s (mutex_lock_killable)",
		still ? "still waiting" : "done");
	pthread_kill(a.thread, SIGUSR1);
	if (!call_wait(&a, 5000)) {
		kt_fail("KVM_RUN did not return after SIGUSR1");
		exit(kt_exit());
	}
	join(&a);
	KT_EXPECT(a.ret == -EINTR && a.exit_reason == KVM_EXIT_INTR,
		  "KVM_RUN interrupted by SIGUSR1: %s, exit %s",
		  err_name(a.ret), kt_exit_reason_str(a.exit_reason));
	if (!call_wait(&b, 5000)) {
		kt_fail("KVM_PRE_FAULT_MEMORY did not return after the vCPU mutex was released");
		exit(kt_exit());
	}
	join(&b);
	KT_EXPECT(b.ret == -EINTR && b.r.gpa == INTR_GPA && b.r.size == INTR_SIZE,
		  "pending signal: KVM_PRE_FAULT_MEMORY %s (want EINTR), gpa 0x%llx size 0x%llx (want unchanged)",
		  err_name(b.ret), (unsigned long long)b.r.gpa,
		  (unsigned long long)b.r.size);

	/* Nothing was mapped: every page is a guest fault (policy none). */
	pf0 = kt_vcpu_stat_get(vcpu, "pf_taken");
	kt_touch(vcpu, INTR_GPA, INTR_GPA + INTR_SIZE, 0, KT_TOUCH_READ);
	pf1 = kt_vcpu_stat_get(vcpu, "pf_taken");
	KT_EXPECT(pf1 - pf0 == INTR_SIZE / KT_PAGE_SIZE,
		  "interrupted prefault mapped nothing: %llu guest faults, want %llu",
		  (unsigned long long)(pf1 - pf0), INTR_SIZE / KT_PAGE_SIZE);

	kt_vcpu_free(vcpu);
	kt_vm_free(vm);
}

/*
 * What both EAGAIN cases start from: a VM with policy none whose
 * UFFD_SLOT is armed with a handler, gate closed, that populates it
 * page by page from a source of tagged pages.
 */
struct uffd_vm {
	char *src;
	struct kt_vm *vm;
	struct kt_uffd *u;
};

static void uffd_vm_create(struct uffd_vm *e)
{
	e->src = mmap(NULL, UFFD_SIZE, PROT_READ | PROT_WRITE,
		      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	KT_ASSERT(e->src != MAP_FAILED, "mmap");
	fill(e->src, UFFD_GPA, UFFD_SIZE);

	e->vm = kt_vm_create();
	set_policy_none(e->vm);
	e->u = kt_uffd_create_alloc(UFFD_SIZE, 0, e->src, KT_PAGE_SIZE);
	kt_uffd_gate_close(e->u);
	kt_vm_add_slot(e->vm, UFFD_SLOT, UFFD_GPA, UFFD_SIZE, 0,
		       kt_uffd_base(e->u));
}

/* The vCPUs must be freed first. */
static void uffd_vm_free(struct uffd_vm *e)
{
	kt_vm_free(e->vm);
	kt_uffd_destroy(e->u);
	munmap(e->src, UFFD_SIZE);
}

/*
 * (a): the slot being prefaulted is deleted while the prefault waits for
 * userfaultfd.
 */
static void test_eagain_same_slot(void)
{
	struct call b = { .name = "prefault" }, c = { .name = "delete" };
	struct call *calls[] = { &b, &c };
	struct kt_vcpu *vcpu;
	struct uffd_vm e;
	bool c_blocked;

	uffd_vm_create(&e);
	vcpu = kt_vcpu_add(e.vm, 0);

	if (!park_pre_fault(&b, vcpu, e.u))
		goto out;
	start_delete(&c, e.vm, UFFD_SLOT);
	c_blocked = !call_done(&c) && !call_done(&b);
	KT_EXPECT(c_blocked, "memslot delete waits while the prefault sits in the userfaultfd handler");
	kt_uffd_gate_open(e.u);
	finish_all("after the page was populated", calls, 2);
	kt_pass("memslot delete completed after the handler populated the page");
	kt_info("slot deleted during a prefault waiting in userfaultfd: %s, gpa 0x%llx size 0x%llx",
		err_name(b.ret), (unsigned long long)b.r.gpa,
		(unsigned long long)b.r.size);
	KT_EXPECT((b.ret == -EAGAIN && b.r.gpa == UFFD_GPA &&
		   b.r.size == KT_PAGE_SIZE) ||
		  (b.ret == 0 && b.r.gpa == UFFD_GPA + KT_PAGE_SIZE &&
		   b.r.size == 0),
		  "prefault racing its slot's delete: EAGAIN with range unchanged or 0 with the page processed (got %s, gpa 0x%llx size 0x%llx)",
		  err_name(b.ret), (unsigned long long)b.r.gpa,
		  (unsigned long long)b.r.size);
	kt_uffd_quiesce(e.u, 5000);
	KT_EXPECT(kt_uffd_events(e.u) == 1 && !kt_uffd_errors(e.u),
		  "one userfaultfd event, no handler error (%llu, %llu)",
		  (unsigned long long)kt_uffd_events(e.u),
		  (unsigned long long)kt_uffd_errors(e.u));
	/* The slot is gone now. */
	expect_error(vcpu, range(UFFD_GPA, KT_PAGE_SIZE), -ENOENT,
		     "prefault of the deleted slot");
out:
	kt_vcpu_free(vcpu);
	uffd_vm_free(&e);
}

/*
 * (b): vCPU 0's prefault waits in userfaultfd (holding SRCU), so the
 * delete of VICTIM_SLOT stops in synchronize_srcu with the slot marked
 * INVALID; vCPU 1's prefault of the victim must fail EAGAIN at once.
 */
static void test_eagain_invalid_slot(void)
{
	struct call a = { .name = "prefault A" }, b = { .name = "prefault B" };
	struct call c = { .name = "delete" };
	struct call *calls[] = { &a, &b, &c };
	struct kt_vcpu *vcpu0, *vcpu1;
	struct uffd_vm e;
	bool b_done;
	char *mem;

	uffd_vm_create(&e);
	mem = kt_vm_add_slot(e.vm, VICTIM_SLOT, VICTIM_GPA, VICTIM_SIZE, 0,
			     NULL);
	fill(mem, VICTIM_GPA, VICTIM_SIZE);
	vcpu0 = kt_vcpu_add(e.vm, 0);
	vcpu1 = kt_vcpu_add(e.vm, 1);

	if (!park_pre_fault(&a, vcpu0, e.u))
		goto out;
	start_delete(&c, e.vm, VICTIM_SLOT);
	KT_EXPECT(!call_done(&c), "delete of another memslot waits for the prefault in the handler (SRCU)");

	b.vcpu = vcpu1;
	b.r = range(VICTIM_GPA, VICTIM_SIZE);
	start(&b, pre_fault_thread);
	b_done = call_wait(&b, 3000);
	KT_EXPECT(b_done, "prefault of a memslot being deleted returns while the delete waits");
	kt_uffd_gate_open(e.u);
	finish_all("after the page was populated", calls, 3);
	kt_info("prefault of slot being deleted: %s gpa 0x%llx size 0x%llx; the prefault in userfaultfd: %s gpa 0x%llx size 0x%llx",
		err_name(b.ret), (unsigned long long)b.r.gpa,
		(unsigned long long)b.r.size, err_name(a.ret),
		(unsigned long long)a.r.gpa, (unsigned long long)a.r.size);
	KT_EXPECT(b.ret == -EAGAIN && b.r.gpa == VICTIM_GPA &&
		  b.r.size == VICTIM_SIZE,
		  "prefault of an INVALID (being deleted) memslot: %s (want EAGAIN), range %s",
		  err_name(b.ret),
		  b.r.gpa == VICTIM_GPA && b.r.size == VICTIM_SIZE ?
		  "unchanged" : "CHANGED");
	KT_EXPECT(a.ret == 0 && a.r.gpa == UFFD_GPA + KT_PAGE_SIZE &&
		  a.r.size == 0,
		  "prefault that waited in userfaultfd finished its page: %s",
		  err_name(a.ret));
	expect_error(vcpu1, range(VICTIM_GPA, KT_PAGE_SIZE), -ENOENT,
		     "prefault of the deleted memslot afterwards");
out:
	kt_vcpu_free(vcpu0);
	kt_vcpu_free(vcpu1);
	uffd_vm_free(&e);
}

/*
 * Deleting a memslot makes the vCPU's root obsolete, and only the vCPU
 * frees it, on its next guest entry.  A prefault before that entry must
 * not retry on the obsolete root: a page of the remaining slot maps, and
 * the deleted slot fails ENOENT.  A stuck call is interrupted after 5 s.
 */
static void test_obsolete_root(void)
{
	struct call a = { .name = "prefault" };
	struct kt_vcpu *vcpu;
	struct kt_vm *vm;
	uint64_t pf0, pf1;
	uint32_t sum;
	char *mem;

	vm = kt_vm_create();
	set_policy_none(vm);
	mem = kt_vm_add_slot(vm, DATA_SLOT, DATA_GPA, DATA_SIZE, 0, NULL);
	fill(mem, DATA_GPA, DATA_SIZE);
	kt_vm_add_slot(vm, VICTIM_SLOT, VICTIM_GPA, VICTIM_SIZE, 0, NULL);
	vcpu = kt_vcpu_add(vm, 0);
	kt_touch(vcpu, DATA_GPA, DATA_GPA, 0, KT_TOUCH_READ);
	kt_vm_delete_slot(vm, VICTIM_SLOT);

	a.vcpu = vcpu;
	a.r = range(DATA_GPA + KT_PAGE_SIZE, KT_PAGE_SIZE);
	start(&a, pre_fault_thread);
	if (!call_wait(&a, 5000))
		pthread_kill(a.thread, SIGUSR1);
	join(&a);
	KT_EXPECT(a.ret == 0 && !a.r.size,
		  "prefault of a valid slot after another was deleted: %s, size 0x%llx left (a retry on the obsolete root is stopped after 5 s)",
		  err_name(a.ret), (unsigned long long)a.r.size);
	/* The delete zapped the code page too: enter the guest once first. */
	kt_touch(vcpu, DATA_GPA, DATA_GPA, 0, KT_TOUCH_READ);
	pf0 = kt_vcpu_stat_get(vcpu, "pf_taken");
	sum = kt_touch(vcpu, DATA_GPA + KT_PAGE_SIZE, DATA_GPA + 2 * KT_PAGE_SIZE,
		       0, KT_TOUCH_READ);
	pf1 = kt_vcpu_stat_get(vcpu, "pf_taken");
	KT_EXPECT(pf1 == pf0 && sum == tag(DATA_GPA + KT_PAGE_SIZE),
		  "that page is mapped: %llu guest faults, checksum 0x%x",
		  (unsigned long long)(pf1 - pf0), sum);

	kt_vm_add_slot(vm, VICTIM_SLOT, VICTIM_GPA, VICTIM_SIZE, 0, NULL);
	kt_vm_delete_slot(vm, VICTIM_SLOT);
	a.r = range(VICTIM_GPA, KT_PAGE_SIZE);
	start(&a, pre_fault_thread);
	if (!call_wait(&a, 5000))
		pthread_kill(a.thread, SIGUSR1);
	join(&a);
	KT_EXPECT(a.ret == -ENOENT && a.r.gpa == VICTIM_GPA,
		  "prefault of the slot deleted since the vCPU last ran: %s (want ENOENT)",
		  err_name(a.ret));

	kt_vcpu_free(vcpu);
	kt_vm_free(vm);
}

/* ---- npt=0 ----------------------------------------------------- */

static bool reloaded_npt0;
static struct kt_vm *npt_vm;
static struct kt_vcpu *npt_vcpu;

/* Close what is open on the npt=0 modules and load the defaults again. */
static void restore_modules(void)
{
	if (!reloaded_npt0)
		return;
	reloaded_npt0 = false;
	if (npt_vcpu) {
		munmap(npt_vcpu->run, npt_vm->run_size);
		close(npt_vcpu->fd);
		npt_vcpu = NULL;
	}
	if (npt_vm) {
		close(npt_vm->fd);
		close(npt_vm->kvm_fd);
		npt_vm = NULL;
	}
	if (system("kvm-reload ours"))
		kt_fail("kvm-reload ours (restoring default modules) failed");
}

static void test_no_tdp(void)
{
	struct kvm_pre_fault_memory r;
	struct kt_vm *vm;
	int ret, fd;

	if (access("/bin/kvm-reload", X_OK)) {
		kt_skip("no kvm-reload: EOPNOTSUPP with npt=0 not tested");
		return;
	}
	atexit(restore_modules);
	reloaded_npt0 = true;
	if (system("kvm-reload ours -- npt=0")) {
		kt_fail("kvm-reload ours -- npt=0 failed");
		restore_modules();
		return;
	}

	npt_vm = vm = kt_vm_create();
	KT_EXPECT(kt_kvm_check_ext(vm, KVM_CAP_PRE_FAULT_MEMORY) == 0 &&
		  kt_vm_check_ext(vm, KVM_CAP_PRE_FAULT_MEMORY) == 0,
		  "npt=0: KVM_CAP_PRE_FAULT_MEMORY /dev/kvm %d VM %d, want 0",
		  kt_kvm_check_ext(vm, KVM_CAP_PRE_FAULT_MEMORY),
		  kt_vm_check_ext(vm, KVM_CAP_PRE_FAULT_MEMORY));
	kt_vm_add_slot(vm, DATA_SLOT, DATA_GPA, DATA_SIZE, 0, NULL);
	npt_vcpu = kt_vcpu_add(vm, 0);
	r = range(DATA_GPA, KT_PAGE_SIZE);
	ret = pre_fault(npt_vcpu, &r);
	KT_EXPECT(ret == -EOPNOTSUPP && r.gpa == DATA_GPA &&
		  r.size == KT_PAGE_SIZE,
		  "npt=0: KVM_PRE_FAULT_MEMORY %s, want EOPNOTSUPP, range unchanged",
		  err_name(ret));
	kt_vcpu_free(npt_vcpu);
	npt_vcpu = NULL;
	kt_vm_free(vm);
	npt_vm = NULL;
	restore_modules();

	fd = kt_kvm_open();
	KT_ASSERT(fd >= 0, "open /dev/kvm after reload: %s", strerror(-fd));
	ret = ioctl(fd, KVM_CHECK_EXTENSION, KVM_CAP_PRE_FAULT_MEMORY);
	close(fd);
	KT_EXPECT(ret == 1, "default modules back: KVM_CAP_PRE_FAULT_MEMORY %d", ret);
}

int main(void)
{
	struct sigaction sa;
	int fd, cap;

	kt_require_kvm();
	fd = kt_kvm_open();
	cap = ioctl(fd, KVM_CHECK_EXTENSION, KVM_CAP_PRE_FAULT_MEMORY);
	close(fd);
	KT_REQUIRE(cap > 0, "no KVM_CAP_PRE_FAULT_MEMORY (%d)", cap);

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_sigusr1;
	sigemptyset(&sa.sa_mask);
	sa.sa_flags = 0;		/* no SA_RESTART */
	KT_ASSERT(!sigaction(SIGUSR1, &sa, NULL), "sigaction");

	test_basics();
	test_eintr();
	test_eagain_same_slot();
	test_eagain_invalid_slot();
	test_obsolete_root();
	test_no_tdp();
	return kt_exit();
}
