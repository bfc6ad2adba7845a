// SPDX-License-Identifier: GPL-2.0
/*
 * prefetch_prefault: KVM_PRE_FAULT_MEMORY on arm64 (backported to 6.1,
 * hook patch 0005; arch/arm64/kvm/pre_fault.c) and the origin it gives
 * the prefetch engine, KVM_PREFETCH_MANUAL.
 *
 * A 256-page data memslot of 4 KiB host pages, populated by the host
 * unless said otherwise.  Pre-faulting the whole slot maps every page
 * without a guest fault (pf_taken counts the guest's aborts only), and a
 * write pass then takes none (the host gave the pages writable).  Under
 * none no window opens; under manual-8, auto-8 and async-8 each pre-fault
 * of a page no window has mapped opens one, aligned to 8: 32 windows,
 * 224 pages prefetched; the loop steps over what is mapped.  Pre-faulting
 * the first 8 pages under manual-8 takes one fault, whose window maps the
 * other 7.  Unpopulated memory
 * is pre-faulted as a read maps it: the zero page, read-only, so the
 * guest reads zeros without a fault and its writes fault as after its
 * own read faults.  A dirty-logged
 * memslot is pre-faulted but opens no window.  Bad arguments and holes
 * fail with upstream's errnos and leave the range as it was; a range
 * running past the memslot's end is done up to it (0, with what is left
 * in the struct), then -ENOENT; a vCPU that has had no
 * KVM_ARM_VCPU_INIT fails with -ENOEXEC.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "a64.h"

#define DATA_SLOT	1
#define DATA_GPA	0x1000000ULL
/* uint64_t, for PRIu64 (A64_PAGE is unsigned long long) */
#define PG		((uint64_t)A64_PAGE)
#define NR_PAGES	((uint64_t)256)
#define SLOT_SIZE	(NR_PAGES * PG)

/* A VM with the data slot (populated or not) and policy, its vCPU run once. */
static struct a64_vcpu *setup(struct a64_vm **vm, const char *policy,
			      uint32_t nr, bool populate, uint32_t flags,
			      char **mem)
{
	uint64_t i;

	*vm = a64_vm_with_policy(policy, nr, KVM_PREFETCH_GUP_NOFAULT);
	*mem = a64_vm_add_slot(*vm, DATA_SLOT, DATA_GPA, SLOT_SIZE, flags, NULL,
			       false);
	if (populate)
		for (i = 0; i < NR_PAGES; i++)
			(*mem)[i * A64_PAGE] = 1;
	return a64_vcpu_ready(*vm, DATA_GPA);
}

/* Pre-fault [gpa, gpa + size): the counts it adds must be @win, @mapped. */
static void whole(const char *policy, uint32_t nr, uint64_t size,
		  uint64_t want_win, uint64_t want_mapped)
{
	struct a64_counts c0, c1, c2;
	struct a64_vcpu *vcpu;
	struct a64_vm *vm;
	uint64_t left;
	int r, bad;
	char *mem;

	vcpu = setup(&vm, policy, nr, true, 0, &mem);
	c0 = a64_vcpu_counts(vcpu);
	r = a64_pre_fault(vcpu, DATA_GPA, size, 0, &left);
	c1 = a64_vcpu_counts(vcpu);
	a64_info("%s-%u, pre-fault %" PRIu64 " pages: rc %d, left %" PRIu64
		 ", pf_taken %" PRIu64 ", windows %" PRIu64 ", mapped %" PRIu64,
		 policy, nr, size / PG, r, left, c1.pf - c0.pf,
		 c1.win - c0.win, c1.mapped - c0.mapped);
	A64_EXPECT(!r && !left, "%s-%u: KVM_PRE_FAULT_MEMORY of %" PRIu64
		   " pages: 0, nothing left (%d, %" PRIu64 ")", policy, nr,
		   size / PG, r, left);
	A64_EXPECT(c1.pf == c0.pf && c1.win - c0.win == want_win &&
		   c1.mapped - c0.mapped == want_mapped,
		   "%s-%u: no guest fault, %" PRIu64 " windows, %" PRIu64
		   " prefetched (%" PRIu64 ", %" PRIu64 ", %" PRIu64 ")", policy,
		   nr, want_win, want_mapped, c1.pf - c0.pf, c1.win - c0.win,
		   c1.mapped - c0.mapped);
	/* What is mapped now takes no fault; the rest of the slot does. */
	a64_touch(vcpu, DATA_GPA, DATA_GPA + SLOT_SIZE, 0, A64_TOUCH_WRITE);
	c2 = a64_vcpu_counts(vcpu);
	A64_EXPECT(c2.pf - c1.pf == (SLOT_SIZE - size) / PG,
		   "%s-%u: a write pass then takes %" PRIu64 " faults (%" PRIu64 ")",
		   policy, nr, (SLOT_SIZE - size) / PG, c2.pf - c1.pf);
	bad = a64_pages_wrong(mem, DATA_GPA, NR_PAGES);
	A64_EXPECT(!bad, "%s-%u: the host reads what the guest wrote (%d pages wrong)",
		   policy, nr, bad);
	a64_vcpu_free(vcpu);
	a64_vm_free(vm);
}

