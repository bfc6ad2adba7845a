// SPDX-License-Identifier: GPL-2.0
/*
 * prefetch_churn - the stage-2 engine under concurrent invalidation:
 * tests/vm/prefetch_churn.c's checks on arm64.
 *
 * Policy auto, windows of 64..512 pages and both GUP modes (changed while
 * the guest runs), and for RUN_SECONDS:
 *
 *  - ZAP_VCPUS vCPU threads each own a range of slot 1 and loop: the host
 *    writes a fresh tag T into the first word of every page of the range;
 *    the guest reads every page (any value other than T is reported); the
 *    guest writes T' into every page; the host reads every page.  A
 *    zapper thread meanwhile invalidates random ranges of slot 1's host
 *    memory, of up to a vCPU's range, 0-2 ms into that vCPU's guest
 *    read pass (x86's are up to 32 pages anywhere: here a zap must more
 *    often meet the engine while it gets a window's pages), by
 *    MADV_DONTNEED or by mapping fresh anonymous memory over them (mmap
 *    MAP_FIXED: an munmap and a new mapping), both of which then read
 *    0.  The guest may see T or 0, the host T' or 0, and 0
 *    only if a zap of that page started after the last zap of it that
 *    had completed before the host (or the guest) wrote it.  Anything
 *    else (an old tag, T instead of T') is a stage-2 entry that outlived
 *    an invalidation: the engine got the page before the zap and mapped
 *    it after.  After the churn every vCPU does one quiet round, in which
 *    no 0 is legal.
 *  - One vCPU thread reads slot 2 page by page, every value reported,
 *    while a thread deletes slot 2 and adds it back on new host memory
 *    holding the next generation's tag.  Each read must be an MMIO exit
 *    (legal only if a delete had started and the re-add had not
 *    finished before that KVM_RUN) or the tag of a generation not yet
 *    deleted when that KVM_RUN began and whose add had begun when it
 *    returned.
 *
 * The guest program (churn_code, below the library's touch program in
 * the code page; the stage-1 MMU off): x0 start, x1 end, x2 stride,
 * x3 mode (0 write w4, 1 read and report != w4, 2 report every value),
 * x4 value; a report is an MMIO write to PORT_REPORT with x0 the
 * address, the end of a pass one to A64_DONE_GPA.  The KVM_RUN after an
 * MMIO exit completes it by stepping the PC over the access, even when
 * the VMM set the PC since: so the program starts with a nop.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include "a64.h"
#include "../vm/lib/kt_churn.h"

#define ZAP_VCPUS	2
#define RANGE_PAGES	128ULL			/* per vCPU, 512 KiB */
#define RANGE_SIZE	(RANGE_PAGES * A64_PAGE)
#define ZAP_SLOT	1
#define ZAP_GPA		0x2000000ULL
#define ZAP_SIZE	(ZAP_VCPUS * RANGE_SIZE)
#define ZAP_PAGES	(ZAP_SIZE / A64_PAGE)
#define MOVE_SLOT	2
#define MOVE_GPA	0x4000000ULL
#define MOVE_SIZE	(256ULL << 10)

#define CHURN_PC	0x800ULL		/* in the code page */
#define PORT_REPORT	(A64_DONE_GPA + 8)
#define MODE_WRITE	0
#define MODE_CHECK	1
#define MODE_REPORT	2
#define MMIO_MARK	0xdeadbeefu
#define RUN_SECONDS	10
#define STOP_SECONDS	120			/* for the threads to stop */

extern const char churn_code[], churn_code_end[];
/* Global: a local symbol's GOT entry would be the section's (+ no addend). */
asm(".pushsection .rodata\n"
	".balign 4\n"
	".globl churn_code, churn_code_end\n"
	"churn_code:\n"
	"	nop\n"		/* skipped by the KVM_RUN completing an MMIO exit */
	"1:	cmp x0, x1\n"
	"	b.hs 5f\n"
	"	cbz x3, 2f\n"
	"	ldr w5, [x0]\n"
	"	cmp x3, #1\n"
	"	b.ne 3f\n"
	"	cmp w5, w4\n"
	"	b.eq 4f\n"
	"3:	str w5, [x6, #8]\n"			/* report */
	"	b 4f\n"
	"2:	str w4, [x0]\n"				/* write */
	"4:	add x0, x0, x2\n"
	"	b 1b\n"
	"5:	str w4, [x6]\n"				/* done */
	"6:	b 6b\n"
	"churn_code_end:\n"
	".popsection\n");

