// SPDX-License-Identifier: GPL-2.0
/*
 * prefetch_churn - prefetch under concurrent invalidation.
 *
 * Policy auto with large windows (nr_pages changed among 64..512 while
 * the guest runs) and, for about 12 s:
 *
 *  - ZAP_VCPUS vCPU threads each own a range of slot 1 and loop: the host
 *    writes a fresh tag T into dword 0 of every page of the range; the
 *    guest reads every page (any value other than T exits to the host);
 *    the guest writes T' into every page; the host reads every page.
 *    Meanwhile a zapper thread MADV_DONTNEEDs random ranges of slot 1's
 *    host memory (which then reads 0). Exact check: the guest may see T
 *    or 0, the host may see T' or 0, and 0 only if a zap of that page
 *    started after the last zap of it that had completed before the host
 *    (or the guest) wrote it (per-page started/completed counters).
 *    Anything else (an old tag, T instead of T', garbage) means a stale
 *    or wrong mapping. After the churn every vCPU does one quiet round,
 *    in which no 0 is legal.
 *  - One vCPU thread reads slot 2 page by page, one exit per page, while
 *    a thread deletes slot 2 and adds it back on new host memory holding
 *    the next generation's tag. Each read must be an MMIO exit (only
 *    legal if a delete had started and the re-add had not finished
 *    before that KVM_RUN) or the tag of a generation that was not yet
 *    deleted when that KVM_RUN began and whose add had begun when it
 *    returned.
 *
 * The guest program (32-bit, see churn_code) lives at CHURN_RIP in the
 * library's code page. Registers: esi start, edi end, ecx stride,
 * edx value, ebx mode (0 write edx, 1 read and report != edx on port
 * 0x7d, 2 report every value on port 0x7c); port 0x7e ends a pass.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>

#include "kvmtest.h"
#include "kt_churn.h"
#include "kt_sys.h"

#define ZAP_VCPUS	3
#define RANGE_PAGES	128ULL			/* per vCPU, 512 KiB */
#define RANGE_SIZE	(RANGE_PAGES * KT_PAGE_SIZE)
#define ZAP_SLOT	1
#define ZAP_GPA		0x400000ULL
#define ZAP_SIZE	(ZAP_VCPUS * RANGE_SIZE)
#define ZAP_PAGES	(ZAP_SIZE / KT_PAGE_SIZE)
#define MOVE_SLOT	2
#define MOVE_GPA	0x1000000ULL		/* 16 MiB */
#define MOVE_SIZE	(256ULL << 10)

#define CHURN_RIP	0x100ULL
#define PORT_REPORT	0x7c
#define PORT_BAD	0x7d
#define MODE_WRITE	0
#define MODE_CHECK	1
#define MODE_REPORT	2
#define MMIO_MARK	0xdeadbeefu
#define RUN_SECONDS	12
/*
 * A loaded host runs the test VM slower: past RUN_SECONDS the churn goes
 * on until it has done what kc_report() calls churn, for at most
 * this long, so that the verdict counts work, not seconds.
 */
#define RUN_MAX_SECONDS	90
#define STOP_SECONDS	120			/* for the threads to stop */

extern const uint8_t churn_code[], churn_code_end[];
asm(".pushsection .rodata\n"
	"churn_code:\n"
	".code32\n"
	"1:\n"
	"	cmp %edi, %esi\n"
	"	jae 5f\n"
	"	cmp $1, %ebx\n"
	"	je 2f\n"
	"	ja 3f\n"
	"	mov %edx, (%esi)\n"			/* write */
	"	jmp 4f\n"
	"2:\n"
	"	mov (%esi), %eax\n"			/* check */
	"	cmp %edx, %eax\n"
	"	je 4f\n"
	"	out %eax, $0x7d\n"
	"	jmp 4f\n"
	"3:\n"
	"	mov (%esi), %eax\n"			/* report */
	"	out %eax, $0x7c\n"
	"4:\n"
	"	add %ecx, %esi\n"
	"	jmp 1b\n"
	"5:\n"
	"	out %eax, $0x7e\n"
	"	jmp 1b\n"
	".code64\n"
	"churn_code_end:\n"
	".popsection\n");

static struct kt_vm *vm;
static struct kt_vcpu *vcpus[ZAP_VCPUS + 1];
static uint64_t nr_policy_changes;

/*
 * The controls for a run that wedges or corrupts, from the test VM's
 * command line: kp.churn.none=1, the same churn with the policy "none";
 * kp.churn.stock=1, on Debian's own modules (no prefetch ioctl at all).
 * The check that needs prefetched pages fails then; the rest still hold.
 */
static bool churn_none, churn_stock;

