// SPDX-License-Identifier: GPL-2.0
/*
 * smoke: /dev/kvm is there, KVM_CREATE_VM works, and the touch program
 * runs in an arm64 guest: a write pass over fresh pages takes a stage-2
 * fault per page, a read pass over them none, and the host sees what
 * the guest wrote.  Prints the counts the other tests build on.
 */
#include <stdio.h>
#include <string.h>

#include "a64.h"

#define DATA_SLOT	1
#define DATA_GPA	0x1000000ULL
#define NR_PAGES	256

int main(void)
{
	uint64_t size = NR_PAGES * A64_PAGE, exits0, exits1, exits2;
	struct a64_vcpu *vcpu;
	struct a64_vm *vm;
	uint32_t sum, want;
	int64_t f0, f1, f2;
	char *mem;

	a64_require_kvm();
	vm = a64_vm_create();
	a64_pass("KVM_CREATE_VM");
	mem = a64_vm_add_slot(vm, DATA_SLOT, DATA_GPA, size, 0, NULL, false);
	vcpu = a64_vcpu_add(vm, 0);
	a64_pass("KVM_CREATE_VCPU and KVM_ARM_VCPU_INIT");

	/* The code page's own fault first: a pass over nothing. */
	a64_touch(vcpu, DATA_GPA, DATA_GPA, 0, A64_TOUCH_WRITE);
	exits0 = a64_vcpu_stat_get(vcpu, "exits");
	f0 = a64_vcpu_faults(vcpu);
	a64_touch(vcpu, DATA_GPA, DATA_GPA + size, 0, A64_TOUCH_WRITE);
	exits1 = a64_vcpu_stat_get(vcpu, "exits");
	f1 = a64_vcpu_faults(vcpu);
	want = a64_expect_written("", mem, DATA_GPA, NR_PAGES);
	sum = a64_touch(vcpu, DATA_GPA, DATA_GPA + size, 0, A64_TOUCH_READ);
	exits2 = a64_vcpu_stat_get(vcpu, "exits");
	f2 = a64_vcpu_faults(vcpu);
	A64_EXPECT(sum == want, "read pass sum %#x (want %#x)", sum, want);

	a64_info("write pass over %d fresh pages: %llu exits, pf_taken %lld",
		 NR_PAGES, (unsigned long long)(exits1 - exits0),
		 f0 < 0 ? -1LL : (long long)(f1 - f0));
	a64_info("read pass over them: %llu exits, pf_taken %lld",
		 (unsigned long long)(exits2 - exits1),
		 f0 < 0 ? -1LL : (long long)(f2 - f1));
	/* One fault per page and the MMIO report; timer IRQs may add some. */
	A64_EXPECT(exits1 - exits0 >= NR_PAGES + 1 &&
		   exits1 - exits0 < NR_PAGES + 1 + 32,
		   "write pass exits %llu in [%d, %d)",
		   (unsigned long long)(exits1 - exits0), NR_PAGES + 1,
		   NR_PAGES + 33);
	A64_EXPECT(exits2 - exits1 < 32, "read pass exits %llu < 32",
		   (unsigned long long)(exits2 - exits1));
	if (f0 >= 0) {
		A64_EXPECT(f1 - f0 == NR_PAGES, "pf_taken %lld == %d",
			   (long long)(f1 - f0), NR_PAGES);
		A64_EXPECT(f2 == f1, "read pass pf_taken 0");
	}
	a64_vcpu_free(vcpu);
	a64_vm_free(vm);
	return a64_exit();
}