static struct a64_vm *vm;
static struct a64_vcpu *vcpus[ZAP_VCPUS + 1];
static uint64_t nr_remaps, nr_policy_changes;

/* ---- the guest program ------------------------------------------ */

#define XREG(n)	(KVM_REG_ARM64 | KVM_REG_SIZE_U64 | KVM_REG_ARM_CORE | \
		 KVM_REG_ARM_CORE_REG(regs.regs[n]))
#define PCREG	(KVM_REG_ARM64 | KVM_REG_SIZE_U64 | KVM_REG_ARM_CORE | \
		 KVM_REG_ARM_CORE_REG(regs.pc))

static void one_reg(struct a64_vcpu *vcpu, unsigned long op, uint64_t id,
		    uint64_t *val)
{
	struct kvm_one_reg reg = { .id = id, .addr = (uintptr_t)val };

	A64_ASSERT(!ioctl(vcpu->fd, op, &reg), "vcpu %d ONE_REG %#llx: %s",
		   vcpu->id, (unsigned long long)id, strerror(errno));
}

static void guest_setup(struct a64_vcpu *vcpu, uint64_t start, uint64_t end,
			uint32_t value, uint32_t mode)
{
	uint64_t r[] = { start, end, A64_PAGE, mode, value, 0, A64_DONE_GPA };
	uint64_t pc = CHURN_PC;
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(r); i++)
		one_reg(vcpu, KVM_SET_ONE_REG, XREG(i), &r[i]);
	one_reg(vcpu, KVM_SET_ONE_REG, PCREG, &pc);
}

static uint64_t guest_x0(struct a64_vcpu *vcpu)
{
	uint64_t x0;

	one_reg(vcpu, KVM_GET_ONE_REG, XREG(0), &x0);
	return x0;
}

enum churn_exit { EXIT_DONE, EXIT_REPORT, EXIT_MMIO_READ };

/* KVM_RUN until the program ends a pass, reports (*@v) or reads MMIO. */
static enum churn_exit guest_run(struct a64_vcpu *vcpu, uint32_t *v)
{
	struct kvm_run *run = vcpu->run;

	for (;;) {
		if (ioctl(vcpu->fd, KVM_RUN, 0) < 0) {
			A64_ASSERT(errno == EINTR, "vcpu %d KVM_RUN: %s",
				   vcpu->id, strerror(errno));
			continue;
		}
		A64_ASSERT(run->exit_reason == KVM_EXIT_MMIO &&
			   run->mmio.len == 4,
			   "vcpu %d: unexpected exit %u (mmio %#llx)", vcpu->id,
			   run->exit_reason,
			   (unsigned long long)run->mmio.phys_addr);
		if (!run->mmio.is_write)
			return EXIT_MMIO_READ;
		memcpy(v, run->mmio.data, 4);
		if (run->mmio.phys_addr == A64_DONE_GPA)
			return EXIT_DONE;
		A64_ASSERT(run->mmio.phys_addr == PORT_REPORT,
			   "vcpu %d: MMIO write to %#llx", vcpu->id,
			   (unsigned long long)run->mmio.phys_addr);
		return EXIT_REPORT;
	}
}

/* ---- slot 1: DONTNEED and remap churn ---------------------------- */