static int set_policy_auto(uint32_t nr)
{
	if (churn_stock)
		return 0;
	return ktsys_set_policy(vm->fd, churn_none ? "none" : "auto", nr,
				KVM_PREFETCH_GUP_NOFAULT);
}

static void guest_setup(struct kt_vcpu *vcpu, uint64_t start, uint64_t end,
			uint32_t value, uint32_t mode)
{
	kt_vcpu_setup_loop(vcpu, CHURN_RIP, start, end, KT_PAGE_SIZE, mode,
			   value);
}

static uint64_t guest_esi(struct kt_vcpu *vcpu)
{
	struct kvm_regs regs;

	KT_ASSERT(!ioctl(vcpu->fd, KVM_GET_REGS, &regs), "KVM_GET_REGS: %s",
		  strerror(errno));
	return regs.rsi;
}

static void unexpected_exit(struct kt_vcpu *vcpu, const char *what)
{
	kt_vcpu_dump_exit(vcpu);
	kt_fail("vcpu %d (%s): unexpected exit %s", vcpu->id, what,
		kt_exit_reason_str(vcpu->run->exit_reason));
	exit(kt_exit());
}

/* One write / guest check / guest write / host check round. */
static void zap_round(struct kc_worker *w)
{
	struct kt_vcpu *vcpu = w->vcpu;
	uint64_t gpa0 = kc_gpa0(w);
	uint32_t v;

	kc_round_host_write(w);
	/* Guest reads: T, or 0 after a zap. */
	guest_setup(vcpu, gpa0, gpa0 + RANGE_SIZE, w->t, MODE_CHECK);
	for (;;) {
		kt_vcpu_run(vcpu);
		if (kt_vcpu_out32(vcpu, KT_DONE_PORT, NULL))
			break;
		if (!kt_vcpu_out32(vcpu, PORT_BAD, &v))
			unexpected_exit(vcpu, "check pass");
		kc_guest_read(w, (guest_esi(vcpu) - ZAP_GPA) / KT_PAGE_SIZE, v);
	}
	/* Guest writes T'; host reads: T', or 0 after a zap. */
	kc_round_guest_writes(w);
	guest_setup(vcpu, gpa0, gpa0 + RANGE_SIZE, w->t2, MODE_WRITE);
	kt_vcpu_run(vcpu);
	if (!kt_vcpu_out32(vcpu, KT_DONE_PORT, NULL))
		unexpected_exit(vcpu, "write pass");
	kc_round_host_check(w);
}

/* Random ranges of slot 1, DONTNEEDed; now and then a new window. */
static void zapper(struct kc_churn *c)
{
	static const uint32_t nrs[] = { 64, 128, 256, 512 };
	uint64_t seed = 0x123456789abcdefULL, n = 0;

	while (!kc_stopping(c)) {
		uint64_t len = 1 + kc_rnd(&seed) % 32;
		uint64_t first = kc_rnd(&seed) % ZAP_PAGES;

		if (first + len > ZAP_PAGES)
			len = ZAP_PAGES - first;
		kc_zap_begin(c, first, len);
		KT_ASSERT(!madvise(c->mem + first * KT_PAGE_SIZE,
				   len * KT_PAGE_SIZE, MADV_DONTNEED),
			  "MADV_DONTNEED: %s", strerror(errno));
		kc_zap_end(c, first, len);
		if (!(++n % 32)) {
			int r = set_policy_auto(nrs[(n / 32) % 4]);

			if (r)
				kt_fail("KVM_SET_PREFETCH_POLICY while running: %s",
					strerror(-r));
			nr_policy_changes++;
		}
		usleep(2000 + kc_rnd(&seed) % 4000);
	}
}

/* One pass over slot 2, every value reported. */
static void move_pass(struct kc_reader *rd)
{
	struct kt_vcpu *vcpu = rd->vcpu;
	struct kvm_run *run = vcpu->run;
	struct kc_run r;
	uint32_t v;

	guest_setup(vcpu, MOVE_GPA, MOVE_GPA + MOVE_SIZE, 0, MODE_REPORT);
	for (;;) {
		kc_run_begin(rd, &r);
		kt_vcpu_run(vcpu);
		kc_run_end(rd, &r);
		if (kt_vcpu_out32(vcpu, KT_DONE_PORT, NULL))
			return;
		if (run->exit_reason == KVM_EXIT_MMIO && !run->mmio.is_write &&
		    run->mmio.len == 4 && run->mmio.phys_addr >= MOVE_GPA &&
		    run->mmio.phys_addr < MOVE_GPA + MOVE_SIZE) {
			kc_read_mmio(rd, &r, run->mmio.phys_addr);
			*(uint32_t *)run->mmio.data = MMIO_MARK;
			/* Completed on re-entry; the guest reports it. */
			kt_vcpu_run(vcpu);
			if (!kt_vcpu_out32(vcpu, PORT_REPORT, &v) ||
			    v != MMIO_MARK)
				unexpected_exit(vcpu, "after MMIO");
			continue;
		}
		if (!kt_vcpu_out32(vcpu, PORT_REPORT, &v))
			unexpected_exit(vcpu, "report pass");
		kc_read_tag(rd, &r, guest_esi(vcpu), v);
	}
}