/*
 * Unpopulated memory, pre-faulted: the guest reads the zero page without
 * a fault, and its write pass faults exactly as after the guest's own
 * read faults mapped the zero page (the control, the fault path alone:
 * on 6.1 a write there is a permission fault whose COW invalidates the
 * mapping, then a translation fault maps the new page).  The host then
 * reads every word the guest wrote: no stale zero-page mapping is left.
 */
static uint64_t unpopulated_run(bool prefault, uint64_t *read_faults)
{
	struct a64_counts c0, c1, c2;
	struct a64_vcpu *vcpu;
	struct a64_vm *vm;
	uint32_t sum;
	int r = 0, bad = 0;
	char *mem;

	vcpu = setup(&vm, "none", 0, false, 0, &mem);
	if (prefault)
		r = a64_pre_fault(vcpu, DATA_GPA, SLOT_SIZE, 0, NULL);
	c0 = a64_vcpu_counts(vcpu);
	sum = a64_touch(vcpu, DATA_GPA, DATA_GPA + SLOT_SIZE, 0, A64_TOUCH_READ);
	c1 = a64_vcpu_counts(vcpu);
	a64_touch(vcpu, DATA_GPA, DATA_GPA + SLOT_SIZE, 0, A64_TOUCH_WRITE);
	c2 = a64_vcpu_counts(vcpu);
	bad = a64_pages_wrong(mem, DATA_GPA, NR_PAGES);
	a64_info("unpopulated, %s: read pass %" PRIu64 " faults (sum %#x), write pass %" PRIu64 " faults",
		 prefault ? "pre-faulted" : "control", c1.pf - c0.pf, sum,
		 c2.pf - c1.pf);
	A64_EXPECT(!r && sum == 0 && !bad,
		   "unpopulated, %s: pre-fault %d, the guest reads zeros (sum %#x), the host reads what it wrote (%d pages wrong)",
		   prefault ? "pre-faulted" : "control", r, sum, bad);
	*read_faults = c1.pf - c0.pf;
	a64_vcpu_free(vcpu);
	a64_vm_free(vm);
	return c2.pf - c1.pf;
}

static void unpopulated(void)
{
	uint64_t rp, rc, wp, wc;

	wp = unpopulated_run(true, &rp);
	wc = unpopulated_run(false, &rc);
	A64_EXPECT(rp == 0 && rc == NR_PAGES,
		   "unpopulated: the read pass takes 0 faults pre-faulted, %" PRIu64 " without (%" PRIu64 ", %" PRIu64 ")",
		   NR_PAGES, rp, rc);
	A64_EXPECT(wp == wc && wp >= NR_PAGES,
		   "unpopulated: the zero page is mapped read-only: the write pass faults as the control's, at least once a page (%" PRIu64 ", %" PRIu64 ")",
		   wp, wc);
}

static void dirty_logged(void)
{
	struct a64_vcpu *vcpu;
	struct a64_vm *vm;
	struct a64_counts c0, c1, c2;
	uint32_t sum;
	int r;
	char *mem;

	vcpu = setup(&vm, "manual", 8, true, KVM_MEM_LOG_DIRTY_PAGES, &mem);
	c0 = a64_vcpu_counts(vcpu);
	r = a64_pre_fault(vcpu, DATA_GPA, SLOT_SIZE, 0, NULL);
	c1 = a64_vcpu_counts(vcpu);
	sum = a64_touch(vcpu, DATA_GPA, DATA_GPA + SLOT_SIZE, 0, A64_TOUCH_READ);
	c2 = a64_vcpu_counts(vcpu);
	A64_EXPECT(!r && c1.win == c0.win && c1.mapped == c0.mapped &&
		   c2.pf == c1.pf && sum == NR_PAGES,
		   "dirty log, manual-8: pre-faulted (%d), no window (%" PRIu64 ", %" PRIu64
		   "), a read pass takes no fault (%" PRIu64 ", sum %u)", r,
		   c1.win - c0.win, c1.mapped - c0.mapped, c2.pf - c1.pf, sum);
	a64_vcpu_free(vcpu);
	a64_vm_free(vm);
}