/* One write / guest check / guest write / host check round. */
static void zap_round(struct kc_worker *w)
{
	struct a64_vcpu *vcpu = w->vcpu;
	uint64_t gpa0 = kc_gpa0(w);
	enum churn_exit e;
	uint32_t v;

	kc_round_host_write(w);
	/* Guest reads: T, or 0 after a zap. */
	guest_setup(vcpu, gpa0, gpa0 + RANGE_SIZE, w->t, MODE_CHECK);
	while ((e = guest_run(vcpu, &v)) != EXIT_DONE) {
		A64_ASSERT(e == EXIT_REPORT, "vcpu %d: MMIO read at %#llx",
			   vcpu->id,
			   (unsigned long long)vcpu->run->mmio.phys_addr);
		kc_guest_read(w, (guest_x0(vcpu) - ZAP_GPA) / A64_PAGE, v);
	}
	/* Guest writes T'; host reads: T', or 0 after a zap. */
	kc_round_guest_writes(w);
	guest_setup(vcpu, gpa0, gpa0 + RANGE_SIZE, w->t2, MODE_WRITE);
	A64_ASSERT(guest_run(vcpu, &v) == EXIT_DONE, "write pass");
	kc_round_host_check(w);
}

static int set_policy(uint32_t nr, uint32_t gup)
{
	return a64_vm_set_prefetch(vm, "auto", nr, gup);
}

/*
 * Random ranges of one worker's pages, 0-2 ms into its guest read pass,
 * by MADV_DONTNEED or by mapping fresh memory over them; now and then a
 * new window or GUP mode.
 */
static void zapper(struct kc_churn *c)
{
	static const uint32_t nrs[] = { 64, 128, 256, 512 };
	uint64_t seed = 0x123456789abcdefULL, n = 0;

	while (!kc_stopping(c)) {
		struct kc_worker *w = &c->w[kc_rnd(&seed) % ZAP_VCPUS];
		uint64_t len = 1 + kc_rnd(&seed) % RANGE_PAGES;
		uint64_t first = kc_first(w) + kc_rnd(&seed) % RANGE_PAGES;
		uint64_t end = kc_first(w) + RANGE_PAGES;
		char *p = c->mem + first * A64_PAGE;
		int spin;

		/*
		 * Into a vCPU's guest read pass, when its faults open windows
		 * of the pages the host has just written: the engine is then
		 * getting pages.  A page it mapped after this zap is read 0 by
		 * the host after the guest's write, with no zap since.
		 */
		for (spin = 0; spin < 200 &&
		     __atomic_load_n(&w->phase, __ATOMIC_SEQ_CST) != 1; spin++)
			usleep(50);
		usleep(kc_rnd(&seed) % 2000);
		if (len > end - first)
			len = end - first;
		kc_zap_begin(c, first, len);
		if (kc_rnd(&seed) % 4) {
			A64_ASSERT(!madvise(p, len * A64_PAGE, MADV_DONTNEED),
				   "MADV_DONTNEED: %s", strerror(errno));
		} else {
			A64_ASSERT(mmap(p, len * A64_PAGE,
					PROT_READ | PROT_WRITE,
					MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED,
					-1, 0) == p, "mmap MAP_FIXED: %s",
				   strerror(errno));
			madvise(p, len * A64_PAGE, MADV_NOHUGEPAGE);
			nr_remaps++;
		}
		kc_zap_end(c, first, len);
		if (!(++n % 16)) {
			uint32_t gup = (n / 64) % 2 ? KVM_PREFETCH_GUP_FAST_ONLY :
						      KVM_PREFETCH_GUP_NOFAULT;
			int r = set_policy(nrs[(n / 16) % 4], gup);

			if (r)
				a64_fail("KVM_SET_PREFETCH_POLICY while running: %s",
					 strerror(-r));
			nr_policy_changes++;
		}
	}
}

/* ---- slot 2: delete / re-add churn ------------------------------ */

