// SPDX-License-Identifier: GPL-2.0
/*
 * demo - what "make demo" shows inside the test VM.
 *
 * 1. The defaults in sysfs and the registered policies.
 * 2. One VM, first as created (kvm.ko's default policy none: no prefetch
 *    unless chosen), then switched between policies with
 *    KVM_SET_PREFETCH_POLICY; after each step the guest writes a fresh
 *    4 MiB of (host-populated) memory: guest faults, pages prefetched,
 *    time.
 * 3. A snapshot restore in the guest VMMs run (in-kernel irqchip,
 *    interrupts on): a userfaultfd handler populates 8 KiB and 64 KiB
 *    chunks on demand while the guest writes 8 MiB, with policies none,
 *    async and auto (nr_pages = chunk / 4 KiB).
 * Every page's contents are checked; a wrong page ends the demo with an
 * error.
 * 4. (Run by the VM's /init after this program: tests/bench/bench_replay.c
 *    with demo=1.) Record and replay: a REAP-like restore of 8 MiB under
 *    none, auto, KVM_PRE_FAULT_MEMORY in the recorded order and the
 *    replay policy.
 */
#define _GNU_SOURCE
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kvmtest.h"
#include "kt_sys.h"
#include "kt_bench.h"

#define SLICE_SIZE	(4ULL << 20)
#define DATA_GPA	0x1000000ULL		/* 16 MiB */
#define RESTORE_SIZE	(8ULL << 20)

struct run {
	uint64_t faults, mapped;
	double ms;
};

static struct run touch(struct kt_vcpu *vcpu, uint64_t gpa, uint64_t size)
{
	uint64_t pf = kt_vcpu_stat_get(vcpu, "pf_taken");
	uint64_t mapped = kt_vcpu_stat_get(vcpu, "prefetch_mapped");
	uint64_t t0 = kt_now_ns();
	struct run r;

	kt_touch(vcpu, gpa, gpa + size, 0, KT_TOUCH_WRITE);
	r.ms = (kt_now_ns() - t0) / 1e6;
	r.faults = kt_vcpu_stat_get(vcpu, "pf_taken") - pf;
	r.mapped = kt_vcpu_stat_get(vcpu, "prefetch_mapped") - mapped;
	return r;
}

static void check_pattern(struct kt_vm *vm, uint64_t gpa, uint64_t size)
{
	uint64_t a;

	for (a = gpa; a < gpa + size; a += KT_PAGE_SIZE)
		KT_ASSERT(*(uint32_t *)kt_vm_gpa_to_hva(vm, a) == (uint32_t)a,
			  "page at gpa 0x%llx has wrong contents",
			  (unsigned long long)a);
}

static void show_defaults(void)
{
	char policy[32], nr[32], gup[32], avail[256];

	ktsys_read_line(KTSYS_P_POLICY, policy, sizeof(policy));
	ktsys_read_line(KTSYS_P_NR_PAGES, nr, sizeof(nr));
	ktsys_read_line(KTSYS_P_GUP, gup, sizeof(gup));
	ktsys_read_line(KTSYS_P_AVAILABLE, avail, sizeof(avail));
	printf("policies:      %s (registered); new VMs start with %s, nr_pages=%s, gup=%s\n",
	       avail, policy, nr, gup);
}

static void switching_demo(void)
{
	static const struct {
		const char *name;
		uint32_t nr_pages;
	} steps[] = {
		/* No SET: the VM keeps the default it was created with. */
		{ NULL, 0 }, { "auto", 8 }, { "auto", 512 }, { "adaptive", 512 },
	};
	struct kvm_prefetch_policy p;
	struct kt_vcpu *vcpu;
	struct kt_vm *vm;
	char *mem, line[96];
	unsigned int i;

	vm = kt_vm_create();
	mem = kt_vm_add_slot(vm, 1, DATA_GPA, SLICE_SIZE * 4, 0, NULL);
	memset(mem, 0xaa, SLICE_SIZE * 4);	/* host memory is there */
	vcpu = kt_vcpu_add(vm, 0);
	kt_touch(vcpu, DATA_GPA, DATA_GPA, 0, KT_TOUCH_WRITE);

	printf("\nOne VM, as created (first row), then its policy switched with KVM_SET_PREFETCH_POLICY; the guest writes a fresh 4 MiB (1024 pages) after each step:\n");
	printf("| %-28s | %12s | %16s | %9s |\n", "policy (debugfs line)",
	       "guest faults", "pages prefetched", "time");
	printf("|------------------------------|--------------|------------------|-----------|\n");
	for (i = 0; i < ARRAY_SIZE(steps); i++) {
		uint64_t gpa = DATA_GPA + i * SLICE_SIZE;
		struct run r;

		if (steps[i].name)
			KT_ASSERT(!ktsys_set_policy(vm->fd, steps[i].name,
						    steps[i].nr_pages, 0),
				  "KVM_SET_PREFETCH_POLICY %s", steps[i].name);
		KT_ASSERT(!ktsys_get_policy(vm->fd, &p), "GET");
		ktsys_policy_str(&p, line, sizeof(line));
		r = touch(vcpu, gpa, SLICE_SIZE);
		check_pattern(vm, gpa, SLICE_SIZE);
		printf("| %-28s | %12llu | %16llu | %6.0f ms |\n", line,
		       (unsigned long long)r.faults,
		       (unsigned long long)r.mapped, r.ms);
	}
	kt_vcpu_free(vcpu);
	kt_vm_free(vm);
}

