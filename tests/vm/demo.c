// SPDX-License-Identifier: GPL-2.0
/*
 * demo - what "make demo" shows inside the test VM.
 *
 * 1. The defaults in sysfs and the registered policies.
 * 2. One VM, switched between policies with KVM_SET_PREFETCH_POLICY; after
 *    each switch the guest writes a fresh 4 MiB of (host-populated)
 *    memory: guest faults, pages prefetched, time.
 * 3. A snapshot restore: a userfaultfd handler populates 64 KiB chunks on
 *    demand while the guest touches 8 MiB, without and with prefetch.
 * Every page's contents are checked; a wrong page ends the demo with an
 * error.
 */
#define _GNU_SOURCE
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kvmtest.h"
#include "kt_sys.h"
#include "kt_uffd.h"

#define SLICE_SIZE	(4ULL << 20)
#define DATA_GPA	0x1000000ULL		/* 16 MiB */
#define RESTORE_SIZE	(8ULL << 20)
#define RESTORE_CHUNK	(64ULL << 10)

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
		{ "none", 0 }, { "auto", 8 }, { "auto", 512 }, { "adaptive", 512 },
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

	printf("\nOne VM, policy switched with KVM_SET_PREFETCH_POLICY; the guest writes a fresh 4 MiB (1024 pages) after each switch:\n");
	printf("| %-28s | %12s | %16s | %9s |\n", "policy (debugfs line)",
	       "guest faults", "pages prefetched", "time");
	printf("|------------------------------|--------------|------------------|-----------|\n");
	for (i = 0; i < ARRAY_SIZE(steps); i++) {
		uint64_t gpa = DATA_GPA + i * SLICE_SIZE;
		struct run r;

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

static struct run restore(const char *policy, uint32_t nr_pages,
			  const char *src, uint64_t *events)
{
	struct kt_vcpu *vcpu;
	struct kt_uffd *u;
	struct kt_vm *vm;
	struct run r;

	u = kt_uffd_create_alloc(RESTORE_SIZE, 2ULL << 20, src,
				 RESTORE_CHUNK);
	vm = kt_vm_create();
	kt_vm_add_slot(vm, 1, DATA_GPA, RESTORE_SIZE, 0, kt_uffd_base(u));
	vcpu = kt_vcpu_add(vm, 0);
	kt_touch(vcpu, 0, 0, 0, KT_TOUCH_WRITE);
	KT_ASSERT(!ktsys_set_policy(vm->fd, policy, nr_pages, 0),
		  "KVM_SET_PREFETCH_POLICY %s", policy);

	/* The guest reads what the handler restored, page by page. */
	r = touch(vcpu, DATA_GPA, RESTORE_SIZE);
	kt_uffd_quiesce(u, 5000);
	*events = kt_uffd_events(u);
	check_pattern(vm, DATA_GPA, RESTORE_SIZE);

	kt_vcpu_free(vcpu);
	kt_vm_free(vm);
	kt_uffd_destroy(u);
	return r;
}

static void restore_demo(void)
{
	uint64_t a, ev_none, ev_auto;
	struct run none, aut;
	char *src;

	/* The "snapshot": each page holds the guest's write pattern. */
	src = malloc(RESTORE_SIZE);
	KT_ASSERT(src, "malloc");
	for (a = 0; a < RESTORE_SIZE; a += KT_PAGE_SIZE)
		*(uint32_t *)(src + a) = (uint32_t)(DATA_GPA + a);

	none = restore("none", 0, src, &ev_none);
	aut = restore("auto", RESTORE_CHUNK / KT_PAGE_SIZE, src, &ev_auto);

	printf("\nSnapshot restore: a userfaultfd handler populates 64 KiB chunks on demand while the guest touches 8 MiB:\n");
	printf("| %-22s | %11s | %12s | %16s | %9s |\n", "policy", "uffd events",
	       "guest faults", "pages prefetched", "time");
	printf("|------------------------|-------------|--------------|------------------|-----------|\n");
	printf("| %-22s | %11llu | %12llu | %16llu | %6.0f ms |\n", "none",
	       (unsigned long long)ev_none, (unsigned long long)none.faults,
	       (unsigned long long)none.mapped, none.ms);
	printf("| %-22s | %11llu | %12llu | %16llu | %6.0f ms |\n",
	       "auto nr_pages=16", (unsigned long long)ev_auto,
	       (unsigned long long)aut.faults, (unsigned long long)aut.mapped,
	       aut.ms);
	printf("restore time with prefetch: %.0f%% of without (%.0f%% less), same memory contents\n",
	       100.0 * aut.ms / none.ms, 100.0 - 100.0 * aut.ms / none.ms);
	free(src);
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