static void errors(void)
{
	struct a64_vcpu *vcpu, raw = { 0 };
	struct a64_vm *vm;
	uint64_t left;
	int r;
	char *mem;

	vcpu = setup(&vm, "none", 0, true, 0, &mem);
	A64_EXPECT(a64_vm_check_ext(vm, KVM_CAP_PRE_FAULT_MEMORY) == 1,
		   "KVM_CAP_PRE_FAULT_MEMORY is 1 (%d)",
		   a64_vm_check_ext(vm, KVM_CAP_PRE_FAULT_MEMORY));
	r = a64_pre_fault(vcpu, DATA_GPA, A64_PAGE, 1, &left);
	A64_EXPECT(r == -EINVAL && left == A64_PAGE, "flags 1: EINVAL (%s), range kept",
		   strerror(-r));
	r = a64_pre_fault(vcpu, DATA_GPA + 8, A64_PAGE, 0, &left);
	A64_EXPECT(r == -EINVAL, "unaligned gpa: EINVAL (%s)", strerror(-r));
	r = a64_pre_fault(vcpu, DATA_GPA, 100, 0, &left);
	A64_EXPECT(r == -EINVAL, "unaligned size: EINVAL (%s)", strerror(-r));
	r = a64_pre_fault(vcpu, DATA_GPA, 0, 0, &left);
	A64_EXPECT(r == -EINVAL, "size 0: EINVAL (%s)", strerror(-r));
	r = a64_pre_fault(vcpu, -4096ULL, 8192, 0, &left);
	A64_EXPECT(r == -EINVAL, "a range that wraps: EINVAL (%s)", strerror(-r));
	r = a64_pre_fault(vcpu, DATA_GPA + SLOT_SIZE, A64_PAGE, 0, &left);
	A64_EXPECT(r == -ENOENT && left == A64_PAGE,
		   "a hole after the slot: ENOENT (%s), range kept", strerror(-r));
	r = a64_pre_fault(vcpu, 1ULL << 50, A64_PAGE, 0, &left);
	A64_EXPECT(r == -ENOENT, "beyond the IPA space: ENOENT (%s)", strerror(-r));
	/* Across the slot's end: done up to it, then the hole. */
	r = a64_pre_fault(vcpu, DATA_GPA + SLOT_SIZE - 2 * A64_PAGE, 4 * A64_PAGE, 0,
		      &left);
	A64_EXPECT(!r && left == 2 * A64_PAGE,
		   "across the slot's end: 0, 2 pages left (%s, %" PRIu64 ")",
		   strerror(-r), left / PG);
	r = a64_pre_fault(vcpu, DATA_GPA + SLOT_SIZE, left, 0, &left);
	A64_EXPECT(r == -ENOENT, "then the rest: ENOENT (%s)", strerror(-r));
	/* A vCPU without KVM_ARM_VCPU_INIT: ENOEXEC, as KVM_RUN gives. */
	raw.fd = ioctl(vm->fd, KVM_CREATE_VCPU, 1);
	A64_ASSERT(raw.fd >= 0, "KVM_CREATE_VCPU 1: %s", strerror(errno));
	r = a64_pre_fault(&raw, DATA_GPA, A64_PAGE, 0, &left);
	A64_EXPECT(r == -ENOEXEC && left == A64_PAGE,
		   "a vCPU before KVM_ARM_VCPU_INIT: ENOEXEC (%s), range kept",
		   strerror(-r));
	close(raw.fd);
	a64_vcpu_free(vcpu);
	a64_vm_free(vm);
}

int main(void)
{
	a64_require_prefetch();
	errors();
	whole("none", 0, SLOT_SIZE, 0, 0);
	whole("manual", 8, SLOT_SIZE, NR_PAGES / 8, NR_PAGES - NR_PAGES / 8);
	whole("async", 8, SLOT_SIZE, NR_PAGES / 8, NR_PAGES - NR_PAGES / 8);
	whole("auto", 8, SLOT_SIZE, NR_PAGES / 8, NR_PAGES - NR_PAGES / 8);
	/* Eight pages: the first one's fault, whose window maps the rest. */
	whole("manual", 8, 8 * A64_PAGE, 1, 7);
	whole("none", 0, 8 * A64_PAGE, 0, 0);
	unpopulated();
	dirty_logged();
	return a64_exit();
}