static void move_del(void)
{
	kt_vm_delete_slot(vm, MOVE_SLOT);
}

static void move_add(char *mem)
{
	kt_vm_add_slot(vm, MOVE_SLOT, MOVE_GPA, MOVE_SIZE, 0, mem);
}

static struct kc_churn churn = KC_CHURN(ZAP_VCPUS, RANGE_PAGES, KT_PAGE_SIZE,
					 MOVE_SIZE);

/*
 * The VM: policy auto 512, the churn program in the code page, slot 1
 * and slot 2 (generation 1), a vCPU per zap worker and one for slot 2.
 */
static void setup(void)
{
	void *v[ZAP_VCPUS + 1];
	int ids[ZAP_VCPUS + 1];
	uint8_t *code;
	int i, r;

	vm = kt_vm_create();
	KT_REQUIRE(churn_stock ||
		   kt_vm_check_ext(vm, KVM_CAP_PREFETCH_POLICY) > 0,
		   "no KVM_CAP_PREFETCH_POLICY");
	r = set_policy_auto(512);
	KT_ASSERT(!r, "KVM_SET_PREFETCH_POLICY auto 512: %s", strerror(-r));

	code = kt_vm_gpa_to_hva(vm, CHURN_RIP);
	KT_ASSERT(churn_code_end - churn_code < 0x400, "guest code too big");
	memcpy(code, churn_code, churn_code_end - churn_code);

	for (i = 0; i <= ZAP_VCPUS; i++) {
		vcpus[i] = kt_vcpu_add(vm, i);
		v[i] = vcpus[i];
		ids[i] = i;
	}
	kc_init(&churn, kt_vm_add_slot(vm, ZAP_SLOT, ZAP_GPA, ZAP_SIZE, 0,
				       NULL), ZAP_GPA, v, ids);
}

/* While the threads run: has each done as much as kc_report() wants? */
static bool churned_enough(struct kc_churn *c)
{
	int i;

	for (i = 0; i < ZAP_VCPUS; i++)
		if (__atomic_load_n(&c->w[i].iterations, __ATOMIC_RELAXED) < 2)
			return false;
	return __atomic_load_n(&c->nr_zaps, __ATOMIC_RELAXED) > 100 &&
	       __atomic_load_n(&c->rd.passes, __ATOMIC_RELAXED) > 3 &&
	       __atomic_load_n(&c->nr_gens, __ATOMIC_RELAXED) > 10;
}

/* Stat @name summed over all vCPUs (Debian's modules: pf_taken only). */
static uint64_t sum_stat(const char *name)
{
	uint64_t sum = 0;
	int i;

	if (churn_stock && strcmp(name, "pf_taken"))
		return 0;
	for (i = 0; i <= ZAP_VCPUS; i++)
		sum += kt_vcpu_stat_get(vcpus[i], name);
	return sum;
}

int main(void)
{
	uint64_t t0;
	int i;

	kt_require_kvm();
	churn_none = ktsys_cmdline_ulong("kp.churn.none", 0);
	churn_stock = ktsys_cmdline_ulong("kp.churn.stock", 0);
	if (churn_none)
		kt_info("kp.churn.none: policy none, the control run");
	if (churn_stock) {
		kt_info("kp.churn.stock: Debian's modules, the control run");
		KT_ASSERT(!system("kvm-reload stock"), "kvm-reload stock");
	}
	setup();
	t0 = kt_now_ns();
	kc_churn(&churn, RUN_SECONDS, RUN_MAX_SECONDS, churned_enough,
		 STOP_SECONDS);
	kt_info("%.1f s: %llu zaps (%llu pages), %llu policy changes, %llu slot 2 generations",
		(kt_now_ns() - t0) / 1e9, (unsigned long long)churn.nr_zaps,
		(unsigned long long)churn.nr_zapped,
		(unsigned long long)nr_policy_changes,
		(unsigned long long)churn.nr_gens);
	kc_report(&churn, sum_stat, "DONTNEED", 101, true, "");

	for (i = 0; i <= ZAP_VCPUS; i++)
		kt_vcpu_free(vcpus[i]);
	kt_vm_delete_slot(vm, MOVE_SLOT);
	kc_free(&churn);
	kt_vm_free(vm);
	if (churn_stock)
		KT_EXPECT(!system("kvm-reload ours"), "kvm-reload ours");
	return kt_exit();
}