/*
 * A run's precision (used of all pages prefetched, untouched ones
 * included: the run is over) and coverage (avoided of avoided + guest
 * faults), as "99.9%", or "-" for 0/0 or without the stats.
 */
static void usage_str(const struct ktb_result *r, char *prec, char *cov)
{
	uint64_t all = r->used + r->unused + r->untouched;

	if (r->have_usage && all)
		snprintf(prec, 16, "%.1f%%", 100.0 * r->used / all);
	else
		snprintf(prec, 16, "-");
	if (r->have_usage && r->avoided + r->pf)
		snprintf(cov, 16, "%.1f%%",
			 100.0 * r->avoided / (r->avoided + r->pf));
	else
		snprintf(cov, 16, "-");
}

/*
 * The restore in the guest production VMMs run: in-kernel irqchip and
 * interrupts on, so the first fault of each chunk goes through async #PF
 * (the vCPU halts while a worker waits for the handler). kt_bench.h's
 * ktb_run() verifies every page of every run.
 */
static void restore_demo(void)
{
	static const uint64_t chunks[] = { 8ULL << 10, 64ULL << 10 };
	static const char * const policies[] = { "none", "async", "auto" };
	unsigned int c, p;
	char *src;

	src = ktb_src_alloc(RESTORE_SIZE);
	printf("\nSnapshot restore of 8 MiB (irqchip guest, interrupts on): a userfaultfd handler populates C-byte chunks (UFFDIO_COPY) on demand while the guest writes every page:\n");
	printf("| %-7s | %-18s | %11s | %12s | %16s | %16s | %9s | %7s | %9s | %8s |\n",
	       "C", "policy", "uffd events", "guest faults", "faults per chunk",
	       "pages prefetched", "time", "vs none", "precision", "coverage");
	printf("|---------|--------------------|-------------|--------------|------------------|------------------|-----------|---------|-----------|----------|\n");
	for (c = 0; c < sizeof(chunks) / sizeof(chunks[0]); c++) {
		double none_ms = 0;

		for (p = 0; p < sizeof(policies) / sizeof(policies[0]); p++) {
			struct ktb_config cfg = {
				.policy = policies[p],
				.nr_pages = chunks[c] / KT_PAGE_SIZE,
				.gup = KVM_PREFETCH_GUP_NOFAULT,
				.pin = true,
				.cpu = 0,
				.mode = KT_GUEST_IRQCHIP,
			};
			struct ktb_result r;
			char name[32], prec[16], cov[16];
			int ret;

			ret = ktb_run(src, RESTORE_SIZE, chunks[c], &cfg, &r);
			KT_ASSERT(!ret && r.ok, "restore %s: %s", policies[p],
				  ret ? strerror(-ret) : r.err);
			if (!p)
				none_ms = r.ms;
			snprintf(name, sizeof(name), "%s%s", policies[p],
				 p ? (c ? " nr_pages=16" : " nr_pages=2") : "");
			usage_str(&r, prec, cov);
			printf("| %3llu KiB | %-18s | %11llu | %12llu | %16.2f | %16llu | %6.0f ms | %+6.0f%% | %9s | %8s |\n",
			       (unsigned long long)(chunks[c] >> 10), name,
			       (unsigned long long)r.events,
			       (unsigned long long)r.pf,
			       (double)r.pf / r.chunks,
			       (unsigned long long)r.mapped, r.ms,
			       100.0 * r.ms / none_ms - 100.0, prec, cov);
		}
	}
	printf("async and auto with nr_pages = C/4K take one guest fault per chunk: the async #PF completion maps the whole chunk; none takes one per page. Every page verified.\n");
	printf("precision: prefetched pages the guest used, of all it prefetched; coverage: guest faults the windows avoided, of those it would have taken (KVM's prefetch_used, _unused, _untouched and _avoided VM stats; - where there is nothing to count).\n");
	ktb_src_free(src, RESTORE_SIZE);
}

int main(void)
{
	cpu_set_t cpu0;

	/*
	 * vCPU and userfaultfd handler threads on one CPU: the handler then
	 * runs as soon as the faulting vCPU blocks, instead of after a
	 * cross-CPU wakeup, which is slow under TCG.
	 */
	CPU_ZERO(&cpu0);
	CPU_SET(0, &cpu0);
	sched_setaffinity(0, sizeof(cpu0), &cpu0);

	kt_require_kvm();
	ktsys_require_prefetch();
	show_defaults();
	switching_demo();
	restore_demo();
	return 0;
}
