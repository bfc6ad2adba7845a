// SPDX-License-Identifier: GPL-2.0
/*
 * demo - what "make demo" shows inside the test VM: a guest runs on our
 * kvm.ko with the TDP MMU and touches fresh memory; how many nested page
 * faults it took and how long the pass lasted.
 */
#include <stdio.h>
#include <stdint.h>

#include "kvmtest.h"

#define DATA_SLOT	1
#define DATA_GPA	0x100000ULL
#define DATA_SIZE	(8ULL << 20)

int main(void)
{
	uint64_t pf0, pf1, t0, t1;
	struct kt_vcpu *vcpu;
	struct kt_vm *vm;

	kt_require_kvm();
	vm = kt_vm_create();
	kt_vm_add_slot(vm, DATA_SLOT, DATA_GPA, DATA_SIZE, 0, NULL);
	vcpu = kt_vcpu_add(vm, 0);

	pf0 = kt_vcpu_stat_get(vcpu, "pf_taken");
	t0 = kt_now_ns();
	kt_touch(vcpu, DATA_GPA, DATA_GPA + DATA_SIZE, 0, KT_TOUCH_WRITE);
	t1 = kt_now_ns();
	pf1 = kt_vcpu_stat_get(vcpu, "pf_taken");

	printf("guest:         wrote %llu fresh 4 KiB pages in %.1f ms, %llu guest page faults (pf_taken)\n",
	       (unsigned long long)(DATA_SIZE / KT_PAGE_SIZE),
	       (t1 - t0) / 1e6, (unsigned long long)(pf1 - pf0));
	kt_vm_free(vm);
	return 0;
}