/* One pass over slot 2, every value reported. */
static void move_pass(struct kc_reader *rd)
{
	struct a64_vcpu *vcpu = rd->vcpu;
	struct kvm_run *run = vcpu->run;
	enum churn_exit e;
	struct kc_run r;
	uint32_t v = 0;

	guest_setup(vcpu, MOVE_GPA, MOVE_GPA + MOVE_SIZE, 0, MODE_REPORT);
	for (;;) {
		kc_run_begin(rd, &r);
		e = guest_run(vcpu, &v);
		kc_run_end(rd, &r);
		if (e == EXIT_DONE)
			return;
		if (e != EXIT_MMIO_READ) {
			kc_read_tag(rd, &r, guest_x0(vcpu), v);
			continue;
		}
		kc_read_mmio(rd, &r, run->mmio.phys_addr);
		memcpy(run->mmio.data, &(uint32_t){ MMIO_MARK }, 4);
		/* Completed on re-entry; the guest reports it. */
		if ((guest_run(vcpu, &v) != EXIT_REPORT || v != MMIO_MARK) &&
		    rd->bad++ < KC_MAX_REPORTS)
			a64_fail("after the MMIO read at 0x%llx: 0x%x reported",
				 (unsigned long long)guest_x0(vcpu), v);
	}
}

static void move_del(void)
{
	a64_vm_delete_slot(vm, MOVE_SLOT);
}

static void move_add(char *mem)
{
	a64_vm_add_slot(vm, MOVE_SLOT, MOVE_GPA, MOVE_SIZE, 0, mem, false);
}

static struct kc_churn churn = KC_CHURN(ZAP_VCPUS, RANGE_PAGES, A64_PAGE,
					 MOVE_SIZE);

static void setup(void)
{
	void *v[ZAP_VCPUS + 1];
	int ids[ZAP_VCPUS + 1];
	int i, r;

	vm = a64_vm_create();
	A64_REQUIRE(a64_vm_check_ext(vm, KVM_CAP_PREFETCH_POLICY) > 0,
		    "no KVM_CAP_PREFETCH_POLICY");
	r = set_policy(512, KVM_PREFETCH_GUP_NOFAULT);
	A64_ASSERT(!r, "KVM_SET_PREFETCH_POLICY auto 512: %s", strerror(-r));
	A64_ASSERT(CHURN_PC + (churn_code_end - churn_code) <= A64_PAGE,
		   "guest code too big");
	memcpy((char *)vm->slots[A64_CODE_SLOT].hva + CHURN_PC, churn_code,
	       churn_code_end - churn_code);

	for (i = 0; i <= ZAP_VCPUS; i++) {
		vcpus[i] = a64_vcpu_add(vm, i);
		v[i] = vcpus[i];
		ids[i] = vcpus[i]->id;
	}
	kc_init(&churn, a64_vm_add_slot(vm, ZAP_SLOT, ZAP_GPA, ZAP_SIZE, 0,
					NULL, false), ZAP_GPA, v, ids);
}

/* Stat @name summed over all vCPUs. */
static uint64_t sum_stat(const char *name)
{
	uint64_t sum = 0;
	int i;

	for (i = 0; i <= ZAP_VCPUS; i++)
		sum += a64_vcpu_stat_get(vcpus[i], name);
	return sum;
}

int main(void)
{
	int i, cpus = sysconf(_SC_NPROCESSORS_ONLN);
	uint64_t t0;

	a64_require_kvm();
	setup();
	t0 = a64_now_ns();
	/* A vCPU that never comes back is a FAIL, not a hung run. */
	kc_churn(&churn, RUN_SECONDS, RUN_SECONDS, NULL, STOP_SECONDS);
	a64_info("%.1f s on %d CPUs: %llu zaps (%llu by mmap over them, %llu pages), %llu policy changes, %llu slot 2 generations",
		 (a64_now_ns() - t0) / 1e9, cpus,
		 (unsigned long long)churn.nr_zaps,
		 (unsigned long long)nr_remaps,
		 (unsigned long long)churn.nr_zapped,
		 (unsigned long long)nr_policy_changes,
		 (unsigned long long)churn.nr_gens);
	kc_report(&churn, sum_stat, "invalidation", 21, nr_remaps > 0,
		  nr_remaps ? "" : " (no zap by mmap)");
	A64_EXPECT(cpus >= 2, "the test VM runs %d CPUs (2 wanted: vCPU threads and the zapper in parallel)",
		   cpus);

	for (i = 0; i <= ZAP_VCPUS; i++)
		a64_vcpu_free(vcpus[i]);
	a64_vm_delete_slot(vm, MOVE_SLOT);
	kc_free(&churn);
	a64_vm_free(vm);
	return a64_exit();
}
