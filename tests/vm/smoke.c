// SPDX-License-Identifier: GPL-2.0
/*
 * smoke - the in-VM harness works and stock KVM faults once per page.
 *
 * One vCPU writes each page's GPA into the page's first dword over a
 * fresh 4 MiB memslot (all but the last page), the host checks the
 * contents, and pf_taken must have grown by about one per page. A second
 * (read) pass over the now-mapped range must return the right checksum
 * and take (almost) no faults.
 *
 * Built and run by "make vm-test" (see tests/vm/init).
 */
#include <errno.h>
#include <stdio.h>
#include <stdint.h>

#include "kvmtest.h"

#define DATA_SLOT	1
#define DATA_GPA	0x100000ULL		/* 1 MiB */
#define DATA_SIZE	(4ULL << 20)		/* 4 MiB */
#define DATA_PAGES	(DATA_SIZE / KT_PAGE_SIZE)
/* Faults beyond one per page we tolerate (code page, retries). */
#define PF_SLACK	64
/* Faults a pass over already-mapped memory may still take. */
#define PF_REPEAT_MAX	4

int main(void)
{
	uint64_t pf0, pf1, pf2, t0, t1, t2, val;
	uint32_t start = DATA_GPA;
	/* The last page stays untouched. */
	uint32_t end = DATA_GPA + DATA_SIZE - KT_PAGE_SIZE;
	uint64_t npages = DATA_PAGES - 1;
	uint32_t sum, want_sum = 0;
	uint64_t bad = 0, gpa;
	struct kt_vcpu *vcpu;
	struct kt_vm *vm;
	char *mem;

	kt_require_kvm();

	vm = kt_vm_create();
	mem = kt_vm_add_slot(vm, DATA_SLOT, DATA_GPA, DATA_SIZE, 0, NULL);
	vcpu = kt_vcpu_add(vm, 0);

	pf0 = kt_vcpu_stat_get(vcpu, "pf_taken");

	/* Pass 1: write the pattern, faulting every page in. */
	t0 = kt_now_ns();
	kt_touch(vcpu, start, end, 0, KT_TOUCH_WRITE);
	t1 = kt_now_ns();
	kt_pass("write pass over %llu pages ended at the done port",
		(unsigned long long)npages);

	for (gpa = start; gpa < end; gpa += KT_PAGE_SIZE) {
		uint32_t v = *(uint32_t *)(mem + (gpa - DATA_GPA));

		if (v != (uint32_t)gpa && !bad++)
			kt_info("gpa 0x%llx holds 0x%x, want 0x%x",
				(unsigned long long)gpa, v, (uint32_t)gpa);
		want_sum += (uint32_t)gpa;
	}
	KT_EXPECT(!bad, "pattern in all %llu pages (%llu wrong)",
		  (unsigned long long)npages, (unsigned long long)bad);
	KT_EXPECT(*(uint32_t *)(mem + (end - DATA_GPA)) == 0,
		  "untouched page at gpa 0x%x is still zero", end);

	pf1 = kt_vcpu_stat_get(vcpu, "pf_taken");
	kt_info("pass 1: pf_taken %llu -> %llu (+%llu) for %llu pages, %.1f ms",
		(unsigned long long)pf0, (unsigned long long)pf1,
		(unsigned long long)(pf1 - pf0), (unsigned long long)npages,
		(t1 - t0) / 1e6);
	KT_EXPECT(pf1 - pf0 >= npages && pf1 - pf0 <= npages + PF_SLACK,
		  "pf_taken grew by %llu, want %llu..%llu",
		  (unsigned long long)(pf1 - pf0), (unsigned long long)npages,
		  (unsigned long long)(npages + PF_SLACK));

	/* The TDP MMU accounts its 4 KiB leaf mappings in a VM stat. */
	if (!kt_vm_stat(vm, "pages_4k", &val))
		KT_EXPECT(val >= npages, "VM stat pages_4k %llu >= %llu",
			  (unsigned long long)val, (unsigned long long)npages);
	else
		kt_info("VM stat pages_4k not available");
	/* Later tests rely on a missing stat being -ENOENT, not a failure. */
	KT_EXPECT(kt_vcpu_stat(vcpu, "no_such_stat", &val) == -ENOENT,
		  "unknown stat name gives -ENOENT");

	/* Pass 2: read back through the guest; everything is mapped now. */
	sum = kt_touch(vcpu, start, end, 0, KT_TOUCH_READ);
	t2 = kt_now_ns();
	KT_EXPECT(sum == want_sum, "read pass checksum 0x%x, want 0x%x",
		  sum, want_sum);

	pf2 = kt_vcpu_stat_get(vcpu, "pf_taken");
	kt_info("pass 2: pf_taken %llu -> %llu (+%llu), %.1f ms",
		(unsigned long long)pf1, (unsigned long long)pf2,
		(unsigned long long)(pf2 - pf1), (t2 - t1) / 1e6);
	KT_EXPECT(pf2 - pf1 <= PF_REPEAT_MAX,
		  "second pass took %llu faults, want <= %d",
		  (unsigned long long)(pf2 - pf1), PF_REPEAT_MAX);

	kt_vcpu_free(vcpu);
	kt_vm_free(vm);
	return kt_exit();
}
